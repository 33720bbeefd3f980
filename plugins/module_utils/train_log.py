# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Read GR00T training logs: per-step loss, grad norm and step time, throughput, ETA, hints.

One piece of code serves three places: the train_status module (on a node), the
performance script (files/train_fps.py, shipped to the node beside this file) and the
controller report (files/train_report.py). Standard library only.

Hugging Face's Trainer writes two kinds of lines on the world's rank 0:
  * a tqdm bar without description: `` 12%|#2   | 123/1000 [16:18<1:56:10,  7.95s/it]``
    (several updates per line, separated by carriage returns, when written to a file);
  * a dict per logging step: ``{'loss': 1.28, 'grad_norm': 0.9, 'learning_rate': 1e-4, 'epoch': 0.1}``
    and, at the end, ``{'train_runtime': ..., 'train_samples_per_second': ..., ...}``.
A dict belongs to the step of the bar printed right after it: tqdm clears the bar, writes the
dict and redraws the bar at the Trainer's step. The bar before the dict may be a step or more
behind, as tqdm skips redraws that come within 0.1 s of the last one. A dict with no redraw
after it (the log of a live run, or of an attempt that was stopped) takes the last bar's step.
"""
from __future__ import annotations

import ast
import re
from dataclasses import asdict, dataclass, field
from typing import Iterable, Optional

# The Trainer's bar has no description, so the line starts with the percentage; data
# loading bars ("Loading episodes: 40%|...") do not match.
_BAR = re.compile(
    r"^\s*\d+%\|[^|]*\|\s*(?P<step>\d+)/(?P<total>\d+)\s*\[[^\]]*?(?:,\s*(?P<rate>[\d.]+)(?P<unit>s/it|it/s))?\s*\]"
)
_DICT = re.compile(r"\{'(?:loss|train_runtime|grad_norm|learning_rate)'[^{}]*\}")

# Known failures of the manual port and of multi-node runs -> what to do. The first
# pattern that matches a line names the cause; order puts root causes before the
# timeouts they trigger on the other ranks.
KNOWN_ERRORS: list[tuple[str, str, str]] = [
    ("mx_driving_old_api", r"cannot import name 'TransformersNPU'|ImportError:.*TransformersNPU",
     "The installed mx_driving wheel has the old patcher API (no TransformersNPU). Rerun the "
     "mx_driving stage (playbooks/mx_driving.yml) so it installs the patched wheel."),
    ("two_accelerators", r"Two accelerators|accelerators: npu and npu",
     "mx_driving._C was loaded before torch_npu. Launch through the launcher shim (train_launcher), "
     "which imports torch, torch_npu and transfer_to_npu before applying the mx_driving patcher."),
    ("unknown_tag", r"Unknown tag|is not a valid EmbodimentTag|invalid choice.*embodiment|embodiment_tag.*invalid",
     "The embodiment tag is not registered in this GR00T checkout (N1.7 changed the tag set). Set "
     "train_embodiment_tag to a tag of gr00t/data/embodiment_tags.py, e.g. LIBERO_PANDA."),
    ("gated_model", r"\b40[13]\b.*(huggingface|hf\.co|Client Error|Forbidden|Unauthorized)|GatedRepoError|gated repo"
     r"|Cosmos-Reason2.*(40[13]|gated|offline)|LocalEntryNotFoundError|We couldn't connect to 'https://huggingface.co'",
     "A gated Hugging Face model (nvidia/Cosmos-Reason2-2B) was fetched online. Pre-stage it on the node, "
     "point gr00t_vlm_path / train_base_model_path at the local copy and keep HF_HUB_OFFLINE=1."),
    ("cpu_backend", r"No backend type associated with device type cpu",
     "A collective ran on a CPU tensor under HCCL: the GR00T NPU patch (sites 1-3: dist_utils, utils, "
     "sharded_mixture_dataset) is missing. Rerun the gr00t stage."),
    ("forked_npu", r"Cannot re-initialize NPU in forked subprocess|re-init.*NPU.*fork",
     "DataLoader workers were forked after NPU init. Set train_dataloader_num_workers: 0 (or use the "
     "spawn multiprocessing context)."),
    ("pin_memory", r"cannot pin 'npu\w*Type'|cannot pin '.*npu",
     "pin_memory on NPU tensors: the GR00T NPU patch site 4 (trainer.get_train_dataloader) is missing. "
     "Rerun the gr00t stage."),
    ("device_capability", r"get_device_capability.*None|_is_spark_sm121|'NoneType' object is not subscriptable.*capab",
     "torch.cuda.get_device_capability returns None on NPU: GR00T NPU patch site 5 (dit._is_spark_sm121) "
     "is missing. Rerun the gr00t stage."),
    ("npu_oom", r"NPU out of memory|out of memory|EL0004|Tried to allocate",
     "The NPU ran out of HBM. Lower train_global_batch_size (it must stay divisible by the world size), "
     "keep PYTORCH_NPU_ALLOC_CONF=expandable_segments:True, and check `npu-smi info` for other processes."),
    ("port_in_use", r"Address already in use|EADDRINUSE",
     "The rendezvous port is taken on the master node. Stop the other run (playbooks/train_stop.yml) or "
     "set train_master_port to a free port."),
    ("hccl_timeout", r"HCCL.*(time ?out|timed out)|EI0006|EI0002|hcclCommInitRootInfo.*fail|Connect.*timed out"
     r"|DistNetworkError|TCPStore.*(timed out|Connection refused)|Socket Timeout|connect\(\) timed out",
     "Ranks could not connect. Check that every node reaches the master address and port, that all nodes "
     "use one NIC (train_hccl_if_ip or train_hccl_socket_ifname), the device NICs (`hccn_tool -i N -link -g`), "
     "and raise train_hccl_connect_timeout if nodes start far apart. A rank that died first on another node "
     "also causes this: read that node's log."),
    ("no_torch_npu", r"No module named 'torch_npu'|No module named 'mx_driving'",
     "The training env lacks torch_npu or mx_driving. Rerun the python_env and mx_driving stages, and check "
     "train_python points at the env's python."),
]


@dataclass
class Step:
    step: int
    loss: Optional[float] = None
    grad_norm: Optional[float] = None
    learning_rate: Optional[float] = None
    epoch: Optional[float] = None
    step_time: Optional[float] = None


@dataclass
class TrainLog:
    steps: dict[int, Step] = field(default_factory=dict)
    max_steps: Optional[int] = None
    finished: bool = False

    def step(self, number: int) -> Step:
        return self.steps.setdefault(number, Step(number))

    @property
    def last_step(self) -> int:
        return max(self.steps, default=0)

    def ordered(self) -> list[Step]:
        return [self.steps[k] for k in sorted(self.steps)]

    def last_with(self, attr: str) -> Optional[float]:
        for entry in reversed(self.ordered()):
            value = getattr(entry, attr)
            if value is not None:
                return value
        return None


# The launch script starts every attempt with this; earlier attempts in the same log are
# history, not the state of the run.
LAUNCH_MARKER = "[launch] start "


def current_attempt(text: str) -> str:
    """The part of a log written by the last launch."""
    start = text.rfind("\n" + LAUNCH_MARKER)
    if start >= 0:
        return text[start + 1:]
    return text


def split_lines(text: str) -> list[str]:
    """Lines as a terminal shows them: tqdm's carriage returns start a new line too."""
    return [line for line in re.split(r"[\r\n]+", text) if line.strip()]


