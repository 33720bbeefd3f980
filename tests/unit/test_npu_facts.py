"""Tests of the npu_facts module, run against the simulated npu-smi."""
from __future__ import annotations

from pathlib import Path

import pytest
import modrun

from ansible_collections.ascendops.gr00t.plugins.modules import npu_facts


def run_module(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, args: dict) -> dict:
    return modrun.run_module(npu_facts.main, monkeypatch, capsys, args)


def fake_npu_smi(tmp_path: Path, output: str) -> Path:
    script = tmp_path / "npu-smi"
    script.write_text("#!/bin/sh\ncat <<'EOF'\n{0}EOF\n".format(output))
    script.chmod(0o755)
    return script


def test_facts_of_eight_devices(monkeypatch, capsys, npu_smi_sim: Path, sim_state) -> None:
    sim_state(None)
    result = run_module(monkeypatch, capsys, {"npu_smi": str(npu_smi_sim)})
    assert not result.get("failed"), result
    assert result["changed"] is False
    npu = result["ansible_facts"]["npu"]
    assert npu["count"] == 8
    assert npu["npu_smi_version"] == "25.5.1"
    assert [device["id"] for device in npu["devices"]] == list(range(8))
    assert {device["health"] for device in npu["devices"]} == {"OK"}
    assert npu["devices"][0]["bus_id"] == "0000:C1:00.0"
    assert "firmware_version" not in npu["devices"][0]


def test_check_mode_gathers_facts(monkeypatch, capsys, npu_smi_sim: Path, sim_state) -> None:
    sim_state({"devices": [{"id": 0, "bus_id": "0000:C1:00.0", "health": "Critical"}]})
    result = run_module(monkeypatch, capsys, {"npu_smi": str(npu_smi_sim), "_ansible_check_mode": True})
    assert result["changed"] is False
    assert result["ansible_facts"]["npu"]["devices"][0]["health"] == "Critical"


def test_board_adds_versions(monkeypatch, capsys, npu_smi_sim: Path, sim_state) -> None:
    sim_state({
        "npu_smi_version": "25.5.1",
        "firmware_version": "7.8.0.2.212",
        "devices": [
            {"id": 0, "bus_id": "0000:C1:00.0"},
            {"id": 1, "bus_id": "0000:C2:00.0", "firmware_version": "7.1.0.5.220", "compatibility": "Mismatch"},
        ],
    })
    result = run_module(monkeypatch, capsys, {"npu_smi": str(npu_smi_sim), "board": True})
    assert result["changed"] is False
    devices = result["ansible_facts"]["npu"]["devices"]
    versions = [(d["software_version"], d["firmware_version"], d["compatibility"]) for d in devices]
    assert versions == [("25.5.1", "7.8.0.2.212", "OK"), ("25.5.1", "7.1.0.5.220", "Mismatch")]


def test_missing_binary(monkeypatch, capsys, tmp_path: Path) -> None:
    missing = str(tmp_path / "npu-smi")
    result = run_module(monkeypatch, capsys, {"npu_smi": missing})
    assert result["failed"] is True
    assert missing in result["msg"]
    assert "NPU driver is not installed or not on PATH" in result["msg"]
    assert "npu_smi parameter" in result["msg"]


def test_npu_smi_error_gives_hint(monkeypatch, capsys, npu_smi_sim: Path, sim_state) -> None:
    sim_state({"fail": {"code": -8005}})
    result = run_module(monkeypatch, capsys, {"npu_smi": str(npu_smi_sim)})
    assert result["failed"] is True
    assert result["rc"] != 0
    assert "ret is -8005" in result["msg"]
    assert "npu-smi set -t reset -i <id> -c 0" in result["msg"]
    assert "ret is -8005" in result["stdout"]


def test_error_printed_with_rc_zero_gives_hint(monkeypatch, capsys, tmp_path: Path) -> None:
    script = fake_npu_smi(tmp_path, "dcmi get card list failed. ret is -8020\n")
    result = run_module(monkeypatch, capsys, {"npu_smi": str(script)})
    assert result["failed"] is True
    assert "ret is -8020" in result["msg"]
    assert "another process" in result["msg"]


def test_unparsable_output(monkeypatch, capsys, tmp_path: Path) -> None:
    script = fake_npu_smi(tmp_path, "".join("line {0}\n".format(n) for n in range(1, 30)))
    result = run_module(monkeypatch, capsys, {"npu_smi": str(script)})
    assert result["failed"] is True
    assert "cannot parse the output of `npu-smi info`" in result["msg"]
    assert "not npu-smi info output" in result["msg"]
    assert "line 1\n" in result["msg"] and "line 10" in result["msg"]
    assert "line 11" not in result["msg"]


