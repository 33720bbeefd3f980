"""Tests of the npu-smi parsers, on captured output and on the simulated npu-smi."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ansible_collections.ascendops.gr00t.plugins.module_utils.npu_smi import (
    NpuSmiParseError,
    board_summary,
    error_hint,
    find_error_code,
    parse_board,
    parse_info,
)

INFO_8 = """\
+------------------------------------------------------------------------------------------------+
| npu-smi 25.5.1                   Version: 25.5.1                                               |
+---------------------------+---------------+----------------------------------------------------+
| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |
+===========================+===============+====================================================+
| 0     910B3               | OK            | 101.8       43                0    / 0             |
| 0                         | 0000:C1:00.0  | 0           0    / 0          3318 / 65536         |
+===========================+===============+====================================================+
| 1     910B3               | OK            | 92.8        42                0    / 0             |
| 0                         | 0000:C2:00.0  | 0           0    / 0          3313 / 65536         |
+===========================+===============+====================================================+
| 2     910B3               | OK            | 96.1        44                0    / 0             |
| 0                         | 0000:81:00.0  | 0           0    / 0          3315 / 65536         |
+===========================+===============+====================================================+
| 3     910B3               | OK            | 94.5        41                0    / 0             |
| 0                         | 0000:82:00.0  | 0           0    / 0          3314 / 65536         |
+===========================+===============+====================================================+
| 4     910B3               | OK            | 99.3        45                0    / 0             |
| 0                         | 0000:01:00.0  | 0           0    / 0          3316 / 65536         |
+===========================+===============+====================================================+
| 5     910B3               | OK            | 90.2        40                0    / 0             |
| 0                         | 0000:02:00.0  | 0           0    / 0          3312 / 65536         |
+===========================+===============+====================================================+
| 6     910B3               | OK            | 97.7        43                0    / 0             |
| 0                         | 0000:41:00.0  | 0           0    / 0          3317 / 65536         |
+===========================+===============+====================================================+
| 7     910B3               | OK            | 93.0        42                0    / 0             |
| 0                         | 0000:42:00.0  | 0           0    / 0          3313 / 65536         |
+===========================+===============+====================================================+
+---------------------------+---------------+----------------------------------------------------+
| NPU     Chip              | Process id    | Process name             | Process memory(MB)      |
+===========================+===============+====================================================+
| No running processes found in NPU 0                                                            |
+===========================+===============+====================================================+
| No running processes found in NPU 1                                                            |
+===========================+===============+====================================================+
| No running processes found in NPU 2                                                            |
+===========================+===============+====================================================+
| No running processes found in NPU 3                                                            |
+===========================+===============+====================================================+
| No running processes found in NPU 4                                                            |
+===========================+===============+====================================================+
| No running processes found in NPU 5                                                            |
+===========================+===============+====================================================+
| No running processes found in NPU 6                                                            |
+===========================+===============+====================================================+
| No running processes found in NPU 7                                                            |
+===========================+===============+====================================================+
"""

BUS_IDS_8 = [
    "0000:C1:00.0", "0000:C2:00.0", "0000:81:00.0", "0000:82:00.0",
    "0000:01:00.0", "0000:02:00.0", "0000:41:00.0", "0000:42:00.0",
]

DEVICE_TABLE_HEAD = """\
+------------------------------------------------------------------------------------------------+
| npu-smi 25.5.1                   Version: 25.5.1                                               |
+---------------------------+---------------+----------------------------------------------------+
| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |
+===========================+===============+====================================================+
"""

BOARD = """\
        NPU ID                         : 0
        Product Name                   : IT21PDDA01
        Model                          : NA
        Manufacturer                   : Huawei
        Serial Number                  : 033VNY10N3000123
        Software Version               : 25.5.1
        Firmware Version               : 7.8.0.2.212
        Compatibility                  : OK
        Board ID                       : 0x65
        PCB ID                         : A
        BOM ID                         : 1
        PCIe Bus Info                  : 0000:C1:00.0
        Slot ID                        : 0
        Class ID                       : NA
        PCI Vendor ID                  : 0x19E5
        PCI Device ID                  : 0xD802
        Subsystem Vendor ID            : 0x0200
        Subsystem Device ID            : 0x0100
        Chip Count                     : 1
