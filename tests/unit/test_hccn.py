"""Tests of the device network helpers: address plans, hccn_tool output, host ports."""
from __future__ import annotations

import pytest

from ansible_collections.ascendops.gr00t.plugins.filter.npu_network import FilterModule
from ansible_collections.ascendops.gr00t.plugins.module_utils.hccn import (
    cluster_plan,
    device_findings,
    expand_addresses,
    first_address,
    merge_ranges,
    parse_fields,
    parse_ping,
    ping_targets,
    port_users,
    set_commands,
)

MASK = "255.255.255.0"


def spec(base: str = "", addresses: list | None = None, count: int = 8, **extra) -> dict:
    return dict({"addresses": addresses or [], "base_address": base, "stride": 1, "netmask": MASK,
                 "gateway": "", "netdetect": "", "count": count}, **extra)


def test_base_and_stride_expand_to_one_address_per_npu() -> None:
    assert expand_addresses([], "10.0.0.11", 2, 3) == ["10.0.0.11", "10.0.0.13", "10.0.0.15"]
    assert expand_addresses(["10.0.0.1 "], "10.9.9.9", 1, 8) == ["10.0.0.1"]
    assert expand_addresses([], "255.255.255.255", 1, 2)[1] == "out of range"


def test_a_clean_cluster_has_no_problems() -> None:
    plan = cluster_plan({"n1": spec("192.168.1.11", gateway="192.168.1.1", netdetect="192.168.1.1"),
                         "n2": spec("192.168.1.21")})
    assert plan["n1"]["problems"] == plan["n2"]["problems"] == []
    assert plan["n1"]["devices"][7] == {"id": 7, "address": "192.168.1.18", "netmask": MASK,
                                        "gateway": "192.168.1.1", "netdetect": "192.168.1.1"}


def test_duplicates_across_nodes_name_both_nodes_npus_and_the_fix() -> None:
    plan = cluster_plan({"n1": spec("192.168.1.11"), "n2": spec("192.168.1.15")})
    assert plan["n1"]["problems"] == []
    first = plan["n2"]["problems"][0]
    assert first.startswith("n2 NPU 0: 192.168.1.15 is also the address of n1 NPU 4")
    assert "npu_network_addresses" in first and len(plan["n2"]["problems"]) == 4


def test_a_node_split_over_two_subnets_names_the_odd_npu() -> None:
    addresses = [f"192.168.1.{i}" for i in range(11, 18)] + ["192.168.2.18"]
    problems = cluster_plan({"n1": spec(addresses=addresses)})["n1"]["problems"]
    assert len(problems) == 1
    assert problems[0].startswith("n1 NPU 7: 192.168.2.18 is in 192.168.2.0/24, the node's other NPUs in 192.168.1.0/24")
    assert "npu_network_netmask" in problems[0]


@pytest.mark.parametrize("node, expected", [
    (spec(addresses=["192.168.1.1"] * 0 + [f"192.168.1.{i}" for i in range(7)]),
     "n1: npu_network_addresses lists 7 address(es), the node has 8 NPU(s)"),
    (spec(addresses=["192.168.1.300"] + [f"192.168.1.{i}" for i in range(1, 8)]),
     "n1 NPU 0: '192.168.1.300' is not an IPv4 address"),
    (spec("192.168.1.11", netmask="255.0.255.0"), "npu_network_netmask '255.0.255.0' is not a netmask"),
    (spec("192.168.1.11", gateway="10.0.0.1"), "npu_network_gateway 10.0.0.1 is outside the NPU subnet"),
    (spec("nope"), "npu_network_base_address 'nope' is not an IPv4 address"),
    (spec(), "n1: no NPU addresses; set npu_network_addresses or npu_network_base_address"),
])
def test_bad_inputs_are_named(node: dict, expected: str) -> None:
    problems = cluster_plan({"n1": node})["n1"]["problems"]
    assert any(expected in p for p in problems), problems


