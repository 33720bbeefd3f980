#!/usr/bin/env python3
"""Generate a simulated old-API mx_driving wheel and a simulated DrivingSDK patcher source.

Test doubles, shaped like the real things and saying "simulated" in every file:

  mx_driving-1.0.20260421-<py>-<py>-linux_<arch>.whl   an internal-style mx_driving build with
      the OLD patcher API (PatcherBuilder, default_patcher_builder, ...), a dummy compiled
      `_C.cpython-<ver>-<arch>-linux-gnu.so`, Root-Is-Purelib: false, a correct RECORD;
  DrivingSDK-26.2.0.tar.gz   a source tree with the NEW patcher package (Patcher,
      TransformersNPU, DiffusersNPU, legacy.py and the rest of the framework files).

The unit tests build their fixtures with the same functions (`old_api_wheel`,
`new_patcher_package`, ...). Same arguments, same bytes; unchanged files are not
rewritten. Run after make_artifacts.py: it merges its files into SHA256SUMS.
"""
from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import io
import platform
import sys
import tarfile
import zipfile
from pathlib import Path

OLD_VERSION = "1.0.20260421"
SDK_VERSION = "26.2.0"
PYTHON_TAGS = ("cp310", "cp311")
MANIFEST = "SHA256SUMS"
STAMP = (2026, 4, 21, 0, 0, 0)
HEADER = "# SIMULATED mx_driving (test double of Ascend DrivingSDK); not the vendor's code.\n"

# ---------------------------------------------------------------- the old patcher API

OLD_PATCHER = {
    "__init__.py": HEADER + '''"""Old patcher API: build a patcher from module patches, then apply it as a context."""
__all__ = ["default_patcher_builder", "PatcherBuilder", "Patcher", "Patch", "patch_mmcv_version", "msda",
           "dc", "ddp", "ddp_forward", "optimizer"]

from mx_driving.patcher.distribute import ddp, ddp_forward
from mx_driving.patcher.mmcv import dc, msda, patch_mmcv_version
from mx_driving.patcher.patcher import Patch, Patcher, PatcherBuilder

default_patcher_builder = (
    PatcherBuilder()
    .add_module_patch("mmcv.ops", Patch(msda), Patch(dc))
    .add_module_patch("mmcv.parallel", Patch(ddp), Patch(ddp_forward))
)
''',
    "patcher.py": HEADER + '''class Patch:
    def __init__(self, func, options=None):
        self.func, self.options = func, options or {}


class Patcher:
    def __init__(self, module_patches, blacklist=()):
        self.module_patches, self.blacklist = module_patches, set(blacklist)

    def __enter__(self):
        print("simulated mx_driving patcher: old API applied")
        return self

    def __exit__(self, *exc):
        return False


class PatcherBuilder:
    def __init__(self):
        self.module_patches = {}

    def add_module_patch(self, module, *patches):
        self.module_patches.setdefault(module, []).extend(patches)
        return self

    def build(self):
        return Patcher(self.module_patches)
''',
    "mmcv.py": HEADER + '''def msda(module, options):
    """Simulated: would swap mmcv's deformable attention for the NPU kernel."""


def dc(module, options):
    """Simulated: would swap mmcv's deformable convolution."""


def patch_mmcv_version(expected_version):
    """Simulated: would pin mmcv.__version__ while mmdet imports."""
''',
    "distribute.py": HEADER + '''def ddp(module, options):
    """Simulated: would route mmcv's DDP to the NPU."""


def ddp_forward(module, options):
    """Simulated: would patch DDP's forward."""
''',
}

# ---------------------------------------------------------------- the new patcher API