"""

FAIL_8005 = (
    "DrvMngGetConsoleLogLevel failed. (g_conLogLevel=3)\n"
    "dcmi module initialize failed. ret is -8005\n"
)


def without_npu(text: str, npu_id: int) -> str:
    """The output with the device row, chip row and separator of one NPU removed."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| {0}     910B3".format(npu_id)))
    return "\n".join(lines[:start] + lines[start + 3:]) + "\n"


def with_health(text: str, npu_id: int, health: str) -> str:
    row = "| {0}     910B3               | OK            |".format(npu_id)
    return text.replace(row, "| {0}     910B3               | {1:<14}|".format(npu_id, health))


# --- parse_info on captured output ------------------------------------------------------


def test_eight_devices() -> None:
    info = parse_info(INFO_8)
    assert info["npu_smi_version"] == "25.5.1"
    assert info["count"] == 8
    assert [device["id"] for device in info["devices"]] == list(range(8))
    assert [device["bus_id"] for device in info["devices"]] == BUS_IDS_8
    assert info["devices"][0] == {
        "id": 0,
        "name": "910B3",
        "health": "OK",
        "bus_id": "0000:C1:00.0",
        "chip": 0,
        "power_w": 101.8,
        "temp_c": 43,
        "aicore_pct": 0,
        "hbm_used_mb": 3318,
        "hbm_total_mb": 65536,
        "chips": [{"chip": 0, "bus_id": "0000:C1:00.0", "aicore_pct": 0, "hbm_used_mb": 3318, "hbm_total_mb": 65536}],
    }


def test_seven_devices() -> None:
    info = parse_info(without_npu(INFO_8, 3))
    assert info["count"] == 7
    assert [device["id"] for device in info["devices"]] == [0, 1, 2, 4, 5, 6, 7]


def test_critical_device() -> None:
    info = parse_info(with_health(INFO_8, 5, "Critical"))
    assert [device["health"] for device in info["devices"]] == ["OK"] * 5 + ["Critical"] + ["OK"] * 2


@pytest.mark.parametrize("health", ["OK", "Warning", "Alarm", "Critical", "UNKNOWN"])
def test_health_states(health: str) -> None:
    assert parse_info(with_health(INFO_8, 0, health))["devices"][0]["health"] == health


@pytest.mark.parametrize("hbm", ["58626/ 65536", "58626 /65536", "58626/65536", "58626 / 65536"])
def test_hbm_spacing(hbm: str) -> None:
    text = DEVICE_TABLE_HEAD + (
        "| 0     910B3               | OK            | 310.4       55                0    / 0             |\n"
        "| 0                         | 0000:C1:00.0  | 98          0    / 0          {0:<21}|\n"
        "+===========================+===============+====================================================+\n"
    ).format(hbm)
    device = parse_info(text)["devices"][0]
    assert (device["hbm_used_mb"], device["hbm_total_mb"], device["aicore_pct"]) == (58626, 65536, 98)


def test_running_processes_are_not_devices() -> None:
    busy = INFO_8.replace(
        "| No running processes found in NPU 0                                                            |",
        "| 0       0                 | 123456        | python3                  | 9012                    |\n"
        "| 0       0                 | 123457        | python3                  | 9010                    |",
    )
    info = parse_info(busy)
    assert info["count"] == 8
    assert all(device["name"] == "910B3" for device in info["devices"])


def test_devices_are_sorted_by_id() -> None:
    lines = INFO_8.splitlines()
    block_0, block_1 = lines[6:9], lines[9:12]
    swapped = "\n".join(lines[:6] + block_1 + block_0 + lines[12:])
    assert [device["id"] for device in parse_info(swapped)["devices"]][:2] == [0, 1]


def test_unknown_metrics_are_none() -> None:
    text = DEVICE_TABLE_HEAD + (
        "| 0     910B3               | UNKNOWN       | NA          NA                0    / 0             |\n"
        "| 0                         | 0000:C1:00.0  | NA          0    / 0          NA                   |\n"
    )
    device = parse_info(text)["devices"][0]
    assert [device[key] for key in ("power_w", "temp_c", "aicore_pct", "hbm_used_mb", "hbm_total_mb")] == [None] * 5


