"""Video decoding on the target: the gr00t role's per-architecture dependency set and video
backend, and the data check that decodes a sample of every camera's videos with the system
ffmpeg (module lerobot_video_check), as GR00T's ffmpeg backend reads them.

The decode tests run the real ffmpeg and ffprobe (Debian's ffmpeg package, which system_deps
installs on a node) on the demo dataset's video (tests/fixtures/video/) and on broken copies.
"""
from __future__ import annotations

import json
import shutil
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

import modrun
from rolevars import expression, first_pass, run_cases
from ansible_collections.ascendops.gr00t.plugins.module_utils import lerobot_video as lv
from ansible_collections.ascendops.gr00t.plugins.modules import lerobot_video_check

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import simctl  # noqa: E402  # pylint: disable=wrong-import-position

VIDEO = Path(__file__).resolve().parents[1] / "fixtures" / "video" / "episode_000000.mp4"
FRAMES = 40
CAMERAS = ("observation.images.image", "observation.images.wrist_image")
VIDEO_PATH = "videos/chunk-{episode_chunk:03d}/{video_key}/episode_{episode_index:06d}.mp4"
# What GR00T's ffmpeg backend was measured to return a 3x480x640 frame for instead of failing.
INVALID = b"not an mp4 :("


@pytest.fixture(scope="module")
def tools() -> tuple[str, str]:
    """The system ffmpeg and ffprobe; the decode tests need them, as a node does."""
    found = tuple(shutil.which(name) for name in ("ffmpeg", "ffprobe"))
    if not all(found):
        pytest.fail("ffmpeg and ffprobe are not on PATH: install Debian's ffmpeg package (apt-get install "
                    "--no-install-recommends ffmpeg), the one system_deps installs on a node", pytrace=False)
    return found


def feature(height: int = 64, width: int = 64) -> dict[str, Any]:
    return {"dtype": "video", "shape": [height, width, 3], "names": ["height", "width", "channel"],
            "info": {"video.height": height, "video.width": width, "video.codec": "h264"}}


def dataset(root: Path, lengths: dict[int, int] | None = None, cameras: dict[str, dict] | None = None) -> Path:
    """A LeRobot v2.1 dataset at `root` whose every camera's video of every episode is the fixture
    (episode index -> length, 40 steps each unless given)."""
    lengths = lengths if lengths is not None else {n: FRAMES for n in range(4)}
    cameras = cameras if cameras is not None else {camera: feature() for camera in CAMERAS}
    info = {"codebase_version": "v2.1", "chunks_size": 1000, "fps": 10, "video_path": VIDEO_PATH,
            "features": {**cameras, "action": {"dtype": "float32", "shape": [7], "names": None}}}
    (root / "meta").mkdir(parents=True)
    (root / "meta" / "info.json").write_text(json.dumps(info))
    (root / "meta" / "episodes.jsonl").write_text("".join(
        json.dumps({"episode_index": n, "tasks": ["pick"], "length": length}) + "\n" for n, length in lengths.items()))
    for camera in cameras:
        for episode in lengths:
            path = root / VIDEO_PATH.format(episode_chunk=0, video_key=camera, episode_index=episode)
            path.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(VIDEO, path)
    return root


