"""Filters for the npu_network role: the cluster's NPU address plan and the HCCL host ports."""
from __future__ import annotations

from typing import Any

from ansible_collections.ascendops.gr00t.plugins.module_utils.hccn import (
    cluster_plan,
    merge_ranges,
    ping_targets,
    port_users,
)


def npu_network_plan(nodes: dict[str, dict]) -> dict[str, dict]:
    """{host: address spec} -> {host: {devices, problems}}, duplicates checked across hosts."""
    return cluster_plan(nodes)


def npu_network_merge_ports(existing: str, wanted: str) -> str:
    """ip_local_reserved_ports with `wanted` added to what is reserved already."""
    return merge_ranges(existing, wanted)


def npu_network_port_users(ss_output: str, ranges: str) -> list[dict]:
    """Sockets of `ss -Htanp` output whose local port is in `ranges`."""
    return port_users(ss_output, ranges)


def npu_network_ping_targets(plan: dict[str, dict], host: str, peers: list[str], full_mesh: bool = False) -> list[dict]:
    """The pings `host` makes: same-index NPUs of its peers, or all of them."""
    return ping_targets(plan, host, list(peers), bool(full_mesh))


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {
            "npu_network_plan": npu_network_plan,
            "npu_network_merge_ports": npu_network_merge_ports,
            "npu_network_port_users": npu_network_port_users,
            "npu_network_ping_targets": npu_network_ping_targets,
        }
