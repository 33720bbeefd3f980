"""The npu_network stage under faults, one round at a time, each node with its own fault.

Each round injects its faults into the converged nodes, runs playbooks/npu_network.yml as an
operator would, checks every node's outcome (the message names node, NPU and fix), checks
that no node changed but those the round expects to, and takes the faults back. The messages
are kept in .sim/network-faults.txt.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import pytest

PROJECT = Path(os.environ.get("MOLECULE_PROJECT_DIRECTORY", Path(__file__).resolve().parents[3]))
sys.path.insert(0, str(PROJECT / "tests" / "harness"))
from playlog import changed_tasks, failure_message, recap  # noqa: E402 (path set just above)

NODE1, NODE2, NODE3 = "mol-net-node1", "mol-net-node2", "mol-net-node3"
NODES = (NODE1, NODE2, NODE3)
STATE = "/etc/npu-sim/state.json"
WATCHED = "/etc/hccn.conf /var/lib/npu-sim/hccn/applied.json /etc/sysctl.d/60-hccl-ports.conf " \
          "/proc/sys/net/ipv4/ip_local_reserved_ports"


def docker(*args: str, stdin: str | None = None) -> str:
    return subprocess.run(["docker", *args], input=stdin, capture_output=True, text=True, check=True).stdout


def on(node: str, command: str) -> str:
    return docker("exec", node, "sh", "-c", command)


def fingerprint(node: str) -> str:
    return on(node, f"cat {WATCHED} | sha256sum")


@contextmanager
def node_state(node: str, state: dict) -> Iterator[None]:
    """The simulated tools' state of `node`, for the round."""
    before = on(node, f"cat {STATE}")
    docker("exec", "-i", node, "sh", "-c", f"cat > {STATE}", stdin=json.dumps(state))
    try:
        yield
    finally:
        docker("exec", "-i", node, "sh", "-c", f"cat > {STATE}", stdin=before)


@contextmanager
def port_held(node: str, port: int) -> Iterator[None]:
    """Another process listening on `port` of `node`."""
    pidfile = f"/run/held-{port}.pid"
    # SO_REUSEADDR: the connections of the earlier reach checks may still be in TIME-WAIT.
    script = ("import os, socket, time; s = socket.socket(); "
              "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('0.0.0.0', %d)); s.listen(); "
              "open('%s', 'w').write(str(os.getpid())); time.sleep(900)" % (port, pidfile))
    docker("exec", "-d", node, "python3", "-c", script)
    deadline = time.monotonic() + 10
    while f":{port}" not in on(node, f"ss -Hltn 'sport = :{port}'"):
        assert time.monotonic() < deadline, f"the listener on {node}:{port} did not start"
        time.sleep(0.2)
    try:
        yield
    finally:
        on(node, f"kill $(cat {pidfile}) && rm -f {pidfile}")


@contextmanager
def firewalled(node: str, port: int) -> Iterator[None]:
    """Incoming TCP to `port` of `node` dropped, in the node's own network namespace."""
    pid = docker("inspect", "-f", "{{.State.Pid}}", node).strip()
    rule = ["INPUT", "-p", "tcp", "--dport", str(port), "-j", "DROP"]
    subprocess.run(["nsenter", "-t", pid, "-n", "iptables", "-I", *rule], check=True)
    try:
        yield
    finally:
        subprocess.run(["nsenter", "-t", pid, "-n", "iptables", "-D", *rule], check=True)


@dataclass
class Round:
    faults: Callable[[], list]
    # node -> substrings its failure message must hold; a node not listed must succeed.
    failures: dict[str, list[str]]
    extra: list[str] = field(default_factory=list)
    changes: tuple[str, ...] = ()  # nodes the run may change


ROUNDS: dict[str, Round] = {
    "duplicate_address": Round(
        faults=lambda: [],
        extra=["-e", "npu_network_base_address=192.168.100.11"],
        failures={node: ["nothing was changed on any node",
                         f"{NODE2} NPU 0: 192.168.100.11 is also the address of {NODE1} NPU 0",
                         "npu_network_addresses or npu_network_base_address"] for node in NODES}),
    "link_down_and_unhealthy_port": Round(
        faults=lambda: [node_state(NODE2, {"hccn": {"link_down": [3]}}),
                        node_state(NODE3, {"hccn": {"health": {"6": "Receive timeout"}}})],
        failures={NODE2: [f"{NODE2} NPU 3: link status DOWN", "hccn_tool -i 3 -lldp -g"],
                  NODE3: [f"{NODE3} NPU 6: net health status Receive timeout", "npu_network_netdetect"]}),
    "wrong_address_clock_hccl_port": Round(
        faults=lambda: [node_state(NODE2, {"clock": {"synchronized": False}}), port_held(NODE3, 60010)],
        failures={NODE2: [f"{NODE2}: the clock is not synchronised", "NTPSynchronized=no",
                          "timedatectl set-ntp true"],
                  NODE3: [f"{NODE3} port 60010: held by python3 (pid", "npu_network_hccl_ports"]},
        changes=(NODE1,)),
    "unreachable_peer_and_held_rendezvous_port": Round(
        faults=lambda: [node_state(NODE3, {"hccn": {"unreachable": [5]}}), port_held(NODE1, 29500)],
        failures={NODE1: [f"{NODE1} port 29500: held by python3 (pid", "npu_network_rendezvous_port"],
                  NODE2: [f"{NODE2} NPU 5 -> {NODE3} NPU 5 (192.168.100.36): no answer", "-lldp -g"],
                  NODE3: [f"{NODE3} NPU 5 -> {NODE2} NPU 5 (192.168.100.26): no answer"]}),
    "rendezvous_port_firewalled": Round(
        faults=lambda: [firewalled(NODE1, 29500)],
        failures={node: [f"{node} cannot connect to the master {NODE1}", "29500 (timed out)",
                         "Open TCP 29500 (rendezvous)"] for node in (NODE2, NODE3)}),
}


