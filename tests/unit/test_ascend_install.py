"""Tests of the Ascend install records reader and the ascend_install_facts module.

The trees are written by hand after the layout in module_utils/ascend_install.py, and once
by the simulated installers of tests/sim/make_artifacts.py to show both agree.
"""
from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest
import modrun

from ansible_collections.ascendops.gr00t.plugins.module_utils import ascend_install
from ansible_collections.ascendops.gr00t.plugins.module_utils.ascend_install import LOGIN_SCRIPT, install_facts, login_env
from ansible_collections.ascendops.gr00t.plugins.modules import ascend_install_facts

GENERATOR = Path(__file__).resolve().parents[2] / "tests" / "sim" / "make_artifacts.py"
ARCH = {"amd64": "x86_64", "arm64": "aarch64"}.get(platform.machine().lower(), platform.machine())
CANN = "9.0.0"
DRIVER = "25.5.1"
FIRMWARE = "7.8.0.6.201"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def toolkit_tree(root: Path, version: str, home: str | None = None) -> Path:
    """A toolkit tree with its install record, as CANN 8.5 and later write it."""
    tree = root / (home or f"cann-{version}")
    write(tree / f"{ARCH}-linux" / "ascend_toolkit_install.info",
          f"package_name=Ascend-cann-toolkit\nversion={version}\narch={ARCH}\nos=linux\npath={tree}\n")
    (tree / "bin").mkdir(exist_ok=True)
    return tree


def ops_record(tree: Path, version: str) -> None:
    """The 910B ops record: <toolkit home>/<arch>-linux/ascend_ops_install.info, key=value."""
    write(tree / f"{ARCH}-linux" / "ascend_ops_install.info", f"package_name=Ascend-cann-910b-ops\nversion={version}\n")


def nnal_record(root: Path, version: str) -> None:
    """nnal's version.info in its colon format, with the build line beside the package line."""
    write(root / "nnal" / "atb" / version / "version.info",
          f"Ascend-cann-atb : {version}\nAscend-cann-atb Version : {version}.B120\n")


def activate(root: Path, target: str, link: str = "cann") -> None:
    (root / link).parent.mkdir(parents=True, exist_ok=True)
    (root / link).symlink_to(target, target_is_directory=True)


# ---------------------------------------------------------------- read_key


def test_read_key(tmp_path: Path) -> None:
    record = write(tmp_path / "version.info", "# comment\nPackage_Version = 25.5.1 \nVersion=25.5.1\nempty=\n")
    assert ascend_install.read_key(str(record), "version") == "25.5.1"
    assert ascend_install.read_key(str(record), "VERSION") == "25.5.1"
    assert ascend_install.read_key(str(record), "package_version") == "25.5.1"
    assert ascend_install.read_key(str(record), "empty") is None
    assert ascend_install.read_key(str(record), "missing") is None
    assert ascend_install.read_key(str(tmp_path / "absent.info"), "version") is None
    assert ascend_install.read_key(str(tmp_path), "version") is None


# ---------------------------------------------------------------- hand-made trees


def test_empty_root(tmp_path: Path) -> None:
    facts = install_facts(str(tmp_path))
    assert facts == {
        "root": str(tmp_path),
        "driver_version": None,
        "firmware_version": None,
        "toolkit_version": None,
        "toolkit_home": None,
        "toolkits_installed": [],
        "ops_version": None,
        "nnal_version": None,
        "nnal_installed": [],
        "partial_installs": [],
        "nnal_partial": [],
    }


def test_missing_root(tmp_path: Path) -> None:
    facts = install_facts(str(tmp_path / "Ascend"))
    assert facts["driver_version"] is None and facts["toolkit_version"] is None
    assert facts["toolkits_installed"] == [] and facts["partial_installs"] == []


def test_driver_and_firmware(tmp_path: Path) -> None:
    write(tmp_path / "driver" / "version.info",
          f"Version={DRIVER}\nascendhal_version=7.35.23\npackage_version={DRIVER}\nInnerversion=V100R001C25\n")
    write(tmp_path / "firmware" / "version.info", f"Version={FIRMWARE}\n")
    facts = install_facts(str(tmp_path))
    assert facts["driver_version"] == DRIVER
    assert facts["firmware_version"] == FIRMWARE
    assert facts["toolkit_version"] is None and facts["ops_version"] is None and facts["nnal_version"] is None


