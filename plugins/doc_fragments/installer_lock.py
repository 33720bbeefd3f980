# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations


class ModuleDocFragment:
    """The wait for an installer an earlier run left running, done by the modules that read what
    is installed before they read it."""

    DOCUMENTATION = r"""
options:
  installer_lock:
    description:
      - The lock file every vendor installer holds while it runs (the artifact role's
        C(artifact_installer_lock)). Before it reads, the module waits until no process holds
        it, also in check mode, so that a rerun after a cut-off run reads what is installed
        only once that installer has ended.
      - A missing file is free, and the file is never created. Empty to not wait.
    type: path
    default: ""
  installer_timeout:
    description:
      - Seconds to wait for O(installer_lock) at most; then the module fails and says how to
        find the installer.
    type: int
    default: 3600
"""
