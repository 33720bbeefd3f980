#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: disk_free
short_description: Free space for install paths that may not exist yet
version_added: "0.1.0"
description:
  - For each path, finds the nearest existing directory (the path itself or a parent) and
    reports the free space of its filesystem, as a later install into that path would see it.
  - Works where mount facts miss the root filesystem (for example overlay roots).
  - Reads only; never reports a change.
author:
  - ascendops.gr00t maintainers (@ascendops)
options:
  paths:
    description: Absolute paths to measure.
    type: list
    elements: path
    required: true
extends_documentation_fragment:
  - ascendops.gr00t.attributes
"""

EXAMPLES = r"""
- name: Measure free space for the install paths
  ascendops.gr00t.disk_free:
    paths: [/usr/local/Ascend, /opt/miniforge3]
  register: free

- name: Require 20 GB for CANN
  ansible.builtin.assert:
    that: free.paths['/usr/local/Ascend'].free_bytes > 20 * 1024 ** 3
"""

RETURN = r"""
paths:
  description: Per requested path, where it was measured and the free bytes there.
  returned: always
  type: dict
  sample:
    /usr/local/Ascend:
      measured_at: /usr/local
      exists: false
      free_bytes: 83500552192
      total_bytes: 270553206784
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ascendops.gr00t.plugins.module_utils.disk import measure


def main() -> None:
    module = AnsibleModule(
        argument_spec=dict(paths=dict(type="list", elements="path", required=True)),
        supports_check_mode=True,
    )
    bad = [p for p in module.params["paths"] if not os.path.isabs(p)]
    if bad:
        module.fail_json(msg="paths must be absolute, got: {0}".format(", ".join(bad)))
    module.exit_json(changed=False, paths={p: measure(p) for p in module.params["paths"]})


if __name__ == "__main__":
    main()
