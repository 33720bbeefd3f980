#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: pip_pins
short_description: Converge a Python environment to pinned pip packages, installing only what differs
version_added: "0.1.0"
description:
  - Reads what the environment has (C(python -m pip list --format json)), compares it with
    the pins, and runs C(pip install) for the pins that are not satisfied only, so a
    converged environment is left alone and reports no change.
  - In check mode it reports which pins would be installed and runs nothing.
  - When pip finds no distribution for a requirement (for example a wheel missing from an
    offline wheelhouse) it fails and returns that requirement in C(missing).
author:
  - ascendops.gr00t maintainers (@ascendops)
options:
  python:
    description: Python interpreter of the environment (its pip is used).
    type: path
    required: true
  requirements:
    description:
      - Pins, each C(name), C(name==version) or C(name==version.*).
      - An unpinned name is satisfied by any installed version.
    type: list
    elements: str
    required: true
  pip_args:
    description:
      - Extra pip install arguments, such as the output of the C(ascendops.gr00t.pip_options) filter.
      - The password of a URL among them (C(https://user:password@mirror/simple)) is masked in
        everything the module returns.
    type: list
    elements: str
    default: []
extends_documentation_fragment:
  - ascendops.gr00t.attributes
"""

EXAMPLES = r"""
- name: Install the training stack from the wheelhouse
  ascendops.gr00t.pip_pins:
    python: /opt/miniforge3/envs/torch2.7.1/bin/python
    requirements: [torch==2.7.1, torch_npu==2.7.1.post2, protobuf==3.20.*, numpy]
    pip_args: "{{ '' | ascendops.gr00t.pip_options([], ['/var/cache/ascendops/artifacts/wheels']) }}"
"""

RETURN = r"""
pending:
  description: Pins the environment did not satisfy before this run, with the version it had.
  returned: always
  type: list
  elements: dict
  sample: [{"spec": "torch==2.7.1", "name": "torch", "have": null, "want": "2.7.1"}]
versions:
  description: Installed version of each pinned project after the run (before it in check mode).
  returned: always
  type: dict
  sample: {"torch": "2.7.1", "numpy": "2.4.6"}
missing:
  description: The requirement pip found no distribution for, when that made it fail.
  returned: failure
  type: str
  sample: deepspeed==0.18.4
missing_name:
  description: The project name of C(missing).
  returned: failure
  type: str
  sample: deepspeed
"""

import os
import re

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ascendops.gr00t.plugins.module_utils.pip_pins import (
    missing_distribution,
    parse_pin,
    parse_pip_list,
    pending_pins,
)
from ansible_collections.ascendops.gr00t.plugins.module_utils.redact import url_passwords

PIP_QUIET = ["--disable-pip-version-check", "--no-input"]
# The user's ~/.local must neither satisfy nor receive the environment's packages.
PIP_ENV = {"PYTHONNOUSERSITE": "1"}


def installed(module: AnsibleModule, python: str) -> dict[str, str]:
    rc, out, err = module.run_command([python, "-m", "pip", "list", "--format", "json", *PIP_QUIET],
                                      environ_update=PIP_ENV)
    if rc != 0:
        module.fail_json(msg=f"`{python} -m pip list` failed (rc={rc}): {err.strip() or out.strip()}. "
                             "The environment has no working pip: recreate it.", rc=rc)
    return parse_pip_list(out)


def pinned_versions(specs: list[str], have: dict[str, str]) -> dict[str, str | None]:
    return {pin.name: have.get(pin.name) for pin in map(parse_pin, specs)}


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "python": {"type": "path", "required": True},
            "requirements": {"type": "list", "elements": "str", "required": True},
            "pip_args": {"type": "list", "elements": "str", "default": []},
        },
        supports_check_mode=True,
    )
    # A mirror URL may carry user:password@: whatever the module returns (the command, pip's
    # output, a message) shows the password masked.
    module.no_log_values.update(url_passwords(module.params["pip_args"]))
    python, specs = module.params["python"], module.params["requirements"]
    try:
        for spec in specs:
            parse_pin(spec)
    except ValueError as exc:
        module.fail_json(msg=f"requirements: {exc}")
    if not os.access(python, os.X_OK):
        module.fail_json(msg=f"{python} does not exist or is not executable: create the environment first.")

    have = installed(module, python)
    pending = pending_pins(specs, have)
    result = {"changed": bool(pending), "pending": pending, "versions": pinned_versions(specs, have)}
    if not pending or module.check_mode:
        module.exit_json(**result)

    cmd = [python, "-m", "pip", "install", *PIP_QUIET, *module.params["pip_args"], *[p["spec"] for p in pending]]
    rc, out, err = module.run_command(cmd, environ_update=PIP_ENV)
    if rc != 0:
        missing = missing_distribution(err + "\n" + out)
        name = re.match(r"[A-Za-z0-9._-]+", missing).group(0) if missing else None
        module.fail_json(msg=f"pip install failed (rc={rc}): {(err.strip() or out.strip())[-2000:]}",
                         rc=rc, cmd=cmd, stdout=out, stderr=err, missing=missing, missing_name=name,
                         pending=pending)

    have = installed(module, python)
    still = pending_pins(specs, have)
    if still:
        module.fail_json(msg="pip install succeeded but the environment still differs from the pins: "
                             + ", ".join(f"{p['spec']} (has {p['have']})" for p in still),
                         pending=still, stdout=out)
    result["versions"] = pinned_versions(specs, have)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
