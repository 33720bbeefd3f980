"""Read what Ascend software a node has from the vendor's own install records.

Pure functions over a filesystem root, so unit tests can point them at a temporary tree.
Layout of CANN 8.5 and later, as real install trees and Huawei's installation guide show it:

  <root>/driver/version.info                         Version=<driver>
  <root>/firmware/version.info                       Version=<firmware>
  <root>/cann -> cann-<v>                            active toolkit
  <root>/cann-<v>/<arch>-linux/ascend_toolkit_install.info   version=<v>
  <root>/ascend-toolkit/latest/<arch>-linux/ascend_toolkit_install.info   (before 8.5)
  <root>/cann-<v>/<arch>-linux/ascend_ops_install.info       version=<v> (910B ops)
  <root>/nnal/atb/<v>/version.info                   Ascend-cann-atb : <v> (colon format)
  <root>/nnal/atb/latest -> <v>                      active nnal

There is no ascend910b_ops_install.info and no *_nnal_install.info: a lookup of those never
finds anything, so a node would reinstall the package on every run.
"""
from __future__ import annotations

import glob
import os
from typing import Dict, List, Optional


def read_key(path: str, key: str, separator: str = "=") -> Optional[str]:
    """Value of `key=value` (key case-insensitive) in a small record file, or None.

    nnal's version.info separates with a colon: `Ascend-cann-atb : 9.0.0`.
    """
    try:
        with open(path, "r", errors="replace") as handle:
            for line in handle:
                name, sep, value = line.partition(separator)
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


# The package line of nnal's version.info; `Ascend-cann-atb Version : 9.0.0.B...` beside it
# carries the build, which is not what a package version is compared with.
NNAL_VERSION_KEY = "Ascend-cann-atb"


def nnal_dirs(root: str) -> List[str]:
    """nnal/atb/<version> directories; the `latest` link next to them is not one more install."""
    found = sorted(glob.glob(os.path.join(root, "nnal", "atb", "*", "")))
    return [path.rstrip(os.sep) for path in found if not os.path.islink(path.rstrip(os.sep))]


def nnal_version(directory: str) -> Optional[str]:
    return read_key(os.path.join(directory, "version.info"), NNAL_VERSION_KEY, ":")


def nnal_versions(root: str) -> List[str]:
    """Installed nnal versions, read from each version directory's version.info."""
    return [v for v in (nnal_version(path) for path in nnal_dirs(root)) if v]


def nnal_partial(root: str) -> List[str]:
    """nnal/atb/<version> directories without a version.info: an interrupted install. The
    installer refuses to install while one is there ("uninstall first")."""
    return [path for path in nnal_dirs(root) if not nnal_version(path)]


def active_nnal(root: str) -> Optional[str]:
    return nnal_version(os.path.join(root, "nnal", "atb", "latest"))


def ops_records(home: str) -> List[str]:
    return sorted(glob.glob(os.path.join(home, "*-linux", "ascend_ops_install.info")))


def active_toolkit_home(root: str) -> Optional[str]:
    for link in ("cann", os.path.join("ascend-toolkit", "latest")):
        path = os.path.join(root, link)
        if os.path.isdir(path) and toolkit_records(root, link):
            return os.path.realpath(path)
    return None


def install_facts(root: str) -> Dict[str, object]:
    home = active_toolkit_home(root)
    toolkit = first_version(toolkit_records(root, home)) if home else None
    ops = first_version(ops_records(home)) if home else None
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
        "nnal_partial": nnal_partial(root),
    }


# What a login shell sees of CANN: the variables its profile snippet sets, printed by bash -lc.
LOGIN_VARIABLES = ("ASCEND_HOME_PATH", "ATB_HOME_PATH")
LOGIN_SCRIPT = "".join('printf "{0}=%s\\n" "${{{0}:-}}";'.format(name) for name in LOGIN_VARIABLES)


def login_env(rc: int, stdout: str) -> Dict[str, object]:
    """The login shell's variables, and the toolkit version the install record under its
    ASCEND_HOME_PATH gives (the one a job started from that shell loads)."""
    found = dict(line.split("=", 1) for line in stdout.splitlines() if "=" in line)
    env: Dict[str, object] = {name: found.get(name, "") for name in LOGIN_VARIABLES}
    home = str(env["ASCEND_HOME_PATH"])
    records = sorted(glob.glob(os.path.join(home, "*-linux", "ascend_toolkit_install.info"))) if home else []
    env.update(rc=rc, toolkit_version=first_version(records) or "")
    return env