def _as_float(value: object) -> Optional[float]:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def _record(log: TrainLog, number: int, values: dict) -> None:
    """The values of one logging dict, at its step (none before the first step)."""
    if number <= 0:
        return
    entry = log.step(number)
    for key in ("loss", "grad_norm", "learning_rate", "epoch"):
        if key in values:
            setattr(entry, key, _as_float(values[key]))


def parse_log(text: str, max_steps: Optional[int] = None) -> TrainLog:
    """Steps of a Trainer log. With max_steps, only bars of that length count as training."""
    log = TrainLog(max_steps=max_steps)
    current = 0
    waiting: list[dict] = []  # dicts whose bar redraw has not come yet
    for line in split_lines(text):
        progress = _BAR.match(line)
        if progress:
            total = int(progress["total"])
            if max_steps is not None and total != max_steps:
                continue
            log.max_steps = total
            # A bar behind the last one starts another attempt: it is no redraw.
            step = int(progress["step"])
            for values in waiting:
                _record(log, max(step, current), values)
            waiting = []
            current = step
            if current == 0:
                continue
            entry = log.step(current)
            if progress["rate"] and float(progress["rate"]) > 0:
                rate = float(progress["rate"])
                entry.step_time = rate if progress["unit"] == "s/it" else 1.0 / rate
            continue
        for match in _DICT.finditer(line):
            try:
                values = ast.literal_eval(match.group(0))
            except (ValueError, SyntaxError):
                continue
            if "train_runtime" in values:
                log.finished = True
            elif "step" in values:
                _record(log, int(values["step"] or 0), values)
            else:
                waiting.append(values)
    for values in waiting:
        _record(log, current, values)
    return log


