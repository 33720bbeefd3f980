"""Each role's defaults/main.yml is described, variable for variable, by its meta/argument_specs.yml."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROLES = Path(__file__).resolve().parents[2] / "roles"
# `ascend_x | default(...)` whose fallback is not another site-wide setting.
LITERAL_FALLBACK = re.compile(r"\bascend_\w+\s*\|\s*default\((?!\s*ascend_)")
ROLE_DIRS = sorted(p for p in ROLES.iterdir() if (p / "defaults" / "main.yml").is_file())


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8")) or {}


def spec_options(role: Path) -> dict[str, dict]:
    options: dict[str, dict] = {}
    for entry_point in load(role / "meta" / "argument_specs.yml")["argument_specs"].values():
        options.update(entry_point.get("options") or {})
    return options


def is_template(value: object) -> bool:
    """A value Ansible templates at run time: its spec gives the usual outcome instead."""
    return "{{" in yaml.safe_dump(value)


@pytest.mark.parametrize("role", ROLE_DIRS, ids=lambda p: p.name)
def test_every_default_is_described(role: Path) -> None:
    defaults, options = load(role / "defaults" / "main.yml"), spec_options(role)
    undescribed = sorted(set(defaults) - set(options))
    assert not undescribed, f"{role.name}: defaults/main.yml variables missing from meta/argument_specs.yml"


@pytest.mark.parametrize("role", ROLE_DIRS, ids=lambda p: p.name)
def test_literal_defaults_match_the_spec(role: Path) -> None:
    defaults, options = load(role / "defaults" / "main.yml"), spec_options(role)
    for name, value in defaults.items():
        if is_template(value) or name not in options or "default" not in options[name]:
            continue
        assert options[name]["default"] == value, \
            f"{role.name}: {name} is {value!r} in defaults/main.yml, {options[name]['default']!r} in argument_specs"


def test_site_wide_settings_are_not_given_literal_fallbacks() -> None:
    """A stage takes a site-wide value from the ascend role, never `ascend_x | default(literal)`."""
    offenders = [f"{path.relative_to(ROLES)}:{number}"
                 for path in sorted(ROLES.glob("*/defaults/main.yml"))
                 for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if LITERAL_FALLBACK.search(line)]
    assert offenders == []
