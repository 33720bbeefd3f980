# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""What the preflight checks read from a node besides npu-smi and the install records: NPU
functions on PCI, the packages of a dkms build, the install root's owner and mode. Pure
functions; the preflight_facts module runs the commands."""
from __future__ import annotations

from ansible_collections.ascendops.gr00t.plugins.module_utils.path_facts import attributes


def pci_functions(stdout: str) -> int:
    """How many devices `lspci -D -d <vendor:device>` listed (one per non-empty line)."""
    return len([line for line in stdout.splitlines() if line.strip()])


def mem_total_mb(meminfo: str) -> int:
    """MemTotal of /proc/meminfo in MiB, as setup's memtotal_mb counts it; -1 when it is not there."""
    for line in meminfo.splitlines():
        key, sep, value = line.partition(":")
        if sep and key == "MemTotal" and value.split():
            return int(value.split()[0]) // 1024
    return -1


def dkms_packages(manager: str, kernel: str) -> list[str]:
    """The packages a dkms build of the driver's modules needs, named for the package manager
    (dpkg: linux-headers-<kernel>; rpm: kernel-devel-<kernel>)."""
    headers = "linux-headers-" if manager == "dpkg" else "kernel-devel-"
    return ["dkms", "gcc", headers + kernel]


def dpkg_installed(rc: int, stdout: str) -> bool:
    """Whether `dpkg-query -W -f='${Status}' <package>` says the package is installed."""
    return rc == 0 and stdout.strip() == "install ok installed"


def owner_and_mode(path: str) -> dict[str, object]:
    """Whether the path exists, its owner's name and its mode as an octal string (stat's form)."""
    found = attributes(path)
    return {key: found[key] for key in ("exists", "owner", "mode")}
