#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: collective_check
short_description: Run this node's part of a short all-reduce across the training group with torchrun
version_added: "0.2.0"
description:
  - Starts torchrun with the node's rank in the group and one rank per NPU, in the environment
    of the training env file, and runs a short all-reduce of a tensor of ones (HCCL through
    torch_npu when the node has NPUs, gloo otherwise). Every node of the group must run it at
    the same time, as a training launch does (run it with C(async)).
  - Returns how far each rank got (started, joined, done), the time of one all-reduce and the
    bus bandwidth; fails when a rank did not finish, the sum is wrong or no result came in
    O(timeout) seconds.
  - Before the group forms, the node's first rank takes connections on a free port and
    connects to every other node's (their ports are exchanged through torchrun's store), so a
    failed check names the node the others cannot reach (a firewall) rather than whichever
    node's pair broke first. The probe only explains a failure; it fails nothing itself.
  - Leaves no process behind, also on a failure or a timeout, and no file (it works in a
    temporary directory it removes). It changes nothing on the node, so it runs in check mode too.
author:
  - ascendops.gr00t maintainers (@ascendops)
options:
  python:
    description: Python of the training env (torch, and torch_npu on a real node).
    type: path
    required: true
  env:
    description: Content of the training env file, sourced before torchrun starts.
    type: str
    default: ""
  nnodes:
    description: Nodes in the group.
    type: int
    required: true
  node_rank:
    description: This node's rank in the group (0 is the master).
    type: int
    required: true
  nproc_per_node:
    description: Ranks on this node (one per NPU).
    type: int
    required: true
  master_addr:
    description: Address of the master, where torchrun's rendezvous store listens.
    type: str
    required: true
  master_port:
    description: Rendezvous port on the master.
    type: int
    required: true
  size_mb:
    description: Size of the tensor all-reduced, in MiB.
    type: float
    default: 64
  iterations:
    description: Timed all-reduces after one warm-up; the median is reported.
    type: int
    default: 10
  backend:
    description: C(auto) takes hccl when torch_npu sees NPUs and gloo otherwise.
    type: str
    choices: [auto, hccl, gloo]
    default: auto
  timeout:
    description: Seconds for the whole check on this node, rendezvous included.
    type: int
    default: 300
  result_file:
    description:
      - Also write the result to this file (JSON with O(token) and C(result)), replaced at once when
        complete, so a task started with C(poll=0) is waited for with M(ansible.builtin.wait_for) on
        the token instead of a retried C(async_status).
    type: path
  token:
    description: Names this check in O(result_file), so a result left by an earlier check is not taken for it.
    type: str
    default: ""
extends_documentation_fragment:
  - ascendops.gr00t.attributes
"""

EXAMPLES = r"""
- name: Run the collective check on every node at once
  ascendops.gr00t.collective_check:
    python: /opt/miniforge3/envs/torch2.7.1/bin/python
    env: "{{ lookup('ansible.builtin.file', 'train_env.sh') }}"
    nnodes: "{{ groups['ascend_nodes'] | length }}"
    node_rank: "{{ groups['ascend_nodes'].index(inventory_hostname) }}"
    nproc_per_node: 8
    master_addr: 10.0.0.11
    master_port: 29500
  async: 400
  poll: 0
  register: check_job
"""

RETURN = r"""
ok:
  description: Every rank of this node joined, all-reduced and got the world size back.
  returned: always
  type: bool
joined:
  description: Every rank of this node joined the process group.
  returned: always
  type: bool
stages:
  description: How far each rank of this node got (started, joined, done, or absent).
  returned: always
  type: list
  elements: str
  sample: [done, done]
backend:
  description: Process group backend the ranks used.
  returned: always
  type: str
  sample: hccl
