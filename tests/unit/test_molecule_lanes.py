"""make molecule's lanes: every scenario once, and the scenarios that share files in one lane."""
from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "harness"))
from molecule_lanes import parse_lanes  # noqa: E402 (path set just above)

MAKEFILE = (REPO / "Makefile").read_text()


def makefile_value(name: str) -> str:
    return re.search(rf"^{name} \?= (.*)$", MAKEFILE, re.M).group(1)


def test_lanes_split_on_spaces_and_commas() -> None:
    assert parse_lanes(["a b,c", " ", "d"]) == [["a", "b", "c"], ["d"]]


def test_a_scenario_in_two_lanes_is_refused() -> None:
    with pytest.raises(SystemExit, match="more than one lane"):
        parse_lanes(["a b", "b"])


def test_the_default_lanes_hold_every_scenario_once() -> None:
    lanes = parse_lanes(shlex.split(makefile_value("MOLECULE_LANES")))
    scenarios = makefile_value("SCENARIOS").split()
    assert sorted(name for lane in lanes for name in lane) == sorted(scenarios)
    assert sorted(scenarios) == sorted(p.parent.name for p in (REPO / "molecule").glob("*/molecule.yml"))


def test_the_scenarios_that_write_the_broken_artifacts_share_a_lane() -> None:
    writers = {p.parent.name for p in (REPO / "molecule").glob("*/prepare.yml")
               if "broken_artifacts.yml" in p.read_text()}
    assert writers == {"cann_faults", "preflight_failures"}
    lanes = parse_lanes(shlex.split(makefile_value("MOLECULE_LANES")))
    assert any(writers <= set(lane) for lane in lanes)
