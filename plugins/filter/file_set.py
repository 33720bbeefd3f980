# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Whether a file_set task has anything to do, told on the controller from an earlier read."""
from __future__ import annotations

from typing import Any

from ansible_collections.ascendops.gr00t.plugins.module_utils.file_set import DIRECTORY_MODE, pending


def file_set_pending(files: list[dict[str, Any]], states: dict[str, dict[str, Any]],
                     directories: list[str] | None = None, owner: str | None = None,
                     group: str | None = None, directory_mode: str = DIRECTORY_MODE) -> list[str]:
    return pending(list(files), list(directories or []), dict(states), owner, group, directory_mode)


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {"file_set_pending": file_set_pending}
