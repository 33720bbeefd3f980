#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: ascend_install_facts
short_description: Report the installed Ascend driver, firmware, CANN and nnal versions
version_added: "0.1.0"
description:
  - >-
    Reads the vendor's install records under the Ascend root (C(driver/version.info),
    C(firmware/version.info), C(cann-<v>/<arch>-linux/ascend_toolkit_install.info),
    C(cann-<v>/<arch>-linux/ascend_ops_install.info) for the 910B ops, and nnal's
    C(nnal/atb/<v>/version.info) in its C(Ascend-cann-atb : <v>) format) and returns what is
    installed, which toolkit is active, and any toolkit or nnal tree left without its record by
    an interrupted install.
  - Reads files only; never reports a change.
author:
  - ascendops.gr00t maintainers (@ascendops)
options:
  root:
    description: The Ascend install root.
    type: path
    default: /usr/local/Ascend
  login_shell:
    description:
      - Also start C(bash -lc) and report the CANN variables it sees (RV(login_env)), the way an
        operator's shell or a training job sees them through C(/etc/profile.d).
    type: bool
    default: false
extends_documentation_fragment:
  - ascendops.gr00t.attributes
  - ascendops.gr00t.installer_lock
  - ascendops.gr00t.files
  - ascendops.gr00t.attributes.facts
"""

EXAMPLES = r"""
- name: Read installed Ascend software
  ascendops.gr00t.ascend_install_facts:

- name: Show the CANN toolkit version
  ansible.builtin.debug:
    msg: "CANN {{ ansible_facts.ascend.toolkit_version | default('not installed', true) }}"
"""

RETURN = r"""
files:
  description: For each path of O(files), what M(ascendops.gr00t.path_facts) reports for it under C(files).
  returned: always
  type: dict
login_env:
  description:
    - With O(login_shell), what a login shell sees, C(ASCEND_HOME_PATH) and C(ATB_HOME_PATH) (empty
      when unset), the version in the toolkit install record under that C(ASCEND_HOME_PATH)
      (C(toolkit_version), empty when none) and the shell's exit code (C(rc)).
  returned: when O(login_shell) is true
  type: dict
  sample: {"ASCEND_HOME_PATH": "/usr/local/Ascend/cann-9.0.0", "ATB_HOME_PATH": "/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_1",
           "toolkit_version": "9.0.0", "rc": 0}
ansible_facts:
  description: Facts added to the host.
  returned: always
  type: complex
  contains:
    ascend:
      description: Installed Ascend software; a missing component is null.
      returned: always
      type: dict
      sample:
        root: /usr/local/Ascend
        driver_version: 25.5.1
        firmware_version: 7.8.0.6.201
        toolkit_version: 9.0.0
        toolkit_home: /usr/local/Ascend/cann-9.0.0
        toolkits_installed: ["9.0.0"]
        ops_version: 9.0.0
        nnal_version: 9.0.0
        nnal_installed: ["9.0.0"]
        partial_installs: []
        nnal_partial: []
"""

from typing import Dict

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ascendops.gr00t.plugins.module_utils.ascend_install import (
    LOGIN_SCRIPT, install_facts, login_env)
from ansible_collections.ascendops.gr00t.plugins.module_utils.installer_lock import ARGUMENT_SPEC as INSTALLER_LOCK, wait_or_fail
from ansible_collections.ascendops.gr00t.plugins.module_utils.path_facts import file_states


def main() -> None:
    module = AnsibleModule(
        argument_spec=dict(root=dict(type="path", default="/usr/local/Ascend"),
                           login_shell=dict(type="bool", default=False),
                           files=dict(type="list", elements="str", default=[]), **INSTALLER_LOCK),
        supports_check_mode=True,
    )
    wait_or_fail(module)
    result: Dict[str, object] = {"ansible_facts": {"ascend": install_facts(module.params["root"])},
                                 "files": file_states(module.params["files"])}
    if module.params["login_shell"]:
        rc, out, dummy = module.run_command(["bash", "-lc", LOGIN_SCRIPT])
        result["login_env"] = login_env(rc, out)
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
