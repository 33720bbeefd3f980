"""The installed mx_driving: rebuilt from the old-API wheel, new patcher, _C kept."""
import hashlib
import json
import os
import zipfile

ENV = "/opt/miniforge3/envs/torch2.7.1"
PY = f"{ENV}/bin/python"
BUILT = "/var/cache/ascendops/mx_driving/mx_driving-1.0.20260421.1-cp311-cp311-linux_x86_64.whl"
BASE = "mx_driving-1.0.20260421-cp311-cp311-linux_x86_64.whl"
SO = "_C.cpython-311-x86_64-linux-gnu.so"
ARTIFACTS = os.path.join(os.environ["MOLECULE_PROJECT_DIRECTORY"], ".sim", "artifacts")


def site(host) -> str:
    return json.loads(host.check_output(f"{PY} -c 'import json, sysconfig; "
                                        "print(json.dumps(sysconfig.get_paths()[\"platlib\"]))'"))


def test_rebuilt_version_is_installed(host):
    sp = site(host)
    assert host.file(f"{sp}/mx_driving-1.0.20260421.1.dist-info/METADATA").contains("^Version: 1.0.20260421.1$")
    assert not host.file(f"{sp}/mx_driving-1.0.20260421.dist-info").exists


def test_c_extension_is_the_base_wheels(host):
    with zipfile.ZipFile(os.path.join(ARTIFACTS, BASE)) as base:
        expected = hashlib.sha256(base.read(f"mx_driving/{SO}")).hexdigest()
    assert host.file(f"{site(host)}/mx_driving/{SO}").sha256sum == expected


def test_patcher_is_the_new_package(host):
    patcher = f"{site(host)}/mx_driving/patcher"
    for name in ("patch.py", "patcher.py", "version.py", "reporting.py", "patcher_logger.py", "legacy.py",
                 "transformers_patch.py", "diffusers_patch.py"):
        assert host.file(f"{patcher}/{name}").is_file, name
    # The old API's own modules are gone: no mix of old and new files.
    assert not host.file(f"{patcher}/mmcv.py").exists
    assert not host.file(f"{patcher}/distribute.py").exists
    assert host.file(f"{patcher}/__init__.py").contains("ascendops.gr00t bridge")


def test_patcher_runs_with_old_and_new_names(host):
    # mx_driving/__init__ needs torch_npu; load the patcher package under a bare parent.
    code = (
        "import sys, types, logging; logging.basicConfig(level=logging.INFO); "
        f"pkg = types.ModuleType('mx_driving'); pkg.__path__ = ['{site(host)}/mx_driving']; "
        "sys.modules['mx_driving'] = pkg; "
        "from mx_driving.patcher import Patcher, TransformersNPU, DiffusersNPU; "
        "from mx_driving.patcher import default_patcher_builder, PatcherBuilder, patch_mmcv_version, msda, dc, ddp; "
        "Patcher().add(TransformersNPU, DiffusersNPU).apply()"
    )
    result = host.run(f"{PY} -c \"{code}\"")
    assert result.rc == 0, result.stderr
    assert "3 of 3 patches applied" in result.stderr


def test_state_file_holds_the_installed_wheels_hash(host):
    built = host.file(BUILT)
    assert built.is_file
    assert host.file(f"{ENV}/.ascendops/mx_driving.sha256").content_string.strip() == built.sha256sum


def test_rebuilt_wheel_keeps_tag_and_purelib(host):
    wheel = host.check_output(f"{PY} -c 'import zipfile; z = zipfile.ZipFile(\"{BUILT}\"); "
                              "print(z.read(\"mx_driving-1.0.20260421.1.dist-info/WHEEL\").decode())'")
    assert "Tag: cp311-cp311-linux_x86_64" in wheel
    assert "Root-Is-Purelib: false" in wheel


def test_nothing_half_written_in_the_build_dir(host):
    names = host.check_output("ls -A /var/cache/ascendops/mx_driving").split()
    assert names == [os.path.basename(BUILT)]
