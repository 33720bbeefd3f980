"""Tests of the GR00T NPU patch: the edits, executed against a fake torch, and the module."""
from __future__ import annotations

import ast
import hashlib
import importlib.util
import shutil
import subprocess
import sys
import tarfile
import types
import warnings
from pathlib import Path
from typing import Dict

import pytest
import fake_torch
import modrun

from ansible_collections.ascendops.gr00t.plugins.module_utils import gr00t_patch
from ansible_collections.ascendops.gr00t.plugins.modules import gr00t_npu_patch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import simctl  # noqa: E402  # pylint: disable=wrong-import-position

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gr00t"
UPSTREAM = FIXTURES / "upstream"
DIST_UTILS = "gr00t/experiment/dist_utils.py"
UTILS = "gr00t/experiment/utils.py"
MIXTURE = "gr00t/data/dataset/sharded_mixture_dataset.py"
TRAINER = "gr00t/experiment/trainer.py"
DIT = "gr00t/model/modules/dit.py"
EXPERIMENT = "gr00t/experiment/experiment.py"
DATA_CONFIG = gr00t_patch.VIDEO_BACKEND_FILE
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def checkout(tmp_path: Path, *variants: str) -> Path:
    """A copy of the fixture checkout with the files of `variants` laid over it."""
    src = tmp_path / "Isaac-GR00T"
    shutil.copytree(UPSTREAM, src)
    for variant in variants:
        shutil.copytree(FIXTURES / "variants" / variant, src, dirs_exist_ok=True)
    return src


def run_patch(monkeypatch, capsys, src: Path, report: Path, **args) -> dict:
    args = {"src": str(src), "report_dir": str(report), "expected_commit": COMMIT, **args}
    return modrun.run_module(gr00t_npu_patch.main, monkeypatch, capsys, args)


def patched(path: str, *variants: str) -> str:
    text = (FIXTURES / "variants" / variants[0] / path if variants else UPSTREAM / path).read_bytes().decode()
    sites = [site for site in gr00t_patch.REQUIRED_SITES if site.path == path]
    new, statuses = gr00t_patch.patch_text(text, path, sites)
    assert all(s["status"] in ("patched", "already") for s in statuses.values()), statuses
    return new


def load(text: str, name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)
    exec(compile(text, name, "exec"), module.__dict__)
    return module


def both(path: str) -> Dict[str, str]:
    return {"original": (UPSTREAM / path).read_text(), "patched": patched(path)}


def tree_digest(root: Path) -> Dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------- executing the patched functions


@pytest.mark.parametrize("backend, expected", [("hccl", "npu:5"), ("nccl", "cuda:5"), ("gloo", "cpu"), (None, "cpu")])
def test_collective_device(monkeypatch, backend, expected) -> None:
    fake_torch.install(monkeypatch, fake_torch.World(backend=backend, current_device=5))
    module = load(patched(DIST_UTILS), "dist_utils")
    assert module._collective_device() == expected


@pytest.mark.parametrize("backend", ["nccl", "gloo", None])
def test_collective_device_unchanged_off_hccl(monkeypatch, backend) -> None:
    fake_torch.install(monkeypatch, fake_torch.World(backend=backend, current_device=2))
    results = {kind: load(text, kind)._collective_device() for kind, text in both(DIST_UTILS).items()}
    assert results["original"] == results["patched"]


@pytest.mark.parametrize("backend, expected", [("hccl", "npu:3"), ("nccl", "cuda:3"), ("gloo", "cpu")])
def test_save_decision_broadcasts_on_backend_device(monkeypatch, backend, expected) -> None:
    world = fake_torch.World(backend=backend, current_device=3)
    fake_torch.install(monkeypatch, world)
    module = load(patched(UTILS), "utils")
    assert module._broadcast_save_decision(1, 0.25) == (1, 0.25)
    assert world.collectives[-1].device == expected


def test_save_decision_without_process_group_is_unchanged(monkeypatch) -> None:
    world = fake_torch.World(backend=None)
    fake_torch.install(monkeypatch, world)
    assert load(patched(UTILS), "utils")._broadcast_save_decision(0, 1.5) == (0, 1.5)
    assert world.collectives == []


