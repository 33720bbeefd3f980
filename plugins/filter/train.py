"""Filters for the train role: one launch decision for all nodes of a training group, and
the verdict of the collective check across them."""
from __future__ import annotations

from typing import Any

from ansible_collections.ascendops.gr00t.plugins.module_utils.collective import summarize
from ansible_collections.ascendops.gr00t.plugins.module_utils.train_run import group_decision


def train_group_decision(decisions: dict[str, dict], restart: bool = False) -> dict:
    """{host: decision of train_status} -> {action: keep|launch|refuse, msg}."""
    return group_decision(decisions, bool(restart))


def plain(value: Any) -> Any:
    """Ansible's lazily templated containers as plain lists and dicts: read more than once,
    a lazy list of one host's result came back empty for the next."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def collective_summary(hosts: list[str], results: list[Any], addrs: list[str]) -> dict:
    """Hosts, their collective_check results and addresses -> {ok, msg, report, culprits, ...}."""
    return summarize([str(h) for h in hosts], plain(list(results)), [str(a or "") for a in addrs])


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {"train_group_decision": train_group_decision, "collective_summary": collective_summary}