# ---------------------------------------------------------------- required parameter


def test_not_required_missing_binary_reports_absence(monkeypatch, capsys, tmp_path: Path) -> None:
    missing = str(tmp_path / "npu-smi")
    result = run_module(monkeypatch, capsys, {"npu_smi": missing, "required": False})
    assert not result.get("failed"), result
    assert result["changed"] is False
    npu = result["ansible_facts"]["npu"]
    assert npu["present"] is False
    assert "not found" in npu["error"]
    assert missing in npu["error"]
    assert npu["count"] == 0
    assert npu["devices"] == []
    assert npu["npu_smi_version"] is None


def test_not_required_failing_npu_smi_reports_error(monkeypatch, capsys, npu_smi_sim: Path, sim_state) -> None:
    sim_state({"fail": {"code": -8005, "message": "dcmi model initialized failed, because the device is used"}})
    result = run_module(monkeypatch, capsys, {"npu_smi": str(npu_smi_sim), "required": False})
    assert not result.get("failed"), result
    assert result["changed"] is False
    npu = result["ansible_facts"]["npu"]
    assert npu["present"] is True
    assert "-8005" in npu["error"]
    assert "restart" in npu["error"]
    assert npu["count"] == 0
    assert npu["devices"] == []


def test_not_required_board_failure_reports_error(monkeypatch, capsys, tmp_path: Path) -> None:
    script = fake_npu_smi(tmp_path, "dcmi get card list failed. ret is -8020\n")
    result = run_module(monkeypatch, capsys, {"npu_smi": str(script), "required": False, "board": True})
    assert not result.get("failed"), result
    npu = result["ansible_facts"]["npu"]
    assert npu["present"] is True
    assert "-8020" in npu["error"]


def test_not_required_success(monkeypatch, capsys, npu_smi_sim: Path, sim_state) -> None:
    sim_state(None)
    result = run_module(monkeypatch, capsys, {"npu_smi": str(npu_smi_sim), "required": False})
    assert not result.get("failed"), result
    npu = result["ansible_facts"]["npu"]
    assert npu["present"] is True
    assert npu["error"] is None
    assert npu["count"] == 8


def test_success_reports_present_by_default(monkeypatch, capsys, npu_smi_sim: Path, sim_state) -> None:
    sim_state(None)
    result = run_module(monkeypatch, capsys, {"npu_smi": str(npu_smi_sim)})
    npu = result["ansible_facts"]["npu"]
    assert npu["present"] is True
    assert npu["error"] is None


@pytest.mark.parametrize("args", [{}, {"required": True}])
def test_required_missing_binary_still_fails(monkeypatch, capsys, tmp_path: Path, args: dict) -> None:
    missing = str(tmp_path / "npu-smi")
    result = run_module(monkeypatch, capsys, {"npu_smi": missing, **args})
    assert result["failed"] is True
    assert "not found" in result["msg"]
    assert "ansible_facts" not in result


@pytest.mark.parametrize(
    "code, meaning",
    [(-8005, "internal error"), (-8012, "not ready"), (-8020, "used by another process")],
)
def test_error_codes_are_explained(monkeypatch, capsys, npu_smi_sim: Path, sim_state, code: int, meaning: str) -> None:
    sim_state({"fail": {"code": code}})
    result = run_module(monkeypatch, capsys, {"npu_smi": str(npu_smi_sim)})
    assert result["failed"] is True
    assert "ret is {0}".format(code) in result["msg"] and meaning in result["msg"]


def test_facts_of_a3_list_every_chip(monkeypatch, capsys, npu_smi_sim: Path, sim_state) -> None:
    devices = [{"id": 0, "bus_id": "0000:9D:00.0"}, {"id": 1, "bus_id": "0000:99:00.0"}]
    sim_state({"chips_per_npu": 2, "devices": devices})
    result = run_module(monkeypatch, capsys, {"npu_smi": str(npu_smi_sim), "board": True})
    npu = result["ansible_facts"]["npu"]
    assert npu["count"] == 2
    assert [[chip["bus_id"] for chip in device["chips"]] for device in npu["devices"]] == [
        ["0000:9D:00.0", "0000:9F:00.0"], ["0000:99:00.0", "0000:9B:00.0"]]
    assert [device["bus_id"] for device in npu["devices"]] == ["0000:9D:00.0", "0000:99:00.0"]