@pytest.mark.parametrize("backend, expected", [("hccl", "npu:7"), ("nccl", "cuda:7"), ("gloo", "cpu"), (None, "cpu")])
def test_pg_tensor_device(monkeypatch, backend, expected) -> None:
    fake_torch.install(monkeypatch, fake_torch.World(backend=backend, current_device=7))
    assert load(patched(MIXTURE), "mixture")._get_default_pg_tensor_device() == expected


def test_pg_tensor_device_nccl_without_cuda_still_raises(monkeypatch) -> None:
    fake_torch.install(monkeypatch, fake_torch.World(backend="nccl", cuda_available=False))
    for kind, text in both(MIXTURE).items():
        with pytest.raises(RuntimeError, match="requires CUDA tensors"):
            load(text, kind)._get_default_pg_tensor_device()


def test_pg_tensor_device_hccl_unpatched_is_the_reported_failure(monkeypatch) -> None:
    """Unpatched, hccl falls to the cpu branch: the 'No backend type for cpu tensor' of the manual port."""
    fake_torch.install(monkeypatch, fake_torch.World(backend="hccl"))
    assert load(both(MIXTURE)["original"], "mixture")._get_default_pg_tensor_device() == "cpu"


def trainer(text: str, pin: bool, workers: int = 0):
    module = load(text, "trainer")
    args = types.SimpleNamespace(dataloader_num_workers=workers, dataloader_pin_memory=pin,
                                 per_device_train_batch_size=4, ignore_data_skip=False)
    return module.Gr00tTrainer(args, train_dataset=[1, 2], data_collator=None, multiprocessing_context="spawn")


def test_pin_memory_off_on_npu(monkeypatch) -> None:
    world = fake_torch.World(backend="hccl", with_npu=True)
    fake_torch.install(monkeypatch, world)
    params = trainer(patched(TRAINER), pin=True, workers=2).get_train_dataloader()
    assert params["pin_memory"] is False
    assert params["multiprocessing_context"] == "spawn"


@pytest.mark.parametrize("pin", [True, False])
def test_pin_memory_unchanged_without_npu(monkeypatch, pin) -> None:
    fake_torch.install(monkeypatch, fake_torch.World(backend="nccl", with_npu=False))
    for kind, text in both(TRAINER).items():
        assert trainer(text, pin=pin).get_train_dataloader()["pin_memory"] is pin, kind


@pytest.mark.parametrize("capability, expected", [
    (lambda: None, False),
    (lambda: (dummy for dummy in ()).throw(RuntimeError("simulated: no capability on npu")), False),
    (lambda: (12, 1), True),
    (lambda: (9, 0), False),
])
def test_capability_probe(monkeypatch, capability, expected) -> None:
    fake_torch.install(monkeypatch, fake_torch.World(capability=capability))
    module = load(patched(DIT), "dit")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module._is_spark_sm121() is expected
    assert caught == []


def test_capability_probe_unpatched_raises_on_none(monkeypatch) -> None:
    fake_torch.install(monkeypatch, fake_torch.World(capability=lambda: None))
    with pytest.raises(TypeError), pytest.warns(UserWarning, match="simulated"):
        load(both(DIT)["original"], "dit")._is_spark_sm121()


def test_capability_probe_without_cuda(monkeypatch) -> None:
    fake_torch.install(monkeypatch, fake_torch.World(cuda_available=False))
    assert load(patched(DIT), "dit")._is_spark_sm121() is False


@pytest.mark.parametrize("path", [DIST_UTILS, UTILS, MIXTURE])
def test_device_sites_only_add_lines(path) -> None:
    """Every original line stays, in order: the nccl and cpu paths are byte-for-byte the same."""
    texts = both(path)
    diff = gr00t_patch.unified_diff(texts["original"], texts["patched"], path)
    body = diff.splitlines()[2:]
    assert [line for line in body if line.startswith("-")] == []
    assert len([line for line in body if line.startswith("+")]) == 2


# ---------------------------------------------------------------- shapes


def test_patch_text_is_idempotent() -> None:
    for site in gr00t_patch.REQUIRED_SITES:
        once = patched(site.path)
        again, statuses = gr00t_patch.patch_text(once, site.path, [site])
        assert again == once
        assert statuses[site.name]["status"] == "already"