NEW_PATCHER = {
    "__init__.py": HEADER + '''"""New patcher API: `Patcher().add(TransformersNPU, DiffusersNPU).apply()`."""
from mx_driving.patcher.patcher_logger import patcher_logger
from mx_driving.patcher.reporting import PatchResult, PatchStatus
from mx_driving.patcher.patch import AtomicPatch, Patch
from mx_driving.patcher.patcher import Patcher
from mx_driving.patcher.transformers_patch import TransformersNPU
from mx_driving.patcher.diffusers_patch import DiffusersNPU
from mx_driving.patcher.legacy import LegacyPatcherBuilder, PatcherBuilder, default_patcher_builder

__all__ = ["Patcher", "Patch", "AtomicPatch", "PatchResult", "PatchStatus", "patcher_logger",
           "TransformersNPU", "DiffusersNPU", "LegacyPatcherBuilder", "PatcherBuilder",
           "default_patcher_builder"]
''',
    "patch.py": HEADER + '''class AtomicPatch:
    def __init__(self, target, replacement=None):
        self.target, self.replacement = target, replacement


class Patch:
    name = "patch"
    targets = ()

    @classmethod
    def patches(cls, options=None):
        return [AtomicPatch(t) for t in cls.targets]
''',
    "patcher.py": HEADER + '''from mx_driving.patcher.patcher_logger import patcher_logger
from mx_driving.patcher.reporting import PatchResult, PatchStatus


class Patcher:
    def __init__(self):
        self._classes, self._disabled, self.results = [], set(), []

    def add(self, *classes, options=None):
        self._classes.extend(classes)
        return self

    def disable(self, *names):
        self._disabled.update(getattr(n, "name", n) for n in names)
        return self

    def apply(self):
        for cls in self._classes:
            status = PatchStatus.SKIPPED if cls.name in self._disabled else PatchStatus.APPLIED
            for atomic in cls.patches():
                self.results.append(PatchResult(status, cls.name, atomic.target))
        patcher_logger.summary(self.results)
        return self
''',
    "version.py": HEADER + '''def get_version(package):
    try:
        from importlib.metadata import version
        return version(package)
    except Exception:  # simulated: any failure means "not installed"
        return None
''',
    "reporting.py": HEADER + '''from enum import Enum


class PatchStatus(Enum):
    APPLIED = "applied"
    SKIPPED = "skipped"


class PatchResult:
    def __init__(self, status, name, module):
        self.status, self.name, self.module = status, name, module
''',
    "patcher_logger.py": HEADER + '''import logging


class _PatcherLogger:
    def __init__(self):
        self.log = logging.getLogger("mx_driving.patcher")

    def summary(self, results):
        applied = [r for r in results if r.status.value == "applied"]
        self.log.info("simulated mx_driving patcher: %d of %d patches applied", len(applied), len(results))


patcher_logger = _PatcherLogger()
''',
    "legacy.py": HEADER + '''from mx_driving.patcher.patcher import Patcher


class LegacyPatcherBuilder:
    """Old builder calls, answered by the new Patcher."""

    def __init__(self):
        self._patcher, self.modules = Patcher(), []

    def add_module_patch(self, module, *patches):
        self.modules.append((module, len(patches)))
        return self

    def build(self):
        return self._patcher


PatcherBuilder = LegacyPatcherBuilder
default_patcher_builder = LegacyPatcherBuilder()


def patch_mmcv_version(expected_version):
    """Simulated: would pin mmcv.__version__ while mmdet imports."""
''',
    "transformers_patch.py": HEADER + '''from mx_driving.patcher.patch import Patch


class Qwen3RMSNorm(Patch):
    name = "qwen3_rms_norm"
    targets = ("transformers.models.qwen3.modeling_qwen3.Qwen3RMSNorm.forward",)


class TransformersNPU(Patch):
    name = "transformers_npu"
    targets = Qwen3RMSNorm.targets + ("transformers.models.qwen3.modeling_qwen3.apply_rotary_pos_emb",)
''',
    "diffusers_patch.py": HEADER + '''from mx_driving.patcher.patch import Patch


class DiffusersNPU(Patch):
    name = "diffusers_npu"
    targets = ("diffusers.models.attention_processor.AttnProcessor2_0.__call__",)
''',
    "mmcv_patch.py": HEADER + '''def msda(module, options):
    """Simulated: the old function form of the deformable attention patch."""


def dc(module, options):
    """Simulated: the old function form of the deformable convolution patch."""


def ddp(module, options):
    """Simulated: the old function form of the DDP patch."""
''',
}


# ---------------------------------------------------------------- wheels


def _hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).decode().rstrip("=")


def extension_name(python_tag: str, arch: str) -> str:
    return f"mx_driving/_C.cpython-{python_tag[2:]}-{arch}-linux-gnu.so"


