"""Fault-injection suite: site.yml under the faults a rack of new servers meets.

pytest drives `ansible-playbook site.yml` over SSH against simulated nodes
(tests/harness/simctl.py), injects one fault per node while the run is under way, lets
"the operator" fix the cause, and reruns. Each fault must be reported plainly, must not
lose anything (the staged dataset, files beside the install), and a rerun must converge;
a final run over every node must change nothing. Then the nodes roll back to CANN 8.5.0
with playbooks/upgrade.yml, two at a time, while one node of the second batch reports an
unhealthy NPU: the first batch changes, the rollout stops at the second, the third is untouched.

  node       fault
  f-ok       none: it must finish every stage while the others fail
  f-killed   the node dies (SIGKILL of the whole container) while the CANN toolkit installs
  f-source   the HTTP artifact source stops answering while the toolkit installs
  f-disk     /usr/local/Ascend fills up half-way through the toolkit install
  f-ssh      SSH is cut (TCP reset) while the toolkit installs detached (async)

The installer killed half-way, a bad checksum and a training rank that crashes after
launch are covered by the molecule scenarios cann_faults, python_env_faults and train.
The table of what each run did is written to .sim/faults/report.md and printed at the end.

  .venv/bin/pytest -q tests/faults      (after `make sim`; about 12 minutes on 2 cores)

FAULTS_KEEP_NODES=1 leaves the nodes running afterwards, to look at them.
"""
from __future__ import annotations

import http.server
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "harness"))
from playlog import failure_message, recap, results  # noqa: E402 (path set just above)
from siminv import inventory as sim_inventory  # noqa: E402 (path set just above)

SIMCTL = [sys.executable, str(REPO / "tests" / "harness" / "simctl.py")]
ARTIFACTS = REPO / ".sim" / "artifacts"
WORK = REPO / ".sim" / "faults"
CLUSTER = "faults"
BASE_PORT = 22320
TOOLKIT = "Ascend-cann-toolkit"
CANN_TREE = "/usr/local/Ascend/cann-9.0.0"
# The toolkit logs to its own file (the driver keeps ascend_install.log).
TOOLKIT_LOG = "/var/log/ascend_seclog/ascend_toolkit_install.log"
# f-disk: a 96 MB disk for /usr/local/Ascend holding 40 MB of someone's files; preflight
# asks for 40 MiB free, the toolkit payload needs 80 MB. The fix grows the disk to 256 MB.
DISK_MB, KEEP_MB, PAYLOAD_MB, GROWN_MB = 96, 40, 80, 256
KEEP_FILE = "/usr/local/Ascend/site-keep/notes.bin"
RUN_A = ["f-ok", "f-killed", "f-source", "f-disk"]
RUN_B = ["f-ssh"]
NODES = RUN_A + RUN_B
WAIT_S = 900
# f-ssh: the toolkit install must outlast the cut run and the rerun's stages before CANN
# (about 15 s here), with room for a slower machine.
SSH_INSTALL_S = 120

# The rolling change after the campaign: CANN back to 8.5.0, batches of two in NODES order.
ROLL_TO = "8.5.0"
ROLL_BATCHES = [NODES[0:2], NODES[2:4], NODES[4:]]
ROLL_FAULTY = NODES[3]
ROLL_FAULT_STATE = {"devices": [{"id": i, "health": "Critical" if i == 2 else "OK"} for i in range(8)]}

pytestmark = pytest.mark.skipif(not ARTIFACTS.joinpath("SHA256SUMS").is_file(),
                                reason="simulated artifacts missing: run `make sim` first")


# ---------------------------------------------------------------- pure helpers


def node_name(host: str) -> str:
    return f"{CLUSTER}-{host}"


def cluster_spec() -> dict:
    nodes = []
    for index, host in enumerate(NODES, start=1):
        node = {"name": host, "ssh_port": BASE_PORT + index, "driver": None, "kernel_headers": True, "state": {}}
        if host == "f-disk":
            # As a real mount of the install root: root-owned 0755 (preflight refuses
            # docker's default 1777) and executable (npu-smi and the installers run from it).
            node["tmpfs"] = [f"/usr/local/Ascend:size={DISK_MB}m,mode=0755,exec"]
        nodes.append(node)
    return {"name": CLUSTER, "nodes": nodes}


