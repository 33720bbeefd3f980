"""Tests of the wait for an installer an earlier run left running (module_utils.installer_lock)
and of the reading modules that do it before they read."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Iterator

import pytest
import modrun

from ansible_collections.ascendops.gr00t.plugins.module_utils.installer_lock import (
    lock_held, wait_for_installer, waited_message)
from ansible_collections.ascendops.gr00t.plugins.modules import (
    ascend_install_facts, conda_env_facts, path_facts, preflight_facts)


def hold(lock: Path) -> subprocess.Popen:
    """Hold `lock` the way the artifact role runs an installer: `flock --exclusive LOCK installer`."""
    holder = subprocess.Popen(["flock", "--exclusive", str(lock), "sleep", "30"], start_new_session=True)
    for dummy in range(50):
        if lock_held(str(lock)):
            break
        time.sleep(0.1)
    return holder


def stop(holder: subprocess.Popen) -> None:
    """The installer's child inherits the lock, so the whole group is stopped."""
    os.killpg(holder.pid, signal.SIGKILL)
    holder.wait()


@pytest.fixture(name="held")
def fixture_held(tmp_path: Path) -> Iterator[Path]:
    lock = tmp_path / ".installer.lock"
    holder = hold(lock)
    try:
        yield lock
    finally:
        stop(holder)


def test_lock_held_only_while_another_process_holds_it_exclusively(tmp_path: Path) -> None:
    lock = tmp_path / ".installer.lock"
    assert lock_held(str(lock)) is False
    assert not lock.exists()
    lock.touch()
    assert lock_held(str(lock)) is False


def test_lock_held_while_an_installer_runs(held: Path) -> None:
    assert lock_held(str(held)) is True


def test_a_free_missing_or_empty_lock_needs_no_wait(tmp_path: Path) -> None:
    def no_sleep(seconds: float) -> None:
        raise AssertionError("slept {0} s".format(seconds))

    lock = tmp_path / ".installer.lock"
    assert wait_for_installer(str(lock), 0, sleep=no_sleep, clock=lambda: 7.0) == (0.0, "")
    lock.touch()
    assert wait_for_installer(str(lock), 0, sleep=no_sleep, clock=lambda: 7.0) == (0.0, "")
    assert wait_for_installer("", 0, sleep=no_sleep) == (0.0, "")


def test_the_wait_polls_until_the_timeout_then_says_what_to_do(held: Path) -> None:
    now = [0.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    seconds, message = wait_for_installer(str(held), 5, poll=2, sleep=sleep, clock=lambda: now[0])
    assert slept == [2, 2, 1] and seconds == 5
    assert message.startswith("An installer started by an earlier run still holds {0} after 5 s.".format(held))
    assert "ps -ef | grep -e '\\.run'" in message and "rerun" in message


def test_the_wait_ends_when_the_installer_does(tmp_path: Path) -> None:
    lock = tmp_path / ".installer.lock"
    holder = hold(lock)
    try:
        seconds, message = wait_for_installer(str(lock), 60, poll=0.1, sleep=lambda seconds: stop(holder))
        assert message == "" and seconds < 60
    finally:
        if holder.poll() is None:
            stop(holder)


@pytest.mark.parametrize("main, args", [
    (preflight_facts.main, {"pci_id": "19e5:d802", "kernel": "k", "install_root": "/usr/local/Ascend",
                            "conda_prefix": "/opt/m"}),
    (ascend_install_facts.main, {"root": "/usr/local/Ascend"}),
    (path_facts.main, {"paths": ["/usr/local/Ascend/driver"]}),
    (conda_env_facts.main, {"prefix": "/opt/m", "env_name": "e", "conda_version": "24.3.0",
                            "python_version": "3.10"}),
], ids=["preflight_facts", "ascend_install_facts", "path_facts", "conda_env_facts"])
def test_each_reading_module_fails_before_it_reads_while_an_installer_runs(
        main, args: dict, held: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    result = modrun.run_module(main, monkeypatch, capsys,
                               {**args, "installer_lock": str(held), "installer_timeout": 0})
    assert result["failed"] is True
    assert result["msg"].startswith("An installer started by an earlier run still holds {0}".format(held))
    assert "ansible_facts" not in result


def test_a_wait_is_said_so_a_pause_is_not_taken_for_a_hang() -> None:
    assert waited_message("/var/cache/ascendops/artifacts/.installer.lock", 76.6) == (
        "Waited 77 s for an installer an earlier run left running (it held "
        "/var/cache/ascendops/artifacts/.installer.lock) before reading what is installed.")
