"""Pinned pip requirements: parsing, comparison, pip's errors, the pip_pins module and its filters."""
from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_collections.ascendops.gr00t.plugins.filter.pip import FilterModule
from ansible_collections.ascendops.gr00t.plugins.module_utils.pip_pins import (
    Pin,
    canonical_name,
    editable_points_at,
    is_pin,
    keep_pins,
    missing_distribution,
    parse_install_report,
    parse_pin,
    parse_pip_list,
    pending_pins,
    pin_problems,
    pin_versions,
    requirement_name,
    still_pending,
    version_matches,
    wheel_reasons,
    with_pins,
)
from ansible_collections.ascendops.gr00t.plugins.module_utils.wheel_archive import (
    WheelError,
    installed_record_problems,
    parse_wheel_filename,
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


def test_is_pin() -> None:
    assert all(map(is_pin, PINS))
    assert not is_pin("transformers>=4.51")
    assert not is_pin("accelerate[torch]==1.2")


@pytest.mark.parametrize("spec, name", [
    ("transformers>=4.51,<5", "transformers"),
    ("Torch_NPU==2.7.1.post2", "torch-npu"),
    ("accelerate[torch] ==1.2", "accelerate"),
    ("numpy; python_version >= '3.10'", "numpy"),
    ("gr00t @ file:///opt/gr00t", "gr00t"),
    ("pyyaml", "pyyaml"),
    ("peft (>=0.13)", "peft"),
])
def test_requirement_name(spec: str, name: str) -> None:
    assert requirement_name(spec) == name


@pytest.mark.parametrize("spec", ["-e .", "--pre", "", ">=1", "torch$"])
def test_requirement_name_refuses_what_is_not_a_requirement(spec: str) -> None:
    with pytest.raises(ValueError, match="not a requirement"):
        requirement_name(spec)


def test_keep_pins_holds_what_is_installed_only() -> None:
    have = {"torch": "2.7.1", "torch-npu": "2.7.1.post2"}
    assert keep_pins(["torch", "torch_npu", "torchvision"], have) == ["torch==2.7.1", "torch_npu==2.7.1.post2"]
    assert keep_pins([], have) == []


def test_with_pins_replaces_the_requirements_of_pinned_projects() -> None:
    requirements = ["torch>=2.5", "transformers>=4.51", "Torch-NPU; platform_machine == 'aarch64'"]
    assert with_pins(requirements, ["torch==2.7.1", "torch_npu==2.7.1.post2"]) == [
        "transformers>=4.51", "torch==2.7.1", "torch_npu==2.7.1.post2"]
    assert with_pins(requirements, []) == requirements


REPORT = json.dumps({"version": "1", "pip_version": "24.2", "install": [
    {"download_info": {"url": "file:///w/tokenizers-0.22.1-cp310-linux_aarch64.whl"}, "is_direct": False,
     "requested": False, "metadata": {"name": "Tokenizers", "version": "0.22.1"}},
    {"download_info": {"url": "file:///w/transformers-4.51.3-py3-none-any.whl"}, "is_direct": False,
     "requested": True, "metadata": {"name": "transformers", "version": "4.51.3"}},
]})


def test_parse_install_report() -> None:
    assert parse_install_report(REPORT, {"tokenizers": "0.21.0"}) == [
        {"spec": "tokenizers==0.22.1", "name": "tokenizers", "have": "0.21.0", "want": "0.22.1"},
        {"spec": "transformers==4.51.3", "name": "transformers", "have": None, "want": "4.51.3"},
    ]
    assert parse_install_report(json.dumps({"version": "1", "install": []}), {}) == []


@pytest.mark.parametrize("text", ["", "Would install x-1", json.dumps({"version": "1"}),
                                  json.dumps({"install": [{"metadata": {}}]})])
def test_parse_install_report_refuses_what_is_not_a_report(text: str) -> None:
    with pytest.raises(ValueError, match="not readable"):
        parse_install_report(text, {})


def test_still_pending() -> None:
    pending = parse_install_report(REPORT, {})
    assert still_pending(pending, {"tokenizers": "0.22.1", "transformers": "4.51.3"}) == []
    assert still_pending(pending, {"tokenizers": "0.22.1", "transformers": "4.50.0"}) == [
        {"spec": "transformers==4.51.3", "name": "transformers", "have": "4.50.0", "want": "4.51.3"}]
    assert [p["name"] for p in still_pending(pending, {})] == ["tokenizers", "transformers"]


@pytest.mark.parametrize("records, ok", [
    ([{"url": "file:///opt/gr00t/Isaac-GR00T", "dir_info": {"editable": True}}], True),
    ([{"url": "file:///opt/gr00t/Isaac-GR00T/", "dir_info": {"editable": True}}], True),
    ([{"url": "file:///opt/gr00t/Isaac%2DGR00T", "dir_info": {"editable": True}}], True),
    ([{"url": "file:///opt/gr00t/Isaac-GR00T", "dir_info": {}}], False),
    ([{"url": "file:///opt/gr00t/old/Isaac-GR00T", "dir_info": {"editable": True}}], False),
    ([{"url": "https://example.com/gr00t.tar.gz", "archive_info": {}}, "junk"], False),
    ([], False),
])
def test_editable_points_at(records: list, ok: bool) -> None:
    assert editable_points_at(records, "/opt/gr00t/Isaac-GR00T") is ok


@pytest.mark.parametrize("path, parsed", [
    ("/c/mx_driving-1.0.20260421.1-cp310-cp310-linux_aarch64.whl", ("mx_driving", "1.0.20260421.1")),
    ("torch-2.7.1+cpu-1build-cp310-cp310-manylinux_2_28_aarch64.whl", ("torch", "2.7.1+cpu")),
])
def test_parse_wheel_name(path: str, parsed: tuple) -> None:
    """The module reads the wheel's project and version with wheel_archive's parser."""
    info = parse_wheel_filename(os.path.basename(path))
    assert (info["name"], info["version"]) == parsed


@pytest.mark.parametrize("path", ["/c/mx_driving-1.0.tar.gz", "/c/mx_driving-1.0-py3.whl"])
def test_parse_wheel_name_refuses_another_file(path: str) -> None:
    with pytest.raises(WheelError, match="not a wheel file name"):
        parse_wheel_filename(os.path.basename(path))


@pytest.mark.parametrize("installed, recorded, reasons", [
    ([{"version": "1.0.1", "record_problems": []}], "aa", []),
    ([], "aa", ["not installed"]),
    ([{"version": "1.0", "record_problems": []}], "aa", ["version 1.0 installed"]),
    ([{"version": "1.0.1", "record_problems": []}], "bb", ["another wheel installed last"]),
    ([{"version": "1.0.1", "record_problems": []}], "", ["no hash recorded for the installed wheel"]),
    ([{"version": "1.0.1", "record_problems": ["mx_driving/_C.so is missing"]}], "aa",
     ["mx_driving/_C.so is missing"]),
    ([{"version": "1.0.1", "record_problems": []}, {"version": "1.0", "record_problems": []}], "aa",
     ["installed 2 times (1.0.1, 1.0)"]),
])
def test_wheel_reasons(installed: list, recorded: str, reasons: list) -> None:
    assert wheel_reasons("1.0.1", installed, "aa", recorded) == reasons


def test_a_distribution_without_record_is_installed_again(tmp_path: Path) -> None:
    # pip writes RECORD with every install; without it nothing installed can be checked.
    problems = installed_record_problems(str(tmp_path), None)
    assert problems == ["no RECORD: its installed files cannot be checked"]
    assert wheel_reasons("1.0.1", [{"version": "1.0.1", "record_problems": problems}], "aa", "aa") == problems


def test_reinstall_over_a_distribution_pip_cannot_uninstall() -> None:
    assert pip_pins.reinstall_args([{"has_record": True}]) == ["--force-reinstall"]
    assert pip_pins.reinstall_args([]) == ["--force-reinstall"]
    assert pip_pins.reinstall_args([{"has_record": True}, {"has_record": False}]) == ["--ignore-installed"]


def test_filters_are_registered() -> None:
    filters = FilterModule().filters()
    assert filters["pip_pin_problems"] is pin_problems
    assert filters["pip_pin_versions"] is pin_versions


# ---------------------------------------------------------------- the module, with a fake env python

FAKE_PYTHON = """#!/usr/bin/env python3
import json, os, re, sys
state = os.environ["FAKE_PIP_STATE"]
with open(state) as fh:
    data = json.load(fh)
args = sys.argv[1:]


def save():
    with open(state, "w") as fh:
        json.dump(data, fh)


def name_of(spec):
    return re.match(r"[A-Za-z0-9._-]+", spec).group(0)


if args[0] == "-c":
    if args[2] == "origin":
        print(json.dumps(data.get("origins", {}).get(args[3])))
    elif args[2] == "editable":
        print(json.dumps(data.get("direct_urls", [])))
    else:
        print(json.dumps({"prefix": data["prefix"], "found": data.get("dists", {}).get(args[3], [])}))
    sys.exit(0)
if args[:3] == ["-m", "pip", "list"]:
    print(json.dumps([{"name": n, "version": v} for n, v in data["installed"].items()]))
    sys.exit(0)
if args[:3] == ["-m", "pip", "install"]:
    if data.get("old_pip") and "--report" in args:
        sys.stderr.write("no such option: --dry-run\\n")
        sys.exit(2)
    data["calls"].append(args[3:])
    specs = [a for a in args[3:] if not a.startswith(("-", "/"))]
    for spec in specs:
        if name_of(spec) in data.get("missing", []):
            sys.stderr.write("Looking in indexes: %s\\n" % " ".join(args))
            sys.stderr.write("ERROR: No matching distribution found for %s\\n" % spec)
            save()
            sys.exit(1)
    resolved = {name_of(s): data.get("resolves", {}).get(name_of(s)) or s.partition("==")[2].replace(".*", ".0")
                or "1.0" for s in specs}
    if "--dry-run" in args:
        print(json.dumps({"version": "1", "install": [
            {"metadata": {"name": n, "version": v}, "requested": True}
            for n, v in resolved.items() if data["installed"].get(n) != v]}))
        save()
        sys.exit(0)
    if "-e" in args and "editable_name" in data:
        path = args[args.index("-e") + 1]
        data["direct_urls"] = [{"url": "file://" + path, "dir_info": {"editable": True},
                                "name": data["editable_name"], "version": "0.1"}]
    if "--force-reinstall" in args or "--ignore-installed" in args:
        wheel = os.path.basename(args[-1])
        dist, version = wheel.split("-")[:2]
        # As pip: --force-reinstall uninstalls first, which needs the installed RECORD.
        if "--force-reinstall" in args and any(d["record"] is None for d in data.get("dists", {}).get(dist, [])):
            sys.stderr.write("error: uninstall-no-record-file\\n")
            sys.exit(1)
        data.setdefault("dists", {})[dist] = [{"version": version, "site": data["prefix"], "record": ""}]
    for name, version in resolved.items():
        data["installed"][name] = data.get("installs_as", {}).get(name, version)
    save()
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
        state.write_text(json.dumps({"installed": installed, "calls": [], "prefix": str(tmp_path / "env"), **extra}))
        return python, state

    return make


def test_module_installs_what_differs_holding_the_rest(fake_env, monkeypatch, capsys) -> None:
    python, state = fake_env({"torch": "2.7.1", "protobuf": "3.20.3", "absl-py": "2.5.1"})
    result = run_module(pip_pins.main, monkeypatch, capsys, {
        "python": str(python), "requirements": PINS, "pip_args": ["--no-index", "--find-links", "/w"]})
    assert result["changed"] is True
    assert [p["spec"] for p in result["pending"]] == ["torch_npu==2.7.1.post2", "numpy"]
    # The satisfied pins go along, so pip keeps them while it resolves the others.
    calls = json.loads(state.read_text())["calls"]
    assert calls == [["--disable-pip-version-check", "--no-input", "--no-index", "--find-links", "/w", *PINS]]
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
    result = run_module(pip_pins.main, monkeypatch, capsys, {"python": "/bin/true", "requirements": ["-e ."]})
    assert result["failed"] is True and "'-e .' is not a requirement" in result["msg"]
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


# ---------------------------------------------------------------- requirements pip resolves

RESOLVED = ["transformers>=4.51,<5", "torch>=2.5", "deepspeed==0.18.4"]


def test_module_asks_pip_for_requirements_that_are_not_pins(fake_env, monkeypatch, capsys) -> None:
    python, state = fake_env({"torch": "2.7.1", "deepspeed": "0.18.4"}, resolves={"transformers": "4.51.3"})
    result = run_module(pip_pins.main, monkeypatch, capsys, {
        "python": str(python), "requirements": RESOLVED, "keep": ["torch", "torchvision"], "pip_args": ["--no-index"]})
    assert result["changed"] is True
    assert result["kept"] == ["torch==2.7.1"]
    assert result["requirements"] == ["transformers>=4.51,<5", "deepspeed==0.18.4", "torch==2.7.1"]
    assert result["pending"] == [{"spec": "transformers==4.51.3", "name": "transformers", "have": None,
                                  "want": "4.51.3"}]
    assert result["versions"]["transformers"] == "4.51.3"
    dry_run, run = json.loads(state.read_text())["calls"]
    assert dry_run == ["--disable-pip-version-check", "--no-input", "--dry-run", "--quiet", "--report", "-",
                       "--no-index", *result["requirements"]]
    assert run == ["--disable-pip-version-check", "--no-input", "--no-index", *result["requirements"]]


def test_module_leaves_resolved_requirements_alone_when_pip_would_install_nothing(fake_env, monkeypatch,
                                                                                  capsys) -> None:
    python, state = fake_env({"transformers": "4.51.3", "torch": "2.7.1", "deepspeed": "0.18.4"},
                             resolves={"transformers": "4.51.3", "torch": "2.7.1"})
    result = run_module(pip_pins.main, monkeypatch, capsys, {"python": str(python), "requirements": RESOLVED})
    assert result["changed"] is False and result["pending"] == []
    assert len(json.loads(state.read_text())["calls"]) == 1  # the dry run only


def test_module_check_mode_reports_what_pip_would_install(fake_env, monkeypatch, capsys) -> None:
    python, state = fake_env({}, resolves={"transformers": "4.51.3", "torch": "2.7.1"})
    result = run_module(pip_pins.main, monkeypatch, capsys, {
        "python": str(python), "requirements": RESOLVED, "_ansible_check_mode": True})
    assert result["changed"] is True
    assert [p["spec"] for p in result["pending"]] == ["transformers==4.51.3", "torch==2.7.1", "deepspeed==0.18.4"]
    assert ["--dry-run" in call for call in json.loads(state.read_text())["calls"]] == [True]


def test_module_names_the_pip_it_needs_for_a_report(fake_env, monkeypatch, capsys) -> None:
    python, dummy = fake_env({}, old_pip=True)
    result = run_module(pip_pins.main, monkeypatch, capsys, {"python": str(python), "requirements": RESOLVED})
    assert result["failed"] is True and "pip 22.2 or later" in result["msg"]


def test_module_fails_when_pip_installs_other_versions_than_it_reported(fake_env, monkeypatch, capsys) -> None:
    python, dummy = fake_env({}, resolves={"transformers": "4.51.3"}, installs_as={"transformers": "4.50.0"})
    result = run_module(pip_pins.main, monkeypatch, capsys, {"python": str(python), "requirements": RESOLVED})
    assert result["failed"] is True
    assert "transformers==4.51.3 (has 4.50.0)" in result["msg"]


def test_module_masks_the_password_of_a_requirement_url(fake_env, monkeypatch, capsys) -> None:
    python, dummy = fake_env({}, missing=["gr00t"])
    result = run_module(pip_pins.main, monkeypatch, capsys, {
        "python": str(python), "requirements": ["gr00t @ https://ci:Req5ecret@git.example.com/gr00t.tar.gz"]})
    assert result["failed"] is True
    assert "Req5ecret" not in json.dumps(result)


def test_module_refuses_keep_without_requirements(fake_env, monkeypatch, capsys) -> None:
    python, dummy = fake_env({})
    result = run_module(pip_pins.main, monkeypatch, capsys, {"python": str(python), "editable": "/p", "keep": ["torch"]})
    assert result["failed"] is True and "keep applies to requirements only" in result["msg"]


# ---------------------------------------------------------------- an editable project


def test_module_installs_a_project_editable_once(fake_env, tmp_path, monkeypatch, capsys) -> None:
    project = tmp_path / "Isaac-GR00T"
    project.mkdir()
    python, state = fake_env({}, editable_name="gr00t", direct_urls=[
        {"url": "file:///old/Isaac-GR00T", "dir_info": {"editable": True}, "name": "gr00t", "version": "0.1"}])
    args = {"python": str(python), "editable": str(project), "pip_args": ["--no-deps", "--no-build-isolation"]}
    result = run_module(pip_pins.main, monkeypatch, capsys, args)
    assert result["changed"] is True and result["versions"] == {"gr00t": "0.1"}
    assert json.loads(state.read_text())["calls"] == [
        ["--disable-pip-version-check", "--no-input", "--no-deps", "--no-build-isolation", "-e", str(project)]]
    again = run_module(pip_pins.main, monkeypatch, capsys, args)
    assert again["changed"] is False and again["pending"] == []
    assert len(json.loads(state.read_text())["calls"]) == 1


def test_module_reports_where_the_env_imports_the_project_from(fake_env, tmp_path, monkeypatch, capsys) -> None:
    origin = str(tmp_path / "gr00t" / "__init__.py")
    python, dummy = fake_env({}, origins={"gr00t": origin}, direct_urls=[
        {"url": "file://" + str(tmp_path), "dir_info": {"editable": True}, "name": "gr00t", "version": "0.1"}])
    args = {"python": str(python), "editable": str(tmp_path)}
    assert run_module(pip_pins.main, monkeypatch, capsys, dict(args, import_name="gr00t"))["origin"] == origin
    assert run_module(pip_pins.main, monkeypatch, capsys, dict(args, import_name="other"))["origin"] is None
    assert "origin" not in run_module(pip_pins.main, monkeypatch, capsys, args)


def test_module_check_mode_reports_an_editable_install(fake_env, tmp_path, monkeypatch, capsys) -> None:
    python, state = fake_env({})
    result = run_module(pip_pins.main, monkeypatch, capsys, {
        "python": str(python), "editable": str(tmp_path), "_ansible_check_mode": True})
    assert result["changed"] is True
    assert result["pending"][0]["reasons"] == [f"no distribution is installed editable from {tmp_path}"]
    assert json.loads(state.read_text())["calls"] == []


def test_module_fails_when_no_distribution_records_the_editable_install(fake_env, tmp_path, monkeypatch,
                                                                        capsys) -> None:
    python, dummy = fake_env({})
    result = run_module(pip_pins.main, monkeypatch, capsys, {"python": str(python), "editable": str(tmp_path)})
    assert result["failed"] is True and "direct_url.json" in result["msg"]


# ---------------------------------------------------------------- the query, in a real interpreter


def query(*args: str):
    return json.loads(subprocess.run([sys.executable, "-c", pip_pins.QUERY, *args], check=True,
                                     capture_output=True, text=True).stdout)


def test_query_reads_a_real_environment(tmp_path: Path) -> None:
    found = query("dist", "PyTest")
    assert found["prefix"] == sys.prefix
    assert [d["version"] for d in found["found"]] == [pytest.__version__]
    assert "pytest/__init__.py" in found["found"][0]["record"]
    assert installed_record_problems(found["found"][0]["site"], found["found"][0]["record"]) == []
    assert query("dist", "no-such-project")["found"] == []
    # A distribution whose RECORD is gone reads as null, not as an empty RECORD.
    (tmp_path / "gone-1.0.dist-info").mkdir()
    (tmp_path / "gone-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: gone\nVersion: 1.0\n")
    gone = json.loads(subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(tmp_path)!r}); "
                                      f"exec(compile({pip_pins.QUERY!r}, 'q', 'exec'))", "dist", "gone"],
                                     check=True, capture_output=True, text=True).stdout)
    assert [d["record"] for d in gone["found"]] == [None]
    assert all({"url", "name", "version"} <= set(record) for record in query("editable"))
    assert query("origin", "pytest") == pytest.__file__
    assert query("origin", "no_such_package") is None


# ---------------------------------------------------------------- a local wheel

WHEEL = "mx_driving-1.0.20260421.1-cp310-cp310-linux_aarch64.whl"


def test_module_installs_a_wheel_and_records_its_hash(fake_env, tmp_path, monkeypatch, capsys) -> None:
    wheel = tmp_path / WHEEL
    wheel.write_bytes(b"wheel one")
    python, state = fake_env({}, dists={"mx_driving": [{"version": "1.0.20260421", "site": str(tmp_path),
                                                        "record": ""}]})
    args = {"python": str(python), "wheel": str(wheel), "pip_args": ["--no-index"]}
    result = run_module(pip_pins.main, monkeypatch, capsys, args)
    assert result["changed"] is True
    assert result["pending"][0]["reasons"] == ["version 1.0.20260421 installed", "no hash recorded for the installed wheel"]
    assert result["versions"] == {"mx-driving": "1.0.20260421.1"}
    assert json.loads(state.read_text())["calls"] == [
        ["--disable-pip-version-check", "--no-input", "--no-index", "--force-reinstall", "--no-deps", str(wheel)]]
    record = tmp_path / "env" / ".ascendops" / "mx_driving.sha256"
    assert result["state"] == str(record)
    assert record.read_text() == hashlib.sha256(b"wheel one").hexdigest() + "\n"
    assert stat.S_IMODE(record.stat().st_mode) == 0o644

    assert run_module(pip_pins.main, monkeypatch, capsys, args)["changed"] is False
    # Same version, another build (another patcher source): installed again.
    wheel.write_bytes(b"wheel two")
    again = run_module(pip_pins.main, monkeypatch, capsys, args)
    assert again["changed"] is True and again["pending"][0]["reasons"] == ["another wheel installed last"]
    assert record.read_text() == hashlib.sha256(b"wheel two").hexdigest() + "\n"


def test_module_reinstalls_a_wheel_whose_files_changed(fake_env, tmp_path, monkeypatch, capsys) -> None:
    wheel = tmp_path / WHEEL
    wheel.write_bytes(b"wheel")
    site = tmp_path / "site"
    (site / "mx_driving").mkdir(parents=True)
    (site / "mx_driving" / "_C.so").write_bytes(b"changed")
    digest = base64.urlsafe_b64encode(hashlib.sha256(b"built").digest()).rstrip(b"=").decode()
    (tmp_path / "env" / ".ascendops").mkdir(parents=True)
    (tmp_path / "env" / ".ascendops" / "mx_driving.sha256").write_text(hashlib.sha256(b"wheel").hexdigest() + "\n")
    python, state = fake_env({}, dists={"mx_driving": [
        {"version": "1.0.20260421.1", "site": str(site), "record": f"mx_driving/_C.so,sha256={digest},5\n"}]})
    result = run_module(pip_pins.main, monkeypatch, capsys, {
        "python": str(python), "wheel": str(wheel), "_ansible_check_mode": True})
    assert result["changed"] is True
    assert result["pending"][0]["reasons"] == ["mx_driving/_C.so differs from what was installed"]
    assert json.loads(state.read_text())["calls"] == []


def test_module_repairs_a_wheel_install_without_record(fake_env, tmp_path, monkeypatch, capsys) -> None:
    wheel = tmp_path / WHEEL
    wheel.write_bytes(b"wheel")
    (tmp_path / "env" / ".ascendops").mkdir(parents=True)
    (tmp_path / "env" / ".ascendops" / "mx_driving.sha256").write_text(hashlib.sha256(b"wheel").hexdigest() + "\n")
    python, state = fake_env({}, dists={"mx_driving": [
        {"version": "1.0.20260421.1", "site": str(tmp_path), "record": None}]})
    args = {"python": str(python), "wheel": str(wheel), "pip_args": ["--no-index"]}
    result = run_module(pip_pins.main, monkeypatch, capsys, args)
    assert result["changed"] is True
    assert result["pending"][0]["reasons"] == ["no RECORD: its installed files cannot be checked"]
    assert json.loads(state.read_text())["calls"] == [
        ["--disable-pip-version-check", "--no-input", "--no-index", "--ignore-installed", "--no-deps", str(wheel)]]
    assert run_module(pip_pins.main, monkeypatch, capsys, args)["changed"] is False


def test_module_wheel_not_there_yet(fake_env, tmp_path, monkeypatch, capsys) -> None:
    python, state = fake_env({})
    args = {"python": str(python), "wheel": str(tmp_path / WHEEL)}
    result = run_module(pip_pins.main, monkeypatch, capsys, dict(args, _ansible_check_mode=True))
    assert result["changed"] is True and result["sha256"] is None
    result = run_module(pip_pins.main, monkeypatch, capsys, args)
    assert result["failed"] is True and "stage or build it first" in result["msg"]
    result = run_module(pip_pins.main, monkeypatch, capsys, {"python": str(python), "wheel": str(tmp_path / "x.zip")})
    assert result["failed"] is True and "not a wheel file name" in result["msg"]
