#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: tcp_reach
short_description: Check that ports of the master are free and reachable from the other nodes over TCP
version_added: "0.2.0"
description:
  - O(mode=listen) runs on the master. It binds every port (with C(SO_REUSEADDR), as torchrun's store
    and HCCL bind), accepts until each port saw O(peers) connections or O(timeout) seconds
    passed, and closes everything. Reports a port that cannot be bound (C(in_use)) and the ports
    that saw too few connections (C(missing)). It returns as soon as every port saw its
    connections, so the other nodes can run O(mode=connect) in the same task, at the same time.
  - O(mode=connect) runs on the other nodes. It makes a TCP connect to every port of O(address),
    closed at once. A port that connects is done at once; a port refused or timed out is tried
    again, with a short backoff (0.1 s doubling to 1 s), until O(retry_for) seconds after the
    start, since the listener may still be binding its ports. Only the ports still not reached
    then are reported (C(unreachable)), each with its last error.
  - A finding is reported in RV(ok) and RV(code), not as a failure, so the caller can gather
    every node's findings first. Nothing is left listening afterwards. It changes nothing, so it
    runs in check mode too.
author:
  - ascendops.gr00t maintainers (@ascendops)
options:
  mode:
    description: C(listen) on the master, C(connect) on the others.
    type: str
    choices: [listen, connect]
    required: true
  ports:
    description: Ports and ranges, such as C(29500) or C(60000-60031) (comma-separated lists too).
    type: list
    elements: str
    required: true
  peers:
    description: Connections each port must see (O(mode=listen)); usually the number of other nodes.
    type: int
    default: 1
  address:
    description: Address of the master (O(mode=connect)).
    type: str
  timeout:
    description: Seconds to listen for (O(mode=listen)), or to wait for each connect (O(mode=connect)).
    type: float
    default: 10
  retry_for:
    description:
      - Seconds from the start during which a refused or timed out connect is tried again (O(mode=connect)).
      - Usually the listener's own O(timeout), so that a listener that starts late is still reached.
      - V(0) connects to each port once. Every port is tried at least once and no retry goes past this
        time, so the connects end by then, or when the first try of every port ends if that is later
        (at most one O(timeout) per port).
    type: float
    default: 0
extends_documentation_fragment:
  - ascendops.gr00t.attributes
"""

EXAMPLES = r"""
# One task: the master listens while the other nodes connect, in parallel (forks), and a
# connect refused before the listener is up is tried again for the listener's window.
- name: Listen on the master, connect from the other nodes
  ascendops.gr00t.tcp_reach:
    mode: "{{ (inventory_hostname == groups['ascend_nodes'][0]) | ternary('listen', 'connect') }}"
    ports: ["29500", "60000-60031"]
    peers: "{{ groups['ascend_nodes'] | length - 1 }}"
    address: 10.0.0.11
    timeout: "{{ (inventory_hostname == groups['ascend_nodes'][0]) | ternary(30, 10) }}"
    retry_for: 30
  register: reach
"""

RETURN = r"""
ok:
  description: Every port was free and reached (listen), or reached, within O(retry_for) (connect).
  returned: always
  type: bool
code:
  description: C(ok), C(in_use) (a port cannot be bound), C(missing) (too few connections) or C(unreachable).
  returned: always
  type: str
  sample: missing
msg:
  description: What was found, naming the ports.
  returned: always
  type: str
  sample: port(s) with fewer than 2 connection(s) after 30 s, 60000-60031
counts:
  description: Connections seen per port (listen).
  returned: when mode is listen
  type: dict
failed_ports:
  description: Ports still not reached after O(retry_for), each with its last error (connect).
  returned: when mode is connect
  type: list
  elements: str
  sample: ["29500 ([Errno 111] Connection refused)"]
elapsed:
  description: Seconds the connects took, retries included (connect).
  returned: when mode is connect
  type: float
  sample: 0.412
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ascendops.gr00t.plugins.module_utils.tcp_reach import connect, listen, parse_ports


def main() -> None:
    module = AnsibleModule(
        argument_spec=dict(
            mode=dict(type="str", required=True, choices=["listen", "connect"]),
            ports=dict(type="list", elements="str", required=True),
            peers=dict(type="int", default=1),
            address=dict(type="str"),
            timeout=dict(type="float", default=10),
            retry_for=dict(type="float", default=0),
        ),
        required_if=[("mode", "connect", ["address"])],
        supports_check_mode=True,
    )
    try:
        ports = parse_ports(module.params["ports"])
    except ValueError as exc:
        module.fail_json(msg="ports: %s" % exc)
    if not ports:
        module.fail_json(msg="ports: no port given")
    if module.params["mode"] == "listen":
        result = listen(ports, module.params["peers"], module.params["timeout"])
    else:
        result = connect(module.params["address"], ports, module.params["timeout"], module.params["retry_for"])
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
