"""The conda training env of the converged simulated node."""
import json

import pytest

PREFIX = "/opt/miniforge3"
ENV = f"{PREFIX}/envs/torch2.7.1"
PYTHON = "3.11"  # the simulated conda makes envs of the node's python3 (Debian 12)
SITE = f"{ENV}/lib/python{PYTHON}/site-packages"
HOOKS = f"{ENV}/etc/conda"


def test_conda_has_the_miniforge_version(host):
    assert host.check_output(f"{PREFIX}/bin/conda --version") == "conda 24.3.0"
    envs = json.loads(host.check_output(f"{PREFIX}/bin/conda env list --json"))["envs"]
    assert ENV in envs


def test_env_python_is_not_the_system_python(host):
    assert host.check_output(f"{ENV}/bin/python -c 'import sys; print(sys.prefix)'") == ENV
    system = host.run("python3 -c 'import torch'")
    assert system.rc != 0, "torch must not be importable from the system Python"


@pytest.mark.parametrize("name, version", [
    ("torch", "2.7.1"),
    ("torch-npu", "2.7.1.post2"),
    ("transformers", "4.57.3"),
    ("diffusers", "0.35.1"),
    ("deepspeed", "0.18.4"),
    ("protobuf", "3.20.3"),
])
def test_pinned_versions(host, name, version):
    listed = json.loads(host.check_output(f"{ENV}/bin/python -m pip list --format json --disable-pip-version-check"))
    versions = {entry["name"].lower().replace("_", "-"): entry["version"] for entry in listed}
    assert versions[name] == version


def test_cann_prerequisites_are_installed(host):
    listed = json.loads(host.check_output(f"{ENV}/bin/python -m pip list --format json --disable-pip-version-check"))
    names = {entry["name"].lower().replace("_", "-") for entry in listed}
    assert {"attrs", "cython", "numpy", "decorator", "sympy", "cffi", "pyyaml", "pathlib2", "psutil", "scipy",
            "requests", "absl-py"} <= names


def test_wheelhouse_staged(host):
    wheels = host.file("/var/cache/ascendops/artifacts/wheels")
    assert wheels.is_directory
    assert host.file("/var/cache/ascendops/artifacts/wheels/torch_npu-2.7.1.post2-py3-none-any.whl").exists


def test_hooks_restore_ld_library_path(host):
    script = (
        "set -eu; export LD_LIBRARY_PATH=/before; "
        f". {HOOKS}/activate.d/ascendops-cann.sh; echo \"$LD_LIBRARY_PATH\"; echo \"${{ASCEND_HOME_PATH:-}}\"; "
        f". {HOOKS}/deactivate.d/ascendops-cann.sh; echo \"$LD_LIBRARY_PATH\"; "
        "unset LD_LIBRARY_PATH; "
        f". {HOOKS}/activate.d/ascendops-cann.sh; . {HOOKS}/deactivate.d/ascendops-cann.sh; "
        "echo \"${LD_LIBRARY_PATH-unset}\""
    )
    active, home, restored, unset = host.check_output(f"bash -c '{script}'").splitlines()
    parts = active.split(":")
    assert parts[:2] == [f"{SITE}/torch/lib", f"{SITE}/torch_npu/lib"]
    assert "/before" in parts
    assert home == "/usr/local/Ascend/cann-9.0.0"
    assert restored == "/before"
    assert unset == "unset"


def test_smoke_test_runs_in_the_env_with_its_libraries(host):
    out = host.check_output(f"{ENV}/share/ascendops/npu-smoke.sh")
    result = json.loads(out.splitlines()[-1])
    assert result["tensor_device"] == "npu:0"
    assert result["torch_npu"] == "2.7.1.post2"
    assert f"{SITE}/torch_npu/lib" in result["ld_library_path"]


def test_smoke_test_fails_when_an_npu_is_gone(host):
    state = "/etc/npu-sim/state-empty.json"
    host.run(f"echo '{{\"devices\": []}}' > {state}")
    res = host.run(f"NPU_SIM_STATE={state} {ENV}/share/ascendops/npu-smoke.sh")
    host.run(f"rm -f {state}")
    assert res.rc != 0
    assert "invalid device npu:0" in res.stderr
