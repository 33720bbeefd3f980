#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: role_arguments
short_description: Check the argument specs of several roles of this collection at once
description:
  - Validates each listed role's entry point of C(meta/argument_specs.yml) (C(main) unless named)
    against the values the role would see, on the controller, in one task per host.
  - A variable set for the host, the play or the run (inventory, C(-e)) beats the role's default;
    defaults are templated with every listed role's defaults in scope.
  - Ansible validates a role's C(main) spec only when a play enters the role; this checks every
    stage of a site run before the first stage changes anything.
  - An action plugin; it does not connect to the host.
version_added: "0.2.0"
author:
  - ascendops.gr00t maintainers (@ascendops)
options:
  roles:
    description:
      - Roles of the collection (beside the role this task runs in) whose spec to check, as
        C(role) for its C(main) entry point or C(role:entry_point).
    type: list
    elements: str
    required: true
  checks:
    description:
      - The checks a spec cannot express (a range, a path's form), per role as named in O(roles),
        each a C(ok) (already templated to a boolean) and a C(msg) (what is wrong, the value found
        and the fix). The message of every check that is not ok joins that role's problems.
      - A role's own checks, the list C(__<role>_input_checks) in its C(vars/main.yml), are
        templated by the action with the role's vars in scope and run too. A check whose value needs
        facts the play has not gathered is left out.
      - A role's notes, the list C(__<role>_notes) in its C(vars/main.yml), each a C(show) and a
        C(msg), are templated the same way; the message of every note that shows is returned in
        RV(notes).
    type: dict
    default: {}
extends_documentation_fragment:
  - ascendops.gr00t.attributes
"""

EXAMPLES = r"""
- name: Ascend | Check the site-wide settings and those of every stage
  ascendops.gr00t.role_arguments:
    roles: ["ascend:settings", system_deps, cann, python_env, train]
    checks:
      "ascend:settings":
        - ok: "{{ ascend_npu_count | int >= 1 and ascend_npu_count | int <= 16 }}"
          msg: "ascend_npu_count is '{{ ascend_npu_count }}'; set it between 1 and 16."
"""

RETURN = r"""
msg:
  description: The roles checked, or on failure every problem with the value found and the fix.
  returned: always
  type: str
  sample: The settings of system_deps, cann fit their argument specs
notes:
  description:
    - What a stage that is off leaves alone on this host (its C(__<role>_notes) that show), shown
      without C(-v).
  returned: success, when a note shows
  type: list
  elements: str
  sample: ["train_enabled is false (ascend_train_enabled): no training is launched on node1. ..."]
argument_errors:
  description: The validator's messages and those of the checks that failed, per role with problems.
  returned: failure
  type: dict
  sample: {train: ["argument 'train_max_steps' is of type str and we were unable to convert to int"]}
"""