def inventory(cluster: dict, source_url: str) -> dict:
    """The sim inventory's settings for the cluster's nodes, reached with OpenSSH as real nodes are."""
    inv = sim_inventory({node["name"]: node["ssh_port"] for node in cluster["nodes"]})
    hosts = inv["all"]["children"]["ascend_nodes"]["hosts"]
    hosts["f-source"]["ascend_artifact_source"] = source_url
    hosts["f-disk"]["preflight_disk_requirements"] = [
        {"path": "/usr/local/Ascend", "min_free_gb": 0.04, "purpose": "NPU driver and CANN"},
        {"path": "/opt", "min_free_gb": 2, "purpose": "conda environment and GR00T"},
    ]
    return inv


# ---------------------------------------------------------------- the nodes and the source


def sh(*cmd: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, check=check, capture_output=True, text=True)


def on_node(host: str, script: str, check: bool = True) -> str:
    return sh("docker", "exec", node_name(host), "bash", "-c", script, check=check).stdout


def ssh_answers(spec: dict, host: str) -> bool:
    port = next(n["ssh_port"] for n in spec["nodes"] if n["name"] == host)
    return sh("ssh", "-i", str(REPO / ".sim" / "ssh" / "id_ed25519"), "-p", str(port), "-o", "BatchMode=yes",
              "-o", "ConnectTimeout=3", "root@127.0.0.1", "true", check=False).returncode == 0


def node_pid(host: str) -> str:
    return sh("docker", "inspect", "-f", "{{.State.Pid}}", node_name(host)).stdout.strip()


def installer_running(host: str) -> bool:
    res = sh("docker", "top", node_name(host), check=False)
    return res.returncode == 0 and TOOLKIT in res.stdout


def toolkit_half_installed(host: str) -> bool:
    """The installer runs and has laid down its tree but not its install record.

    That is what ascend_install.partial_trees reports as an interrupted install. The process
    shows up (as flock's argument) before the installer has copied anything; a kill in that
    instant leaves nothing to repair, so wait for the tree."""
    partial = f"test -d {CANN_TREE} && ! compgen -G '{CANN_TREE}/*-linux/ascend_toolkit_install.info' >/dev/null && echo yes"
    return installer_running(host) and on_node(host, partial, check=False).strip() == "yes"


def file_hashes(host: str, path: str) -> dict[str, str]:
    out = on_node(host, f"cd {path} && find . -type f -print0 | xargs -0 sha256sum")
    return {name: digest for digest, name in (line.split(None, 1) for line in out.splitlines())}


def cut_ssh(host: str, cut: bool) -> None:
    """Reset every TCP packet to the node's sshd (inside its network namespace), or stop doing so."""
    rule = ["INPUT", "-p", "tcp", "--dport", "22", "-j", "REJECT", "--reject-with", "tcp-reset"]
    sh("nsenter", "-t", node_pid(host), "-n", "iptables", "-I" if cut else "-D", *rule)


def grow_disk(host: str, size_mb: int) -> None:
    sh("nsenter", "-t", node_pid(host), "-m", "mount", "-o", f"remount,size={size_mb}m", "/usr/local/Ascend")


