#!/usr/bin/env python3
"""Generate the Python side of the simulated artifact source: a Miniforge installer and a wheelhouse.

Test doubles only, written into the artifact directory next to the vendor .run files
(tests/sim/make_artifacts.py lists everything, these included, in SHA256SUMS afterwards):

  Miniforge3-<ver>-Linux-<arch>.sh   a SIMULATED Miniforge installer: the real command line
                                     (-b -p PREFIX -u -f -h), messages and exit codes; it lays
                                     out a prefix with bin/conda, condabin/conda, conda-meta/
                                     and etc/profile.d/conda.sh. The simulated conda answers
                                     --version, info --json, env list --json, create, env
                                     remove and run; its environments are venvs of the node's
                                     python3, so the Python version it can create is that one.
  wheels/torch-2.7.1-*.whl, wheels/torch_npu-2.7.1.post2-*.whl, wheels/deepspeed-0.18.4-*.whl
                                     SIMULATED pure-Python stand-ins with the surface the smoke
                                     test and the launcher use; torch_npu reads the NPU count
                                     from /etc/npu-sim/state.json like the simulated npu-smi.
  wheels/<real wheels>               real, lightweight packages (transformers, diffusers, CANN's
                                     Python prerequisites and their dependencies) downloaded
                                     from PyPI once into a controller cache (--cache).

Installer knobs, same convention as the vendor doubles: ASCEND_SIM_FAIL_AT=after_files with
ASCEND_SIM_FAIL_MODE=exit|kill, or a line `miniforge[:once][:kill]` in
$ASCEND_SIM_SYSROOT/etc/npu-sim/fail_installer, stops the install after the package cache is
unpacked and before conda is linked into the prefix (a partial prefix, no working conda).

Same inputs, same bytes; unchanged files are not rewritten.
"""
from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import io
import platform
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from make_artifacts import normalize_arch, write_if_changed

REPO = Path(__file__).resolve().parents[2]
MINIFORGE_VERSION = "24.3.0-0"
PYTHON_VERSION = "3.11"
ZIP_DATE = (1980, 1, 1, 0, 0, 0)

# Real wheels for the simulated nodes (Debian 12, CPython 3.11), pinned so the wheelhouse is
# the same on every machine: the role's pins plus the versions their dependencies resolved to.
REAL_WHEELS = (
    "transformers==4.57.3", "diffusers==0.35.1", "protobuf==3.20.3",
    "absl-py==2.5.1", "attrs==26.1.0", "certifi==2026.10.19.post1", "cffi==2.1.1",
    "charset-normalizer==3.5.3", "cython==3.3.1", "decorator==5.3.1", "filelock==4.3.1",
    "fsspec==2026.9.0", "hf-xet==1.8.0", "huggingface-hub==0.36.2", "idna==3.20",
    "importlib-metadata==10.2.0", "lazy-importer==0.1.0", "mpmath==1.3.0", "numpy==2.4.6",
    "packaging==26.4", "pathlib2==2.3.7.post1", "pillow==13.0.0", "psutil==7.2.2",
    "pycparser==3.12", "pyyaml==6.0.4", "regex==2026.11.19", "requests==2.34.2",
    "safetensors==0.8.0", "scipy==1.17.1", "six==1.17.0", "sympy==1.14.0",
    "tokenizers==0.22.2", "tqdm==4.70.1", "typing-extensions==4.16.0", "urllib3==2.8.0",
    "zipp==4.1.2", "setuptools==80.9.0", "wheel==0.45.1",
)
# pip goes into the simulated installer's package cache: conda puts pip in every env.
PIP_WHEEL = "pip==26.3"

# ---------------------------------------------------------------- stand-in wheels

