"""Tests of the simulated vendor installers written by tests/sim/make_artifacts.py.

The installers run as the current user and always with --install-path inside a temporary
directory; ASCEND_SIM_SYSROOT points their system files (/etc, /var/log) there as well.
"""

from __future__ import annotations

import hashlib
import os
import platform
import signal
import subprocess
import sys
from pathlib import Path

import pytest

GENERATOR = Path(__file__).resolve().parents[2] / "tests" / "sim" / "make_artifacts.py"
ARCH = {"amd64": "x86_64", "arm64": "aarch64"}.get(platform.machine().lower(), platform.machine())
CANN = "9.0.0"
OLD_CANN = "8.5.0"
OLDEST_CANN = "8.3.0"
DRIVER = "25.5.1"
NEWER_DRIVER = "26.0.rc1"
FIRMWARE = "7.8.0.6.201"

pytestmark = pytest.mark.skipif(ARCH not in ("x86_64", "aarch64"), reason="no Ascend packages for this machine")


def generate(dest: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(GENERATOR), "--dest", str(dest), *extra], check=True, capture_output=True, text=True
    )


def toolkit(version: str = CANN) -> str:
    return f"Ascend-cann-toolkit_{version}_linux-{ARCH}.run"


def ops(version: str = CANN) -> str:
    return f"Ascend-cann-910b-ops_{version}_linux-{ARCH}.run"


def nnal(version: str = CANN) -> str:
    return f"Ascend-cann-nnal_{version}_linux-{ARCH}.run"


def driver(version: str = DRIVER) -> str:
    """The HDK spells x86_64 as x86-64 in its file names."""
    return f"Ascend-hdk-910b-npu-driver_{version}_linux-{ARCH.replace('x86_64', 'x86-64')}.run"


FIRMWARE_RUN = f"Ascend-hdk-910b-npu-firmware_{FIRMWARE}.run"
EXTRA = ("--extra-cann-version", OLD_CANN, OLDEST_CANN)


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("artifacts")
    generate(dest, *EXTRA)
    return dest


@pytest.fixture(scope="module")
def newer_driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("artifacts-newer-driver")
    generate(dest, "--driver-version", NEWER_DRIVER)
    return dest


class Node:
    """An install path and a system root in a temporary directory, and a way to run installers there."""

    def __init__(self, artifacts: Path, root: Path) -> None:
        self.artifacts = artifacts
        self.path = root / "Ascend"
        self.sysroot = root / "sysroot"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND_")}
        self.env.update(
            ASCEND_SIM_SYSROOT=str(self.sysroot), ASCEND_SIM_SKIP_KERNEL_CHECK="1", ASCEND_SIM_USER_CHECK="0"
        )

    def run(
        self, package: str, *args: str, env: dict[str, str] | None = None, path: bool = True
    ) -> subprocess.CompletedProcess[str]:
        argv = ["bash", str(self.artifacts / package), *args]
        if path:
            argv.append(f"--install-path={self.path}")
        return subprocess.run(
            argv, env={**self.env, **(env or {})}, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=30, check=False
        )

    def ok(self, package: str, *args: str, env: dict[str, str] | None = None, rc: int = 0) -> str:
        res = self.run(package, *args, env=env)
        assert res.returncode == rc, res.stdout + res.stderr
        return res.stdout

    def source(self, script: Path, *names: str) -> dict[str, str]:
        """Source script under `set -u` in a clean bash and return the named variables."""
        shown = "".join(f'printf "%s=%s\\n" {n} "${{{n}:-}}"; ' for n in names)
        res = subprocess.run(
            ["bash", "-c", f'set -eu; . "{script}"; {shown}'],
            capture_output=True,
            text=True,
            check=True,
            env={"PATH": "/usr/bin:/bin"},
        )
        return dict(line.split("=", 1) for line in res.stdout.splitlines())


@pytest.fixture
def node(artifacts: Path, tmp_path: Path) -> Node:
    return Node(artifacts, tmp_path)


