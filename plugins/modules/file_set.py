#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: file_set
short_description: Directories and small files of a known content, in one run
version_added: "0.2.0"
description:
  - Makes each directory exist and each file hold exactly the content given (rendered on the
    controller, for example with the C(template) lookup), with its mode and owner.
  - Writes only the files whose content differs, each atomically; a file that matches is not
    touched. One run replaces a C(file), C(template) or C(copy) task per path, each of which
    costs a converged rerun as much as this whole run.
  - In check mode it reports what it would write, and in diff mode each file's diff.
author:
  - ascendops.gr00t maintainers (@ascendops)
options:
  directories:
    description: Absolute paths of directories to create (with their parents) where missing.
    type: list
    elements: str
    default: []
  directory_mode:
    description: Mode of the directories (octal string).
    type: str
    default: "0755"
  files:
    description: The files, in the order they are written.
    type: list
    elements: dict
    default: []
    suboptions:
      path:
        description: Absolute path of the file; its directory must exist or be in O(directories).
        type: str
        required: true
      content:
        description: The whole content of the file (UTF-8 text).
        type: str
        required: true
      mode:
        description: Mode of the file (octal string).
        type: str
        default: "0644"
      force:
        description:
          - V(false) writes the file only where there is none; a file already there is left as it is,
            content and mode (it belongs to the user, as with M(ansible.builtin.copy)'s O(ansible.builtin.copy#module:force=false)).
        type: bool
        default: true
  owner:
    description: Owner of every directory and file; unset leaves it as it is.
    type: str
  group:
    description: Group of every directory and file; unset leaves it as it is.
    type: str
extends_documentation_fragment:
  - ascendops.gr00t.attributes
attributes:
  diff_mode:
    support: full
"""

EXAMPLES = r"""
- name: Write the activation hooks
  ascendops.gr00t.file_set:
    directories: [/opt/miniforge3/envs/torch2.7.1/etc/conda/activate.d]
    files:
      - path: /opt/miniforge3/envs/torch2.7.1/etc/conda/activate.d/ascendops-cann.sh
        content: "{{ lookup('ansible.builtin.template', 'activate.sh.j2') }}"
    owner: root
    group: root
"""

RETURN = r"""
written:
  description: The files whose content was written (in check mode, would be).
  returned: always
  type: list
  elements: str
  sample: [/opt/miniforge3/envs/torch2.7.1/etc/conda/activate.d/ascendops-cann.sh]
created:
  description: The directories that were created (in check mode, would be).
  returned: always
  type: list
  elements: str
  sample: []
"""

import os
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ascendops.gr00t.plugins.module_utils.file_set import (
    DIRECTORY_MODE, FILE_MODE, current_content, file_diff, missing_directories)


def write_file(module: AnsibleModule, path: str, content: str) -> None:
    """Write through a temporary file beside the target, then move it into place."""
    handle, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".file_set-")
    with os.fdopen(handle, "w", encoding="utf-8", errors="surrogateescape") as out:
        out.write(content)
    module.atomic_move(tmp, path)


def set_attributes(module: AnsibleModule, path: str, mode: str, changed: bool) -> bool:
    """Mode, owner and group of an existing path; in check mode only reports."""
    params = module.params
    changed = module.set_mode_if_different(path, mode, changed)
    if params["owner"]:
        changed = module.set_owner_if_different(path, params["owner"], changed)
    if params["group"]:
        changed = module.set_group_if_different(path, params["group"], changed)
    return changed


def main() -> None:
    module = AnsibleModule(
        argument_spec=dict(
            directories=dict(type="list", elements="str", default=[]),
            directory_mode=dict(type="str", default=DIRECTORY_MODE),
            files=dict(type="list", elements="dict", default=[], options=dict(
                path=dict(type="str", required=True),
                content=dict(type="str", required=True),
                mode=dict(type="str", default=FILE_MODE),
                force=dict(type="bool", default=True),
            )),
            owner=dict(type="str"),
            group=dict(type="str"),
        ),
        supports_check_mode=True,
    )
    params = module.params
    paths = params["directories"] + [f["path"] for f in params["files"]]
    relative = [p for p in paths if not os.path.isabs(p)]
    if relative:
        module.fail_json(msg="directories and files must be absolute paths, got: {0}".format(", ".join(relative)))
    created = missing_directories(params["directories"])
    changed = bool(created)
    for path in params["directories"]:
        if path in created and not module.check_mode:
            os.makedirs(path)
        if os.path.isdir(path):
            changed = set_attributes(module, path, params["directory_mode"], changed)
    written, diffs = [], []
    for spec in params["files"]:
        path, content = spec["path"], spec["content"]
        if os.path.isdir(path):
            module.fail_json(msg="{0} is a directory, not a file: move it away, then rerun".format(path))
        if not spec["force"] and os.path.lexists(path):
            continue
        before = current_content(path)
        if before != content:
            written.append(path)
            diffs.append(file_diff(path, before, content))
            if not module.check_mode:
                write_file(module, path, content)
        if os.path.exists(path):
            changed = set_attributes(module, path, spec["mode"], changed)
    module.exit_json(changed=changed or bool(written), written=written, created=created,
                     diff=diffs if module._diff else [])


if __name__ == "__main__":
    main()
