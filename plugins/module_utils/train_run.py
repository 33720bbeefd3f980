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
from typing import Optional

CHECKPOINT = re.compile(r"^checkpoint-\d+$")


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


def decide(state: str, record: dict, wanted_hash: str, wanted_run_id: str, output_dir: str,
           found_checkpoints: list[str], restart: bool, resume: bool) -> dict:
    """What a converge does about the run on one node: keep, launch, restart or refuse.

    Rerunning the playbook with the same settings while the run is alive or after it
    finished changes nothing. Checkpoints are never overwritten without train_resume.
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
    resuming = bool(found_checkpoints) and resume
    return {"action": action, "resume": resuming, "msg": "{0} run {1}{2}".format(
        action, wanted_run_id, " from " + found_checkpoints[-1] if resuming else "")}


def group_decision(decisions: dict[str, dict], restart: bool) -> dict:
    """One action for the whole training group: its ranks only work together.

    Any refusal refuses everywhere, before anything changes. A group where some nodes keep
    a live run and others would launch is a broken run: it is restarted only with
    train_restart, since its live ranks wait for peers that are gone.
    """
    refusals: dict[str, list[str]] = {}
    for host, d in sorted(decisions.items()):
        if d["action"] == "refuse":
            refusals.setdefault(d["msg"], []).append(host)
    if refusals:
        return {"action": "refuse", "msg": " ".join(
            "On {0}: {1}".format(", ".join(hosts), msg) for msg, hosts in refusals.items())}
    actions = {d["action"] for d in decisions.values()}
    if actions == {"keep"}:
        return {"action": "keep", "msg": next(iter(decisions.values()))["msg"]}
    kept = sorted(host for host, d in decisions.items() if d["action"] == "keep")
    if kept and not restart:
        return {"action": "refuse", "msg": (
            "The run is incomplete: {0} keep(s) a live or finished run while {1} would launch. Its ranks "
            "cannot rejoin each other. Stop it with playbooks/train_stop.yml and rerun, or set "
            "train_restart: true.").format(", ".join(kept), ", ".join(sorted(set(decisions) - set(kept))))}
    return {"action": "launch", "msg": "launching on {0}".format(", ".join(sorted(decisions)))}
