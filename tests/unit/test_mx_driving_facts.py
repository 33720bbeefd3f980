"""Tests of the mx_driving_facts module: an mx_driving installed into a temporary site-packages."""
from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest
import modrun

from ansible_collections.ascendops.gr00t.plugins.module_utils.wheel_archive import installed_record_problems
from ansible_collections.ascendops.gr00t.plugins.modules import mx_driving_facts

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sim"))
import make_mx_driving as sim  # noqa: E402


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return tmp_path / "site-packages"


def install(site: Path, wheel: bytes) -> None:
    """What pip leaves in site-packages for these wheels: their files, RECORD included."""
    site.mkdir(parents=True, exist_ok=True)
    path = site.parent / "w.whl"
    path.write_bytes(wheel)
    with zipfile.ZipFile(path) as archive:
        archive.extractall(site)


def fake_python(tmp_path: Path, site: Path) -> Path:
    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\necho '\"{site}\"'\n")
    python.chmod(0o755)
    return python


def run(monkeypatch, capsys, tmp_path: Path, site: Path) -> dict:
    return modrun.run_module(mx_driving_facts.main, monkeypatch, capsys,
                             {"python": str(fake_python(tmp_path, site))})


def test_new_api_install(monkeypatch, capsys, tmp_path: Path, site: Path) -> None:
    install(site, sim.new_api_wheel())
    result = run(monkeypatch, capsys, tmp_path, site)
    assert result["changed"] is False
    assert result["installed"] is True and result["version"] == "26.2.0"
    assert result["extensions"] == ["_C.cpython-310-aarch64-linux-gnu.so"]
    assert result["api"] == "new" and result["api_problems"] == []
    assert result["missing_files"] == [] and result["record_problems"] == []
    assert result["site_packages"] == str(site)


def test_old_api_install(monkeypatch, capsys, tmp_path: Path, site: Path) -> None:
    install(site, sim.old_api_wheel())
    result = run(monkeypatch, capsys, tmp_path, site)
    assert result["api"] == "old" and result["version"] == "1.0.20260421"
    assert "legacy.py" in result["missing_files"] and "no legacy.py" in result["api_problems"]


def test_nothing_installed(monkeypatch, capsys, tmp_path: Path, site: Path) -> None:
    site.mkdir()
    result = run(monkeypatch, capsys, tmp_path, site)
    assert result["installed"] is False and result["version"] is None and result["api"] == "none"
    assert result["extensions"] == [] and "legacy.py" in result["missing_files"]


def test_changed_and_removed_files_are_reported(monkeypatch, capsys, tmp_path: Path, site: Path) -> None:
    install(site, sim.new_api_wheel())
    (site / "mx_driving" / "patcher" / "legacy.py").write_text("default_patcher_builder = None\n")
    (site / "mx_driving" / "_C.cpython-310-aarch64-linux-gnu.so").unlink()
    result = run(monkeypatch, capsys, tmp_path, site)
    assert result["record_problems"] == ["mx_driving/_C.cpython-310-aarch64-linux-gnu.so is missing",
                                         "mx_driving/patcher/legacy.py differs from what was installed"]
    assert result["extensions"] == []


def test_record_rows_without_hash_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("a")
    record = "a.py,sha256=ypeBEsobvcr6wjGzmiPcTaeG7_gUfE5yuYB3ha_uSLs,1\nx.dist-info/RECORD,,\nb.pyc,,\n"
    assert installed_record_problems(str(tmp_path), record) == []


def test_missing_interpreter(monkeypatch, capsys, tmp_path: Path) -> None:
    result = modrun.run_module(mx_driving_facts.main, monkeypatch, capsys, {"python": str(tmp_path / "python")})
    assert result["failed"] and "not an executable interpreter" in result["msg"] and "python_env" in result["msg"]


def test_failing_interpreter(monkeypatch, capsys, tmp_path: Path) -> None:
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\necho 'broken env' >&2\nexit 1\n")
    python.chmod(0o755)
    result = modrun.run_module(mx_driving_facts.main, monkeypatch, capsys, {"python": str(python)})
    assert result["failed"] and "cannot tell its site-packages: broken env" in result["msg"]
