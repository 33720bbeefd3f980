"""What the roles did on the converged node: the packages they chose installed, the files and
users they made. What the simulated vendor tools do on their own (eight healthy NPUs, the
links an installer makes) is tested with the simulator in tests/unit/test_sim_*.py."""
import pytest

ROOT = "/usr/local/Ascend"
CANN = "9.0.0"


def test_driver_version_recorded(host):
    info = host.file(f"{ROOT}/driver/version.info")
    assert info.exists
    assert "Version=25.5.1" in info.content_string


@pytest.mark.parametrize("record", [
    f"{ROOT}/cann-{CANN}/{{arch}}-linux/ascend_toolkit_install.info",
    f"{ROOT}/cann-{CANN}/{{arch}}-linux/ascend_ops_install.info",
])
def test_install_records_name_the_version(host, record):
    path = record.format(arch=host.system_info.arch)
    assert f"version={CANN}" in host.file(path).content_string


def test_login_shell_has_the_cann_environment(host):
    out = host.check_output("bash -lc 'echo $ASCEND_HOME_PATH; echo $ASCEND_OPP_PATH; echo ${ATB_HOME_PATH:-}'")
    home, opp, atb = out.splitlines()
    assert home == f"{ROOT}/cann-{CANN}"
    assert opp == f"{home}/opp"
    # nnal sourced with --cxx_abi=1: a login shell's python3 has no torch to guess from.
    assert atb == f"{ROOT}/nnal/atb/{CANN}/atb/cxx_abi_1"


def test_profile_snippet_is_root_owned(host):
    snippet = host.file("/etc/profile.d/ascend-cann.sh")
    assert snippet.user == "root"
    assert snippet.mode == 0o644
    assert f"{ROOT}/cann/set_env.sh" in snippet.content_string


def test_installers_verified_and_staged(host):
    staged = host.file("/var/cache/ascendops/artifacts")
    assert staged.is_directory
    assert staged.mode == 0o750
    assert host.file(f"/var/cache/ascendops/artifacts/Ascend-cann-toolkit_{CANN}_linux-{host.system_info.arch}.run").exists


def test_hwhiaiuser_exists_with_its_home(host):
    user = host.user("HwHiAiUser")
    assert user.exists
    assert user.group == "HwHiAiUser"
    assert user.home == "/home/HwHiAiUser"
    assert host.file("/home/HwHiAiUser").is_directory


def test_video_libraries_resolve_with_pkg_config(host):
    assert host.run("pkg-config --exists libavcodec libavformat libavutil libswscale libswresample").rc == 0
    assert host.run("ffmpeg -hide_banner -version").rc == 0
