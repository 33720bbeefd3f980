"""Tests of the train_status module and the launch decision: keep, launch, restart, refuse."""
from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import modrun
import pytest

from ansible_collections.ascendops.gr00t.plugins.module_utils import train_run
from ansible_collections.ascendops.gr00t.plugins.modules import train_status, train_stop

KNOWN_LOG = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "train" / "known.log"


def write_run(tmp_path: Path, *, log: Path = KNOWN_LOG, pid: int | None = None, exit_code: int | None = None,
              config_hash: str = "h1") -> dict:
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    record = {"run_id": "r1", "output_dir": str(out), "log": str(log), "exit_file": str(tmp_path / "exit"),
              "config_hash": config_hash, "max_steps": 8}
    (tmp_path / "run.json").write_text(json.dumps(record))
    if pid is not None:
        (tmp_path / "train.pid").write_text(f"{pid}\n")
    if exit_code is not None:
        (tmp_path / "exit").write_text(f"{exit_code}\n")
    return {"record": str(tmp_path / "run.json"), "pidfile": str(tmp_path / "train.pid"),
            "global_batch_size": 640, "warmup_steps": 2}


def run_module(monkeypatch, capsys, args: dict) -> dict:
    return modrun.run_module(train_status.main, monkeypatch, capsys, args)


def test_absent(monkeypatch, capsys, tmp_path: Path) -> None:
    result = run_module(monkeypatch, capsys, {"record": str(tmp_path / "none.json"),
                                              "pidfile": str(tmp_path / "none.pid"), "global_batch_size": 8})
    assert result["state"] == "absent" and result["changed"] is False
    assert result["last_step"] == 0 and result["samples_per_second"] is None


def test_running_with_numbers(monkeypatch, capsys, tmp_path: Path) -> None:
    args = write_run(tmp_path, pid=os.getpid())
    result = run_module(monkeypatch, capsys, args)
    assert result["state"] == "running" and result["pid"] == os.getpid()
    assert result["last_step"] == 7 and result["loss"] == 0.12 and result["grad_norm"] == 0.31
    assert result["samples_per_second"] == 80.0 and result["eta_seconds"] == 8.0


def test_dead_process_without_exit_file_failed(monkeypatch, capsys, tmp_path: Path) -> None:
    proc = subprocess.Popen(["true"])
    proc.wait()
    log = tmp_path / "node.log"
    log.write_text("Traceback (most recent call last):\nRuntimeError: Cannot re-initialize NPU in forked subprocess.\n")
    result = run_module(monkeypatch, capsys, write_run(tmp_path, log=log, pid=proc.pid))
    assert result["state"] == "failed"
    assert "train_dataloader_num_workers: 0" in result["hint"]
    assert result["last_lines"][-1].startswith("RuntimeError")


def test_finished(monkeypatch, capsys, tmp_path: Path) -> None:
    result = run_module(monkeypatch, capsys, write_run(tmp_path, exit_code=0))
    assert result["state"] == "finished" and result["exit_code"] == 0


def test_decision_in_module(monkeypatch, capsys, tmp_path: Path) -> None:
    args = write_run(tmp_path, pid=os.getpid())
    result = run_module(monkeypatch, capsys, dict(args, config_hash="h1", run_id="r1"))
    assert result["decision"]["action"] == "keep"


# ---- the decision table

RECORD = {"run_id": "old", "output_dir": "/data/runs/old", "config_hash": "h1"}


@pytest.mark.parametrize("state,wanted,restart,action", [
    ("running", "h1", False, "keep"),
    ("finished", "h1", False, "keep"),
    ("absent", "h1", False, "launch"),
    ("failed", "h1", False, "launch"),
    ("finished", "h2", False, "launch"),
    ("running", "h2", True, "restart"),
    ("running", "h1", True, "restart"),
])
def test_decide(state: str, wanted: str, restart: bool, action: str) -> None:
    decision = train_run.decide(state, RECORD if state != "absent" else {}, wanted, "new", "/data/runs/new", [],
                                restart, False)
    assert decision["action"] == action, decision


def test_refuse_second_start_with_other_config() -> None:
    decision = train_run.decide("running", RECORD, "h2", "new", "/data/runs/new", [], False, False)
    assert decision["action"] == "refuse" and decision["reason"] == "alive"
    assert "train_restart: true" in decision["msg"] and "train_stop.yml" in decision["msg"]


def test_refuse_existing_checkpoints() -> None:
    decision = train_run.decide("absent", {}, "h1", "new", "/data/runs/new", ["checkpoint-500", "checkpoint-1000"],
                                False, False)
    assert decision["action"] == "refuse" and decision["reason"] == "checkpoints"
    assert "never overwritten" in decision["msg"] and "train_resume: true" in decision["msg"]
    assert "checkpoint-1000" in decision["msg"]


