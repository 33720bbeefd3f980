"""SIMULATION launcher (test double): runs NVIDIA's real GR00T trainer on CPU ranks over gloo.

It stands where the collection's NPU launcher shim stands on a 910B node. torchrun starts it as

    gr00t_cpu_launch.py <path/to/gr00t/experiment/launch_finetune.py> <trainer args...>

and it runs the entry point like a script (runpy, as ``__main__``, arguments untouched) after
doing only what CPU ranks need, which it announces with a SIMULATION line per rank:

* a gloo process group from torchrun's environment, made first: GR00T's own
  ``_init_distributed_process_group()`` would use nccl and ``torch.cuda.set_device``, and
  returns early when a group exists;
* the env's torch_npu hidden: on a simulated node it is the double, which computes nothing.
  transformers, accelerate and DeepSpeed each take their NPU paths when it imports (flash
  attention through ``torch_npu.npu_fusion_attention``, the ``npu`` device), so the ranks see a
  node without it, as the real trainer sees a CPU machine;
* bf16 and tf32 off: GR00T's TrainingConfig turns both on and neither is on its command line
  (a CPU has no tf32; bf16 autocast there is slow). Set on every ``TrainingArguments`` just
  before its own ``__post_init__`` checks, so no GR00T code is touched;
* ``ACCELERATE_TORCH_DEVICE=cpu``: a distributed CPU rank's device is otherwise ``cpu:0``, and a
  resume fails to load optimizer.pt onto it ("don't know how to restore data location of
  torch.storage.UntypedStorage (tagged with cpu:0)", torch 2.7 maps only "cpu");
* data parallelism, one of two ways:
  - default: ``ACCELERATE_USE_CPU=true``. Without it accelerate finds no accelerator and makes
    every rank a world of its own, so the ranks train alone with no gradient sync. With it the
    Trainer wraps the model in DDP over the gloo group. When GR00T asks for DeepSpeed
    (``--num_gpus`` > 1) its ZeRO-2 config is still validated (deepspeed must import) but not
    used: accelerate's CPU setting comes first.
  - ``SIM_DEEPSPEED=1``: DeepSpeed ZeRO-2 as on the NPUs, with ``DS_ACCELERATOR=cpu`` and the
    backend of the existing group handed to accelerate, which knows none for a CPU and would
    otherwise count one process and fail DeepSpeed's batch-size check. DeepSpeed's CPU
    accelerator compiles its shared-memory op at the first start (needs a C++ compiler).

Variables already set in the environment win. Everything else (the product's scripts, env
file, torchrun, the checkout and its DeepSpeed choice, health gate, status, stop) is left alone.
"""
from __future__ import annotations

import os
import runpy
import sys

DEEPSPEED = os.environ.get("SIM_DEEPSPEED", "0") == "1"


def cpu_environment() -> None:
    """Tell accelerate (and DeepSpeed) these are CPU ranks of one job, before they import."""
    wanted = {"ACCELERATE_TORCH_DEVICE": "cpu"}
    wanted.update({"DS_ACCELERATOR": "cpu"} if DEEPSPEED else {"ACCELERATE_USE_CPU": "true"})
    for name, value in wanted.items():
        os.environ.setdefault(name, value)


def hide_torch_npu() -> None:
    """Make ``import torch_npu`` fail and ``importlib.util.find_spec("torch_npu")`` return None,
    the test transformers, accelerate and DeepSpeed use to look for an NPU."""
    sys.modules["torch_npu"] = None  # type: ignore[assignment]


def no_bf16_tf32() -> None:
    """Turn bf16 and tf32 off on every TrainingArguments, before its own checks run."""
    import transformers

    post_init = transformers.TrainingArguments.__post_init__

    def cpu_post_init(self) -> None:
        self.bf16 = False
        self.tf32 = False
        post_init(self)

    transformers.TrainingArguments.__post_init__ = cpu_post_init


def accelerate_backend_from_group() -> None:
    """For DeepSpeed on a CPU: accelerate picks a backend by accelerator and finds none; name
    the existing process group's backend so it counts every rank."""
    import torch.distributed as dist
    from accelerate.state import PartialState

    prepare = PartialState._prepare_backend

    def cpu_prepare(self, cpu: bool = False, sagemaker_dp: bool = False, backend: str | None = None):
        found, kind = prepare(self, cpu, sagemaker_dp, backend)
        return (dist.get_backend() if found is None and dist.is_initialized() else found), kind

    PartialState._prepare_backend = cpu_prepare


def gloo_group() -> tuple[int, int]:
    """The process group from torchrun's environment, on gloo; GR00T keeps it."""
    import torch.distributed as dist

    if not dist.is_initialized():
        dist.init_process_group(backend="gloo")
    return dist.get_rank(), dist.get_world_size()


def main(argv: list[str]) -> None:
    if len(argv) < 2:
        sys.exit(f"usage: {argv[0]} <path/to/gr00t/experiment/launch_finetune.py> [trainer args...]")
    cpu_environment()
    hide_torch_npu()
    no_bf16_tf32()
    rank, world = gloo_group()
    if DEEPSPEED:
        accelerate_backend_from_group()
    parallel = ("DeepSpeed on the CPU accelerator" if DEEPSPEED
                else "DDP (ACCELERATE_USE_CPU=true; a DeepSpeed config from GR00T is not used)")
    print(f"[gr00t_cpu_launch] SIMULATION (CPU, gloo): rank {rank} of {world}, {parallel}, bf16 and tf32 "
          "off; no NPU, torch_npu or mx_driving", flush=True)
    # As `python <entry>` would: its arguments, and its directory first on the path.
    sys.argv = argv[1:]
    sys.path[0] = os.path.dirname(os.path.abspath(argv[1]))
    runpy.run_path(argv[1], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv)
