"""Read what Ascend software a node has from the vendor's own install records.

Pure functions over a filesystem root, so unit tests can point them at a temporary tree.
Layout (CANN 8.5 and later; the 'verify' marks of the design brief apply to the exact
record names, which is why every lookup tries the old layout too):

  <root>/driver/version.info                         Version=<driver>
  <root>/firmware/version.info                       Version=<firmware>
  <root>/cann -> cann-<v>                            active toolkit
  <root>/cann-<v>/<arch>-linux/ascend_toolkit_install.info   version=<v>
  <root>/ascend-toolkit/latest/<arch>-linux/ascend_toolkit_install.info   (before 8.5)
  <root>/cann-<v>/opp/ascend910b_ops_install.info    version=<v>
  <root>/nnal/atb/<v>/ascend_nnal_install.info       version=<v>
  <root>/nnal/atb/latest -> <v>                      active nnal
"""
from __future__ import annotations

import glob
import os
from typing import Dict, List, Optional


def read_key(path: str, key: str) -> Optional[str]:
    """Value of `key=value` (key case-insensitive) in a small record file, or None."""
    try:
        with open(path, "r", errors="replace") as handle:
            for line in handle:
                name, sep, value = line.partition("=")
                if sep and name.strip().lower() == key.lower():
                    return value.strip() or None
    except (IOError, OSError):
        return None
    return None


def first_version(paths: List[str]) -> Optional[str]:
    for path in paths:
        version = read_key(path, "version")
        if version:
            return version
    return None


def toolkit_records(root: str, home: str) -> List[str]:
    return sorted(glob.glob(os.path.join(root, home, "*-linux", "ascend_toolkit_install.info")))


def partial_trees(root: str) -> List[str]:
    """cann-<v> directories that exist without a toolkit install record: an interrupted install."""
    found = []
    for tree in sorted(glob.glob(os.path.join(root, "cann-*"))):
        if os.path.isdir(tree) and not toolkit_records(root, os.path.basename(tree)):
            found.append(tree)
    return found


def installed_toolkits(root: str) -> List[str]:
    versions = []
    for tree in sorted(glob.glob(os.path.join(root, "cann-*"))):
        version = first_version(toolkit_records(root, os.path.basename(tree)))
        if version:
            versions.append(version)
    return versions


def nnal_versions(root: str) -> List[str]:
    """Installed nnal versions; the `latest` link next to them is not one more install."""
    records = sorted(glob.glob(os.path.join(root, "nnal", "atb", "*", "ascend_nnal_install.info")))
    records = [path for path in records if not os.path.islink(os.path.dirname(path))]
    return [v for v in (read_key(path, "version") for path in records) if v]


def active_nnal(root: str) -> Optional[str]:
    return read_key(os.path.join(root, "nnal", "atb", "latest", "ascend_nnal_install.info"), "version")


def active_toolkit_home(root: str) -> Optional[str]:
    for link in ("cann", os.path.join("ascend-toolkit", "latest")):
        path = os.path.join(root, link)
        if os.path.isdir(path) and toolkit_records(root, link):
            return os.path.realpath(path)
    return None


def install_facts(root: str) -> Dict[str, object]:
    home = active_toolkit_home(root)
    toolkit = first_version(toolkit_records(root, home)) if home else None
    ops = None
    if home:
        ops = first_version([os.path.join(home, "opp", "ascend910b_ops_install.info")])
    nnal = nnal_versions(root)
    return {
        "root": root,
        "driver_version": read_key(os.path.join(root, "driver", "version.info"), "version"),
        "firmware_version": read_key(os.path.join(root, "firmware", "version.info"), "version"),
        "toolkit_version": toolkit,
        "toolkit_home": home,
        "toolkits_installed": installed_toolkits(root),
        "ops_version": ops,
        "nnal_version": active_nnal(root) or (nnal[-1] if nnal else None),
        "nnal_installed": nnal,
        "partial_installs": partial_trees(root),
    }

