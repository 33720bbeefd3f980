# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Commands a read-only module runs that may not be installed yet (conda before Miniforge,
lspci without pciutils): a missing one is an answer, not an error."""
from __future__ import annotations

import os

from ansible.module_utils.basic import AnsibleModule


def run_if_present(module: AnsibleModule, argv: list[str]) -> tuple[int, str, str]:
    """rc, stdout and stderr of the command; rc 127 with a message when it is not there. A bare
    name is looked up on PATH and in the sbin directories."""
    binary = argv[0] if "/" in argv[0] else module.get_bin_path(argv[0])
    if not binary or not os.access(binary, os.X_OK):
        return 127, "", "{0}: command not found".format(argv[0])
    return module.run_command([binary, *argv[1:]])
