"""State of the converged simulated node."""
import re

import pytest


def test_npu_smi_lists_eight_healthy_npus(host):
    out = host.check_output("npu-smi info")
    devices = re.findall(r"^\|\s*(\d+)\s+910B\S*\s*\|\s*(\w+)\s*\|", out, re.M)
    assert len(devices) == 8
    assert {health for _, health in devices} == {"OK"}


def test_driver_version_recorded(host):
    info = host.file("/usr/local/Ascend/driver/version.info")
    assert info.exists
    assert "Version=25.5.1" in info.content_string


@pytest.mark.parametrize("path", ["/usr/local/Ascend/cann", "/etc/profile.d"])
def test_nothing_written_by_preflight(host, path):
    # Preflight is read-only: nothing under the install paths is newer than preparation.
    newer = host.run(f"find {path} -newer /var/tmp/sim-prepared 2>/dev/null")
    assert newer.stdout.strip() == ""
