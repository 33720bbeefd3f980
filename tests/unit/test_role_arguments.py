"""role_arguments: every stage's argument spec, checked once, before the first stage."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import ansible_collections.ascendops.gr00t as collection
import yaml

import pytest
from ansible.errors import AnsibleError

from ansible_collections.ascendops.gr00t.plugins.action.role_arguments import (
    failed_checks,
    failure_message,
    found_values,
    role_entry,
    role_inputs,
    secret_options,
)

REPO = Path(__file__).resolve().parents[2]
COLLECTIONS_ROOT = Path(collection.__path__[0]).parents[1]
STAGE_ROLES = yaml.safe_load((REPO / "roles" / "ascend" / "vars" / "main.yml").read_text())["__ascend_stage_roles"]


def test_a_variable_set_for_the_run_beats_the_default() -> None:
    options = {"a": {}, "b": {}, "c": {}}
    assert role_inputs(options, {"a": 1, "b": "{{ a }}"}, {"b": 5, "other": 0}) == {"a": 1, "b": 5}


def test_an_entry_point_is_named_after_a_colon() -> None:
    assert role_entry("ascend:settings") == ("ascend", "settings")
    assert role_entry("train") == ("train", "main")


def test_an_option_without_value_or_default_is_left_to_the_validator() -> None:
    assert role_inputs({"required_one": {"required": True}}, {}, {}) == {}


def test_found_values_name_what_the_messages_name_and_hide_secrets() -> None:
    errors = ["value of mode must be one of: a, b, got: x",
              "argument 'token' is of type int and we were unable to convert to str",
              "argument 'index' is of type dict"]
    values = {"mode": "x", "token": 3, "index": "https://u:pw@mirror/simple", "other": 1}
    assert found_values(errors, values, {"token"}) == {
        "index": "https://u:********@mirror/simple", "mode": "x", "token": "(hidden: no_log)"}


def test_secret_options_are_the_no_log_ones() -> None:
    assert secret_options({"a": {"no_log": True}, "b": {"type": "str"}, "c": {"no_log": False}}) == {"a"}


def test_the_message_names_role_value_and_fix() -> None:
    msg = failure_message("node1", {"train": ["argument 'train_max_steps' is of type str"]},
                          {"train": {"train_max_steps": "abc"}})
    assert "node1" in msg and "before any stage changes anything" in msg
    assert "train: argument 'train_max_steps' is of type str" in msg
    assert "train: found train_max_steps = 'abc'" in msg
    assert "group_vars" in msg


def test_failed_checks_keep_their_messages_per_role() -> None:
    checks = {"ascend:settings": [{"ok": True, "msg": "fine"}, {"ok": False, "msg": "ascend_npu_count is '0';\n  set it"},
                                  {"ok": "False", "msg": "a string from an old template"}],
              "cann": [{"ok": "true", "msg": "fine"}]}
    assert failed_checks(checks) == {"ascend:settings": ["ascend_npu_count is '0'; set it", "a string from an old template"]}


def test_a_check_without_ok_or_msg_is_refused() -> None:
    with pytest.raises(AnsibleError, match="list of {ok, msg}"):
        failed_checks({"cann": [{"ok": True}]})


def test_every_stage_playbook_that_skips_the_check_is_listed() -> None:
    """A stage imported without Ansible's own check must be checked by the ascend role instead."""
    skipped = set()
    for playbook in sorted((REPO / "playbooks").glob("*.yml")):
        for play in yaml.safe_load(playbook.read_text()) or []:
            for task in play.get("tasks") or []:
                role = task.get("ansible.builtin.import_role") or task.get("ansible.builtin.include_role") or {}
                if role.get("rolespec_validate") is False:
                    skipped.add(role["name"].rsplit(".", 1)[-1])
            in_roles = {str(entry.get("role", "")).rsplit(".", 1)[-1] for entry in play.get("roles") or []}
            assert not in_roles & set(STAGE_ROLES), \
                f"{playbook.name}: a stage in roles: is checked again by Ansible as it starts; import it as the others"
    assert skipped == set(STAGE_ROLES)
    for role in STAGE_ROLES:
        assert "main" in yaml.safe_load((REPO / "roles" / role / "meta" / "argument_specs.yml").read_text())[
            "argument_specs"], role


def run_check(tmp_path: Path, *extra: str, facts: bool = True) -> dict:
    """The action on localhost over the collection's stage roles; its JSON result."""
    play = tmp_path / "check.yml"
    play.write_text(yaml.safe_dump([{
        "hosts": "localhost", "gather_facts": facts, "gather_subset": ["min"],
        "roles": [{"role": "ascendops.gr00t.ascend"}]}]))
    config = tmp_path / "ansible.cfg"
    config.write_text("[defaults]\n")
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(COLLECTIONS_ROOT), ANSIBLE_STDOUT_CALLBACK="json",
               ANSIBLE_LOAD_CALLBACK_PLUGINS="1", ANSIBLE_CONFIG=str(config), ANSIBLE_LOCALHOST_WARNING="0",
               ANSIBLE_INVENTORY_UNPARSED_WARNING="0")
    res = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), str(play), "-c", "local", *extra],
                         capture_output=True, text=True, env=env, cwd=tmp_path, check=False)
    assert "{" in res.stdout, res.stdout[-2000:] + res.stderr[-2000:]
    document = json.loads(res.stdout[res.stdout.index("{"):])
    tasks = document["plays"][0]["tasks"]
    return next(task["hosts"]["localhost"] for task in tasks
                if task["task"]["name"].endswith("Check the site-wide settings and those of every stage"))


