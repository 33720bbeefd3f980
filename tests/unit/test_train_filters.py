"""Tests of the train role's decisions in plugins/filter/train.py and module_utils/train_run.py:
whether a node is ready, whether the group is, when the wait for the first step ends and
whether the launch reached it."""
from __future__ import annotations

import base64

import pytest

from ansible_collections.ascendops.gr00t.plugins.filter import train
from ansible_collections.ascendops.gr00t.plugins.module_utils import train_run
from ansible_collections.ascendops.gr00t.plugins.filter.train import (
    FilterModule,
    train_check_failures,
    train_first_step_wait_goes_on,
    train_health_round,
    train_health_verdict,
    train_readiness,
    truncate,
)

REGISTRY = "class EmbodimentTag(Enum):\n    LIBERO_PANDA = 'libero_panda'\n    GR1 = \"gr1\"\n"
TAG_FILE = "/opt/GR00T/gr00t/data/embodiment_tags.py"


def ready_node(**changes: object) -> dict:
    """What checks.yml gathers on a node that is ready to train, with `changes`."""
    node = {
        "host": "n1",
        "npu": {"present": True, "error": None, "count": 8, "devices": [{"id": i} for i in range(8)]},
        "nproc": 8,
        "visible_devices": list(range(8)),
        "python": "/opt/env/bin/python",
        "python_error": "",
        "site_packages": "/opt/env/lib/python3.11/site-packages",
        "tag": "LIBERO_PANDA",
        "tag_file": TAG_FILE,
        "tag_registry": {"content": base64.b64encode(REGISTRY.encode()).decode()},
        "global_batch_size": 64,
        "world_size": 16,
        "nnodes": 2,
        "master": "n0",
        "master_addr": "10.0.0.1",
        "master_port": 29500,
        "probe": {"skipped": True},
        "reach": {"changed": False, "failed": False, "ok": True, "code": "ok", "failed_ports": [],
                  "msg": "all 1 port(s) reached", "elapsed": 0.01},
        "node_python": "/usr/bin/python3",
        "paths": [{"item": {"path": "/data/libero", "msg": "Dataset: /data/libero is missing."},
                   "stat": {"exists": True}}],
    }
    node.update(changes)
    return node


# ---------------------------------------------------------------- train_check_failures


def test_ready_node_has_no_findings() -> None:
    assert train_check_failures(ready_node()) == []


def test_no_npus() -> None:
    npu = {"present": False, "error": "npu-smi is not installed.", "count": 0, "devices": []}
    assert train_check_failures(ready_node(npu=npu, nproc=0, visible_devices=[], world_size=0,
                                           global_batch_size=64)) == [
        "NPUs: npu-smi is not installed. Install the NPU driver (npu_driver stage) before training.",
        "NPUs: npu-smi shows 0 NPU(s), train_nproc_per_node asks for 0. Lower train_nproc_per_node "
        "(0 uses every NPU) or bring the missing cards back (`npu-smi info`).",
        "Batch: train_global_batch_size 64 is not divisible by the world size 0 (2 node(s) x 0 rank(s)). "
        "Use a multiple of 0, e.g. 0.",
    ]


def test_npu_error_with_cards_present() -> None:
    npu = {"present": True, "error": "dcmi error -8005.", "count": 8, "devices": [{"id": i} for i in range(8)]}
    assert train_check_failures(ready_node(npu=npu)) == [
        "NPUs: dcmi error -8005. Install the NPU driver (npu_driver stage) before training."]


def test_fewer_npus_than_ranks() -> None:
    npu = {"present": True, "error": None, "count": 7, "devices": [{"id": i} for i in range(7)]}
    assert train_check_failures(ready_node(npu=npu, visible_devices=list(range(7)))) == [
        "NPUs: npu-smi shows 7 NPU(s), train_nproc_per_node asks for 8. Lower train_nproc_per_node "
        "(0 uses every NPU) or bring the missing cards back (`npu-smi info`).",
        "NPUs: train_visible_devices [0, 1, 2, 3, 4, 5, 6] must list 8 id(s) npu-smi shows "
        "([0, 1, 2, 3, 4, 5, 6]).",
    ]


def test_visible_device_npu_smi_does_not_show() -> None:
    assert train_check_failures(ready_node(visible_devices=[0, 1, 2, 3, 4, 5, 6, 9])) == [
        "NPUs: train_visible_devices [0, 1, 2, 3, 4, 5, 6, 9] must list 8 id(s) npu-smi shows "
        "([0, 1, 2, 3, 4, 5, 6, 7])."]


def test_python_that_does_not_run() -> None:
    node = ready_node(site_packages="", python_error="  /opt/env/bin/python: No such file or directory\n")
    assert train_check_failures(node) == [
        "Python: /opt/env/bin/python does not run (/opt/env/bin/python: No such file or directory). "
        "Build the training env (python_env stage) or set train_python."]


