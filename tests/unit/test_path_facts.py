"""Tests of the path_facts module and its module_utils."""
from __future__ import annotations

import hashlib
import os
import pwd
from pathlib import Path

import pytest
import modrun

from ansible_collections.ascendops.gr00t.plugins.module_utils.path_facts import (
    count_glob, file_state, hash_file, look, read_json, read_text, stat_path)
from ansible_collections.ascendops.gr00t.plugins.modules import path_facts


def test_stat_path(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    assert stat_path(str(tmp_path)) == {"exists": True, "isdir": True}
    assert stat_path(str(tmp_path / "f")) == {"exists": True, "isdir": False}
    assert stat_path(str(tmp_path / "nope")) == {"exists": False, "isdir": False}


def test_stat_path_follows_links(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "dir")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    assert stat_path(str(tmp_path / "link")) == {"exists": True, "isdir": True}
    assert stat_path(str(tmp_path / "dangling")) == {"exists": False, "isdir": False}


def test_count_glob_directories_only_with_a_trailing_slash(tmp_path: Path) -> None:
    (tmp_path / "chunk-000").mkdir()
    (tmp_path / "chunk-001").mkdir()
    (tmp_path / "chunk-002").write_text("a file, not a chunk")
    assert count_glob(f"{tmp_path}/chunk-*/") == 2
    assert count_glob(f"{tmp_path}/chunk-*") == 3
    assert count_glob(f"{tmp_path}/none-*") == 0


def test_count_glob_two_levels(tmp_path: Path) -> None:
    (tmp_path / "snapshots" / "abc").mkdir(parents=True)
    (tmp_path / "snapshots" / "abc" / "config.json").write_text("{}")
    assert count_glob(f"{tmp_path}/snapshots/*/config.json") == 1
    assert count_glob(f"{tmp_path}/snapshots/config.json") == 0


def test_read_json(tmp_path: Path) -> None:
    (tmp_path / "ok.json").write_text('{"fps": 20}')
    (tmp_path / "bad.json").write_text("{not json")
    assert read_json(str(tmp_path / "ok.json")) == {"value": {"fps": 20}, "error": ""}
    assert read_json(str(tmp_path / "missing.json")) == {"value": None, "error": "missing"}
    bad = read_json(str(tmp_path / "bad.json"))
    assert bad["value"] is None and bad["error"]
    assert read_json(str(tmp_path))["error"]  # a directory is not a JSON file


def test_look_keys_by_what_was_asked(tmp_path: Path) -> None:
    found = look([str(tmp_path)], [f"{tmp_path}/*"], [str(tmp_path / "x.json")])
    assert found == {"stat": {str(tmp_path): {"exists": True, "isdir": True}},
                     "glob": {f"{tmp_path}/*": 0},
                     "json": {str(tmp_path / "x.json"): {"value": None, "error": "missing"}},
                     "text": {}, "sha256": {}, "files": {}}


def test_file_state(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x\n")
    os.chmod(tmp_path / "f", 0o750)
    state = file_state(str(tmp_path / "f"))
    assert state["exists"] is True and state["isdir"] is False and state["mode"] == "0750"
    assert state["sha256"] == hashlib.sha256(b"x\n").hexdigest()
    assert state["owner"] == pwd.getpwuid(os.getuid()).pw_name
    assert file_state(str(tmp_path))["isdir"] is True and file_state(str(tmp_path))["sha256"] is None
    assert file_state(str(tmp_path / "none")) == {"exists": False, "isdir": False, "mode": None, "owner": None,
                                                  "group": None, "sha256": None}


def test_read_text(tmp_path: Path) -> None:
    (tmp_path / "record").write_text("Isaac-GR00T.tar.gz\n")
    (tmp_path / "binary").write_bytes(b"\xff\xfe\x00")
    assert read_text(str(tmp_path / "record")) == {"content": "Isaac-GR00T.tar.gz\n", "error": ""}
    assert read_text(str(tmp_path / "missing")) == {"content": None, "error": "missing"}
    assert read_text(str(tmp_path / "binary"))["content"] is None
    assert read_text(str(tmp_path))["error"]  # a directory is not a text file


def test_module_reports_no_change(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
                                  tmp_path: Path) -> None:
    result = modrun.run_module(path_facts.main, monkeypatch, capsys,
                               {"paths": [str(tmp_path)], "globs": [f"{tmp_path}/*/"]})
    assert result["changed"] is False
    assert result["stat"][str(tmp_path)]["isdir"] is True
    assert result["glob"] == {f"{tmp_path}/*/": 0}
    assert result["json"] == {}
    assert result["text"] == {}
    assert result["sha256"] == {}


def test_module_reads_text_files(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
                                 tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'gr00t'\n")
    result = modrun.run_module(path_facts.main, monkeypatch, capsys,
                               {"text_files": [str(tmp_path / "pyproject.toml"), str(tmp_path / "uv.lock")]})
    assert result["text"][str(tmp_path / "pyproject.toml")]["content"].startswith("[project]")
    assert result["text"][str(tmp_path / "uv.lock")] == {"content": None, "error": "missing"}


def test_module_refuses_relative_paths(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    result = modrun.run_module(path_facts.main, monkeypatch, capsys, {"globs": ["data/chunk-*"]})
    assert result["failed"] is True
    assert "data/chunk-*" in result["msg"]


def test_hash_file(tmp_path: Path) -> None:
    (tmp_path / "a.whl").write_bytes(b"wheel")
    assert hash_file(str(tmp_path / "a.whl")) == {"sha256": hashlib.sha256(b"wheel").hexdigest(), "error": ""}
    assert hash_file(str(tmp_path / "none")) == {"sha256": None, "error": "missing"}
    assert hash_file(str(tmp_path))["error"]  # a directory has no content to hash


def test_module_hashes_files(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    big = tmp_path / "big.run"
    big.write_bytes(b"x" * ((1 << 20) * 2 + 5))  # more than one read block
    result = modrun.run_module(path_facts.main, monkeypatch, capsys, {"sha256_files": [str(big)]})
    assert result["sha256"][str(big)] == {"sha256": hashlib.sha256(big.read_bytes()).hexdigest(), "error": ""}
