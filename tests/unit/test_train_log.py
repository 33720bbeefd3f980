"""Tests of the training log parser, the FPS math, the hints and the controller report."""
from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_collections.ascendops.gr00t.plugins.module_utils import train_log
from ansible_collections.ascendops.gr00t.plugins.modules import train_report

REPO = Path(__file__).resolve().parents[2]
KNOWN_LOG = REPO / "tests" / "fixtures" / "train" / "known.log"


@pytest.fixture
def known() -> str:
    return KNOWN_LOG.read_text()


def test_steps_losses_and_times(known: str) -> None:
    log = train_log.parse_log(known)
    assert log.max_steps == 8
    assert sorted(log.steps) == [1, 2, 3, 4, 5, 6, 7]
    assert [(s.step, s.loss) for s in log.ordered() if s.loss is not None] == [
        (2, 1.28), (4, 0.91), (6, 0.47), (7, 0.12)]
    assert log.steps[6].grad_norm == 0.52
    assert log.steps[7].step_time == 8.0  # 0.125 it/s
    assert log.steps[1].step_time == 14.02
    assert not log.finished


def test_fps_after_warmup_is_exact(known: str) -> None:
    log = train_log.parse_log(known)
    # Steps 3..7 take 8.0, 8.0, 7.5, 8.5, 8.0 s: mean 8.0 s, 640 samples per step.
    assert train_log.mean_step_time(log, 2) == 8.0
    assert train_log.samples_per_second(log, 640, 2) == 80.0
    # Counting the slow warm-up steps would understate the throughput.
    assert train_log.samples_per_second(log, 640, 0) < 80.0
    assert train_log.eta_seconds(log, 2) == 8.0


def test_no_timed_step_after_warmup(known: str) -> None:
    log = train_log.parse_log(known)
    assert train_log.samples_per_second(log, 640, 7) is None


# Hugging Face's Trainer (transformers 4.57, tqdm 4.70) writing to a file, at steps faster than
# tqdm's 0.1 s between redraws: the bar before each dict still shows step 9 or 18; tqdm clears
# it, the dict of step 10 or 20 follows, and the bar is drawn again at the Trainer's step.
FAST_STEPS = (
    "  0%|          | 0/40 [00:00<?, ?it/s]\r  8%|▊         | 3/40 [00:00<00:01, 24.48it/s]"
    "\r 15%|█▌        | 6/40 [00:00<00:01, 27.36it/s]\r 22%|██▎       | 9/40 [00:00<00:01, 28.11it/s]"
    "\r                                              \r{'loss': 3.2542, 'grad_norm': 5.307750225067139, "
    "'learning_rate': 0.007750000000000001, 'epoch': 0.02}\n"
    "\r 25%|██▌       | 10/40 [00:00<00:01, 28.11it/s]\r 30%|███       | 12/40 [00:00<00:00, 28.67it/s]"
    "\r 38%|███▊      | 15/40 [00:00<00:00, 29.11it/s]"
    "\r 45%|████▌     | 18/40 [00:00<00:00, 28.71it/s]"
    "\r                                               \r{'loss': 2.6012, 'grad_norm': 3.269930124282837, "
    "'learning_rate': 0.00525, 'epoch': 0.04}\n"
    "\r 50%|█████     | 20/40 [00:00<00:00, 28.71it/s]"
)


def test_a_dict_takes_the_step_of_the_redraw_after_it() -> None:
    log = train_log.parse_log(FAST_STEPS, max_steps=40)
    assert [(s.step, s.loss) for s in log.ordered() if s.loss is not None] == [(10, 3.2542), (20, 2.6012)]
    assert log.steps[20].grad_norm == 3.269930124282837 and log.steps[18].loss is None
    assert log.steps[10].step_time == pytest.approx(1 / 28.11)
    series = train_log.summarize(FAST_STEPS, 8, 0)["series"]
    assert [(s["step"], s["loss"]) for s in series if s["loss"] is not None] == [(10, 3.2542), (20, 2.6012)]


def test_a_dict_the_log_ends_on_takes_the_last_bar() -> None:
    # A live run's log read between the dict and its redraw.
    live = FAST_STEPS[:FAST_STEPS.rindex("\r 50%")]
    log = train_log.parse_log(live)
    assert [(s.step, s.loss) for s in log.ordered() if s.loss is not None] == [(10, 3.2542), (18, 2.6012)]
    assert log.last_step == 18


def test_a_dict_before_a_relaunch_keeps_the_last_bar() -> None:
    # The attempt was stopped before the redraw; the next one starts its bar at 0.
    stopped = FAST_STEPS[:FAST_STEPS.rindex("\r 50%")]
    text = (stopped + "[launch] start\n  0%|          | 0/40 [00:00<?, ?it/s]"
            "\r 55%|█████▌    | 22/40 [00:01<00:09, 1.9it/s]")
    log = train_log.parse_log(text)
    assert [(s.step, s.loss) for s in log.ordered() if s.loss is not None] == [(10, 3.2542), (18, 2.6012)]
    assert log.last_step == 22


def test_a_dict_that_names_its_step_keeps_it() -> None:
    text = " 25%|##5       | 2/8 [00:25<01:08, 11.20s/it]\n{'loss': 0.5, 'step': 1}\n"
    log = train_log.parse_log(text)
    assert log.steps[1].loss == 0.5 and log.steps[2].loss is None


