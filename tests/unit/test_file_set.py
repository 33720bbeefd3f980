"""Tests of the file_set module and its module_utils."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import modrun

from ansible_collections.ascendops.gr00t.plugins.filter.file_set import file_set_pending
from ansible_collections.ascendops.gr00t.plugins.module_utils.file_set import (
    current_content, file_diff, missing_directories, pending)
from ansible_collections.ascendops.gr00t.plugins.module_utils.path_facts import look
from ansible_collections.ascendops.gr00t.plugins.modules import (
    ascend_install_facts, file_set, path_facts)


def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, args: dict,
        check: bool = False, diff: bool = False) -> dict:
    args = dict(args, _ansible_check_mode=check, _ansible_diff=diff)
    return modrun.run_module(file_set.main, monkeypatch, capsys, args)


def mode_of(path: Path) -> str:
    return oct(stat.S_IMODE(os.stat(path).st_mode))


# ---------------------------------------------------------------- module_utils


def test_current_content(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x\n")
    assert current_content(str(tmp_path / "f")) == "x\n"
    assert current_content(str(tmp_path / "none")) is None


def test_file_diff_names_an_absent_file() -> None:
    assert file_diff("/a", None, "new") == {"before_header": "/a (absent)", "before": "", "after_header": "/a",
                                            "after": "new"}
    assert file_diff("/a", "old", "new")["before"] == "old"


def test_missing_directories(tmp_path: Path) -> None:
    (tmp_path / "here").mkdir()
    (tmp_path / "file").write_text("")
    assert missing_directories([str(tmp_path / "here"), str(tmp_path / "new"), str(tmp_path / "file")]) == [
        str(tmp_path / "new"), str(tmp_path / "file")]


# ---------------------------------------------------------------- the module


def spec(tmp_path: Path, content: str = "echo hi\n") -> dict:
    return {"directories": [str(tmp_path / "d" / "activate.d")],
            "files": [{"path": str(tmp_path / "d" / "activate.d" / "hook.sh"), "content": content},
                      {"path": str(tmp_path / "d" / "activate.d" / "run.sh"), "content": "run\n", "mode": "0755"}]}


def test_writes_then_changes_nothing(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
                                     tmp_path: Path) -> None:
    first = run(monkeypatch, capsys, spec(tmp_path))
    hook, launcher = tmp_path / "d" / "activate.d" / "hook.sh", tmp_path / "d" / "activate.d" / "run.sh"
    assert first["changed"] and first["created"] == [str(tmp_path / "d" / "activate.d")]
    assert first["written"] == [str(hook), str(launcher)]
    assert hook.read_text() == "echo hi\n" and mode_of(hook) == "0o644" and mode_of(launcher) == "0o755"
    assert mode_of(tmp_path / "d" / "activate.d") == "0o755"
    second = run(monkeypatch, capsys, spec(tmp_path))
    assert not second["changed"] and second["written"] == [] and second["created"] == []


def test_rewrites_only_what_differs(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
                                    tmp_path: Path) -> None:
    run(monkeypatch, capsys, spec(tmp_path))
    launcher = tmp_path / "d" / "activate.d" / "run.sh"
    before = launcher.stat().st_mtime_ns
    result = run(monkeypatch, capsys, spec(tmp_path, "echo changed\n"), diff=True)
    assert result["changed"] and result["written"] == [str(tmp_path / "d" / "activate.d" / "hook.sh")]
    assert result["diff"] == [file_diff(str(tmp_path / "d" / "activate.d" / "hook.sh"), "echo hi\n", "echo changed\n")]
    assert launcher.stat().st_mtime_ns == before


def test_a_mode_that_drifted_is_put_back(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
                                         tmp_path: Path) -> None:
    run(monkeypatch, capsys, spec(tmp_path))
    launcher = tmp_path / "d" / "activate.d" / "run.sh"
    launcher.chmod(0o600)
    result = run(monkeypatch, capsys, spec(tmp_path))
    assert result["changed"] and result["written"] == [] and mode_of(launcher) == "0o755"


def test_check_mode_reports_and_changes_nothing(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
                                                tmp_path: Path) -> None:
    result = run(monkeypatch, capsys, spec(tmp_path), check=True, diff=True)
    assert result["changed"] and len(result["written"]) == 2 and len(result["diff"]) == 2
    assert not (tmp_path / "d").exists()


def test_refuses_a_directory_where_a_file_goes(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
                                               tmp_path: Path) -> None:
    (tmp_path / "d" / "activate.d" / "hook.sh").mkdir(parents=True)
    result = run(monkeypatch, capsys, spec(tmp_path))
    assert result["failed"] and "is a directory" in result["msg"]


def test_refuses_relative_paths(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    result = run(monkeypatch, capsys, {"files": [{"path": "hook.sh", "content": ""}]})
    assert result["failed"] and "hook.sh" in result["msg"]


def test_force_false_writes_only_where_there_is_no_file(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    target = tmp_path / "modality.json"
    args = {"files": [{"path": str(target), "content": "{}\n", "force": False}]}
    first = run(monkeypatch, capsys, args)
    assert first["changed"] and target.read_text() == "{}\n"
    target.write_text('{"mine": 1}\n')
    target.chmod(0o600)
    second = run(monkeypatch, capsys, args, diff=True)
    assert not second["changed"] and second["written"] == [] and second["diff"] == []
    assert target.read_text() == '{"mine": 1}\n' and mode_of(target) == "0o600"


# ---------------------------------------------------------------- told on the controller from a read


def test_a_path_the_read_did_not_cover_is_pending() -> None:
    assert pending([{"path": "/a", "content": "x"}], ["/d"], {}) == ["/d", "/a"]


# Each case changes one thing about a converged tree; the prediction must agree with what the
# module does with the same arguments (check mode), so a skipped write is one it would not make.
CASES = {
    "converged": lambda root: None,
    "content": lambda root: (root / "d" / "a.sh").write_text("echo old\n"),
    "file mode": lambda root: os.chmod(root / "d" / "a.sh", 0o644),
    "missing file": lambda root: (root / "d" / "b.txt").unlink(),
    "directory mode": lambda root: os.chmod(root / "d", 0o700),
    "missing directory": lambda root: [p.unlink() for p in (root / "d").iterdir()] and (root / "d").rmdir(),
    "kept file changed": lambda root: (root / "d" / "keep.json").write_text("{}"),
    "owner": lambda root: os.chown(root / "d" / "b.txt", 1, -1),
    "group": lambda root: os.chown(root / "d", -1, 1),
}


@pytest.mark.skipif(os.geteuid() != 0, reason="owners can be changed by root only")
@pytest.mark.parametrize("case", list(CASES))
def test_the_prediction_agrees_with_the_module(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture) -> None:
    directory = tmp_path / "d"
    args = {"directories": [str(directory)], "owner": "root", "group": "root",
            "files": [{"path": str(directory / "a.sh"), "content": "echo new\n", "mode": "0755"},
                      {"path": str(directory / "b.txt"), "content": "b\n"},
                      {"path": str(directory / "keep.json"), "content": "[]", "force": False}]}
    assert run(monkeypatch, capsys, args)["changed"] is True
    CASES[case](tmp_path)
    states = look([], [], [], files=[str(directory)] + [f["path"] for f in args["files"]])["files"]
    predicted = file_set_pending(args["files"], states, args["directories"], owner="root", group="root")
    result = run(monkeypatch, capsys, args, check=True)
    assert bool(predicted) is result["changed"], (case, predicted, result)
    assert (case in ("converged", "kept file changed")) is (predicted == [])


@pytest.mark.parametrize("main, args", [
    (path_facts.main, {}),
    (ascend_install_facts.main, {"root": "/nonexistent/Ascend"}),
], ids=["path_facts", "ascend_install_facts"])
def test_each_stage_read_reports_the_files_its_write_decides_on(
        main, args: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "a.sh").write_text("echo\n")
    paths = [str(tmp_path), str(tmp_path / "a.sh"), str(tmp_path / "none")]
    result = modrun.run_module(main, monkeypatch, capsys, {**args, "files": paths})
    assert result["files"] == look([], [], [], files=paths)["files"]
    assert result["files"][str(tmp_path / "a.sh")]["exists"] is True
