"""Tests of the mx_driving_wheel module and its helpers (module_utils wheel_archive, mx_driving_rebuild).

Fixture wheels and patcher sources come from tests/sim/make_mx_driving.py: an old-API
wheel, a new-API wheel (both with a dummy `_C.cpython-310-aarch64-linux-gnu.so`) and the
new patcher package as a tree, a tarball or a donor wheel.
"""
from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import yaml
import modrun

from ansible_collections.ascendops.gr00t.plugins.module_utils import mx_driving_rebuild as rb
from ansible_collections.ascendops.gr00t.plugins.module_utils import wheel_archive as wa
from ansible_collections.ascendops.gr00t.plugins.modules import mx_driving_facts, mx_driving_wheel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sim"))
import make_mx_driving as sim  # noqa: E402

OLD = "mx_driving-1.0.20260421-cp310-cp310-linux_aarch64.whl"
NEW = "mx_driving-26.2.0-cp310-cp310-linux_aarch64.whl"
OUT = "mx_driving-1.0.20260421.1-cp310-cp310-linux_aarch64.whl"
SO = "mx_driving/_C.cpython-310-aarch64-linux-gnu.so"


def run_module(monkeypatch, capsys, args: dict) -> dict:
    return modrun.run_module(mx_driving_wheel.main, monkeypatch, capsys, args)


