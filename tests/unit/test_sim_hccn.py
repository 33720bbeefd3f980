"""Tests of the simulated hccn_tool and timedatectl, and of the modules that drive hccn_tool."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import modrun
import pytest
from ansible.module_utils import basic

from ansible_collections.ascendops.gr00t.plugins.modules import hccn_ping, hccn_state

SIM_BIN = Path(__file__).resolve().parents[2] / "tests" / "sim" / "bin"
MASK = "255.255.255.0"


class Node:
    """One simulated node: its hccn.conf, applied settings and faults, on a shared fabric."""

    def __init__(self, root: Path, name: str, fabric: Path) -> None:
        self.root, self.name = root / name, name
        self.root.mkdir(parents=True)
        self.env = {"HCCN_SIM_DIR": str(self.root / "hccn"), "HCCN_SIM_CONF": str(self.root / "hccn.conf"),
                    "HCCN_SIM_FABRIC": str(fabric), "HCCN_SIM_NODE": name,
                    "NPU_SIM_STATE": str(self.root / "state.json"), "PATH": "/usr/bin:/bin"}

    def state(self, state: dict) -> None:
        (self.root / "state.json").write_text(json.dumps(state))

    def conf(self, base: int) -> None:
        (self.root / "hccn.conf").write_text("".join(
            f"address_{i}=192.168.1.{base + i}\nnetmask_{i}={MASK}\nnetdetect_{i}=192.168.1.1\n" for i in range(8)))

    def run(self, *args: str, tool: str = "hccn_tool") -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(SIM_BIN / tool), *args], env=self.env, capture_output=True, text=True, check=False)


@pytest.fixture
def nodes(tmp_path: Path) -> tuple[Node, Node]:
    fabric = tmp_path / "fabric"
    fabric.mkdir()
    return Node(tmp_path, "n1", fabric), Node(tmp_path, "n2", fabric)


def test_boot_reads_hccn_conf_and_set_is_kept(nodes) -> None:
    n1 = nodes[0]
    n1.conf(11)
    assert n1.run("-i", "3", "-ip", "-g").stdout == f"ipaddr:192.168.1.14\nnetmask:{MASK}\n"
    assert n1.run("-i", "3", "-netdetect", "-g").stdout.strip() == "netdetect address:192.168.1.1"
    assert n1.run("-i", "3", "-ip", "-s", "address", "192.168.1.99", "netmask", MASK).returncode == 0
    assert "ipaddr:192.168.1.99" in n1.run("-i", "3", "-ip", "-g").stdout
    # Applied settings outlive a changed hccn.conf until the node boots again.
    n1.conf(51)
    assert "ipaddr:192.168.1.99" in n1.run("-i", "3", "-ip", "-g").stdout
    assert n1.run("-i", "0", "-gateway", "-s", "gateway", "192.168.1.1").returncode == 0
    assert n1.run("-i", "0", "-gateway", "-g").stdout.startswith("default gateway:192.168.1.1")


@pytest.mark.parametrize("args, message", [
    (["-i", "8", "-ip", "-g"], "Invalid device id: 8"),
    (["-i", "x", "-link", "-g"], "Invalid device id: x"),
    (["-i", "0", "-ip", "-s", "address", "192.168.1.1"], "expected address <value> netmask <value>"),
    (["-i", "0", "-ip", "-s", "address", "192.168.1.300", "netmask", MASK], "invalid ip address"),
    (["-i", "0", "-ping", "-g"], "expected address <value>"),
    (["-i", "0", "-bogus", "-g"], "unknown operation -bogus"),
    (["-i", "0", "-link", "-s", "up"], "-link cannot be set"),
    (["-ip", "-g"], "wrong arguments"),
])
def test_bad_forms_are_refused(nodes, args: list[str], message: str) -> None:
    result = nodes[0].run(*args)
    assert result.returncode == 1
    assert message in result.stderr and "simulated" in result.stderr


def test_faults_link_health_and_wrong_address(nodes) -> None:
    n1 = nodes[0]
    n1.conf(11)
    n1.state({"hccn": {"link_down": [3], "health": {"6": "Receive timeout"}, "address": {"2": "192.168.1.99"}}})
    assert n1.run("-i", "3", "-link", "-g").stdout.strip() == "link status: DOWN"
    assert n1.run("-i", "0", "-link", "-g").stdout.strip() == "link status: UP"
    assert n1.run("-i", "6", "-net_health", "-g").stdout.strip() == "net health status: Receive timeout"
    assert n1.run("-i", "0", "-net_health", "-g").stdout.strip() == "net health status: Success"
    assert "ipaddr:192.168.1.99" in n1.run("-i", "2", "-ip", "-g").stdout
    assert "Ifname" in n1.run("-i", "1", "-lldp", "-g").stdout


def test_ping_reaches_only_published_answering_addresses(nodes) -> None:
    n1, n2 = nodes
    n1.conf(11)
    n2.conf(21)
    n2.state({"hccn": {"unreachable": [5], "link_down": [6]}})
    n2.run("-i", "0", "-link", "-g")  # the node's tool has run once: its addresses are published
    assert "3 received" in n1.run("-i", "0", "-ping", "-g", "address", "192.168.1.21").stdout
    assert "0 received" in n1.run("-i", "5", "-ping", "-g", "address", "192.168.1.26").stdout
    assert "0 received" in n1.run("-i", "6", "-ping", "-g", "address", "192.168.1.27").stdout
    assert "0 received" in n1.run("-i", "0", "-ping", "-g", "address", "192.168.1.200").stdout


def test_timedatectl_reports_the_clock_state(nodes) -> None:
    n1 = nodes[0]
    assert n1.run("show", "-p", "NTPSynchronized", "--value", tool="timedatectl").stdout == "yes\n"
    n1.state({"clock": {"synchronized": False}})
    out = n1.run("show", "-p", "NTP", "-p", "NTPSynchronized", tool="timedatectl").stdout
    assert out == "NTP=yes\nNTPSynchronized=no\n"
    assert n1.run("set-ntp", "true", tool="timedatectl").returncode == 1


def wanted(base: int) -> list[dict]:
    return [{"id": i, "address": f"192.168.1.{base + i}", "netmask": MASK, "gateway": "", "netdetect": "192.168.1.1"}
            for i in range(8)]


@pytest.fixture
def on_node(nodes, monkeypatch: pytest.MonkeyPatch):
    """Run the modules as on node n1."""
    for key, value in nodes[0].env.items():
        monkeypatch.setenv(key, value)
    return nodes


def test_hccn_state_sets_what_differs_then_nothing(on_node, monkeypatch, capsys) -> None:
    n1 = on_node[0]
    n1.conf(11)
    n1.state({"hccn": {"address": {"2": "192.168.1.99"}}})
    args = {"hccn_tool": str(SIM_BIN / "hccn_tool"), "devices": wanted(11)}
    check = modrun.run_module(hccn_state.main, monkeypatch, capsys, dict(args, _ansible_check_mode=True, _ansible_diff=True))
    assert check["changed"] and [c["id"] for c in check["plan"]] == [2] and check["findings"] == []
    assert "192.168.1.99" in check["diff"]["before"] and "192.168.1.13" in check["diff"]["after"]
    assert "ipaddr:192.168.1.99" in n1.run("-i", "2", "-ip", "-g").stdout
    read = modrun.run_module(hccn_state.main, monkeypatch, capsys, dict(args, apply=False))
    assert not read["changed"] and read["findings"][0]["kind"] == "address"
    first = modrun.run_module(hccn_state.main, monkeypatch, capsys, args)
    assert first["changed"] and first["findings"] == [] and first["devices"][2]["address"] == "192.168.1.13"
    again = modrun.run_module(hccn_state.main, monkeypatch, capsys, args)
    assert not again["changed"] and again["plan"] == []


def test_hccn_state_reports_link_and_health(on_node, monkeypatch, capsys) -> None:
    n1 = on_node[0]
    n1.conf(11)
    n1.state({"hccn": {"link_down": [3], "health": {"6": "Receive timeout"}}})
    result = modrun.run_module(hccn_state.main, monkeypatch, capsys,
                               {"hccn_tool": str(SIM_BIN / "hccn_tool"), "devices": wanted(11), "apply": False})
    assert [(f["id"], f["kind"]) for f in result["findings"]] == [(3, "link"), (3, "health"), (6, "health")]


def test_hccn_state_without_the_tool(monkeypatch, capsys, tmp_path: Path) -> None:
    result = modrun.run_module(hccn_state.main, monkeypatch, capsys,
                               {"hccn_tool": str(tmp_path / "hccn_tool"), "devices": wanted(11)})
    assert result["failed"] and "install the NPU driver" in result["msg"]


def test_hccn_ping_reports_each_target(on_node, monkeypatch, capsys) -> None:
    n1, n2 = on_node
    n1.conf(11)
    n2.conf(21)
    n2.state({"hccn": {"unreachable": [5]}})
    n2.run("-i", "0", "-link", "-g")
    targets = [{"npu": i, "address": f"192.168.1.{21 + i}", "peer": "n2", "peer_npu": i} for i in range(8)]
    result = modrun.run_module(hccn_ping.main, monkeypatch, capsys,
                               {"hccn_tool": str(SIM_BIN / "hccn_tool"), "targets": targets})
    assert not result["changed"] and result["failed_count"] == 1
    assert [r["npu"] for r in result["results"] if not r["ok"]] == [5]
    assert [r["npu"] for r in result["results"]] == list(range(8))


@pytest.fixture
def lost_replies(monkeypatch):
    """AnsibleModule.run_command that loses the replies of the listed queries, the first `times`
    times each is asked: exit 0 and no output, as run_command returns when a command writes
    and exits just after one of its one-second waits for output ran out."""
    original = basic.AnsibleModule.run_command
    losses: dict[tuple[str, ...], int] = {}

    def run_command(self, args, *more, **kw):
        key = tuple(str(arg) for arg in args[1:])
        if losses.get(key, 0) > 0:
            losses[key] -= 1
            return 0, "", ""
        return original(self, args, *more, **kw)

    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)

    def lose(*args: str, times: int = 1) -> None:
        losses[args] = times
    return lose


def converged(node: Node, base: int) -> None:
    node.conf(base)
    node.run("-i", "0", "-link", "-g")  # the settings taken from hccn.conf as at boot


def test_hccn_state_asks_again_for_a_lost_reply(on_node, lost_replies, monkeypatch, capsys) -> None:
    n1 = on_node[0]
    converged(n1, 11)
    devices = [dict(device, gateway="192.168.1.1") for device in wanted(11)]
    for device in devices:
        n1.run("-i", str(device["id"]), "-gateway", "-s", "gateway", "192.168.1.1")
    for query in ("-ip", "-gateway", "-netdetect", "-link", "-net_health"):
        lost_replies("-i", "4", query, "-g")
    result = modrun.run_module(hccn_state.main, monkeypatch, capsys,
                               {"hccn_tool": str(SIM_BIN / "hccn_tool"), "devices": devices})
    assert not result["changed"] and result["plan"] == [] and result["findings"] == []
    assert result["devices"][4] == dict(devices[4], link="UP", health="Success")


def test_hccn_state_sets_nothing_on_a_reply_that_stays_empty(on_node, lost_replies, monkeypatch, capsys) -> None:
    n1 = on_node[0]
    converged(n1, 11)
    before = (n1.root / "hccn" / "applied.json").read_text()
    lost_replies("-i", "4", "-ip", "-g", times=99)
    result = modrun.run_module(hccn_state.main, monkeypatch, capsys,
                               {"hccn_tool": str(SIM_BIN / "hccn_tool"), "devices": wanted(11)})
    assert result["failed"] and "`hccn_tool -i 4 -ip -g` answered nothing" in result["msg"]
    assert (n1.root / "hccn" / "applied.json").read_text() == before


def test_hccn_ping_asks_again_for_a_lost_reply(on_node, lost_replies, monkeypatch, capsys) -> None:
    n1, n2 = on_node
    converged(n1, 11)
    converged(n2, 21)
    lost_replies("-i", "3", "-ping", "-g", "address", "192.168.1.24")
    targets = [{"npu": i, "address": f"192.168.1.{21 + i}", "peer": "n2", "peer_npu": i} for i in range(8)]
    result = modrun.run_module(hccn_ping.main, monkeypatch, capsys,
                               {"hccn_tool": str(SIM_BIN / "hccn_tool"), "targets": targets})
    assert result["failed_count"] == 0, result["results"]
