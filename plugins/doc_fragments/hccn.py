# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations


class ModuleDocFragment:
    """The hccn_tool option of the modules that drive it."""

    DOCUMENTATION = r"""
options:
  hccn_tool:
    description:
      - Name or path of hccn_tool.
      - A name is looked up on E(PATH) and in C(/usr/local/Ascend/driver/tools).
    type: str
    default: hccn_tool
"""
