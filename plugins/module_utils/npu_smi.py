# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Parsers for the text printed by Huawei's ``npu-smi`` tool.

Everything here is pure: it takes what the tool printed and returns plain data, so the
parsing is unit-tested without a node and shared by the modules of this collection.
Runs on managed nodes, hence Python 3.7 compatible.
"""
from __future__ import annotations

import re

# A PCI address as npu-smi prints it: domain:bus:device.function, e.g. 0000:C1:00.0.
PCI_BUS_ID = re.compile(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]$")

_TITLE = re.compile(r"^npu-smi\s+(\S+)")
_COLUMN_HEADER = re.compile(r"^NPU\s+Name$")
_DEVICE_CELL = re.compile(r"^(\d+)\s+(\S.*)$")
_CHIP_CELL = re.compile(r"^(\d+)\b")
_USAGE_PAIR = re.compile(r"^(\d+)/(\d+)$")
_BOARD_LINE = re.compile(r"^\s*([A-Za-z][^:]*?)\s*:\s*(.*?)\s*$")
_RET_CODE = re.compile(r"\bret\s*(?:is|=|:)?\s*(-\d+)")
_BARE_CODE = re.compile(r"(?<![\w.-])(-8\d{3})\b")

BOARD_FIELDS = {
    "software_version": "Software Version",
    "firmware_version": "Firmware Version",
    "compatibility": "Compatibility",
    "pcie_bus_info": "PCIe Bus Info",
    "pci_device_id": "PCI Device ID",
}

# DCMI error codes of npu-smi (Huawei npu-smi command reference, "error codes"; the -8005
# container case from vllm-ascend and HAMi issue captures of `ret is -8005`).
ERROR_HINTS = {
    -8005: "error -8005 is an internal error of the device driver: restart the device driver "
           "(npu-smi set -t reset -i <id> -c 0) or reboot the node, then check `dmesg | grep -i davinci`; "
           "in a container, first check that /dev/davinci*, /dev/davinci_manager, /dev/devmm_svm and "
           "/dev/hisi_hdc are passed in and no other container holds the device",
    -8012: "error -8012 means the device is not ready (still starting after a boot or reset): "
           "wait a minute and retry; reboot the node if it stays",
    -8020: "error -8020 means the device is used by another process (dcmi model initialized "
           "failed): stop the process holding it (`fuser -v /dev/davinci*` shows it), then retry",
}


# Health states from best to worst; the worst chip's state is the NPU's.
HEALTH_RANKS = {"OK": 0, "Warning": 1, "Alarm": 2, "Critical": 3}


class NpuSmiParseError(ValueError):
    """The text is not the npu-smi output the parser expects."""


def table_rows(text: str) -> list[list[str]]:
    """Cells of every ``| a | b |`` row of a box table; separator lines are skipped."""
    rows = []
    for line in text.splitlines():
        line = line.strip()
        if len(line) >= 2 and line.startswith("|") and line.endswith("|"):
            rows.append([cell.strip() for cell in line[1:-1].split("|")])
    return rows


def to_int(token: str | None) -> int | None:
    """An integer, or None for ``NA``, ``-`` and anything else that is not a number."""
    try:
        return int(token) if token is not None else None
    except ValueError:
        return None


def to_float(token: str | None) -> float | None:
    """A float, or None for ``NA``, ``-`` and anything else that is not a number."""
    try:
        return float(token) if token is not None else None
    except ValueError:
        return None


def metric_tokens(cell: str) -> list[str]:
    """Split a metrics cell into tokens, keeping ``used / total`` pairs as one ``used/total``."""
    return re.sub(r"\s*/\s*", "/", cell).split()


def usage_pair(token: str | None) -> tuple[int | None, int | None]:
    """(used, total) of a ``used/total`` token, (None, None) when it is not one."""
    match = _USAGE_PAIR.match(token or "")
    if not match:
        return None, None
    return int(match.group(1)), int(match.group(2))


def nth(tokens: list[str], index: int) -> str | None:
    return tokens[index] if index < len(tokens) else None


def is_device_row(cells: list[str]) -> bool:
    """``| <id> <name> | <health> | <power> <temp> ... |``"""
    return len(cells) == 3 and bool(_DEVICE_CELL.match(cells[0])) and not PCI_BUS_ID.match(cells[1])


def is_chip_row(cells: list[str]) -> bool:
    """``| <chip> | <PCI bus id> | <aicore> <memory> <hbm> |``"""
    return len(cells) == 3 and bool(_CHIP_CELL.match(cells[0])) and bool(PCI_BUS_ID.match(cells[1]))


def chip_from_row(chip: list[str]) -> dict:
    """One chip from its row: ``| <chip> [<phy id>] | <bus id> | <aicore> <memory> <hbm> |``."""
    chip_metrics = metric_tokens(chip[2])
    hbm_used, hbm_total = usage_pair(nth(chip_metrics, 2))
    return {
        "chip": int(_CHIP_CELL.match(chip[0]).group(1)),
        "bus_id": chip[1],
        "aicore_pct": to_int(nth(chip_metrics, 0)),
        "hbm_used_mb": hbm_used,
        "hbm_total_mb": hbm_total,
    }


def device_from_rows(device: list[str], chips: list[list[str]]) -> dict:
    """One NPU from its device row and every chip row below it (one on a 910B server, two on
    an Atlas A3). The per-chip values of the first chip stay at the top level."""
    npu_id, name = _DEVICE_CELL.match(device[0]).groups()
    power_temp = metric_tokens(device[2])
    chip_list = [chip_from_row(chip) for chip in chips]
    first = chip_list[0]
    return {
        "id": int(npu_id),
        "name": name,
        "health": device[1],
        "bus_id": first["bus_id"],
        "chip": first["chip"],
        "power_w": to_float(nth(power_temp, 0)),
        "temp_c": to_int(nth(power_temp, 1)),
        "aicore_pct": first["aicore_pct"],
        "hbm_used_mb": first["hbm_used_mb"],
        "hbm_total_mb": first["hbm_total_mb"],
        "chips": chip_list,
    }


def health_rank(health: str) -> int:
    """How bad a health state is: OK best, Critical worst, anything unknown just above OK."""
    return HEALTH_RANKS.get(health, 1)


def merge_device(into: dict, other: dict) -> dict:
    """One NPU printed as several device rows (an Atlas A3 repeats the NPU row per chip):
    the first row's values stay, the chips add up, the worst health wins."""
    merged = dict(into)
    merged["chips"] = into["chips"] + other["chips"]
    if health_rank(other["health"]) > health_rank(into["health"]):
        merged["health"] = other["health"]
    return merged


