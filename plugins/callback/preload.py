# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
name: preload
type: aggregate
short_description: Prepare the controller's main process for the workers it forks
version_added: "0.2.0"
description:
  - Ansible runs each task on each node in a worker process forked from the controller's main
    process. A filter, test or lookup plugin that the main process has not loaded is loaded
    again by every worker whose templates use it. For this collection's roles that was about
    1.5 s of controller CPU per node on a rerun that changes nothing (docs/benchmark.md).
  - This callback loads this collection's filters and lookup and ansible.builtin's filters and
    tests in the main process when the playbook starts, so every worker inherits them. It prints
    nothing and changes no result.
  - When each task starts, it collects the main process's cyclic garbage and freezes what is
    left (Python's C(gc.freeze)), just before the task's workers fork. A garbage collection in
    a worker then no longer walks, and so copies, the whole inherited heap. Measured on a
    rerun that changes nothing, it saves about 13% of the controller CPU at one and four nodes
    (docs/benchmark.md).
  - Enable it with C(callbacks_enabled) in C(ansible.cfg); the project's configuration does.
author:
  - ascendops.gr00t maintainers (@ascendops)
requirements:
  - listed in C(callbacks_enabled)
"""

import gc

from ansible.plugins.callback import CallbackBase
from ansible.plugins.loader import filter_loader, lookup_loader, test_loader

# One name per collection and plugin type is enough for filters and tests: resolving one of
# them loads every plugin file of that collection (ansible.builtin's included).
PRELOAD = (
    (filter_loader, "ansible.builtin.bool"),
    (test_loader, "ansible.builtin.match"),
    (filter_loader, "ascendops.gr00t.mask_credentials"),
    (lookup_loader, "ascendops.gr00t.artifact_manifest"),
)


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "ascendops.gr00t.preload"
    CALLBACK_NEEDS_ENABLED = True

    def v2_playbook_on_start(self, playbook: object) -> None:
        for loader, name in PRELOAD:
            loader.get(name)

    def v2_playbook_on_task_start(self, task: object, is_conditional: bool) -> None:
        freeze_heap()


def freeze_heap() -> None:
    """Collect the main process's cyclic garbage, then move what lives into the permanent generation.

    The workers for a task fork right after its start. A garbage collection in a worker walks every
    object it tracks and writes to each header, which copies every page of the inherited heap (the
    kernel's copy-on-write); frozen objects are not walked. Collecting first keeps what the main process
    threw away since the last task from being frozen for the rest of the run.
    """
    gc.collect()
    gc.freeze()
