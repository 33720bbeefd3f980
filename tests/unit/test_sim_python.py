"""Tests of the simulated Miniforge installer, its conda and the stand-in wheels (tests/sim/make_python_artifacts.py).

They run on the controller: the installer's base Python is the controller's python3, its
envs are venvs of it. pip's wheel for the installer's package cache comes from PyPI.
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

GENERATOR = Path(__file__).resolve().parents[2] / "tests" / "sim" / "make_python_artifacts.py"
ARCH = {"amd64": "x86_64", "arm64": "aarch64"}.get(platform.machine().lower(), platform.machine())
PY = "%d.%d" % sys.version_info[:2]
INSTALLER = f"Miniforge3-24.3.0-0-Linux-{ARCH}.sh"

sys.path.insert(0, str(GENERATOR.parent))
import make_python_artifacts as gen  # noqa: E402


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pip_dir = tmp_path_factory.mktemp("pip")
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                    "-d", str(pip_dir), gen.PIP_WHEEL], check=True)
    dest = tmp_path_factory.mktemp("artifacts")
    subprocess.run([sys.executable, str(GENERATOR), "--dest", str(dest), "--no-real-wheels",
                    "--pip-wheel", str(next(pip_dir.glob("pip-*.whl")))], check=True, capture_output=True)
    return dest


class Node:
    """A sysroot for the fault marker and a place for prefixes, in a temporary directory."""

    def __init__(self, artifacts: Path, root: Path) -> None:
        self.artifacts = artifacts
        self.prefix = root / "miniforge3"
        self.sysroot = root / "sysroot"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("ASCEND_", "CONDA", "PIP_"))}
        self.env["ASCEND_SIM_SYSROOT"] = str(self.sysroot)

    def install(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", str(self.artifacts / INSTALLER), *args], env={**self.env, **(env or {})},
                              capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60, check=False)

    def conda(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        res = subprocess.run([str(self.prefix / "bin" / "conda"), *args], env=self.env, capture_output=True,
                             text=True, timeout=120, check=False)
        if check:
            assert res.returncode == 0, res.stdout + res.stderr
        return res

    def fail_marker(self, line: str) -> Path:
        marker = self.sysroot / "etc" / "npu-sim" / "fail_installer"
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(line + "\n")
        return marker


@pytest.fixture
def node(artifacts: Path, tmp_path: Path) -> Node:
    return Node(artifacts, tmp_path)


@pytest.fixture
def installed(node: Node) -> Node:
    res = node.install("-b", "-p", str(node.prefix))
    assert res.returncode == 0, res.stdout + res.stderr
    return node


def test_generator_is_deterministic(artifacts: Path, tmp_path: Path) -> None:
    assert (artifacts / INSTALLER).is_file()
    again = tmp_path / "again"
    wheel = tmp_path / "pip-0-py3-none-any.whl"
    wheel.write_bytes(b"not a wheel")
    for dest in (again, tmp_path / "twice"):
        subprocess.run([sys.executable, str(GENERATOR), "--dest", str(dest), "--no-real-wheels",
                        "--pip-wheel", str(wheel)], check=True, capture_output=True)
    for path in sorted(again.rglob("*")):
        if path.is_file():
            assert path.read_bytes() == (tmp_path / "twice" / path.relative_to(again)).read_bytes(), path.name
    names = sorted(p.name for p in (again / "wheels").iterdir())
    assert names == ["deepspeed-0.18.4-py3-none-any.whl", "torch-2.7.1-py3-none-any.whl",
                     "torch_npu-2.7.1.post2-py3-none-any.whl"]


def test_help_says_simulated(node: Node) -> None:
    res = node.install("-h")
    assert res.returncode == 2
    assert "SIMULATED" in res.stdout and "-u           update an existing installation" in res.stdout


def test_batch_mode_is_required(node: Node) -> None:
    res = node.install("-p", str(node.prefix))
    assert res.returncode == 1
    assert "-b" in res.stdout
    assert not node.prefix.exists()


def test_install_lays_out_a_prefix(installed: Node) -> None:
    assert installed.conda("--version").stdout.strip() == "conda 24.3.0"
    assert (installed.prefix / "condabin" / "conda").exists()
    assert (installed.prefix / "conda-meta" / "conda-24.3.0-sim_0.json").exists()
    assert (installed.prefix / "etc" / "profile.d" / "conda.sh").read_text().count(str(installed.prefix)) == 2
    info = json.loads(installed.conda("info", "--json").stdout)
    assert info["conda_version"] == "24.3.0" and info["simulated"] is True
    assert info["root_prefix"] == str(installed.prefix)


def test_existing_prefix_needs_u(installed: Node) -> None:
    res = installed.install("-b", "-p", str(installed.prefix))
    assert res.returncode == 1
    assert f"File or directory already exists: '{installed.prefix}'" in res.stdout
    assert "use the -u option" in res.stdout
    assert installed.install("-b", "-u", "-p", str(installed.prefix)).returncode == 0


def test_interrupted_install_leaves_no_conda_and_u_repairs(node: Node) -> None:
    marker = node.fail_marker("miniforge:once")
    res = node.install("-b", "-p", str(node.prefix))
    assert res.returncode == 1
    assert "simulated failure at stage after_files" in res.stdout
    assert node.prefix.is_dir() and not (node.prefix / "bin" / "conda").exists()
    assert marker.read_text() == ""
    res = node.install("-b", "-u", "-p", str(node.prefix))
    assert res.returncode == 0, res.stdout
    assert node.conda("--version").stdout.strip() == "conda 24.3.0"


def test_fail_at_from_the_environment(node: Node) -> None:
    res = node.install("-b", "-p", str(node.prefix), env={"ASCEND_SIM_FAIL_AT": "after_files"})
    assert res.returncode == 1
    assert not (node.prefix / "bin" / "conda").exists()


def test_create_only_the_python_it_has(installed: Node) -> None:
    res = installed.conda("create", "-n", "torch2.7.1", "python=2.7", "-y", "--offline", check=False)
    assert res.returncode == 1
    assert "PackagesNotFoundError" in res.stderr and "python=2.7*" in res.stderr
    assert not (installed.prefix / "envs" / "torch2.7.1").exists()


@pytest.fixture
def with_env(installed: Node) -> Node:
    installed.conda("create", "--name", "torch2.7.1", f"python={PY}", "--yes", "--quiet", "--offline")
    return installed


def test_env_list_run_and_remove(with_env: Node) -> None:
    env = with_env.prefix / "envs" / "torch2.7.1"
    assert json.loads(with_env.conda("env", "list", "--json").stdout)["envs"] == [str(with_env.prefix), str(env)]
    hook = env / "etc" / "conda" / "activate.d" / "hook.sh"
    hook.parent.mkdir(parents=True)
    hook.write_text("export FROM_HOOK=yes\n")
    out = with_env.conda("run", "-n", "torch2.7.1", "--no-capture-output", "python", "-c",
                         "import os, sys; print(sys.prefix, os.environ['FROM_HOOK'], os.environ['CONDA_PREFIX'])").stdout
    assert out.split() == [str(env), "yes", str(env)]
    pip = with_env.conda("run", "-n", "torch2.7.1", "python", "-m", "pip", "--version").stdout
    assert str(env) in pip
    with_env.conda("env", "remove", "--name", "torch2.7.1", "--yes")
    assert not env.exists()
    assert with_env.conda("env", "remove", "--name", "torch2.7.1", check=False).returncode == 1


def test_stand_in_wheels_give_the_smoke_surface(with_env: Node, artifacts: Path, tmp_path: Path) -> None:
    python = str(with_env.prefix / "envs" / "torch2.7.1" / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-index", "--find-links", str(artifacts / "wheels"),
                    "torch_npu==2.7.1.post2", "deepspeed==0.18.4"], check=True, env=with_env.env)
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"devices": [{"id": 0}, {"id": 1}]}))
    code = ("import torch, torch_npu, deepspeed, torch_npu.contrib.transfer_to_npu\n"
            "from deepspeed.accelerator import get_accelerator\n"
            "t = torch.ones(3).to('npu:1')\n"
            "print(torch.__version__, torch_npu.__version__, torch.npu.device_count(), t.device, t.sum().item(),"
            " torch.cuda.device_count(), get_accelerator().device_name(), torch.npu.get_device_name(0))\n"
            "torch.ones(1).to('npu:2')\n")
    res = subprocess.run([python, "-c", code], env={**with_env.env, "NPU_SIM_STATE": str(state)},
                         capture_output=True, text=True, check=False)
    assert res.stdout.split() == ["2.7.1", "2.7.1.post2", "2", "npu:1", "3.0", "2", "npu", "Ascend910B3", "(simulated)"]
    assert res.returncode == 1 and "invalid device npu:2, 2 NPU(s) visible" in res.stderr
    pip_list = json.loads(subprocess.run([python, "-m", "pip", "list", "--format", "json"], check=True,
                                         capture_output=True, text=True).stdout)
    assert {"name": "torch", "version": "2.7.1"} in pip_list


def test_fused_npu_ops_import_and_refuse_to_compute(with_env: Node, artifacts: Path) -> None:
    """transformers imports torch_npu.npu_fusion_attention at module level when torch_npu is there."""
    python = str(with_env.prefix / "envs" / "torch2.7.1" / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-index", "--find-links", str(artifacts / "wheels"),
                    "torch_npu==2.7.1.post2"], check=True, env=with_env.env)
    code = ("from torch_npu import npu_fusion_attention, npu_rms_norm, npu_geglu\n"
            "print(npu_rms_norm.__name__)\n"
            "npu_fusion_attention(1, 2, 3)\n")
    res = subprocess.run([python, "-c", code], env=with_env.env, capture_output=True, text=True, check=False)
    assert res.stdout.split() == ["npu_rms_norm"]
    assert res.returncode == 1 and "npu_fusion_attention computes on an NPU, and this node has none" in res.stderr
