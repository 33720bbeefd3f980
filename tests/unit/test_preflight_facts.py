"""Tests of the preflight_facts module and its module_utils."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import modrun

from ansible_collections.ascendops.gr00t.plugins.module_utils.preflight import (
    dkms_packages, dpkg_installed, mem_total_mb, owner_and_mode, pci_functions)
from ansible_collections.ascendops.gr00t.plugins.modules import preflight_facts

LSPCI = "0000:c1:00.0 Processing accelerators: Huawei Technologies Co., Ltd. Device d802 (rev 20)\n"


def test_pci_functions() -> None:
    assert pci_functions(LSPCI * 8) == 8
    assert pci_functions("\n\n") == 0


def test_mem_total_mb() -> None:
    assert mem_total_mb("MemTotal:       1583215764 kB\nMemFree:  12 kB\n") == 1546109
    assert mem_total_mb("MemFree:  12 kB\n") == -1
    assert mem_total_mb("MemTotal:\n") == -1


def test_dkms_packages_by_package_manager() -> None:
    assert dkms_packages("dpkg", "6.1.0-18-arm64") == ["dkms", "gcc", "linux-headers-6.1.0-18-arm64"]
    assert dkms_packages("rpm", "5.10.0-60.18.0.50.oe2203.aarch64")[-1] == "kernel-devel-5.10.0-60.18.0.50.oe2203.aarch64"


@pytest.mark.parametrize(("rc", "out", "installed"), [
    (0, "install ok installed", True),
    (0, "deinstall ok config-files", False),
    (1, "", False),
])
def test_dpkg_installed(rc: int, out: str, installed: bool) -> None:
    assert dpkg_installed(rc, out) is installed


def test_owner_and_mode(tmp_path: Path) -> None:
    (tmp_path / "Ascend").mkdir(mode=0o750)
    (tmp_path / "Ascend").chmod(0o750)
    found = owner_and_mode(str(tmp_path / "Ascend"))
    assert found["exists"] is True and found["mode"] == "0750" and found["owner"]
    assert owner_and_mode(str(tmp_path / "none")) == {"exists": False, "owner": None, "mode": None}


def tools(tmp_path: Path, scripts: dict[str, str]) -> Path:
    """A directory of stand-in commands, each printing what `scripts` gives it."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name, body in scripts.items():
        path = bindir / name
        path.write_text("#!/bin/sh\n" + body)
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return bindir


def facts(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, tmp_path: Path, bindir: Path) -> dict:
    monkeypatch.setenv("PATH", str(bindir))
    return modrun.run_module(preflight_facts.main, monkeypatch, capsys, {
        "pci_id": "19e5:d802", "kernel": "6.1.0-18-arm64", "install_root": str(tmp_path / "Ascend"),
        "disk_paths": [str(tmp_path / "Ascend")], "conda_prefix": str(tmp_path / "miniforge3")})


def test_module_reads_a_node(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    bindir = tools(tmp_path, {
        "lspci": "for i in 1 2 3 4 5 6 7 8; do echo '%s'; done\n" % LSPCI.strip(),
        "dpkg-query": 'case "$3" in dkms|gcc) echo "install ok installed";; *) exit 1;; esac\n',
    })
    conda = tmp_path / "miniforge3" / "bin"
    conda.mkdir(parents=True)
    (conda / "conda").write_text("#!/bin/sh\necho 'conda 24.3.0'\n")
    (conda / "conda").chmod(0o755)
    result = facts(monkeypatch, capsys, tmp_path, bindir)
    assert result["changed"] is False
    assert result["lspci"] == {"rc": 0, "count": 8, "stderr": ""}
    assert result["dkms_missing"] == ["linux-headers-6.1.0-18-arm64"]
    assert result["install_root"]["exists"] is False
    assert result["disk"][str(tmp_path / "Ascend")]["measured_at"] == str(tmp_path)
    assert result["conda_version"] == "24.3.0"
    assert result["mem_total_mb"] > 0
    assert result["ansible_facts"]["ascend"]["root"] == str(tmp_path / "Ascend")


def test_module_reports_missing_tools(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
                                      tmp_path: Path) -> None:
    bindir = tools(tmp_path, {"rpm": 'test "$2" = gcc\n'})
    result = facts(monkeypatch, capsys, tmp_path, bindir)
    assert result["lspci"]["rc"] == 127 and result["lspci"]["count"] == -1
    assert "lspci" in result["lspci"]["stderr"]
    assert result["dkms_missing"] == ["dkms", "kernel-devel-6.1.0-18-arm64"]
    assert result["conda_version"] == ""
    npu = result["ansible_facts"]["npu"]
    assert npu["present"] is False and npu["count"] == 0 and "npu-smi not found" in npu["error"]


def test_module_refuses_relative_paths(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
                                       tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", os.environ.get("PATH", ""))
    result = modrun.run_module(preflight_facts.main, monkeypatch, capsys, {
        "pci_id": "19e5:d802", "kernel": "k", "install_root": "usr/local/Ascend", "conda_prefix": "/opt/m"})
    assert result["failed"] is True and "usr/local/Ascend" in result["msg"]
