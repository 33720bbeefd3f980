"""Filters shared by the roles: vendor package names, manifests, capacity, versions, the NPU
driver plan, and why an installer failed."""
from __future__ import annotations

import json
import re
from typing import Any

# One manifest parser for filters and modules (the bundle check reads manifests too).
from ansible_collections.ascendops.gr00t.plugins.module_utils.bundle import parse_sha256sums

# CANN packages: 8.5.0 renamed the 910B kernels package to "910b-ops". Compared with the
# numeric prefix of the version, so (8, 5) keeps 8.5.RC1 and "8.5" on the new name.
_CANN_OPS_RENAMED_IN = (8, 5)


def version_key(version: str) -> tuple:
    """Sort key for vendor versions: 8.3.RC1 < 8.3.0 < 8.5.0 < 9.0.0 < 26.0.RC1 < 26.0.0.

    A release candidate sorts before the final release with the same numbers.
    """
    parts: list[tuple[int, int]] = []
    for token in re.split(r"[.\-]", str(version)):
        candidate = re.fullmatch(r"(?i)(?:rc|alpha|beta|t)(\d*)", token)
        if token.isdigit():
            parts.append((1, int(token)))
        elif candidate:
            parts.append((0, int(candidate.group(1) or 0)))
        else:
            digits = re.match(r"\d+", token)
            parts.append((1, int(digits.group(0)) if digits else 0))
    return tuple(parts)


def same_version(left: str | None, right: str | None) -> bool:
    """Whether two vendor versions are one: release candidates are lower case in real file
    names and in npu-smi (26.0.rc1) and upper case in release notes (26.0.RC1)."""
    return left is not None and right is not None and str(left).lower() == str(right).lower()


def package_action(installed: str | None, wanted: str) -> str:
    """What a vendor package needs: none, install, upgrade or downgrade."""
    if not installed:
        return "install"
    if same_version(installed, wanted):
        return "none"
    return "upgrade" if version_key(installed) < version_key(wanted) else "downgrade"


