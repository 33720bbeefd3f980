# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Free space for install paths that may not exist yet: measured at the nearest existing
directory, as a later install into the path would see it."""
from __future__ import annotations

import os


def nearest_existing(path: str) -> str:
    current = os.path.abspath(path)
    while not os.path.isdir(current):
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return current


def measure(path: str) -> dict:
    where = nearest_existing(path)
    stats = os.statvfs(where)
    return {
        "measured_at": where,
        "exists": os.path.exists(path),
        "free_bytes": stats.f_bavail * stats.f_frsize,
        "total_bytes": stats.f_blocks * stats.f_frsize,
    }
