# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Small files with a known content: which differ from what is on disk, and the diff an
operator sees for each. The file_set module writes them; this part only reads."""
from __future__ import annotations

import hashlib
import os
from typing import Any

# file_set's defaults, which pending() assumes for a file or directory that names no mode.
FILE_MODE = "0644"
DIRECTORY_MODE = "0755"


def current_content(path: str) -> str | None:
    """The file's text, or None when there is no file (a directory there is an error)."""
    if not os.path.lexists(path):
        return None
    with open(path, encoding="utf-8", errors="surrogateescape") as handle:
        return handle.read()


def file_diff(path: str, before: str | None, after: str) -> dict[str, Any]:
    """The diff entry Ansible's callbacks print, for one file."""
    return {"before_header": path if before is not None else "%s (absent)" % path, "before": before or "",
            "after_header": path, "after": after}


def missing_directories(paths: list[str]) -> list[str]:
    """The paths that are not directories yet, in the order given."""
    return [path for path in paths if not os.path.isdir(path)]


def _differs(state: dict[str, Any], mode: str, owner: str | None, group: str | None) -> bool:
    return (int(str(state["mode"]), 8) != int(str(mode), 8)
            or bool(owner) and state["owner"] != owner or bool(group) and state["group"] != group)


def pending(files: list[dict[str, Any]], directories: list[str], states: dict[str, dict[str, Any]],
            owner: str | None = None, group: str | None = None, directory_mode: str = DIRECTORY_MODE) -> list[str]:
    """The paths a file_set run with these arguments would create, write or give another mode,
    owner or group, told from a read of them (path_facts' `files`: exists, isdir, mode, owner,
    group, sha256). A path the read did not cover counts as pending, so a caller that forgets
    one runs the write."""
    out = []
    for path in directories:
        state = states.get(path)
        if not state or not state["isdir"] or _differs(state, directory_mode, owner, group):
            out.append(path)
    for spec in files:
        path, state = spec["path"], states.get(spec["path"])
        if not state or not state["exists"] or state["isdir"]:
            out.append(path)
        elif not spec.get("force", True):
            continue
        elif (state["sha256"] != hashlib.sha256(spec["content"].encode("utf-8", "surrogateescape")).hexdigest()
              or _differs(state, spec.get("mode") or FILE_MODE, owner, group)):
            out.append(path)
    return out