@pytest.mark.parametrize(
    "title, version",
    [
        ("| npu-smi 25.5.1                   Version: 25.5.1                                               |", "25.5.1"),
        ("| npu-smi 23.0.rc3 Version: 23.0.rc3 |", "23.0.rc3"),
        ("|npu-smi 24.1.0      Version:24.1.0|", "24.1.0"),
        ("|    npu-smi    22.0.4                   Version: 22.0.2                     |", "22.0.4"),
        ("+------+", None),
    ],
)
def test_header_variants(title: str, version: str | None) -> None:
    text = INFO_8.replace(INFO_8.splitlines()[1], title)
    info = parse_info(text)
    assert info["npu_smi_version"] == version
    assert info["count"] == 8


def test_title_without_devices() -> None:
    title = INFO_8.splitlines()[1]
    assert parse_info(title + "\n") == {"npu_smi_version": "25.5.1", "count": 0, "devices": []}


@pytest.mark.parametrize(
    "text",
    [
        "",
        "bash: npu-smi: command not found\n",
        FAIL_8005,
        BOARD,
        "| 0     910B3               | OK            | 101.8       43                0    / 0             |\n",
        "c1:00.0 Processing accelerators: Huawei Technologies Co., Ltd. Device d802 (rev 20)\n",
    ],
)
def test_garbage_raises(text: str) -> None:
    with pytest.raises(NpuSmiParseError, match="not npu-smi info output"):
        parse_info(text)


def test_parse_error_is_value_error() -> None:
    assert issubclass(NpuSmiParseError, ValueError)


# --- parse_board -------------------------------------------------------------------------


def test_board_raw_keys() -> None:
    board = parse_board(BOARD)
    assert len(board) == 19
    assert board["NPU ID"] == "0"
    assert board["PCIe Bus Info"] == "0000:C1:00.0"
    assert board["Model"] == "NA"


def test_board_summary() -> None:
    assert board_summary(parse_board(BOARD)) == {
        "software_version": "25.5.1",
        "firmware_version": "7.8.0.2.212",
        "compatibility": "OK",
        "pcie_bus_info": "0000:C1:00.0",
        "pci_device_id": "0xD802",
    }


def test_board_summary_of_partial_board() -> None:
    summary = board_summary(parse_board("Firmware Version : 7.1.0.5.220\n"))
    assert summary["firmware_version"] == "7.1.0.5.220"
    assert summary["software_version"] is None


@pytest.mark.parametrize("text", ["", "DrvMngGetConsoleLogLevel failed. (g_conLogLevel=3)\n"])
def test_board_garbage_raises(text: str) -> None:
    with pytest.raises(NpuSmiParseError, match="not npu-smi board output"):
        parse_board(text)


# --- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, code",
    [
        (FAIL_8005, -8005),
        ("dcmi get card list failed. ret = -8020", -8020),
        ("Error code: -8020", -8020),
        (INFO_8, None),
        ("", None),
    ],
)
def test_find_error_code(text: str, code: int | None) -> None:
    assert find_error_code(text) == code


def test_hint_for_internal_error() -> None:
    hint = error_hint(255, FAIL_8005, "")
    assert "rc=255" in hint
    assert "dcmi module initialize failed. ret is -8005" in hint
    assert "internal error" in hint and "not ready" not in hint
    assert "npu-smi set -t reset -i <id> -c 0" in hint
    assert "reboot the node" in hint
    assert "dmesg" in hint
    assert "DrvMngGetConsoleLogLevel" not in hint


def test_hint_for_device_not_ready() -> None:
    hint = error_hint(255, "dcmi module initialize failed. ret is -8012\n", "")
    assert "ret is -8012" in hint
    assert "not ready" in hint and "wait" in hint and "retry" in hint and "reboot" in hint


def test_hint_for_busy_device() -> None:
    hint = error_hint(1, "", "dcmi get device health failed. ret is -8020\n")
    assert "ret is -8020" in hint
    assert "used by another process" in hint and "fuser -v /dev/davinci*" in hint


def test_hints_say_what_each_code_means() -> None:
    """-8005 internal error, -8012 not ready, -8020 device used (npu-smi error codes)."""
    assert "internal error" in error_hint(255, "ret is -8005", "")
    assert "not ready" not in error_hint(255, "ret is -8005", "")
    assert "not ready" in error_hint(255, "dcmi get device info failed. ret is -8012", "")
    assert "used by another process" in error_hint(255, "ret is -8020", "")


def test_trailing_warning_line_is_ignored() -> None:
    text = INFO_8 + "[WARNING] The process information of some processes cannot be obtained.\n"
    assert parse_info(text) == parse_info(INFO_8)


