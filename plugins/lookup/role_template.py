# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
name: role_template
short_description: Render a template file as ansible.builtin.template does, without copying every variable
version_added: "0.2.0"
description:
  - Renders each term, a template file found as the C(ansible.builtin.template) lookup finds it
    (the role's C(templates/) first), with the task's variables and the template variables
    (C(ansible_managed), C(template_path), C(template_host) and the others).
  - C(ansible.builtin.template) deep-copies every variable of the host for each file it renders.
    This lookup lays the template variables over the host's instead; a template reads its
    variables and cannot change them, so the text is the same. The stages render their small
    files (login-shell snippet, conda hooks, run environment) with it on every run, several per
    node, most of them only to compare with what is on the node.
author:
  - ascendops.gr00t maintainers (@ascendops)
options:
  _terms:
    description: Template files, each a name under the role's C(templates/) or a path.
    required: true
    type: list
    elements: str
"""

EXAMPLES = r"""
- name: Write the login-shell snippet
  ascendops.gr00t.file_set:
    files:
      - path: /etc/profile.d/ascend-cann.sh
        content: "{{ lookup('ascendops.gr00t.role_template', 'ascend-cann.sh.j2') }}"
"""

RETURN = r"""
_raw:
  description: The rendered text of each file.
  type: list
  elements: str
"""

import os
from collections import ChainMap
from collections.abc import Mapping
from typing import Any

from ansible.errors import AnsibleError
from ansible.plugins.lookup import LookupBase
from ansible.template import trust_as_template
# The template variables and the render without forced finalization, as ansible.builtin.template
# itself uses them: the same text for the same file.
from ansible._internal._templating import _template_vars
from ansible._internal._templating._engine import TemplateOptions


def jinja_search_path(variables: Mapping[str, Any], template: str) -> list[str]:
    """Where `{% include %}` looks: the template's own directory, then each search path's
    templates/ and the search path itself."""
    paths = [os.path.dirname(template)]
    for path in variables.get("ansible_search_path", []):
        paths += [os.path.join(path, "templates"), path]
    return paths


class LookupModule(LookupBase):

    def run(self, terms: list[Any], variables: dict[str, Any] | None = None, **kwargs: Any) -> list[Any]:
        self.set_options(var_options=variables, direct=kwargs)
        variables = variables or {}
        rendered = []
        for term in terms:
            path = self.find_file_in_search_path(variables, "templates", term)
            if not path:
                raise AnsibleError(f"role_template: the template file {term} could not be found")
            text = trust_as_template(self._loader.get_text_file_contents(path))
            own = _template_vars.generate_ansible_template_vars(
                path=term, fullpath=path, include_ansible_managed="ansible_managed" not in variables)
            templar = self._templar.copy_with_new_env(available_variables=ChainMap(dict(own), variables),
                                                      searchpath=jinja_search_path(variables, path))
            rendered.append(templar._engine.template(text, options=TemplateOptions(escape_backslashes=False)))
        return rendered