def merge_by_id(devices: list[dict]) -> list[dict]:
    """One entry per distinct NPU id, sorted by id, chips in the order printed."""
    by_id: dict[int, dict] = {}
    for device in devices:
        known = by_id.get(device["id"])
        by_id[device["id"]] = device if known is None else merge_device(known, device)
    return [by_id[npu_id] for npu_id in sorted(by_id)]


def device_blocks(rows: list[list[str]]) -> list[tuple[list[str], list[list[str]]]]:
    """Each device row with the chip rows directly below it. A chip row with no device row
    above it is not npu-smi info as the parser knows it: it raises rather than drop a chip."""
    blocks: list[tuple[list[str], list[list[str]]]] = []
    current = None
    for cells in rows:
        if is_device_row(cells):
            current = (cells, [])
            blocks.append(current)
        elif is_chip_row(cells):
            if current is None:
                raise NpuSmiParseError("chip row without its NPU row: | {0} |".format(" | ".join(cells)))
            current[1].append(cells)
        else:
            current = None
    return [block for block in blocks if block[1]]


def title_version(rows: list[list[str]]) -> str | None:
    """The version in the ``npu-smi <version>  Version: <driver>`` title row, if any, exactly
    as printed (release candidates are lower case, ``26.0.rc2``, and stay so)."""
    for cells in rows:
        match = _TITLE.match(cells[0])
        if match:
            return match.group(1)
    return None


def has_column_header(rows: list[list[str]]) -> bool:
    return any(_COLUMN_HEADER.match(cells[0]) for cells in rows)


def parse_info(text: str) -> dict:
    """Parse ``npu-smi info`` into its version, device count and devices sorted by id.

    A device is a row ``<id> <name> | <health> | ...`` directly followed by its chip rows (a
    second cell with a PCI bus id): one on a 910B server. An Atlas A3 has two chips an NPU,
    printed either as one device row over two chip rows or as the device row repeated for
    each chip; either way the count is the number of distinct NPU ids and every chip is in
    the device's ``chips``. The process table that follows never matches, also with an
    empty process name, and lines outside the table (a trailing ``[WARNING] ...``) are not
    rows.
    """
    rows = table_rows(text)
    version = title_version(rows)
    if version is None and not has_column_header(rows):
        raise NpuSmiParseError(
            "not npu-smi info output: found neither the 'npu-smi <version>' title "
            "nor the 'NPU Name | Health' column header"
        )
    devices = merge_by_id([device_from_rows(device, chips) for device, chips in device_blocks(rows)])
    return {"npu_smi_version": version, "count": len(devices), "devices": devices}


def parse_board(text: str) -> dict:
    """Parse ``npu-smi info -t board -i <id>`` into a dict of its raw ``Key : value`` lines."""
    board = {}
    for line in text.splitlines():
        match = _BOARD_LINE.match(line)
        if match:
            board[match.group(1)] = match.group(2)
    if not board:
        raise NpuSmiParseError("not npu-smi board output: no 'Key : value' lines found")
    return board


def board_summary(board: dict) -> dict:
    """The board fields the collection uses, under snake_case names; None when absent."""
    return {field: board.get(key) for field, key in BOARD_FIELDS.items()}


def find_error_code(text: str) -> int | None:
    """The npu-smi/DCMI error code in the text (``ret is -8005``, a bare ``-8020``), if any."""
    match = _RET_CODE.search(text) or _BARE_CODE.search(text)
    return int(match.group(1)) if match else None


def tool_message(stdout: str, stderr: str, code: int | None) -> str:
    """What the tool said: the lines naming the error code, else its last few lines."""
    lines = [line.strip() for line in (stdout + "\n" + stderr).splitlines() if line.strip()]
    if code is not None:
        lines = [line for line in lines if str(code) in line] or lines
    return "; ".join(lines[-5:])


def error_hint(rc: int, stdout: str, stderr: str) -> str:
    """A message for a failed npu-smi call: the tool's own words plus a hint for known codes."""
    code = find_error_code(stdout + "\n" + stderr)
    message = tool_message(stdout, stderr, code) or "no output"
    text = "npu-smi failed (rc={0}): {1}".format(rc, message)
    hint = ERROR_HINTS.get(code)
    if hint:
        text = "{0}. Hint: {1}".format(text.rstrip("."), hint)
    return text