def test_process_with_empty_name_is_not_a_device() -> None:
    text = INFO_8.replace(
        "| No running processes found in NPU 0                                                            |",
        "| 0       0                 | 2451          |                          | 63                      |",
    )
    info = parse_info(text)
    assert info["count"] == 8 and [device["id"] for device in info["devices"]] == list(range(8))


def test_versions_keep_their_case() -> None:
    title = "| npu-smi 26.0.rc2                 Version: 26.0.rc2                                             |"
    assert parse_info(INFO_8.replace(INFO_8.splitlines()[1], title))["npu_smi_version"] == "26.0.rc2"
    board = parse_board(BOARD.replace("Software Version               : 25.5.1",
                                      "Software Version               : 26.0.rc2"))
    assert board_summary(board)["software_version"] == "26.0.rc2"


# An Atlas A3 table: two chips a device, the chip column carries the physical id as well.
INFO_A3 = """\
+------------------------------------------------------------------------------------------------+
| npu-smi 25.2.0                   Version: 25.2.0                                               |
+---------------------------+---------------+----------------------------------------------------+
| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
| Chip  Phy-ID              | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |
+===========================+===============+====================================================+
| 0     Ascend910           | OK            | 183.2       39                0    / 0             |
| 0     0                   | 0000:9D:00.0  | 0           0    / 0          3376 / 65536         |
| 1     1                   | 0000:9F:00.0  | 0           0    / 0          3139 / 65536         |
+===========================+===============+====================================================+
| 1     Ascend910           | OK            | 177.9       38                0    / 0             |
| 0     2                   | 0000:99:00.0  | 0           0    / 0          3374 / 65536         |
| 1     3                   | 0000:9B:00.0  | 0           0    / 0          3140 / 65536         |
+===========================+===============+====================================================+
"""


def test_a3_table_is_parsed_per_chip_and_not_double_counted() -> None:
    info = parse_info(INFO_A3)
    assert info["count"] == 2 and [device["id"] for device in info["devices"]] == [0, 1]
    assert [chip["bus_id"] for chip in info["devices"][1]["chips"]] == ["0000:99:00.0", "0000:9B:00.0"]
    assert [chip["hbm_used_mb"] for chip in info["devices"][0]["chips"]] == [3376, 3139]


# An Atlas A3 as the tool prints it on real nodes: the NPU row repeated for each chip (power
# `-` after the first), a dashed line between the chips of one NPU.
INFO_A3_REPEATED = DEVICE_TABLE_HEAD.replace("| Chip                      |", "| Chip  Phy-ID              |") + """\
| 0     Ascend910           | OK            | 171.0       35                0    / 0             |
| 0     0                   | 0000:9D:00.0  | 0           0    / 0          3401 / 65536         |
+------------------------------------------------------------------------------------------------+
| 0     Ascend910           | OK            | -           35                0    / 0             |
| 1     1                   | 0000:9F:00.0  | 0           0    / 0          3187 / 65536         |
+===========================+===============+====================================================+
| 1     Ascend910           | OK            | 180.2       36                0    / 0             |
| 0     2                   | 0000:99:00.0  | 12          0    / 0          40960/ 65536         |
+------------------------------------------------------------------------------------------------+
| 1     Ascend910           | Alarm         | -           37                0    / 0             |
| 1     3                   | 0000:9B:00.0  | 0           0    / 0          3188 / 65536         |
+===========================+===============+====================================================+
"""


def test_a3_repeated_npu_rows_count_each_npu_once() -> None:
    info = parse_info(INFO_A3_REPEATED)
    assert info["count"] == 2 and [device["id"] for device in info["devices"]] == [0, 1]
    first = info["devices"][1]
    assert [chip["chip"] for chip in first["chips"]] == [0, 1]
    assert [chip["bus_id"] for chip in first["chips"]] == ["0000:99:00.0", "0000:9B:00.0"]
    top = (first["bus_id"], first["power_w"], first["aicore_pct"], first["hbm_used_mb"])
    assert top == ("0000:99:00.0", 180.2, 12, 40960)


def test_a3_worst_chip_health_is_the_npu_health() -> None:
    assert [device["health"] for device in parse_info(INFO_A3_REPEATED)["devices"]] == ["OK", "Alarm"]


