# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""State of a training run on one node, and whether a converge may (re)launch it.

A run leaves on its node: a record (JSON written at launch: run id, output dir, log,
config hash), a pidfile (written by the launch script itself, so both systemd and the
background launch have one) and, once torchrun returns, an exit file with its code.
"""
from __future__ import annotations

import json
import os
import re
import time
from typing import Callable, Iterable, Optional

CHECKPOINT = re.compile(r"^checkpoint-\d+$")
# What the Trainer writes last into a checkpoint, on the world's rank 0 only.
TRAINER_STATE = "trainer_state.json"


def read_text(path: str) -> str:
    """A log's text; empty when it is absent or unreadable (a node that has not logged yet)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""


def read_int(path: str) -> Optional[int]:
    """The integer a pidfile or exit file holds; None when absent or not a number."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read().strip()
    except OSError:
        return None
    return int(text) if re.fullmatch(r"-?\d+", text) else None


def pid_alive(pid: Optional[int], proc: str = "/proc") -> bool:
    """A live, non-zombie process with this pid."""
    if not pid or pid < 1:
        return False
    try:
        with open(os.path.join(proc, str(pid), "stat"), encoding="utf-8") as fh:
            stat = fh.read()
    except OSError:
        return False
    # The state letter follows the parenthesised command name, which may hold spaces.
    return stat.rsplit(")", 1)[-1].split()[0] not in ("Z", "X")


def read_record(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def checkpoints(output_dir: str) -> list[str]:
    """checkpoint-<step> directories, oldest step first."""
    try:
        names = [n for n in os.listdir(output_dir) if CHECKPOINT.match(n)
                 and os.path.isdir(os.path.join(output_dir, n))]
    except OSError:
        return []
    return sorted(names, key=lambda n: int(n.split("-")[1]))


# The launch script records this exit code when it was stopped (SIGTERM/SIGINT).
STOPPED_EXIT_CODE = 143


def run_state(has_record: bool, alive: bool, exit_code: Optional[int], finished_in_log: bool) -> str:
    """running, finished, stopped, failed or absent."""
    if alive:
        return "running"
    if not has_record:
        return "absent"
    if exit_code == 0 or (exit_code is None and finished_in_log):
        return "finished"
    if exit_code == STOPPED_EXIT_CODE:
        return "stopped"
    return "failed"


def process_table(proc: str = "/proc") -> dict[int, int]:
    """pid -> parent pid of every process."""
    table = {}
    for name in os.listdir(proc):
        if not name.isdigit():
            continue
        try:
            with open(os.path.join(proc, name, "stat"), encoding="utf-8") as fh:
                fields = fh.read().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        table[int(name)] = int(fields[1])
    return table


def process_tree(root: int, table: dict[int, int]) -> list[int]:
    """root and all its descendants, parents first. torchrun starts its ranks in new
    sessions, so a process group signal would miss them; the parent links do not."""
    tree, frontier = [], [root] if root in table else []
    while frontier:
        pid = frontier.pop(0)
        tree.append(pid)
        frontier.extend(sorted(child for child, parent in table.items() if parent == pid))
    return tree


def checkpoint_step(output_dir: str, name: str) -> Optional[int]:
    """global_step of a checkpoint's trainer_state.json; None when it has none (an incomplete
    save, or a node other than the world's rank 0)."""
    try:
        with open(os.path.join(output_dir, name, TRAINER_STATE), encoding="utf-8") as handle:
            return int(json.load(handle)["global_step"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def decide(state: str, record: dict, wanted_hash: str, wanted_run_id: str, output_dir: str,
           found_checkpoints: list[str], restart: bool, resume: bool,
           newest_step: Optional[int] = None, primary: bool = True) -> dict:
    """What a converge does about the run on one node: keep, launch, restart or refuse.

    Rerunning the playbook with the same settings while the run is alive or after it
    finished changes nothing. Checkpoints are never overwritten without train_resume. A resume
    takes the newest checkpoint, which must be complete on every node, with the global step of
    its trainer_state.json (newest_step): on the primary node (the world's rank 0) a cut-off
    save, on the others a checkpoint that only the primary holds.
    """
    same = record.get("config_hash") == wanted_hash
    running_id = record.get("run_id", "?")
    if state == "running" and not restart:
        if same:
            return {"action": "keep", "msg": "run {0} is alive; nothing to do".format(running_id)}
        return {"action": "refuse", "reason": "alive", "msg": (
            "A training run ({0}, output {1}) is alive with another configuration than the one requested "
            "(run {2}); it was left running. Stop it with playbooks/train_stop.yml, or set "
            "train_restart: true to stop it and launch the new one.").format(
                running_id, record.get("output_dir", "?"), wanted_run_id)}
    if state == "finished" and same and not restart:
        return {"action": "keep", "msg": "run {0} finished; nothing to do (train_restart: true runs it "
                "again)".format(running_id)}
    if found_checkpoints and not resume:
        return {"action": "refuse", "reason": "checkpoints", "msg": (
            "{0} already holds {1} ({2}); it is never overwritten. Set train_resume: true to continue "
            "from {3}, or set a new train_run_id for a fresh run.").format(
                output_dir, ", ".join(found_checkpoints[-3:]),
                "{0} checkpoint(s)".format(len(found_checkpoints)), found_checkpoints[-1])}
    action = "restart" if state == "running" else "launch"
    if not (found_checkpoints and resume):
        return {"action": action, "resume": False, "resume_from": None,
                "msg": "{0} run {1}".format(action, wanted_run_id)}
    newest = found_checkpoints[-1]
    # Each rank resumes from the checkpoint on its own node, and only the primary saved the
    # model, optimizer and trainer state there.
    if not primary and newest_step is None:
        msg = ("{0}/{1} holds only this node's own shards (no {2}): the model and trainer state of a "
               "checkpoint are saved on the primary node alone, and every rank resumes from its own node's "
               "copy, so this node's ranks would fail. Copy the primary's {1} into {0} on this node (its own "
               "shards stay, e.g. rsync -a <primary>:{0}/{1}/ {0}/{1}/), then rerun with train_resume: true.")
        return {"action": "refuse", "reason": "not_shared", "msg": msg.format(output_dir, newest, TRAINER_STATE)}
    if newest_step is None:
        earlier = " to resume from {0}".format(found_checkpoints[-2]) if len(found_checkpoints) > 1 else ""
        return {"action": "refuse", "reason": "incomplete", "msg": (
            "{0}/{1} has no {2}: that save was cut off, and GR00T would resume from it and fail. Move it "
            "out of {0} (nothing is deleted here) and rerun{3}.").format(output_dir, newest, TRAINER_STATE, earlier)}
    return {"action": action, "resume": True, "resume_from": newest, "resume_step": newest_step,
            "msg": "{0} run {1} from {2}{3}".format(
                action, wanted_run_id, newest, "" if newest_step is None else " (global step {0})".format(newest_step))}


def group_decision(decisions: dict[str, dict], restart: bool, missing: Iterable[str] = (),
                   group: str = "") -> dict:
    """One action for the whole training group: its ranks only work together.

    Any refusal refuses everywhere, before anything changes. A group where some nodes keep
    a live run and others would launch is a broken run: it is restarted only with
    train_restart, since its live ranks wait for peers that are gone. Nodes of the group that
    are not in the play (`missing`: --limit, unreachable, failed earlier) leave a kept run
    alone, and refuse a launch, which needs the ranks of every node.
    """
    decision = nodes_decision(decisions, restart)
    absent = sorted(missing)
    if not absent:
        return decision
    names = ", ".join(absent)
    if decision["action"] == "keep":
        return dict(decision, missing=absent, msg="{0}; {1} of training group {2} not in this play, their part left "
                    "as it is".format(decision["msg"], names, group))
    if decision["action"] == "refuse":
        return decision
    return {"action": "refuse", "msg": (
        "{0} of training group {1} is not in this play (unreachable, failed in an earlier stage, or left out "
        "by --limit), and the run would be launched ({2}): every node of the group runs ranks of the same job. "
        "Rerun with every node of the group, or fix {0} or remove it from the group ({1}).").format(
            names, group, decision["msg"])}


def nodes_decision(decisions: dict[str, dict], restart: bool) -> dict:
    """group_decision for the nodes in the play alone."""
    refusals: dict[str, list[str]] = {}
    for host, d in sorted(decisions.items()):
        if d["action"] == "refuse":
            refusals.setdefault(d["msg"], []).append(host)
    if refusals:
        return {"action": "refuse", "msg": " ".join(
            "On {0}: {1}".format(", ".join(hosts), msg) for msg, hosts in refusals.items())}
    actions = {d["action"] for d in decisions.values()}
    resume_from = {host: d.get("resume_from") for host, d in sorted(decisions.items()) if d["action"] != "keep"}
    if any(resume_from.values()) and len(set(resume_from.values())) > 1:
        return {"action": "refuse", "msg": (
            "A resume needs the same newest checkpoint on every node of the group (each holds its own "
            "shards of it), and they differ: {0}. Move the newer ones aside on the nodes that have them, "
            "or set a new train_run_id for a fresh run.").format(
                ", ".join("{0} {1}".format(host, name or "none") for host, name in resume_from.items()))}
    if actions == {"keep"}:
        return {"action": "keep", "msg": next(iter(decisions.values()))["msg"]}
    kept = sorted(host for host, d in decisions.items() if d["action"] == "keep")
    if kept and not restart:
        return {"action": "refuse", "msg": (
            "The run is incomplete: {0} keep(s) a live or finished run while {1} would launch. Its ranks "
            "cannot rejoin each other. Stop it with playbooks/train_stop.yml and rerun, or set "
            "train_restart: true.").format(", ".join(kept), ", ".join(sorted(set(decisions) - set(kept))))}
    return {"action": "launch", "msg": "launching on {0}{1}".format(", ".join(sorted(decisions)),
                                                                    resume_note(decisions.values()))}


def resume_note(decisions: Iterable[dict]) -> str:
    """", resuming from checkpoint-N (global step S)" for a group that resumes, else ""."""
    resuming = [d for d in decisions if d.get("resume")]
    if not resuming:
        return ""
    step = next((d["resume_step"] for d in resuming if d.get("resume_step") is not None), None)
    at_step = "" if step is None else " (global step {0})".format(step)
    return ", resuming from {0}{1}".format(resuming[0]["resume_from"], at_step)


def wait_over(until: str, status: dict, rank: int) -> bool:
    """Whether a wait for `until` ends at this read of a node's run: any wait when the run is no
    longer running (finished, failed, stopped or absent); a wait for the first step also on the
    master (only it logs steps: the Trainer logs on the world's rank 0) at its first step."""
    if until == "none" or status["state"] != "running":
        return True
    return until == "first_step" and rank == 0 and int(status.get("last_step") or 0) >= 1


def wait_for(read: Callable[[], dict], over: Callable[[dict], bool], seconds: float, poll: float,
             clock: Callable[[], float] = time.monotonic,
             sleep: Callable[[float], None] = time.sleep) -> tuple[dict, int]:
    """Read until `over` says so or `seconds` have gone by, `poll` seconds apart; the last read
    and the whole seconds waited."""
    start = clock()
    while True:
        result = read()
        waited = clock() - start
        if over(result) or waited >= seconds:
            return result, int(waited)
        sleep(max(0.0, min(float(poll), seconds - waited)))


def progress_line(status: dict) -> str:
    """A node's run in a few words for a wait's progress: state, step, loss and ETA."""
    state = status["state"]
    if state != "running" and status.get("exit_code") is not None:
        state = "{0} (exit code {1})".format(state, status["exit_code"])
    if not status.get("last_step"):
        return "{0}, no step logged{1}".format(state, " yet" if status["state"] == "running" else "")
    words = ["{0}, step {1}/{2}".format(state, status["last_step"], status.get("max_steps") or "?")]
    if status.get("loss") is not None:
        words.append("loss {0:.4f}".format(status["loss"]))
    if status.get("eta_seconds") is not None and status["state"] == "running":
        words.append("ETA {0} s".format(int(status["eta_seconds"])))
    return ", ".join(words)


# The wait for the first step goes in rounds (a task file that includes itself), and Ansible
# nests each include a level deeper: past about a hundred levels its iterator recurses too deep.
MAX_HEALTH_ROUNDS = 50


def health_round_seconds(timeout: int, settle: int) -> int:
    """Seconds of one round of the wait for the first step: `settle`, or longer when the timeout
    would need more than MAX_HEALTH_ROUNDS rounds of it."""
    return max(int(settle), -(-int(timeout) // MAX_HEALTH_ROUNDS), 1)


def first_step_wait_goes_on(statuses: list, waited: int, timeout: int) -> bool:
    """Whether the group waits another round, from every node's status (master first): only while
    the master runs without a logged step, every other node still runs, and time is left. A node
    that ended, or whose status is missing (it left the play), ends the wait for all of them."""
    if not statuses or any(not isinstance(s, dict) or s.get("state") != "running" for s in statuses):
        return False
    return int(statuses[0].get("last_step") or 0) < 1 and int(waited) < int(timeout)


def first_step_reached(status: dict, master: bool) -> bool:
    """Healthy after the wait: finished, or running with a step logged where steps are logged."""
    if status["state"] == "finished":
        return True
    return status["state"] == "running" and (not master or status["last_step"] >= 1)


def first_step_report(host: str, status: dict, run_id: str, master: str) -> str:
    """One line for a healthy node: the master's numbers, or where to find them."""
    if host == master:
        numbers = ", step {0}, loss {1}, grad norm {2}".format(status["last_step"], status["loss"], status["grad_norm"])
    else:
        numbers = " (steps are logged on {0})".format(master)
    return "{0}: run {1} is {2}{3}; log {4}".format(host, run_id, status["state"], numbers, status["log"])


def unhealthy_node_lines(host: str, status: dict) -> list[str]:
    """What a node that did not reach the first step shows: state, log, cause and its tail."""
    exit_code = "" if status["exit_code"] is None else ", exit code {0}".format(status["exit_code"])
    lines = ["{0}: state {1}{2},".format(host, status["state"], exit_code),
             "  step {0}, log {1}".format(status["last_step"], status["log"])]
    if status["errors"]:
        lines.append("  error: {0}".format(status["errors"][0]["line"]))
    lines.append("  hint: {0}".format(status["hint"] or "no known error in the log; read it for the first Traceback"))
    lines.append("  last lines:")
    lines.extend("    {0}".format(line) for line in status["last_lines"])
    return lines


def health_verdict(hosts: list[str], statuses: list[dict], run_id: str, timeout: int) -> dict:
    """The launch's verdict for the whole group after the wait for the first step, master first.

    One node that did not get there fails the launch everywhere: the other ranks would wait in
    a collective until HCCL times out.
    """
    master = hosts[0]
    by_host = dict(zip(hosts, statuses))
    unhealthy = [host for host in hosts if not first_step_reached(by_host[host], host == master)]
    reports = {host: first_step_report(host, by_host[host], run_id, master) for host in hosts}
    if not unhealthy:
        return {"ok": True, "msg": "", "reports": reports}
    lines = ["Run {0} did not reach its first training step on {1}".format(run_id, ", ".join(unhealthy)),
             "(waited up to {0} s, train_health_timeout); every node was stopped.".format(timeout)]
    for host in unhealthy:
        lines.extend(unhealthy_node_lines(host, by_host[host]))
    return {"ok": False, "msg": "\n".join(lines), "reports": reports}
