"""After the faults: the prefix repaired, the env converged once the wheel was there."""
import json

PREFIX = "/opt/miniforge3"
ENV = f"{PREFIX}/envs/torch2.7.1"


def fault(host):
    return host.backend.get_hostname().removeprefix("mol-pyf-")


def test_conda_works_after_the_rerun(host):
    assert host.check_output(f"{PREFIX}/bin/conda --version") == "conda 24.3.0"
    assert host.file(f"{PREFIX}/conda-meta/conda-24.3.0-sim_0.json").exists


def test_fault_marker_was_consumed(host):
    if fault(host) == "interrupted":
        assert "miniforge" not in host.file("/etc/npu-sim/fail_installer").content_string


def test_env_has_the_pins_and_passes_the_smoke_test(host):
    listed = json.loads(host.check_output(f"{ENV}/bin/python -m pip list --format json"))
    versions = {entry["name"].lower().replace("_", "-"): entry["version"] for entry in listed}
    assert versions["deepspeed"] == "0.18.4"
    assert versions["torch-npu"] == "2.7.1.post2"
    result = json.loads(host.check_output(f"{ENV}/share/ascendops/npu-smoke.sh").splitlines()[-1])
    assert result["tensor_device"] == "npu:0"