def test_single_line_conditional_gains_an_hccl_clause() -> None:
    text = ("import torch\nimport torch.distributed as dist\n\n\ndef _collective_device():\n"
            "    return torch.device('cuda') if dist.get_backend() == 'nccl' else torch.device('cpu')\n")
    new, statuses = gr00t_patch.patch_text(text, DIST_UTILS, [gr00t_patch.REQUIRED_SITES[0]])
    assert statuses["collective_device"]["status"] == "patched"
    assert ("if dist.get_backend() == 'nccl' else torch.device(f\"npu:{torch.npu.current_device()}\") "
            "if dist.get_backend() == 'hccl' else torch.device('cpu')") in new


def test_a_function_without_an_nccl_branch_is_missing() -> None:
    text = "import torch\n\n\ndef _collective_device():\n    return torch.device('cpu')\n"
    dummy, statuses = gr00t_patch.patch_text(text, DIST_UTILS, [gr00t_patch.REQUIRED_SITES[0]])
    assert statuses["collective_device"]["status"] == "missing"
    assert "nccl" in statuses["collective_device"]["reason"]


def test_a_module_without_torch_is_missing() -> None:
    text = "def _is_spark_sm121():\n    major, minor = cuda.get_device_capability()\n    return False\n"
    dummy, statuses = gr00t_patch.patch_text(text, DIT, [gr00t_patch.REQUIRED_SITES[4]])
    assert statuses["capability_probe"] == dict(statuses["capability_probe"], status="missing",
                                                reason="the module does not import torch")


def test_capability_probe_uses_module_warnings_when_imported() -> None:
    text = ("import warnings\nimport torch\n\n\ndef _is_spark_sm121():\n"
            "    major, minor = torch.cuda.get_device_capability()\n    return (major, minor) == (12, 1)\n")
    new, dummy = gr00t_patch.patch_text(text, DIT, [gr00t_patch.REQUIRED_SITES[4]])
    assert new.count("import warnings") == 1


def test_unknown_site_name() -> None:
    with pytest.raises(ValueError, match="unknown site"):
        gr00t_patch.select_sites(["no_such_site"], {})


# ---------------------------------------------------------------- the module


def test_module_patches_every_site_and_writes_the_report(monkeypatch, capsys, tmp_path) -> None:
    src, report = checkout(tmp_path), tmp_path / "report"
    result = run_patch(monkeypatch, capsys, src, report)
    assert result["changed"] is True, result
    assert {name: s["status"] for name, s in result["sites"].items()} == dict.fromkeys(gr00t_patch.REQUIRED_NAMES,
                                                                                       "patched")
    assert sorted(result["files"]) == sorted([DIST_UTILS, UTILS, MIXTURE, TRAINER, DIT])
    for path in result["files"]:
        compile((src / path).read_text(), path, "exec")
    assert (src / EXPERIMENT).read_text() == (UPSTREAM / EXPERIMENT).read_text()
    patch = (report / "gr00t_n1.7_ascend.patch").read_text()
    assert patch.count("--- a/") == 5 and "+++ b/gr00t/model/modules/dit.py" in patch


def test_report_applies_to_the_unpatched_checkout(monkeypatch, capsys, tmp_path) -> None:
    src, report = checkout(tmp_path), tmp_path / "report"
    run_patch(monkeypatch, capsys, src, report)
    pristine = tmp_path / "pristine-checkout"
    shutil.copytree(UPSTREAM, pristine)
    subprocess.run(["git", "init", "-q", str(pristine)], check=True)
    subprocess.run(["git", "-C", str(pristine), "apply", str(report / "gr00t_n1.7_ascend.patch")], check=True)
    shutil.rmtree(pristine / ".git")
    assert tree_digest(pristine) == tree_digest(src)


def test_second_run_changes_nothing(monkeypatch, capsys, tmp_path) -> None:
    src, report = checkout(tmp_path), tmp_path / "report"
    first = run_patch(monkeypatch, capsys, src, report)
    before = tree_digest(tmp_path)
    second = run_patch(monkeypatch, capsys, src, report)
    assert second["changed"] is False, second
    assert {s["status"] for s in second["sites"].values()} == {"already"}
    assert tree_digest(tmp_path) == before
    assert first["report"] == second["report"]


