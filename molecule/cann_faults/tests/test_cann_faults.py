"""After the faults: repaired, untouched or upgraded, as each node requires."""
import pytest

ROOT = "/usr/local/Ascend"


def fault(host):
    return host.backend.get_hostname().removeprefix("mol-cf-")


def test_interrupted_install_was_repaired(host):
    if fault(host) != "interrupted":
        pytest.skip("other fault")
    assert host.file(f"{ROOT}/cann").linked_to == f"{ROOT}/cann-9.0.0"
    assert host.run("bash -lc 'test \"$ASCEND_HOME_PATH\" = /usr/local/Ascend/cann-9.0.0'").rc == 0
    assert not host.file("/etc/npu-sim/fail_installer").exists


def test_bad_checksum_installed_nothing(host):
    if fault(host) != "bad-checksum":
        pytest.skip("other fault")
    assert not host.file(f"{ROOT}/cann").exists
    assert host.run(f"ls -d {ROOT}/cann-* 2>/dev/null").stdout == ""
    assert not host.file("/etc/profile.d/ascend-cann.sh").exists


def test_upgrade_replaced_the_toolkit_and_reinstalled_ops(host):
    if fault(host) != "upgrade":
        pytest.skip("other fault")
    assert host.file(f"{ROOT}/cann").linked_to == f"{ROOT}/cann-9.0.0"
    assert not host.file(f"{ROOT}/cann-8.5.0").exists
    arch = host.system_info.arch
    assert "version=9.0.0" in host.file(f"{ROOT}/cann-9.0.0/{arch}-linux/ascend_ops_install.info").content_string
    assert "Ascend-cann-atb : 9.0.0" in host.file(f"{ROOT}/nnal/atb/latest/version.info").content_string
    # nnal was uninstalled before the new one went in: no tree of 8.5.0 is left beside it.
    assert not host.file(f"{ROOT}/nnal/atb/8.5.0").exists


def test_driver_upgraded_with_upgrade_alone_and_reboot_pending(host):
    if fault(host) != "driver-upgrade":
        pytest.skip("other fault")
    assert "Version=25.5.1" in host.file(f"{ROOT}/driver/version.info").content_string
    log = host.file("/var/log/ascend_seclog/ascend_install.log").content_string
    assert "--upgrade" in log and "param need used with" not in log
    marker = host.file("/var/lib/ascendops/npu_driver_reboot_pending.json").content_string
    assert '"driver": "25.5.1"' in marker
