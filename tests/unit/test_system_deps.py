"""Tests of system_deps' one read: the package database, the mirror entry, the FFmpeg tools."""
from __future__ import annotations

from pathlib import Path

import pytest
import modrun

from ansible_collections.ascendops.gr00t.plugins.module_utils.system_deps import (dpkg_installed, read_state,
                                                                                  rpm_installed)
from ansible_collections.ascendops.gr00t.plugins.modules import system_deps_facts

# dpkg-query -W -f '${Package} ${db:Status-Abbrev}\n' prints this for an installed package, a
# removed one whose config files remain, and (on stderr, rc 1) nothing for an unknown name.
DPKG_OUT = "python3-apt ii \nffmpeg ii \nlibavcodec-dev rc \nlibc6:amd64 ii \n"
# rpm -q --qf 'installed %{NAME}\n': the missing name is a line of its own.
RPM_OUT = "installed gcc\npackage ffmpeg-devel is not installed\ninstalled make\n"


def test_dpkg_installed_counts_only_ii_and_drops_the_arch() -> None:
    assert dpkg_installed(DPKG_OUT) == {"python3-apt", "ffmpeg", "libc6"}


def test_rpm_installed_skips_the_not_installed_lines() -> None:
    assert rpm_installed(RPM_OUT) == {"gcc", "make"}


class Node:
    """Answers the commands read_state runs, by the command's name."""

    def __init__(self, answers: dict[str, tuple[int, str, str]]) -> None:
        self.answers, self.ran = answers, []

    def __call__(self, argv: list) -> tuple[int, str, str]:
        self.ran.append(argv)
        return self.answers.get(argv[0], (127, "", f"{argv[0]}: command not found"))


def test_apt_node_missing_a_package_and_without_ffmpeg(tmp_path: Path) -> None:
    mirror = tmp_path / "ascendops-mirror.list"
    node = Node({"dpkg-query": (1, DPKG_OUT, "dpkg-query: no packages found matching pkg-config\n"),
                 "pkg-config": (1, "", "Package libavcodec was not found\n")})
    state = read_state(node, "apt", ["ffmpeg", "libavcodec-dev", "pkg-config"], ["libavcodec"], str(mirror))
    assert state["missing"] == ["libavcodec-dev", "pkg-config"]
    assert state["installed"] == ["ffmpeg"]
    assert state["apt_can_dry_run"] is True
    assert state["query_rc"] == 1
    assert state["mirror_entry_exists"] is False
    assert state["pkgconfig"] == {"rc": 1, "stderr_lines": ["Package libavcodec was not found"]}
    assert state["ffmpeg"] == {"rc": 127, "stderr_lines": ["ffmpeg: command not found"]}
    assert node.ran[0][:4] == ["dpkg-query", "-W", "-f", "${Package} ${db:Status-Abbrev}\n"]


def test_converged_dnf_node_with_the_mirror_file_ignored(tmp_path: Path) -> None:
    node = Node({"rpm": (0, "installed gcc\ninstalled make\n", ""), "pkg-config": (0, "", ""),
                 "ffmpeg": (0, "ffmpeg version 5.1\n", "")})
    state = read_state(node, "dnf", ["gcc", "make"], ["libavcodec"], "")
    assert state["missing"] == [] and state["apt_can_dry_run"] is False
    assert state["mirror_entry_exists"] is False
    assert state["pkgconfig"]["rc"] == 0 and state["ffmpeg"]["rc"] == 0


def test_the_mirror_entry_is_reported_and_every_command_runs_once(tmp_path: Path) -> None:
    (tmp_path / "m.list").write_text("deb http://mirror bookworm main\n")
    node = Node({"dpkg-query": (0, "gcc ii \n", "")})
    state = read_state(node, "apt", ["gcc"], ["libavcodec"], str(tmp_path / "m.list"))
    assert [argv[0] for argv in node.ran] == ["dpkg-query", "pkg-config", "ffmpeg"]
    assert state["mirror_entry_exists"] is True


def test_module_on_this_machine_reports_no_change(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    result = modrun.run_module(system_deps_facts.main, monkeypatch, capsys,
                               {"manager": "apt", "packages": ["surely-not-a-package-xyz"]})
    assert result["changed"] is False
    assert result["missing"] == ["surely-not-a-package-xyz"]
