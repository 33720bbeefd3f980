"""Tests of the offline bundle: pure functions, the bundle_requirements filter, the bundle_check module."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import modrun

from ansible_collections.ascendops.gr00t.plugins.filter.bundle import FilterModule, bundle_requirements, source_wheels
from ansible_collections.ascendops.gr00t.plugins.module_utils.bundle import (
    check_bundle,
    matches,
    merge_manifest,
    normalize_dist,
    pin_name,
    parse_sha256sums,
    problem_messages,
    render_sha256sums,
    scan,
    wheel_pattern,
)
from ansible_collections.ascendops.gr00t.plugins.modules import bundle_check

TOOLKIT = "Ascend-cann-toolkit_9.0.0_linux-aarch64.run"
TORCH_NPU = "wheels/torch_npu-2.7.1.post2-cp310-cp310-manylinux_2_28_aarch64.whl"
PYYAML = "wheels/PyYAML-6.0.2-cp310-cp310-manylinux_2_17_aarch64.manylinux2014_aarch64.whl"
SPEC = {
    "arch": "aarch64", "cann_version": "9.0.0", "driver_version": "25.5.1", "firmware_version": "7.8.0.2.212",
    "vendor_files": [], "miniforge_version": "24.3.0-0", "pip_packages": ["torch_npu==2.7.1.post2", "pyyaml"],
    "single_wheels": ["mx_driving==26.2.0.post2"], "gr00t_tarball": "",
}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_bundle(root: Path, files: dict[str, bytes], listed: dict[str, bytes] | None = None) -> Path:
    """Write `files` under root and a manifest of `listed` (default: the same files)."""
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    listed = files if listed is None else listed
    (root / "SHA256SUMS").write_text(render_sha256sums({name: sha(data) for name, data in listed.items()}))
    return root


def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, **args) -> dict:
    return modrun.run_module(bundle_check.main, monkeypatch, capsys, args)


# ---------------------------------------------------------------- manifests


def test_render_and_parse_round_trip() -> None:
    sums = {"b.run": "b" * 64, "a.run": "a" * 64, "wheels/x-1-py3-none-any.whl": "c" * 64}
    text = render_sha256sums(sums)
    assert text.splitlines()[0] == f"{'a' * 64}  a.run"
    assert parse_sha256sums(text) == sums


def test_parse_rejects_a_bad_line() -> None:
    with pytest.raises(ValueError, match="line 2"):
        parse_sha256sums(f"{'a' * 64}  a.run\nnot a line\n")


# ---------------------------------------------------------------- wheel patterns


@pytest.mark.parametrize("pin,pattern", [
    ("torch_npu==2.7.1.post2", "wheels/torch_npu-2.7.1.post2-*.whl"),
    ("torch-npu==2.7.1.post2", "wheels/torch_npu-2.7.1.post2-*.whl"),
    ("protobuf==3.20.*", "wheels/protobuf-3.20.*-*.whl"),
    ("absl-py", "wheels/absl_py-*.whl"),
    ("numpy>=1.26,<2", "wheels/numpy-*.whl"),
    ("PyYAML[libyaml]==6.0.2 ; python_version >= '3.8'", "wheels/pyyaml-6.0.2-*.whl"),
])
def test_wheel_pattern(pin: str, pattern: str) -> None:
    assert wheel_pattern(pin) == pattern


def test_wheel_pattern_at_the_top_level() -> None:
    assert wheel_pattern("mx-driving==26.2.0.post2", "") == "mx_driving-26.2.0.post2-*.whl"


@pytest.mark.parametrize("pin", ["", "==1.0", "torch @ https://example/torch.whl"])
def test_wheel_pattern_refuses_what_it_cannot_read(pin: str) -> None:
    with pytest.raises(ValueError, match="pip pin"):
        wheel_pattern(pin)


def test_normalize_dist() -> None:
    assert normalize_dist("Torch-NPU") == normalize_dist("torch.npu") == "torch_npu"


def test_matches_normalizes_wheel_names_and_stays_in_its_directory() -> None:
    names = [PYYAML, TORCH_NPU, "torch_npu-2.7.1.post2-cp310-cp310-manylinux_2_28_aarch64.whl", TOOLKIT]
    assert matches("wheels/pyyaml-*.whl", names) == [PYYAML]
    assert matches("wheels/torch_npu-2.7.1.post2-*.whl", names) == [TORCH_NPU]
    assert matches("*.run", names) == [TOOLKIT]
    assert matches("wheels/torch_npu-2.7.1.post4-*.whl", names) == []
    assert matches(TOOLKIT, names) == [TOOLKIT]


# ---------------------------------------------------------------- check_bundle


def test_a_complete_bundle_has_no_problems() -> None:
    present = {TOOLKIT: "a" * 64, TORCH_NPU: "b" * 64}
    result = check_bundle(present, dict(present), [TOOLKIT, "wheels/torch_npu-2.7.1.post2-*.whl"])
    assert result == {"missing": [], "mismatched": [], "unlisted": []}


def test_missing_corrupt_and_unlisted_files() -> None:
    manifest = {TOOLKIT: "a" * 64, TORCH_NPU: "b" * 64, "gone.run": "c" * 64}
    present = {TOOLKIT: "f" * 64, TORCH_NPU: "b" * 64, "extra.tar.gz": "d" * 64}
    required = [TOOLKIT, "wheels/torch_npu-2.7.1.post2-*.whl", "wheels/transformers-4.57.3-*.whl", "gone.run"]
    result = check_bundle(present, manifest, required)
    assert result["missing"] == ["wheels/transformers-4.57.3-*.whl", "gone.run"]
    assert result["mismatched"] == [TOOLKIT]
    assert result["unlisted"] == ["extra.tar.gz"]


def test_merge_manifest_keeps_lines_of_absent_files_and_names_pending_entries() -> None:
    merged, pending = merge_manifest({"new.run": "a" * 64}, {"old.run": "b" * 64},
                                     ["new.run", "old.run", "wheels/six-*.whl"])
    assert merged == {"new.run": "a" * 64, "old.run": "b" * 64}
    assert pending == ["wheels/six-*.whl"]


def test_problem_messages_name_every_file_and_the_fix() -> None:
    manifest = {TOOLKIT: "a" * 64, "gone.run": "c" * 64}
    present = {TOOLKIT: "f" * 64, "extra.whl": "d" * 64}
    result = check_bundle(present, manifest, ["wheels/six-*.whl"])
    messages = problem_messages(result, present, manifest, "/b", "SHA256SUMS",
                                ["missing", "mismatched", "unlisted"])
    assert len(messages) == 4
    assert "wheels/six-*.whl" in messages[0] and "playbooks/bundle.yml" in messages[0]
    assert "gone.run" in messages[1] and "copy these files again" in messages[1]
    assert "f" * 64 in messages[2] and "a" * 64 in messages[2]
    assert "extra.whl" in messages[3] and "sha256sum" in messages[3]
    assert problem_messages(result, present, manifest, "/b", "SHA256SUMS", ["unlisted"]) == messages[3:]


def test_scan_skips_the_manifest_and_hidden_entries(tmp_path: Path) -> None:
    make_bundle(tmp_path, {TOOLKIT: b"t", TORCH_NPU: b"w", ".swap": b"x", ".cache/y.whl": b"y"})
    assert scan(str(tmp_path), "SHA256SUMS") == [TOOLKIT, TORCH_NPU]


# ---------------------------------------------------------------- bundle_requirements


def test_bundle_requirements_for_the_port_versions() -> None:
    groups = bundle_requirements(SPEC)
    assert groups["vendor"] == [
        "Ascend-hdk-910b-npu-driver_25.5.1_linux-aarch64.run", "Ascend-hdk-910b-npu-firmware_7.8.0.2.212.run",
        TOOLKIT, "Ascend-cann-910b-ops_9.0.0_linux-aarch64.run", "Ascend-cann-nnal_9.0.0_linux-aarch64.run"]
    assert groups["miniforge"] == ["Miniforge3-24.3.0-0-Linux-aarch64.sh"]
    assert groups["wheels"] == ["wheels/torch_npu-2.7.1.post2-*.whl", "wheels/pyyaml-*.whl"]
    assert groups["single_wheels"] == ["mx_driving-26.2.0.post2-*.whl"]
    assert groups["gr00t"] == []
    assert FilterModule().filters()["bundle_requirements"] is bundle_requirements


def test_bundle_requirements_without_driver_old_cann_and_gr00t() -> None:
    spec = {**SPEC, "driver_version": "", "firmware_version": "", "cann_version": "8.3.RC1", "arch": "x86_64",
            "vendor_files": ["DrivingSDK-26.2.0.tar.gz", ""], "gr00t_tarball": "Isaac-GR00T-abc.tar.gz"}
    groups = bundle_requirements(spec)
    assert groups["vendor"] == [
        "Ascend-cann-toolkit_8.3.RC1_linux-x86_64.run", "Ascend-cann-kernels-910b_8.3.RC1_linux-x86_64.run",
        "Ascend-cann-nnal_8.3.RC1_linux-x86_64.run", "DrivingSDK-26.2.0.tar.gz"]
    assert groups["miniforge"] == ["Miniforge3-24.3.0-0-Linux-x86_64.sh"]
    assert groups["gr00t"] == ["Isaac-GR00T-abc.tar.gz"]


def test_source_wheels_pick_the_pins_of_source_only_packages() -> None:
    pins = ["torch==2.7.1", "DeepSpeed==0.18.4", "deep-speed-other"]
    assert source_wheels(pins, ["deepspeed"]) == [{"pin": "DeepSpeed==0.18.4", "pattern": "wheels/deepspeed-0.18.4-*.whl"}]
    assert source_wheels(pins, []) == []
    assert pin_name("Torch-NPU==2.7.1.post2") == "torch_npu"


# ---------------------------------------------------------------- the module


def test_module_passes_a_complete_bundle(tmp_path: Path, monkeypatch, capsys) -> None:
    make_bundle(tmp_path, {TOOLKIT: b"toolkit", TORCH_NPU: b"wheel"})
    out = run(monkeypatch, capsys, path=str(tmp_path), required=[TOOLKIT, "wheels/torch_npu-2.7.1.post2-*.whl"])
    assert out["ok"] is True and out["changed"] is False and out["files"] == 2
    assert out["missing"] == out["mismatched"] == out["unlisted"] == out["problems"] == []


def test_module_fails_on_a_missing_file(tmp_path: Path, monkeypatch, capsys) -> None:
    make_bundle(tmp_path, {TOOLKIT: b"toolkit"})
    out = run(monkeypatch, capsys, path=str(tmp_path), required=[TOOLKIT, "wheels/torch_npu-2.7.1.post2-*.whl"])
    assert out["failed"] is True and out["ok"] is False
    assert out["missing"] == ["wheels/torch_npu-2.7.1.post2-*.whl"]
    assert "wheels/torch_npu-2.7.1.post2-*.whl" in out["msg"] and "playbooks/bundle.yml" in out["msg"]


def test_module_fails_on_a_corrupt_file(tmp_path: Path, monkeypatch, capsys) -> None:
    make_bundle(tmp_path, {TOOLKIT: b"toolkit"})
    (tmp_path / TOOLKIT).write_bytes(b"toolkit, cut short")
    out = run(monkeypatch, capsys, path=str(tmp_path), required=[TOOLKIT])
    assert out["failed"] is True and out["mismatched"] == [TOOLKIT]
    assert sha(b"toolkit") in out["msg"] and sha(b"toolkit, cut short") in out["msg"]


def test_module_fails_on_an_unlisted_file(tmp_path: Path, monkeypatch, capsys) -> None:
    make_bundle(tmp_path, {TOOLKIT: b"toolkit", PYYAML: b"yaml"}, listed={TOOLKIT: b"toolkit"})
    out = run(monkeypatch, capsys, path=str(tmp_path), required=["wheels/pyyaml-*.whl"])
    assert out["failed"] is True and out["unlisted"] == [PYYAML] and out["missing"] == []


def test_module_reports_without_failing_outside_fail_on(tmp_path: Path, monkeypatch, capsys) -> None:
    make_bundle(tmp_path, {TOOLKIT: b"toolkit", PYYAML: b"yaml"}, listed={TOOLKIT: b"toolkit"})
    out = run(monkeypatch, capsys, path=str(tmp_path), required=["absent.run"], fail_on=["mismatched"])
    assert "failed" not in out and out["ok"] is False
    assert out["missing"] == ["absent.run"] and out["unlisted"] == [PYYAML] and len(out["problems"]) == 2


def test_module_without_manifest(tmp_path: Path, monkeypatch, capsys) -> None:
    (tmp_path / TOOLKIT).write_bytes(b"toolkit")
    out = run(monkeypatch, capsys, path=str(tmp_path), required=[TOOLKIT])
    assert out["failed"] is True and out["missing"] == ["SHA256SUMS"] and out["unlisted"] == [TOOLKIT]
    assert "has no manifest SHA256SUMS" in out["msg"]


def test_module_refuses_a_bad_manifest_and_a_missing_directory(tmp_path: Path, monkeypatch, capsys) -> None:
    (tmp_path / "SHA256SUMS").write_text("garbage\n")
    out = run(monkeypatch, capsys, path=str(tmp_path))
    assert out["failed"] is True and "line 1" in out["msg"]
    out = run(monkeypatch, capsys, path=str(tmp_path / "absent"))
    assert out["failed"] is True and "not a directory" in out["msg"]


def test_module_updates_the_manifest_once(tmp_path: Path, monkeypatch, capsys) -> None:
    make_bundle(tmp_path, {TOOLKIT: b"toolkit", PYYAML: b"yaml"}, listed={TOOLKIT: b"toolkit", "gone.run": b"g"})
    before = (tmp_path / "SHA256SUMS").read_text()
    out = run(monkeypatch, capsys, path=str(tmp_path), update_manifest=True, fail_on=["mismatched"],
              _ansible_check_mode=True, _ansible_diff=True)
    assert out["changed"] is True and (tmp_path / "SHA256SUMS").read_text() == before
    assert PYYAML in out["diff"]["after"]
    out = run(monkeypatch, capsys, path=str(tmp_path), update_manifest=True, fail_on=["mismatched"])
    assert out["changed"] is True and out["unlisted"] == [] and out["missing"] == ["gone.run"]
    written = parse_sha256sums((tmp_path / "SHA256SUMS").read_text())
    assert written == {TOOLKIT: sha(b"toolkit"), PYYAML: sha(b"yaml"), "gone.run": sha(b"g")}
    out = run(monkeypatch, capsys, path=str(tmp_path), update_manifest=True, fail_on=["mismatched"])
    assert out["changed"] is False


def test_module_check_mode_counts_a_pending_fetch_as_a_change(tmp_path: Path, monkeypatch, capsys) -> None:
    make_bundle(tmp_path, {TOOLKIT: b"toolkit"})
    args = {"path": str(tmp_path), "update_manifest": True, "fail_on": ["mismatched"], "required": ["wheels/six-*.whl"]}
    assert run(monkeypatch, capsys, **args, _ansible_check_mode=True)["changed"] is True
    assert run(monkeypatch, capsys, **args)["changed"] is False


def test_module_refuses_to_update_over_a_corrupt_file(tmp_path: Path, monkeypatch, capsys) -> None:
    make_bundle(tmp_path, {TOOLKIT: b"toolkit"})
    (tmp_path / TOOLKIT).write_bytes(b"other")
    before = (tmp_path / "SHA256SUMS").read_text()
    out = run(monkeypatch, capsys, path=str(tmp_path), update_manifest=True)
    assert out["failed"] is True and "Not rewriting" in out["msg"] and out["mismatched"] == [TOOLKIT]
    assert (tmp_path / "SHA256SUMS").read_text() == before
