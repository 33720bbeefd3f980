# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""The lock every vendor installer holds while it runs: the artifact role starts each one under
`flock --exclusive` of this file. An installer outlives the run that started it when that run is
cut off (SSH dropped, the controller stopped). A stage's read of what is installed waits on the
lock first, in the same module run, so a rerun reads only once that installer has ended and never
starts a second one over it."""
from __future__ import annotations

import fcntl
import os
import time
from typing import Callable

from ansible.module_utils.basic import AnsibleModule

# The options each reading module adds to its argument_spec (doc fragment installer_lock).
ARGUMENT_SPEC: dict[str, dict[str, object]] = {
    "installer_lock": {"type": "path", "default": ""},
    "installer_timeout": {"type": "int", "default": 3600},
}


def lock_held(path: str) -> bool:
    """Whether another process holds `path` locked for writing. A missing file is not held; the
    file is never created."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def still_held_message(path: str, timeout: int) -> str:
    return ("An installer started by an earlier run still holds {0} after {1} s. Find it with "
            "`ps -ef | grep -e '\\.run'`; let it finish or stop it, then rerun: a partial install "
            "it leaves behind is repaired.".format(path, timeout))


def wait_for_installer(path: str, timeout: int, poll: float = 2.0,
                       sleep: Callable[[float], None] = time.sleep,
                       clock: Callable[[], float] = time.monotonic) -> tuple[float, str]:
    """The seconds waited until no installer held `path` (none when it is free or missing, or
    when `path` is empty) and '', or the failure message after `timeout` seconds."""
    if not path:
        return 0.0, ""
    start = clock()
    while lock_held(path):
        left = start + timeout - clock()
        if left <= 0:
            return clock() - start, still_held_message(path, timeout)
        sleep(min(poll, left))
    return clock() - start, ""


def waited_message(path: str, seconds: float) -> str:
    return ("Waited {0:.0f} s for an installer an earlier run left running (it held {1}) before "
            "reading what is installed.".format(seconds, path))


def wait_or_fail(module: AnsibleModule) -> None:
    """Wait as the module's installer_lock and installer_timeout say: fail the module when the
    installer is still running, and warn that the run waited when it did (a pause an operator
    would otherwise take for a hang)."""
    lock = module.params["installer_lock"]
    seconds, failure = wait_for_installer(lock, module.params["installer_timeout"])
    if failure:
        module.fail_json(msg=failure)
    if seconds >= 1:
        module.warn(waited_message(lock, seconds))
