# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations


class ModuleDocFragment:
    """Attributes shared by the collection's modules.

    ``DOCUMENTATION`` is what every module of the collection supports: full check mode, no
    diff, POSIX targets. A module that differs says so in its own C(attributes) (for example
    C(diff_mode: {support: full})); its own values take precedence over the fragment's.
    """

    DOCUMENTATION = r"""
options: {}
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target, if not supported the action will be skipped.
    support: full
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: none
  platform:
    description: Target OS/families that can be operated against.
    support: N/A
    platforms: posix
"""

    # For the modules that return facts; used together with DOCUMENTATION.
    FACTS = r"""
options: {}
attributes:
  facts:
    description: Action returns an C(ansible_facts) dictionary that will update existing host facts.
    support: full
"""