def pending_packages(wanted: dict[str, str], installed: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The packages of a {kind: version} plan whose installed version differs.

    `installed` is ansible_facts.ascend (keys `<kind>_version`). Each entry says the
    action and the versions: {"action": "upgrade", "from": "8.5.0", "to": "9.0.0"}.
    """
    pending = {}
    for kind, version in wanted.items():
        have = installed.get(f"{kind}_version")
        action = package_action(have, version)
        if action != "none":
            pending[kind] = {"action": action, "from": have, "to": version}
    return pending


_PACKAGE_TITLES = {
    "driver": "NPU driver",
    "firmware": "NPU firmware",
    "toolkit": "CANN toolkit",
    "ops": "CANN 910B ops",
    "nnal": "CANN nnal",
}


def describe_pending(item: dict[str, Any]) -> str:
    """'CANN toolkit: upgrade 8.5.0 -> 9.0.0' for a dict2items entry of pending_packages."""
    entry = item["value"]
    start = f"{entry['from']} -> " if entry["from"] else ""
    return f"{_PACKAGE_TITLES.get(item['key'], item['key'])}: {entry['action']} {start}{entry['to']}"


def _numeric_prefix(version: str) -> tuple[int, ...]:
    nums = []
    for token in str(version).split("."):
        if not token.isdigit():
            break
        nums.append(int(token))
    return tuple(nums)


# The HDK (driver) names x86 packages linux-x86-64, CANN names them linux-x86_64 (Huawei's
# download site; e.g. Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-x86-64.run).
_HDK_ARCH = {"x86_64": "x86-64"}


def hdk_version(version: str) -> str:
    """An HDK version as its files are named: release candidates in lower case (26.0.rc1)."""
    return re.sub(r"(?i)\.rc(\d*)", lambda m: f".rc{m.group(1)}", str(version))


def ascend_package(kind: str, version: str, arch: str) -> str:
    """File name of a vendor package in the artifact source.

    kind: driver, firmware, toolkit, ops, nnal.
    """
    names = {
        "driver": f"Ascend-hdk-910b-npu-driver_{hdk_version(version)}_linux-{_HDK_ARCH.get(arch, arch)}.run",
        "firmware": f"Ascend-hdk-910b-npu-firmware_{hdk_version(version)}.run",
        "toolkit": f"Ascend-cann-toolkit_{version}_linux-{arch}.run",
        "nnal": f"Ascend-cann-nnal_{version}_linux-{arch}.run",
    }
    if kind == "ops":
        prefix = _numeric_prefix(version)
        if prefix and prefix < _CANN_OPS_RENAMED_IN:
            return f"Ascend-cann-kernels-910b_{version}_linux-{arch}.run"
        return f"Ascend-cann-910b-ops_{version}_linux-{arch}.run"
    if kind not in names:
        raise ValueError(f"unknown Ascend package kind {kind!r}: expected one of driver, firmware, toolkit, ops, nnal")
    return names[kind]


def ascend_packages(plan: dict[str, Any], arch: str) -> list[str]:
    """File names for a plan, in install order.

    The plan maps kind to a version, or to a pending_packages entry (its `to` version).
    """
    order = ["driver", "firmware", "toolkit", "ops", "nnal"]
    unknown = sorted(set(plan) - set(order))
    if unknown:
        raise ValueError(f"unknown Ascend package kinds {unknown}")
    versions = {kind: (v["to"] if isinstance(v, dict) else v) for kind, v in plan.items()}
    return [ascend_package(kind, versions[kind], arch) for kind in order if kind in versions]


def malformed_disk_requirements(requirements: list[Any]) -> list[Any]:
    """The entries without an absolute `path` or without a positive `min_free_gb`."""
    def usable(req: Any) -> bool:
        if not isinstance(req, dict) or not isinstance(req.get("path"), str) or not req["path"].startswith("/"):
            return False
        try:
            return float(req.get("min_free_gb", 0)) > 0
        except (TypeError, ValueError):
            return False
    return [req for req in requirements if not usable(req)]


def disk_shortfalls(requirements: list[dict[str, Any]], measured: dict[str, dict[str, Any]]) -> list[str]:
    """One message per install path with less free space than required.

    `measured` is the `paths` result of the disk_free module (or preflight_facts' `disk`).
    """
    problems = []
    for req in requirements:
        where = measured.get(req["path"])
        need_gb = float(req["min_free_gb"])
        if not where:
            problems.append(f"Disk: {req['path']} was not measured")
            continue
        free_gb = int(where["free_bytes"]) / 1024 ** 3
        if free_gb < need_gb:
            problems.append(
                f"Disk: {req['path']} ({req.get('purpose', 'install path')}) has {free_gb:.1f} GB free "
                f"(measured at {where['measured_at']}), preflight_disk_requirements asks for {need_gb:g} GB. "
                f"Free space there or mount a larger volume at {req['path']}."
            )
    return problems


def artifact_problems(results: list[dict[str, Any]], manifest: dict[str, str], source: str,
                      manifest_name: str = "SHA256SUMS") -> list[str]:
    """Messages for artifacts that are missing, unlisted or differ from the manifest.

    `results` are registered loop results of `stat` (with checksum) or `uri` (HEAD) whose
    item is the file's path or URL; a `uri` result proves presence only, the sha256 is then
    checked when the file is fetched.
    """
    problems = []
    for res in results:
        name = str(res["item"]).rstrip("/").rsplit("/", 1)[-1]
        if "stat" in res:
            exists = bool(res["stat"].get("exists"))
            actual = res["stat"].get("checksum")
        else:
            exists = int(res.get("status", -1)) == 200
            actual = None
        expected = manifest.get(name)
        if not exists:
            problems.append(f"Artifacts: {name} is not in the artifact source {source}. "
                            f"Copy it there and list its sha256 in {manifest_name}.")
        elif expected is None:
            problems.append(f"Artifacts: {name} is in {source} but has no line in {manifest_name}. "
                            f"Add one: `sha256sum {name} >> {manifest_name}` after checking the file.")
        elif actual is not None and actual.lower() != expected:
            problems.append(f"Artifacts: {name} has sha256 {actual}, {manifest_name} expects {expected}. "
                            f"The file is corrupt or was replaced: fetch it again from the vendor.")
    return problems


# What the artifact role's installer failure names the full disk by, in the installer's output.
_FULL_DISK = "No space left on device"
# The output lines a failure message quotes: enough for the vendor's error, short enough to read.
_INSTALLER_TAIL = 15


def hdk_action(installed: str | None, wanted: str) -> str:
    """What an HDK package (NPU driver or firmware) needs: none, install or upgrade. Its
    installers move to an older version with --upgrade as well."""
    action = package_action(installed, wanted)
    return "upgrade" if action == "downgrade" else action


def pending_reboot(record: str, boot_id: str) -> dict[str, str]:
    """Package -> version an install recorded as waiting for a reboot. A record written in an
    earlier boot means the node has rebooted since; anything but a record counts as none."""
    data = json.loads(record) if record else {}
    if isinstance(data, dict) and isinstance(data.get("changes"), dict) and data.get("boot_id") == boot_id:
        return data["changes"]
    return {}


def npu_driver_plan(installed: dict[str, Any], driver: str, firmware: str, virtual: bool,
                    firmware_on_virtual: str, tree: bool, boot_id: str, record: str) -> dict[str, Any]:
    """What the npu_driver role does on a node, from its ascend facts and reboot record."""
    have = {"driver": installed["driver_version"], "firmware": installed["firmware_version"]}
    firmware_action = hdk_action(have["firmware"], firmware)
    if firmware_action != "none" and virtual and firmware_on_virtual == "skip":
        firmware_action = "skip"
    action = {"driver": hdk_action(have["driver"], driver), "firmware": firmware_action}
    # Fresh node: driver, then firmware (the firmware installer needs a driver). A node with
    # another driver: firmware first, the vendor's order for upgrades.
    order = ["firmware", "driver"] if action["driver"] == "upgrade" else ["driver", "firmware"]
    return {
        "have": have,
        "action": action,
        # A tree without version.info is what an interrupted install leaves.
        "partial": not have["driver"] and bool(tree),
        "steps": [kind for kind in order if action[kind] in ("install", "upgrade")],
        "pending": pending_reboot(record, boot_id),
    }


def _installer_exit(result: dict[str, Any], timeout: Any, lock: str) -> str:
    """The rc part of the message: with no rc the installer either outlived the timeout
    (the wait ended while it still ran) or failed to start, which its msg explains."""
    if result.get("rc") is not None:
        return str(result["rc"])
    if result.get("finished", True):
        return f"none: {result.get('msg', '')}"
    return (f"none: still running after {timeout} s (artifact_installer_timeout); "
            f"it keeps {lock} until it ends")


def installer_failure_message(result: dict[str, Any], host: str, file: str, args: list[str],
                              timeout: Any, lock: str, title: str = "", log: str = "",
                              space_path: str = "", rerun_hint: str = "") -> str:
    """Why a vendor installer run by the artifact role failed, and what to do about it.

    `result` is the failed task's result (ansible_failed_result): the installer's job
    status, or the failure to start or wait for it.
    """
    lines = (list(result.get("stdout_lines", [])) + list(result.get("stderr_lines", [])))[-_INSTALLER_TAIL:]
    output = " / ".join(str(line) for line in lines)
    sentences = [
        f"The {title or file} installer {file} ({' '.join(args)}) failed on {host} "
        f"(rc={_installer_exit(result, timeout, lock)}).",
        f"Its last lines: {output or '(none)'}.",
    ]
    if log:
        sentences.append(f"The vendor log is {log}.")
    if _FULL_DISK in output:
        where = f" on {space_path} (df -h {space_path})" if space_path else ""
        sentences.append(f"The disk filled up while it ran: free space{where}.")
    sentences.append(f"Fix the cause and rerun{': ' + rerun_hint if rerun_hint else ''}.")
    return " ".join(sentences)


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {
            "ascend_package": ascend_package,
            "ascend_packages": ascend_packages,
            "package_action": package_action,
            "same_version": same_version,
            "pending_packages": pending_packages,
            "describe_pending": describe_pending,
            "artifact_problems": artifact_problems,
            "installer_failure_message": installer_failure_message,
            "npu_driver_plan": npu_driver_plan,
            "disk_shortfalls": disk_shortfalls,
            "malformed_disk_requirements": malformed_disk_requirements,
            "parse_sha256sums": parse_sha256sums,
        }
