"""Pinned pip requirements: parsing, comparison, pip's errors, the pip_pins module and its filters."""
from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from ansible_collections.ascendops.gr00t.plugins.filter.pip import FilterModule
from ansible_collections.ascendops.gr00t.plugins.module_utils.pip_pins import (
    Pin,
    canonical_name,
    missing_distribution,
    parse_pin,
    parse_pip_list,
    pending_pins,
    pin_problems,
    pin_versions,
    version_matches,
)
from ansible_collections.ascendops.gr00t.plugins.modules import pip_pins
from modrun import run_module

PINS = ["torch==2.7.1", "torch_npu==2.7.1.post2", "protobuf==3.20.*", "numpy", "absl-py"]


@pytest.mark.parametrize("spec, pin", [
    ("torch==2.7.1", Pin("torch==2.7.1", "torch", "2.7.1", False)),
    ("torch_npu==2.7.1.post2", Pin("torch_npu==2.7.1.post2", "torch-npu", "2.7.1.post2", False)),
    ("protobuf==3.20.*", Pin("protobuf==3.20.*", "protobuf", "3.20", True)),
    (" PyYAML ", Pin("PyYAML", "pyyaml", None, False)),
    ("torch==2.7.1+cpu", Pin("torch==2.7.1+cpu", "torch", "2.7.1+cpu", False)),
])
def test_parse_pin(spec: str, pin: Pin) -> None:
    assert parse_pin(spec) == pin


@pytest.mark.parametrize("spec", ["torch>=2.7", "torch==", "==2.7.1", "torch==2.7.1; python_version>'3'",
                                  "torch[extra]==1", "-e .", "torch==2.*.1", ""])
def test_parse_pin_refuses_what_is_not_a_pin(spec: str) -> None:
    with pytest.raises(ValueError, match="not a pin"):
        parse_pin(spec)


def test_canonical_name() -> None:
    assert canonical_name("Torch_NPU") == canonical_name("torch.npu") == canonical_name("torch--npu") == "torch-npu"


@pytest.mark.parametrize("installed, wanted, wildcard, ok", [
    ("2.7.1", "2.7.1", False, True),
    ("2.7.1+cpu", "2.7.1", False, True),
    ("2.7.1+cpu", "2.7.1+cu128", False, False),
    ("2.7.1.post2", "2.7.1.post2", False, True),
    ("2.7.1.post2", "2.7.1-post2", False, True),
    ("2.7.1.post4", "2.7.1.post2", False, False),
    ("2.7.1", "2.7.1.post2", False, False),
    ("1.0", "1.0.0", False, True),
    ("3.20.3", "3.20", True, True),
    ("3.20", "3.20", True, True),
    ("3.2", "3.20", True, False),
    ("4.21.0", "3.20", True, False),
])
def test_version_matches(installed: str, wanted: str, wildcard: bool, ok: bool) -> None:
    assert version_matches(installed, wanted, wildcard) is ok


def test_pending_pins_lists_only_what_differs() -> None:
    have = {"torch": "2.7.1", "torch-npu": "2.7.1.post4", "protobuf": "3.20.3", "absl-py": "2.5.1"}
    assert pending_pins(PINS, have) == [
        {"spec": "torch_npu==2.7.1.post2", "name": "torch-npu", "have": "2.7.1.post4", "want": "2.7.1.post2"},
        {"spec": "numpy", "name": "numpy", "have": None, "want": None},
    ]
    assert pending_pins(PINS, {**have, "torch-npu": "2.7.1.post2", "numpy": "2.4.6"}) == []


def test_pin_problems() -> None:
    assert pin_problems(PINS) == []
    assert pin_problems("torch==2.7.1") == ["expected a list of pins, got 'torch==2.7.1'"]
    problems = pin_problems(["torch>=2", "torch_npu==1", "Torch-NPU==2"])
    assert len(problems) == 2
    assert "'torch>=2' is not a pin" in problems[0]
    assert "torch-npu is pinned twice" in problems[1]


def test_pin_versions() -> None:
    assert pin_versions(PINS)["torch-npu"] == "2.7.1.post2"
    assert pin_versions(PINS)["numpy"] == ""


def test_parse_pip_list() -> None:
    out = json.dumps([{"name": "Cython", "version": "3.3.1"}, {"name": "torch_npu", "version": "2.7.1.post2"}])
    assert parse_pip_list(out) == {"cython": "3.3.1", "torch-npu": "2.7.1.post2"}
    assert parse_pip_list("") == {}


def test_missing_distribution() -> None:
    stderr = ("ERROR: Could not find a version that satisfies the requirement deepspeed==0.18.4 (from versions: none)\n"
              "ERROR: No matching distribution found for deepspeed==0.18.4\n")
    assert missing_distribution(stderr) == "deepspeed==0.18.4"
    dependency = "ERROR: No matching distribution found for tokenizers<=0.23.0,>=0.22.0"
    assert missing_distribution(dependency) == "tokenizers<=0.23.0,>=0.22.0"
    assert missing_distribution("Successfully installed torch-2.7.1") is None


def test_filters_are_registered() -> None:
    filters = FilterModule().filters()
    assert filters["pip_pin_problems"] is pin_problems
    assert filters["pip_pin_versions"] is pin_versions


# ---------------------------------------------------------------- the module, with a fake env python

