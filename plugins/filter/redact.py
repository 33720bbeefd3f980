"""Filters that keep URL credentials out of messages and reports."""
from __future__ import annotations

from typing import Any

from ansible_collections.ascendops.gr00t.plugins.module_utils.redact import mask_credentials, split_credentials


def url_credentials(url: str) -> dict[str, str]:
    """A URL -> {url (without user info), username, password}."""
    return split_credentials(str(url or ""))


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {"mask_credentials": mask_credentials, "url_credentials": url_credentials}
