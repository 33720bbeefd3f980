# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Decode a sample of a LeRobot v2 dataset's videos with the system ffmpeg, as GR00T's ffmpeg
video backend reads them, and name every sampled file it would read wrong.

GR00T's ffmpeg backend (gr00t/utils/video_utils.py) asks ffprobe for a video's size and ffmpeg for
each frame, and turns what it cannot read into a black frame instead of an error: a file ffprobe
or ffmpeg cannot open (480x640 black frames), and a frame past the end of the video. A bad video
then trains silently on black frames. Here each sampled video is probed and decoded whole, as raw
RGB like the backend asks for: it must decode without an error, its frames must have the height
and width meta/info.json declares for the camera, and it must hold a frame for every step of its
episode (meta/episodes.jsonl).
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
import threading
from typing import Any, Callable, List, Optional, Tuple

# Longest one probe or decode may take, in seconds: a video of a LeRobot episode decodes in well
# under a second; a stuck ffmpeg is stopped and named instead of holding the run.
TIMEOUT = 300
CHUNK = 1 << 20


def video_features(info: dict[str, Any]) -> dict[str, Optional[tuple[int, int]]]:
    """The dataset's cameras (features of dtype video) and the (height, width) meta/info.json
    declares for each, None where it declares none."""
    cameras: dict[str, Optional[tuple[int, int]]] = {}
    for key, feature in (info.get("features") or {}).items():
        if not isinstance(feature, dict) or feature.get("dtype") != "video":
            continue
        cameras[key] = declared_size(feature)
    return cameras


def declared_size(feature: dict[str, Any]) -> Optional[tuple[int, int]]:
    """(height, width) from the feature's shape and names, else from its video.height/video.width."""
    shape, names = feature.get("shape"), feature.get("names")
    if isinstance(shape, list) and isinstance(names, list) and len(shape) == len(names):
        sizes = dict(zip(names, shape))
        if isinstance(sizes.get("height"), int) and isinstance(sizes.get("width"), int):
            return sizes["height"], sizes["width"]
    video = feature.get("info") or {}
    if isinstance(video.get("video.height"), int) and isinstance(video.get("video.width"), int):
        return video["video.height"], video["video.width"]
    return None


def read_episodes(text: str) -> list[tuple[int, int]]:
    """(episode_index, length) of each line of meta/episodes.jsonl that has both, in index order."""
    episodes = []
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("episode_index"), int) \
                and isinstance(entry.get("length"), int):
            episodes.append((entry["episode_index"], entry["length"]))
    return sorted(episodes)


def sample(episodes: list[tuple[int, int]], count: int) -> list[tuple[int, int]]:
    """`count` episodes spread evenly from the first to the last; every one for count 0 or more
    than there are."""
    if count <= 0 or count >= len(episodes):
        return list(episodes)
    if count == 1:
        return [episodes[0]]
    picks = sorted({round(n * (len(episodes) - 1) / (count - 1)) for n in range(count)})
    return [episodes[n] for n in picks]


def video_path(dataset: str, info: dict[str, Any], camera: str, episode: int) -> str:
    """The file of `camera` for `episode`, by meta/info.json's video_path and chunks_size, as GR00T
    finds it."""
    chunk = episode // int(info.get("chunks_size") or 1000)
    relative = str(info["video_path"]).format(episode_chunk=chunk, video_key=camera, episode_index=episode)
    return os.path.join(dataset, relative)


# The node's Python evaluates this alias: typing's names, not the builtins' subscripts.
Runner = Callable[[List[str]], Tuple[int, int, str]]


def run_tool(argv: list[str]) -> tuple[int, int, str]:
    """Run `argv`: its exit code, the bytes it wrote to stdout (counted, not kept) and the last line
    of its stderr. Stopped after TIMEOUT seconds (exit code -9 then)."""
    with tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=errors)
        timer = threading.Timer(TIMEOUT, proc.kill)
        timer.start()
        size = 0
        try:
            for block in iter(lambda: proc.stdout.read(CHUNK), b""):
                size += len(block)
            code = proc.wait()
        finally:
            timer.cancel()
            proc.stdout.close()
        errors.seek(0)
        lines = errors.read().decode("utf-8", "replace").strip().splitlines()
    return code, size, lines[-1].strip() if lines else ""


def about(line: str, path: str) -> str:
    """An ffmpeg or ffprobe message without the file name it starts with (the caller names it)."""
    return line[len(path) + 2:] if line.startswith(path + ": ") else line


