#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: system_deps_facts
short_description: Read what the system_deps stage decides on, in one run
version_added: "0.2.0"
description:
  - Asks the package database (C(dpkg-query) or C(rpm -q)) which of the packages are installed,
    looks for the apt mirror entry the role writes, and runs C(pkg-config --exists) for the
    FFmpeg libraries and C(ffmpeg -version).
  - A converged node then skips the package manager and the separate checks; the install runs
    only for packages that are missing.
  - Reads only; never reports a change.
author:
  - ascendops.gr00t maintainers (@ascendops)
options:
  manager:
    description: The node's package manager.
    type: str
    choices: [apt, dnf]
    required: true
  packages:
    description:
      - Package names as the manager names them. A name the database does not hold (a virtual
        package, an rpm capability) counts as missing, so the package manager runs for it.
    type: list
    elements: str
    required: true
  pkgconfig_modules:
    description: pkg-config module names that must be found.
    type: list
    elements: str
    default: []
  mirror_file:
    description: The sources entry the role writes; reported under C(mirror_entry_exists).
    type: str
    default: ""
extends_documentation_fragment:
  - ascendops.gr00t.attributes
"""

EXAMPLES = r"""
- name: Read the packages and the FFmpeg tools
  ascendops.gr00t.system_deps_facts:
    manager: apt
    packages: [ffmpeg, pkg-config, libavcodec-dev]
    pkgconfig_modules: [libavcodec]
  register: deps

- name: Install what is missing
  ansible.builtin.apt:
    name: "{{ deps.missing }}"
  when: deps.missing | length > 0
"""

RETURN = r"""
installed:
  description: The packages the database lists as installed.
  returned: always
  type: list
  elements: str
missing:
  description: The packages it does not, in the order given.
  returned: always
  type: list
  elements: str
  sample: [ffmpeg]
apt_can_dry_run:
  description: Whether python3-apt is installed, which apt's check mode needs.
  returned: always
  type: bool
query_rc:
  description: Exit code of the database query (C(dpkg-query) exits 1 when a name is unknown).
  returned: always
  type: int
mirror_entry_exists:
  description: Whether I(mirror_file) exists.
  returned: always
  type: bool
pkgconfig:
  description: Exit code (C(rc), 127 when it is not installed) and the last lines of stderr (C(stderr_lines)) of C(pkg-config --exists).
  returned: always
  type: dict
  sample: {"rc": 0, "stderr_lines": []}
ffmpeg:
  description: The same for C(ffmpeg -version).
  returned: always
  type: dict
  sample: {"rc": 127, "stderr_lines": ["ffmpeg: command not found"]}
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ascendops.gr00t.plugins.module_utils.commands import run_if_present
from ansible_collections.ascendops.gr00t.plugins.module_utils.system_deps import read_state


def main() -> None:
    module = AnsibleModule(
        argument_spec=dict(
            manager=dict(type="str", choices=["apt", "dnf"], required=True),
            packages=dict(type="list", elements="str", required=True),
            pkgconfig_modules=dict(type="list", elements="str", default=[]),
            mirror_file=dict(type="str", default=""),
        ),
        supports_check_mode=True,
    )
    params = module.params
    state = read_state(lambda argv: run_if_present(module, argv), params["manager"], params["packages"],
                       params["pkgconfig_modules"], params["mirror_file"])
    module.exit_json(changed=False, **state)


if __name__ == "__main__":
    main()
