"""Template the checks a role keeps in its vars as a play of that role would, with the
collection's filters and lookups, in a process of its own (the plugin loader's collection
finder is process-wide).

Each case's variables are layered as in a play: the extra values (as -e sets them), then the
roles' vars, then their defaults (the ascend role's last, as every stage depends on it).
"""
from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import ansible_collections.ascendops.gr00t as collection

REPO = Path(__file__).resolve().parents[2]
COLLECTIONS_ROOT = Path(collection.__path__[0]).parents[1]

_PROBE = """
import json, os, sys
from collections import ChainMap
from ansible.plugins.loader import init_plugin_loader
init_plugin_loader([sys.argv[1]])
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from ansible_collections.ascendops.gr00t.plugins.action.role_arguments import ActionModule

loader = DataLoader()
roles_dir = os.path.join(sys.argv[2], "roles")


def role_file(role, kind):
    path = os.path.join(roles_dir, role, kind, "main.yml")
    if not os.path.isfile(path):
        return {}
    return loader.load_from_file(path, trusted_as_template=True, unsafe=True) or {}


def result(case):
    roles = case["roles"]
    role_vars = [role_file(role, "vars") for role in roles]
    defaults = [role_file(role, "defaults") for role in [*roles, "ascend"]]
    if case["first_pass"]:
        # As role_arguments checks a stage: the run's variables and the defaults, the role's vars in scope.
        templar = Templar(loader=loader, variables=ChainMap(case["extra"], *defaults))
        return ActionModule._own_checks(templar, roles[0], role_vars[0])[0]
    templar = Templar(loader=loader, variables=ChainMap(case["extra"], *role_vars, *defaults))
    return templar.template(trust_as_template(case["expression"]))


results = []
for case in json.loads(sys.stdin.read()):
    # A case that cannot be templated is its test's failure, not every case's.
    try:
        results.append(result(case))
    except Exception as exc:
        results.append({"error": f"{type(exc).__name__}: {exc}"})
print(json.dumps(results))
"""


def run_cases(cases: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Every case (from `expression`, `first_pass` and `failing`) in one process; its result by name."""
    res = subprocess.run([sys.executable, "-c", _PROBE, str(COLLECTIONS_ROOT), str(REPO)],
                         input=json.dumps(list(cases.values())), capture_output=True, text=True, check=False,
                         cwd=REPO)
    assert res.returncode == 0, res.stderr[-3000:]
    return dict(zip(cases, json.loads(res.stdout.splitlines()[-1])))


def expression(text: str, roles: Sequence[str], extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A case: `text` templated with the roles' vars and defaults under the extra values."""
    return {"roles": list(roles), "extra": dict(extra or {}), "expression": text, "first_pass": False}


def first_pass(role: str, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A case: the messages of the role's own input checks that fail, as the ascend role's first
    pass says them (role_arguments), with the extra values set for the run."""
    return {"roles": [role], "extra": dict(extra or {}), "expression": "", "first_pass": True}


def failing(checks: str, roles: Sequence[str], extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A case: the messages of a role's list of {ok, msg} checks (the var `checks`) that fail."""
    return expression(f"{{{{ {checks} | rejectattr('ok') | map(attribute='msg') | list }}}}", roles, extra)


def one_line(messages: list[str]) -> list[str]:
    """Folded messages as a failure shows them: each on one line, single spaces."""
    return [" ".join(str(message).split()) for message in messages]
