#!/usr/bin/env python3
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Start a GR00T entry point on Ascend NPUs with the mx_driving patcher applied.

    gr00t_npu_launch.py [--patches A,B | --no-patcher] -m gr00t.experiment.launch_finetune [ARGS...]
    gr00t_npu_launch.py [--patches A,B | --no-patcher] path/to/launch_finetune.py [ARGS...]

The order is the point: torch, torch_npu and torch_npu.contrib.transfer_to_npu are
imported before anything loads mx_driving._C; the other way round registers the NPU
twice ("Two accelerators: npu and npu"). Then
`Patcher().add(<patches>).apply()` from mx_driving.patcher, then the entry point runs
as `python -m MODULE ARGS` or `python SCRIPT ARGS` would run it (same sys.argv).

Patches: --patches (comma separated names exported by mx_driving.patcher), else the
environment variable GR00T_NPU_PATCHES, else TransformersNPU,DiffusersNPU. `none`, an
empty list or --no-patcher skip the patcher (torch_npu is still imported first).
"""
from __future__ import annotations

import importlib
import logging
import os
import runpy
import sys
from typing import List, NamedTuple, Optional

DEFAULT_PATCHES = ("TransformersNPU", "DiffusersNPU")
PATCHES_ENV = "GR00T_NPU_PATCHES"
NPU_MODULES = ("torch", "torch_npu", "torch_npu.contrib.transfer_to_npu")
LOG = logging.getLogger("gr00t_npu_launch")


class LaunchError(Exception):
    """Bad arguments or a missing piece of the NPU stack; the message says how to fix it."""


class Launch(NamedTuple):
    patches: List[str]
    target: str
    is_module: bool
    args: List[str]


def split_patches(value: str) -> List[str]:
    names = [n.strip() for n in value.split(",") if n.strip()]
    return [] if [n.lower() for n in names] == ["none"] else names


def parse_args(argv: List[str], environ: Optional[dict] = None) -> Launch:
    """Launcher options up to the entry point; everything after it belongs to the entry point."""
    environ = os.environ if environ is None else environ
    patches: Optional[List[str]] = None
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--no-patcher":
            patches, i = [], i + 1
        elif arg == "--patches" and i + 1 < len(argv):
            patches, i = split_patches(argv[i + 1]), i + 2
        elif arg.startswith("--patches="):
            patches, i = split_patches(arg.split("=", 1)[1]), i + 1
        elif arg == "-m" and i + 1 < len(argv):
            return Launch(_patches(patches, environ), argv[i + 1], True, argv[i + 2:])
        elif arg == "--" and i + 1 < len(argv):
            return Launch(_patches(patches, environ), argv[i + 1], False, argv[i + 2:])
        elif arg.startswith("-"):
            raise LaunchError("unknown launcher option {0!r} (or a missing value); the entry point comes first: "
                              "-m MODULE or SCRIPT, then its arguments".format(arg))
        else:
            return Launch(_patches(patches, environ), arg, False, argv[i + 1:])
    raise LaunchError("no entry point: give -m MODULE or a SCRIPT path, e.g. -m gr00t.experiment.launch_finetune")


def _patches(chosen: Optional[List[str]], environ: dict) -> List[str]:
    if chosen is not None:
        return chosen
    if PATCHES_ENV in environ:
        return split_patches(environ[PATCHES_ENV])
    return list(DEFAULT_PATCHES)


def import_npu_stack() -> None:
    for name in NPU_MODULES:
        try:
            importlib.import_module(name)
        except ImportError as err:
            raise LaunchError("cannot import {0} ({1}): run this with the training env's python, with CANN's "
                              "set_env.sh sourced".format(name, err))


def apply_patcher(names: List[str]) -> object:
    """`Patcher().add(*classes).apply()` with the named classes of mx_driving.patcher."""
    try:
        patcher_module = importlib.import_module("mx_driving.patcher")
    except ImportError as err:
        raise LaunchError("cannot import mx_driving.patcher ({0}): install mx_driving into this env (the "
                          "mx_driving stage)".format(err))
    missing = [n for n in ["Patcher"] + names if not hasattr(patcher_module, n)]
    if missing:
        raise LaunchError("mx_driving.patcher has no {0}: this mx_driving has the old patcher API; rebuild or "
                          "reinstall it with the mx_driving stage, or choose other patches with --patches or "
                          "{1}".format(", ".join(missing), PATCHES_ENV))
    classes = [getattr(patcher_module, n) for n in names]
    patcher = patcher_module.Patcher().add(*classes).apply()
    LOG.info("mx_driving patcher applied: %s", ", ".join(names))
    return patcher


def run_entry(launch: Launch) -> None:
    """Run the entry point as the interpreter would, with sys.argv = [entry, *args]."""
    sys.argv = [launch.target] + launch.args
    if launch.is_module:
        # As `python -m`: the working directory first on the path.
        sys.path.insert(0, os.getcwd())
        runpy.run_module(launch.target, run_name="__main__", alter_sys=True)
    else:
        sys.path.insert(0, os.path.dirname(os.path.abspath(launch.target)))
        runpy.run_path(launch.target, run_name="__main__")


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__.strip())
        return 0
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s: %(message)s")
    try:
        launch = parse_args(argv)
        import_npu_stack()
        if launch.patches:
            apply_patcher(launch.patches)
        else:
            LOG.info("mx_driving patcher off")
    except LaunchError as err:
        print("gr00t_npu_launch: {0}".format(err), file=sys.stderr)
        return 2
    run_entry(launch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