def test_toolkit_ops_and_nnal(tmp_path: Path) -> None:
    tree = toolkit_tree(tmp_path, CANN)
    activate(tmp_path, f"cann-{CANN}")
    ops_record(tree, CANN)
    nnal_record(tmp_path, CANN)
    facts = install_facts(str(tmp_path))
    assert facts["toolkit_version"] == CANN
    assert facts["toolkit_home"] == os.path.realpath(tree)
    assert facts["toolkits_installed"] == [CANN]
    assert facts["ops_version"] == CANN
    assert facts["nnal_version"] == CANN
    assert facts["nnal_installed"] == [CANN]
    assert facts["partial_installs"] == []
    assert facts["driver_version"] is None


def test_toolkit_without_ops(tmp_path: Path) -> None:
    toolkit_tree(tmp_path, CANN)
    activate(tmp_path, f"cann-{CANN}")
    facts = install_facts(str(tmp_path))
    assert facts["toolkit_version"] == CANN
    assert facts["ops_version"] is None
    assert facts["nnal_version"] is None and facts["nnal_installed"] == []


def test_toolkit_tree_without_link_is_not_active(tmp_path: Path) -> None:
    toolkit_tree(tmp_path, CANN)
    facts = install_facts(str(tmp_path))
    assert facts["toolkit_version"] is None and facts["toolkit_home"] is None
    assert facts["toolkits_installed"] == [CANN]
    assert facts["partial_installs"] == []


def test_old_layout_ascend_toolkit_latest(tmp_path: Path) -> None:
    tree = toolkit_tree(tmp_path, "8.3.RC1", home=os.path.join("ascend-toolkit", "8.3.RC1"))
    activate(tmp_path, "8.3.RC1", link=os.path.join("ascend-toolkit", "latest"))
    ops_record(tree, "8.3.RC1")
    facts = install_facts(str(tmp_path))
    assert facts["toolkit_version"] == "8.3.RC1"
    assert facts["toolkit_home"] == os.path.realpath(tree)
    assert facts["ops_version"] == "8.3.RC1"
    assert facts["partial_installs"] == []


def test_old_layout_latest_as_a_directory(tmp_path: Path) -> None:
    tree = toolkit_tree(tmp_path, "8.3.0", home=os.path.join("ascend-toolkit", "latest"))
    facts = install_facts(str(tmp_path))
    assert facts["toolkit_version"] == "8.3.0"
    assert facts["toolkit_home"] == os.path.realpath(tree)


def test_cann_link_wins_over_old_layout(tmp_path: Path) -> None:
    toolkit_tree(tmp_path, "8.3.0", home=os.path.join("ascend-toolkit", "8.3.0"))
    activate(tmp_path, "8.3.0", link=os.path.join("ascend-toolkit", "latest"))
    new = toolkit_tree(tmp_path, CANN)
    activate(tmp_path, f"cann-{CANN}")
    facts = install_facts(str(tmp_path))
    assert facts["toolkit_version"] == CANN
    assert facts["toolkit_home"] == os.path.realpath(new)


def test_partial_install(tmp_path: Path) -> None:
    partial = tmp_path / f"cann-{CANN}"
    (partial / "bin").mkdir(parents=True)
    (partial / "lib64").mkdir()
    facts = install_facts(str(tmp_path))
    assert facts["partial_installs"] == [str(partial)]
    assert facts["toolkit_version"] is None
    assert facts["toolkit_home"] is None
    assert facts["toolkits_installed"] == []


def test_partial_next_to_active_toolkit(tmp_path: Path) -> None:
    toolkit_tree(tmp_path, "8.5.0")
    activate(tmp_path, "cann-8.5.0")
    (tmp_path / f"cann-{CANN}" / "bin").mkdir(parents=True)
    write(tmp_path / "cann-notes.txt", "not a tree\n")
    facts = install_facts(str(tmp_path))
    assert facts["toolkit_version"] == "8.5.0"
    assert facts["toolkits_installed"] == ["8.5.0"]
    assert facts["partial_installs"] == [str(tmp_path / f"cann-{CANN}")]


def test_link_to_partial_tree_is_not_active(tmp_path: Path) -> None:
    (tmp_path / f"cann-{CANN}" / "bin").mkdir(parents=True)
    activate(tmp_path, f"cann-{CANN}")
    facts = install_facts(str(tmp_path))
    assert facts["toolkit_version"] is None and facts["toolkit_home"] is None
    assert facts["partial_installs"] == [str(tmp_path / f"cann-{CANN}")]


