# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Rotate one node's checkpoint-N directories of a GR00T run, as its save_total_limit asks.

    train_checkpoints.py OUTPUT_DIR --keep N [--primary] [--ended] [--every S --while-pid PID]

Hugging Face's Trainer removes the checkpoints past save_total_limit on the world's process
zero only (TrainingArguments.should_save; GR00T leaves save_on_each_node off and has no flag for
it). With an output directory on each node's own disk, every other node keeps its ranks'
part of each checkpoint-N (the DeepSpeed ZeRO-2 optimizer shards under global_stepN/ and the RNG
states) until its disk is full. The launch script runs this on every node: every S seconds
while the run is alive, and once when torchrun has returned.

A checkpoint is removed only when it is complete and older than the newest N complete ones:
  * it holds trainer_state.json, which the Trainer writes last, on the primary (a copy of the
    primary's checkpoint on another node holds it too);
  * on another node, a newer checkpoint-M exists (a save starts only after the one before has
    ended on every rank), or the run ended with exit code 0 (--ended).
Anything else may still be written, or is a cut-off save left for an operator: it stays.
Checkpoints are ordered by their step, as GR00T's resume takes the newest; a directory's mtime
changes whenever anything inside it does. Standard library only: it runs with the env's Python.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import time
from typing import Callable, Mapping, Optional

# The names and the marker of module_utils/train_run.py (a unit test keeps them the same).
CHECKPOINT = re.compile(r"^checkpoint-\d+$")
TRAINER_STATE = "trainer_state.json"
# A checkpoint is renamed to this before its files go: a half-removed directory never passes for a
# checkpoint (Hugging Face's own rotation orders checkpoints by mtime, which a removal renews).
REMOVING = ".removing-"


def step(name: str) -> int:
    return int(name.rsplit("-", 1)[1])


def to_remove(checkpoints: Mapping[str, bool], keep: int, primary: bool, ended: bool) -> list[str]:
    """The checkpoint-N names to remove, oldest first.

    checkpoints: each checkpoint-N directory of the node -> whether it holds trainer_state.json.
    keep: save_total_limit; below 1 nothing is removed (the Trainer does not rotate either).
    primary: the node of the world's rank 0. ended: the run ended with exit code 0.
    """
    if keep < 1:
        return []
    names = sorted((name for name in checkpoints if CHECKPOINT.match(name)), key=step)
    newest = len(names) - 1
    complete = [name for index, name in enumerate(names)
                if checkpoints[name] or (not primary and (ended or index < newest))]
    return complete[:-keep]


def scan(output_dir: str) -> dict[str, bool]:
    """checkpoint-N directories of output_dir -> whether each holds trainer_state.json. A link is
    left out: what it points at is not this run's to remove."""
    found: dict[str, bool] = {}
    try:
        with os.scandir(output_dir) as entries:
            for entry in entries:
                if CHECKPOINT.match(entry.name) and entry.is_dir(follow_symlinks=False):
                    found[entry.name] = os.path.isfile(os.path.join(entry.path, TRAINER_STATE))
    except OSError:
        return {}
    return found


def remove(output_dir: str, name: str) -> Optional[str]:
    """Remove one checkpoint; None when it is gone (also when the Trainer removed it first), else
    why not."""
    doomed = os.path.join(output_dir, REMOVING + name)
    try:
        os.rename(os.path.join(output_dir, name), doomed)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return str(exc)
    try:
        shutil.rmtree(doomed)
    except OSError as exc:
        # The renamed directory no longer passes for a checkpoint; the next pass finishes it.
        return "{0} is left ({1})".format(doomed, exc)
    return None


def finish_removals(output_dir: str) -> None:
    """Remove what an interrupted pass renamed and did not remove."""
    try:
        names = [name for name in os.listdir(output_dir) if name.startswith(REMOVING + "checkpoint-")]
    except OSError:
        return
    for name in names:
        try:
            shutil.rmtree(os.path.join(output_dir, name))
        except OSError:
            # Left for the next pass, as a removal cut off half-way is.
            continue


def rotate(output_dir: str, keep: int, primary: bool, ended: bool,
           say: Callable[[str], None] = print) -> bool:
    """One pass over output_dir; says what it removed. False when a checkpoint could not be removed."""
    finish_removals(output_dir)
    found = scan(output_dir)
    doomed = to_remove(found, keep, primary, ended)
    if not doomed:
        return True
    kept = sorted((name for name in found if name not in doomed), key=step)
    ok = True
    for name in doomed:
        problem = remove(output_dir, name)
        if problem:
            ok = False
            say("[checkpoints] could not remove {0}/{1}: {2}".format(output_dir, name, problem))
        else:
            say("[checkpoints] removed {0}/{1} (save_total_limit {2}; this node keeps {3})".format(
                output_dir, name, keep, ", ".join(kept)))
    return ok


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def main(argv: Optional[list[str]] = None) -> int:
    """One pass, or with --every a pass every S seconds while --while-pid lives; 1 when a
    checkpoint could not be removed in the last pass."""
    parser = argparse.ArgumentParser(description="Rotate this node's checkpoint-N directories.")
    parser.add_argument("output_dir")
    parser.add_argument("--keep", type=int, required=True, help="save_total_limit; 0 removes nothing")
    parser.add_argument("--primary", action="store_true", help="this node runs the world's rank 0")
    parser.add_argument("--ended", action="store_true", help="the run ended with exit code 0")
    parser.add_argument("--every", type=float, default=0.0, help="seconds between passes; 0: one pass")
    parser.add_argument("--while-pid", type=int, help="with --every: stop once this process is gone")
    args = parser.parse_args(argv)

    def say(line: str) -> None:
        print(line, flush=True)

    while True:
        ok = rotate(args.output_dir, args.keep, args.primary, args.ended, say)
        if args.every <= 0:
            return 0 if ok else 1
        time.sleep(args.every)
        if args.while_pid and not pid_alive(args.while_pid):
            return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