def video(root: Path, camera: str, episode: int) -> Path:
    return root / VIDEO_PATH.format(episode_chunk=episode // 1000, video_key=camera, episode_index=episode)


# ---------------------------------------------------------------- reading the metadata


def test_cameras_and_their_declared_size() -> None:
    info = {"features": {"a": feature(48, 64), "b": {"dtype": "video", "info": {"video.height": 8, "video.width": 6}},
                         "c": {"dtype": "video"}, "state": {"dtype": "float32", "shape": [8]}}}
    assert lv.video_features(info) == {"a": (48, 64), "b": (8, 6), "c": None}


def test_episodes_are_read_in_index_order() -> None:
    text = '{"episode_index": 2, "length": 5}\n\nnot json\n{"episode_index": 0, "length": 7}\n{"episode_index": 1}\n'
    assert lv.read_episodes(text) == [(0, 7), (2, 5)]


@pytest.mark.parametrize("count, picked", [(3, [0, 4, 9]), (2, [0, 9]), (1, [0]), (0, list(range(10))),
                                           (10, list(range(10))), (4, [0, 3, 6, 9])])
def test_the_sample_spreads_from_the_first_episode_to_the_last(count: int, picked: list[int]) -> None:
    episodes = [(n, 10) for n in range(10)]
    assert [episode for episode, dummy in lv.sample(episodes, count)] == picked


def test_the_video_path_follows_info_json() -> None:
    info = {"video_path": VIDEO_PATH, "chunks_size": 100}
    assert lv.video_path("/d", info, "cam", 1234) == "/d/videos/chunk-012/cam/episode_001234.mp4"


# ---------------------------------------------------------------- decoding with the system ffmpeg


def test_the_demo_dataset_decodes(tmp_path: Path, tools: tuple[str, str]) -> None:
    result = lv.check_dataset(str(dataset(tmp_path / "ds")), 3, *tools)
    assert result["problems"] == [] and result["unread"] == ""
    assert [(c["camera"], c["episode"]) for c in result["checked"]] == [(cam, n) for cam in CAMERAS for n in (0, 2, 3)]
    assert {(c["height"], c["width"], c["frames"]) for c in result["checked"]} == {(64, 64, FRAMES)}


def test_an_invalid_mp4_is_refused(tmp_path: Path, tools: tuple[str, str]) -> None:
    root = dataset(tmp_path / "ds")
    bad = video(root, CAMERAS[1], 3)
    bad.write_bytes(INVALID)
    assert len(INVALID) == 13
    result = lv.check_dataset(str(root), 3, *tools)
    [problem] = result["problems"]
    assert problem == f"{bad}: ffprobe cannot read it (Invalid data found when processing input)"


def test_a_cut_off_video_is_refused(tmp_path: Path, tools: tuple[str, str]) -> None:
    root = dataset(tmp_path / "ds")
    cut = video(root, CAMERAS[0], 0)
    cut.write_bytes(VIDEO.read_bytes()[: VIDEO.stat().st_size // 2])
    [problem] = lv.check_dataset(str(root), 3, *tools)["problems"]
    assert problem.startswith(f"{cut}: ")


def test_a_video_shorter_than_its_episode_is_refused(tmp_path: Path, tools: tuple[str, str]) -> None:
    root = dataset(tmp_path / "ds", lengths={0: FRAMES, 1: FRAMES + 10})
    problems = lv.check_dataset(str(root), 0, *tools)["problems"]
    assert problems == [f"{video(root, camera, 1)}: it decodes to {FRAMES} frames, episode 1 has {FRAMES + 10} steps "
                        "(the backend reads the missing ones as black frames)" for camera in CAMERAS]


def test_frames_of_another_size_than_declared_are_refused(tmp_path: Path, tools: tuple[str, str]) -> None:
    root = dataset(tmp_path / "ds", lengths={0: FRAMES}, cameras={"observation.images.image": feature(32, 32)})
    [problem] = lv.check_dataset(str(root), 3, *tools)["problems"]
    assert problem == (f"{video(root, 'observation.images.image', 0)}: its frames are 64x64 (height x width), "
                       "meta/info.json declares 32x32 for observation.images.image")


def test_a_missing_video_is_refused(tmp_path: Path, tools: tuple[str, str]) -> None:
    root = dataset(tmp_path / "ds")
    video(root, CAMERAS[0], 2).unlink()
    assert lv.check_dataset(str(root), 3, *tools)["problems"] == [
        f"{video(root, CAMERAS[0], 2)}: missing (camera {CAMERAS[0]}, episode 2)"]


def test_only_the_sample_is_decoded(tmp_path: Path, tools: tuple[str, str]) -> None:
    root = dataset(tmp_path / "ds")
    video(root, CAMERAS[0], 1).write_bytes(INVALID)
    assert lv.check_dataset(str(root), 2, *tools)["problems"] == []
    assert len(lv.check_dataset(str(root), 0, *tools)["problems"]) == 1


def test_unreadable_metadata_is_left_to_the_look(tmp_path: Path, tools: tuple[str, str]) -> None:
    result = lv.check_dataset(str(tmp_path / "absent"), 3, *tools)
    assert result["problems"] == [] and result["checked"] == [] and "info.json" in result["unread"]
    root = dataset(tmp_path / "ds")
    info = json.loads((root / "meta" / "info.json").read_text())
    (root / "meta" / "info.json").write_text(json.dumps({**info, "video_path": "videos/{camera}.mp4"}))
    assert "does not format" in lv.check_dataset(str(root), 3, *tools)["unread"]


# ---------------------------------------------------------------- the module


def run_check(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, **args: Any) -> dict[str, Any]:
    return modrun.run_module(lerobot_video_check.main, monkeypatch, capsys, args)


def test_module_reports_a_clean_sample(monkeypatch, capsys, tmp_path: Path, tools: tuple[str, str]) -> None:
    result = run_check(monkeypatch, capsys, dataset=str(dataset(tmp_path / "ds")), episodes=1,
                       _ansible_check_mode=True)
    assert result["changed"] is False and result["problems"] == [] and result["missing_tools"] == []
    assert [c["episode"] for c in result["checked"]] == [0, 0]


def test_module_names_an_invalid_video(monkeypatch, capsys, tmp_path: Path, tools: tuple[str, str]) -> None:
    root = dataset(tmp_path / "ds")
    video(root, CAMERAS[0], 0).write_bytes(INVALID)
    result = run_check(monkeypatch, capsys, dataset=str(root))
    assert result["changed"] is False and "failed" not in result
    assert [p.split(": ")[0] for p in result["problems"]] == [str(video(root, CAMERAS[0], 0))]


def test_module_without_ffmpeg_decodes_nothing(monkeypatch, capsys, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    result = run_check(monkeypatch, capsys, dataset=str(tmp_path))
    assert result["missing_tools"] == ["ffmpeg", "ffprobe"] and result["checked"] == [] and result["problems"] == []


def test_module_refuses_a_negative_sample(monkeypatch, capsys, tmp_path: Path) -> None:
    result = run_check(monkeypatch, capsys, dataset=str(tmp_path), episodes=-1)
    assert result["failed"] is True and "episodes is -1" in result["msg"]


# ---------------------------------------------------------------- the role, per architecture

SRC = "/opt/gr00t/Isaac-GR00T"
ARM = {"ansible_facts": {"architecture": "aarch64"}}
X86 = {"ansible_facts": {"architecture": "x86_64"}}
DATA = {"ascend_dataset_path": "/data/libero", "ascend_hf_home": "/hf", "gr00t_base_model_path": "/models/m"}


def release_pyproject() -> str:
    with tarfile.open(simctl.upstream_tarball()) as archive:
        member = next(m for m in archive.getmembers() if m.name.count("/") == 1 and m.name.endswith("/pyproject.toml"))
        return archive.extractfile(member).read().decode("utf-8")


def data_look() -> dict[str, Any]:
    """The data checks' look at a staged dataset, base model and VLM: nothing missing."""
    parts = [".", "meta/info.json", "meta/episodes.jsonl", "meta/tasks.jsonl", "meta/modality.json", "videos"]
    vlm = "/hf/hub/models--nvidia--Cosmos-Reason2-2B/snapshots"
    return {"stat": {**{f"/data/libero/{part}": {"exists": True} for part in parts},
                     "/models/m/config.json": {"exists": True}},
            "glob": {"/data/libero/data/chunk-*/": 1, f"{vlm}/config.json": 0, f"{vlm}/*/config.json": 1},
            "json": {"/data/libero/meta/info.json": {"value": {"codebase_version": "v2.1"}}}}


def videos(problems: list[str] | None = None, missing: list[str] | None = None) -> dict[str, Any]:
    """lerobot_video_check's registered result."""
    return {"changed": False, "problems": problems or [], "checked": [], "unread": "", "missing_tools": missing or []}


@pytest.fixture(scope="module")
def found() -> dict[str, Any]:
    pyproject = release_pyproject()
    look = {"text": {f"{SRC}/pyproject.toml": {"content": pyproject}}}
    deps = "{{ __gr00t_deps }}"
    # The set as the role rendered it before the per-architecture drop.
    plain = "{{ __gr00t_src.text[__gr00t_pyproject].content | ascendops.gr00t.gr00t_ascend_requirements(" \
            "gr00t_requirements_drop, gr00t_requirements_extra) }}"
    problems = "{{ __gr00t_data_problems }}"
    return run_cases({
        "arm_deps": expression(deps, ["gr00t"], {**ARM, "__gr00t_look": look}),
        "x86_deps": expression(deps, ["gr00t"], {**X86, "__gr00t_look": look}),
        "x86_plain": expression(plain, ["gr00t"], {**X86, "__gr00t_look": look}),
        "arm_backend": expression("{{ [__gr00t_video_backend, __gr00t_patch_video_backend] }}", ["gr00t"], ARM),
        "x86_backend": expression("{{ [__gr00t_video_backend, __gr00t_patch_video_backend] }}", ["gr00t"], X86),
        "arm_torchcodec": expression("{{ [__gr00t_video_backend, __gr00t_patch_video_backend] }}", ["gr00t"],
                                     {**ARM, "gr00t_video_backend": "torchcodec"}),
        "x86_ffmpeg": expression("{{ [__gr00t_video_backend, __gr00t_patch_video_backend] }}", ["gr00t"],
                                 {**X86, "gr00t_video_backend": "ffmpeg"}),
        "no_facts_backend_set": expression("{{ __gr00t_patch_video_backend }}", ["gr00t"],
                                           {"gr00t_video_backend": "ffmpeg"}),
        "checks_arm": first_pass("gr00t", ARM),
        "checks_x86": first_pass("gr00t", X86),
        "checks_arm_torchcodec": first_pass("gr00t", {**ARM, "gr00t_video_backend": "torchcodec"}),
        "checks_arm_torchcodec_built": first_pass("gr00t", {
            **ARM, "gr00t_video_backend": "torchcodec",
            "gr00t_requirements_extra": ["deepspeed==0.18.4", "torchcodec==0.4.0"]}),
        "checks_torchcodec_no_facts": first_pass("gr00t", {"gr00t_video_backend": "torchcodec"}),
        "checks_forms": first_pass("gr00t", {**X86, "gr00t_video_backend_by_arch": {"aarch64": "opencv"},
                                             "gr00t_requirements_drop_by_arch": {"aarch64": "torchcodec"},
                                             "gr00t_video_check_episodes": -1}),
        "data_skipped": expression(problems, ["gr00t"], {**DATA, "__gr00t_look": data_look(),
                                                         "__gr00t_videos": {"skipped": True, "changed": False}}),
        "data_not_run": expression(problems, ["gr00t"], {**DATA, "__gr00t_look": data_look()}),
        "data_bad_video": expression(problems, ["gr00t"], {**DATA, "__gr00t_look": data_look(),
                                                           "__gr00t_videos": videos(["/v/a.mp4: ffprobe cannot read it"])}),
        "data_many_bad": expression(problems, ["gr00t"], {**DATA, "__gr00t_look": data_look(),
                                                          "__gr00t_videos": videos([f"/v/{n}.mp4: x" for n in range(12)])}),
        "data_no_ffmpeg": expression(problems, ["gr00t"], {**DATA, "__gr00t_look": data_look(),
                                                           "__gr00t_videos": videos(missing=["ffmpeg", "ffprobe"])}),
        "data_no_ffmpeg_preflight": expression(problems, ["gr00t"], {
            **DATA, "__gr00t_look": data_look(), "__gr00t_videos": videos(missing=["ffmpeg", "ffprobe"]),
            "__gr00t_video_tools_needed": False}),
    })


def names(requirements: list[str]) -> set[str]:
    return {requirement.split("=")[0].split(";")[0].split(">")[0].strip() for requirement in requirements}


def test_aarch64_leaves_torchcodec_out(found: dict[str, Any]) -> None:
    deps = found["arm_deps"]
    assert "torchcodec" not in names(deps["requirements"])
    assert [r for r in deps["dropped"] if r.startswith("torchcodec")] == [
        "torchcodec==0.4.0; platform_machine == 'x86_64'",
        "torchcodec==0.10.0a0; platform_machine == 'aarch64' and sys_platform == 'linux'"]


def test_x86_64_renders_the_set_it_rendered_before(found: dict[str, Any]) -> None:
    assert found["x86_deps"] == found["x86_plain"]
    assert "torchcodec" in names(found["x86_deps"]["requirements"])


def test_the_backend_follows_the_architecture_unless_set(found: dict[str, Any]) -> None:
    assert found["arm_backend"] == ["ffmpeg", "ffmpeg"]
    # torchcodec is upstream's default: the patch leaves data_config.py alone.
    assert found["x86_backend"] == ["torchcodec", ""]
    assert found["arm_torchcodec"] == ["torchcodec", ""]
    assert found["x86_ffmpeg"] == ["ffmpeg", "ffmpeg"]
    assert found["no_facts_backend_set"] == "ffmpeg"


def test_the_defaults_pass_the_input_checks(found: dict[str, Any]) -> None:
    assert found["checks_arm"] == [] and found["checks_x86"] == []


def test_torchcodec_on_a_node_whose_set_leaves_it_out_is_refused(found: dict[str, Any]) -> None:
    [msg] = found["checks_arm_torchcodec"]
    assert msg.startswith("gr00t_video_backend makes torchcodec the video backend on this aarch64 node, but "
                          "gr00t_requirements_drop_by_arch leaves torchcodec out of GR00T's dependency set here.")
    assert "gr00t_requirements_extra" in msg
    assert found["checks_arm_torchcodec_built"] == []
    # Without facts the architecture is unknown: the check is left out (as role_arguments does).
    assert found["checks_torchcodec_no_facts"] == []


def test_the_per_architecture_forms_are_checked(found: dict[str, Any]) -> None:
    assert found["checks_forms"] == [
        "gr00t_requirements_drop_by_arch is {'aarch64': 'torchcodec'}; want a list of project names per "
        "architecture, e.g. {aarch64: [torchcodec]}.",
        "gr00t_video_backend_by_arch is {'aarch64': 'opencv'}; want one of torchcodec, ffmpeg per architecture.",
        "gr00t_video_check_episodes is -1; want 0 (every episode) or a number of episodes per camera."]


def test_the_data_checks_name_the_videos_ffmpeg_cannot_read(found: dict[str, Any]) -> None:
    assert found["data_skipped"] == [] and found["data_not_run"] == []
    [msg] = found["data_bad_video"]
    assert msg.startswith("videos, decoded with ffmpeg (the video backend here, which reads what it cannot decode "
                          "as black frames instead of failing; re-encode or replace them): ")
    assert msg.endswith(": /v/a.mp4: ffprobe cannot read it")
    [many] = found["data_many_bad"]
    assert "/v/9.mp4: x; and 2 more" in many and "/v/10.mp4" not in many


def test_a_node_without_ffmpeg_is_a_finding_for_the_stage_only(found: dict[str, Any]) -> None:
    assert found["data_no_ffmpeg"] == [
        "video backend ffmpeg: ffmpeg and ffprobe not found on the PATH (the system_deps stage installs them)"]
    assert found["data_no_ffmpeg_preflight"] == []