def test_the_stage_defaults_pass(tmp_path: Path) -> None:
    result = run_check(tmp_path)
    assert not result.get("failed"), result.get("msg")
    assert result["msg"] == f"The settings of {', '.join(['ascend:settings', *STAGE_ROLES])} fit their argument specs"
    # The device network is off by default: the first pass says so, shown without -v.
    assert result["notes"] == [
        "npu_network_enabled is false (ascend_manage_npu_network): the NPU device network of localhost is left "
        "as it is. Set it true for multi-node training."]


def test_every_stage_that_is_off_is_noted_once_and_a_stage_that_is_on_is_not(tmp_path: Path) -> None:
    result = run_check(tmp_path, "-e", "ascend_manage_driver=false", "-e", "ascend_train_enabled=false")
    assert not result.get("failed"), result.get("msg")
    assert [note.split(" is false")[0] for note in result["notes"]] == [
        "npu_driver_enabled", "npu_network_enabled", "train_enabled"]
    assert "no training is launched on localhost" in result["notes"][2]
    on = run_check(tmp_path, "-e", "ascend_manage_npu_network=true")
    assert "notes" not in on, on


def test_a_bad_value_for_the_last_stage_stops_the_first(tmp_path: Path) -> None:
    result = run_check(tmp_path, "-e", "train_max_steps=abc", "-e", "mx_driving_mode=bogus")
    assert result["failed"]
    assert set(result["argument_errors"]) == {"train", "mx_driving"}
    assert re.search(r"train: found train_max_steps = 'abc'", result["msg"])
    assert "mx_driving: found mx_driving_mode = 'bogus'" in result["msg"]


def test_a_play_without_facts_checks_what_it_can(tmp_path: Path) -> None:
    """train_status.yml and the like gather no facts: the defaults built from facts are left out."""
    assert not run_check(tmp_path, facts=False).get("failed")
    result = run_check(tmp_path, "-e", "train_max_steps=abc", facts=False)
    assert result["failed"] and set(result["argument_errors"]) == {"train"}


def test_a_bad_site_wide_setting_is_named_with_the_stages(tmp_path: Path) -> None:
    """The stages whose own defaults are built from the site-wide value are named too."""
    result = run_check(tmp_path, "-e", "ascend_npu_count=eight", "-e", "train_max_steps=abc")
    assert result["failed"] and {"ascend:settings", "train"} <= set(result["argument_errors"])
    assert list(result["argument_errors"])[0] == "ascend:settings"
    assert "ascend:settings: found ascend_npu_count = 'eight'" in result["msg"]


def test_a_site_wide_form_the_spec_cannot_express_is_checked_with_the_specs(tmp_path: Path) -> None:
    """An NPU count out of range is an int to the spec; the site-wide checks name it in the same message."""
    result = run_check(tmp_path, "-e", "ascend_npu_count=17", "-e", "ascend_install_root=opt/Ascend",
                       "-e", "train_max_steps=abc")
    # cann and npu_driver take their install root from the site-wide one, and preflight its NPU
    # count: their own checks say so too.
    assert result["failed"] and set(result["argument_errors"]) == {"ascend:settings", "train", "cann", "npu_driver",
                                                                   "preflight"}
    # A stage's count and root are the site-wide ones: their messages name those, not the stage's variable.
    assert "preflight: ascend_npu_count is 17;" in result["msg"]
    assert "npu_driver: ascend_npu_count is '17'" in result["msg"]
    assert "cann: ascend_install_root is 'opt/Ascend'" in result["msg"]
    assert "expected_npu_count" not in result["msg"] and "cann_install_root" not in result["msg"]
    assert "ascend:settings: ascend_npu_count is '17'; set it to the NPUs per node, 1 to 16" in result["msg"]
    # Only the path that is off: the other site-wide paths are not listed.
    assert "ascend:settings: ascend_install_root is 'opt/Ascend'" in result["msg"]
    assert "ascend_conda_prefix" not in result["msg"] and "ascend_artifact_stage_dir" not in result["msg"]
    assert "train: found train_max_steps = 'abc'" in result["msg"]