def test_chip_row_without_npu_row_raises() -> None:
    text = DEVICE_TABLE_HEAD + (
        "| 1     1                   | 0000:9F:00.0  | 0           0    / 0          3187 / 65536         |\n"
    )
    with pytest.raises(NpuSmiParseError, match="chip row without its NPU row"):
        parse_info(text)


def test_unknown_code_gives_message_and_rc() -> None:
    hint = error_hint(3, "dcmi get board info failed. ret is -8001\n", "")
    assert hint == "npu-smi failed (rc=3): dcmi get board info failed. ret is -8001"


def test_error_without_output() -> None:
    assert error_hint(137, "", "") == "npu-smi failed (rc=137): no output"


# --- the simulated npu-smi ---------------------------------------------------------------


def run_sim(binary: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary)] + list(args), capture_output=True, text=True, check=False)


def sim_device(npu_id: int, **fields: object) -> dict:
    device = {"id": npu_id, "bus_id": BUS_IDS_8[npu_id]}
    device.update(fields)
    return device


def test_sim_defaults_to_eight_healthy_devices(npu_smi_sim: Path, sim_state) -> None:
    sim_state(None)
    result = run_sim(npu_smi_sim, "info")
    assert result.returncode == 0
    info = parse_info(result.stdout)
    assert info["npu_smi_version"] == "25.5.1"
    assert info["count"] == 8
    assert [device["bus_id"] for device in info["devices"]] == BUS_IDS_8
    assert {device["health"] for device in info["devices"]} == {"OK"}
    assert {device["name"] for device in info["devices"]} == {"910B3"}


def test_sim_seven_devices(npu_smi_sim: Path, sim_state) -> None:
    sim_state({"devices": [sim_device(npu_id) for npu_id in range(8) if npu_id != 6]})
    info = parse_info(run_sim(npu_smi_sim, "info").stdout)
    assert info["count"] == 7
    assert 6 not in [device["id"] for device in info["devices"]]


def test_sim_critical_device(npu_smi_sim: Path, sim_state) -> None:
    sim_state({"devices": [sim_device(npu_id, health="Critical" if npu_id == 2 else "OK") for npu_id in range(8)]})
    info = parse_info(run_sim(npu_smi_sim, "info").stdout)
    assert [device["id"] for device in info["devices"] if device["health"] != "OK"] == [2]


def test_sim_compact_hbm_and_processes(npu_smi_sim: Path, sim_state) -> None:
    sim_state({
        "npu_smi_version": "24.1.rc2",
        "hbm_format": "compact",
        "devices": [sim_device(0, hbm_used_mb=58626, aicore_pct=97), sim_device(1, power_w=None)],
        "processes": [{"npu": 0, "pid": 123456, "name": "python3", "mem_mb": 55296}],
    })
    result = run_sim(npu_smi_sim, "info")
    assert "58626/ 65536" in result.stdout
    assert "123456" in result.stdout
    info = parse_info(result.stdout)
    assert info["npu_smi_version"] == "24.1.rc2"
    assert info["count"] == 2
    assert (info["devices"][0]["hbm_used_mb"], info["devices"][0]["aicore_pct"]) == (58626, 97)
    assert info["devices"][1]["power_w"] is None


def test_sim_failure(npu_smi_sim: Path, sim_state) -> None:
    sim_state({"fail": {"code": -8005}})
    result = run_sim(npu_smi_sim, "info")
    assert result.returncode != 0
    assert "ret is -8005" in result.stdout
    assert "restart the device" in error_hint(result.returncode, result.stdout, result.stderr)


def test_sim_board(npu_smi_sim: Path, sim_state) -> None:
    sim_state({"firmware_version": "7.8.0.2.212", "devices": [sim_device(0), sim_device(1, compatibility="Mismatch")]})
    result = run_sim(npu_smi_sim, "info", "-t", "board", "-i", "1")
    assert result.returncode == 0
    assert board_summary(parse_board(result.stdout)) == {
        "software_version": "25.5.1",
        "firmware_version": "7.8.0.2.212",
        "compatibility": "Mismatch",
        "pcie_bus_info": "0000:C2:00.0",
        "pci_device_id": "0xD802",
    }


def test_sim_board_unknown_id(npu_smi_sim: Path, sim_state) -> None:
    sim_state(None)
    result = run_sim(npu_smi_sim, "info", "-t", "board", "-i", "8")
    assert result.returncode == 1
    assert "-i is invalid" in result.stdout


