# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations


class ModuleDocFragment:
    """The read of the files a later file_set task of the same stage writes, so that a converged
    node can skip that task."""

    DOCUMENTATION = r"""
options:
  files:
    description:
      - Absolute paths of files and directories that a later M(ascendops.gr00t.file_set) task
        writes. Reported under RV(files) (whether each exists and is a directory, its mode, owner,
        group and, for a file, its sha256); the filter C(ascendops.gr00t.file_set_pending) tells
        from them whether that task has anything to do, so a converged node skips it.
    type: list
    elements: str
    default: []
"""