def test_hccn_tool_output_is_read() -> None:
    assert parse_fields("ipaddr:192.168.1.11\nnetmask:255.255.255.0\n") == {"ipaddr": "192.168.1.11", "netmask": MASK}
    assert parse_fields("link status: UP")["link status"] == "UP"
    assert first_address("default gateway:192.168.1.1, Iface:eth0") == "192.168.1.1"
    assert first_address("default gateway:, Iface:eth0") == ""
    assert parse_ping(0, "3 packets transmitted, 3 received, 0.00% packet loss")
    assert not parse_ping(0, "3 packets transmitted, 0 received, 100.00% packet loss")
    assert not parse_ping(1, "3 packets transmitted, 3 received")


def test_only_what_differs_is_set() -> None:
    want = {"id": 2, "address": "192.168.1.13", "netmask": MASK, "gateway": "192.168.1.1", "netdetect": ""}
    same = {"address": "192.168.1.13", "netmask": MASK, "gateway": "192.168.1.1", "netdetect": "192.168.1.9"}
    assert set_commands(want, same) == []
    changes = set_commands(want, dict(same, address="192.168.1.99", gateway=""))
    assert [c["setting"] for c in changes] == ["ip", "gateway"]
    assert changes[0]["args"] == ["-i", "2", "-ip", "-s", "address", "192.168.1.13", "netmask", MASK]
    assert changes[1]["args"] == ["-i", "2", "-gateway", "-s", "gateway", "192.168.1.1"]


def test_device_findings_name_npu_value_and_fix() -> None:
    want = [{"id": 0, "address": "192.168.1.11", "netmask": MASK, "netdetect": "192.168.1.1"}]
    found = [{"id": 0, "address": "192.168.1.99", "netmask": MASK, "link": "DOWN", "health": "Init"}]
    findings = device_findings(want, found)
    assert [f["kind"] for f in findings] == ["link", "health", "address"]
    assert findings[0]["msg"].startswith("NPU 0: link status DOWN")
    assert "net health status Init" in findings[1]["msg"]
    assert "address 192.168.1.99/255.255.255.0, configured 192.168.1.11/255.255.255.0" in findings[2]["msg"]
    assert device_findings(want, [dict(found[0], address="192.168.1.11", link="UP", health="Success")]) == []


def test_ping_targets_same_index_or_full_mesh() -> None:
    plan = cluster_plan({"n1": spec("192.168.1.11", count=2), "n2": spec("192.168.1.21", count=2)})
    same = ping_targets(plan, "n1", ["n1", "n2"], False)
    assert same == [{"npu": 0, "address": "192.168.1.21", "peer": "n2", "peer_npu": 0},
                    {"npu": 1, "address": "192.168.1.22", "peer": "n2", "peer_npu": 1}]
    assert len(ping_targets(plan, "n1", ["n1", "n2"], True)) == 4


def test_reserved_ports_are_merged_never_replaced() -> None:
    assert merge_ranges("", "60000-60031") == "60000-60031"
    assert merge_ranges("8080,60010", "60000-60031") == "8080,60000-60031"
    assert merge_ranges("60000-60031", "60000-60031") == "60000-60031"
    assert merge_ranges("59990-60005,60040", "60000-60031") == "59990-60031,60040"


SS = """\
LISTEN    0 64   0.0.0.0:60010     0.0.0.0:*     users:(("python3",pid=812,fd=3))
LISTEN    0 128  0.0.0.0:22        0.0.0.0:*     users:(("sshd",pid=1,fd=3))
TIME-WAIT 0 0    172.18.0.2:60001  172.18.0.3:41234
ESTAB     0 0    [::ffff:172.18.0.2]:29500 [::ffff:172.18.0.3]:41000
"""


def test_port_users_name_the_process_and_skip_time_wait() -> None:
    assert port_users(SS, "60000-60031") == [{"port": 60010, "state": "LISTEN", "process": "python3 (pid 812)"}]
    assert port_users(SS, "29500")[0]["process"] == "an unnamed process"


def test_filters_are_registered() -> None:
    assert set(FilterModule().filters()) == {"npu_network_plan", "npu_network_merge_ports",
                                             "npu_network_port_users", "npu_network_ping_targets"}