@dataclass
class Outcome:
    run: subprocess.CompletedProcess
    before: dict[str, str]  # node -> fingerprint of its NPU settings, hccn.conf, reserved ports
    after: dict[str, str]

    @property
    def output(self) -> str:
        """stdout and stderr: failures may be shown on stderr."""
        return self.run.stdout + self.run.stderr


def run_stage(extra: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["ansible-playbook", str(PROJECT / "playbooks" / "npu_network.yml"),
         # --diff: a change where none is expected shows what it was, in the round's log.
         "-i", os.environ["MOLECULE_INVENTORY_FILE"], "--diff", *extra],
        capture_output=True, text=True, check=False, env=dict(os.environ, ANSIBLE_FORCE_COLOR="0"))


@pytest.fixture(scope="module")
def outcomes() -> Iterator[dict]:
    """Every round in turn: {round: Outcome}."""
    done = {}
    for name, spec in ROUNDS.items():
        if name == "wrong_address_clock_hccl_port":
            on(NODE1, "hccn_tool -i 2 -ip -s address 192.168.100.99 netmask 255.255.255.0")
        before = {node: fingerprint(node) for node in NODES}
        with ExitStack() as stack:
            for fault in spec.faults():
                stack.enter_context(fault)
            result = run_stage(spec.extra)
        done[name] = Outcome(result, before, {node: fingerprint(node) for node in NODES})
    report = PROJECT / ".sim" / "network-faults.txt"
    report.parent.mkdir(parents=True, exist_ok=True)
    for name, outcome in done.items():
        report.with_name(f"network-faults-{name}.log").write_text(outcome.output)
    report.write_text("".join(
        f"== {name}\n" + "".join(f"{node}: {failure_message(outcome.output, node)}\n" for node in NODES)
        for name, outcome in done.items()))
    yield done


@pytest.mark.parametrize("name", list(ROUNDS))
def test_each_node_fails_with_its_own_fault_or_succeeds(outcomes: dict, name: str) -> None:
    outcome = outcomes[name]
    counts = recap(outcome.run.stdout)
    for node in NODES:
        expected = ROUNDS[name].failures.get(node)
        message = failure_message(outcome.output, node)
        if expected is None:
            assert counts[node]["failed"] == 0, f"{node}: {message}"
        else:
            assert counts[node]["failed"] == 1, f"{node} did not fail: {counts[node]}"
            for part in expected:
                assert part in message, f"{node}: {part!r} not in {message!r}"


@pytest.mark.parametrize("name", list(ROUNDS))
def test_nothing_changed_where_it_must_not(outcomes: dict, name: str) -> None:
    outcome = outcomes[name]
    counts = recap(outcome.run.stdout)
    for node in NODES:
        if node in ROUNDS[name].changes:
            continue
        assert counts[node]["changed"] == 0, (
            f"{node}: {counts[node]}; changed by {changed_tasks(outcome.run.stdout, node)} "
            f"(the diff is in .sim/network-faults-{name}.log)")
        assert outcome.before[node] == outcome.after[node], f"{node}: its NPU settings, hccn.conf or reserved ports changed"


def test_a_mis_set_address_is_corrected(outcomes: dict) -> None:
    assert recap(outcomes["wrong_address_clock_hccl_port"].run.stdout)[NODE1]["changed"] >= 1
    assert on(NODE1, "hccn_tool -i 2 -ip -g").startswith("ipaddr:192.168.100.13")


def test_the_ping_summary_names_node_pairs_and_npus(outcomes: dict) -> None:
    output = outcomes["unreachable_peer_and_held_rendezvous_port"].run.stdout
    assert "Device ping failures: 2" in output
    assert f"{NODE2:<20} {NODE3:<20} NPU 5 -> NPU 5 (192.168.100.36)" in output


def test_no_process_is_left_behind(outcomes: dict) -> None:
    for node in NODES:
        assert on(node, "ss -Hltn 'sport = :29500 or ( sport >= :60000 and sport <= :60031 )'").strip() == ""