FAKE_PYTHON = """#!/usr/bin/env python3
import json, os, sys
state = os.environ["FAKE_PIP_STATE"]
with open(state) as fh:
    data = json.load(fh)
args = sys.argv[1:]
if args[:3] == ["-m", "pip", "list"]:
    print(json.dumps([{"name": n, "version": v} for n, v in data["installed"].items()]))
    sys.exit(0)
if args[:3] == ["-m", "pip", "install"]:
    data["calls"].append(args[3:])
    specs = [a for a in args[3:] if not a.startswith("-") and "/" not in a]
    for spec in specs:
        name = spec.split("==")[0]
        if name in data.get("missing", []):
            sys.stderr.write("Looking in indexes: %s\\n" % " ".join(args))
            sys.stderr.write("ERROR: No matching distribution found for %s\\n" % spec)
            with open(state, "w") as fh:
                json.dump(data, fh)
            sys.exit(1)
    for spec in specs:
        name, _, version = spec.partition("==")
        data["installed"][name] = data.get("installs_as", {}).get(name, version.replace(".*", ".0") or "1.0")
    with open(state, "w") as fh:
        json.dump(data, fh)
    sys.exit(0)
sys.exit(2)
"""


@pytest.fixture
def fake_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    python = tmp_path / "python"
    python.write_text(FAKE_PYTHON)
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    state = tmp_path / "state.json"
    monkeypatch.setenv("FAKE_PIP_STATE", str(state))

    def make(installed: dict, **extra) -> tuple[Path, Path]:
        state.write_text(json.dumps({"installed": installed, "calls": [], **extra}))
        return python, state

    return make


def test_module_installs_only_what_differs(fake_env, monkeypatch, capsys) -> None:
    python, state = fake_env({"torch": "2.7.1", "protobuf": "3.20.3", "absl-py": "2.5.1"})
    result = run_module(pip_pins.main, monkeypatch, capsys, {
        "python": str(python), "requirements": PINS, "pip_args": ["--no-index", "--find-links", "/w"]})
    assert result["changed"] is True
    assert [p["spec"] for p in result["pending"]] == ["torch_npu==2.7.1.post2", "numpy"]
    calls = json.loads(state.read_text())["calls"]
    assert calls == [["--disable-pip-version-check", "--no-input", "--no-index", "--find-links", "/w",
                      "torch_npu==2.7.1.post2", "numpy"]]
    assert result["versions"]["torch-npu"] == "2.7.1.post2"


def test_module_converged_env_is_unchanged(fake_env, monkeypatch, capsys) -> None:
    python, state = fake_env({"torch": "2.7.1", "torch_npu": "2.7.1.post2", "protobuf": "3.20.3",
                              "numpy": "2.4.6", "absl-py": "2.5.1"})
    result = run_module(pip_pins.main, monkeypatch, capsys, {"python": str(python), "requirements": PINS})
    assert result["changed"] is False
    assert json.loads(state.read_text())["calls"] == []


def test_module_check_mode_reports_and_installs_nothing(fake_env, monkeypatch, capsys) -> None:
    python, state = fake_env({})
    result = run_module(pip_pins.main, monkeypatch, capsys, {
        "python": str(python), "requirements": PINS, "_ansible_check_mode": True})
    assert result["changed"] is True
    assert len(result["pending"]) == len(PINS)
    assert json.loads(state.read_text())["calls"] == []


def test_module_names_a_missing_distribution(fake_env, monkeypatch, capsys) -> None:
    python, state = fake_env({}, missing=["torch_npu"])
    result = run_module(pip_pins.main, monkeypatch, capsys, {"python": str(python), "requirements": PINS})
    assert result["failed"] is True
    assert result["missing"] == "torch_npu==2.7.1.post2"
    assert result["missing_name"] == "torch_npu"


def test_module_fails_when_pip_leaves_a_difference(fake_env, monkeypatch, capsys) -> None:
    python, dummy = fake_env({}, installs_as={"torch": "2.8.0"})
    result = run_module(pip_pins.main, monkeypatch, capsys, {"python": str(python), "requirements": ["torch==2.7.1"]})
    assert result["failed"] is True
    assert "torch==2.7.1 (has 2.8.0)" in result["msg"]


def test_module_refuses_a_bad_pin_and_a_missing_python(tmp_path, monkeypatch, capsys) -> None:
    result = run_module(pip_pins.main, monkeypatch, capsys, {"python": "/bin/true", "requirements": ["torch>=2"]})
    assert result["failed"] is True and "not a pin" in result["msg"]
    result = run_module(pip_pins.main, monkeypatch, capsys,
                        {"python": str(tmp_path / "nope"), "requirements": ["torch"]})
    assert result["failed"] is True and "create the environment first" in result["msg"]


def test_module_masks_the_password_of_an_index_url(fake_env, monkeypatch, capsys) -> None:
    python, dummy = fake_env({}, missing=["torch_npu"])
    result = run_module(pip_pins.main, monkeypatch, capsys, {
        "python": str(python), "requirements": PINS,
        "pip_args": ["--index-url", "https://ci:Idx5ecret@pypi.example.com/simple"]})
    assert result["failed"] is True
    text = json.dumps(result)
    assert "Idx5ecret" not in text
    assert "pypi.example.com" in text
