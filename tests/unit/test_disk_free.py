"""Tests of the disk_free module."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import modrun

from ansible_collections.ascendops.gr00t.plugins.modules import disk_free
from ansible_collections.ascendops.gr00t.plugins.module_utils.disk import measure, nearest_existing


def run_module(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, args: dict) -> dict:
    return modrun.run_module(disk_free.main, monkeypatch, capsys, args)


# ---------------------------------------------------------------- nearest_existing


def test_nearest_existing_of_existing_dir(tmp_path: Path) -> None:
    assert nearest_existing(str(tmp_path)) == str(tmp_path)
    assert nearest_existing(str(tmp_path) + "/") == str(tmp_path)


def test_nearest_existing_of_nonexistent_deep_path(tmp_path: Path) -> None:
    (tmp_path / "usr").mkdir()
    assert nearest_existing(str(tmp_path / "usr" / "local" / "Ascend" / "cann-9.0.0")) == str(tmp_path / "usr")
    assert nearest_existing(str(tmp_path / "a" / ".." / "usr" / "x")) == str(tmp_path / "usr")


def test_nearest_existing_of_a_file_is_its_directory(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    assert nearest_existing(str(tmp_path / "file")) == str(tmp_path)
    assert nearest_existing(str(tmp_path / "file" / "below")) == str(tmp_path)


def test_nearest_existing_of_root() -> None:
    assert nearest_existing("/") == "/"
    assert nearest_existing("/nonexistent-gr00t-dir/deeper") == "/"


# ---------------------------------------------------------------- measure


def test_measure_existing(tmp_path: Path) -> None:
    result = measure(str(tmp_path))
    assert result["measured_at"] == str(tmp_path)
    assert result["exists"] is True
    assert result["free_bytes"] > 0
    assert result["total_bytes"] > 0
    assert result["free_bytes"] <= result["total_bytes"]


def test_measure_nonexistent(tmp_path: Path) -> None:
    result = measure(str(tmp_path / "Ascend" / "cann"))
    assert result["measured_at"] == str(tmp_path)
    assert result["exists"] is False
    assert 0 < result["free_bytes"] <= result["total_bytes"]
    stats = os.statvfs(tmp_path)
    assert result["total_bytes"] == stats.f_blocks * stats.f_frsize


# ---------------------------------------------------------------- module


def test_module_measures_paths(monkeypatch, capsys, tmp_path: Path) -> None:
    missing = str(tmp_path / "usr" / "local" / "Ascend")
    result = run_module(monkeypatch, capsys, {"paths": [missing, str(tmp_path)]})
    assert not result.get("failed"), result
    assert result["changed"] is False
    paths = result["paths"]
    assert set(paths) == {missing, str(tmp_path)}
    assert paths[missing]["measured_at"] == str(tmp_path)
    assert paths[missing]["exists"] is False
    assert paths[missing]["free_bytes"] > 0 and paths[missing]["total_bytes"] > 0
    assert paths[str(tmp_path)]["exists"] is True
    assert not (tmp_path / "usr").exists()


def test_module_check_mode(monkeypatch, capsys, tmp_path: Path) -> None:
    result = run_module(monkeypatch, capsys, {"paths": [str(tmp_path / "x")], "_ansible_check_mode": True})
    assert result["changed"] is False
    assert result["paths"][str(tmp_path / "x")]["measured_at"] == str(tmp_path)


def test_module_rejects_relative_path(monkeypatch, capsys, tmp_path: Path) -> None:
    result = run_module(monkeypatch, capsys, {"paths": [str(tmp_path), "usr/local/Ascend"]})
    assert result["failed"] is True
    assert "paths must be absolute" in result["msg"]
    assert "usr/local/Ascend" in result["msg"]
    assert str(tmp_path) not in result["msg"]
    assert "paths" not in result


def test_module_requires_paths(monkeypatch, capsys) -> None:
    result = run_module(monkeypatch, capsys, {})
    assert result["failed"] is True
    assert "paths" in result["msg"]