def test_two_toolkits_installed(tmp_path: Path) -> None:
    old = toolkit_tree(tmp_path, "8.5.0")
    new = toolkit_tree(tmp_path, CANN)
    ops_record(old, "8.5.0")
    ops_record(new, CANN)
    nnal_record(tmp_path, "8.5.0")
    nnal_record(tmp_path, CANN)
    activate(tmp_path, "cann-8.5.0")
    facts = install_facts(str(tmp_path))
    assert facts["toolkit_version"] == "8.5.0"
    assert facts["toolkit_home"] == os.path.realpath(old)
    assert facts["ops_version"] == "8.5.0"
    assert facts["toolkits_installed"] == ["8.5.0", CANN]
    assert facts["nnal_installed"] == ["8.5.0", CANN]
    assert facts["nnal_version"] == CANN
    assert facts["partial_installs"] == []

    (tmp_path / "cann").unlink()
    activate(tmp_path, f"cann-{CANN}")
    facts = install_facts(str(tmp_path))
    assert facts["toolkit_version"] == CANN
    assert facts["ops_version"] == CANN
    assert facts["toolkit_home"] == os.path.realpath(new)


def test_nnal_latest_link_is_the_active_one_not_another_install(tmp_path: Path) -> None:
    nnal_record(tmp_path, "8.5.0")
    nnal_record(tmp_path, CANN)
    activate(tmp_path, "8.5.0", link=os.path.join("nnal", "atb", "latest"))
    facts = install_facts(str(tmp_path))
    assert facts["nnal_installed"] == ["8.5.0", CANN]
    assert facts["nnal_version"] == "8.5.0"

    (tmp_path / "nnal" / "atb" / "latest").unlink()
    activate(tmp_path, CANN, link=os.path.join("nnal", "atb", "latest"))
    facts = install_facts(str(tmp_path))
    assert facts["nnal_installed"] == ["8.5.0", CANN]
    assert facts["nnal_version"] == CANN


def test_nnal_without_record_is_a_partial_install(tmp_path: Path) -> None:
    (tmp_path / "nnal" / "atb" / CANN / "atb").mkdir(parents=True)
    facts = install_facts(str(tmp_path))
    assert facts["nnal_installed"] == [] and facts["nnal_version"] is None
    assert facts["nnal_partial"] == [str(tmp_path / "nnal" / "atb" / CANN)]


def test_records_that_do_not_exist_on_real_nodes_are_not_read(tmp_path: Path) -> None:
    """opp/ascend910b_ops_install.info and nnal's *_install.info are not vendor records: a
    reader that trusted them would miss the real ones and reinstall on every run."""
    tree = toolkit_tree(tmp_path, CANN)
    activate(tmp_path, f"cann-{CANN}")
    write(tree / "opp" / "ascend910b_ops_install.info", f"version={CANN}\n")
    write(tmp_path / "nnal" / "atb" / CANN / "ascend_nnal_install.info", f"version={CANN}\n")
    facts = install_facts(str(tmp_path))
    assert facts["ops_version"] is None and facts["nnal_version"] is None
    ops_record(tree, CANN)
    nnal_record(tmp_path, CANN)
    facts = install_facts(str(tmp_path))
    assert facts["ops_version"] == CANN and facts["nnal_installed"] == [CANN] and facts["nnal_partial"] == []


def test_read_key_with_a_colon(tmp_path: Path) -> None:
    record = write(tmp_path / "version.info", "Ascend-cann-atb : 9.0.0\nAscend-cann-atb Version : 9.0.0.B120\n")
    assert ascend_install.read_key(str(record), "Ascend-cann-atb", ":") == "9.0.0"
    assert ascend_install.read_key(str(record), "ascend-cann-atb version", ":") == "9.0.0.B120"
    assert ascend_install.read_key(str(record), "missing", ":") is None
    assert ascend_install.read_key(str(tmp_path / "absent"), "Ascend-cann-atb", ":") is None


# ---------------------------------------------------------------- simulated installers


