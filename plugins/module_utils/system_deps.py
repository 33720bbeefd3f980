# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""What the system_deps stage decides on, read in one pass: which packages the package
database holds, whether this role's apt mirror entry is there, and whether pkg-config finds
the FFmpeg libraries and ffmpeg runs."""
from __future__ import annotations

import os
from typing import Callable

# rc, stdout, stderr of a command (run_if_present: rc 127 when the command is not there).
Runner = Callable[[list], "tuple[int, str, str]"]

# apt's module needs python3-apt for a dry run; dpkg is asked about it with the packages.
APT_DRY_RUN_PACKAGE = "python3-apt"


def dpkg_query_argv(packages: list[str]) -> list[str]:
    return ["dpkg-query", "-W", "-f", "${Package} ${db:Status-Abbrev}\n", APT_DRY_RUN_PACKAGE, *packages]


def dpkg_installed(stdout: str) -> set[str]:
    """Names whose status is installed ("ii"); a removed package keeps a "rc" line."""
    found = set()
    for line in stdout.splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[1].startswith("ii"):
            found.add(fields[0].split(":")[0])
    return found


def rpm_query_argv(packages: list[str]) -> list[str]:
    # A name rpm does not hold prints "package X is not installed"; the prefix tells them apart.
    return ["rpm", "-q", "--qf", "installed %{NAME}\n", *packages]


def rpm_installed(stdout: str) -> set[str]:
    return {line.split()[1] for line in stdout.splitlines() if line.startswith("installed ") and len(line.split()) == 2}


def tool_check(run: Runner, argv: list[str]) -> dict:
    """rc and the last lines of stderr of one command, for the verify step's message."""
    rc, dummy, err = run(argv)
    return {"rc": rc, "stderr_lines": err.strip().splitlines()[-5:]}


def read_state(run: Runner, manager: str, packages: list[str], pkgconfig_modules: list[str],
               mirror_file: str) -> dict:
    if manager == "apt":
        rc, out, dummy = run(dpkg_query_argv(packages))
        installed = dpkg_installed(out)
    else:
        rc, out, dummy = run(rpm_query_argv(packages))
        installed = rpm_installed(out)
    # dpkg-query exits 1 and rpm with the count of names it lacks; both still list the rest.
    # 127 is a node without the tool, which the install step's own error explains better.
    return {
        "installed": sorted(p for p in packages if p in installed),
        "missing": [p for p in packages if p not in installed],
        "apt_can_dry_run": manager == "apt" and APT_DRY_RUN_PACKAGE in installed,
        "query_rc": rc,
        "mirror_entry_exists": bool(mirror_file) and os.path.exists(mirror_file),
        "pkgconfig": tool_check(run, ["pkg-config", "--exists", "--print-errors", *pkgconfig_modules]),
        "ffmpeg": tool_check(run, ["ffmpeg", "-version"]),
    }