TORCH_INIT = '''"""SIMULATED torch 2.7.1 (test double): tensors that only know their device."""
__version__ = "2.7.1"
SIMULATED = True


class device:
    def __init__(self, spec="cpu"):
        spec = str(spec)
        self.type, _, index = spec.partition(":")
        self.index = int(index) if index else None

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    __repr__ = __str__


_backends = {}


class Tensor:
    def __init__(self, values, dev="cpu"):
        self.values = [float(v) for v in values]
        self.device = device(dev)

    def to(self, dev):
        target = device(dev)
        check = _backends.get(target.type)
        if target.type != "cpu":
            if check is None:
                raise RuntimeError(f"simulated torch: no backend for device type {target.type!r}")
            check(target)
        return Tensor(self.values, str(target))

    def sum(self):
        return Tensor([sum(self.values)], str(self.device))

    def item(self):
        return self.values[0]

    def tolist(self):
        return list(self.values)


def tensor(values, device="cpu"):
    return Tensor(values).to(device)


def ones(n, device="cpu"):
    return tensor([1.0] * int(n), device)


def zeros(n, device="cpu"):
    return tensor([0.0] * int(n), device)


class _Cuda:
    @staticmethod
    def is_available():
        return False

    @staticmethod
    def device_count():
        return 0


cuda = _Cuda()
'''

TORCH_NPU_INIT = '''"""SIMULATED torch_npu 2.7.1.post2 (test double).

Importing it registers `torch.npu` and the `npu` device type, as the real adapter does. The
NPUs are the simulated node's: /etc/npu-sim/state.json ($NPU_SIM_STATE), 8 without one.
With the simulated torch it plugs into that torch's device table; with the real torch it
names torch's PrivateUse1 backend "npu", as the adapter does, and a tensor moved to a
simulated NPU stays in CPU memory while its .device says npu:N. Nothing here computes on an NPU.
"""
import json
import os

import torch

__version__ = "2.7.1.post2"
SIMULATED = True
_STATE = os.environ.get("NPU_SIM_STATE", "/etc/npu-sim/state.json")


def _state():
    try:
        with open(_STATE) as handle:
            return json.load(handle)
    except FileNotFoundError:
        return {}


class _Npu:
    _current = 0

    def device_count(self):
        state = _state()
        if state.get("fail"):
            return 0
        devices = state.get("devices")
        return 8 if devices is None else len(devices)

    def is_available(self):
        return self.device_count() > 0

    def current_device(self):
        return self._current

    def set_device(self, dev):
        index = torch.device(dev).index if not isinstance(dev, int) else dev
        self._check(torch.device(f"npu:{index or 0}"))
        self._current = index or 0

    def get_device_name(self, index=0):
        return f"Ascend{_state().get('product', '910B3')} (simulated)"

    def _check(self, dev):
        count = self.device_count()
        index = dev.index if dev.index is not None else self._current
        if not 0 <= index < count:
            raise RuntimeError(f"simulated torch_npu: invalid device npu:{index}, {count} NPU(s) visible")


npu = _Npu()
torch.npu = npu


def _needs_an_npu(name):
    def op(*args, **kwargs):
        raise RuntimeError(f"simulated torch_npu: {name} computes on an NPU, and this node has none")

    op.__name__ = name
    return op


# Fused operators of the real adapter's public API (Ascend/pytorch, torch_npu.npu_* ops) that
# transformers and diffusers import at module level when torch_npu is installed; here they
# exist and refuse to compute.
npu_fusion_attention = _needs_an_npu("npu_fusion_attention")
npu_rms_norm = _needs_an_npu("npu_rms_norm")
npu_geglu = _needs_an_npu("npu_geglu")

if getattr(torch, "SIMULATED", False):
    torch._backends["npu"] = npu._check
else:
    torch.utils.rename_privateuse1_backend("npu")

    class _OnSimulatedNpu(torch.Tensor):
        _npu_index = 0

        @property
        def device(self):
            return torch.device("npu", self._npu_index)

    _cpu_to = torch.Tensor.to

    def _to(self, *args, **kwargs):
        target = args[0] if args else kwargs.get("device")
        if isinstance(target, (str, torch.device)) and torch.device(target).type == "npu":
            dev = torch.device(target)
            npu._check(dev)
            moved = _cpu_to(self, "cpu").as_subclass(_OnSimulatedNpu)
            moved._npu_index = dev.index if dev.index is not None else npu.current_device()
            return moved
        return _cpu_to(self, *args, **kwargs)

    torch.Tensor.to = _to
'''

