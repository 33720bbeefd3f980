#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: mx_driving_facts
short_description: Report the mx_driving installed in a Python environment, from its files
version_added: "0.1.0"
description:
  - Finds the environment's site-packages with its interpreter (which imports nothing of
    mx_driving), then reads the installed mx_driving - version from its dist-info, the
    compiled C(_C) extensions, the patcher framework files, whether C(mx_driving.patcher)
    has the new API (C(Patcher), C(TransformersNPU), C(DiffusersNPU), C(legacy.py)) from
    the source text, and every installed file against the dist-info RECORD.
  - Importing mx_driving needs torch_npu and an NPU; this module never does.
  - Reads only; never reports a change.
author:
  - ascendops.gr00t maintainers (@ascendops)
options:
  python:
    description: Interpreter of the environment (e.g. C(/opt/miniforge3/envs/torch2.7.1/bin/python)).
    type: path
    required: true
extends_documentation_fragment:
  - ascendops.gr00t.attributes
"""

EXAMPLES = r"""
- name: Read the installed mx_driving
  ascendops.gr00t.mx_driving_facts:
    python: /opt/miniforge3/envs/torch2.7.1/bin/python
  register: mx_installed

- name: Require the new patcher API
  ansible.builtin.assert:
    that: mx_installed.api == 'new'
    fail_msg: "{{ mx_installed.api_problems }}"
"""

RETURN = r"""
site_packages:
  description: The environment's platlib directory.
  returned: always
  type: str
  sample: /opt/miniforge3/envs/torch2.7.1/lib/python3.10/site-packages
installed:
  description: Whether an mx_driving distribution (dist-info) is installed there.
  returned: always
  type: bool
version:
  description: Installed version, or null.
  returned: always
  type: str
  sample: 1.0.20260421.1
extensions:
  description: Compiled C(mx_driving/_C*.so) files present.
  returned: always
  type: list
  elements: str
  sample: [_C.cpython-310-aarch64-linux-gnu.so]
api:
  description: V(new), V(old) or V(none) (no patcher package).
  returned: always
  type: str
api_problems:
  description: Why the installed patcher is not the new API; empty when it is.
  returned: always
  type: list
  elements: str
missing_files:
  description: Patcher framework files that are not installed.
  returned: always
  type: list
  elements: str
record_problems:
  description: Files the dist-info RECORD lists that are missing or changed.
  returned: always
  type: list
  elements: str
"""

import glob
import json
import os
import subprocess

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ascendops.gr00t.plugins.module_utils.mx_driving_rebuild import (
    FRAMEWORK_FILES,
    new_api_problems,
    patcher_from_tree,
)
from ansible_collections.ascendops.gr00t.plugins.module_utils.wheel_archive import (
    WheelError,
    header_values,
    installed_record_problems,
)

SITE_QUERY = "import json, sysconfig; print(json.dumps(sysconfig.get_paths()['platlib']))"


def site_packages(python: str) -> str:
    if not os.access(python, os.X_OK):
        raise WheelError("{0} is not an executable interpreter; the python_env stage creates the "
                         "environment".format(python))
    proc = subprocess.run([python, "-c", SITE_QUERY], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=False)
    if proc.returncode != 0:
        raise WheelError("{0} cannot tell its site-packages: {1}".format(python, proc.stderr.strip()[-500:]))
    return json.loads(proc.stdout)


def read_text(path: str) -> str:
    with open(path, "r", encoding="utf-8", errors="replace") as handle:
        return handle.read()


def installed_facts(site: str) -> dict:
    dist_infos = sorted(glob.glob(os.path.join(site, "mx_driving-*.dist-info")))
    facts = {"site_packages": site, "installed": bool(dist_infos), "version": None, "extensions": [],
             "api": "none", "api_problems": [], "missing_files": [], "record_problems": []}
    if len(dist_infos) > 1:
        facts["record_problems"].append("more than one mx_driving dist-info: {0}".format(
            ", ".join(os.path.basename(d) for d in dist_infos)))
    if dist_infos:
        dist = dist_infos[-1]
        facts["version"] = (header_values(read_text(os.path.join(dist, "METADATA")), "Version") or [None])[0]
        record = os.path.join(dist, "RECORD")
        text = read_text(record) if os.path.isfile(record) else None
        facts["record_problems"] += installed_record_problems(site, text)
    facts["extensions"] = sorted(os.path.basename(p) for p in glob.glob(os.path.join(site, "mx_driving", "_C*.so")))
    if os.path.isdir(os.path.join(site, "mx_driving", "patcher")):
        package = patcher_from_tree(site)
        facts["missing_files"] = [f for f in FRAMEWORK_FILES + ("__init__.py",) if f not in package]
        facts["api_problems"] = new_api_problems(package)
        facts["api"] = "old" if facts["api_problems"] else "new"
    else:
        facts["missing_files"] = list(FRAMEWORK_FILES + ("__init__.py",))
        facts["api_problems"] = ["no mx_driving/patcher package"]
    return facts


def main() -> None:
    module = AnsibleModule(argument_spec=dict(python=dict(type="path", required=True)), supports_check_mode=True)
    try:
        module.exit_json(changed=False, **installed_facts(site_packages(module.params["python"])))
    except (WheelError, OSError, ValueError) as err:
        module.fail_json(msg=str(err))


if __name__ == "__main__":
    main()
