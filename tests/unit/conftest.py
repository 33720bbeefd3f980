"""Make the repository importable as the collection ascendops.gr00t.

Modules import their helpers as ``ansible_collections.ascendops.gr00t.plugins...``, so
the tests need an ``ansible_collections/ascendops/gr00t`` on sys.path that is this
repository; a throwaway directory with a symlink provides it for ``pytest tests/unit``.
"""
from __future__ import annotations

import atexit
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Callable

import pytest

REPO = Path(__file__).resolve().parents[2]
SIM_BIN = REPO / "tests" / "sim" / "bin"


def _collection_root() -> Path:
    root = Path(tempfile.mkdtemp(prefix="gr00t-collections-"))
    atexit.register(shutil.rmtree, root, True)
    namespace = root / "ansible_collections" / "ascendops"
    namespace.mkdir(parents=True)
    (namespace / "gr00t").symlink_to(REPO, target_is_directory=True)
    return root


def _collection_importable() -> bool:
    """True under `ansible-test units`, which runs from inside an ansible_collections tree."""
    try:
        import ansible_collections.ascendops.gr00t.plugins  # noqa: F401 (probe)
    except ImportError:
        return False
    return True


if not _collection_importable():
    sys.path.insert(0, str(_collection_root()))
# The tests' own helpers (modrun, fake_torch), whatever import mode pytest runs in.
sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture
def npu_smi_sim() -> Path:
    """The simulated npu-smi of the container tests."""
    return SIM_BIN / "npu-smi"


@pytest.fixture
def sim_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[dict | None], Path]:
    """Point the simulated tools at a state file holding `state`; None means no state file."""

    def write(state: dict | None) -> Path:
        path = tmp_path / "npu-sim-state.json"
        if state is not None:
            path.write_text(json.dumps(state))
        monkeypatch.setenv("NPU_SIM_STATE", str(path))
        return path

    return write