def probe_size(ffprobe: str, path: str) -> tuple[Optional[tuple[int, int]], str]:
    """((height, width) of the first video stream, '') as ffprobe reads it, or (None, why not)."""
    argv = [ffprobe, "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
            "-of", "json", path]
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        return None, "ffprobe did not answer within {0} s".format(TIMEOUT)
    last = about((done.stderr.decode("utf-8", "replace").strip().splitlines() or [""])[-1].strip(), path)
    if done.returncode != 0:
        return None, "ffprobe cannot read it ({0})".format(last or "exit code {0}".format(done.returncode))
    try:
        stream = json.loads(done.stdout.decode("utf-8", "replace"))["streams"][0]
        return (int(stream["height"]), int(stream["width"])), ""
    except (ValueError, KeyError, IndexError, TypeError):
        return None, "ffprobe finds no video stream in it"


def check_video(path: str, camera: str, episode: int, length: int, declared: Optional[tuple[int, int]],
                ffmpeg: str, ffprobe: str, run: Runner = run_tool) -> dict[str, Any]:
    """One video, as GR00T's ffmpeg backend would read it: its size, frames and the problem, if any."""
    result: dict[str, Any] = {"path": path, "camera": camera, "episode": episode, "length": length,
                              "height": None, "width": None, "frames": None, "problem": ""}
    if not os.path.isfile(path):
        result["problem"] = "{0}: missing (camera {1}, episode {2})".format(path, camera, episode)
        return result
    size, why = probe_size(ffprobe, path)
    if size is None:
        result["problem"] = "{0}: {1}".format(path, why)
        return result
    result["height"], result["width"] = size
    if declared is not None and size != declared:
        result["problem"] = ("{0}: its frames are {1}x{2} (height x width), meta/info.json declares {3}x{4} for "
                             "{5}").format(path, size[0], size[1], declared[0], declared[1], camera)
        return result
    code, written, last = run([ffmpeg, "-nostdin", "-v", "error", "-i", path, "-map", "0:v:0", "-f", "rawvideo",
                               "-pix_fmt", "rgb24", "-"])
    frame = size[0] * size[1] * 3
    last = about(last, path)
    if code != 0 or last or written % frame:
        why = last or ("exit code {0}".format(code) if code else "{0} bytes are no whole number of frames".format(
            written))
        result["problem"] = "{0}: ffmpeg cannot decode it cleanly ({1})".format(path, why)
        return result
    result["frames"] = written // frame
    if result["frames"] < length:
        result["problem"] = ("{0}: it decodes to {1} frames, episode {2} has {3} steps (the backend reads the "
                             "missing ones as black frames)").format(path, result["frames"], episode, length)
    return result


def check_dataset(dataset: str, episodes_per_camera: int, ffmpeg: str, ffprobe: str,
                  run: Runner = run_tool) -> dict[str, Any]:
    """Every camera's sampled videos checked: `checked` (one entry per video) and `problems` (one
    message per video that fails). A dataset whose meta/info.json or meta/episodes.jsonl cannot be
    read, or that names no video_path, has nothing to check here (`unread` says why): the look at
    the dataset reports those."""
    result: dict[str, Any] = {"checked": [], "problems": [], "unread": ""}
    try:
        with open(os.path.join(dataset, "meta", "info.json"), encoding="utf-8") as handle:
            info = json.load(handle)
        with open(os.path.join(dataset, "meta", "episodes.jsonl"), encoding="utf-8") as handle:
            episodes = read_episodes(handle.read())
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        result["unread"] = str(exc)
        return result
    cameras = video_features(info) if isinstance(info, dict) else {}
    if cameras and not info.get("video_path"):
        result["unread"] = "meta/info.json names no video_path"
        return result
    picked = sample(episodes, episodes_per_camera)
    try:
        paths = {(camera, episode): video_path(dataset, info, camera, episode) for camera in cameras
                 for episode, dummy in picked}
    except (KeyError, IndexError, ValueError) as exc:
        result["unread"] = "meta/info.json's video_path {0!r} does not format ({1})".format(info["video_path"], exc)
        return result
    for camera, declared in cameras.items():
        for episode, length in picked:
            checked = check_video(paths[(camera, episode)], camera, episode, length, declared, ffmpeg, ffprobe, run)
            result["checked"].append(checked)
            if checked["problem"]:
                result["problems"].append(checked["problem"])
    return result
