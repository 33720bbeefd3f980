"""Each role's README lists exactly the variables its meta/argument_specs.yml declares."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROLES = Path(__file__).resolve().parents[2] / "roles"
ROW = re.compile(r"^\| `(?P<name>[a-z0-9_]+)` \| (?P<default>[^|]*) \|", re.M)


def spec_options(role: Path) -> dict[str, dict]:
    """Every option of every entry point of the role, by name."""
    specs = yaml.safe_load((role / "meta" / "argument_specs.yml").read_text(encoding="utf-8"))["argument_specs"]
    options: dict[str, dict] = {}
    for entry_point in specs.values():
        for name, option in (entry_point.get("options") or {}).items():
            options.setdefault(name, option)
    return options


@pytest.mark.parametrize("role", sorted(p for p in ROLES.iterdir() if (p / "meta" / "argument_specs.yml").is_file()),
                         ids=lambda p: p.name)
def test_readme_lists_the_argument_specs(role: Path) -> None:
    readme = role / "README.md"
    assert readme.is_file(), f"{role.name} has no README.md"
    rows = {m["name"]: m["default"].strip() for m in ROW.finditer(readme.read_text(encoding="utf-8"))}
    options = spec_options(role)
    assert sorted(rows) == sorted(options), f"{role.name}: README variables differ from meta/argument_specs.yml"
    for name, option in options.items():
        assert (rows[name] == "required") == bool(option.get("required")), f"{role.name}: {name} required or not"
        default = option.get("default")
        if isinstance(default, (str, int)) and not isinstance(default, bool) and rows[name].startswith("`"):
            expected = '""' if default == "" else str(default)
            assert rows[name][1:-1] == expected, \
                f"{role.name}: {name} default {rows[name]} in README, {default!r} in meta/argument_specs.yml"