def test_restart_does_not_bypass_checkpoints() -> None:
    decision = train_run.decide("running", RECORD, "h2", "old", "/data/runs/old", ["checkpoint-5"], True, False)
    assert decision["action"] == "refuse" and decision["reason"] == "checkpoints"


def test_resume() -> None:
    decision = train_run.decide("failed", RECORD, "h1", "old", "/data/runs/old", ["checkpoint-5", "checkpoint-10"],
                                False, True, 10)
    assert decision == {"action": "launch", "resume": True, "resume_from": "checkpoint-10", "resume_step": 10,
                        "msg": "launch run old from checkpoint-10 (global step 10)"}


def test_resume_refuses_an_incomplete_newest_checkpoint_on_the_primary() -> None:
    decision = train_run.decide("failed", RECORD, "h1", "old", "/data/runs/old", ["checkpoint-5", "checkpoint-10"],
                                False, True, None, True)
    assert decision["action"] == "refuse" and decision["reason"] == "incomplete"
    assert decision["msg"] == ("/data/runs/old/checkpoint-10 has no trainer_state.json: that save was cut off, and "
                               "GR00T would resume from it and fail. Move it out of /data/runs/old (nothing is "
                               "deleted here) and rerun to resume from checkpoint-5.")


def test_resume_refuses_a_node_that_holds_only_its_own_shards() -> None:
    # Node-local output directories: the primary alone saves the model and trainer state, and
    # GR00T's ranks on the other nodes fail to resume ("No such file ... trainer_state.json").
    other = train_run.decide("failed", RECORD, "h1", "old", "/data/runs/old", ["checkpoint-10"], False, True, None,
                             False)
    assert other["action"] == "refuse" and other["reason"] == "not_shared"
    assert "rsync -a <primary>:/data/runs/old/checkpoint-10/" in other["msg"] and "train_resume: true" in other["msg"]
    # Once the node holds the whole checkpoint, it resumes.
    shared = train_run.decide("failed", RECORD, "h1", "old", "/data/runs/old", ["checkpoint-10"], False, True, 10,
                              False)
    assert shared["action"] == "launch" and shared["resume_step"] == 10


def test_resume_without_checkpoints_is_a_fresh_launch() -> None:
    decision = train_run.decide("absent", {}, "h1", "new", "/data/runs/new", [], False, True)
    assert decision == {"action": "launch", "resume": False, "resume_from": None, "msg": "launch run new"}


def test_checkpoint_step_reads_trainer_state(tmp_path: Path) -> None:
    (tmp_path / "checkpoint-20").mkdir()
    assert train_run.checkpoint_step(str(tmp_path), "checkpoint-20") is None
    (tmp_path / "checkpoint-20" / "trainer_state.json").write_text('{"global_step": 20, "epoch": 0.5}')
    assert train_run.checkpoint_step(str(tmp_path), "checkpoint-20") == 20
    (tmp_path / "checkpoint-20" / "trainer_state.json").write_text('{"global_st')
    assert train_run.checkpoint_step(str(tmp_path), "checkpoint-20") is None


def test_group_resumes_only_from_one_checkpoint() -> None:
    primary = {"action": "launch", "resume": True, "resume_from": "checkpoint-10", "resume_step": 10, "msg": "m"}
    other = {"action": "launch", "resume": True, "resume_from": "checkpoint-10", "resume_step": None, "msg": "m"}
    decision = train_run.group_decision({"n1": primary, "n2": other}, False)
    assert decision == {"action": "launch",
                        "msg": "launching on n1, n2, resuming from checkpoint-10 (global step 10)"}
    behind = dict(other, resume_from="checkpoint-5")
    decision = train_run.group_decision({"n1": primary, "n2": behind}, False)
    assert decision["action"] == "refuse" and "n1 checkpoint-10, n2 checkpoint-5" in decision["msg"]
    fresh = {"action": "launch", "resume": False, "resume_from": None, "msg": "m"}
    decision = train_run.group_decision({"n1": primary, "n2": fresh}, False)
    assert decision["action"] == "refuse" and "n2 none" in decision["msg"]


def test_checkpoints_sorted_by_step(tmp_path: Path) -> None:
    for name in ("checkpoint-1000", "checkpoint-500", "checkpoint-x", "other"):
        (tmp_path / name).mkdir()
    (tmp_path / "checkpoint-7").write_text("a file, not a checkpoint")
    assert train_run.checkpoints(str(tmp_path)) == ["checkpoint-500", "checkpoint-1000"]