@pytest.mark.parametrize("text, expected", [
    ("short", "short"),
    ("x" * 205, "x" * 205),
    (" ".join(["word"] * 60), " ".join(["word"] * 39) + "..."),
])
def test_truncate_cuts_long_output_at_a_word(text: str, expected: str) -> None:
    assert truncate(text) == expected


def test_unreadable_tag_registry() -> None:
    node = ready_node(tag_registry={"failed": True, "msg": f"file not found: {TAG_FILE}"})
    assert train_check_failures(node) == [
        f"Embodiment tag: cannot read the tag registry {TAG_FILE} (train_embodiment_tag_file): file not found: "
        f"{TAG_FILE} Check the GR00T checkout (gr00t stage) or set train_embodiment_tag_file."]


@pytest.mark.parametrize("tag", ["LIBERO_PANDA", "libero_panda", "GR1", "gr1"])
def test_tag_registered_by_name_or_value(tag: str) -> None:
    assert train_check_failures(ready_node(tag=tag)) == []


@pytest.mark.parametrize("tag", ["fourier_gr1", "LIBERO", "GR.", "libero_panda'"])
def test_tag_not_registered(tag: str) -> None:
    assert train_check_failures(ready_node(tag=tag)) == [
        f"Embodiment tag: '{tag}' (train_embodiment_tag) is not registered in {TAG_FILE}; GR00T would stop "
        "with \"Unknown tag\". Use a tag defined there (N1.7: LIBERO_PANDA for LIBERO data), or register "
        "yours in the checkout."]


def test_batch_not_divisible_by_the_world_size() -> None:
    assert train_check_failures(ready_node(global_batch_size=96, world_size=20, nproc=10,
                                           visible_devices=list(range(10)), npu={
                                               "present": True, "error": None, "count": 10,
                                               "devices": [{"id": i} for i in range(10)]})) == [
        "Batch: train_global_batch_size 96 is not divisible by the world size 20 (2 node(s) x 10 rank(s)). "
        "Use a multiple of 20, e.g. 100."]


def test_no_master_address() -> None:
    assert train_check_failures(ready_node(master_addr="")) == [
        "Rendezvous: no master address; set train_hccl_if_ip on n0 or train_master_addr."]


def test_port_in_use_on_the_master() -> None:
    probe = {"failed": False, "ok": False, "code": "in_use", "msg": "port 29500 is held by another process"}
    assert train_check_failures(ready_node(probe=probe)) == [
        "Rendezvous: port 29500 is in use on the master n0 (port 29500 is held by another process). "
        "Stop what holds it (`ss -ltnp 'sport = :29500'`) or set train_master_port to a free port."]


@pytest.mark.parametrize("probe", [{}, {"skipped": True},
                                   {"failed": False, "ok": True, "code": "ok", "msg": "1 port(s) free and reached"}])
def test_probe_not_run_or_passed(probe: dict) -> None:
    assert train_check_failures(ready_node(probe=probe)) == []


def test_probe_that_did_not_run_on_the_master() -> None:
    probe = {"failed": False, "failed_when_result": False, "msg": "  /usr/bin/python3: not found\n"}
    assert train_check_failures(ready_node(probe=probe)) == [
        "Rendezvous: the port probe did not run on the master (/usr/bin/python3: not found). "
        "Check that /usr/bin/python3 runs, or set train_check_master_port: false."]


def test_master_port_not_reached() -> None:
    error = "29500 ([Errno 111] Connection refused)"
    reach = {"failed": False, "ok": False, "code": "unreachable", "failed_ports": [error], "msg": error}
    assert train_check_failures(ready_node(reach=reach)) == [
        "Rendezvous: n1 cannot reach the master 10.0.0.1 on TCP port 29500 ([Errno 111] Connection refused). "
        "Open the port between the nodes (firewall), or set train_hccl_if_ip / train_master_addr to an "
        "address the nodes share."]


def test_reach_check_that_did_not_run() -> None:
    reach = {"failed": False, "failed_when_result": False, "msg": "  /usr/bin/python3: not found\n"}
    assert train_check_failures(ready_node(reach=reach)) == [
        "Rendezvous: the reach check did not run on n1 (/usr/bin/python3: not found). "
        "Check that /usr/bin/python3 runs, or set train_check_master_port: false."]


@pytest.mark.parametrize("reach", [{}, {"skipped": True, "changed": False}])
def test_reach_not_run(reach: dict) -> None:
    assert train_check_failures(ready_node(reach=reach)) == []


def test_missing_paths_come_last() -> None:
    paths = [{"item": {"path": "/data/libero", "msg": "Dataset: /data/libero is missing."}, "stat": {"exists": False}},
             {"item": {"path": "/models/base", "msg": "Model: /models/base is missing."}, "stat": {"exists": True}}]
    assert train_check_failures(ready_node(paths=paths, master_addr="")) == [
        "Rendezvous: no master address; set train_hccl_if_ip on n0 or train_master_addr.",
        "Dataset: /data/libero is missing.",
    ]