def test_check_mode_writes_nothing(monkeypatch, capsys, tmp_path) -> None:
    src, report = checkout(tmp_path), tmp_path / "report"
    before = tree_digest(tmp_path)
    result = run_patch(monkeypatch, capsys, src, report, _ansible_check_mode=True, _ansible_diff=True)
    assert result["changed"] is True
    assert {s["status"] for s in result["sites"].values()} == {"patched"}
    assert tree_digest(tmp_path) == before
    assert not report.exists()
    by_file = {Path(d["after_header"]).relative_to(src).as_posix(): d for d in result["diff"]}
    assert "hccl" in by_file[DIST_UTILS]["after"] and "hccl" not in by_file[DIST_UTILS]["before"]


def test_drifted_site_fails_naming_file_function_and_commit(monkeypatch, capsys, tmp_path) -> None:
    src, report = checkout(tmp_path, "drifted"), tmp_path / "report"
    before = tree_digest(tmp_path)
    result = run_patch(monkeypatch, capsys, src, report)
    assert result["failed"] is True
    assert str(src / DIST_UTILS) in result["msg"]
    assert "_collective_device() - function _collective_device() not found" in result["msg"]
    assert COMMIT in result["msg"] and "nothing was changed" in result["msg"]
    assert result["sites"]["save_decision_device"]["status"] == "patched"
    assert tree_digest(tmp_path) == before


def test_drifted_site_can_be_left_out(monkeypatch, capsys, tmp_path) -> None:
    src, report = checkout(tmp_path, "drifted"), tmp_path / "report"
    sites = [name for name in gr00t_patch.REQUIRED_NAMES if name != "collective_device"]
    result = run_patch(monkeypatch, capsys, src, report, sites=sites)
    assert result["changed"] is True and "collective_device" not in result["sites"]


def test_sites_fixed_by_hand_are_already(monkeypatch, capsys, tmp_path) -> None:
    src, report = checkout(tmp_path, "already"), tmp_path / "report"
    hand_fixed = {p: (src / p).read_bytes() for p in (UTILS, DIT)}
    result = run_patch(monkeypatch, capsys, src, report)
    statuses = {name: s["status"] for name, s in result["sites"].items()}
    assert statuses["save_decision_device"] == statuses["capability_probe"] == "already"
    assert statuses["collective_device"] == statuses["pg_tensor_device"] == "patched"
    assert {p: (src / p).read_bytes() for p in hand_fixed} == hand_fixed
    # Not a git checkout and never patched here: their unpatched text is unknown.
    assert sorted(result["unreviewed"]) == sorted([UTILS, DIT])


