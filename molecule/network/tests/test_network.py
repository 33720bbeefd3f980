"""The converged nodes: NPU addresses applied and in /etc/hccn.conf, HCCL ports reserved."""
from __future__ import annotations

import json

import pytest

BASES = {"mol-net-node1": 11, "mol-net-node2": 21, "mol-net-node3": 31}


@pytest.fixture
def base(host) -> int:
    return BASES[host.backend.get_hostname()]


def test_hccn_conf_holds_every_npu(host, base: int) -> None:
    conf = host.file("/etc/hccn.conf")
    assert conf.mode == 0o644 and conf.user == "root"
    lines = set(conf.content_string.splitlines())
    for npu in range(8):
        assert f"address_{npu}=192.168.100.{base + npu}" in lines
        assert {f"netmask_{npu}=255.255.255.0", f"gateway_{npu}=192.168.100.1",
                f"netdetect_{npu}=192.168.100.1"} <= lines


def test_npus_run_with_the_configured_addresses(host, base: int) -> None:
    applied = json.loads(host.file("/var/lib/npu-sim/hccn/applied.json").content_string)
    assert {npu: conf["address"] for npu, conf in applied.items()} == {
        str(npu): f"192.168.100.{base + npu}" for npu in range(8)}
    assert host.run("hccn_tool -i 7 -ip -g").stdout.startswith(f"ipaddr:192.168.100.{base + 7}")


def test_hccl_ports_are_reserved_now_and_at_boot(host) -> None:
    assert "60000-60031" in host.file("/proc/sys/net/ipv4/ip_local_reserved_ports").content_string
    assert "net.ipv4.ip_local_reserved_ports" in host.file("/etc/sysctl.d/60-hccl-ports.conf").content_string


def test_no_listener_is_left_behind(host) -> None:
    assert host.run("ss -Hltn 'sport >= :60000 and sport <= :60031'").stdout.strip() == ""
    assert host.run("ss -Hltn 'sport = :29500'").stdout.strip() == ""
