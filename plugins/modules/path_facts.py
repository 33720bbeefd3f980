#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: path_facts
short_description: Look at many paths, globs, JSON and text files of a node in one run
version_added: "0.2.0"
description:
  - Reports for each path whether it exists and is a directory, for each glob how many
    entries it matches, for each JSON or text file its content, and for each file to hash its sha256.
  - One run replaces a stat, find or slurp task per path, which on a converged rerun is
    what the controller spends its time on.
  - Reads only; never reports a change.
author:
  - ascendops.gr00t maintainers (@ascendops)
options:
  paths:
    description: Absolute paths to look at (links are followed), reported under the key given.
    type: list
    elements: str
    default: []
  globs:
    description:
      - Absolute glob patterns to count matches of (Python's glob, no recursion).
      - A pattern ending in C(/) matches directories only.
    type: list
    elements: str
    default: []
  json_files:
    description: Absolute paths of JSON files to read.
    type: list
    elements: str
    default: []
  text_files:
    description: Absolute paths of UTF-8 text files to read whole (records, C(pyproject.toml), lock files).
    type: list
    elements: str
    default: []
  sha256_files:
    description:
      - Absolute paths of files to hash with sha256 (staged artifacts, to compare with their manifest).
    type: list
    elements: str
    default: []
extends_documentation_fragment:
  - ascendops.gr00t.attributes
  - ascendops.gr00t.installer_lock
  - ascendops.gr00t.files
"""

EXAMPLES = r"""
- name: Look at a LeRobot dataset
  ascendops.gr00t.path_facts:
    paths: [/data/libero, /data/libero/meta/info.json]
    globs: [/data/libero/data/chunk-*/]
    json_files: [/data/libero/meta/info.json]
  register: dataset

- name: Require at least one data chunk
  ansible.builtin.assert:
    that: dataset.glob['/data/libero/data/chunk-*/'] > 0
"""

RETURN = r"""
stat:
  description: Per path, whether it exists and whether it is a directory.
  returned: always
  type: dict
  sample: {"/data/libero": {"exists": true, "isdir": true}}
glob:
  description: Per pattern, the number of entries it matches.
  returned: always
  type: dict
  sample: {"/data/libero/data/chunk-*/": 1}
json:
  description: Per JSON file, its content under C(value) or why there is none under C(error) (C(missing), or the parse error).
  returned: always
  type: dict
  sample: {"/data/libero/meta/info.json": {"value": {"codebase_version": "v2.1"}, "error": ""}}
text:
  description: Per text file, its content under C(content) (null when unread) and why it was not read under C(error) (C(missing), or the read error).
  returned: always
  type: dict
  sample: {"/opt/gr00t/.gr00t-tarball": {"content": "Isaac-GR00T-49d40d2.tar.gz\n", "error": ""}}
sha256:
  description: Per file to hash, its sha256 under C(sha256) (null when unread) and why it was not read under C(error) (C(missing), or the read error).
  returned: always
  type: dict
  sample: {"/var/cache/ascend/mx_driving-26.2.0-cp310-cp310-linux_aarch64.whl": {"sha256": "9f2c...", "error": ""}}
files:
  description:
    - Per path of O(files), whether it exists and is a directory, its mode (octal), owner and group
      names and, for a file, its sha256 (links followed); all null for a path that is not there.
  returned: always
  type: dict
  sample: {"/opt/gr00t/gr00t-env.sh": {"exists": true, "isdir": false, "mode": "0644", "owner": "root",
                                      "group": "root", "sha256": "5d1e..."}}
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ascendops.gr00t.plugins.module_utils.installer_lock import ARGUMENT_SPEC as INSTALLER_LOCK, wait_or_fail
from ansible_collections.ascendops.gr00t.plugins.module_utils.path_facts import look


def main() -> None:
    module = AnsibleModule(
        argument_spec=dict(
            paths=dict(type="list", elements="str", default=[]),
            globs=dict(type="list", elements="str", default=[]),
            json_files=dict(type="list", elements="str", default=[]),
            text_files=dict(type="list", elements="str", default=[]),
            sha256_files=dict(type="list", elements="str", default=[]),
            files=dict(type="list", elements="str", default=[]),
            **INSTALLER_LOCK,
        ),
        supports_check_mode=True,
    )
    params = module.params
    keys = ("paths", "globs", "json_files", "text_files", "sha256_files", "files")
    relative = [p for key in keys for p in params[key] if not os.path.isabs(p)]
    if relative:
        module.fail_json(msg="paths, globs, json_files, text_files, sha256_files and files must be absolute, "
                             "got: {0}".format(", ".join(relative)))
    wait_or_fail(module)
    module.exit_json(changed=False, **look(*(params[key] for key in keys)))


if __name__ == "__main__":
    main()
