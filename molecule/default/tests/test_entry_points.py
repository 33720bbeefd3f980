"""Every documented way to run site.yml works on the converged node and changes nothing.

Runs on the controller against the scenario's own inventory, after converge and
idempotence: a tag, a skip or a limit that breaks again fails here, not at a user's desk.
tests/unit/test_documented_commands.py checks that README.md and docs/ name no form that
is missing from FORMS or from the scenarios listed there.
"""
from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

PROJECT = Path(os.environ.get("MOLECULE_PROJECT_DIRECTORY", Path(__file__).resolve().parents[3]))
sys.path.insert(0, str(PROJECT / "tests" / "harness"))
from playlog import failure_message, recap  # noqa: E402 (path set just above)

STAGES = ["preflight", "system_deps", "npu_driver", "cann", "python_env", "mx_driving", "gr00t", "train"]

# Arguments after `ansible-playbook <playbook> -i <inventory>`.
FORMS: list[tuple[str, list[str]]] = [
    ("site.yml", ["--tags", "verify"]),
    *[("site.yml", ["--tags", stage]) for stage in STAGES],
    ("site.yml", ["--skip-tags", "verify"]),
    ("site.yml", ["--limit", "mol-default-node1"]),
    ("site.yml", ["--check", "--diff", "--tags", "python_env"]),
    ("playbooks/cann.yml", []),
]


def run(playbook: str, args: list[str]) -> subprocess.CompletedProcess:
    inventory = os.environ["MOLECULE_INVENTORY_FILE"]
    return subprocess.run(
        ["ansible-playbook", str(PROJECT / playbook), "-i", inventory, *args],
        capture_output=True, text=True, check=False, env=dict(os.environ, ANSIBLE_FORCE_COLOR="0"))


@pytest.fixture(scope="module")
def results() -> dict[int, subprocess.CompletedProcess]:
    """Every form, two at a time: on a converged node they only read (installer locks are shared)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(enumerate(pool.map(lambda form: run(*form), FORMS)))


@pytest.mark.parametrize("index", range(len(FORMS)), ids=[" ".join([p, *a]) for p, a in FORMS])
def test_form_runs_and_changes_nothing(results: dict[int, subprocess.CompletedProcess], index: int) -> None:
    result = results[index]
    counts = recap(result.stdout)
    assert result.returncode == 0, (
        f"rc={result.returncode}: {failure_message(result.stdout, 'mol-default-node1')}\n"
        f"{result.stderr[-2000:]}")
    assert counts["mol-default-node1"]["changed"] == 0, counts
