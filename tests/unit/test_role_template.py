"""role_template: the text of ansible.builtin.template, without a copy of every variable."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import ansible_collections.ascendops.gr00t as collection
import yaml

from ansible_collections.ascendops.gr00t.plugins.lookup.role_template import jinja_search_path

COLLECTIONS_ROOT = Path(collection.__path__[0]).parents[1]


def run_debug(tmp_path: Path, msg: object, play_vars: dict | None = None) -> subprocess.CompletedProcess:
    """A play on localhost whose one task shows `msg`, its output as the json callback prints it."""
    (tmp_path / "templates").mkdir(exist_ok=True)
    play = tmp_path / "play.yml"
    play.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False, "vars": play_vars or {},
                                     "tasks": [{"name": "Render", "ansible.builtin.debug": {"msg": msg}}]}]))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(COLLECTIONS_ROOT), ANSIBLE_STDOUT_CALLBACK="json",
               ANSIBLE_LOCALHOST_WARNING="0", ANSIBLE_INVENTORY_UNPARSED_WARNING="0", ANSIBLE_CONFIG=str(tmp_path / "none"))
    return subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), str(play), "-c", "local"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, check=False)


def render_both(tmp_path: Path, template: str) -> dict:
    """Both lookups over one template in the playbook's templates/, on localhost."""
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "t.j2").write_text(template)
    (tmp_path / "templates" / "part.j2").write_text("part of {{ name }}\n")
    res = run_debug(tmp_path, {"builtin": "{{ lookup('ansible.builtin.template', 't.j2') }}",
                               "ours": "{{ lookup('ascendops.gr00t.role_template', 't.j2') }}",
                               "nested_after": "{{ nested }}"},
                    {"name": "npu", "pkgs": {"toolkit": "9.0.0", "ops": "9.0.0"}, "nested": {"a": [1, {"b": 2}]}})
    assert "{" in res.stdout, res.stdout[-2000:] + res.stderr[-2000:]
    document = json.loads(res.stdout[res.stdout.index("{"):])
    return document["plays"][0]["tasks"][0]["hosts"]["localhost"]


def test_the_text_is_the_builtin_lookup_s(tmp_path: Path) -> None:
    template = ("#!/bin/sh\n# {{ ansible_managed }}\n# from {{ template_path | basename }} on {{ template_host }}\n"
                "{% for kind, version in pkgs | dictsort %}export {{ kind | upper }}={{ version | quote }}\n{% endfor %}"
                "{% include 'part.j2' %}trailing \\n kept\n\n")
    result = render_both(tmp_path, template)
    assert not result.get("failed"), result
    msg = result["msg"]
    assert msg["ours"] == msg["builtin"]
    assert "export OPS=9.0.0\nexport TOOLKIT=9.0.0\npart of nputrailing" in msg["ours"] and "from t.j2 on" in msg["ours"]
    assert msg["nested_after"] == {"a": [1, {"b": 2}]}


def test_a_missing_template_names_itself(tmp_path: Path) -> None:
    res = run_debug(tmp_path, "{{ lookup('ascendops.gr00t.role_template', 'gone.j2') }}")
    assert res.returncode != 0 and "the template file gone.j2 could not be found" in res.stdout + res.stderr


def test_includes_look_beside_the_template_then_in_each_search_path() -> None:
    assert jinja_search_path({"ansible_search_path": ["/r/roles/cann", "/r"]}, "/r/roles/cann/templates/a.j2") == [
        "/r/roles/cann/templates", "/r/roles/cann/templates", "/r/roles/cann", "/r/templates", "/r"]
    assert jinja_search_path({}, "/x/t.j2") == ["/x"]