def run_installer(package: Path, *args: str, env: dict[str, str], setup: str = "") -> None:
    command = f'{setup}bash "$0" "$@"'
    res = subprocess.run(["bash", "-c", command, str(package), *args], env=env, capture_output=True,
                         text=True, stdin=subprocess.DEVNULL, timeout=30, check=False)
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.fixture(scope="module")
def simulated_node(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An Ascend root written by the simulated driver, toolkit, ops and nnal installers."""
    if ARCH not in ("x86_64", "aarch64"):
        pytest.skip("no Ascend packages for this machine")
    base = tmp_path_factory.mktemp("sim-node")
    art = base / "art"
    root = base / "Ascend"
    subprocess.run([sys.executable, str(GENERATOR), "--dest", str(art)], check=True, capture_output=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND_")}
    env.update(ASCEND_SIM_SYSROOT=str(base / "sysroot"), ASCEND_SIM_SKIP_KERNEL_CHECK="1",
               ASCEND_SIM_USER_CHECK="0")
    target = f"--install-path={root}"
    run_installer(art / f"Ascend-hdk-910b-npu-driver_{DRIVER}_linux-{ARCH.replace('x86_64', 'x86-64')}.run", "--full", "--quiet", target, env=env)
    run_installer(art / f"Ascend-cann-toolkit_{CANN}_linux-{ARCH}.run", "--install", "--quiet", target, env=env)
    run_installer(art / f"Ascend-cann-910b-ops_{CANN}_linux-{ARCH}.run", "--install", "--quiet", target, env=env)
    run_installer(art / f"Ascend-cann-nnal_{CANN}_linux-{ARCH}.run", "--install", "--quiet", target, env=env,
                  setup=f'source "{root}/cann/set_env.sh" && ')
    return root


def test_facts_of_simulated_install(simulated_node: Path) -> None:
    assert (simulated_node / "cann").is_symlink()
    assert (simulated_node / "nnal" / "atb" / "latest").is_symlink()
    facts = install_facts(str(simulated_node))
    assert facts["driver_version"] == DRIVER
    assert facts["firmware_version"] is None
    assert facts["toolkit_version"] == CANN
    assert facts["toolkit_home"] == os.path.realpath(simulated_node / f"cann-{CANN}")
    assert facts["toolkits_installed"] == [CANN]
    assert facts["ops_version"] == CANN
    assert facts["nnal_version"] == CANN
    assert facts["nnal_installed"] == [CANN]
    assert facts["partial_installs"] == [] and facts["nnal_partial"] == []


# ---------------------------------------------------------------- module


def run_module(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, args: dict) -> dict:
    return modrun.run_module(ascend_install_facts.main, monkeypatch, capsys, args)


def test_module_reports_facts(monkeypatch, capsys, tmp_path: Path) -> None:
    tree = toolkit_tree(tmp_path, CANN)
    activate(tmp_path, f"cann-{CANN}")
    write(tmp_path / "driver" / "version.info", f"Version={DRIVER}\n")
    result = run_module(monkeypatch, capsys, {"root": str(tmp_path)})
    assert not result.get("failed"), result
    assert result["changed"] is False
    ascend = result["ansible_facts"]["ascend"]
    assert ascend == install_facts(str(tmp_path))
    assert ascend["toolkit_version"] == CANN and ascend["driver_version"] == DRIVER
    assert ascend["toolkit_home"] == os.path.realpath(tree)


def test_module_check_mode_on_missing_root(monkeypatch, capsys, tmp_path: Path) -> None:
    root = str(tmp_path / "Ascend")
    result = run_module(monkeypatch, capsys, {"root": root, "_ansible_check_mode": True})
    assert not result.get("failed"), result
    assert result["changed"] is False
    assert result["ansible_facts"]["ascend"]["root"] == root
    assert result["ansible_facts"]["ascend"]["toolkit_version"] is None


# ---------------------------------------------------------------- what a login shell sees


def test_login_env_reads_the_toolkit_record_under_the_shells_home(tmp_path: Path) -> None:
    home = tmp_path / "cann-9.0.0"
    (home / "aarch64-linux").mkdir(parents=True)
    (home / "aarch64-linux" / "ascend_toolkit_install.info").write_text(
        "package_name=Ascend-cann-toolkit\nversion=9.0.0\narch=aarch64\n")
    out = f"ASCEND_HOME_PATH={home}\nATB_HOME_PATH=/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_1\n"
    assert login_env(0, out) == {"ASCEND_HOME_PATH": str(home),
                                 "ATB_HOME_PATH": "/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_1",
                                 "rc": 0, "toolkit_version": "9.0.0"}


def test_login_env_without_cann_in_the_profile() -> None:
    assert login_env(0, "ASCEND_HOME_PATH=\nATB_HOME_PATH=\n") == {
        "ASCEND_HOME_PATH": "", "ATB_HOME_PATH": "", "rc": 0, "toolkit_version": ""}
    assert login_env(127, "")["ASCEND_HOME_PATH"] == ""


def test_login_script_prints_every_variable_even_when_unset() -> None:
    res = subprocess.run(["bash", "-c", LOGIN_SCRIPT], capture_output=True, text=True, check=True,
                         env={"PATH": "/usr/bin:/bin", "ATB_HOME_PATH": "/x"})
    assert res.stdout == "ASCEND_HOME_PATH=\nATB_HOME_PATH=/x\n"
