#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: train_log_parser
short_description: Install the collection's GR00T training log parser on a node as a standalone Python file
version_added: "0.1.0"
description:
  - Writes the source of the collection's log parser (C(module_utils/train_log.py)) to O(dest),
    so scripts on the node (the performance script's FPS report) compute throughput with the same
    code as the C(train_status) module and the controller's report.
  - Writes only when the file differs from the collection's parser; owner, group and mode are
    set like the M(ansible.builtin.copy) module sets them.
author:
  - ascendops.gr00t maintainers (@ascendops)
options:
  dest:
    description: Path of the parser on the node; its directory must exist.
    type: path
    required: true
extends_documentation_fragment:
  - ascendops.gr00t.attributes
  - ansible.builtin.files
"""

EXAMPLES = r"""
- name: Install the log parser beside the FPS script
  ascendops.gr00t.train_log_parser:
    dest: /var/lib/ascendops/train/train_log.py
    owner: root
    group: root
    mode: "0644"
"""

RETURN = r"""
dest:
  description: Path of the parser.
  returned: always
  type: str
  sample: /var/lib/ascendops/train/train_log.py
checksum:
  description: sha1 of the parser's content, as M(ansible.builtin.copy) reports it.
  returned: always
  type: str
  sample: 6e5ac8a2d0f3b1c0a8f2f4d6c1b9e7a3d5c2f1e0
"""

import hashlib
import inspect
import os
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ascendops.gr00t.plugins.module_utils import train_log


def needs_write(dest: str, content: bytes) -> bool:
    """True when dest is absent or holds other bytes than content."""
    try:
        with open(dest, "rb") as handle:
            return handle.read() != content
    except FileNotFoundError:
        return True


def main() -> None:
    module = AnsibleModule(
        argument_spec={"dest": {"type": "path", "required": True}},
        add_file_common_args=True,
        supports_check_mode=True,
    )
    dest = module.params["dest"]
    if not os.path.isdir(os.path.dirname(dest) or "."):
        module.fail_json(msg=f"The directory of dest {dest} does not exist: create it first.")
    content = inspect.getsource(train_log).encode("utf-8")
    changed = needs_write(dest, content)
    if changed and not module.check_mode:
        handle, tmp = tempfile.mkstemp(dir=os.path.dirname(dest), prefix=".train_log.")
        with os.fdopen(handle, "wb") as out:
            out.write(content)
        module.atomic_move(tmp, dest)
    if os.path.exists(dest):
        file_args = module.load_file_common_arguments(module.params, path=dest)
        changed = module.set_fs_attributes_if_different(file_args, changed)
    module.exit_json(changed=changed, dest=dest, checksum=hashlib.sha1(content).hexdigest())  # nosec B324 - copy's checksum


if __name__ == "__main__":
    main()
