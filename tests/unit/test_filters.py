"""Tests of the filters in plugins/filter/ascend.py."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from ansible_collections.ascendops.gr00t.plugins.filter import ascend
from ansible_collections.ascendops.gr00t.plugins.filter.ascend import (
    FilterModule,
    artifact_problems,
    ascend_package,
    ascend_packages,
    disk_shortfalls,
    malformed_disk_requirements,
    installer_failure_message,
    npu_driver_plan,
    parse_sha256sums,
)

GENERATOR = Path(__file__).resolve().parents[2] / "tests" / "sim" / "make_artifacts.py"
GB = 1024 ** 3
SUM_A = "a" * 64
SUM_B = "0123456789abcdef" * 4
SUM_C = "f" * 64


# ---------------------------------------------------------------- ascend_package


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
@pytest.mark.parametrize("kind, version, expected", [
    ("firmware", "7.8.0.6.201", "Ascend-hdk-910b-npu-firmware_7.8.0.6.201.run"),
    ("toolkit", "9.0.0", "Ascend-cann-toolkit_9.0.0_linux-{arch}.run"),
    ("ops", "9.0.0", "Ascend-cann-910b-ops_9.0.0_linux-{arch}.run"),
    ("ops", "8.5.0", "Ascend-cann-910b-ops_8.5.0_linux-{arch}.run"),
    ("nnal", "9.0.0", "Ascend-cann-nnal_9.0.0_linux-{arch}.run"),
])
def test_ascend_package_names(kind: str, version: str, expected: str, arch: str) -> None:
    assert ascend_package(kind, version, arch) == expected.format(arch=arch)


@pytest.mark.parametrize("version, arch, expected", [
    # The HDK writes x86 as x86-64 and release candidates in lower case, as its files are named.
    ("25.5.1", "aarch64", "Ascend-hdk-910b-npu-driver_25.5.1_linux-aarch64.run"),
    ("25.5.1", "x86_64", "Ascend-hdk-910b-npu-driver_25.5.1_linux-x86-64.run"),
    ("26.0.RC1", "aarch64", "Ascend-hdk-910b-npu-driver_26.0.rc1_linux-aarch64.run"),
    ("26.0.rc1", "x86_64", "Ascend-hdk-910b-npu-driver_26.0.rc1_linux-x86-64.run"),
])
def test_driver_names_as_the_vendor_does(version: str, arch: str, expected: str) -> None:
    assert ascend_package("driver", version, arch) == expected


def test_versions_compare_case_insensitively() -> None:
    assert ascend.package_action("26.0.rc1", "26.0.RC1") == "none"
    assert ascend.same_version("26.0.RC1", "26.0.rc1") and not ascend.same_version(None, "26.0.rc1")
    assert ascend.package_action("25.5.1", "26.0.RC1") == "upgrade"
    assert ascend.package_action("26.0.rc1", "26.0.0") == "upgrade"


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
@pytest.mark.parametrize("version", ["8.3.RC1", "8.3.0", "8.2.RC1", "7.0.0"])
def test_ops_is_named_kernels_before_8_5(version: str, arch: str) -> None:
    assert ascend_package("ops", version, arch) == f"Ascend-cann-kernels-910b_{version}_linux-{arch}.run"


@pytest.mark.parametrize("version", ["8.5.RC1", "8.5", "8.5.0", "8.5.1", "26.0.RC1"])
def test_ops_is_named_ops_from_8_5(version: str) -> None:
    assert ascend_package("ops", version, "x86_64") == f"Ascend-cann-910b-ops_{version}_linux-x86_64.run"


@pytest.fixture(scope="module")
def generator():
    """tests/sim/make_artifacts.py as a module (it is a script, not a package)."""
    spec = importlib.util.spec_from_file_location("gr00t_make_artifacts", GENERATOR)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look the module up while it loads
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[spec.name]


@pytest.mark.parametrize("version", ["8.0.RC1", "8.3.RC1", "8.3.0", "8.4.0", "8.5.RC1", "8.5", "8.5.0", "9.0.0"])
def test_ops_name_agrees_with_simulated_artifacts(generator, version: str) -> None:
    name = ascend_package("ops", version, "x86_64")
    assert name == f"{generator.ops_package_name(version)}_{version}_linux-x86_64.run"


def test_firmware_name_has_no_arch() -> None:
    assert ascend_package("firmware", "7.8.0.6.201", "x86_64") == ascend_package("firmware", "7.8.0.6.201", "aarch64")


@pytest.mark.parametrize("kind", ["kernels", "Driver", "", "toolkit "])
def test_ascend_package_unknown_kind(kind: str) -> None:
    with pytest.raises(ValueError, match="unknown Ascend package kind"):
        ascend_package(kind, "9.0.0", "x86_64")


# ---------------------------------------------------------------- ascend_packages


def test_ascend_packages_in_install_order() -> None:
    plan = {"nnal": "9.0.0", "ops": "9.0.0", "toolkit": "9.0.0", "firmware": "7.8.0.6.201", "driver": "25.5.1"}
    assert ascend_packages(plan, "aarch64") == [
        "Ascend-hdk-910b-npu-driver_25.5.1_linux-aarch64.run",
        "Ascend-hdk-910b-npu-firmware_7.8.0.6.201.run",
        "Ascend-cann-toolkit_9.0.0_linux-aarch64.run",
        "Ascend-cann-910b-ops_9.0.0_linux-aarch64.run",
        "Ascend-cann-nnal_9.0.0_linux-aarch64.run",
    ]


def test_ascend_packages_subset_and_empty() -> None:
    assert ascend_packages({"ops": "8.3.RC1", "toolkit": "8.3.RC1"}, "x86_64") == [
        "Ascend-cann-toolkit_8.3.RC1_linux-x86_64.run",
        "Ascend-cann-kernels-910b_8.3.RC1_linux-x86_64.run",
    ]
    assert ascend_packages({}, "x86_64") == []


def test_ascend_packages_accepts_pending_entries() -> None:
    plan = {"toolkit": {"action": "upgrade", "from": "8.5.0", "to": "9.0.0"}, "driver": "25.5.1"}
    assert ascend_packages(plan, "x86_64") == [
        "Ascend-hdk-910b-npu-driver_25.5.1_linux-x86-64.run",
        "Ascend-cann-toolkit_9.0.0_linux-x86_64.run",
    ]


def test_ascend_packages_unknown_kind() -> None:
    with pytest.raises(ValueError, match=r"unknown Ascend package kinds \['kernels', 'mindie'\]"):
        ascend_packages({"toolkit": "9.0.0", "mindie": "2.0", "kernels": "8.3.0"}, "x86_64")


# ---------------------------------------------------------------- parse_sha256sums


def test_parse_sha256sums_text_and_binary_format() -> None:
    text = f"{SUM_A}  Ascend-cann-toolkit_9.0.0_linux-x86_64.run\n{SUM_B} *Ascend-hdk-910b-npu-firmware_7.8.0.6.201.run\n"
    assert parse_sha256sums(text) == {
        "Ascend-cann-toolkit_9.0.0_linux-x86_64.run": SUM_A,
        "Ascend-hdk-910b-npu-firmware_7.8.0.6.201.run": SUM_B,
    }


def test_parse_sha256sums_skips_comments_and_blank_lines() -> None:
    text = f"# CANN 9.0.0\n\n   \n{SUM_A}  A.run\n  # indented comment\n\n{SUM_C}  B.run"
    assert parse_sha256sums(text) == {"A.run": SUM_A, "B.run": SUM_C}
    assert parse_sha256sums("") == {}
    assert parse_sha256sums("# nothing here\n") == {}


def test_parse_sha256sums_lowercases_hex() -> None:
    assert parse_sha256sums(f"{SUM_B.upper()}  A.run\n") == {"A.run": SUM_B}


def test_parse_sha256sums_handles_crlf() -> None:
    assert parse_sha256sums(f"{SUM_A}  A.run\r\n{SUM_C}  B.run\r\n") == {"A.run": SUM_A, "B.run": SUM_C}


@pytest.mark.parametrize("bad", [
    "not a checksum line",
    f"{SUM_A[:-1]}  A.run",
    f"{SUM_A}",
    f"{SUM_A}A.run",
    f"{'g' * 64}  A.run",
])
def test_parse_sha256sums_malformed_line_names_its_number(bad: str) -> None:
    text = f"# header\n{SUM_A}  A.run\n\n{bad}\n{SUM_C}  C.run\n"
    with pytest.raises(ValueError, match=r"manifest line 4 is not") as info:
        parse_sha256sums(text)
    assert repr(bad[:80]) in str(info.value)


# ---------------------------------------------------------------- malformed_disk_requirements


def test_malformed_disk_requirements() -> None:
    good = {"path": "/usr/local", "min_free_gb": 10}
    bad = [{"path": "usr/local", "min_free_gb": 10}, {"path": "/opt"}, {"path": "/opt", "min_free_gb": 0},
           {"min_free_gb": 5}, {"path": "/opt", "min_free_gb": "lots"}, "/opt"]
    assert malformed_disk_requirements([good, {"path": "/opt", "min_free_gb": "2.5"}]) == []
    assert malformed_disk_requirements([good, *bad]) == bad


# ---------------------------------------------------------------- disk_shortfalls


REQUIREMENTS = [
    {"path": "/usr/local/Ascend", "min_free_gb": 20, "purpose": "CANN and driver"},
    {"path": "/opt/miniforge3", "min_free_gb": 5},
]


def measured(free_ascend: float, free_conda: float) -> dict:
    return {
        "/usr/local/Ascend": {"measured_at": "/usr/local", "exists": False, "free_bytes": int(free_ascend * GB)},
        "/opt/miniforge3": {"measured_at": "/opt", "exists": False, "free_bytes": int(free_conda * GB)},
    }


def test_disk_enough_space() -> None:
    assert disk_shortfalls(REQUIREMENTS, measured(100, 5)) == []
    assert disk_shortfalls([], {}) == []


def test_disk_too_little_space() -> None:
    problems = disk_shortfalls(REQUIREMENTS, measured(12.34, 50))
    assert len(problems) == 1
    msg = problems[0]
    assert "/usr/local/Ascend" in msg
    assert "CANN and driver" in msg
    assert "12.3 GB free" in msg
    assert "measured at /usr/local" in msg
    assert "preflight_disk_requirements" in msg
    assert "20 GB" in msg


def test_disk_default_purpose_and_each_path() -> None:
    problems = disk_shortfalls(REQUIREMENTS, measured(1, 4.5))
    assert len(problems) == 2
    assert problems[1].startswith("Disk: /opt/miniforge3 (install path) has 4.5 GB free")
    assert "measured at /opt" in problems[1]
    assert "asks for 5 GB" in problems[1]


def test_disk_string_requirement() -> None:
    reqs = [{"path": "/usr/local/Ascend", "min_free_gb": "2.5"}]
    assert disk_shortfalls(reqs, measured(3, 0)) == []
    assert "asks for 2.5 GB" in disk_shortfalls(reqs, measured(2, 0))[0]


def test_disk_missing_measurement() -> None:
    problems = disk_shortfalls(REQUIREMENTS, {"/opt/miniforge3": measured(0, 50)["/opt/miniforge3"]})
    assert problems == ["Disk: /usr/local/Ascend was not measured"]


# ---------------------------------------------------------------- artifact_problems


MANIFEST = {"A.run": SUM_A, "B.run": SUM_B}


def stat_result(path: str, exists: bool = True, checksum: str | None = None) -> dict:
    stat = {"exists": exists}
    if exists and checksum is not None:
        stat["checksum"] = checksum
    return {"item": path, "stat": stat}


def test_artifacts_all_match() -> None:
    results = [stat_result("/src/A.run", checksum=SUM_A), stat_result("/src/B.run", checksum=SUM_B.upper())]
    assert artifact_problems(results, MANIFEST, "/src") == []


def test_artifacts_missing_file() -> None:
    problems = artifact_problems([stat_result("/src/A.run", exists=False)], MANIFEST, "/src")
    assert len(problems) == 1
    assert "A.run is not in the artifact source /src" in problems[0]
    assert "SHA256SUMS" in problems[0]


def test_artifacts_not_in_manifest() -> None:
    problems = artifact_problems([stat_result("/src/C.run", checksum=SUM_C)], MANIFEST, "/src", "sums.txt")
    assert len(problems) == 1
    assert "C.run is in /src but has no line in sums.txt" in problems[0]
    assert "sha256sum C.run >> sums.txt" in problems[0]


def test_artifacts_mismatch() -> None:
    problems = artifact_problems([stat_result("/src/A.run", checksum=SUM_C)], MANIFEST, "/src")
    assert len(problems) == 1
    assert f"A.run has sha256 {SUM_C}, SHA256SUMS expects {SUM_A}" in problems[0]


def test_artifacts_mixed_results_in_order() -> None:
    results = [
        stat_result("/src/A.run", checksum=SUM_C),
        stat_result("/src/B.run", checksum=SUM_B),
        stat_result("/src/C.run", checksum=SUM_C),
        stat_result("/src/D.run", exists=False),
    ]
    problems = artifact_problems(results, MANIFEST, "/src")
    assert [p.split(" ", 2)[1] for p in problems] == ["A.run", "C.run", "D.run"]


def test_artifacts_uri_present() -> None:
    results = [{"item": "http://x/A.run", "status": 200}, {"item": "http://x/B.run", "status": 200}]
    assert artifact_problems(results, MANIFEST, "http://x") == []


def test_artifacts_uri_missing() -> None:
    problems = artifact_problems([{"item": "http://x/A.run", "status": 404}], MANIFEST, "http://x")
    assert len(problems) == 1
    assert "A.run is not in the artifact source http://x" in problems[0]
    assert artifact_problems([{"item": "http://x/A.run"}], MANIFEST, "http://x") != []


def test_artifacts_uri_not_in_manifest() -> None:
    problems = artifact_problems([{"item": "http://x/C.run", "status": 200}], MANIFEST, "http://x")
    assert len(problems) == 1 and "C.run is in http://x but has no line in SHA256SUMS" in problems[0]


def test_artifacts_uri_is_not_checksum_checked() -> None:
    # A HEAD result has no content to hash; even a stray checksum key is not compared.
    result = {"item": "http://x/A.run", "status": 200, "checksum": SUM_C}
    assert artifact_problems([result], MANIFEST, "http://x") == []


# ---------------------------------------------------------------- installer_failure_message

INSTALLER = {"host": "n2", "file": "Ascend-cann-toolkit_9.0.0_linux-x86_64.run", "args": ["--install", "--quiet"],
             "timeout": 3600, "lock": "/var/cache/ascendops/.installer.lock"}


def test_installer_failure_names_the_exit_code_and_last_lines() -> None:
    result = {"rc": 1, "stdout_lines": ["unpacking"], "stderr_lines": ["[ERROR] install failed"]}
    assert installer_failure_message(result, **INSTALLER) == (
        "The Ascend-cann-toolkit_9.0.0_linux-x86_64.run installer Ascend-cann-toolkit_9.0.0_linux-x86_64.run "
        "(--install --quiet) failed on n2 (rc=1). Its last lines: unpacking / [ERROR] install failed. "
        "Fix the cause and rerun.")


def test_installer_failure_with_every_setting() -> None:
    result = {"rc": 2, "stdout_lines": [], "stderr_lines": ["tar: write error: No space left on device"]}
    msg = installer_failure_message(result, title="CANN toolkit", log="/var/log/ascend_seclog/ascend_install.log",
                                    space_path="/usr/local/Ascend", rerun_hint="a partial tree is repaired",
                                    **INSTALLER)
    assert msg == (
        "The CANN toolkit installer Ascend-cann-toolkit_9.0.0_linux-x86_64.run (--install --quiet) failed on n2 "
        "(rc=2). Its last lines: tar: write error: No space left on device. The vendor log is "
        "/var/log/ascend_seclog/ascend_install.log. The disk filled up while it ran: free space on "
        "/usr/local/Ascend (df -h /usr/local/Ascend). Fix the cause and rerun: a partial tree is repaired.")


def test_installer_failure_full_disk_without_a_path() -> None:
    result = {"rc": 1, "stdout_lines": ["No space left on device"]}
    assert "The disk filled up while it ran: free space. Fix the cause and rerun." in (
        installer_failure_message(result, **INSTALLER))


def test_installer_failure_quotes_the_last_15_lines() -> None:
    result = {"rc": 1, "stdout_lines": [f"out {i}" for i in range(10)], "stderr_lines": [f"err {i}" for i in range(10)]}
    msg = installer_failure_message(result, **INSTALLER)
    quoted = msg.split("Its last lines: ", 1)[1].split(". Fix", 1)[0]
    assert quoted.split(" / ") == [f"out {i}" for i in range(5, 10)] + [f"err {i}" for i in range(10)]


def test_installer_failure_without_output() -> None:
    assert "Its last lines: (none)." in installer_failure_message({"rc": 1}, **INSTALLER)


def test_installer_still_running_after_the_timeout() -> None:
    msg = installer_failure_message({"finished": 0, "attempts": 720}, **INSTALLER)
    assert "(rc=none: still running after 3600 s (artifact_installer_timeout); it keeps " \
           "/var/cache/ascendops/.installer.lock until it ends)." in msg


@pytest.mark.parametrize("result", [{"msg": "Could not find job"}, {"finished": 1, "msg": "Could not find job"},
                                    {"rc": None, "msg": "Could not find job"}])
def test_installer_without_exit_code_quotes_the_error(result: dict) -> None:
    assert "failed on n2 (rc=none: Could not find job). Its last lines: (none)." in (
        installer_failure_message(result, **INSTALLER))


# ---------------------------------------------------------------- npu_driver_plan

WANTED_HDK = {"driver": "25.5.1", "firmware": "7.8.0.6.201"}


def driver_plan(driver: str | None, firmware: str | None, virtual: bool = False, firmware_on_virtual: str = "skip",
                tree: bool = False, record: str = "") -> dict:
    return npu_driver_plan({"driver_version": driver, "firmware_version": firmware}, virtual=virtual,
                           firmware_on_virtual=firmware_on_virtual, tree=tree, boot_id="boot-2", record=record,
                           **WANTED_HDK)


def test_fresh_node_installs_the_driver_then_the_firmware() -> None:
    assert driver_plan(None, None) == {
        "have": {"driver": None, "firmware": None},
        "action": {"driver": "install", "firmware": "install"},
        "partial": False,
        "steps": ["driver", "firmware"],
        "pending": {},
    }


def test_other_driver_upgrades_the_firmware_first() -> None:
    plan = driver_plan("24.1.0", "7.0.0")
    assert plan["action"] == {"driver": "upgrade", "firmware": "upgrade"}
    assert plan["steps"] == ["firmware", "driver"]


def test_newer_driver_is_replaced_with_upgrade() -> None:
    plan = driver_plan("26.0.rc1", "7.8.0.6.201")
    assert plan["action"] == {"driver": "upgrade", "firmware": "none"}
    assert plan["steps"] == ["driver"]


def test_matching_node_installs_nothing() -> None:
    plan = driver_plan("25.5.1", "7.8.0.6.201")
    assert plan["action"] == {"driver": "none", "firmware": "none"} and plan["steps"] == []


@pytest.mark.parametrize("virtual, firmware_on_virtual, action, steps", [
    (True, "skip", "skip", ["driver"]),
    (True, "install", "install", ["driver", "firmware"]),
    (False, "skip", "install", ["driver", "firmware"]),
])
def test_firmware_of_a_virtual_machine(virtual: bool, firmware_on_virtual: str, action: str, steps: list) -> None:
    plan = driver_plan(None, None, virtual=virtual, firmware_on_virtual=firmware_on_virtual)
    assert plan["action"]["firmware"] == action and plan["steps"] == steps


def test_virtual_machine_with_the_wanted_firmware_is_not_skipped() -> None:
    assert driver_plan(None, "7.8.0.6.201", virtual=True)["action"]["firmware"] == "none"


@pytest.mark.parametrize("driver, tree, partial", [(None, True, True), ("", True, True), (None, False, False),
                                                   ("25.5.1", True, False)])
def test_interrupted_driver_install(driver: str | None, tree: bool, partial: bool) -> None:
    assert driver_plan(driver, None, tree=tree)["partial"] is partial


@pytest.mark.parametrize("record, pending", [
    ('{"boot_id": "boot-2", "changes": {"driver": "25.5.1"}}\n', {"driver": "25.5.1"}),
    ('{"boot_id": "boot-1", "changes": {"driver": "25.5.1"}}', {}),
    ('{"boot_id": "boot-2", "changes": "driver"}', {}),
    ("[1]", {}),
    ("", {}),
])
def test_reboot_pending_only_in_the_boot_that_recorded_it(record: str, pending: dict) -> None:
    assert driver_plan("25.5.1", "7.8.0.6.201", record=record)["pending"] == pending


# ---------------------------------------------------------------- FilterModule


@pytest.mark.parametrize("name", [
    "ascend_package",
    "ascend_packages",
    "package_action",
    "pending_packages",
    "describe_pending",
    "artifact_problems",
    "installer_failure_message",
    "npu_driver_plan",
    "disk_shortfalls",
    "parse_sha256sums",
])
def test_filter_module_exposes(name: str) -> None:
    filters = FilterModule().filters()
    assert filters[name] is getattr(ascend, name)


# ---------------------------------------------------------------- versions and plans

@pytest.mark.parametrize("older, newer", [
    ("8.3.RC1", "8.3.0"),
    ("8.3.0", "8.5.0"),
    ("8.5.0", "9.0.0"),
    ("9.0.0", "25.5.1"),
    ("25.5.1", "26.0.RC1"),
    ("26.0.RC1", "26.0.0"),
])
def test_version_key_orders_vendor_versions(older, newer):
    assert ascend.version_key(older) < ascend.version_key(newer)


@pytest.mark.parametrize("installed, wanted, action", [
    (None, "9.0.0", "install"),
    ("", "9.0.0", "install"),
    ("9.0.0", "9.0.0", "none"),
    ("8.5.0", "9.0.0", "upgrade"),
    ("9.1.0", "9.0.0", "downgrade"),
])
def test_package_action(installed, wanted, action):
    assert ascend.package_action(installed, wanted) == action


def test_pending_packages_lists_only_differences():
    wanted = {"driver": "25.5.1", "toolkit": "9.0.0", "ops": "9.0.0"}
    installed = {"driver_version": "25.5.1", "toolkit_version": "8.5.0", "ops_version": None}
    pending = ascend.pending_packages(wanted, installed)
    assert pending == {
        "toolkit": {"action": "upgrade", "from": "8.5.0", "to": "9.0.0"},
        "ops": {"action": "install", "from": None, "to": "9.0.0"},
    }
    assert ascend.ascend_packages(pending, "aarch64") == [
        "Ascend-cann-toolkit_9.0.0_linux-aarch64.run",
        "Ascend-cann-910b-ops_9.0.0_linux-aarch64.run",
    ]


def test_describe_pending():
    assert ascend.describe_pending(
        {"key": "toolkit", "value": {"action": "upgrade", "from": "8.5.0", "to": "9.0.0"}}
    ) == "CANN toolkit: upgrade 8.5.0 -> 9.0.0"
    assert ascend.describe_pending(
        {"key": "driver", "value": {"action": "install", "from": None, "to": "25.5.1"}}
    ) == "NPU driver: install 25.5.1"
