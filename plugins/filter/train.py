"""Filters for the train role: one launch decision for all nodes of a training group."""
from __future__ import annotations

from typing import Any

from ansible_collections.ascendops.gr00t.plugins.module_utils.train_run import group_decision


def train_group_decision(decisions: dict[str, dict], restart: bool = False) -> dict:
    """{host: decision of train_status} -> {action: keep|launch|refuse, msg}."""
    return group_decision(decisions, bool(restart))


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {"train_group_decision": train_group_decision}
