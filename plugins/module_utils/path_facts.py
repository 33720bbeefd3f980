# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Read-only looks at a node's files, in one pass: what exists, how many entries a glob
matches, the content of small JSON and text files and the sha256 of staged files. One module
run instead of a stat, find or slurp task per path keeps a converged rerun cheap on the
controller."""
from __future__ import annotations

import glob
import grp
import hashlib
import json
import os
import pwd
import stat
from typing import Any


def stat_path(path: str) -> dict[str, bool]:
    """Whether the path exists and whether it is a directory (links followed, as stat does)."""
    return {"exists": os.path.exists(path), "isdir": os.path.isdir(path)}


def count_glob(pattern: str) -> int:
    """How many entries the pattern matches; a pattern ending in "/" matches directories only."""
    return len(glob.glob(pattern))


def read_json(path: str) -> dict[str, Any]:
    """The file's JSON value under `value`, or why there is none under `error`."""
    try:
        with open(path, encoding="utf-8") as handle:
            return {"value": json.load(handle), "error": ""}
    except FileNotFoundError:
        return {"value": None, "error": "missing"}
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return {"value": None, "error": str(exc)}


def read_text(path: str) -> dict[str, Any]:
    """The file's text under `content`, or None there and why under `error`."""
    try:
        with open(path, encoding="utf-8") as handle:
            return {"content": handle.read(), "error": ""}
    except FileNotFoundError:
        return {"content": None, "error": "missing"}
    except (OSError, UnicodeDecodeError) as exc:
        return {"content": None, "error": str(exc)}


def hash_file(path: str) -> dict[str, Any]:
    """The file's sha256 (hex) under `sha256`, or None there and why under `error`."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except FileNotFoundError:
        return {"sha256": None, "error": "missing"}
    except OSError as exc:
        return {"sha256": None, "error": str(exc)}
    return {"sha256": digest.hexdigest(), "error": ""}


def _name(lookup: Any, ident: int) -> str:
    try:
        return lookup(ident)[0]
    except KeyError:
        return str(ident)


def attributes(path: str) -> dict[str, Any]:
    """Whether the path is there, whether it is a directory, its mode (octal string, stat's form)
    and its owner and group names (the ids when they have none); links are followed."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return {"exists": False, "isdir": False, "mode": None, "owner": None, "group": None}
    return {"exists": True, "isdir": stat.S_ISDIR(info.st_mode), "mode": "%04o" % stat.S_IMODE(info.st_mode),
            "owner": _name(pwd.getpwuid, info.st_uid), "group": _name(grp.getgrgid, info.st_gid)}


def file_state(path: str) -> dict[str, Any]:
    """What a write of the file (or the directory) decides on: its attributes and, for a file that
    is there, its sha256. Links are followed, as the writes do."""
    state = attributes(path)
    state["sha256"] = hash_file(path)["sha256"] if state["exists"] and not state["isdir"] else None
    return state


def file_states(paths: list[str]) -> dict[str, dict[str, Any]]:
    """file_state of each path, keyed by the path as given."""
    return {path: file_state(path) for path in paths}


def look(paths: list[str], globs: list[str], json_files: list[str],
         text_files: list[str] | None = None, sha256_files: list[str] | None = None,
         files: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """Everything asked for, keyed by the path or pattern as given."""
    return {
        "stat": {path: stat_path(path) for path in paths},
        "glob": {pattern: count_glob(pattern) for pattern in globs},
        "json": {path: read_json(path) for path in json_files},
        "text": {path: read_text(path) for path in text_files or []},
        "sha256": {path: hash_file(path) for path in sha256_files or []},
        "files": file_states(files or []),
    }
