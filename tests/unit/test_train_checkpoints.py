"""The checkpoint rotation each node runs (roles/train/files/train_checkpoints.py): which
checkpoint-N directories it removes, on the primary and on the other nodes, and what it does
to a real output directory."""
from __future__ import annotations

import importlib.util
import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_collections.ascendops.gr00t.plugins.module_utils import train_run

TOOL = Path(__file__).resolve().parents[2] / "roles" / "train" / "files" / "train_checkpoints.py"
_spec = importlib.util.spec_from_file_location("train_checkpoints", TOOL)
assert _spec and _spec.loader
rotation = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rotation)


def saves(*steps: int, state: tuple[int, ...] = ()) -> dict[str, bool]:
    """checkpoint-<step> -> holds trainer_state.json (the steps in `state`)."""
    return {f"checkpoint-{s}": s in state for s in steps}


# ---------------------------------------------------------------- the rule


@pytest.mark.parametrize("keep", [0, -1])
def test_no_limit_removes_nothing(keep: int) -> None:
    found = saves(10, 20, 30, 40, state=(10, 20, 30, 40))
    assert rotation.to_remove(found, keep, primary=True, ended=True) == []
    assert rotation.to_remove(found, keep, primary=False, ended=True) == []


def test_primary_keeps_the_newest_complete_and_one_being_written() -> None:
    """On the primary a checkpoint is complete once trainer_state.json, written last, is in it."""
    found = saves(10, 20, 30, 40, state=(10, 20, 30))
    assert rotation.to_remove(found, 2, primary=True, ended=False) == ["checkpoint-10"]
    # The Trainer's end does not make a save without its state complete on the primary.
    assert rotation.to_remove(found, 2, primary=True, ended=True) == ["checkpoint-10"]
    assert rotation.to_remove(found, 1, primary=True, ended=False) == ["checkpoint-10", "checkpoint-20"]


def test_primary_leaves_a_cut_off_save_to_the_operator() -> None:
    found = saves(10, 20, 30, 40, state=(10, 30, 40))
    assert rotation.to_remove(found, 1, primary=True, ended=True) == ["checkpoint-10", "checkpoint-30"]


def test_other_node_keeps_its_newest_while_the_run_is_alive() -> None:
    """Another node never holds trainer_state.json: its newest save may still be written until a
    newer one starts or the run ends well."""
    found = saves(10, 20, 30, 40)
    assert rotation.to_remove(found, 2, primary=False, ended=False) == ["checkpoint-10"]
    assert rotation.to_remove(found, 1, primary=False, ended=False) == ["checkpoint-10", "checkpoint-20"]


def test_other_node_after_a_run_that_ended_well_keeps_the_limit() -> None:
    found = saves(10, 20, 30, 40)
    assert rotation.to_remove(found, 2, primary=False, ended=True) == ["checkpoint-10", "checkpoint-20"]
    assert rotation.to_remove(found, 1, primary=False, ended=True) == [
        "checkpoint-10", "checkpoint-20", "checkpoint-30"]


def test_other_node_with_the_primary_s_copy_knows_it_complete() -> None:
    """A resume copies the primary's checkpoint (its trainer_state.json with it) to each node."""
    found = saves(10, 20, 30, state=(30,))
    assert rotation.to_remove(found, 1, primary=False, ended=False) == ["checkpoint-10", "checkpoint-20"]


def test_a_single_save_is_never_removed() -> None:
    for primary, ended, state in itertools.product([True, False], [True, False], [(), (10,)]):
        assert rotation.to_remove(saves(10, state=state), 1, primary, ended) == []


def test_steps_order_numerically_and_other_names_are_ignored() -> None:
    found = dict(saves(200, 1000, 30), **{"checkpoint-final": True, "checkpoint-5.tmp": True, "logs": True})
    assert rotation.to_remove(found, 1, primary=False, ended=True) == ["checkpoint-30", "checkpoint-200"]


def test_every_case_keeps_the_newest_complete_and_what_may_be_written() -> None:
    """Every node state of up to five saves: only complete ones older than the newest `keep`
    complete ones go, the newest complete one always stays, and so many complete ones stay."""
    for count, keep, primary, ended in itertools.product(range(1, 6), range(1, 4), [True, False], [True, False]):
        steps = [10 * (i + 1) for i in range(count)]
        for flags in itertools.product([True, False], repeat=count):
            found = {f"checkpoint-{s}": f for s, f in zip(steps, flags)}
            removed = rotation.to_remove(found, keep, primary, ended)
            complete = [name for i, (name, has_state) in enumerate(found.items())
                        if has_state or (not primary and (ended or i < count - 1))]
            assert all(name in complete for name in removed), (found, keep, primary, ended)
            if complete:
                assert complete[-1] not in removed
            assert len([n for n in complete if n not in removed]) == min(keep, len(complete))
            kept = [n for n in found if n not in removed]
            assert removed == [n for n in found if n in removed]  # oldest first
            assert not removed or all(rotation.step(n) < rotation.step(k) for n in removed
                                      for k in kept if k in complete)