TRANSFER_TO_NPU = '''"""SIMULATED torch_npu.contrib.transfer_to_npu: cuda calls go to the NPU.

With the real torch nothing is redirected: its CUDA calls keep saying there is no GPU.
"""
import torch
import torch_npu

if getattr(torch, "SIMULATED", False):
    torch.cuda = torch_npu.npu
    torch._backends["cuda"] = torch_npu.npu._check
'''

DEEPSPEED_INIT = '''"""SIMULATED deepspeed 0.18.4 (test double): version and accelerator choice only."""
__version__ = "0.18.4"
SIMULATED = True
'''

DEEPSPEED_ACCELERATOR = '''"""SIMULATED deepspeed.accelerator: NPU when torch_npu imports, as DeepSpeed picks it."""
import importlib.util
import os


class _Accelerator:
    def __init__(self, name):
        self._name = name

    def device_name(self, index=None):
        return self._name if index is None else f"{self._name}:{index}"


def get_accelerator():
    name = os.environ.get("DS_ACCELERATOR") or ("npu" if importlib.util.find_spec("torch_npu") else "cpu")
    return _Accelerator(name)
'''

LIB_NOTE = "Simulated: the real wheel keeps its shared libraries here.\n"

STAND_INS = (
    ("torch", "2.7.1", (), {"torch/__init__.py": TORCH_INIT, "torch/lib/SIMULATED": LIB_NOTE}),
    ("torch_npu", "2.7.1.post2", ("torch==2.7.1",), {
        "torch_npu/__init__.py": TORCH_NPU_INIT,
        "torch_npu/contrib/__init__.py": "",
        "torch_npu/contrib/transfer_to_npu.py": TRANSFER_TO_NPU,
        "torch_npu/lib/SIMULATED": LIB_NOTE,
    }),
    ("deepspeed", "0.18.4", (), {
        "deepspeed/__init__.py": DEEPSPEED_INIT,
        "deepspeed/accelerator/__init__.py": DEEPSPEED_ACCELERATOR,
    }),
)