def test_hand_fixed_files_come_from_git_head(monkeypatch, capsys, tmp_path) -> None:
    src = checkout(tmp_path)
    git = ["git", "-C", str(src), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", "init", "-q", str(src)], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "fixture"], check=True)
    shutil.copytree(FIXTURES / "variants" / "already", src, dirs_exist_ok=True)
    result = run_patch(monkeypatch, capsys, src, tmp_path / "report")
    assert result["unreviewed"] == []
    patch = (tmp_path / "report" / "gr00t_n1.7_ascend.patch").read_text()
    assert '+        if backend in ("nccl", "hccl")' in patch


def test_crlf_file_keeps_its_line_endings(monkeypatch, capsys, tmp_path) -> None:
    src, report = checkout(tmp_path, "crlf"), tmp_path / "report"
    result = run_patch(monkeypatch, capsys, src, report)
    assert result["sites"]["pg_tensor_device"]["status"] == "patched"
    data = (src / MIXTURE).read_bytes()
    assert b"hccl" in data
    assert data.count(b"\n") == data.count(b"\r\n")
    original = (FIXTURES / "variants" / "crlf" / MIXTURE).read_bytes()
    assert data.count(b"\r\n") == original.count(b"\r\n") + 2
    assert (src / DIST_UTILS).read_bytes().count(b"\r") == 0
    again = run_patch(monkeypatch, capsys, src, report)
    assert again["changed"] is False


def test_optional_sites(monkeypatch, capsys, tmp_path) -> None:
    src, report = checkout(tmp_path), tmp_path / "report"
    result = run_patch(monkeypatch, capsys, src, report, tf32_off=True, spawn_workers=True)
    assert result["sites"]["tf32_off"]["status"] == result["sites"]["spawn_workers"]["status"] == "patched"
    text = (src / EXPERIMENT).read_text()
    assert "tf32=False," in text and 'multiprocessing_context="spawn",' in text
    assert "+++ b/" + EXPERIMENT in (report / "gr00t_n1.7_ascend.patch").read_text()


def test_compile_failure_leaves_the_file_alone(monkeypatch, capsys, tmp_path) -> None:
    src, report = checkout(tmp_path), tmp_path / "report"
    before = tree_digest(tmp_path)

    def bad_edit(source, function):
        start, end = source.span(function.body[-1])
        return [gr00t_patch.Edit(start, end, "return (")]

    sites = tuple(gr00t_patch.Site(s.name, s.path, s.function, s.summary, bad_edit)
                  if s.name == "dataloader_pin_memory" else s for s in gr00t_patch.REQUIRED_SITES)
    monkeypatch.setattr(gr00t_patch, "REQUIRED_SITES", sites)
    result = run_patch(monkeypatch, capsys, src, report)
    assert result["failed"] is True
    assert TRAINER in result["msg"] and "cannot be patched safely" in result["msg"]
    assert tree_digest(tmp_path) == before


def test_original_that_does_not_parse(monkeypatch, capsys, tmp_path) -> None:
    src = checkout(tmp_path)
    (src / DIT).write_text("def broken(:\n")
    result = run_patch(monkeypatch, capsys, src, tmp_path / "report")
    assert result["failed"] is True and DIT in result["msg"]


def test_mode_is_kept(monkeypatch, capsys, tmp_path) -> None:
    src = checkout(tmp_path)
    (src / DIT).chmod(0o640)
    run_patch(monkeypatch, capsys, src, tmp_path / "report")
    assert (src / DIT).stat().st_mode & 0o777 == 0o640


def test_src_must_be_a_checkout(monkeypatch, capsys, tmp_path) -> None:
    result = run_patch(monkeypatch, capsys, tmp_path, tmp_path / "report")
    assert result["failed"] is True and "not a GR00T checkout" in result["msg"]


def test_absent_restores_only_our_own_edits(monkeypatch, capsys, tmp_path) -> None:
    src, report = checkout(tmp_path), tmp_path / "report"
    run_patch(monkeypatch, capsys, src, report)
    (src / DIT).write_text((src / DIT).read_text() + "# a local change\n")
    check = run_patch(monkeypatch, capsys, src, report, state="absent", _ansible_check_mode=True)
    assert check["changed"] is True and (src / DIST_UTILS).read_text() != (UPSTREAM / DIST_UTILS).read_text()
    result = run_patch(monkeypatch, capsys, src, report, state="absent")
    assert result["kept"] == [DIT]
    assert sorted(result["files"]) == sorted([DIST_UTILS, UTILS, MIXTURE, TRAINER])
    for path in result["files"]:
        assert (src / path).read_bytes() == (UPSTREAM / path).read_bytes()
    assert run_patch(monkeypatch, capsys, src, report, state="absent")["changed"] is False


# ---------------------------------------------------------------- the video backend site, on the release


@pytest.fixture(scope="module")
def data_config() -> str:
    """The release's gr00t/configs/data/data_config.py, from the tarball an operator stages
    (tests/harness/simctl.py: $GR00T_UPSTREAM_TARBALL, else ../shared/upstream/)."""
    with tarfile.open(simctl.upstream_tarball()) as archive:
        member = next(m for m in archive.getmembers() if m.name.endswith("/" + DATA_CONFIG))
        return archive.extractfile(member).read().decode("utf-8")


def video_backend_default(text: str) -> object:
    """DataConfig.video_backend's default in `text`, as Python reads it."""
    cls = gr00t_patch.find_class(ast.parse(text), "DataConfig")
    return next(node.value.value for node in cls.body
                if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "video_backend")


def with_data_config(tmp_path: Path, text: str) -> Path:
    """The fixture checkout with the release's data_config.py (or a drifted copy) in it."""
    src = checkout(tmp_path)
    (src / DATA_CONFIG).parent.mkdir(parents=True, exist_ok=True)
    (src / DATA_CONFIG).write_bytes(text.encode("utf-8"))
    return src


def test_the_release_decodes_with_torchcodec_by_default(data_config: str) -> None:
    assert video_backend_default(data_config) == "torchcodec"


def test_video_backend_site_sets_only_the_default(data_config: str) -> None:
    site = gr00t_patch.video_backend_site("ffmpeg")
    new, statuses = gr00t_patch.patch_text(data_config, DATA_CONFIG, [site])
    assert statuses["video_backend"]["status"] == "patched"
    assert video_backend_default(new) == "ffmpeg"
    body = gr00t_patch.unified_diff(data_config, new, DATA_CONFIG).splitlines()[2:]
    changed = [line for line in body if line[:1] in "+-"]
    assert changed == ['-    video_backend: str = "torchcodec"', '+    video_backend: str = "ffmpeg"']
    again, statuses = gr00t_patch.patch_text(new, DATA_CONFIG, [site])
    assert again == new and statuses["video_backend"]["status"] == "already"


def test_upstreams_own_backend_is_already_in_place(data_config: str) -> None:
    new, statuses = gr00t_patch.patch_text(data_config, DATA_CONFIG, [gr00t_patch.video_backend_site("torchcodec")])
    assert new == data_config and statuses["video_backend"]["status"] == "already"


def test_the_quotes_upstream_wrote_are_kept() -> None:
    text = "class DataConfig:\n    video_backend: str = 'torchcodec'  # default\n"
    new, dummy = gr00t_patch.patch_text(text, DATA_CONFIG, [gr00t_patch.video_backend_site("ffmpeg")])
    assert new == "class DataConfig:\n    video_backend: str = 'ffmpeg'  # default\n"


@pytest.mark.parametrize("old, new, reason", [
    ("    video_backend: str = ", "    decode_backend: str = ", "no field video_backend in its body"),
    ("class DataConfig:", "class DatasetConfig:", "class DataConfig not found"),
    ('    video_backend: str = "torchcodec"', '    video_backend: str = field(default="torchcodec")',
     "the field video_backend has no string default"),
], ids=["field-renamed", "class-renamed", "no-constant"])
def test_a_drifted_video_backend_fails_naming_file_and_field(monkeypatch, capsys, tmp_path, data_config: str,
                                                             old: str, new: str, reason: str) -> None:
    assert old in data_config
    src = with_data_config(tmp_path, data_config.replace(old, new))
    report = tmp_path / "report"
    before = tree_digest(tmp_path)
    result = run_patch(monkeypatch, capsys, src, report, video_backend="ffmpeg")
    assert result["failed"] is True
    assert "{0}: DataConfig.video_backend - {1}".format(src / DATA_CONFIG, reason) in result["msg"]
    assert COMMIT in result["msg"] and "nothing was changed" in result["msg"]
    assert result["sites"]["video_backend"]["status"] == "missing"
    assert tree_digest(tmp_path) == before


def test_module_applies_and_reports_the_video_backend_site(monkeypatch, capsys, tmp_path, data_config: str) -> None:
    src, report = with_data_config(tmp_path, data_config), tmp_path / "report"
    result = run_patch(monkeypatch, capsys, src, report, video_backend="ffmpeg")
    assert result["sites"]["video_backend"] == {
        "file": DATA_CONFIG, "function": "DataConfig", "field": "video_backend",
        "change": 'DataConfig.video_backend defaults to "ffmpeg"', "status": "patched"}
    assert DATA_CONFIG in result["files"]
    assert video_backend_default((src / DATA_CONFIG).read_text()) == "ffmpeg"
    assert "+++ b/" + DATA_CONFIG in (report / "gr00t_n1.7_ascend.patch").read_text()
    again = run_patch(monkeypatch, capsys, src, report, video_backend="ffmpeg")
    assert again["changed"] is False and again["sites"]["video_backend"]["status"] == "already"
    # Taken back with the other sites, as before updating the checkout.
    restored = run_patch(monkeypatch, capsys, src, report, video_backend="ffmpeg", state="absent")
    assert DATA_CONFIG in restored["files"]
    assert (src / DATA_CONFIG).read_text() == data_config


def test_without_a_backend_data_config_stays_as_upstream_has_it(monkeypatch, capsys, tmp_path,
                                                                data_config: str) -> None:
    src, report = with_data_config(tmp_path, data_config), tmp_path / "report"
    result = run_patch(monkeypatch, capsys, src, report)
    assert "video_backend" not in result["sites"] and DATA_CONFIG not in result["files"]
    assert (src / DATA_CONFIG).read_text() == data_config
    assert DATA_CONFIG not in (report / "gr00t_n1.7_ascend.patch").read_text()
