#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: conda_env_facts
short_description: Read a Miniforge prefix and one conda env, and plan what to do about them
version_added: "0.2.0"
description:
  - Asks the prefix's conda for its version, looks for the prefix and the env, and asks the
    env's python for its version, in one run.
  - Returns the plan the python_env role follows; V(none) for both on a converged node.
  - Reads only; never reports a change.
  - The env counts as present when its C(conda-meta) directory exists, whether or not conda
    lists it (C(conda create --yes) over it would replace it).
author:
  - ascendops.gr00t maintainers (@ascendops)
options:
  prefix:
    description: The Miniforge prefix (absolute).
    type: path
    required: true
  env_name:
    description: The env's name; it lives in O(prefix)C(/envs/).
    type: str
    required: true
  conda_version:
    description: The conda version the prefix should answer with (Miniforge 24.3.0-0 carries conda 24.3.0).
    type: str
    required: true
  python_version:
    description: The C(major.minor) Python the env should have.
    type: str
    required: true
  pins:
    description:
      - Pins (C(name==version)) to compare with the env's C(pip list) when the env's python runs,
        as the pip_pins module would; the result is RV(pin_plan).
    type: list
    elements: str
    default: []
  wheelhouse:
    description: A directory whose C(*.whl) files are hashed (RV(wheelhouse_sha256)); empty for none.
    type: path
    default: ""
extends_documentation_fragment:
  - ascendops.gr00t.attributes
  - ascendops.gr00t.installer_lock
"""

EXAMPLES = r"""
- name: Read conda and the training env
  ascendops.gr00t.conda_env_facts:
    prefix: /opt/miniforge3
    env_name: torch2.7.1
    conda_version: 24.3.0
    python_version: "3.10"
  register: conda_state

- name: Create the env when it is missing
  ansible.builtin.command:
    argv: [/opt/miniforge3/bin/conda, create, --name, torch2.7.1, python=3.10, --yes]
  when: conda_state.env_action == 'create'
  changed_when: true
"""

RETURN = r"""
conda_version:
  description: What C(conda --version) answered, without the C(conda) word; empty when conda did not answer.
  returned: always
  type: str
  sample: 24.3.0
prefix_exists:
  description: Whether O(prefix) exists.
  returned: always
  type: bool
env_path:
  description: The env's directory.
  returned: always
  type: str
  sample: /opt/miniforge3/envs/torch2.7.1
env_present:
  description: Whether the env's C(conda-meta) directory exists.
  returned: always
  type: bool
python_version:
  description: The C(major.minor) the env's python printed; empty when it is missing or does not run.
  returned: always
  type: str
  sample: "3.10"
miniforge_action:
  description: V(none), V(install) (no prefix), V(repair) (a prefix without a working conda) or V(update).
  returned: always
  type: str
env_action:
  description: V(none), V(create) or V(recreate) (the env has another Python, or its python does not run).
  returned: always
  type: str
pin_plan:
  description:
    - The pins of O(pins) the env does not satisfy, each with C(spec), C(name), C(have) and C(want);
      null when not compared (no pins, the env's python or pip did not answer, or a requirement is
      not a pin), which leaves the comparison to the pip_pins module.
  returned: always
  type: list
  elements: dict
  sample: [{"spec": "torch==2.7.1", "name": "torch", "have": "2.6.0", "want": "2.7.1"}]
wheelhouse_sha256:
  description: The sha256 of each C(*.whl) file in O(wheelhouse).
  returned: always
  type: list
  elements: str
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ascendops.gr00t.plugins.module_utils.commands import run_if_present
from ansible_collections.ascendops.gr00t.plugins.module_utils.conda_env import (
    conda_version, env_action, miniforge_action, python_version, wheel_hashes)
from ansible_collections.ascendops.gr00t.plugins.module_utils.installer_lock import ARGUMENT_SPEC as INSTALLER_LOCK, wait_or_fail
from ansible_collections.ascendops.gr00t.plugins.module_utils.pip_pins import PIP_ENV, PIP_QUIET, pin_plan

VERSION_CODE = "import sys; print('%d.%d' % sys.version_info[:2])"


def main() -> None:
    module = AnsibleModule(
        argument_spec=dict(
            prefix=dict(type="path", required=True),
            env_name=dict(type="str", required=True),
            conda_version=dict(type="str", required=True),
            python_version=dict(type="str", required=True),
            pins=dict(type="list", elements="str", default=[]),
            wheelhouse=dict(type="path", default=""),
            **INSTALLER_LOCK,
        ),
        supports_check_mode=True,
    )
    params = module.params
    prefix = params["prefix"]
    if not os.path.isabs(prefix):
        module.fail_json(msg="prefix must be an absolute path, got: {0}".format(prefix))
    wait_or_fail(module)
    env_path = os.path.join(prefix, "envs", params["env_name"])
    have_conda = conda_version(*run_if_present(module, [os.path.join(prefix, "bin", "conda"), "--version"])[:2])
    present = os.path.isdir(os.path.join(env_path, "conda-meta"))
    have_python = python_version(*run_if_present(
        module, [os.path.join(env_path, "bin", "python"), "-c", VERSION_CODE])[:2]) if present else ""
    prefix_exists = os.path.exists(prefix)
    plan = None
    if have_python and params["pins"]:
        rc, out, dummy = module.run_command([os.path.join(env_path, "bin", "python"), "-m", "pip", "list",
                                             "--format", "json", *PIP_QUIET], environ_update=PIP_ENV)
        plan = pin_plan(params["pins"], rc, out)
    module.exit_json(
        changed=False, conda_version=have_conda, prefix_exists=prefix_exists, env_path=env_path,
        env_present=present, python_version=have_python,
        miniforge_action=miniforge_action(have_conda, params["conda_version"], prefix_exists),
        env_action=env_action(present, have_python, params["python_version"]), pin_plan=plan,
        wheelhouse_sha256=wheel_hashes(params["wheelhouse"]) if params["wheelhouse"] else [])


if __name__ == "__main__":
    main()