def _zip_bytes(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, ZIP_DATE)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return buf.getvalue()


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(name: str, version: str, requires: tuple[str, ...], files: dict[str, str]) -> tuple[str, bytes]:
    """A pure-Python wheel (py3-none-any) holding `files`; returns its file name and bytes."""
    dist_info = f"{name}-{version}.dist-info"
    metadata = (f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                f"Summary: SIMULATED stand-in for {name} {version} (test double of ascendops.gr00t)\n"
                + "".join(f"Requires-Dist: {req}\n" for req in requires))
    content = {path: text.encode() for path, text in files.items()}
    content[f"{dist_info}/METADATA"] = metadata.encode()
    content[f"{dist_info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: ascendops-sim\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = "".join(f"{path},{_record_hash(data)},{len(data)}\n" for path, data in content.items())
    content[f"{dist_info}/RECORD"] = (record + f"{dist_info}/RECORD,,\n").encode()
    return f"{name}-{version}-py3-none-any.whl", _zip_bytes(content)


# ---------------------------------------------------------------- simulated conda

CONDA = r'''
# SIMULATED conda (test double written by the simulated Miniforge installer).
"""Simulated conda: the subcommands ascendops.gr00t uses, with conda's output shapes and exit codes.

Environments are venvs of the Python this script runs on, with pip from the installer's
package cache; `create` can make only that Python version, other versions fail the way an
offline conda fails for a package it does not have.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

CONDA_VERSION = "@CONDA_VERSION@"
ROOT = Path(__file__).resolve().parent.parent
HAVE = "{0}.{1}".format(*sys.version_info[:2])
SUBDIRS = {"x86_64": "linux-64", "aarch64": "linux-aarch64"}


def platform_name():
    return SUBDIRS.get(os.uname().machine, "linux-" + os.uname().machine)


def envs():
    found = [str(ROOT)]
    if (ROOT / "envs").is_dir():
        found += sorted(str(p) for p in (ROOT / "envs").iterdir() if (p / "conda-meta").is_dir())
    return found


def die(kind, message, rc=1):
    sys.stderr.write("\n{0}: {1}\n\n".format(kind, message))
    return rc


def take(args, *names):
    """Remove an option with a value (-n NAME or --name=NAME) from args, return the value."""
    for i, arg in enumerate(args):
        for name in names:
            if arg == name and i + 1 < len(args):
                value = args[i + 1]
                del args[i:i + 2]
                return value
            if arg.startswith(name + "="):
                del args[i]
                return arg.split("=", 1)[1]
    return None


def env_path(name):
    return ROOT if name in ("base", str(ROOT)) else ROOT / "envs" / name


def cmd_info(args):
    info = {"conda_version": CONDA_VERSION, "root_prefix": str(ROOT), "envs": envs(),
            "envs_dirs": [str(ROOT / "envs")], "pkgs_dirs": [str(ROOT / "pkgs")],
            "platform": platform_name(), "python_version": sys.version.split()[0],
            "channels": ["https://conda.anaconda.org/conda-forge/" + platform_name()], "simulated": True}
    if "--json" in args:
        print(json.dumps(info, indent=2))
    else:
        print("     active environment : None\n   conda version : {0} (simulated)\n"
              "   base environment : {1}".format(CONDA_VERSION, ROOT))
    return 0


def cmd_env(args):
    if args[:1] == ["list"]:
        if "--json" in args:
            print(json.dumps({"envs": envs()}, indent=2))
        else:
            print("# conda environments (simulated):\n#")
            for path in envs():
                print("{0:<25} {1}".format("base" if path == str(ROOT) else Path(path).name, path))
        return 0
    if args[:1] == ["remove"]:
        return remove(args[1:])
    return die("CondaError", "simulated conda: `conda env {0}` is not simulated".format(" ".join(args)), 2)


def remove(args):
    name = take(args, "-n", "--name")
    if not name:
        return die("CondaValueError", "no target environment specified")
    path = env_path(name)
    if path == ROOT:
        return die("CondaEnvironmentError", "cannot remove root environment")
    if not path.is_dir():
        return die("EnvironmentLocationNotFound", "Not a conda environment: {0}".format(path))
    subprocess.run(["rm", "-rf", "--", str(path)], check=True)
    print("Remove all packages in environment {0}: done (simulated)".format(path))
    return 0


def cmd_create(args):
    name = take(args, "-n", "--name")
    channels = []
    while True:
        channel = take(args, "-c", "--channel")
        if channel is None:
            break
        channels.append(channel)
    flags = {a for a in args if a.startswith("-")}
    specs = [a for a in args if not a.startswith("-")]
    unknown = flags - {"-y", "--yes", "-q", "--quiet", "--offline", "--override-channels", "--json"}
    if not name or unknown:
        return die("CondaValueError", "simulated conda create takes -n NAME [-c CH] [--offline] [-y] SPEC...: "
                   "got {0}".format(" ".join(sorted(unknown)) or "no -n"), 2)
    print("Channels:\n" + "".join(" - {0}\n".format(c) for c in (channels or ["conda-forge"])) +
          "Platform: {0}\nCollecting package metadata (repodata.json): done".format(platform_name()))
    wanted = [s.split("=", 1)[1].rstrip("*").rstrip(".") for s in specs if s.startswith("python=")]
    if any(not (HAVE == w or HAVE.startswith(w + ".")) for w in wanted):
        print("Solving environment: failed")
        return die("PackagesNotFoundError", "The following packages are not available from current channels:\n\n"
                   + "".join("  - python={0}*\n".format(w) for w in wanted)
                   + "\n(simulated conda can only create Python {0} environments)".format(HAVE))
    print("Solving environment: done")
    path = env_path(name)
    if path.exists():
        subprocess.run(["rm", "-rf", "--", str(path)], check=True)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    pip = sorted((ROOT / "pkgs").glob("pip-*.whl"))[-1]
    subprocess.run([str(path / "bin" / "python"), "{0}/pip".format(pip), "install", "--quiet", "--no-index",
                    "--no-deps", "--disable-pip-version-check", str(pip)], check=True)
    (path / "conda-meta").mkdir(exist_ok=True)
    (path / "conda-meta" / "history").write_text("==> simulated conda create -n {0} {1} <==\n".format(name, " ".join(specs)))
    (path / "conda-meta" / "python-{0}-sim_0.json".format(sys.version.split()[0])).write_text(
        json.dumps({"name": "python", "version": sys.version.split()[0], "simulated": True}))
    print("Preparing transaction: done\nVerifying transaction: done\nExecuting transaction: done\n#\n"
          "# To activate this environment, use\n#\n#     $ conda activate {0}\n#".format(name))
    return 0


def cmd_run(args):
    name = take(args, "-n", "--name")
    args = [a for a in args if a not in ("--no-capture-output", "--live-stream")]
    path = env_path(name or "base")
    if not (path / "conda-meta").is_dir():
        return die("EnvironmentLocationNotFound", "Not a conda environment: {0}".format(path))
    env = dict(os.environ, CONDA_PREFIX=str(path), CONDA_DEFAULT_ENV=name or "base",
               CONDA_EXE=str(ROOT / "bin" / "conda"), PATH="{0}/bin:{1}".format(path, os.environ.get("PATH", "")))
    activate = ('for f in "$CONDA_PREFIX"/etc/conda/activate.d/*.sh; do if [ -f "$f" ]; then . "$f"; fi; done; '
                'exec "$@"')
    return subprocess.run(["bash", "-c", activate, "conda-run"] + args, env=env).returncode


def main(argv):
    if argv[:1] in (["--version"], ["-V"]):
        print("conda " + CONDA_VERSION)
        return 0
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: conda [-h] [-V] command ...\n\nSIMULATED conda {0} (test double): info, env list, "
              "env remove, create, remove --all, run".format(CONDA_VERSION))
        return 0
    command, rest = argv[0], argv[1:]
    if command == "remove" and "--all" in rest:
        return remove([a for a in rest if a != "--all"])
    handlers = {"info": cmd_info, "env": cmd_env, "create": cmd_create, "run": cmd_run}
    if command not in handlers:
        return die("CommandNotFoundError", "simulated conda: '{0}' is not simulated".format(command), 2)
    return handlers[command](rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
'''

CONDA_SH = '''# SIMULATED conda shell setup (test double).
export CONDA_EXE="@PREFIX@/bin/conda"
export CONDA_PYTHON_EXE="@PREFIX@/bin/python"
conda() { "$CONDA_EXE" "$@"; }
'''

INSTALLER = r'''#!/bin/sh
# SIMULATED Miniforge3 installer (test double)
# Generated by tests/sim/make_python_artifacts.py: the command line, messages and exit codes
# of a Miniforge3 installer; the base "Python" is the node's own python3.
set -eu

VER="@VER@"
ARCH="@ARCH@"
CONDA_VERSION="@CONDA_VERSION@"
NAME="Miniforge3"
THIS="$0"
SYSROOT="${ASCEND_SIM_SYSROOT:-}"
FAIL_FILE="$SYSROOT/etc/npu-sim/fail_installer"

usage() {
  cat <<EOF
usage: $THIS [options]

Installs $NAME $VER (SIMULATED test double)

-b           run install in batch mode (without manual intervention),
             it is expected the license terms (if any) are agreed upon
-f           no error if install prefix already exists
-h           print this help message and exit
-p PREFIX    install prefix, defaults to $HOME/miniforge3, must not contain spaces.
-s           skip running pre/post-link/install scripts
-u           update an existing installation
-t           run package tests after installation (may install conda-build)
EOF
}

BATCH=0
FORCE=0
UPDATE=0
PREFIX="${HOME:-/root}/miniforge3"
while getopts "bfhp:sut" opt; do
  case "$opt" in
    b) BATCH=1 ;;
    f) FORCE=1 ;;
    h) usage; exit 2 ;;
    p) PREFIX="$OPTARG" ;;
    s | t) ;;
    u) UPDATE=1 ;;
    *) usage; exit 2 ;;
  esac
done

if [ "$(uname -m)" != "$ARCH" ]; then
  printf 'ERROR:\nYour machine hardware does not appear to be %s, but you are trying to\ninstall a %s version of %s.\n' \
    "$ARCH" "$ARCH" "$NAME"
  exit 1
fi
if [ "$BATCH" -eq 0 ]; then
  printf '\nWelcome to %s %s (simulated)\n\nIn order to continue the installation process, please review the license\nagreement. Run with -b to accept it in batch mode.\n' "$NAME" "$VER"
  exit 1
fi
case "$PREFIX" in
  *\ *) echo "ERROR: Cannot install into directories with spaces"; exit 1 ;;
  /*) ;;
  *) PREFIX="$(pwd)/$PREFIX" ;;
esac
if [ -e "$PREFIX" ] && [ "$UPDATE" -eq 0 ] && [ "$FORCE" -eq 0 ]; then
  printf "ERROR: File or directory already exists: '%s'\nIf you want to update an existing installation, use the -u option.\n" "$PREFIX"
  exit 1
fi

fault_point() {
  mode=""
  once=0
  if [ "${ASCEND_SIM_FAIL_AT:-}" = "$1" ]; then
    mode="${ASCEND_SIM_FAIL_MODE:-exit}"
  elif [ -f "$FAIL_FILE" ]; then
    line="$(grep -E '^[[:space:]]*miniforge([:[:space:]]|$)' "$FAIL_FILE" | head -n 1 | tr -d '[:space:]' || true)"
    if [ -n "$line" ]; then
      mode=exit
      case ":$line:" in *:kill:*) mode=kill ;; esac
      case ":$line:" in *:once:*) once=1 ;; esac
    fi
  fi
  if [ -z "$mode" ]; then return 0; fi
  if [ "$once" -eq 1 ]; then
    grep -Ev '^[[:space:]]*miniforge([:[:space:]]|$)' "$FAIL_FILE" >"$FAIL_FILE.tmp.$$" || true
    mv "$FAIL_FILE.tmp.$$" "$FAIL_FILE"
  fi
  echo "ERROR: simulated failure at stage $1 ($mode)"
  if [ "$mode" = kill ]; then kill -KILL $$; fi
  exit 1
}

PYTHON3="$(command -v python3 || true)"
if [ -z "$PYTHON3" ]; then
  echo "ERROR: the simulated installer needs the node's python3"
  exit 1
fi

echo "PREFIX=$PREFIX"
echo "Unpacking payload ... (simulated)"
mkdir -p "$PREFIX/pkgs" "$PREFIX/bin" "$PREFIX/envs"
line=$(awk '/^@@ARCHIVE_BELOW@@$/ { print NR + 1; exit 0; }' "$THIS")
tail -n "+$line" "$THIS" | base64 -d | tar -xzf - -C "$PREFIX/pkgs"
ln -sfn "$PYTHON3" "$PREFIX/bin/python"
ln -sfn python "$PREFIX/bin/python3"
fault_point after_files

echo "Installing base environment..."
PKG="$PREFIX/pkgs/conda-$CONDA_VERSION-sim_0"
mkdir -p "$PREFIX/condabin" "$PREFIX/conda-meta" "$PREFIX/etc/profile.d"
for target in "$PREFIX/condabin/conda" "$PREFIX/bin/conda"; do
  { echo "#!$PREFIX/bin/python"; cat "$PKG/conda.py"; } >"$target.tmp.$$"
  chmod 0755 "$target.tmp.$$"
  mv "$target.tmp.$$" "$target"
done
sed "s#@PREFIX@#$PREFIX#g" "$PKG/conda.sh" >"$PREFIX/etc/profile.d/conda.sh"
printf '{"name": "conda", "version": "%s", "simulated": true}\n' "$CONDA_VERSION" \
  >"$PREFIX/conda-meta/conda-$CONDA_VERSION-sim_0.json"
printf '==> %s %s (simulated) <==\n+conda-forge::conda-%s\n' "$NAME" "$VER" "$CONDA_VERSION" \
  >>"$PREFIX/conda-meta/history"
echo "Preparing transaction: done"
echo "Executing transaction: done"
echo "installation finished."
exit 0
@@ARCHIVE_BELOW@@
'''


def _tar_gz(files: dict[str, tuple[bytes, int]]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for name, (data, mode) in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime, info.uid, info.gid = len(data), mode, 0, 0, 0
            archive.addfile(info, io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as packed:
        packed.write(raw.getvalue())
    return out.getvalue()


def conda_version(miniforge_version: str) -> str:
    """Miniforge 24.3.0-0 carries conda 24.3.0."""
    return miniforge_version.split("-", 1)[0]


def installer_name(miniforge_version: str, arch: str) -> str:
    return f"Miniforge3-{miniforge_version}-Linux-{arch}.sh"


def render_installer(miniforge_version: str, arch: str, pip_wheel: Path) -> bytes:
    conda = conda_version(miniforge_version)
    pkg = f"conda-{conda}-sim_0"
    payload = _tar_gz({
        f"{pkg}/conda.py": (CONDA.replace("@CONDA_VERSION@", conda).lstrip("\n").encode(), 0o644),
        f"{pkg}/conda.sh": (CONDA_SH.encode(), 0o644),
        pip_wheel.name: (pip_wheel.read_bytes(), 0o644),
    })
    head = (INSTALLER.replace("@VER@", miniforge_version).replace("@ARCH@", arch)
            .replace("@CONDA_VERSION@", conda))
    encoded = base64.encodebytes(payload).decode()
    return (head + encoded).encode()


# ---------------------------------------------------------------- real wheels

def manylinux_platform(arch: str) -> list[str]:
    return [f"manylinux_2_28_{arch}", f"manylinux2014_{arch}"]


def download_real_wheels(cache: Path, arch: str, python_version: str = PYTHON_VERSION) -> list[Path]:
    """The pinned real wheels, from the cache or downloaded into it once."""
    specs = [*REAL_WHEELS, PIP_WHEEL]
    digest = hashlib.sha256("\n".join([arch, python_version, *specs]).encode()).hexdigest()[:12]
    where = cache / f"cp{python_version.replace('.', '')}-{arch}-{digest}"
    stamp = where / ".complete"
    if not stamp.exists():
        where.mkdir(parents=True, exist_ok=True)
        abi = "cp" + python_version.replace(".", "")
        argv = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                "--python-version", python_version, "--implementation", "cp",
                "--abi", abi, "--abi", "abi3", "--abi", "none", "-d", str(where)]
        for plat in manylinux_platform(arch):
            argv += ["--platform", plat]
        res = subprocess.run(argv + specs, capture_output=True, text=True, check=False)
        if res.returncode != 0:
            raise SystemExit(f"downloading the wheelhouse from PyPI failed:\n{res.stdout}{res.stderr}")
        stamp.write_text("\n".join(specs) + "\n")
    return sorted(p for p in where.glob("*.whl"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dest", type=Path, required=True, help="artifact source directory to fill")
    parser.add_argument("--arch", default=normalize_arch(platform.machine()))
    parser.add_argument("--miniforge-version", default=MINIFORGE_VERSION)
    parser.add_argument("--cache", type=Path, default=REPO / ".sim" / "wheelhouse-cache",
                        help="controller directory that keeps the wheels downloaded from PyPI")
    parser.add_argument("--no-real-wheels", action="store_true",
                        help="only the stand-ins and an installer whose pip comes from --pip-wheel")
    parser.add_argument("--pip-wheel", type=Path, help="pip wheel for the installer's package cache")
    args = parser.parse_args(argv)
    wheels_dir = args.dest / "wheels"
    wheels_dir.mkdir(parents=True, exist_ok=True)
    real = [] if args.no_real_wheels else download_real_wheels(args.cache, args.arch)
    pip_wheel = args.pip_wheel or next((w for w in real if w.name.startswith("pip-")), None)
    if pip_wheel is None:
        parser.error("no pip wheel: give --pip-wheel or let the real wheels download")
    outputs: dict[Path, tuple[bytes, int]] = {
        args.dest / installer_name(args.miniforge_version, args.arch):
            (render_installer(args.miniforge_version, args.arch, pip_wheel), 0o755),
    }
    for name, version, requires, files in STAND_INS:
        filename, data = build_wheel(name, version, requires, files)
        outputs[wheels_dir / filename] = (data, 0o644)
    for wheel in real:
        if not wheel.name.startswith("pip-"):
            outputs[wheels_dir / wheel.name] = (wheel.read_bytes(), 0o644)
    for path, (data, mode) in outputs.items():
        written = write_if_changed(path, data, mode)
        print(f"{'wrote' if written else 'unchanged'} {path.relative_to(args.dest)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
