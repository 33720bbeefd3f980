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
    assert "version=9.0.0" in host.file(f"{ROOT}/cann-9.0.0/opp/ascend910b_ops_install.info").content_string
    assert "version=9.0.0" in host.file(f"{ROOT}/nnal/atb/9.0.0/ascend_nnal_install.info").content_string