def test_sim_list(npu_smi_sim: Path, sim_state) -> None:
    sim_state(None)
    result = run_sim(npu_smi_sim, "info", "-l")
    assert result.returncode == 0
    assert result.stdout.startswith("        Total Count                    : 8\n\n")
    assert result.stdout.count("Chip Count                     : 1") == 8


@pytest.mark.parametrize("args", [[], ["bogus"], ["info", "-t", "memory", "-i", "0"], ["info", "-i"]])
def test_sim_usage(npu_smi_sim: Path, sim_state, args: list[str]) -> None:
    sim_state(None)
    result = run_sim(npu_smi_sim, *args)
    assert result.returncode == 1
    assert "SIMULATED" in result.stdout.splitlines()[0]


def test_sim_list_prints_id_and_chip_count_only(npu_smi_sim: Path, sim_state) -> None:
    sim_state(None)
    out = run_sim(npu_smi_sim, "info", "-l").stdout
    assert "Product Name" not in out and "Serial Number" not in out
    assert out.count("NPU ID") == 8


@pytest.mark.parametrize(
    "code, printed, meaning",
    [
        (-8005, "dcmi module initialize failed. ret is -8005", "internal error"),
        (-8012, "dcmi module initialize failed, the device is not ready. ret is -8012", "not ready"),
        (-8020, "dcmi model initialized failed, because the device is used. ret is -8020", "used by another process"),
    ],
)
def test_sim_failure_messages_per_code(npu_smi_sim: Path, sim_state, code: int, printed: str, meaning: str) -> None:
    sim_state({"fail": {"code": code}})
    result = run_sim(npu_smi_sim, "info")
    assert result.returncode == 255
    assert result.stdout.splitlines() == ["DrvMngGetConsoleLogLevel failed. (g_conLogLevel=3)", printed]
    assert meaning in error_hint(result.returncode, result.stdout, result.stderr)


def test_sim_trailing_warning(npu_smi_sim: Path, sim_state) -> None:
    sim_state({"trailing_warning": "The process information of some processes cannot be obtained."})
    result = run_sim(npu_smi_sim, "info")
    last = result.stdout.rstrip().splitlines()[-1]
    assert last == "[WARNING] The process information of some processes cannot be obtained."
    assert parse_info(result.stdout)["count"] == 8


def test_sim_process_with_empty_name(npu_smi_sim: Path, sim_state) -> None:
    sim_state({"processes": [{"npu": 1, "pid": 2451, "name": "", "mem_mb": 63}]})
    result = run_sim(npu_smi_sim, "info")
    row = next(line for line in result.stdout.splitlines() if "2451" in line)
    assert [cell.strip() for cell in row.strip("|").split("|")] == ["1       0", "2451", "", "63"]
    assert parse_info(result.stdout)["count"] == 8


def test_sim_prints_version_as_given(npu_smi_sim: Path, sim_state) -> None:
    sim_state({"npu_smi_version": "26.0.rc2"})
    info_out = run_sim(npu_smi_sim, "info").stdout
    assert "npu-smi 26.0.rc2" in info_out and "Version: 26.0.rc2" in info_out
    assert parse_info(info_out)["npu_smi_version"] == "26.0.rc2"
    board = parse_board(run_sim(npu_smi_sim, "info", "-t", "board", "-i", "0").stdout)
    assert board_summary(board)["software_version"] == "26.0.rc2"


def test_sim_a3_table_per_chip(npu_smi_sim: Path, sim_state) -> None:
    sim_state({"chips_per_npu": 2, "devices": [sim_device(0), sim_device(1)]})
    result = run_sim(npu_smi_sim, "info")
    assert "Chip  Phy-ID" in result.stdout
    assert sum(line.startswith("| 1     910B3") for line in result.stdout.splitlines()) == 2
    info = parse_info(result.stdout)
    assert info["count"] == 2
    assert [len(device["chips"]) for device in info["devices"]] == [2, 2]
    assert [chip["bus_id"] for chip in info["devices"][0]["chips"]] == ["0000:C1:00.0", "0000:C3:00.0"]
    assert info["devices"][0]["power_w"] == 93.6
    list_out = run_sim(npu_smi_sim, "info", "-l").stdout
    assert list_out.count("Chip Count                     : 2") == 2