def test_a_stage_s_own_input_checks_run_in_the_first_pass(tmp_path: Path) -> None:
    """A stage's own checks (__<role>_input_checks in its role vars) stop the run on its first task."""
    result = run_check(tmp_path, "-e", "cann_version=nine", "-e", "mx_driving_local_version=a_b",
                       "-e", "npu_driver_install_poll=0", "-e", "gr00t_report_dir=reports",
                       "-e", '{"preflight_disk_requirements": [{"path": "opt", "min_free_gb": 1}]}',
                       "-e", "python_env_name=base", "-e", "system_deps_http_proxy=proxy:3128")
    assert result["failed"] and set(result["argument_errors"]) == {"cann", "mx_driving", "npu_driver", "gr00t",
                                                                   "preflight", "python_env", "system_deps"}
    assert "python_env: python_env_name is 'base'" in result["msg"]
    assert "system_deps: system_deps_http_proxy is proxy:3128" in result["msg"]
    assert "gr00t: gr00t_report_dir is 'reports'; want an absolute path." in result["msg"]
    assert "preflight_disk_requirements entries" in result["msg"]
    assert "cann: cann_version is 'nine' (want e.g. 9.0.0)" in result["msg"]
    assert "mx_driving: mx_driving_local_version is 'a_b' (want e.g. 1 or" in result["msg"]
    assert "npu_driver: npu_driver_install_poll is '0'" in result["msg"]
    # Each names only the setting that is off, not the others of its stage.
    for correct in ("gr00t_python", "python_env_python_version", "mx_driving_version", "npu_driver_install_timeout is",
                    "cann_install_root", "system_deps_https_proxy"):
        assert correct not in result["msg"], correct


def test_a_stage_that_is_off_is_not_held_to_its_checks(tmp_path: Path) -> None:
    assert not run_check(tmp_path, "-e", "ascend_manage_driver=false", "-e", "npu_driver_install_poll=0").get("failed")


def test_every_stage_s_own_checks_and_notes_have_a_condition_and_a_message() -> None:
    for role in STAGE_ROLES:
        path = REPO / "roles" / role / "vars" / "main.yml"
        role_vars = (yaml.safe_load(path.read_text()) or {}) if path.exists() else {}
        for check in role_vars.get(f"__{role}_input_checks") or []:
            assert set(check) == {"ok", "msg"} and "{{" in check["ok"], (role, check)
        for note in role_vars.get(f"__{role}_notes") or []:
            assert set(note) == {"show", "msg"} and "{{" in note["show"], (role, note)


def test_a_note_without_show_is_refused() -> None:
    from ansible_collections.ascendops.gr00t.plugins.action.role_arguments import check_items

    with pytest.raises(AnsibleError, match=r"__train_notes must be a list of \{show, msg\}"):
        check_items("__train_notes", [{"ok": "{{ true }}", "msg": "x"}], key="show")


# ---------------------------------------------------------------- fewer renders, same values


def test_checks_that_are_one_expression_each_render_together() -> None:
    from ansible.template import is_trusted_as_template, trust_as_template
    from ansible_collections.ascendops.gr00t.plugins.action.role_arguments import one_expression

    combined = one_expression([trust_as_template("{{ a | int > 1 }}"), trust_as_template("{{ b\n   and c }}")])
    assert combined == "{{ [( a | int > 1 ), ( b\n   and c )] }}" and is_trusted_as_template(combined)
    # Text around an expression, a second expression, a block, or text not trusted: each on its own.
    for odd in ("x {{ a }}", "{{ a }}{{ b }}", "{% if a %}1{% endif %}"):
        assert one_expression([trust_as_template("{{ a }}"), trust_as_template(odd)]) is None
    assert one_expression(["{{ a }}"]) is None


def test_a_default_that_names_a_variable_is_resolved_once_with_the_same_value() -> None:
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar, trust_as_template
    from ansible_collections.ascendops.gr00t.plugins.action.role_arguments import Resolver

    scope = {"site_root": trust_as_template("{{ base }}/Ascend"), "base": "/usr/local",
             "cann_root": trust_as_template("{{ site_root }}"), "driver_root": trust_as_template("{{ site_root }}"),
             "npus": 8, "npu_count": trust_as_template("{{ npus }}"), "loop_a": trust_as_template("{{ loop_a }}"),
             "untrusted": "{{ base }}"}
    templar = Templar(loader=DataLoader(), variables=scope)
    renders = []
    real_template = templar.template

    def counting(value, *args, **kwargs):
        renders.append(value)
        return real_template(value, *args, **kwargs)

    templar.template = counting
    resolver = Resolver(templar, scope)
    assert resolver.value(scope["cann_root"]) == "/usr/local/Ascend"
    assert resolver.value(scope["driver_root"]) == "/usr/local/Ascend"
    assert resolver.value(scope["npu_count"]) == 8
    assert renders.count(scope["site_root"]) == 1
    # Not trusted as a template: the templar decides, as for any value (it leaves it as it is).
    assert resolver.value(scope["untrusted"]) == "{{ base }}"
    # A variable that names itself is the templar's to refuse.
    with pytest.raises(Exception):
        resolver.value(scope["loop_a"])