def mean_step_time(log: TrainLog, warmup_steps: int) -> Optional[float]:
    """Mean step time of the steps after the warm-up; None before any such step is timed."""
    times = [s.step_time for s in log.ordered() if s.step > warmup_steps and s.step_time is not None]
    return sum(times) / len(times) if times else None


def samples_per_second(log: TrainLog, global_batch_size: int, warmup_steps: int) -> Optional[float]:
    """FPS as the port measured it: global batch / mean step time after the warm-up."""
    mean = mean_step_time(log, warmup_steps)
    return global_batch_size / mean if mean and global_batch_size else None


def eta_seconds(log: TrainLog, warmup_steps: int) -> Optional[float]:
    """Seconds left at the post-warm-up pace (all timed steps while still warming up)."""
    if log.max_steps is None:
        return None
    mean = mean_step_time(log, warmup_steps) or mean_step_time(log, 0)
    if mean is None:
        return None
    return max(log.max_steps - log.last_step, 0) * mean


def match_hints(lines: Iterable[str]) -> list[dict[str, str]]:
    """Known errors found in the lines, in the order of their first appearance."""
    found: dict[str, dict[str, str]] = {}
    for line in lines:
        for key, pattern, hint in KNOWN_ERRORS:
            if key not in found and re.search(pattern, line, re.IGNORECASE):
                found[key] = {"error": key, "line": line.strip()[:300], "hint": hint}
    return list(found.values())


def summarize(text: str, global_batch_size: int, warmup_steps: int, max_steps: Optional[int] = None,
              tail: int = 20) -> dict:
    """Everything status and reports show about the last attempt in one log, JSON-ready."""
    text = current_attempt(text)
    log = parse_log(text, max_steps)
    lines = split_lines(text)
    hints = match_hints(lines)
    mean = mean_step_time(log, warmup_steps)
    last = log.steps.get(log.last_step)
    return {
        "last_step": log.last_step,
        "max_steps": log.max_steps,
        "finished": log.finished,
        "loss": log.last_with("loss"),
        "grad_norm": log.last_with("grad_norm"),
        "step_time": last.step_time if last else None,
        "mean_step_time": mean,
        "warmup_steps": warmup_steps,
        "global_batch_size": global_batch_size,
        "samples_per_second": samples_per_second(log, global_batch_size, warmup_steps),
        "eta_seconds": eta_seconds(log, warmup_steps),
        "hint": hints[0]["hint"] if hints else None,
        "errors": hints,
        "last_lines": lines[-tail:],
        "series": [asdict(s) for s in log.ordered()],
    }