# ---------------------------------------------------------------- train_readiness


def test_group_ready() -> None:
    assert train_readiness(["n0", "n1"], [[], []], "ascend_nodes") == {"ok": True, "msg": ""}


def test_group_not_ready_names_each_failing_node_with_numbered_findings() -> None:
    readiness = train_readiness(["n0", "n1", "n2"], [["A.", "B."], [], ["C."]], "ascend_nodes")
    assert readiness == {"ok": False, "msg": (
        "Training cannot start; nothing was changed on any node of ascend_nodes:\n"
        "n0:\n  1. A.\n  2. B.\n"
        "n2:\n  1. C.")}


# ---------------------------------------------------------------- the waits of train_status


def status(state: str, last_step: int = 0, **changes: object) -> dict:
    result = {"state": state, "last_step": last_step, "exit_code": None, "log": "/runs/r1/logs/n.log",
              "errors": [], "hint": None, "last_lines": [], "loss": None, "grad_norm": None}
    result.update(changes)
    return result


@pytest.mark.parametrize("state", ["failed", "stopped", "finished", "absent"])
@pytest.mark.parametrize("until", ["ended", "first_step"])
@pytest.mark.parametrize("rank", [0, 1])
def test_wait_ends_when_the_run_is_not_running(state: str, until: str, rank: int) -> None:
    assert train_run.wait_over(until, status(state), rank) is True


@pytest.mark.parametrize("last_step, over", [(0, False), (1, True), (5, True)])
def test_master_ends_its_wait_for_the_first_step_at_a_step(last_step: int, over: bool) -> None:
    assert train_run.wait_over("first_step", status("running", last_step), 0) is over
    # Steps are logged on the master only; a run that steps on goes on until it ends.
    assert train_run.wait_over("first_step", status("running", last_step), 1) is False
    assert train_run.wait_over("ended", status("running", last_step), 0) is False


def test_a_wait_for_nothing_reads_once() -> None:
    reads = []
    result, waited = train_run.wait_for(lambda: reads.append(1) or status("running"),
                                        lambda found: train_run.wait_over("none", found, 0), 60, 5)
    assert (len(reads), waited, result["state"]) == (1, 0, "running")


def test_wait_polls_until_over_or_out_of_time() -> None:
    now = [0.0]
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        now[0] += seconds

    steps = iter([0, 0, 3])
    result, waited = train_run.wait_for(lambda: status("running", next(steps)),
                                        lambda found: train_run.wait_over("first_step", found, 0),
                                        60, 5, clock=lambda: now[0], sleep=sleep)
    assert (result["last_step"], waited, sleeps) == (3, 10, [5.0, 5.0])
    now[0] = 0.0
    sleeps.clear()
    result, waited = train_run.wait_for(lambda: status("running"),
                                        lambda found: train_run.wait_over("ended", found, 0),
                                        12, 5, clock=lambda: now[0], sleep=sleep)
    # The last sleep is cut to the time left: the wait never runs past its seconds.
    assert (result["state"], waited, sleeps) == ("running", 12, [5.0, 5.0, 2.0])


@pytest.mark.parametrize("found, line", [
    (status("running"), "running, no step logged yet"),
    (status("failed", exit_code=1), "failed (exit code 1), no step logged"),
    (status("running", 20, max_steps=40, loss=0.81234, eta_seconds=45.6), "running, step 20/40, loss 0.8123, ETA 45 s"),
    (status("finished", 40, max_steps=40, loss=0.5, eta_seconds=0, exit_code=0),
     "finished (exit code 0), step 40/40, loss 0.5000"),
    (status("running", 3), "running, step 3/?"),
])
def test_progress_line(found: dict, line: str) -> None:
    assert train_run.progress_line(found) == line


# ---------------------------------------------------------------- rounds of the wait


