"""A stand-in for torch, torch.distributed and torch.npu, enough to run the patched functions.

The process-group backend, device counts and what the capability query does are set per
test; tensors remember the device they were created on, collectives record the tensors
they were handed.
"""
from __future__ import annotations

import sys
import types
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional


class Device:
    """torch.device: "cuda:3", ("cuda", 3) and "cpu" compare like torch's."""

    def __init__(self, kind: str, index: Optional[int] = None) -> None:
        if ":" in kind:
            kind, number = kind.split(":")
            index = int(number)
        self.type, self.index = kind, index

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = Device(other)
        return isinstance(other, Device) and (self.type, self.index) == (other.type, other.index)

    def __repr__(self) -> str:
        return "device({0!r})".format(self.type if self.index is None else "{0}:{1}".format(self.type, self.index))


class Tensor:
    def __init__(self, values: List[float], device: Device | str | None = None, dtype: Any = None) -> None:
        self.values = list(values)
        self.device = device if isinstance(device, Device) else Device(device or "cpu")

    def __getitem__(self, index: int) -> "Tensor":
        return Tensor([self.values[index]], self.device)

    def item(self) -> float:
        return self.values[0]


@dataclass
class World:
    backend: Optional[str] = "nccl"
    cuda_available: bool = True
    current_device: int = 0
    capability: Callable[[], Any] = lambda: (9, 0)
    with_npu: bool = True
    collectives: List[Tensor] = field(default_factory=list)
    loaders: List[dict] = field(default_factory=list)


def install(monkeypatch: Any, world: World) -> types.ModuleType:
    """Put fake torch modules for `world` into sys.modules (undone by monkeypatch)."""
    torch = types.ModuleType("torch")
    dist = types.ModuleType("torch.distributed")
    cuda = types.ModuleType("torch.cuda")
    utils = types.ModuleType("torch.utils")
    data = types.ModuleType("torch.utils.data")

    torch.device = Device
    torch.float64 = "float64"
    torch.tensor = lambda values, device=None, dtype=None: Tensor(values, device, dtype)
    torch.distributed, torch.cuda, torch.utils, utils.data = dist, cuda, utils, data

    dist.is_available = lambda: True
    dist.is_initialized = lambda: world.backend is not None

    def get_backend():
        if world.backend is None:
            raise RuntimeError("simulated: default process group has not been initialized")
        return world.backend

    dist.get_backend = get_backend
    dist.broadcast = lambda tensor, src=0: world.collectives.append(tensor)
    dist.all_reduce = lambda tensor, op=None: world.collectives.append(tensor)
    dist.ReduceOp = types.SimpleNamespace(MIN="min", SUM="sum")

    cuda.is_available = lambda: world.cuda_available
    cuda.current_device = lambda: world.current_device

    def get_device_capability():
        warnings.warn("simulated: capability query on a device without it")
        return world.capability()

    cuda.get_device_capability = get_device_capability
    data.DataLoader = lambda dataset, **params: world.loaders.append(params) or params

    modules = {"torch": torch, "torch.distributed": dist, "torch.cuda": cuda, "torch.utils": utils,
               "torch.utils.data": data}
    if world.with_npu:
        npu = types.ModuleType("torch.npu")
        npu.current_device = lambda: world.current_device
        torch.npu = npu
        modules["torch.npu"] = npu
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    return torch
