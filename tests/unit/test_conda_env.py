"""Tests of the conda_env_facts module and its module_utils."""
from __future__ import annotations

import hashlib
import stat
from pathlib import Path

import pytest
import modrun

from ansible_collections.ascendops.gr00t.plugins.module_utils.conda_env import (
    conda_version, env_action, miniforge_action, python_version, wheel_hashes)
from ansible_collections.ascendops.gr00t.plugins.module_utils.pip_pins import pin_plan
from ansible_collections.ascendops.gr00t.plugins.modules import conda_env_facts


@pytest.mark.parametrize(("rc", "out", "want"), [
    (0, "conda 24.3.0\n", "24.3.0"),
    (0, "24.3.0", "24.3.0"),
    (1, "conda 24.3.0", ""),
    (127, "", ""),
])
def test_conda_version(rc: int, out: str, want: str) -> None:
    assert conda_version(rc, out) == want


@pytest.mark.parametrize(("rc", "out", "want"), [
    (0, "3.10\n", "3.10"),
    (1, "3.10", ""),
    (0, "Traceback ...", ""),
    (127, "", ""),
])
def test_python_version(rc: int, out: str, want: str) -> None:
    assert python_version(rc, out) == want


@pytest.mark.parametrize(("have", "exists", "want"), [
    ("24.3.0", True, "none"),
    ("", False, "install"),
    ("", True, "repair"),
    ("23.11.0", True, "update"),
])
def test_miniforge_action(have: str, exists: bool, want: str) -> None:
    assert miniforge_action(have, "24.3.0", exists) == want


@pytest.mark.parametrize(("present", "have", "want"), [
    (False, "", "create"),
    (True, "3.10", "none"),
    (True, "3.11", "recreate"),
    (True, "", "recreate"),
])
def test_env_action(present: bool, have: str, want: str) -> None:
    assert env_action(present, have, "3.10") == want


def fake_prefix(tmp_path: Path, conda: str, python: str | None) -> Path:
    """A prefix whose conda prints `conda` and whose env python prints `python` (None: no env)."""
    prefix = tmp_path / "miniforge3"
    (prefix / "bin").mkdir(parents=True)
    scripts = {prefix / "bin" / "conda": f"#!/bin/sh\necho '{conda}'\n"}
    if python is not None:
        env = prefix / "envs" / "torch2.7.1"
        (env / "conda-meta").mkdir(parents=True)
        (env / "bin").mkdir()
        scripts[env / "bin" / "python"] = f"#!/bin/sh\necho '{python}'\n"
    for path, text in scripts.items():
        path.write_text(text)
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return prefix


def facts(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, prefix: Path) -> dict:
    return modrun.run_module(conda_env_facts.main, monkeypatch, capsys, {
        "prefix": str(prefix), "env_name": "torch2.7.1", "conda_version": "24.3.0", "python_version": "3.10"})


def test_a_converged_prefix_plans_nothing(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
                                          tmp_path: Path) -> None:
    result = facts(monkeypatch, capsys, fake_prefix(tmp_path, "conda 24.3.0", "3.10"))
    assert result["changed"] is False
    assert (result["conda_version"], result["python_version"]) == ("24.3.0", "3.10")
    assert (result["miniforge_action"], result["env_action"]) == ("none", "none")


def test_an_env_with_another_python_is_recreated(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
                                                 tmp_path: Path) -> None:
    result = facts(monkeypatch, capsys, fake_prefix(tmp_path, "conda 24.3.0", "3.11"))
    assert result["env_action"] == "recreate" and result["python_version"] == "3.11"


def test_a_bare_node_installs_and_creates(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
                                          tmp_path: Path) -> None:
    result = facts(monkeypatch, capsys, tmp_path / "none")
    assert result["prefix_exists"] is False and result["env_present"] is False
    assert (result["miniforge_action"], result["env_action"]) == ("install", "create")


def test_a_prefix_without_the_env_creates_it(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
                                             tmp_path: Path) -> None:
    result = facts(monkeypatch, capsys, fake_prefix(tmp_path, "conda 23.11.0", None))
    assert (result["miniforge_action"], result["env_action"]) == ("update", "create")
    assert result["env_path"] == str(tmp_path / "miniforge3" / "envs" / "torch2.7.1")


# ---------------------------------------------------------------- the pins and the wheelhouse in the same read


def test_pin_plan_lists_what_pip_list_does_not_satisfy() -> None:
    pip_list = '[{"name": "torch", "version": "2.6.0"}, {"name": "Torch_NPU", "version": "2.7.1.post2"}]'
    plan = pin_plan(["torch==2.7.1", "torch-npu==2.7.1.post2", "deepspeed==0.18.4"], 0, pip_list)
    assert plan == [{"spec": "torch==2.7.1", "name": "torch", "have": "2.6.0", "want": "2.7.1"},
                    {"spec": "deepspeed==0.18.4", "name": "deepspeed", "have": None, "want": "0.18.4"}]
    assert pin_plan(["torch==2.7.1"], 0, '[{"name": "torch", "version": "2.7.1"}]') == []


def test_pin_plan_leaves_resolver_requirements_and_a_broken_pip_to_pip_pins() -> None:
    assert pin_plan(["torch>=2.7"], 0, "[]") is None
    assert pin_plan(["torch==2.7.1"], 1, "") is None


def test_wheel_hashes_of_the_wheels_only(tmp_path: Path) -> None:
    (tmp_path / "a-1-py3-none-any.whl").write_bytes(b"wheel")
    (tmp_path / "notes.txt").write_text("not a wheel")
    (tmp_path / "sub.whl").mkdir()
    assert wheel_hashes(str(tmp_path)) == [hashlib.sha256(b"wheel").hexdigest()]
    assert wheel_hashes(str(tmp_path / "missing")) == []


def test_the_read_compares_pins_and_hashes_the_wheelhouse(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    prefix = fake_prefix(tmp_path, "conda 24.3.0", "3.10")
    # The env's python answers `-m pip list --format json` as pip does, and the version check otherwise.
    (prefix / "envs" / "torch2.7.1" / "bin" / "python").write_text(
        "#!/bin/sh\n[ \"$2\" = pip ] && echo '[{\"name\": \"torch\", \"version\": \"2.7.1\"}]' && exit 0\necho 3.10\n")
    house = tmp_path / "wheels"
    house.mkdir()
    (house / "torch-2.7.1-cp310-cp310-linux_aarch64.whl").write_bytes(b"torch")
    result = modrun.run_module(conda_env_facts.main, monkeypatch, capsys, {
        "prefix": str(prefix), "env_name": "torch2.7.1", "conda_version": "24.3.0", "python_version": "3.10",
        "pins": ["torch==2.7.1", "deepspeed==0.18.4"], "wheelhouse": str(house)})
    assert result["env_action"] == "none"
    assert [p["spec"] for p in result["pin_plan"]] == ["deepspeed==0.18.4"]
    assert result["wheelhouse_sha256"] == [hashlib.sha256(b"torch").hexdigest()]
    assert facts(monkeypatch, capsys, prefix)["pin_plan"] is None
