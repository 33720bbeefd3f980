"""Filters for pip: one place that turns the site's mirror settings into pip arguments.

Every stage that installs Python packages (python_env, mx_driving, gr00t, train) passes
its pip settings through `pip_options`, so a site with a local index or a wheelhouse and
no internet is honoured everywhere the same way.
"""
from __future__ import annotations

from typing import Any

from ansible_collections.ascendops.gr00t.plugins.module_utils.pip_pins import pin_problems, pin_versions


def _as_list(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value if str(v)]


def pip_options(index_url: str | None = None, extra_index_urls: Any = None, find_links: Any = None,
                trusted_hosts: Any = None) -> list[str]:
    """pip arguments for a mirror, extra indexes, wheelhouses and trusted hosts.

    Without an index URL pip gets `--no-index`: packages then come only from `find_links`,
    never from the internet by accident. Extra indexes need an index URL to extend.
    """
    index = (index_url or "").strip()
    extras = _as_list(extra_index_urls)
    if extras and not index:
        raise ValueError("pip_extra_index_urls needs pip_index_url: extra indexes extend an index, "
                         "and without one pip runs with --no-index")
    args = ["--index-url", index] if index else ["--no-index"]
    for url in extras:
        args += ["--extra-index-url", url]
    for link in _as_list(find_links):
        args += ["--find-links", link]
    for host in _as_list(trusted_hosts):
        args += ["--trusted-host", host]
    return args


def torch_npu_listed_for(table: dict[str, list[str]], cann: str) -> list[str]:
    """The torch_npu versions a {torch_npu: [CANN, ...]} table lists for a CANN version.

    CANN versions compare case-insensitively (8.3.RC1 is 8.3.rc1).
    """
    wanted = str(cann).lower()
    return [build for build, canns in table.items() if wanted in (str(c).lower() for c in canns)]


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {
            "pip_options": pip_options,
            "pip_pin_problems": pin_problems,
            "pip_pin_versions": pin_versions,
            "torch_npu_listed_for": torch_npu_listed_for,
        }
