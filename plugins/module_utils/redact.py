# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Credentials in URLs (a mirror, a proxy or an artifact source as
``scheme://user:password@host/...``): found, split off and masked, so that no message,
report or file shows them."""
from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

MASK = "********"
# scheme://user:password@ ; the user part may be empty, the password may not.
_USERINFO = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^:/@\s]*):(?P<password>[^@/\s]+)@")


def mask_credentials(value: Any) -> Any:
    """The value with every URL password replaced by ********, in strings, lists and dicts."""
    if isinstance(value, str):
        return _USERINFO.sub(lambda m: "%s:%s@" % (m.group("head"), MASK), value)
    if isinstance(value, (list, tuple)):
        return [mask_credentials(v) for v in value]
    if isinstance(value, dict):
        return {k: mask_credentials(v) for k, v in value.items()}
    return value


def url_passwords(values: Any) -> set[str]:
    """The passwords of the URLs in a string or a list of strings, as written and decoded."""
    if isinstance(values, str):
        values = [values]
    found: set[str] = set()
    for value in values or []:
        for match in _USERINFO.finditer(str(value)):
            found.update({match.group("password"), unquote(match.group("password"))})
    return found


def split_credentials(url: str) -> dict[str, str]:
    """{url, username, password}: the URL without its user info, and what it carried."""
    match = re.match(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^:/@\s]*)(?::(?P<password>[^@/\s]*))?@(?P<rest>.*)",
                     url or "")
    if not match:
        return {"url": url or "", "username": "", "password": ""}
    return {"url": match.group("scheme") + match.group("rest"), "username": unquote(match.group("user")),
            "password": unquote(match.group("password") or "")}
