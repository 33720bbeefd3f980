#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: hccn_ping
short_description: Ping remote NPU addresses from the local NPUs with hccn_tool
version_added: "0.2.0"
description:
  - Runs C(hccn_tool -i N -ping -g address A) for every target, the NPUs of the node in
    parallel (one ping at a time per NPU), and returns which answered.
  - A ping that answers nothing (exit 0, no output) is asked again, up to three times.
  - Only reads; it never reports a change.
author:
  - ascendops.gr00t maintainers (@ascendops)
options:
  targets:
    description: What to ping.
    type: list
    elements: dict
    required: true
    suboptions:
      npu:
        description: Local NPU id that pings.
        type: int
        required: true
      address:
        description: Remote NPU address.
        type: str
        required: true
      peer:
        description: The remote node's name, returned with the result.
        type: str
        default: ""
      peer_npu:
        description: The remote NPU's id, returned with the result.
        type: int
        default: -1
extends_documentation_fragment:
  - ascendops.gr00t.attributes
  - ascendops.gr00t.hccn
"""

EXAMPLES = r"""
- name: Ping NPU 0 of node2 from NPU 0
  ascendops.gr00t.hccn_ping:
    targets:
      - {npu: 0, address: 192.168.100.21, peer: node2, peer_npu: 0}
  register: mesh
"""

RETURN = r"""
results:
  description: One entry per target, in the order given.
  returned: success
  type: list
  elements: dict
  sample:
    - {npu: 0, address: 192.168.100.21, peer: node2, peer_npu: 0, ok: true,
       output: "3 packets transmitted, 3 received, 0.00% packet loss"}
failed_count:
  description: Targets that did not answer.
  returned: success
  type: int
  sample: 0
"""

from concurrent.futures import ThreadPoolExecutor

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ascendops.gr00t.plugins.module_utils.hccn import hccn_module, parse_ping, query


def ping_all(module: AnsibleModule, binary: str, targets: list[dict]) -> list[dict]:
    """Each NPU's targets in turn, the NPUs side by side."""
    by_npu: dict[int, list[dict]] = {}
    for target in targets:
        by_npu.setdefault(target["npu"], []).append(target)

    def run(queue: list[dict]) -> list[dict]:
        out = []
        for target in queue:
            rc, stdout, stderr = query(module, [binary, "-i", str(target["npu"]), "-ping", "-g", "address",
                                                target["address"]])
            text = (stdout + stderr).strip()
            out.append(dict(target, ok=parse_ping(rc, text), output=text.splitlines()[-1] if text else f"rc {rc}"))
        return out

    with ThreadPoolExecutor(max_workers=max(len(by_npu), 1)) as pool:
        done = [result for batch in pool.map(run, by_npu.values()) for result in batch]
    keyed = {(r["npu"], r["address"]): r for r in done}
    return [keyed[(t["npu"], t["address"])] for t in targets]


def main() -> None:
    module, binary = hccn_module("targets", {
        "npu": {"type": "int", "required": True},
        "address": {"type": "str", "required": True},
        "peer": {"type": "str", "default": ""},
        "peer_npu": {"type": "int", "default": -1},
    })
    results = ping_all(module, binary, module.params["targets"])
    module.exit_json(changed=False, results=results, failed_count=sum(1 for r in results if not r["ok"]))


if __name__ == "__main__":
    main()
