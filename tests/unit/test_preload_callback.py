"""The preload callback: after the playbook starts, the controller's main process holds every
filter and lookup file of the collection and ansible.builtin's tests, so forked workers do not
load them again."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import ansible_collections.ascendops.gr00t as collection

REPO = Path(__file__).resolve().parents[2]
# ansible_collections/ascendops/gr00t -> the directory holding ansible_collections.
COLLECTIONS_ROOT = Path(collection.__path__[0]).parents[1]

PROBE = """
import json, sys
from ansible.plugins.loader import init_plugin_loader
init_plugin_loader([sys.argv[1]])
from ansible_collections.ascendops.gr00t.plugins.callback.preload import PRELOAD, CallbackModule
before = set(sys.modules)
CallbackModule().v2_playbook_on_start(None)
print(json.dumps({"loaded": sorted(set(sys.modules) - before),
                  "unresolved": [name for loader, name in PRELOAD if loader.get(name) is None]}))
"""


def probe() -> dict[str, list[str]]:
    res = subprocess.run([sys.executable, "-c", PROBE, str(COLLECTIONS_ROOT)],
                         capture_output=True, text=True, check=True, cwd=REPO)
    return json.loads(res.stdout.splitlines()[-1])


def test_every_plugin_file_is_loaded_and_every_name_resolves() -> None:
    found = probe()
    assert found["unresolved"] == []
    wanted = {f"ansible_collections.ascendops.gr00t.plugins.filter.{p.stem}"
              for p in (REPO / "plugins" / "filter").glob("*.py")}
    wanted |= {f"ansible_collections.ascendops.gr00t.plugins.lookup.{p.stem}"
               for p in (REPO / "plugins" / "lookup").glob("*.py")}
    assert wanted - set(found["loaded"]) == set()
    # ansible.builtin's tests (match, version, ...) live in ansible.plugins.test.core_<hash>.
    assert any(name.startswith("ansible.plugins.test.core") for name in found["loaded"])
    assert any(name.startswith("ansible.plugins.filter.core") for name in found["loaded"])


FREEZE_PROBE = """
import gc, json, sys, weakref
from ansible.plugins.loader import init_plugin_loader
init_plugin_loader([sys.argv[1]])
from ansible_collections.ascendops.gr00t.plugins.callback.preload import CallbackModule
class Cycle:
    pass
garbage = Cycle()
garbage.self = garbage
alive = weakref.ref(garbage)
garbage = None
before = gc.get_freeze_count()
CallbackModule().v2_playbook_on_task_start(None, False)
print(json.dumps({"before": before, "after": gc.get_freeze_count(), "cycle_frozen": alive() is not None}))
"""


def test_task_start_collects_then_freezes_the_heap() -> None:
    res = subprocess.run([sys.executable, "-c", FREEZE_PROBE, str(COLLECTIONS_ROOT)],
                         capture_output=True, text=True, check=True, cwd=REPO)
    found = json.loads(res.stdout.splitlines()[-1])
    assert found["before"] == 0
    assert found["after"] > 0
    # A cycle the main process dropped before the task is collected, not kept for the whole run.
    assert found["cycle_frozen"] is False