class Source:
    """The artifact directory served over HTTP on the cluster network's gateway."""

    def __init__(self, directory: Path, bind: str) -> None:
        self.directory, self.bind = directory, bind
        with socket.socket() as probe:
            probe.bind((bind, 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://{bind}:{self.port}"
        self.server: http.server.ThreadingHTTPServer | None = None

    def start(self) -> None:
        handler = partial(QuietHandler, directory=str(self.directory))
        self.server = http.server.ThreadingHTTPServer((self.bind, self.port), handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (stdlib signature)
        pass


# ---------------------------------------------------------------- runs


@dataclass
class Run:
    name: str
    rc: int
    seconds: float
    output: str
    hosts: dict[str, dict[str, int]] = field(default_factory=dict)


@contextmanager
def alongside(work: Callable[[], None], timeout: float = WAIT_S * 2) -> Iterator[None]:
    """Run `work` in a thread while the block runs; wait for it after, and raise what it raised."""
    errors: list[BaseException] = []

    def guarded() -> None:
        try:
            work()
        except BaseException as exc:  # noqa: BLE001 (re-raised in the test thread)
            errors.append(exc)

    worker = threading.Thread(target=guarded, daemon=True)
    worker.start()
    try:
        yield
    finally:
        worker.join(timeout=timeout)
    if worker.is_alive():
        raise AssertionError(f"{work.__name__} did not end within {timeout:.0f} s")
    if errors:
        raise errors[0]


def playbook(name: str, inv: Path, limit: list[str], during: Callable[[], None] | None = None,
             play: str = "site.yml", extra: tuple[str, ...] = ()) -> Run:
    """Run `play` (site.yml) on `limit`; `during` runs in a thread alongside (the fault)."""
    log = WORK / f"{name}.log"
    start = time.monotonic()
    with open(log, "w") as fh, alongside(during or (lambda: None), timeout=WAIT_S):
        proc = subprocess.Popen(["ansible-playbook", play, "-i", str(inv), "--limit", ",".join(limit), *extra],
                                cwd=REPO, stdout=fh, stderr=subprocess.STDOUT, text=True,
                                env=ansible_env())
        rc = proc.wait(timeout=WAIT_S * 2)
    output = log.read_text()
    return Run(name, rc, time.monotonic() - start, output, recap(output))


def ansible_env() -> dict[str, str]:
    # profile_tasks: the suite reads how long the rerun waited for the earlier installer.
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_FORCE_COLOR="0", PY_COLORS="0",
               ANSIBLE_CALLBACKS_ENABLED="ansible.posix.profile_tasks,ascendops.gr00t.preload")
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    return env


def wait_until(what: str, check: Callable[[], bool], proc_alive: Callable[[], bool] = lambda: True) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        if time.monotonic() > deadline or not proc_alive():
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.5)


# ---------------------------------------------------------------- the campaign


@dataclass
class Campaign:
    runs: dict[str, Run] = field(default_factory=dict)
    data_before: dict[str, dict[str, str]] = field(default_factory=dict)
    data_after: dict[str, dict[str, str]] = field(default_factory=dict)
    keep_before: str = ""
    keep_after: str = ""
    installer_alive_at_rerun: bool = False
    facts: dict[str, dict] = field(default_factory=dict)
    rolled_facts: dict[str, dict] = field(default_factory=dict)
    source_url: str = ""


ROWS: list[tuple[str, str, str]] = []


def installed_facts(inv: Path) -> dict[str, dict]:
    res = subprocess.run(["ansible", "ascend_nodes", "-i", str(inv), "-m", "ascendops.gr00t.ascend_install_facts"],
                         cwd=REPO, capture_output=True, text=True,
                         env=dict(ansible_env(), ANSIBLE_LOAD_CALLBACK_PLUGINS="1", ANSIBLE_STDOUT_CALLBACK="json"), check=False)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    facts = {}
    # profile_tasks prints around the JSON document: read just the document.
    document, dummy = json.JSONDecoder().raw_decode(res.stdout[res.stdout.index("{\n"):])
    for play in document["plays"]:
        for task in play["tasks"]:
            for host, result in task["hosts"].items():
                facts[host] = result.get("ansible_facts", {}).get("ascend", {})
    return facts


@pytest.fixture(scope="module")
def campaign() -> Iterator[Campaign]:
    WORK.mkdir(parents=True, exist_ok=True)
    spec = cluster_spec()
    cluster_file = WORK / "cluster.json"
    cluster_file.write_text(json.dumps(spec, indent=2))
    subprocess.run([*SIMCTL, "down", str(cluster_file)], check=True)
    subprocess.run([*SIMCTL, "up", str(cluster_file), "--artifacts", str(ARTIFACTS)], check=True)
    gateway = sh("docker", "network", "inspect", f"sim-{CLUSTER}", "-f", "{{(index .IPAM.Config 0).Gateway}}").stdout.strip()
    source = Source(ARTIFACTS, gateway)
    inv = WORK / "inventory.yml"
    inv.write_text(yaml.safe_dump(inventory(spec, source.url), sort_keys=False))
    result = Campaign(source_url=source.url)
    try:
        source.start()
        for host in NODES:
            result.data_before[host] = file_hashes(host, "/data")
        on_node("f-killed", "echo toolkit:30 > /etc/npu-sim/slow_installer")
        on_node("f-source", "echo toolkit:10 > /etc/npu-sim/slow_installer")
        on_node("f-ssh", f"echo toolkit:{SSH_INSTALL_S} > /etc/npu-sim/slow_installer")
        on_node("f-disk", f"echo toolkit:{PAYLOAD_MB} > /etc/npu-sim/payload_mb && mkdir -p {Path(KEEP_FILE).parent}"
                          f" && head -c {KEEP_MB * 1048576} /dev/urandom > {KEEP_FILE}")
        result.keep_before = on_node("f-disk", f"sha256sum {KEEP_FILE}").split()[0]

        def faults_a() -> None:
            pending = {"f-killed", "f-source"}
            deadline = time.monotonic() + WAIT_S
            while pending and time.monotonic() < deadline:
                if "f-killed" in pending and toolkit_half_installed("f-killed"):
                    sh("docker", "kill", node_name("f-killed"))
                    pending.discard("f-killed")
                if "f-source" in pending and installer_running("f-source"):
                    source.stop()
                    pending.discard("f-source")
                time.sleep(0.5)
            assert not pending, f"the toolkit install never started on {sorted(pending)}"

        def faults_b() -> None:
            wait_until("the toolkit install on f-ssh", lambda: installer_running("f-ssh"))
            time.sleep(2)
            cut_ssh("f-ssh", True)

        def campaign_b() -> None:
            result.runs["b1"] = playbook("b1-ssh-cut", inv, RUN_B, faults_b)
            cut_ssh("f-ssh", False)
            result.installer_alive_at_rerun = installer_running("f-ssh")
            result.runs["b2"] = playbook("b2-rerun", inv, RUN_B)

        # The SSH cut has a run of its own (its node must drop out alone), beside the other
        # faults' run: as two operators' runs on one controller, and the suite's time is the
        # longer of the two, not their sum.
        with alongside(campaign_b):
            result.runs["a1"] = playbook("a1-faults", inv, RUN_A, faults_a)

            # The operator's fixes: power the node back on, bring the mirror back, grow the disk.
            sh("docker", "start", node_name("f-killed"))
            wait_until("SSH on f-killed", partial(ssh_answers, spec, "f-killed"))
            on_node("f-killed", "rm -f /etc/npu-sim/slow_installer")
            source.start()
            grow_disk("f-disk", GROWN_MB)
            result.runs["a2"] = playbook("a2-rerun", inv, RUN_A)
        result.runs["final"] = playbook("final", inv, NODES)
        result.facts = installed_facts(inv)
        for host in NODES:
            result.data_after[host] = file_hashes(host, "/data")
        result.keep_after = on_node("f-disk", f"sha256sum {KEEP_FILE}").split()[0]
        # A rolling change: batches of two in inventory order; ROLL_FAULTY of the second batch
        # reports a Critical NPU before its batch starts.
        roll = ("-e", f"ascend_cann_version={ROLL_TO}", "-e", "upgrade_batch_size=2")
        result.runs["roll_check"] = playbook("roll-back-check", inv, ROLL_BATCHES[0], play="playbooks/upgrade.yml",
                                             extra=("--check", "--diff", *roll))
        on_node(ROLL_FAULTY, f"echo '{json.dumps(ROLL_FAULT_STATE)}' > /etc/npu-sim/state.json")
        result.runs["roll"] = playbook("roll-back", inv, NODES, play="playbooks/upgrade.yml", extra=roll)
        on_node(ROLL_FAULTY, "echo '{}' > /etc/npu-sim/state.json")
        result.rolled_facts = installed_facts(inv)
        yield result
    finally:
        source.stop()
        write_report(result)
        if not os.environ.get("FAULTS_KEEP_NODES"):
            subprocess.run([*SIMCTL, "down", str(cluster_file)], check=False)


def write_report(result: Campaign) -> None:
    lines = ["| fault | what the run did | what the rerun did |", "|---|---|---|"]
    lines += [f"| {fault} | {did} | {rerun} |" for fault, did, rerun in ROWS]
    times = ", ".join(f"{r.name} {r.seconds:.0f} s" for r in result.runs.values())
    (WORK / "report.md").write_text("\n".join(lines) + f"\n\nRuns: {times}\n")


def row(fault: str, did: str, rerun: str) -> None:
    ROWS.append((fault, did, rerun))


def repaired(run: Run, host: str) -> bool:
    return any("repairing the interrupted install" in block for block in results(run.output, host))


# ---------------------------------------------------------------- the faults


def test_healthy_node_finishes_while_others_fail(campaign: Campaign) -> None:
    a1 = campaign.runs["a1"]
    assert a1.rc != 0
    assert a1.hosts["f-ok"]["failed"] == 0 and a1.hosts["f-ok"]["unreachable"] == 0, a1.hosts
    assert any("f-ok:" in block for block in results(a1.output, "f-ok")), "the summary did not run for f-ok"
    on_node("f-ok", "test -x /opt/miniforge3/envs/torch2.7.1/bin/gr00t_npu_launch.py")  # the last stages ran
    assert campaign.facts["f-ok"]["toolkit_version"] == "9.0.0"
    assert campaign.runs["a2"].hosts["f-ok"]["changed"] == 0


def test_node_killed_mid_install(campaign: Campaign) -> None:
    a1, a2 = campaign.runs["a1"], campaign.runs["a2"]
    assert a1.hosts["f-killed"]["unreachable"] + a1.hosts["f-killed"]["failed"] >= 1, a1.hosts
    assert a2.hosts["f-killed"]["changed"] > 0 and a2.hosts["f-killed"]["failed"] == 0
    assert repaired(a2, "f-killed"), "the rerun did not report the repair of the partial toolkit"
    facts = campaign.facts["f-killed"]
    assert facts["toolkit_version"] == "9.0.0" and not facts["partial_installs"], facts
    row("node killed (SIGKILL of the whole node) while the CANN toolkit installs; three others in the same run",
        "the node is UNREACHABLE at the installer poll and drops out; the others go on and the healthy one "
        f"finishes every stage ({a1.seconds:.0f} s)",
        f"repairs the partial toolkit tree and finishes every stage (changed={a2.hosts['f-killed']['changed']}); "
        "the healthy node changed=0")


def test_artifact_source_unreachable(campaign: Campaign) -> None:
    a1, a2 = campaign.runs["a1"], campaign.runs["a2"]
    assert a1.hosts["f-source"]["failed"] == 1, a1.hosts
    msg = failure_message(a1.output, "f-source")
    assert campaign.source_url in msg and ("cannot be read" in msg or "could not be brought" in msg), msg
    assert "rerun" in msg
    assert a2.hosts["f-source"]["failed"] == 0 and a2.hosts["f-source"]["changed"] > 0
    staged = on_node("f-source", "cd /var/cache/ascendops/artifacts && sha256sum *.run")
    sums = dict(line.split()[::-1] for line in (ARTIFACTS / "SHA256SUMS").read_text().splitlines() if line.strip())
    for line in staged.splitlines():
        digest, name = line.split()
        assert sums.get(name) == digest, f"{name} staged with a sha256 the manifest does not list"
    row("HTTP artifact source stops answering while the toolkit installs",
        "the toolkit finishes from its verified copy; the next package stops with `The artifact source <url> "
        "cannot be read from the controller (... Connection refused)` and the curl command to check it",
        f"source back: stages the rest and finishes (changed={a2.hosts['f-source']['changed']}); every staged file "
        "matches the manifest")


def test_disk_full_during_cann_install(campaign: Campaign) -> None:
    a1, a2 = campaign.runs["a1"], campaign.runs["a2"]
    assert a1.hosts["f-disk"]["failed"] == 1, a1.hosts
    msg = failure_message(a1.output, "f-disk")
    assert "No space left on device" in msg and "free space on /usr/local/Ascend" in msg, msg
    assert campaign.keep_after == campaign.keep_before, "a file beside the install was changed"
    assert a2.hosts["f-disk"]["failed"] == 0 and repaired(a2, "f-disk")
    assert campaign.facts["f-disk"]["toolkit_version"] == "9.0.0" and not campaign.facts["f-disk"]["partial_installs"]
    row(f"disk under /usr/local/Ascend fills up half-way through the toolkit install ({PAYLOAD_MB} MB into "
        f"{DISK_MB - KEEP_MB} MB free)",
        "fails with the installer's `No space left on device` and `free space on /usr/local/Ascend`; the 40 MB "
        "of other files on that disk are untouched",
        f"disk grown: repairs the partial tree and finishes (changed={a2.hosts['f-disk']['changed']}); the other "
        "files are byte-identical")


def test_ssh_cut_during_async_install(campaign: Campaign) -> None:
    b1, b2 = campaign.runs["b1"], campaign.runs["b2"]
    assert b1.hosts["f-ssh"]["unreachable"] >= 1, b1.hosts
    assert campaign.installer_alive_at_rerun, "the installer was not running any more when the rerun began"
    assert b2.rc == 0 and "for an installer an earlier run left running" in b2.output
    installs = on_node("f-ssh", f"grep -c '{TOOLKIT} .* install success' {TOOLKIT_LOG} || true").strip()
    assert installs == "1", f"the toolkit installer ran {installs} times"
    # The read that waits warns how long (module_utils/installer_lock.py).
    waited = max(float(x) for x in re.findall(r"Waited ([0-9]+) s for an installer an earlier run left running",
                                              b2.output))
    row(f"SSH cut (TCP reset) 2 s into a {SSH_INSTALL_S} s toolkit install running detached",
        "the node is UNREACHABLE at the installer poll; the installer keeps running on the node",
        f"waits {waited:.0f} s for that installer (lock) instead of starting a second one (one toolkit install in "
        f"the vendor log), then finishes (changed={b2.hosts['f-ssh']['changed']})")


def test_nothing_lost_and_final_run_changes_nothing(campaign: Campaign) -> None:
    final = campaign.runs["final"]
    assert final.rc == 0
    assert {h: c["changed"] for h, c in final.hosts.items()} == dict.fromkeys(NODES, 0), final.hosts
    added = set()
    for host in NODES:
        before, after = campaign.data_before[host], campaign.data_after[host]
        changed = [name for name, digest in before.items() if after.get(name) != digest]
        assert not changed, f"{host}: files under /data changed or went missing: {changed}"
        added |= set(after) - set(before)
    # gr00t_copy_modality (set in the sim inventory) adds the LIBERO modality.json when it is missing.
    assert added <= {"./gr00t/datasets/libero/meta/modality.json"}, added
    row("(after the reruns) one more run over all five nodes", f"changed=0 on every node ({final.seconds:.0f} s)",
        "every file under /data is byte-identical on every node (only the missing modality.json was added, "
        "as gr00t_copy_modality asks)")


def test_rolling_change_stops_at_an_unhealthy_batch(campaign: Campaign) -> None:
    check, roll, facts = campaign.runs["roll_check"], campaign.runs["roll"], campaign.rolled_facts
    first, second, third = ROLL_BATCHES
    # The check run on the first batch reports the change and makes none (the real run below
    # changes those nodes).
    assert check.rc == 0, check.output[-3000:]
    assert all(check.hosts[host]["changed"] > 0 for host in first), check.hosts
    assert roll.rc != 0
    for host in first:
        assert facts[host]["toolkit_version"] == ROLL_TO and facts[host]["nnal_version"] == ROLL_TO, facts[host]
        assert roll.hosts[host]["changed"] > 0 and roll.hosts[host]["failed"] == 0, roll.hosts
    msg = failure_message(roll.output, ROLL_FAULTY)
    assert "NPU 2 Critical" in msg and "later batches are not touched" in msg, msg
    # The batch stops as a whole at the gate, before its stages: nothing changed in it.
    for host in second:
        assert facts[host]["toolkit_version"] == "9.0.0", facts[host]
        assert roll.hosts[host]["changed"] == 0, roll.hosts
    for host in third:
        assert host not in roll.hosts, f"{host} was in the run: the rollout did not stop"
        assert facts[host]["toolkit_version"] == "9.0.0", facts[host]
    row(f"rolling change to CANN {ROLL_TO} (playbooks/upgrade.yml, batches of 2); one node of the second batch "
        "reports a Critical NPU",
        f"first batch changes and passes its checks and the health gate; the gate stops the second batch before "
        f"any change, `NPU 2 Critical` named ({roll.seconds:.0f} s)",
        "the third batch is never started: it keeps CANN 9.0.0")