def test_names_and_marker_match_the_run_state_module() -> None:
    """The node's tool and the collection's reader of a run agree on what a checkpoint is."""
    assert rotation.CHECKPOINT.pattern == train_run.CHECKPOINT.pattern
    assert rotation.TRAINER_STATE == train_run.TRAINER_STATE


# ---------------------------------------------------------------- on a directory


def make_saves(out: Path, *steps: int, state: tuple[int, ...] = ()) -> None:
    """checkpoint-<step> as a node's ranks write it: ZeRO-2 shards and RNG states; with
    trainer_state.json for the steps in `state`."""
    for s in steps:
        shard = out / f"checkpoint-{s}" / f"global_step{s}"
        shard.mkdir(parents=True)
        (shard / "bf16_zero_pp_rank_2_mp_rank_00_optim_states.pt").write_bytes(b"x" * 64)
        (out / f"checkpoint-{s}" / "rng_state_2.pth").write_bytes(b"r")
        if s in state:
            (out / f"checkpoint-{s}" / "trainer_state.json").write_text('{"global_step": %d}' % s)


def listing(out: Path) -> list[str]:
    return sorted(os.listdir(out), key=lambda n: (not n.startswith("checkpoint-"), n))


def test_rotate_removes_whole_directories_and_says_so(tmp_path: Path) -> None:
    make_saves(tmp_path, 10, 20, 30, 40)
    (tmp_path / "logs").mkdir()
    said: list[str] = []
    assert rotation.rotate(str(tmp_path), 2, primary=False, ended=False, say=said.append)
    assert listing(tmp_path) == ["checkpoint-20", "checkpoint-30", "checkpoint-40", "logs"]
    assert said == [f"[checkpoints] removed {tmp_path}/checkpoint-10 (save_total_limit 2; this node keeps "
                    "checkpoint-20, checkpoint-30, checkpoint-40)"]
    said.clear()
    assert rotation.rotate(str(tmp_path), 2, primary=False, ended=False, say=said.append)
    assert said == [] and len(listing(tmp_path)) == 4


def test_rotate_leaves_links_and_finishes_an_interrupted_removal(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    out = tmp_path / "out"
    make_saves(elsewhere, 5)
    make_saves(out, 10, 20, 30)
    (out / "checkpoint-5").symlink_to(elsewhere / "checkpoint-5")
    make_saves(out, 1)
    (out / "checkpoint-1").rename(out / ".removing-checkpoint-1")
    assert rotation.rotate(str(out), 1, primary=False, ended=True, say=lambda line: None)
    assert listing(out) == ["checkpoint-30", "checkpoint-5"]
    assert (elsewhere / "checkpoint-5" / "rng_state_2.pth").exists()


def test_rotate_of_a_missing_directory_does_nothing(tmp_path: Path) -> None:
    assert rotation.rotate(str(tmp_path / "absent"), 2, primary=False, ended=True, say=lambda line: None)


def test_remove_of_a_checkpoint_already_gone(tmp_path: Path) -> None:
    """The Trainer on the primary may remove the same old checkpoint first."""
    assert rotation.remove(str(tmp_path), "checkpoint-10") is None


def test_cli_one_pass_and_a_watch_that_ends_with_its_process(tmp_path: Path) -> None:
    make_saves(tmp_path, 10, 20, 30, state=(10, 20, 30))
    res = subprocess.run([sys.executable, str(TOOL), str(tmp_path), "--keep", "2", "--primary"],
                         capture_output=True, text=True, check=False, timeout=30)
    assert res.returncode == 0 and "removed" in res.stdout and "checkpoint-10 " in res.stdout
    assert listing(tmp_path) == ["checkpoint-20", "checkpoint-30"]
    # Another node's watch: its newest save may still be written, the launch script is gone.
    dead = subprocess.Popen(["true"])
    dead.wait()
    make_saves(tmp_path, 40, 50)
    res = subprocess.run([sys.executable, str(TOOL), str(tmp_path), "--keep", "1", "--every", "0.1",
                          "--while-pid", str(dead.pid)],
                         capture_output=True, text=True, check=False, timeout=30)
    assert res.returncode == 0, res.stderr
    assert listing(tmp_path) == ["checkpoint-40", "checkpoint-50"]