def unzip(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {n: archive.read(n) for n in archive.namelist()}


@pytest.fixture
def wheels(tmp_path: Path) -> dict[str, Path]:
    src = tmp_path / "src"
    src.mkdir()
    (src / OLD).write_bytes(sim.old_api_wheel())
    (src / NEW).write_bytes(sim.new_api_wheel())
    (src / "DrivingSDK-26.2.0.tar.gz").write_bytes(sim.source_tarball())
    sim.write_source_tree(src / "tree")
    return {"old": src / OLD, "new": src / NEW, "tar": src / "DrivingSDK-26.2.0.tar.gz", "tree": src / "tree",
            "dest": tmp_path / "dest"}


def rebuild_args(wheels: dict[str, Path], **extra) -> dict:
    args = {"base_wheel": str(wheels["old"]), "patcher_src": str(wheels["tree"]), "dest": str(wheels["dest"]),
            "pip_check": False}
    args.update(extra)
    return args


def dest_entries(wheels: dict[str, Path]) -> list[str]:
    return sorted(os.listdir(wheels["dest"])) if wheels["dest"].exists() else []


# ---------------------------------------------------------------- wheel_archive


def test_record_digest_is_urlsafe_b64_without_padding() -> None:
    assert wa.record_digest(b"") == "sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU"


def test_parse_wheel_filename() -> None:
    info = wa.parse_wheel_filename("mx_driving-26.2.0.post2-cp310-cp310-manylinux2014_aarch64.whl")
    assert info == {"name": "mx_driving", "version": "26.2.0.post2", "build": "",
                    "tag": "cp310-cp310-manylinux2014_aarch64"}
    with pytest.raises(wa.WheelError, match="not a wheel file name"):
        wa.parse_wheel_filename("mx_driving.tar.gz")


@pytest.mark.parametrize("tag,platform,pyver", [
    ("cp310-cp310-manylinux2014_aarch64", "manylinux2014_aarch64", "3.10"),
    ("cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64", "manylinux_2_17_x86_64", "3.11"),
    ("py3-none-any", "any", None),
])
def test_tag_platform_and_python(tag: str, platform: str, pyver: str | None) -> None:
    assert wa.platform_of(tag) == platform
    assert wa.python_version_of(tag) == pyver


def test_replace_header_keeps_the_body() -> None:
    text = "Metadata-Version: 2.1\nName: x\nVersion: 1.0\n\nVersion: in the body stays\n"
    assert wa.replace_header(text, "Version", "1.0.1") == (
        "Metadata-Version: 2.1\nName: x\nVersion: 1.0.1\n\nVersion: in the body stays\n")
    assert wa.replace_header("A: 1\n", "B", "2") == "A: 1\nB: 2\n"
    assert wa.replace_header("A: 1\nB: 0\n\n", "B", "2") == "A: 1\nB: 2\n\n"


def test_pack_is_deterministic_and_orders_dist_info_last() -> None:
    files = {"pkg-1.dist-info/WHEEL": b"w", "pkg/b.py": b"b", "pkg/a.py": b"a", "pkg-1.dist-info/METADATA": b"m"}
    first = wa.pack(files, "pkg-1.dist-info", 1700000000)
    assert first == wa.pack(dict(reversed(list(files.items()))), "pkg-1.dist-info", 1700000000)
    assert first != wa.pack(files, "pkg-1.dist-info", 1700000002)
    with zipfile.ZipFile(io.BytesIO(first)) as archive:
        infos = archive.infolist()
    assert [i.filename for i in infos] == ["pkg/a.py", "pkg/b.py", "pkg-1.dist-info/METADATA",
                                           "pkg-1.dist-info/WHEEL", "pkg-1.dist-info/RECORD"]
    assert {i.date_time for i in infos} == {(2023, 11, 14, 22, 13, 20)}
    assert {i.external_attr >> 16 for i in infos} == {0o100644}


def test_epoch_before_1980_is_clamped() -> None:
    assert wa.zip_date_time(0) == (1980, 1, 1, 0, 0, 0)


def test_record_problems_finds_every_mismatch() -> None:
    files = {"p/a.py": b"a", "p/b.py": b"b"}
    record = wa.make_record(files, "p-1.dist-info/RECORD")
    good = dict(files, **{"p-1.dist-info/RECORD": record})
    assert wa.record_problems(good, "p-1.dist-info/RECORD") == []
    bad = dict(good, **{"p/a.py": b"changed", "p/c.py": b"new"})
    del bad["p/b.py"]
    problems = wa.record_problems(bad, "p-1.dist-info/RECORD")
    assert "RECORD has a wrong hash or size for p/a.py" in problems
    assert "p/c.py is not in RECORD" in problems
    assert "RECORD lists p/b.py, which is not in the wheel" in problems


# ---------------------------------------------------------------- API detection


def test_detects_old_and_new_api() -> None:
    assert rb.detect_api(wa.read_zip(sim.old_api_wheel(), "old")) == "old"
    assert rb.detect_api(wa.read_zip(sim.new_api_wheel(), "new")) == "new"


def test_detection_reads_and_never_imports() -> None:
    package = dict(sim.NEW_PATCHER)
    package["__init__.py"] = "raise SystemExit('imported!')\n" + package["__init__.py"]
    package["patcher.py"] = "import torch_npu_which_is_not_here\n" + package["patcher.py"]
    assert rb.new_api_problems({k: v.encode() for k, v in package.items()}) == []


@pytest.mark.parametrize("change,problem", [
    (lambda p: p.pop("legacy.py"), "no legacy.py"),
    (lambda p: p.pop("diffusers_patch.py"), "no diffusers_patch.py"),
    (lambda p: p.update({"transformers_patch.py": "class Other:\n    pass\n"}),
     "transformers_patch.py defines no class TransformersNPU"),
    (lambda p: p.update({"patcher.py": "class Patcher:\n    def __init__(self, m, b):\n        pass\n"}),
     "Patcher has no add/apply"),
    (lambda p: p.update({"__init__.py": "from mx_driving.patcher.patcher import Patcher\n"}),
     "__init__.py does not export DiffusersNPU, TransformersNPU"),
])
def test_each_missing_piece_makes_the_api_old(change, problem: str) -> None:
    package = dict(sim.NEW_PATCHER)
    change(package)
    problems = rb.new_api_problems({k: v.encode() for k, v in package.items()})
    assert any(problem in p for p in problems), problems


def test_old_exports_are_the_bound_names_of_all() -> None:
    # `optimizer` is listed in __all__ but never bound: it never worked, nothing to keep.
    assert rb.old_exports(sim.OLD_PATCHER["__init__.py"].encode()) == [
        "default_patcher_builder", "PatcherBuilder", "Patcher", "Patch", "patch_mmcv_version", "msda", "dc",
        "ddp", "ddp_forward"]


def test_old_exports_without_all_skip_private_names_and_module_imports() -> None:
    init = b"import importlib\nfrom typing import Dict\nfrom a import b as c\n_private = 1\nX = 2\ndef f():\n    pass\n"
    assert rb.old_exports(init) == ["X", "c", "f"]


def test_bridge_prefers_legacy_and_reports_the_undefined() -> None:
    package = {k: v.encode() for k, v in sim.NEW_PATCHER.items()}
    package["mmcv_patch.py"] += b"\ndef patch_mmcv_version(v):\n    pass\n"
    imports, unresolved = rb.bridge_imports(["PatcherBuilder", "patch_mmcv_version", "msda", "gone"], package)
    assert imports == {"patch_mmcv_version": "legacy", "msda": "mmcv_patch"}
    assert unresolved == ["gone"]


def test_bridge_adds_new_classes_the_source_init_lacks() -> None:
    package = {k: v.encode() for k, v in sim.NEW_PATCHER.items()}
    package["__init__.py"] = b"from mx_driving.patcher.patcher import Patcher\n"
    init, unresolved = rb.bridged_init(package, ["default_patcher_builder"], "1.0", "test")
    text = init.decode()
    assert "from mx_driving.patcher.legacy import default_patcher_builder" in text
    assert "from mx_driving.patcher.diffusers_patch import DiffusersNPU" in text
    assert "from mx_driving.patcher.transformers_patch import TransformersNPU" in text
    assert "__all__" not in text
    assert unresolved == []
    compile(text, "__init__.py", "exec")


# ---------------------------------------------------------------- patcher sources


def test_patcher_source_from_tree_tarball_and_donor_wheel(wheels: dict[str, Path]) -> None:
    tree, dummy = rb.load_patcher_source(str(wheels["tree"]))
    tar, description = rb.load_patcher_source(str(wheels["tar"]))
    donor, donor_description = rb.load_patcher_source(str(wheels["new"]))
    assert tree == tar == donor
    assert set(tree) == set(sim.NEW_PATCHER)
    assert description == "source tarball DrivingSDK-26.2.0.tar.gz"
    assert donor_description == "donor wheel {0} (26.2.0)".format(NEW)
    assert rb.package_digest(tree) == rb.package_digest(donor)


def test_tree_skips_bytecode(wheels: dict[str, Path]) -> None:
    cache = wheels["tree"] / "mx_driving" / "patcher" / "__pycache__"
    cache.mkdir()
    (cache / "patch.cpython-310.pyc").write_bytes(b"\0")
    (wheels["tree"] / "mx_driving" / "patcher" / "stale.pyc").write_bytes(b"\0")
    package, dummy = rb.load_patcher_source(str(wheels["tree"]))
    assert set(package) == set(sim.NEW_PATCHER)


def test_tarball_with_two_trees_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "two.tar"
    with tarfile.open(path, "w") as archive:
        for prefix in ("a", "b"):
            info = tarfile.TarInfo(prefix + "/mx_driving/patcher/__init__.py")
            archive.addfile(info, io.BytesIO(b""))
    with pytest.raises(wa.WheelError, match="more than one mx_driving/patcher/"):
        rb.load_patcher_source(str(path))


@pytest.mark.parametrize("missing", rb.FRAMEWORK_FILES)
def test_partial_source_names_the_missing_file(missing: str) -> None:
    package = {k: v.encode() for k, v in sim.NEW_PATCHER.items() if k != missing}
    problems = rb.source_problems(package)
    assert problems and missing in problems[0] and "partial source" in problems[0]


# ---------------------------------------------------------------- module: rebuild


def test_rebuild_of_an_old_wheel(monkeypatch, capsys, wheels: dict[str, Path]) -> None:
    result = run_module(monkeypatch, capsys, rebuild_args(wheels, pip_check=True))
    assert not result.get("failed"), result
    out = wheels["dest"] / OUT
    assert result["changed"] is True and result["rebuilt"] is True
    assert result["api"] == "old" and result["base_version"] == "1.0.20260421"
    assert result["version"] == "1.0.20260421.1"
    assert result["wheel"] == str(out)
    assert result["sha256"] == hashlib.sha256(out.read_bytes()).hexdigest()
    assert result["tags"] == ["cp310-cp310-linux_aarch64"]
    assert result["unbridged_exports"] == ["ddp_forward"]
    assert "ddp_forward" in str(result["warnings"])
    assert dest_entries(wheels) == [OUT]

    base, files = unzip(wheels["old"]), unzip(out)
    # _C and every file outside the patcher are the base's own bytes.
    assert files[SO] == base[SO]
    for name in base:
        if not name.startswith(("mx_driving/patcher/", "mx_driving-1.0.20260421.dist-info/")):
            assert files[name] == base[name], name
    # The whole patcher package is the source's: old-only modules are gone.
    patcher = {n[len("mx_driving/patcher/"):] for n in files if n.startswith("mx_driving/patcher/")}
    assert patcher == set(sim.NEW_PATCHER)
    for name in set(sim.NEW_PATCHER) - {"__init__.py"}:
        assert files["mx_driving/patcher/" + name] == sim.NEW_PATCHER[name].encode()
    # dist-info renamed, version set, tag and Root-Is-Purelib kept.
    dist = "mx_driving-1.0.20260421.1.dist-info"
    assert not any(n.startswith("mx_driving-1.0.20260421.dist-info/") for n in files)
    assert "Version: 1.0.20260421.1\n" in files[dist + "/METADATA"].decode()
    wheel = files[dist + "/WHEEL"].decode()
    assert "Tag: cp310-cp310-linux_aarch64\n" in wheel and "Root-Is-Purelib: false\n" in wheel
    assert list(files)[-1] == dist + "/RECORD"


def test_rebuilt_record_is_right(monkeypatch, capsys, wheels: dict[str, Path]) -> None:
    run_module(monkeypatch, capsys, rebuild_args(wheels))
    files = unzip(wheels["dest"] / OUT)
    rows = list(csv.reader(io.StringIO(files["mx_driving-1.0.20260421.1.dist-info/RECORD"].decode())))
    assert {r[0] for r in rows} == set(files)
    for path, digest, size in rows:
        if path.endswith("/RECORD"):
            assert (digest, size) == ("", "")
            continue
        expected = base64.urlsafe_b64encode(hashlib.sha256(files[path]).digest()).rstrip(b"=").decode()
        assert (digest, int(size)) == ("sha256=" + expected, len(files[path])), path


def test_bridged_init_keeps_old_exports_and_adds_new(monkeypatch, capsys, wheels: dict[str, Path]) -> None:
    run_module(monkeypatch, capsys, rebuild_args(wheels))
    init = unzip(wheels["dest"] / OUT)["mx_driving/patcher/__init__.py"].decode()
    assert init.startswith(sim.NEW_PATCHER["__init__.py"].rstrip("\n"))
    assert "from mx_driving.patcher.legacy import patch_mmcv_version" in init
    assert "from mx_driving.patcher.mmcv_patch import dc, ddp, msda" in init
    assert "__all__ = list(__all__) + ['dc', 'ddp', 'msda', 'patch_mmcv_version']" in init
    assert "= None" not in init
    bound = rb.bound_names(rb.parse(init.encode(), "init"))
    assert {"Patcher", "TransformersNPU", "DiffusersNPU", "default_patcher_builder", "PatcherBuilder",
            "patch_mmcv_version", "msda", "dc", "ddp", "Patch"} <= bound


def test_rebuild_is_byte_identical(monkeypatch, capsys, wheels: dict[str, Path], tmp_path: Path) -> None:
    run_module(monkeypatch, capsys, rebuild_args(wheels))
    other = run_module(monkeypatch, capsys, rebuild_args(wheels, dest=str(tmp_path / "again")))
    assert (tmp_path / "again" / OUT).read_bytes() == (wheels["dest"] / OUT).read_bytes()
    tar = run_module(monkeypatch, capsys, rebuild_args(wheels, dest=str(tmp_path / "tar"),
                                                       patcher_src=str(wheels["tar"])))
    donor = run_module(monkeypatch, capsys, rebuild_args(wheels, dest=str(tmp_path / "donor"),
                                                         patcher_src=str(wheels["new"])))
    assert other["sha256"] != tar["sha256"]  # the bridge comment names the source
    assert tar["patcher_source"]["sha256"] == donor["patcher_source"]["sha256"] == other["patcher_source"]["sha256"]


def test_source_date_epoch(monkeypatch, capsys, wheels: dict[str, Path], tmp_path: Path) -> None:
    default = run_module(monkeypatch, capsys, rebuild_args(wheels))
    with zipfile.ZipFile(wheels["dest"] / OUT) as archive:
        assert {i.date_time for i in archive.infolist()} == {(1980, 1, 1, 0, 0, 0)}
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1776729600")
    env = run_module(monkeypatch, capsys, rebuild_args(wheels, dest=str(tmp_path / "env")))
    explicit = run_module(monkeypatch, capsys, rebuild_args(wheels, dest=str(tmp_path / "arg"),
                                                            source_date_epoch=1776729600))
    assert env["sha256"] == explicit["sha256"] != default["sha256"]
    with zipfile.ZipFile(tmp_path / "env" / OUT) as archive:
        assert {i.date_time for i in archive.infolist()} == {(2026, 4, 21, 0, 0, 0)}
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    bad = run_module(monkeypatch, capsys, rebuild_args(wheels, dest=str(tmp_path / "bad")))
    assert bad["failed"] and "SOURCE_DATE_EPOCH is 'yesterday'" in bad["msg"]


def test_local_version(monkeypatch, capsys, wheels: dict[str, Path]) -> None:
    result = run_module(monkeypatch, capsys, rebuild_args(wheels, local_version="+ascend.1"))
    assert result["version"] == "1.0.20260421+ascend.1"
    assert dest_entries(wheels) == ["mx_driving-1.0.20260421+ascend.1-cp310-cp310-linux_aarch64.whl"]
    bad = run_module(monkeypatch, capsys, rebuild_args(wheels, local_version="rc-1"))
    assert bad["failed"] and "not a PEP 440 version" in bad["msg"]


def test_second_run_changes_nothing(monkeypatch, capsys, wheels: dict[str, Path]) -> None:
    first = run_module(monkeypatch, capsys, rebuild_args(wheels))
    out = wheels["dest"] / OUT
    os.utime(out, (1000000000, 1000000000))
    second = run_module(monkeypatch, capsys, rebuild_args(wheels))
    assert second["changed"] is False and second["rebuilt"] is True
    assert second["sha256"] == first["sha256"]
    assert out.stat().st_mtime == 1000000000


def test_a_different_existing_output_is_replaced(monkeypatch, capsys, wheels: dict[str, Path]) -> None:
    wheels["dest"].mkdir()
    (wheels["dest"] / OUT).write_bytes(b"stale")
    result = run_module(monkeypatch, capsys, rebuild_args(wheels))
    assert result["changed"] is True
    assert hashlib.sha256((wheels["dest"] / OUT).read_bytes()).hexdigest() == result["sha256"]


def test_check_mode_writes_nothing(monkeypatch, capsys, wheels: dict[str, Path]) -> None:
    result = run_module(monkeypatch, capsys, rebuild_args(wheels, _ansible_check_mode=True))
    assert result["changed"] is True and result["wheel"] == str(wheels["dest"] / OUT)
    assert not wheels["dest"].exists()
    run_module(monkeypatch, capsys, rebuild_args(wheels))
    again = run_module(monkeypatch, capsys, rebuild_args(wheels, _ansible_check_mode=True))
    assert again["changed"] is False and again["sha256"] == result["sha256"]


def test_new_api_wheel_is_used_as_is(monkeypatch, capsys, wheels: dict[str, Path]) -> None:
    result = run_module(monkeypatch, capsys, {"base_wheel": str(wheels["new"]), "dest": str(wheels["dest"])})
    assert result["changed"] is False and result["rebuilt"] is False and result["api"] == "new"
    assert result["wheel"] == str(wheels["new"]) and result["version"] == "26.2.0"
    assert result["sha256"] == hashlib.sha256(wheels["new"].read_bytes()).hexdigest()
    assert not wheels["dest"].exists()


def test_rebuild_always_and_never(monkeypatch, capsys, wheels: dict[str, Path]) -> None:
    forced = run_module(monkeypatch, capsys, rebuild_args(wheels, base_wheel=str(wheels["new"]), rebuild="always"))
    assert forced["rebuilt"] is True and forced["api"] == "new" and forced["version"] == "26.2.0.1"
    inspected = run_module(monkeypatch, capsys, rebuild_args(wheels, rebuild="never", patcher_src=None))
    assert inspected["rebuilt"] is False and inspected["api"] == "old" and inspected["changed"] is False
    assert inspected["wheel"] == str(wheels["old"])


def test_pip_dry_run_argv() -> None:
    argv = mx_driving_wheel.pip_dry_run_argv("/env/bin/python", "cp310-cp310-manylinux2014_aarch64", "/d", "/t",
                                             "mx_driving", "1.0.1")
    assert argv == ["/env/bin/python", "-m", "pip", "install", "--dry-run", "--no-deps",
                    "--disable-pip-version-check", "--target", "/t", "--platform", "manylinux2014_aarch64",
                    "--only-binary=:all:", "--no-index", "--find-links", "/d", "--python-version", "3.10",
                    "mx_driving==1.0.1"]


def test_output_problems_catch_a_changed_extension(wheels: dict[str, Path]) -> None:
    base = rb.BaseWheel(OLD, wheels["old"].read_bytes())
    package, dummy = rb.load_patcher_source(str(wheels["tree"]))
    built, dummy = rb.rebuild(base, package, "test", "1.0.20260421.1", 0)
    assert rb.output_problems(built, base, "1.0.20260421.1") == []
    files = wa.read_zip(built, "built")
    files[SO] = b"another build"
    tampered = wa.pack(files, "mx_driving-1.0.20260421.1.dist-info", 0)
    assert rb.output_problems(tampered, base, "1.0.20260421.1") == [SO + " differs from the base wheel's"]


# ---------------------------------------------------------------- module: refusals


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_refuses_a_file_that_is_not_a_zip(monkeypatch, capsys, wheels: dict[str, Path], tmp_path: Path) -> None:
    base = write(tmp_path / OLD, b"<html>404 Not Found</html>")
    result = run_module(monkeypatch, capsys, rebuild_args(wheels, base_wheel=str(base)))
    assert result["failed"] and "is not a readable zip archive" in result["msg"] and OLD in result["msg"]
    assert dest_entries(wheels) == []


def test_refuses_a_truncated_wheel(monkeypatch, capsys, wheels: dict[str, Path], tmp_path: Path) -> None:
    data = sim.old_api_wheel()
    base = write(tmp_path / OLD, data[: len(data) // 2])
    result = run_module(monkeypatch, capsys, rebuild_args(wheels, base_wheel=str(base)))
    assert result["failed"] and "corrupt or truncated" in result["msg"]
    assert dest_entries(wheels) == []


def test_refuses_a_corrupt_member(monkeypatch, capsys, wheels: dict[str, Path], tmp_path: Path) -> None:
    data = bytearray(sim.wheel_bytes("1.0", "cp310", "aarch64", sim.OLD_PATCHER))
    marker = data.find(b"PK\x03\x04", 10)
    data[marker + 40] ^= 0xFF  # a byte inside an entry's compressed data
    base = write(tmp_path / "mx_driving-1.0-cp310-cp310-linux_aarch64.whl", bytes(data))
    result = run_module(monkeypatch, capsys, rebuild_args(wheels, base_wheel=str(base)))
    assert result["failed"] and "not a readable zip archive" in result["msg"]


def test_refuses_a_wheel_without_c(monkeypatch, capsys, wheels: dict[str, Path], tmp_path: Path) -> None:
    base = write(tmp_path / OLD, sim.wheel_bytes("1.0.20260421", "cp310", "aarch64", sim.OLD_PATCHER,
                                                 with_extension=False))
    result = run_module(monkeypatch, capsys, rebuild_args(wheels, base_wheel=str(base)))
    assert result["failed"] and "has no mx_driving/_C*.so" in result["msg"]
    assert dest_entries(wheels) == []


def test_refuses_a_bad_file_name(monkeypatch, capsys, wheels: dict[str, Path], tmp_path: Path) -> None:
    base = write(tmp_path / "mx_driving.whl", sim.old_api_wheel())
    result = run_module(monkeypatch, capsys, rebuild_args(wheels, base_wheel=str(base)))
    assert result["failed"] and "mx_driving.whl is not a wheel file name" in result["msg"]


def test_refuses_a_missing_base(monkeypatch, capsys, wheels: dict[str, Path]) -> None:
    result = run_module(monkeypatch, capsys, rebuild_args(wheels, base_wheel=str(wheels["dest"] / "none.whl")))
    assert result["failed"] and "does not exist" in result["msg"]


@pytest.mark.parametrize("missing", rb.FRAMEWORK_FILES)
def test_refuses_a_partial_patcher_source(monkeypatch, capsys, wheels: dict[str, Path], tmp_path: Path,
                                          missing: str) -> None:
    tree = sim.write_source_tree(tmp_path / "partial", {k: v for k, v in sim.NEW_PATCHER.items() if k != missing})
    result = run_module(monkeypatch, capsys, rebuild_args(wheels, patcher_src=str(tree)))
    assert result["failed"] and missing in result["msg"] and "partial source" in result["msg"]
    assert dest_entries(wheels) == []


def test_refuses_an_old_api_source(monkeypatch, capsys, wheels: dict[str, Path]) -> None:
    result = run_module(monkeypatch, capsys, rebuild_args(wheels, patcher_src=str(wheels["old"])))
    assert result["failed"] and "is unusable" in result["msg"]


def test_refuses_a_rebuild_without_source(monkeypatch, capsys, wheels: dict[str, Path], tmp_path: Path) -> None:
    missing = run_module(monkeypatch, capsys, rebuild_args(wheels, patcher_src=None))
    assert missing["failed"] and "patcher_src is not set" in missing["msg"]
    empty = run_module(monkeypatch, capsys, rebuild_args(wheels, patcher_src=str(tmp_path)))
    assert empty["failed"] and "has no mx_driving/patcher/ directory" in empty["msg"]
    other = run_module(monkeypatch, capsys, rebuild_args(wheels, patcher_src=str(write(tmp_path / "x.txt", b"x"))))
    assert other["failed"] and "neither a directory, a .whl nor a tar archive" in other["msg"]
    assert dest_entries(wheels) == []


def test_python_without_pip_fails_and_leaves_nothing(monkeypatch, capsys, wheels: dict[str, Path],
                                                     tmp_path: Path) -> None:
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\necho 'No module named pip' >&2\nexit 1\n")
    python.chmod(0o755)
    result = run_module(monkeypatch, capsys, rebuild_args(wheels, pip_check=True, python=str(python)))
    assert result["failed"] and "has no pip" in result["msg"] and "pip_check: false" in result["msg"]
    assert dest_entries(wheels) == []


def test_pip_refusal_fails_and_leaves_nothing(monkeypatch, capsys, wheels: dict[str, Path], tmp_path: Path) -> None:
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\n[ \"$3\" = --version ] && exit 0\n"
                      "echo 'ERROR: No matching distribution found for mx_driving==1.0.20260421.1'\nexit 1\n")
    python.chmod(0o755)
    result = run_module(monkeypatch, capsys, rebuild_args(wheels, pip_check=True, python=str(python)))
    assert result["failed"] and "pip cannot install the rebuilt wheel" in result["msg"]
    assert "No matching distribution" in result["msg"]
    assert dest_entries(wheels) == []


# ---------------------------------------------------------------- documentation and the generator


@pytest.mark.parametrize("module", [mx_driving_wheel, mx_driving_facts])
def test_module_documentation_parses(module) -> None:
    doc = yaml.safe_load(module.DOCUMENTATION)
    assert doc["module"] == module.__name__.rsplit(".", 1)[-1]
    assert isinstance(yaml.safe_load(module.EXAMPLES), list)
    assert set(yaml.safe_load(module.RETURN)) >= {"api"}


def test_generator_merges_its_lines_into_the_manifest(tmp_path: Path, capsys) -> None:
    (tmp_path / "other.run").write_text("x")
    (tmp_path / "SHA256SUMS").write_text(f"{hashlib.sha256(b'x').hexdigest()}  other.run\n")
    assert sim.main(["--dest", str(tmp_path), "--arch", "aarch64", "--python-tag", "cp310"]) == 0
    lines = dict(reversed(line.split("  ")) for line in (tmp_path / "SHA256SUMS").read_text().splitlines())
    assert set(lines) == {"other.run", OLD, "DrivingSDK-26.2.0.tar.gz"}
    for name, digest in lines.items():
        assert hashlib.sha256((tmp_path / name).read_bytes()).hexdigest() == digest
    before = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
    capsys.readouterr()
    sim.main(["--dest", str(tmp_path), "--arch", "aarch64", "--python-tag", "cp310"])
    assert "wrote" not in capsys.readouterr().out
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()} == before
