# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Check the argument spec of several roles of this collection in one task.

Ansible validates a role's `main` spec each time a play enters the role: one task per stage,
host and run, and only when that stage starts, maybe an hour into a site run. This action
checks every listed role's spec at once, with each variable's value as the role would see it
(set for the host or play, else the role's default, templated), so a bad value for a late
stage stops the run before anything changes. It also runs the checks a spec cannot express
(ranges, path forms), each an `ok` and the `msg` that names the variable, the value found and
the fix: those given to the task (templated by it), and a role's own `__<role>_input_checks`
from its vars/main.yml, templated here with the role's vars in scope. A role's `__<role>_notes`
(a `show` and a `msg`) say what a stage that is off leaves alone: shown here, once per host and
run, a stage needs no task of its own on every node to say it.
"""
from __future__ import annotations

import os
import re
from collections import ChainMap
from collections.abc import Mapping
from typing import Any

from ansible.errors import AnsibleError, AnsibleUndefinedVariable
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase
from ansible.template import is_trusted_as_template, trust_as_template

from ansible_collections.ascendops.gr00t.plugins.module_utils.redact import mask_credentials

ENTRY_POINT = "main"
# The validator's messages name the variable in quotes or not ("value of x must be one of").
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def role_entry(item: str) -> tuple[str, str]:
    """`role` or `role:entry_point` -> (role, entry point); `main` when none is named."""
    role, dummy, entry = item.partition(":")
    return role, entry or ENTRY_POINT


# A default that only names another variable ("{{ ascend_install_root }}"): most stage defaults.
_REFERENCE = re.compile(r"^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$")


class Resolver:
    """Templates values in one scope, each variable a value names alone (`{{ name }}`) once: a
    full render costs a new template context over every variable in scope, and most stage
    defaults name a site-wide one that several stages share. Anything else, and a value not
    trusted as a template, is rendered by the templar as it is."""

    def __init__(self, templar: Any, scope: Mapping[str, Any]) -> None:
        self._templar = templar
        self._scope = scope
        self._resolved: dict[str, Any] = {}
        self._resolving: set[str] = set()

    def value(self, raw: Any) -> Any:
        match = _REFERENCE.match(raw) if isinstance(raw, str) and is_trusted_as_template(raw) else None
        name = match.group(1) if match else None
        if name is None or name not in self._scope or name in self._resolving:
            return self._templar.template(raw)
        if name not in self._resolved:
            self._resolving.add(name)
            try:
                self._resolved[name] = self.value(self._scope[name])
            finally:
                self._resolving.discard(name)
        return self._resolved[name]


# A check's `ok`: one Jinja expression and nothing around it.
_EXPRESSION = re.compile(r"^\s*\{\{(.*)\}\}\s*$", re.DOTALL)


def one_expression(texts: list[Any]) -> str | None:
    """One template whose value is the list of the values of `texts`, each a single expression
    trusted as a template (`{{ ... }}`); None when one is not."""
    parts = []
    for text in texts:
        match = _EXPRESSION.match(text) if isinstance(text, str) and is_trusted_as_template(text) else None
        if match is None or any(token in match.group(1) for token in ("{{", "}}", "{%", "%}", "{#")):
            return None
        parts.append(f"({match.group(1)})")
    return trust_as_template("{{ [" + ", ".join(parts) + "] }}")


def role_inputs(options: Mapping[str, Any], defaults: Mapping[str, Any],
                task_vars: Mapping[str, Any]) -> dict[str, Any]:
    """The value of each option where the role runs, not templated yet: a variable set for the
    host, the play or the run beats the role's default; an option with neither is left out."""
    return {name: task_vars[name] if name in task_vars else defaults[name]
            for name in options if name in task_vars or name in defaults}


def secret_options(options: Mapping[str, Any]) -> set[str]:
    """Options whose value must not be shown (no_log in the spec)."""
    return {name for name, spec in options.items() if isinstance(spec, Mapping) and spec.get("no_log")}


def found_values(errors: list[str], values: Mapping[str, Any], hidden: set[str]) -> dict[str, Any]:
    """The value of every variable an error message names, passwords in URLs masked and no_log
    options hidden."""
    named = {name for message in errors for name in _WORD.findall(message) if name in values}
    return {name: "(hidden: no_log)" if name in hidden else mask_credentials(values[name]) for name in sorted(named)}


def check_items(what: str, items: Any, key: str = "ok") -> list[Mapping[str, Any]]:
    """A role's checks (or notes, with key `show`), refused unless a list of {key, msg}; `what`
    names them in the error."""
    if not isinstance(items, list) or not all(isinstance(item, Mapping) and key in item and "msg" in item
                                              for item in items):
        raise AnsibleError(f"role_arguments: {what} must be a list of {{{key}, msg}}, got {items!r}")
    return items


def one_line(msg: Any) -> str:
    """A folded YAML message as the failure lists it: one line, single spaces."""
    return " ".join(str(msg).split())


def failed_checks(checks: Mapping[str, Any]) -> dict[str, list[str]]:
    """The message of every check that is not ok, per role; a role whose checks all pass is left out."""
    failed = {}
    for role, items in checks.items():
        messages = [one_line(item["msg"]) for item in check_items(f"the checks of {role}", items)
                    if not boolean(item["ok"], strict=False)]
        if messages:
            failed[role] = messages
    return failed


def input_checks_name(role: str) -> str:
    """The role var that holds a role's own input checks."""
    return f"__{role}_input_checks"


def notes_name(role: str) -> str:
    """The role var that holds the notes a role shows when it leaves something alone."""
    return f"__{role}_notes"


def failure_message(host: str, problems: Mapping[str, list[str]], found: Mapping[str, Mapping[str, Any]]) -> str:
    """One message for every role with problems: the validator's words, the values found, the fix."""
    lines = [f"Settings on {host} that a stage would refuse (checked before any stage changes anything):"]
    for role, errors in problems.items():
        lines += [f"  {role}: {error}" for error in errors]
        lines += [f"  {role}: found {name} = {value!r}" for name, value in found.get(role, {}).items()]
    lines.append("Fix them where they are set (inventory group_vars/host_vars or -e), as each role's "
                 "meta/argument_specs.yml and README describe, and run again.")
    return "\n".join(lines)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def _role_file(self, roles_dir: str, role: str, *parts: str, optional: bool = False) -> Any:
        path = os.path.join(roles_dir, role, *parts)
        if optional and not os.path.isfile(path):
            return {}
        if not os.path.isfile(path):
            raise AnsibleError(f"role_arguments: {path} does not exist (role {role!r} of roles {roles_dir})")
        return self._loader.load_from_file(path, trusted_as_template=True, unsafe=True) or {}

    @staticmethod
    def _own_checks(templar: Any, role: str, role_vars: Mapping[str, Any]) -> tuple[list[str], list[str]]:
        """The messages of a role's own input checks that fail and of its notes that show, each
        `ok` and `show` templated with the role's vars in scope; one whose value needs facts this
        play has not gathered is left out (as a spec's value is). A message is templated only for
        a check that fails or a note that shows."""
        checks = check_items(input_checks_name(role), role_vars.get(input_checks_name(role)) or [])
        notes = check_items(notes_name(role), role_vars.get(notes_name(role)) or [], key="show")
        if not checks and not notes:
            return [], []
        scoped = templar.copy_with_new_env(available_variables=ChainMap(role_vars, templar.available_variables))
        conditions = [item["ok"] for item in checks] + [item["show"] for item in notes]
        # All of them in one render when they can be; each on its own when one of them fails.
        combined = one_expression(conditions)
        results = None
        if combined is not None:
            try:
                results = list(scoped.template(combined))
            except AnsibleError:
                results = None
        problems: list[str] = []
        shown: list[str] = []
        for index, condition in enumerate(conditions):
            is_check = index < len(checks)
            item = checks[index] if is_check else notes[index - len(checks)]
            if results is not None:
                value = results[index]
            else:
                try:
                    value = scoped.template(condition)
                except AnsibleUndefinedVariable:
                    continue
                except AnsibleError as exc:
                    kind = "check" if is_check else "note"
                    problems.append(one_line(f"a {kind} of {role} cannot be templated: {exc.message}"))
                    continue
            # A check that holds, or a note with nothing to say.
            if boolean(value, strict=False) == is_check:
                continue
            try:
                message = one_line(scoped.template(item["msg"]))
            except AnsibleError:
                message = one_line(item["msg"])
            (problems if is_check else shown).append(message)
        return problems, shown

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        roles = self._task.args.get("roles")
        if not isinstance(roles, list) or not all(isinstance(role, str) for role in roles):
            raise AnsibleError(f"role_arguments: roles must be a list of role names, got {roles!r}")
        checks = self._task.args.get("checks") or {}
        if not isinstance(checks, Mapping):
            raise AnsibleError(f"role_arguments: checks must map a role to its checks, got {checks!r}")
        roles_dir = os.path.dirname(self._task._role._role_path)

        # Keyed by the list's items (`role` or `role:entry_point`).
        specs, defaults, role_vars = {}, {}, {}
        for item in roles:
            role, entry = role_entry(item)
            spec = (self._role_file(roles_dir, role, "meta", "argument_specs.yml").get("argument_specs") or {})
            specs[item] = (spec.get(entry) or {}).get("options") or {}
            defaults[item] = self._role_file(roles_dir, role, "defaults", "main.yml")
            if entry == ENTRY_POINT:
                # A role's own input checks, in its role vars (which beat the run's variables, as in a play).
                role_vars[item] = self._role_file(roles_dir, role, "vars", "main.yml", optional=True)
        # A default may name another role's default (or one of its own): all of them are in
        # scope, below every variable the run sets.
        scope = ChainMap(task_vars, *(defaults[role] for role in roles))
        templar = self._templar.copy_with_new_env(available_variables=scope)
        resolver = Resolver(templar, scope)

        problems: dict[str, list[str]] = {}
        found: dict[str, dict[str, Any]] = {}
        for role in roles:
            values, errors = {}, []
            for name, raw in role_inputs(specs[role], defaults[role], task_vars).items():
                try:
                    values[name] = resolver.value(raw)
                except AnsibleUndefinedVariable:
                    # A default built from facts a play without fact gathering lacks (a status
                    # or stop playbook): that stage does not run there, and a stage play gathers.
                    continue
                except AnsibleError as exc:
                    errors.append(f"{name} cannot be templated: {exc.message}")
            if errors:
                problems[role] = errors
                continue
            validation = ArgumentSpecValidator(specs[role]).validate(values, validate_role_argument_spec=True)
            errors = validation.error_messages
            if errors:
                problems[role] = list(errors)
                found[role] = found_values(problems[role], values, secret_options(specs[role]))
        # After the spec's messages of the same role: a wrong type is the first thing to fix.
        given = failed_checks(checks)
        notes: list[str] = []
        for role in dict.fromkeys([*roles, *given]):
            own, shown = self._own_checks(templar, role, role_vars[role]) if role in role_vars else ([], [])
            messages = given.get(role, []) + own
            if messages:
                problems[role] = problems.get(role, []) + messages
            notes += shown

        result["changed"] = False
        if problems:
            result.update(failed=True, argument_errors=problems,
                          msg=failure_message(task_vars.get("inventory_hostname", "this host"), problems, found))
        else:
            result["msg"] = f"The settings of {', '.join(roles)} fit their argument specs"
            if notes:
                # Shown without -v, as a debug task's message is.
                result.update(notes=notes, _ansible_verbose_always=True)
        return result
