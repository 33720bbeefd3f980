# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Small files with a known content: which differ from what is on disk, and the diff an
operator sees for each. The file_set module writes them; this part only reads."""
from __future__ import annotations

import os
from typing import Any


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
