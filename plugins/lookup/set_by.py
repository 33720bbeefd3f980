# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
name: set_by
short_description: Name the variable a setting takes its value from, for a message
version_added: "0.2.0"
description:
  - Most settings of a stage default to a site-wide one (C(preflight_expected_npu_count) is
    C({{ ascend_npu_count }})). A message that names the stage's variable names one the user may
    never have set; this lookup names the one that gives the value, so a refusal says what to fix.
  - Follows, without templating anything, each default that is only another variable
    (C({{ name }})), or another variable with a fallback variable for when that one is not
    defined (as C(train_dataset_path) is C(gr00t_dataset_path), else C(ascend_dataset_path)), to
    the first variable that holds a value of its own (set for the host, the play or the run, or a
    literal default). That one's name is the result.
  - When that value is itself built from other variables (C({{ conda_prefix }}/envs/{{ env }}/bin/python)),
    the result adds them in parentheses, each followed as above, in the order the template names
    them (C(train_python) comes from C(ascend_conda_prefix) and C(ascend_conda_env)).
  - A term that is not a variable, or whose value is not a template, is returned as it is.
author:
  - ascendops.gr00t maintainers (@ascendops)
options:
  _terms:
    description: Variable names.
    required: true
    type: list
    elements: str
"""

EXAMPLES = r"""
- name: Preflight | Assert the node shows its NPUs
  ansible.builtin.assert:
    that: ansible_facts['npu']['count'] == preflight_expected_npu_count | int
    # "ascend_npu_count is 8" when only the site-wide count is set.
    fail_msg: >-
      npu-smi shows {{ ansible_facts['npu']['count'] }} NPU(s),
      {{ lookup('ascendops.gr00t.set_by', 'preflight_expected_npu_count') }} is {{ preflight_expected_npu_count }}.
"""

RETURN = r"""
_raw:
  description: For each term, the name of the variable its value is set in, with the variables a built value comes from.
  type: list
  elements: str
"""

import re
from collections import ChainMap
from collections.abc import Mapping
from typing import Any

from jinja2 import Environment, nodes
from jinja2.exceptions import TemplateSyntaxError

from ansible.errors import AnsibleError
from ansible.plugins.lookup import LookupBase
from ansible.template import is_trusted_as_template

_NAME = r"([A-Za-z_][A-Za-z0-9_]*)"
# A value that is another variable's as it is: `{{ name }}`.
_REFERENCE = re.compile(r"^\s*\{\{\s*" + _NAME + r"\s*\}\}\s*$")
# Another variable's, or the fallback's when that one is not defined: `{{ name | default(fallback) }}`.
_FALLBACK = re.compile(r"^\s*\{\{\s*" + _NAME + r"\s*\|\s*default\((.*)\)\s*\}\}\s*$", re.DOTALL)


def raw_value(variables: Mapping[str, Any], name: str) -> Any:
    """A variable's value as it is set, not templated (a lazy mapping would template it on access)."""
    if isinstance(variables, ChainMap):
        for layer in variables.maps:
            if name in layer:
                return raw_value(layer, name)
        return None
    return dict.get(variables, name) if isinstance(variables, dict) else variables.get(name)


def is_template(raw: Any) -> bool:
    """A value Ansible templates: a string trusted as a template that holds an expression or a block."""
    return isinstance(raw, str) and is_trusted_as_template(raw) and ("{{" in raw or "{%" in raw)


def passed_on(raw: Any, variables: Mapping[str, Any]) -> str | None:
    """The variable whose value `raw` is, unchanged; None when it is not one variable's."""
    if not is_template(raw):
        return None
    match = _REFERENCE.match(raw)
    if match:
        return match.group(1)
    match = _FALLBACK.match(raw)
    if match is None:
        return None
    if match.group(1) in variables:
        return match.group(1)
    # A fallback that is another variable passes that one on; a literal one is the value's own.
    fallback = match.group(2).strip()
    return fallback if re.fullmatch(_NAME, fallback) else None


def origin(name: str, variables: Mapping[str, Any]) -> str:
    """The variable that holds the value `name` takes: itself, or the one its default passes on."""
    seen = {name}
    while True:
        source = passed_on(raw_value(variables, name), variables)
        if source is None or source not in variables or source in seen:
            return name
        seen.add(source)
        name = source


# Parses only (Ansible's filters and tests are names to the parser): no Ansible environment is needed.
_PARSER = Environment()


def template_names(text: str) -> list[str]:
    """The variables a template reads, in the order it names them, each once."""
    try:
        tree = _PARSER.parse(text)
    except TemplateSyntaxError:
        return []
    names = [node.name for node in tree.find_all(nodes.Name) if node.ctx == "load"]
    return list(dict.fromkeys(names))


def joined(names: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def set_by(name: str, variables: Mapping[str, Any]) -> str:
    """The variable `name` takes its value from; for a value built from other variables, with
    those it comes from."""
    source = origin(name, variables)
    raw = raw_value(variables, source)
    if not is_template(raw):
        return source
    parts = [origin(part, variables) for part in template_names(raw) if part in variables and part != source]
    parts = list(dict.fromkeys(parts))
    return f"{source} (from {joined(parts)})" if parts else source


class LookupModule(LookupBase):

    def run(self, terms: list[Any], variables: dict[str, Any] | None = None, **kwargs: Any) -> list[str]:
        self.set_options(var_options=variables, direct=kwargs)
        variables = variables if variables is not None else {}
        for term in terms:
            if not isinstance(term, str):
                raise AnsibleError(f"set_by: a term is a variable name, got {term!r}")
        return [set_by(term, variables) for term in terms]
