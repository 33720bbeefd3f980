"""Tests of the conda_env_facts module and its module_utils."""
from __future__ import annotations

import stat
from pathlib import Path

import pytest
import modrun

from ansible_collections.ascendops.gr00t.plugins.module_utils.conda_env import (
    conda_version, env_action, miniforge_action, python_version)
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