seconds:
  description: Median time of one all-reduce (the slowest rank's), or null.
  returned: always
  type: float
busbw_gbps:
  description: Bus bandwidth of the all-reduce in GB/s, or null.
  returned: always
  type: float
timed_out:
  description: The check did not finish in time and was killed.
  returned: always
  type: bool
killed:
  description: Processes of the check that were still alive at the end and were killed.
  returned: always
  type: list
  elements: int
errors:
  description: Errors the ranks raised.
  returned: always
  type: list
  elements: str
unreached_peers:
  description: The other nodes this node's probe could not connect to, each as its node rank,
    the address and port it tried, and the error.
  returned: always
  type: list
  elements: list
  sample: [[2, "10.0.0.13:41235", "Connection refused"]]
reach_errors:
  description: Why the probe could not run (another node's port never came through the store,
    for one); the check goes on without it.
  returned: always
  type: list
  elements: str
output_tail:
  description: Last lines torchrun and the ranks printed.
  returned: always
  type: list
  elements: str
reason:
  description: Why this node passed or failed, in a sentence.
  returned: always
  type: str
  sample: all 8 rank(s) joined and all-reduced
wall_seconds:
  description: Time of this node's part of the check.
  returned: always
  type: float
"""

import json
import os
import shutil
import signal
import tempfile
import time
import uuid

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ascendops.gr00t.plugins.module_utils.collective import (
    WORKER,
    marked_pids,
    node_result,
    read_rank_records,
    torchrun_argv,
)

# The env file is sourced the way the launch scripts source it (CANN's set_env.sh reads
# unset variables, so no `set -u` here).
RUNNER = 'source "$1"; shift; exec "$@"'
# timeout(1): 124 when it sent TERM, 137 when it had to KILL.
TIMED_OUT = (124, 137)


def kill_marked(token: str) -> list[int]:
    pids = marked_pids(token)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return pids


def run(module: AnsibleModule, workdir: str) -> dict:
    params = module.params
    token = "ascendops-collective-" + uuid.uuid4().hex
    out = os.path.join(workdir, "ranks")
    os.mkdir(out)
    script = os.path.join(workdir, "collective_rank.py")
    env_file = os.path.join(workdir, "env.sh")
    with open(script, "w", encoding="utf-8") as fh:
        fh.write(WORKER)
    with open(env_file, "w", encoding="utf-8") as fh:
        fh.write(params["env"])
    # The rank program never waits longer than the whole check.
    args = [out, params["size_mb"], params["iterations"], params["backend"], params["timeout"], token]
    # timeout(1) ends torchrun with its process group; the ranks, each in a session of its
    # own, are found by the token on their command line and killed after.
    argv = ["timeout", "--kill-after=10", str(params["timeout"]), "/bin/bash", "-c", RUNNER, "collective-check",
            env_file] + torchrun_argv(params["python"], script, args, params["nnodes"], params["node_rank"],
                                      params["master_addr"], params["master_port"], params["nproc_per_node"])
    started = time.monotonic()
    rc, stdout, stderr = module.run_command(argv, cwd=workdir)
    killed = kill_marked(token)
    result = node_result(rc, rc in TIMED_OUT, read_rank_records(out), params["nproc_per_node"],
                         stdout + stderr, params["timeout"])
    result.update(killed=killed, wall_seconds=round(time.monotonic() - started, 2))
    return result


def write_result(path: str, token: str, result: dict) -> None:
    """{token, result} as JSON at `path`, replaced whole: a reader never sees half of it."""
    handle, temp = tempfile.mkstemp(prefix=".collective-", dir=os.path.dirname(path) or ".")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        json.dump({"token": token, "result": result}, out)
    os.replace(temp, path)


def main() -> None:
    module = AnsibleModule(
        argument_spec=dict(
            python=dict(type="path", required=True),
            env=dict(type="str", default=""),
            nnodes=dict(type="int", required=True),
            node_rank=dict(type="int", required=True),
            nproc_per_node=dict(type="int", required=True),
            master_addr=dict(type="str", required=True),
            master_port=dict(type="int", required=True),
            size_mb=dict(type="float", default=64),
            iterations=dict(type="int", default=10),
            backend=dict(type="str", default="auto", choices=["auto", "hccl", "gloo"]),
            timeout=dict(type="int", default=300),
            result_file=dict(type="path"),
            token=dict(type="str", default="", no_log=False),
        ),
        supports_check_mode=True,
    )
    workdir = tempfile.mkdtemp(prefix="ascendops-collective-")
    try:
        result = run(module, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    msg = "collective check on this node: " + result["reason"]
    if module.params["result_file"]:
        write_result(module.params["result_file"], module.params["token"], dict(result, msg=msg))
    if not result["ok"]:
        module.fail_json(msg=msg, changed=False, **result)
    module.exit_json(msg=msg, changed=False, **result)


if __name__ == "__main__":
    main()