def wheel_bytes(version: str, python_tag: str, arch: str, patcher: dict[str, str], platform_tag: str = "",
                with_extension: bool = True) -> bytes:
    """A small mx_driving wheel: package, dummy `_C`, the given patcher package, dist-info, RECORD."""
    tag = f"{python_tag}-{python_tag}-{platform_tag or 'linux_' + arch}"
    dist = f"mx_driving-{version}.dist-info"
    files: dict[str, bytes] = {
        "mx_driving/__init__.py": (HEADER + "import torch  # noqa: F401\nimport torch_npu  # noqa: F401\n"
                                   "import mx_driving._C  # noqa: F401\n").encode(),
        "mx_driving/ops/__init__.py": (HEADER + "def npu_add_relu(x, y):\n    return (x + y).relu()\n").encode(),
    }
    if with_extension:
        files[extension_name(python_tag, arch)] = (f"SIMULATED mx_driving._C extension for {tag}; not loadable\n"
                                                   .encode() + bytes(range(256)))
    files.update({f"mx_driving/patcher/{name}": text.encode() for name, text in sorted(patcher.items())})
    files[f"{dist}/METADATA"] = (f"Metadata-Version: 2.1\nName: mx_driving\nVersion: {version}\n"
                                 "Summary: SIMULATED mx_driving (test double)\nRequires-Dist: numpy\n\n"
                                 "Simulated DrivingSDK wheel for tests.\n").encode()
    files[f"{dist}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: simulated-mx-driving-build\n"
                              f"Root-Is-Purelib: false\nTag: {tag}\n\n").encode()
    files[f"{dist}/top_level.txt"] = b"mx_driving\n"
    record = "".join(f"{name},{_hash(data)},{len(data)}\n" for name, data in files.items()) + f"{dist}/RECORD,,\n"
    files[f"{dist}/RECORD"] = record.encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, STAMP)
            info.external_attr = 0o644 << 16
            archive.writestr(info, data, zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


def wheel_name(version: str, python_tag: str, arch: str) -> str:
    return f"mx_driving-{version}-{python_tag}-{python_tag}-linux_{arch}.whl"


def old_api_wheel(python_tag: str = "cp310", arch: str = "aarch64") -> bytes:
    return wheel_bytes(OLD_VERSION, python_tag, arch, OLD_PATCHER)


def new_api_wheel(version: str = SDK_VERSION, python_tag: str = "cp310", arch: str = "aarch64") -> bytes:
    return wheel_bytes(version, python_tag, arch, NEW_PATCHER)


# ---------------------------------------------------------------- source tree


def write_source_tree(root: Path, package: dict[str, str] | None = None) -> Path:
    """A DrivingSDK checkout's patcher part under `root`; returns root."""
    top = root / "mx_driving" / "patcher"
    top.mkdir(parents=True, exist_ok=True)
    for name, text in (package or NEW_PATCHER).items():
        (top / name).write_text(text)
    (root / "README.md").write_text("SIMULATED DrivingSDK source tree (test double).\n")
    return root


def source_tarball(package: dict[str, str] | None = None, prefix: str = f"DrivingSDK-{SDK_VERSION}") -> bytes:
    """A gzip tarball of a simulated DrivingSDK tree, byte-identical for the same input."""
    members = {f"{prefix}/README.md": b"SIMULATED DrivingSDK source tree (test double).\n"}
    members.update({f"{prefix}/mx_driving/patcher/{n}": t.encode() for n, t in (package or NEW_PATCHER).items()})
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        for name, data in sorted(members.items()):
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 1776729600
            archive.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), mtime=0)


# ---------------------------------------------------------------- artifact dir


def write_if_changed(path: Path, data: bytes) -> bool:
    changed = not path.is_file() or path.read_bytes() != data
    if changed:
        path.write_bytes(data)
    return changed


def merge_manifest(dest: Path, names: list[str]) -> None:
    """Add or refresh the lines for `names` in SHA256SUMS, keeping every other line."""
    path = dest / MANIFEST
    lines = path.read_text().splitlines() if path.is_file() else []
    kept = [line for line in lines if line.split("  ", 1)[-1] not in names]
    kept += [f"{hashlib.sha256((dest / n).read_bytes()).hexdigest()}  {n}" for n in names]
    write_if_changed(path, ("\n".join(sorted(kept, key=lambda l: l.split("  ", 1)[-1])) + "\n").encode())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dest", type=Path, required=True, help="artifact source directory")
    parser.add_argument("--arch", default={"amd64": "x86_64", "arm64": "aarch64"}.get(
        platform.machine().lower(), platform.machine()))
    parser.add_argument("--python-tag", action="extend", nargs="+", default=[], metavar="TAG",
                        help=f"wheel python tags (default: {' '.join(PYTHON_TAGS)})")
    args = parser.parse_args(argv)
    args.dest.mkdir(parents=True, exist_ok=True)
    outputs = {wheel_name(OLD_VERSION, tag, args.arch): old_api_wheel(tag, args.arch)
               for tag in args.python_tag or PYTHON_TAGS}
    outputs[f"DrivingSDK-{SDK_VERSION}.tar.gz"] = source_tarball()
    for name, data in outputs.items():
        print(f"{'wrote' if write_if_changed(args.dest / name, data) else 'unchanged'} {name}")
    merge_manifest(args.dest, sorted(outputs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
