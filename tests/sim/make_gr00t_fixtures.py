#!/usr/bin/env python3
"""Generate what the gr00t molecule scenario serves to its node.

Writes into OUT:
  git/Isaac-GR00T.git   bare repository of tests/fixtures/gr00t/upstream, two commits (a
                        second, later revision to update to); its dependency list is the
                        fixture's with the PyPI projects replaced by gr00t-fixture-dep, so
                        the node can install it offline, and a uv.lock that locks it
  git/commits           the two commit ids, oldest first
  wheels/               a wheel of gr00t-fixture-dep (a test-only project, not a stand-in
                        for any real package)
  data/datasets/libero  LeRobot v2 tree without meta/modality.json (the role copies it)
  data/datasets/broken  the same with meta/tasks.jsonl and the data chunks missing
  data/models/GR00T-N1.7-3B, data/hf/hub/models--nvidia--Cosmos-Reason2-2B
                        model folders as the role expects them staged (config.json only)

Same inputs, same bytes: commit dates and authors are fixed, so the commit ids only
change when the fixture tree does.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "gr00t" / "upstream"
DEP_NAME, DEP_VERSION = "gr00t_fixture_dep", "1.0"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "fixture", "GIT_AUTHOR_EMAIL": "fixture@example.invalid",
    "GIT_COMMITTER_NAME": "fixture", "GIT_COMMITTER_EMAIL": "fixture@example.invalid",
    "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
}


def git(*args: str, cwd: Path, date: str = "2026-06-10T12:00:00Z") -> str:
    env = dict(os.environ, **GIT_ENV, GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()


def offline_pyproject(text: str) -> str:
    """The fixture's pyproject with its PyPI dependencies swapped for the test-only wheel.

    The CUDA-only lines and torch stay, so the role's dropping of them is exercised. The
    node's stand-in env runs the container's Python 3.11, not the conda env's 3.10.
    """
    kept = [line for line in text.splitlines()
            if not line.strip().startswith('"') or any(n in line for n in ("torch==", "triton", "flash-attn",
                                                                           "tensorrt", "deepspeed"))]
    out = []
    for line in kept:
        if line.startswith("requires-python"):
            line = 'requires-python = ">=3.10"'

        out.append(line)
        if line.startswith("dependencies = ["):
            out.append('    "{0}=={1}",'.format(DEP_NAME.replace("_", "-"), DEP_VERSION))
    return "\n".join(out) + "\n"


def offline_lock() -> str:
    """A uv.lock in upstream's format for the offline project: the test-only dependency from
    the index, and torch from a CUDA index as upstream locks it (the role leaves it out)."""
    dep = DEP_NAME.replace("_", "-")
    return (
        'version = 1\nrevision = 3\nrequires-python = "==3.10.*"\n\n'
        '[[package]]\nname = "torch"\nversion = "2.7.1+cu128"\n'
        'source = { registry = "https://download.pytorch.org/whl/cu128" }\n\n'
        f'[[package]]\nname = "{dep}"\nversion = "{DEP_VERSION}"\nsource = {{ registry = "https://pypi.org/simple" }}\n\n'
        '[[package]]\nname = "gr00t"\nversion = "0.1.0"\nsource = { editable = "." }\n'
        f'dependencies = [{{ name = "{dep}" }}, {{ name = "torch" }}]\n'
    )


def make_repo(out: Path) -> list[str]:
    work = out / "work"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(FIXTURE, work)
    (work / "pyproject.toml").write_text(offline_pyproject((work / "pyproject.toml").read_text()))
    (work / "uv.lock").write_text(offline_lock())
    git("init", "-q", "-b", "main", cwd=work)
    git("add", "-A", cwd=work)
    git("commit", "-qm", "fixture: GR00T N1.7 layout", cwd=work)
    readme = work / "README.md"
    readme.write_text(readme.read_text() + "\nA later revision, to update a checkout to.\n")
    git("commit", "-qam", "fixture: later revision", cwd=work, date="2026-06-11T12:00:00Z")
    commits = git("rev-list", "--reverse", "HEAD", cwd=work).split()
    bare = out / "git" / "Isaac-GR00T.git"
    shutil.rmtree(bare, ignore_errors=True)
    bare.parent.mkdir(parents=True, exist_ok=True)
    git("clone", "-q", "--bare", str(work), str(bare), cwd=out)
    shutil.rmtree(work)
    (out / "git" / "commits").write_text("\n".join(commits) + "\n")
    return commits


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "{0},sha256={1},{2}".format(name, digest, len(data))


def make_wheel(out: Path) -> Path:
    info = "{0}-{1}.dist-info".format(DEP_NAME, DEP_VERSION)
    files = {
        DEP_NAME + "/__init__.py": b'"""Test-only dependency of the GR00T fixture checkout."""\nVERSION = "1.0"\n',
        info + "/METADATA": "Metadata-Version: 2.1\nName: {0}\nVersion: {1}\nSummary: test fixture\n".format(
            DEP_NAME.replace("_", "-"), DEP_VERSION).encode(),
        info + "/WHEEL": b"Wheel-Version: 1.0\nGenerator: make_gr00t_fixtures\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "\n".join(record_line(name, data) for name, data in files.items()) + "\n{0}/RECORD,,\n".format(info)
    files[info + "/RECORD"] = record.encode()
    wheel = out / "wheels" / "{0}-{1}-py3-none-any.whl".format(DEP_NAME, DEP_VERSION)
    wheel.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(zipfile.ZipInfo(name, date_time=(2026, 6, 10, 12, 0, 0)), data)
    return wheel


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def make_dataset(root: Path, complete: bool) -> None:
    info = {"codebase_version": "v2.1", "robot_type": "panda", "total_episodes": 1, "fps": 10,
            "data_path": "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet"}
    write(root / "meta" / "info.json", json.dumps(info, indent=2) + "\n")
    write(root / "meta" / "episodes.jsonl", json.dumps({"episode_index": 0, "tasks": ["pick"], "length": 3}) + "\n")
    write(root / "videos" / "chunk-000" / "observation.images.image" / "episode_000000.mp4", "fixture video\n")
    if complete:
        write(root / "meta" / "tasks.jsonl", json.dumps({"task_index": 0, "task": "pick"}) + "\n")
        write(root / "data" / "chunk-000" / "episode_000000.parquet", "fixture parquet\n")


def make_data(out: Path) -> None:
    data = out / "data"
    shutil.rmtree(data, ignore_errors=True)
    make_dataset(data / "datasets" / "libero", complete=True)
    make_dataset(data / "datasets" / "broken", complete=False)
    write(data / "models" / "GR00T-N1.7-3B" / "config.json", '{"model_type": "fixture"}\n')
    snapshot = data / "hf" / "hub" / "models--nvidia--Cosmos-Reason2-2B" / "snapshots" / ("0" * 40)
    write(snapshot / "config.json", '{"model_type": "fixture"}\n')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    out = parser.parse_args().out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    commits = make_repo(out)
    make_wheel(out)
    make_data(out)
    print(json.dumps({"commits": commits, "out": str(out)}))


if __name__ == "__main__":
    main()