def info(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


# ---------------------------------------------------------------- generator


def test_manifest_lists_every_file_sorted(artifacts: Path) -> None:
    lines = (artifacts / "SHA256SUMS").read_text().splitlines()
    entries = [line.split("  ", 1) for line in lines]
    names = [name for dummy, name in entries]
    assert names == sorted(names)
    on_disk = sorted(p.name for p in artifacts.iterdir() if p.name != "SHA256SUMS")
    assert names == on_disk
    for digest, name in entries:
        assert digest == hashlib.sha256((artifacts / name).read_bytes()).hexdigest()


def test_generator_is_deterministic_and_keeps_unchanged_files(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    generate(first, *EXTRA)
    generate(second, *EXTRA)
    assert sorted(p.name for p in first.iterdir()) == sorted(p.name for p in second.iterdir())
    for p in first.iterdir():
        assert p.read_bytes() == (second / p.name).read_bytes(), p.name
    for p in first.iterdir():
        os.utime(p, ns=(1_000_000_000, 1_000_000_000))
    out = generate(first, *EXTRA).stdout
    assert "wrote" not in out
    assert all(p.stat().st_mtime_ns == 1_000_000_000 for p in first.iterdir())


def test_generator_names_and_headers(artifacts: Path) -> None:
    names = {p.name for p in artifacts.iterdir()}
    assert {toolkit(), ops(), nnal(), driver(), FIRMWARE_RUN, ops(OLD_CANN)} <= names
    assert f"Ascend-cann-kernels-910b_{OLDEST_CANN}_linux-{ARCH}.run" in names
    assert f"Ascend-cann-910b-ops_{OLDEST_CANN}_linux-{ARCH}.run" not in names
    for name in names - {"SHA256SUMS"}:
        head = (artifacts / name).read_text().splitlines()[:3]
        assert "# SIMULATED Ascend installer (test double)" in head
        assert os.access(artifacts / name, os.X_OK)


# ---------------------------------------------------------------- command line


def test_unknown_flag_and_missing_action_fail(node: Node) -> None:
    assert node.run(toolkit(), "--install", "--bogus").returncode == 1
    assert node.run(toolkit(), "--full").returncode == 1
    res = node.run(toolkit(), "--quiet")
    assert res.returncode == 1 and "no operation" in res.stdout
    assert node.run(toolkit(), "--install", "--uninstall").returncode == 1
    assert not node.path.exists()


def test_check_version_help(node: Node, tmp_path: Path) -> None:
    res = node.run(toolkit(), "--check", path=False)
    assert res.returncode == 0 and "ok" in res.stdout
    assert node.run(driver(), "--version", path=False).stdout.strip() == DRIVER
    assert "--install-path" in node.run(FIRMWARE_RUN, "--help", path=False).stdout
    broken = tmp_path / toolkit()
    broken.write_text((node.artifacts / toolkit()).read_text().replace("cann-%s", "cann_%s", 1))
    node.artifacts = tmp_path
    assert node.run(toolkit(), "--check", path=False).returncode == 1
    assert node.run(toolkit(), "--install").returncode == 1
    assert not node.path.exists()


def test_noexec_extract(node: Node, tmp_path: Path) -> None:
    out = tmp_path / "x"
    res = node.run(nnal(), "--noexec", f"--extract={out}", path=False)
    assert res.returncode == 0, res.stdout
    assert info(out / "Ascend-cann-nnal" / "package.info")["version"] == CANN
    assert node.run(nnal(), f"--extract={out}", path=False).returncode == 1


def test_quiet_prints_one_line(node: Node) -> None:
    out = node.ok(toolkit(), "--install", "--quiet")
    assert len(out.splitlines()) == 1 and "success" in out
    assert "[simulated]" in node.ok(toolkit(), "--uninstall")


@pytest.mark.skipif(os.geteuid() == 0, reason="needs a non-root user")
def test_non_root_needs_install_path(node: Node) -> None:
    res = node.run(toolkit(), "--install", path=False)
    assert res.returncode == 1 and "--install-path" in res.stdout


# ---------------------------------------------------------------- CANN


def test_toolkit_install_layout_and_env(node: Node) -> None:
    node.ok(toolkit(), "--install", "--quiet")
    home = node.path / f"cann-{CANN}"
    for sub in ("bin", "lib64", "python/site-packages", "set_env.sh"):
        assert (home / sub).exists(), sub
    record = info(home / f"{ARCH}-linux" / "ascend_toolkit_install.info")
    assert record == {
        "package_name": "Ascend-cann-toolkit",
        "version": CANN,
        "arch": ARCH,
        "os": "linux",
        "path": str(home),
    }
    assert os.readlink(node.path / "cann") == f"cann-{CANN}"
    assert os.readlink(node.path / "ascend-toolkit" / "latest") == f"../cann-{CANN}"
    assert info(node.path / "ascend_cann_install.info") == {"Install_Path": str(node.path), "Version": CANN}
    assert not node.sysroot.exists()
    names = (
        "ASCEND_TOOLKIT_HOME",
        "ASCEND_HOME_PATH",
        "ASCEND_OPP_PATH",
        "ASCEND_AICPU_PATH",
        "TOOLCHAIN_HOME",
        "LD_LIBRARY_PATH",
        "PYTHONPATH",
        "PATH",
    )
    for script in (home / "set_env.sh", node.path / "ascend-toolkit" / "set_env.sh"):
        env = node.source(script, *names)
        assert env["ASCEND_TOOLKIT_HOME"] == env["ASCEND_HOME_PATH"] == str(home)
        assert env["ASCEND_OPP_PATH"] == f"{home}/opp"
        assert env["LD_LIBRARY_PATH"].startswith(f"{home}/lib64") and not env["LD_LIBRARY_PATH"].endswith(":")
        assert env["PYTHONPATH"].startswith(f"{home}/python/site-packages")
        assert env["PATH"].startswith(f"{home}/bin:") and env["PATH"].endswith(":/usr/bin:/bin")
    log = node.path / "ascend_seclog" / "ascend_toolkit_install.log"
    assert "install success" in log.read_text()


def test_same_version_reinstall_is_a_no_op(node: Node) -> None:
    node.ok(toolkit(), "--install")
    record = node.path / f"cann-{CANN}" / f"{ARCH}-linux" / "ascend_toolkit_install.info"
    before = record.stat().st_mtime_ns
    assert "already installed" in node.ok(toolkit(), "--install", "--quiet")
    assert record.stat().st_mtime_ns == before
    res = node.run(toolkit(OLD_CANN), "--install")
    assert res.returncode == 1 and "--upgrade" in res.stdout


def test_ops_requires_toolkit_of_same_version(node: Node) -> None:
    res = node.run(ops(), "--install")
    assert res.returncode == 1 and "toolkit" in res.stdout
    node.ok(toolkit(OLD_CANN), "--install")
    assert node.run(ops(), "--install").returncode == 1
    node.ok(toolkit(), "--upgrade")
    node.ok(ops(), "--install")
    opp = node.path / f"cann-{CANN}" / "opp"
    assert (opp / "built-in/op_impl/ai_core/tbe/kernel/ascend910b/sim_kernels.info").is_file()
    record = node.path / f"cann-{CANN}" / f"{ARCH}-linux" / "ascend_ops_install.info"
    assert info(record)["version"] == CANN
    assert not (opp / "ascend910b_ops_install.info").exists()


def test_nnal_requires_sourced_set_env(node: Node) -> None:
    node.ok(toolkit(), "--install")
    res = node.run(nnal(), "--install")
    assert res.returncode == 1 and "please source set_env.sh" in res.stdout
    node.ok(nnal(), "--install", env={"ASCEND_TOOLKIT_HOME": str(node.path / f"cann-{CANN}")})
    atb = node.path / "nnal" / "atb"
    assert (atb / CANN / "version.info").read_text() == (
        f"Ascend-cann-atb : {CANN}\nAscend-cann-atb Version : {CANN}.B120\n"
    )
    assert not list(atb.glob("*/*_install.info"))
    assert os.readlink(atb / "latest") == CANN
    assert node.source(atb / "set_env.sh", "ATB_HOME_PATH")["ATB_HOME_PATH"].startswith(str(atb / CANN))
    node.ok(nnal(), "--uninstall")
    assert not (node.path / "nnal").exists()


def test_nnal_refuses_to_install_over_an_existing_tree(node: Node) -> None:
    """The nnal installer stops on any nnal tree, of this version or left half-way."""
    env = {"ASCEND_TOOLKIT_HOME": str(node.path / f"cann-{CANN}")}
    node.ok(toolkit(), "--install")
    node.ok(nnal(), "--install", env=env)
    res = node.run(nnal(), "--install", "--quiet", env=env)
    assert res.returncode == 1 and "The installation directory exists, uninstall first" in res.stdout
    node.ok(nnal(), "--uninstall")
    (node.path / "nnal" / "atb" / CANN / "atb").mkdir(parents=True)
    res = node.run(nnal(), "--install", env=env)
    assert res.returncode == 1 and "uninstall first" in res.stdout
    node.ok(nnal(), "--uninstall")
    node.ok(nnal(), "--install", env=env)


def test_nnal_set_env_takes_the_abi_or_guesses_it_with_python3(node: Node, tmp_path: Path) -> None:
    node.ok(toolkit(), "--install")
    node.ok(nnal(), "--install", env={"ASCEND_TOOLKIT_HOME": str(node.path / f"cann-{CANN}")})
    script = node.path / "nnal" / "atb" / "set_env.sh"
    home = node.path / "nnal" / "atb" / CANN / "atb"

    def atb_home(args: str, path: str) -> str:
        res = subprocess.run(["sh", "-c", f'set -- {args}; . "{script}"; echo "$ATB_HOME_PATH"'],
                             capture_output=True, text=True, check=True, env={"PATH": path})
        return res.stdout.strip()

    # No python3 with torch first on PATH: the guess is the old ABI, wrong for torch 2.7.1 wheels.
    assert atb_home("", "/usr/bin:/bin") == f"{home}/cxx_abi_0"
    assert atb_home("--cxx_abi=1", "/usr/bin:/bin") == f"{home}/cxx_abi_1"
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "python3").write_text("#!/bin/sh\nexit 0\n")
    (fake / "python3").chmod(0o755)
    assert atb_home("", f"{fake}:/usr/bin:/bin") == f"{home}/cxx_abi_1"


def test_cann_logs_one_file_per_package(node: Node) -> None:
    node.ok(toolkit(), "--install")
    node.ok(ops(), "--install")
    node.ok(nnal(), "--install", env={"ASCEND_TOOLKIT_HOME": str(node.path / f"cann-{CANN}")})
    logs = {p.name for p in (node.path / "ascend_seclog").iterdir()}
    assert logs == {"ascend_toolkit_install.log", "ascend_ops_910b_install.log", "ascend_nnal_install.log"}


def test_cann_quiet_only_with_install_or_upgrade(node: Node) -> None:
    node.ok(toolkit(), "--install", "--quiet")
    for package in (toolkit(), ops(), nnal()):
        res = node.run(package, "--uninstall", "--quiet")
        assert res.returncode == 1 and "--quiet must be used with --install or --upgrade" in res.stdout
    assert (node.path / f"cann-{CANN}").is_dir()
    node.ok(toolkit(), "--uninstall")


def test_upgrade_removes_ops_and_downgrade_is_refused(node: Node) -> None:
    node.ok(toolkit(OLD_CANN), "--install")
    node.ok(ops(OLD_CANN), "--install")
    assert node.run(toolkit(), "--upgrade").returncode == 0
    assert not (node.path / f"cann-{OLD_CANN}").exists()
    assert os.readlink(node.path / "cann") == f"cann-{CANN}"
    assert not list(node.path.glob("cann-*/*-linux/ascend_ops_install.info"))
    res = node.run(toolkit(OLD_CANN), "--upgrade")
    assert res.returncode == 1 and "downgrad" in res.stdout
    assert (node.path / f"cann-{CANN}" / "set_env.sh").is_file()


def test_uninstall(node: Node) -> None:
    node.ok(toolkit(), "--install")
    node.ok(ops(), "--install")
    assert "uninstall success" in node.ok(toolkit(), "--uninstall")
    assert {p.name for p in node.path.iterdir()} == {"ascend_seclog"}
    assert "not installed" in node.ok(toolkit(), "--uninstall")


# ---------------------------------------------------------------- fault injection


def assert_partial_toolkit(node: Node) -> None:
    home = node.path / f"cann-{CANN}"
    assert (home / "bin").is_dir()
    assert not (home / f"{ARCH}-linux" / "ascend_toolkit_install.info").exists()
    assert not (home / "set_env.sh").exists()
    assert not (node.path / "cann").exists()


def test_failure_leaves_partial_tree_and_rerun_completes(node: Node) -> None:
    res = node.run(toolkit(), "--install", env={"ASCEND_SIM_FAIL_AT": "after_files"})
    assert res.returncode == 1 and "simulated failure" in res.stdout
    assert_partial_toolkit(node)
    node.ok(toolkit(), "--install")
    assert (node.path / "cann" / "set_env.sh").is_file()


def test_kill_mode_dies_by_sigkill(node: Node) -> None:
    res = node.run(toolkit(), "--install", env={"ASCEND_SIM_FAIL_AT": "after_files", "ASCEND_SIM_FAIL_MODE": "kill"})
    assert res.returncode == -signal.SIGKILL
    assert_partial_toolkit(node)


def test_marker_file_once_and_persistent(node: Node) -> None:
    marker = node.sysroot / "etc" / "npu-sim" / "fail_installer"
    marker.parent.mkdir(parents=True)
    marker.write_text("driver\n")
    assert node.run(driver(), "--full").returncode == 1
    assert node.run(driver(), "--full").returncode == 1
    marker.write_text("driver\ntoolkit:once\n")
    node.ok(ops(), "--install", rc=1)  # no toolkit: the marker is not reached
    assert node.run(toolkit(), "--install").returncode == 1
    assert_partial_toolkit(node)
    assert marker.read_text() == "driver\n"
    node.ok(toolkit(), "--install")
    marker.write_text("ops:once:kill\n")
    assert node.run(ops(), "--install").returncode == -signal.SIGKILL
    assert not marker.exists()
    node.ok(ops(), "--install")


def test_payload_knob_fills_the_disk_like_a_real_install(node: Node) -> None:
    knobs = node.sysroot / "etc" / "npu-sim"
    knobs.mkdir(parents=True)
    (knobs / "payload_mb").write_text("toolkit:2\n")
    node.ok(toolkit(), "--install")
    payload = node.path / "sim-payload" / f"toolkit-{CANN}.bin"
    assert payload.stat().st_size == 2 * 1048576
    # A file system that cannot take the payload fails the install half-way, as a full disk does.
    (knobs / "payload_mb").write_text("ops:1\n")
    res = node.run(ops(), "--install", env={"PATH": f"{fake_full_disk(node)}:{os.environ['PATH']}"})
    assert res.returncode != 0 and "No space left on device" in res.stdout + res.stderr
    node.ok(toolkit(), "--uninstall")
    assert not payload.exists()


def fake_full_disk(node: Node) -> Path:
    """A `head` that fails as it does on a full file system (no tmpfs of a fixed size here)."""
    bindir = node.sysroot / "fullbin"
    bindir.mkdir()
    fake = bindir / "head"
    fake.write_text("#!/bin/sh\necho \"head: error writing 'standard output': No space left on device\" >&2\nexit 1\n")
    fake.chmod(0o755)
    return bindir


def test_slow_knob_and_bad_knob_value(node: Node) -> None:
    knobs = node.sysroot / "etc" / "npu-sim"
    knobs.mkdir(parents=True)
    (knobs / "slow_installer").write_text("toolkit:0.2\n")
    assert "installing slowly (0.2 s)" in node.ok(toolkit(), "--install")
    (knobs / "slow_installer").write_text("ops:soon\n")
    res = node.run(ops(), "--install")
    assert res.returncode == 1 and "must be ops:NUMBER" in res.stdout


def test_unknown_fail_stage_is_rejected(node: Node) -> None:
    assert node.run(toolkit(), "--install", env={"ASCEND_SIM_FAIL_AT": "nowhere"}).returncode == 1
    assert not node.path.exists()


# ---------------------------------------------------------------- driver and firmware


@pytest.mark.skipif(os.geteuid() != 0, reason="an upgrade without --install-path needs root")
def test_driver_fresh_install_then_upgrade(node: Node, newer_driver: Path) -> None:
    node.ok(driver(), "--full", "--install-for-all", "--quiet", "--nox11")
    version = info(node.path / "driver" / "version.info")
    assert version["Version"] == version["package_version"] == DRIVER
    assert {"ascendhal_version", "Innerversion", "compatible_version", "compatible_version_fw"} <= set(version)
    assert (node.path / "driver" / "tools").is_dir()
    record = info(node.path / "ascend_install.info")
    assert record["Driver_Install_Path_Param"] == str(node.path)
    assert record["Driver_Install_Type"] == "full" and record["Driver_Install_For_All"] == "yes"
    node.ok(driver(), "--full", "--quiet")
    node.artifacts = newer_driver
    # A hot reset that works loads the new driver at once: exit code 0, no reboot. The upgrade
    # finds the driver's path in /etc/ascend_install.info: it takes no --install-path.
    res = node.run(driver(NEWER_DRIVER), "--upgrade", "--quiet", "--nox11", path=False)
    assert res.returncode == 0, res.stdout
    assert info(node.path / "driver" / "version.info")["Version"] == NEWER_DRIVER
    node.ok(driver(NEWER_DRIVER), "--uninstall")
    assert not (node.path / "driver").exists()
    assert "Driver_Install_Type" not in info(node.path / "ascend_install.info")


def test_driver_upgrade_refuses_install_for_all_and_install_path(node: Node, newer_driver: Path) -> None:
    """The driver's argument parser: these two go with an install type only, never --upgrade."""
    node.ok(driver(), "--full", "--install-for-all", "--quiet")
    node.artifacts = newer_driver
    res = node.run(driver(NEWER_DRIVER), "--upgrade", "--install-for-all", "--quiet", path=False)
    assert res.returncode == 1 and res.stdout.strip().endswith("install-for-all param need used with full/debug/run/devel.")
    res = node.run(driver(NEWER_DRIVER), "--upgrade", "--quiet")  # adds --install-path
    assert res.returncode == 1 and "install-path param need used with full/debug/run/docker/devel." in res.stdout
    assert info(node.path / "driver" / "version.info")["Version"] == DRIVER


@pytest.mark.skipif(os.geteuid() != 0, reason="an upgrade without --install-path needs root")
def test_driver_exit_code_2_when_the_hot_reset_fails(node: Node, newer_driver: Path) -> None:
    (node.sysroot / "etc" / "npu-sim").mkdir(parents=True)
    (node.sysroot / "etc" / "npu-sim" / "hot_reset").write_text("fail\n")
    assert "reboot the machine" in node.ok(driver(), "--full", "--quiet", rc=2)
    node.artifacts = newer_driver
    res = node.run(driver(NEWER_DRIVER), "--upgrade", "--quiet", path=False)
    assert res.returncode == 2 and "reboot the machine" in res.stdout
    (node.sysroot / "etc" / "npu-sim" / "hot_reset").write_text("ok\n")
    assert node.run(driver(NEWER_DRIVER), "--upgrade", "--quiet", path=False).returncode == 0


def test_driver_checks_user(node: Node) -> None:
    res = node.run(driver(), "--full", env={"ASCEND_SIM_USER_CHECK": "1"})
    has_user = subprocess.run(["id", "HwHiAiUser"], capture_output=True, check=False).returncode == 0
    assert (res.returncode == 0) == has_user


def test_driver_vermagic_without_dkms_on_an_unsupported_kernel(node: Node) -> None:
    """No prompt: prebuilt modules for a listed kernel, dkms when installed, else vermagic fails."""
    knobs = node.sysroot / "etc" / "npu-sim"
    knobs.mkdir(parents=True)
    check = {"ASCEND_SIM_SKIP_KERNEL_CHECK": "0"}
    dkms_ready = subprocess.run(
        ["sh", "-c", f"dpkg-query -W -f='${{Status}}\\n' dkms gcc linux-headers-{os.uname().release} 2>/dev/null"
         " | grep -c 'install ok installed'"], capture_output=True, text=True, check=False).stdout.strip() == "3"
    res = node.run(driver(), "--full", "--quiet", env=check)
    if dkms_ready:
        assert res.returncode == 0
        return
    assert res.returncode == 1 and "driver vermagic check failed" in res.stdout
    assert not (node.path / "driver" / "version.info").exists()
    assert "[y/n]" not in res.stdout
    (knobs / "prebuilt_kernels").write_text(f"5.15.0-1-generic\n{os.uname().release}\n")
    assert "prebuilt driver modules" in node.ok(driver(), "--full", env=check)


def test_firmware(node: Node) -> None:
    assert node.run(FIRMWARE_RUN, "--full").returncode == 1  # needs the driver
    node.ok(driver(), "--full")
    res = node.run(FIRMWARE_RUN, "--full", "--quiet", env={"ASCEND_SIM_VIRTUAL": "1"})
    assert res.returncode == 1 and "physical machines" in res.stdout
    node.ok(FIRMWARE_RUN, "--full", "--quiet", env={"ASCEND_SIM_VIRTUAL": "1", "ASCEND_SIM_VIRTUAL_RC": "0"})
    assert not (node.path / "firmware").exists()
    node.ok(FIRMWARE_RUN, "--full", "--quiet")
    assert info(node.path / "firmware" / "version.info") == {"Version": FIRMWARE}
    assert info(node.path / "ascend_install.info")["Firmware_Install_Path_Param"] == str(node.path)
