# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Running ``npu-smi`` on a node and turning what it printed into the ``npu`` facts.

Shared by the modules that read the NPUs (npu_facts, preflight_facts). Runs on managed
nodes, hence Python 3.7 compatible.
"""
from __future__ import annotations

from typing import Any, Callable

from ansible_collections.ascendops.gr00t.plugins.module_utils.npu_smi import (
    NpuSmiParseError,
    board_summary,
    error_hint,
    find_error_code,
    parse_board,
    parse_info,
)

NPU_SMI_DIRS = ["/usr/local/sbin", "/usr/local/bin", "/usr/local/Ascend/driver/tools"]
BOARD_KEYS = ("software_version", "firmware_version", "compatibility")
HEAD_LINES = 10


def first_lines(text: str, count: int = HEAD_LINES) -> str:
    return "\n".join(text.splitlines()[:count])


class NpuSmiFailure(Exception):
    """npu-smi is missing, failed or printed something that is not its usual output."""

    def __init__(self, msg: str, present: bool = True, **details: object) -> None:
        super().__init__(msg)
        self.msg = msg
        self.present = present
        self.details = details


def run_npu_smi(module: Any, binary: str, args: list[str]) -> str:
    """stdout of `npu-smi <args>`; raises with a hint when the tool fails."""
    rc, stdout, stderr = module.run_command([binary] + args)
    if rc != 0:
        raise NpuSmiFailure(error_hint(rc, stdout, stderr), rc=rc, stdout=stdout, stderr=stderr)
    return stdout


def parsed(parser: Callable[[str], dict], stdout: str, command: str) -> dict:
    """The parser's result; raises with the tool's message or the parse error."""
    try:
        return parser(stdout)
    except NpuSmiParseError as exc:
        if find_error_code(stdout) is not None:
            raise NpuSmiFailure(error_hint(0, stdout, ""), rc=0, stdout=stdout)
        raise NpuSmiFailure("cannot parse the output of `{0}`: {1}. First lines:\n{2}".format(
            command, exc, first_lines(stdout)), stdout=stdout)


def gather(module: Any, name: str, board: bool) -> dict:
    binary = module.get_bin_path(name, opt_dirs=NPU_SMI_DIRS)
    if binary is None:
        raise NpuSmiFailure("{0} not found: the NPU driver is not installed or not on PATH "
                            "(install the Ascend driver, or set the npu_smi parameter to the "
                            "binary's path).".format(name), present=False)
    facts = parsed(parse_info, run_npu_smi(module, binary, ["info"]), "npu-smi info")
    if board:
        for device in facts["devices"]:
            args = ["info", "-t", "board", "-i", str(device["id"])]
            info = parsed(parse_board, run_npu_smi(module, binary, args), "npu-smi " + " ".join(args))
            summary = board_summary(info)
            device.update((key, summary[key]) for key in BOARD_KEYS)
    return facts


def npu_facts(module: Any, name: str, board: bool, required: bool) -> dict:
    """The ``npu`` facts; when not required, a missing or failing npu-smi is reported in
    ``present`` and ``error`` instead of failing the module."""
    try:
        facts = gather(module, name, board)
    except NpuSmiFailure as exc:
        if required:
            module.fail_json(msg=exc.msg, **exc.details)
        return dict(count=0, npu_smi_version=None, devices=[], present=exc.present, error=exc.msg)
    facts.update(present=True, error=None)
    return facts