def test_pid_alive_ignores_zombies(tmp_path: Path) -> None:
    proc = tmp_path / "proc" / "42"
    proc.mkdir(parents=True)
    (proc / "stat").write_text("42 (python3 x) Z 1 42 42 0 -1")
    assert not train_run.pid_alive(42, str(tmp_path / "proc"))
    (proc / "stat").write_text("42 (python3 x) S 1 42 42 0 -1")
    assert train_run.pid_alive(42, str(tmp_path / "proc"))
    assert not train_run.pid_alive(None)


def test_group_keeps_only_when_every_node_keeps() -> None:
    keep = {"action": "keep", "msg": "run r is alive; nothing to do"}
    launch = {"action": "launch", "resume": False, "msg": "launch run r"}
    assert train_run.group_decision({"a": keep, "b": keep}, False)["action"] == "keep"
    assert train_run.group_decision({"a": launch, "b": launch}, False)["action"] == "launch"
    broken = train_run.group_decision({"a": keep, "b": launch}, False)
    assert broken["action"] == "refuse" and "incomplete" in broken["msg"] and "a keep(s)" in broken["msg"]
    assert train_run.group_decision({"a": keep, "b": launch}, True)["action"] == "launch"


def test_group_with_nodes_outside_the_play_keeps_a_run_and_refuses_a_launch() -> None:
    keep = {"action": "keep", "msg": "run r finished; nothing to do"}
    launch = {"action": "launch", "resume": False, "msg": "launch run r"}
    kept = train_run.group_decision({"n1": keep}, False, missing=["n2"], group="g")
    assert kept["action"] == "keep" and kept["missing"] == ["n2"]
    assert kept["msg"] == "run r finished; nothing to do; n2 of training group g not in this play, their part left as it is"
    refused = train_run.group_decision({"n1": launch}, False, missing=["n3", "n2"], group="g")
    assert refused["action"] == "refuse"
    assert refused["msg"].startswith("n2, n3 of training group g is not in this play")
    assert "--limit" in refused["msg"] and "launching on n1" in refused["msg"]
    # A node's own refusal stays the reason given.
    alive = {"action": "refuse", "reason": "alive", "msg": "alive with another configuration"}
    assert train_run.group_decision({"n1": alive}, False, missing=["n2"], group="g")["msg"] == (
        "On n1: alive with another configuration")
    assert "missing" not in train_run.group_decision({"n1": keep}, False)


def test_group_refusal_names_the_nodes_once() -> None:
    refuse = {"action": "refuse", "reason": "alive", "msg": "alive elsewhere"}
    other = {"action": "refuse", "reason": "checkpoints", "msg": "checkpoints here"}
    decision = train_run.group_decision({"n1": refuse, "n2": refuse, "n3": other}, False)
    assert decision == {"action": "refuse", "msg": "On n1, n2: alive elsewhere On n3: checkpoints here"}


def test_stop_terminates_the_whole_tree(monkeypatch, capsys, tmp_path: Path) -> None:
    # A launch script whose child starts its own session, as torchrun does with its ranks.
    script = tmp_path / "launch.sh"
    script.write_text("#!/bin/bash\necho $$ > {0}\nsetsid sleep 300 &\nwait\n".format(tmp_path / "train.pid"))
    script.chmod(0o755)
    proc = subprocess.Popen([str(script)])
    for dummy in range(50):
        pid = train_run.read_int(str(tmp_path / "train.pid"))
        if pid and len(train_run.process_tree(pid, train_run.process_table())) == 2:
            break
        time.sleep(0.1)
    tree = train_run.process_tree(proc.pid, train_run.process_table())
    assert len(tree) == 2
    result = modrun.run_module(train_stop.main, monkeypatch, capsys,
                               {"pidfile": str(tmp_path / "train.pid"), "timeout": 5})
    proc.wait(timeout=5)
    assert result["changed"] and sorted(result["stopped"]) == sorted(tree) and result["killed"] == []
    assert not any(train_run.pid_alive(p) for p in tree)


def test_stop_kills_what_ignores_term(monkeypatch, capsys, tmp_path: Path) -> None:
    proc = subprocess.Popen(["bash", "-c", "trap '' TERM; echo $$ > {0}; while :; do sleep 0.1; done".format(
        tmp_path / "train.pid")])
    for dummy in range(50):
        if train_run.read_int(str(tmp_path / "train.pid")):
            break
        time.sleep(0.1)
    result = modrun.run_module(train_stop.main, monkeypatch, capsys,
                               {"pidfile": str(tmp_path / "train.pid"), "timeout": 1})
    proc.wait(timeout=5)
    assert proc.pid in result["killed"]


def test_stop_without_run(monkeypatch, capsys, tmp_path: Path) -> None:
    result = modrun.run_module(train_stop.main, monkeypatch, capsys, {"pidfile": str(tmp_path / "none.pid")})
    assert result["changed"] is False and result["stopped"] == []
