#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: train_stop
short_description: Stop a node's GR00T training run cleanly, TERM first and KILL after a timeout
version_added: "0.1.0"
description:
  - Reads the pidfile of the launch script and collects the script, torchrun and every rank
    below it by parent links (torchrun starts ranks in their own sessions, so a process
    group signal alone would miss them).
  - Sends SIGTERM to all of them, waits up to O(timeout) seconds, then sends SIGKILL to
    what is left, and reports what it stopped.
  - Works the same for a run under a systemd unit (the unit then turns inactive) and for a
    background run.
author:
  - ascendops.gr00t maintainers (@ascendops)
options:
  pidfile:
    description: Pidfile written by the launch script.
    type: path
    required: true
  timeout:
    description: Seconds to wait after SIGTERM before SIGKILL.
    type: int
    default: 60
extends_documentation_fragment:
  - ascendops.gr00t.attributes
"""

EXAMPLES = r"""
- name: Stop the run
  ascendops.gr00t.train_stop:
    pidfile: /var/lib/ascendops/train/train.pid
    timeout: 60
"""

RETURN = r"""
stopped:
  description: Pids that were signalled (launch script first).
  returned: always
  type: list
  elements: int
  sample: [4242, 4243, 4250, 4251]
killed:
  description: Pids still alive after the timeout, sent SIGKILL.
  returned: always
  type: list
  elements: int
  sample: []
commands:
  description: Command line of each stopped pid.
  returned: always
  type: dict
"""

import os
import signal
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ascendops.gr00t.plugins.module_utils.train_run import (
    pid_alive,
    process_table,
    process_tree,
    read_int,
)


def cmdline(pid: int) -> str:
    try:
        with open("/proc/{0}/cmdline".format(pid), "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def signal_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def wait_gone(pids: list[int], timeout: float) -> list[int]:
    deadline = time.monotonic() + timeout
    alive = [p for p in pids if pid_alive(p)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.5)
        alive = [p for p in alive if pid_alive(p)]
    return alive


def main() -> None:
    module = AnsibleModule(
        argument_spec=dict(pidfile=dict(type="path", required=True), timeout=dict(type="int", default=60)),
        supports_check_mode=True,
    )
    pid = read_int(module.params["pidfile"])
    pids = process_tree(pid, process_table()) if pid and pid_alive(pid) else []
    commands = {str(p): cmdline(p) for p in pids}
    if not pids or module.check_mode:
        module.exit_json(changed=bool(pids), stopped=pids, killed=[], commands=commands)
    signal_all(pids, signal.SIGTERM)
    left = wait_gone(pids, module.params["timeout"])
    signal_all(left, signal.SIGKILL)
    if wait_gone(left, 10):
        module.fail_json(msg="processes {0} survived SIGKILL (stuck in the NPU driver?); check `ps -o pid,stat,cmd "
                             "-p {1}` and `npu-smi info`".format(left, ",".join(map(str, left))),
                         stopped=pids, killed=left, commands=commands)
    module.exit_json(changed=True, stopped=pids, killed=left, commands=commands)


if __name__ == "__main__":
    main()
