"""Tests of the gr00t filters: the Ascend dependency set and the LeRobot dataset checks."""
from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.ascendops.gr00t.plugins.filter.gr00t import (
    gr00t_ascend_requirements,
    gr00t_lock_constraints,
    is_dropped,
    lerobot_problems,
)

PYPROJECT = (Path(__file__).resolve().parents[1] / "fixtures" / "gr00t" / "upstream" / "pyproject.toml").read_text()
DROP = ["flash-attn", "triton", "tensorrt", "torch", "deepspeed"]


def test_cuda_pieces_are_dropped_and_deepspeed_added() -> None:
    result = gr00t_ascend_requirements(PYPROJECT, DROP, ["deepspeed==0.18.4"])
    assert result["requirements"] == [
        "numpy==1.26.4",
        "torchvision==0.22.1",
        "transformers==4.57.3",
        "diffusers==0.35.1",
        "tyro==0.9.17",
        "torchcodec==0.4.0; platform_machine == 'x86_64'",
        "deepspeed==0.18.4",
    ]
    names = " ".join(result["dropped"])
    for name in ("torch==2.7.1", "flash-attn", "triton", "tensorrt-cu12", "tensorrt-cu13", "deepspeed==0.17.6",
                 "index https://download.pytorch.org/whl/cu128"):
        assert name in names


def test_an_extra_replaces_the_upstream_pin_of_the_same_project() -> None:
    result = gr00t_ascend_requirements(PYPROJECT, [], ["Transformers==4.57.1"])
    assert "transformers==4.57.3" in result["dropped"]
    assert result["requirements"][-1] == "Transformers==4.57.1"


@pytest.mark.parametrize("name, dropped", [("flash-attn", True), ("tensorrt-cu12", True), ("torch", True),
                                           ("torchvision", False), ("tritonclient", False)])
def test_drop_matching(name, dropped) -> None:
    assert is_dropped(name, ["flash_attn", "tensorrt", "torch", "triton"]) is dropped


def test_pyproject_without_dependencies() -> None:
    with pytest.raises(ValueError, match="no \\[project\\] dependencies"):
        gr00t_ascend_requirements("[project]\nname = 'x'\n", DROP, [])


GOOD = {".": True, "meta/info.json": True, "meta/episodes.jsonl": True, "meta/tasks.jsonl": True,
        "meta/modality.json": True, "videos": True, "chunks": 2}


def test_complete_dataset() -> None:
    assert lerobot_problems("/d", GOOD, {"codebase_version": "v2.1"}) == []


def test_missing_dataset() -> None:
    assert lerobot_problems("/d", {".": False}, None) == ["/d does not exist"]


def test_each_gap_is_named() -> None:
    found = dict(GOOD, **{"meta/modality.json": False, "chunks": 0})
    assert lerobot_problems("/d", found, {"codebase_version": "v3.0"}) == [
        "/d/meta/modality.json is missing",
        "/d/data has no chunk-* directory",
        "/d/meta/info.json has codebase_version 'v3.0', GR00T reads LeRobot v2 (v2.0, v2.1)",
    ]


def test_installed_pins_replace_upstream_lines() -> None:
    result = gr00t_ascend_requirements(PYPROJECT, DROP, ["deepspeed==0.18.4", "torch==2.7.1", "torchvision==0.22.0"])
    assert "torchvision==0.22.1" in result["dropped"]
    assert result["requirements"][-3:] == ["deepspeed==0.18.4", "torch==2.7.1", "torchvision==0.22.0"]


LOCK = '''
version = 1
[[package]]
name = "torch"
version = "2.7.1+cu128"
source = { registry = "https://download.pytorch.org/whl/cu128" }
dependencies = [{ name = "nvidia-cublas-cu12" }, { name = "filelock" }]

[[package]]
name = "nvidia-cublas-cu12"
version = "12.8.3.14"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "filelock"
version = "3.18.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "PyArrow"
version = "23.0.1"
source = { registry = "https://pypi.org/simple" }
dependencies = [{ name = "filelock" }]

[[package]]
name = "torchcodec"
version = "0.4.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "torchcodec"
version = "0.10.0a0"
source = { path = "scripts/deployment/dgpu/wheels/torchcodec-0.10.0a0-cp310-cp310-linux_aarch64.whl" }

[[package]]
name = "gr00t"
version = "0.1.0"
source = { editable = "." }
dependencies = [{ name = "pyarrow" }]
'''


def test_the_lock_pins_what_upstream_validated() -> None:
    assert gr00t_lock_constraints(LOCK, []) == ["filelock==3.18.0", "nvidia-cublas-cu12==12.8.3.14", "pyarrow==23.0.1"]


def test_skipped_projects_leave_their_dependencies_to_themselves() -> None:
    # filelock comes with the kept torch even though pyarrow needs it too: torch is already there.
    assert gr00t_lock_constraints(LOCK, ["torch"]) == ["pyarrow==23.0.1"]


def test_a_file_that_is_not_a_lock_is_refused() -> None:
    with pytest.raises(ValueError, match="uv.lock"):
        gr00t_lock_constraints('package = "x"', [])
