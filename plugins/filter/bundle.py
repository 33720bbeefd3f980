"""What an offline bundle must hold for the chosen versions.

Both playbooks/bundle.yml (which fetches it) and playbooks/bundle_check.yml (which checks a
bundle before provisioning) take the list from `bundle_requirements`, so what is built and
what is checked cannot drift apart.
"""
from __future__ import annotations

from typing import Any

from ansible_collections.ascendops.gr00t.plugins.filter.ascend import ascend_packages
from ansible_collections.ascendops.gr00t.plugins.module_utils.bundle import normalize_dist, pin_name, wheel_pattern


def miniforge_installer(version: str, arch: str) -> str:
    """File name of the Miniforge installer: Miniforge3-24.3.0-0-Linux-aarch64.sh."""
    return f"Miniforge3-{version}-Linux-{arch}.sh"


def bundle_requirements(spec: dict[str, Any]) -> dict[str, list[str]]:
    """The files of a bundle, by where they come from.

    spec: arch; cann_version; driver_version and firmware_version (empty: the driver is
    managed elsewhere, not bundled); vendor_files (further files saved from the vendor);
    miniforge_version; pip_packages (pins, with their dependencies, into wheels/);
    single_wheels (pins fetched without dependencies into the top level, e.g. mx_driving);
    gr00t_tarball (empty: GR00T not bundled).

    Returns {vendor, miniforge, wheels, single_wheels, gr00t}: file names, and for wheels
    the patterns a wheel of each pin must match.
    """
    arch = spec["arch"]
    plan = {kind: spec.get(key) for kind, key in (("driver", "driver_version"), ("firmware", "firmware_version"))
            if spec.get(key)}
    cann = spec.get("cann_version")
    if cann:
        plan.update(toolkit=cann, ops=cann, nnal=cann)
    vendor = ascend_packages(plan, arch) + [f for f in spec.get("vendor_files") or [] if f]
    miniforge = spec.get("miniforge_version")
    return {
        "vendor": vendor,
        "miniforge": [miniforge_installer(miniforge, arch)] if miniforge else [],
        "wheels": [wheel_pattern(pin) for pin in spec.get("pip_packages") or []],
        "single_wheels": [wheel_pattern(pin, "") for pin in spec.get("single_wheels") or []],
        "gr00t": [spec["gr00t_tarball"]] if spec.get("gr00t_tarball") else [],
    }


def source_wheels(pins: list[str], names: list[str]) -> list[dict[str, str]]:
    """The pins of packages that PyPI ships as source only, with the wheel pattern each needs.

    `names` are such packages (e.g. deepspeed); their wheels are built, not downloaded.
    """
    wanted = {normalize_dist(n) for n in names}
    return [{"pin": pin, "pattern": wheel_pattern(pin)} for pin in pins or [] if pin_name(pin) in wanted]


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {"bundle_requirements": bundle_requirements, "bundle_source_wheels": source_wheels}