def test_other_bars_are_not_training(known: str) -> None:
    # The data loading bar (1693 items) must not be taken for training steps.
    log = train_log.parse_log(known, max_steps=1693)
    assert log.steps == {} or all(s.step_time is None for s in log.ordered())


def test_finished_marker() -> None:
    text = " 100%|##########| 2/2 [00:02<00:00, 1.00s/it]\n{'train_runtime': 2.1, 'train_samples_per_second': 9.1}\n"
    summary = train_log.summarize(text, 8, 0)
    assert summary["finished"] and summary["last_step"] == 2


def test_summary_fields(known: str) -> None:
    summary = train_log.summarize(known, 640, 2, tail=3)
    assert summary["last_step"] == 7
    assert summary["loss"] == 0.12 and summary["grad_norm"] == 0.31
    assert summary["samples_per_second"] == 80.0
    assert summary["step_time"] == 8.0
    assert summary["hint"] is None
    assert len(summary["last_lines"]) == 3


@pytest.mark.parametrize("line,key", [
    ("ImportError: cannot import name 'TransformersNPU' from 'mx_driving.patcher'", "mx_driving_old_api"),
    ("RuntimeError: Two accelerators: npu and npu", "two_accelerators"),
    ("ValueError: Unknown tag: fourier_gr1", "unknown_tag"),
    ("requests.exceptions.HTTPError: 403 Client Error: Forbidden for url: https://huggingface.co/nvidia/"
     "Cosmos-Reason2-2B/resolve/main/config.json", "gated_model"),
    ("huggingface_hub.errors.GatedRepoError: 401 Client Error", "gated_model"),
    ("RuntimeError: No backend type associated with device type cpu", "cpu_backend"),
    ("RuntimeError: Cannot re-initialize NPU in forked subprocess.", "forked_npu"),
    ("RuntimeError: cannot pin 'npuFloatType' only dense CPU tensors can be pinned", "pin_memory"),
    ("TypeError: 'NoneType' object is not subscriptable (get_device_capability returned None)",
     "device_capability"),
    ("RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB", "npu_oom"),
    ("EI0006: Getting socket times out. Reason: HCCL connect timeout", "hccl_timeout"),
    ("torch.distributed.DistNetworkError: The client socket has timed out", "hccl_timeout"),
    ("RuntimeError: The server socket has failed to listen on any local network address. "
     "port: 29500, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use", "port_in_use"),
])
def test_known_errors(line: str, key: str) -> None:
    hints = train_log.match_hints(["some noise", line])
    assert hints and hints[0]["error"] == key, hints
    assert hints[0]["hint"]


def test_root_cause_before_timeouts() -> None:
    hints = train_log.match_hints([
        "RuntimeError: Cannot re-initialize NPU in forked subprocess.",
        "EI0006: HCCL connect timeout",
    ])
    assert [h["error"] for h in hints] == ["forked_npu", "hccl_timeout"]


def installed_tools(tmp_path: Path) -> Path:
    """train_fps.py and train_log.py side by side, as the train role installs them on a node."""
    shutil.copy(REPO / "roles" / "train" / "files" / "train_fps.py", tmp_path)
    shutil.copy(REPO / "plugins" / "module_utils" / "train_log.py", tmp_path)
    return tmp_path / "train_fps.py"


def test_cli_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "perf.json"
    res = subprocess.run([sys.executable, str(installed_tools(tmp_path)), str(KNOWN_LOG),
                          "--global-batch-size", "640", "--warmup-steps", "2", "--json", str(out)],
                         capture_output=True, text=True, check=True)
    assert "FPS: 80.00 samples/s" in res.stdout
    assert json.loads(out.read_text())["samples_per_second"] == 80.0


def test_cli_without_a_timed_step(tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, str(installed_tools(tmp_path)), str(KNOWN_LOG),
                          "--global-batch-size", "640", "--warmup-steps", "7"],
                         capture_output=True, text=True, check=False)
    assert res.returncode == 1 and "FPS: no timed step after the 7 warm-up steps" in res.stdout


def test_report_png_and_json(tmp_path: Path) -> None:
    nodes = train_report.summaries({"node1": str(KNOWN_LOG), "node2": str(tmp_path / "missing.log")}, 640, 2, None)
    assert nodes["node1"]["samples_per_second"] == 80.0
    assert nodes["node2"]["last_step"] == 0
    data = train_report.render_png(nodes, "GR00T run r")
    assert data == train_report.render_png(nodes, "GR00T run r")
    png = tmp_path / "train.png"
    assert train_report.differs(str(png), data)
    train_report.write(str(png), data)
    assert not train_report.differs(str(png), data)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width > 100 and height > 100 and len(data) > 5000


def test_only_the_last_attempt_counts(known: str) -> None:
    earlier = ("[launch] start 2026-01-01T00:00:00Z run r node_rank 0/1\nRuntimeError: NPU out of memory\n"
               "[launch] exit 2026-01-01T00:01:00Z torchrun exited with 1\n")
    text = earlier + "[launch] start 2026-01-01T01:00:00Z run r node_rank 0/1\n" + known + "[launch] exit x\n"
    summary = train_log.summarize(text, 640, 2)
    assert summary["hint"] is None and summary["samples_per_second"] == 80.0
    assert train_log.summarize(earlier, 640, 2)["errors"][0]["error"] == "npu_oom"
