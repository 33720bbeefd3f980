"""The controller's requirements stay apart from the development pins, and an execution
environment built from the collection asks only for what the collection uses."""
from __future__ import annotations

from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
DEV_TOOLS = {"molecule", "molecule-plugins", "pytest", "pytest-testinfra", "ansible-lint", "yamllint", "black"}


def pins(name: str) -> dict[str, str]:
    lines = (REPO / name).read_text().splitlines()
    return dict(line.split("==", 1) for line in lines if line and not line.startswith(("#", "-r")))


def test_controller_requirements_hold_no_development_tool() -> None:
    assert not DEV_TOOLS & {name.lower() for name in pins("requirements.txt")}
    assert {"ansible", "ansible-core", "matplotlib"} <= set(pins("requirements.txt"))


def test_development_pins_build_on_the_controller_ones_without_repeating_them() -> None:
    assert "-r requirements.txt" in (REPO / "requirements-dev.txt").read_text().splitlines()
    assert not set(pins("requirements.txt")) & set(pins("requirements-dev.txt"))
    assert DEV_TOOLS <= {name.lower() for name in pins("requirements-dev.txt")}


def test_execution_environment_names_only_the_collection_runtime() -> None:
    ee = yaml.safe_load((REPO / "meta" / "execution-environment.yml").read_text())
    wanted = [line.split()[0] for line in (REPO / ee["dependencies"]["python"]).read_text().splitlines()
              if line and not line.startswith("#")]
    assert wanted == ["matplotlib>=3.8"]
    ignored = yaml.safe_load((REPO / "galaxy.yml").read_text())["build_ignore"]
    assert "requirements-dev.txt" in ignored
