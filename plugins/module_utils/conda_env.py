# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""The state of a Miniforge prefix and one conda env in it, and what the python_env stage
would do about them. Pure functions; the conda_env_facts module runs the commands."""
from __future__ import annotations

import os
import re

from ansible_collections.ascendops.gr00t.plugins.module_utils.path_facts import hash_file


def conda_version(rc: int, stdout: str) -> str:
    """The version `conda --version` answered with; empty when conda did not answer (an
    interrupted install leaves a prefix without a working conda)."""
    if rc != 0:
        return ""
    return re.sub(r"^conda\s+", "", stdout.strip())


def python_version(rc: int, stdout: str) -> str:
    """The `major.minor` the env's python printed; empty when it is missing or broken."""
    text = stdout.strip()
    return text if rc == 0 and re.fullmatch(r"[0-9]+\.[0-9]+", text) else ""


def miniforge_action(have: str, want: str, prefix_exists: bool) -> str:
    """none (conda answers with the wanted version), install (no prefix), repair (a prefix
    without a working conda: install over it with -u) or update (another conda version)."""
    if have == want:
        return "none"
    if not prefix_exists:
        return "install"
    return "repair" if have == "" else "update"


def env_action(present: bool, have_python: str, want_python: str) -> str:
    """create (no env), none (the env has the wanted Python) or recreate (it has another
    Python, or its python does not run)."""
    if not present:
        return "create"
    return "none" if have_python == want_python else "recreate"


def wheel_hashes(directory: str) -> list[str]:
    """The sha256 of every *.whl file directly in `directory`; none when it does not exist."""
    try:
        names = sorted(os.listdir(directory))
    except FileNotFoundError:
        return []
    paths = [os.path.join(directory, name) for name in names if name.endswith(".whl")]
    return [digest for digest in (hash_file(path)["sha256"] for path in paths if os.path.isfile(path)) if digest]