@pytest.mark.parametrize("timeout, settle, seconds", [(900, 30, 30), (90, 9, 9), (7200, 30, 144), (10, 0, 1), (5, 60, 60)])
def test_a_round_is_settle_unless_the_timeout_needs_too_many(timeout: int, settle: int, seconds: int) -> None:
    assert train_health_round(str(timeout), str(settle)) == seconds
    assert -(-timeout // seconds) <= 50


def test_the_group_waits_while_the_master_has_no_step_and_every_node_runs() -> None:
    assert train_first_step_wait_goes_on([status("running"), status("running")], "30", "900") is True


@pytest.mark.parametrize("statuses", [
    [status("running", 1), status("running")],                      # the master's first step
    [status("running"), status("failed", exit_code=-9)],            # a rank died on another node
    [status("failed"), status("running")],                          # the master's run ended
    [status("running"), status("finished")],
    [status("running"), {}],                                        # a node that left the play
    [],
], ids=["first step", "other node failed", "master failed", "other node finished", "no result", "no nodes"])
def test_the_wait_ends_for_every_node(statuses: list) -> None:
    assert train_first_step_wait_goes_on(statuses, 30, 900) is False


def test_the_wait_ends_at_the_timeout() -> None:
    assert train_first_step_wait_goes_on([status("running")], 870, 900) is True
    assert train_first_step_wait_goes_on([status("running")], 900, 900) is False


def test_new_filters_are_registered() -> None:
    filters = FilterModule().filters()
    assert filters["train_health_round"] is train_health_round
    assert filters["train_first_step_wait_goes_on"] is train_first_step_wait_goes_on


# ---------------------------------------------------------------- train_health_verdict

HOSTS = ["n0", "n1", "n2"]


def test_healthy_launch_reports_each_node() -> None:
    statuses = [status("running", 3, loss=1.28, grad_norm=0.9), status("running"), status("finished", 0, exit_code=0)]
    assert train_health_verdict(HOSTS, statuses, "r1", "1800") == {"ok": True, "msg": "", "reports": {
        "n0": "n0: run r1 is running, step 3, loss 1.28, grad norm 0.9; log /runs/r1/logs/n.log",
        "n1": "n1: run r1 is running (steps are logged on n0); log /runs/r1/logs/n.log",
        "n2": "n2: run r1 is finished (steps are logged on n0); log /runs/r1/logs/n.log",
    }}


def test_master_finished_without_a_step_is_healthy() -> None:
    assert train_health_verdict(HOSTS, [status("finished")] + [status("running")] * 2, "r1", 1800)["ok"] is True


def test_failed_launch_names_the_nodes_in_group_order_with_their_logs() -> None:
    statuses = [
        status("running", 0, last_lines=["Loading episodes: 40%"]),
        status("running"),
        status("failed", 0, exit_code=1, hint="Set train_dataloader_num_workers: 0.",
               errors=[{"line": "RuntimeError: Cannot re-initialize NPU in forked subprocess", "key": "forked_npu"},
                       {"line": "later error", "key": "other"}],
               last_lines=["Traceback (most recent call last):", "RuntimeError: ..."]),
    ]
    verdict = train_health_verdict(HOSTS, statuses, "r1", 1800)
    assert verdict["ok"] is False
    assert verdict["msg"] == (
        "Run r1 did not reach its first training step on n0, n2\n"
        "(waited up to 1800 s, train_health_timeout); every node was stopped.\n"
        "n0: state running,\n"
        "  step 0, log /runs/r1/logs/n.log\n"
        "  hint: no known error in the log; read it for the first Traceback\n"
        "  last lines:\n"
        "    Loading episodes: 40%\n"
        "n2: state failed, exit code 1,\n"
        "  step 0, log /runs/r1/logs/n.log\n"
        "  error: RuntimeError: Cannot re-initialize NPU in forked subprocess\n"
        "  hint: Set train_dataloader_num_workers: 0.\n"
        "  last lines:\n"
        "    Traceback (most recent call last):\n"
        "    RuntimeError: ...")


@pytest.mark.parametrize("state", ["stopped", "absent", "failed"])
def test_a_node_that_is_gone_fails_the_launch(state: str) -> None:
    verdict = train_health_verdict(HOSTS, [status("running", 2), status(state), status("running")], "r1", 60)
    assert verdict["ok"] is False
    assert verdict["msg"].splitlines()[0] == "Run r1 did not reach its first training step on n1"


# ---------------------------------------------------------------- FilterModule


@pytest.mark.parametrize("name", ["train_group_decision", "collective_summary", "train_check_failures",
                                  "train_readiness", "train_first_step_wait_goes_on", "train_health_verdict"])
def test_filter_module_exposes(name: str) -> None:
    assert FilterModule().filters()[name] is getattr(train, name)


# ---------------------------------------------------------------- train_checkpoint_limit


@pytest.mark.parametrize(("argv", "limit"), [
    (["--max_steps", "20000"], 0),
    (["--save_total_limit", "3"], 3),
    (["--save-total-limit=2", "--max_steps", "9"], 2),
    (["--save_total_limit", "5", "--save_total_limit", "1"], 1),
    (["--save_total_limit", "0"], 0),
    (["--save_total_limit", "-1"], 0),
    (["--save_total_limit"], 0),
    (["--save_total_limit_x", "3"], 0),
])
def test_checkpoint_limit_is_the_one_gr00t_takes(argv: list[str], limit: int) -> None:
    assert train.train_checkpoint_limit(argv) == limit
    assert FilterModule().filters()["train_checkpoint_limit"] is train.train_checkpoint_limit
