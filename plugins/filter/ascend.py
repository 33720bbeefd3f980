"""Filters shared by the roles: vendor package names, manifests, capacity and versions."""
from __future__ import annotations

import re
from typing import Any

# CANN packages: 8.5.0 renamed the 910B kernels package to "910b-ops".
_CANN_OPS_RENAMED_IN = (8, 5, 0)


def version_key(version: str) -> tuple:
    """Order vendor versions: 8.3.RC1 < 8.3.0 < 8.5.0 < 9.0.0 < 26.0.RC1 < 26.0.0.

    A release candidate sorts before the final release of the same numbers.
    """
    parts: list[tuple[int, int]] = []
    for token in re.split(r"[.\-]", str(version)):
        match = re.fullmatch(r"(?i)(rc|alpha|beta|t)(\d*)", token)
        if token.isdigit():
            parts.append((1, int(token)))
        elif match:
            parts.append((0, int(match.group(2) or 0)))
        else:
            digits = re.match(r"\d+", token)
            parts.append((1, int(digits.group(0)) if digits else 0))
    return tuple(parts)


def _numeric_prefix(version: str) -> tuple[int, ...]:
    nums = []
    for token in str(version).split("."):
        if not token.isdigit():
            break
        nums.append(int(token))
    return tuple(nums)


def ascend_package(kind: str, version: str, arch: str) -> str:
    """File name of a vendor package in the artifact source.

    kind: driver, firmware, toolkit, ops, nnal.
    """
    names = {
        "driver": f"Ascend-hdk-910b-npu-driver_{version}_linux-{arch}.run",
        "firmware": f"Ascend-hdk-910b-npu-firmware_{version}.run",
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


def ascend_packages(plan: dict[str, str], arch: str) -> list[str]:
    """File names for a {kind: version} plan, in install order."""
    order = ["driver", "firmware", "toolkit", "ops", "nnal"]
    unknown = sorted(set(plan) - set(order))
    if unknown:
        raise ValueError(f"unknown Ascend package kinds {unknown}")
    return [ascend_package(kind, plan[kind], arch) for kind in order if kind in plan]


def parse_sha256sums(text: str) -> dict[str, str]:
    """Parse `sha256sum` output (`<hex>  <name>` or `<hex> *<name>`) into {name: hex}."""
    sums: dict[str, str] = {}
    for lineno, line in enumerate(str(text).splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = re.fullmatch(r"([0-9a-fA-F]{64})\s+\*?(.+)", line)
        if not match:
            raise ValueError(f"manifest line {lineno} is not '<sha256>  <file>': {line[:80]!r}")
        sums[match.group(2).strip()] = match.group(1).lower()
    return sums


def mount_for(mounts: list[dict[str, Any]], path: str) -> dict[str, Any]:
    """The mount (from ansible_facts.mounts) that holds `path`, existing or not yet created.

    The deepest mount point that is `path` itself or one of its parents wins; {} if none.
    """
    target = "/" + str(path).strip("/")
    best: dict[str, Any] = {}
    best_len = -1
    for mount in mounts or []:
        point = "/" + str(mount.get("mount", "")).strip("/")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and "size_available" in mount and len(point) > best_len:
            best, best_len = mount, len(point)
    return best


def disk_shortfalls(requirements: list[dict[str, Any]], mounts: list[dict[str, Any]]) -> list[str]:
    """One message per install path whose filesystem has less free space than required."""
    problems = []
    for req in requirements:
        mount = mount_for(mounts, req["path"])
        need_gb = float(req["min_free_gb"])
        if not mount:
            problems.append(f"Disk: no mounted filesystem found for {req['path']}")
            continue
        free_gb = int(mount["size_available"]) / 1024 ** 3
        if free_gb < need_gb:
            problems.append(
                f"Disk: {req['path']} ({req.get('purpose', 'install path')}) is on {mount['mount']} with "
                f"{free_gb:.1f} GB free, preflight_disk_requirements asks for {need_gb:g} GB. "
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


def key_value(text: str, sep: str = "=") -> dict[str, str]:
    """Parse `Key=value` (or `Key : value`) lines, as in version.info and install records."""
    out: dict[str, str] = {}
    for line in str(text).splitlines():
        if sep in line:
            key, _, value = line.partition(sep)
            if key.strip():
                out[key.strip()] = value.strip()
    return out


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {
            "ascend_package": ascend_package,
            "ascend_packages": ascend_packages,
            "artifact_problems": artifact_problems,
            "disk_shortfalls": disk_shortfalls,
            "parse_sha256sums": parse_sha256sums,
            "mount_for": mount_for,
            "key_value": key_value,
            "version_key": version_key,
        }
