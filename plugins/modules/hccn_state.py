#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: hccn_state
short_description: Read and set the RoCE port settings of every Ascend NPU with hccn_tool
version_added: "0.2.0"
description:
  - Reads every listed NPU with C(hccn_tool -i N -ip -g), C(-gateway -g), C(-netdetect -g),
    C(-link -g) and C(-net_health -g) in one run.
  - Sets with C(hccn_tool -i N -ip -s address A netmask M), C(-gateway -s gateway G) and
    C(-netdetect -s address D) only what differs from what the NPU reports, then reads it again.
  - In check mode it sets nothing and returns the same plan.
  - A query that answers nothing (exit 0, no output) is asked again, up to three times; one that
    stays empty fails the module. Nothing is planned from an empty reply.
author:
  - ascendops.gr00t maintainers (@ascendops)
options:
  devices:
    description: The wanted settings, one entry per NPU.
    type: list
    elements: dict
    required: true
    suboptions:
      id:
        description: NPU id, as taken by C(hccn_tool -i).
        type: int
        required: true
      address:
        description: The NPU's IPv4 address.
        type: str
        required: true
      netmask:
        description: Dotted netmask.
        type: str
        required: true
      gateway:
        description: Default gateway of the NPU's port; empty leaves it as it is.
        type: str
        default: ""
      netdetect:
        description: Address the NPU probes for its network health; empty leaves it as it is.
        type: str
        default: ""
  apply:
    description: Set what differs. V(false) only reads and plans.
    type: bool
    default: true
attributes:
  diff_mode:
    support: full
extends_documentation_fragment:
  - ascendops.gr00t.attributes
  - ascendops.gr00t.hccn
"""

EXAMPLES = r"""
- name: Set the NPU addresses that differ
  ascendops.gr00t.hccn_state:
    devices:
      - {id: 0, address: 192.168.100.11, netmask: 255.255.255.0, gateway: 192.168.100.1}
      - {id: 1, address: 192.168.100.12, netmask: 255.255.255.0, gateway: 192.168.100.1}
  register: hccn

- name: Read only
  ascendops.gr00t.hccn_state:
    devices: "{{ wanted_devices }}"
    apply: false
"""

RETURN = r"""
devices:
  description: What every NPU reports after the run (before it, in check mode).
  returned: success
  type: list
  elements: dict
  sample:
    - {id: 0, address: 192.168.100.11, netmask: 255.255.255.0, gateway: 192.168.100.1,
       netdetect: 192.168.100.1, link: UP, health: Success}
plan:
  description: The settings that differed, with the value before and after and the hccn_tool arguments.
  returned: success
  type: list
  elements: dict
  sample:
    - {id: 2, setting: ip, before: 192.168.100.99/255.255.255.0, after: 192.168.100.13/255.255.255.0,
       args: ["-i", "2", "-ip", "-s", "address", "192.168.100.13", "netmask", "255.255.255.0"]}
findings:
  description:
    - Every NPU whose link is not UP, whose net health is not Success, or whose address is not
      the wanted one (after the run; in check mode an NPU the run would set is not held to it).
    - C(kind) is V(link), V(health) or V(address); C(msg) names the NPU, the value found and the fix.
  returned: success
  type: list
  elements: dict
  sample:
    - {id: 3, kind: link, msg: "NPU 3: link status DOWN; check the cable, optics and switch port ..."}
"""

from concurrent.futures import ThreadPoolExecutor

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ascendops.gr00t.plugins.module_utils.hccn import (
    QUERY_ATTEMPTS,
    device_findings,
    hccn_module,
    first_address,
    parse_fields,
    query,
    set_commands,
)


class HccnError(Exception):
    pass


def hccn(module: AnsibleModule, binary: str, args: list[str]) -> str:
    rc, out, err = module.run_command([binary, *args])
    if rc != 0:
        raise HccnError(f"`hccn_tool {' '.join(args)}` exited {rc}: {(err or out).strip()[:300]}")
    return out


def get(module: AnsibleModule, binary: str, npu: int, operation: str) -> str:
    """The reply of `hccn_tool -i N <operation> -g`. A reply of nothing is not an unset value
    (the plan would set what is already set): it is asked again, then it is an error."""
    args = ["-i", str(npu), operation, "-g"]
    rc, out, err = query(module, [binary, *args])
    if rc != 0:
        raise HccnError(f"`hccn_tool {' '.join(args)}` exited {rc}: {(err or out).strip()[:300]}")
    if not (out.strip() or err.strip()):
        raise HccnError(f"`hccn_tool {' '.join(args)}` answered nothing, {QUERY_ATTEMPTS} times: NPU {npu} cannot be "
                        f"read. Run it by hand; when it prints nothing there too, check the NPU (`npu-smi info`) "
                        f"and the driver.")
    return out


def read_device(module: AnsibleModule, binary: str, npu: int) -> dict:
    ip = parse_fields(get(module, binary, npu, "-ip"))
    return {
        "id": npu,
        "address": ip.get("ipaddr", ""),
        "netmask": ip.get("netmask", ""),
        "gateway": first_address(get(module, binary, npu, "-gateway")),
        "netdetect": first_address(get(module, binary, npu, "-netdetect")),
        "link": parse_fields(get(module, binary, npu, "-link")).get("link status", ""),
        "health": parse_fields(get(module, binary, npu, "-net_health")).get("net health status", ""),
    }


def read_all(module: AnsibleModule, binary: str, wanted: list[dict]) -> list[dict]:
    """Every NPU, side by side: each NPU's queries are independent of the others'."""
    with ThreadPoolExecutor(max_workers=max(len(wanted), 1)) as pool:
        return list(pool.map(lambda device: read_device(module, binary, device["id"]), wanted))


def diff_text(devices: list[dict]) -> str:
    return "".join(f"NPU {d['id']}: {d['address']}/{d['netmask']} gateway {d['gateway'] or '-'} "
                   f"netdetect {d['netdetect'] or '-'}\n" for d in devices)


def predicted(want: dict, have: dict) -> dict:
    """What an NPU reports once set: an empty gateway or netdetect is left as it is."""
    return dict(have, address=want["address"], netmask=want["netmask"],
                gateway=want["gateway"] or have["gateway"], netdetect=want["netdetect"] or have["netdetect"])


def main() -> None:
    module, binary = hccn_module("devices", {
        "id": {"type": "int", "required": True},
        "address": {"type": "str", "required": True},
        "netmask": {"type": "str", "required": True},
        "gateway": {"type": "str", "default": ""},
        "netdetect": {"type": "str", "default": ""},
    }, apply={"type": "bool", "default": True})
    wanted = module.params["devices"]
    try:
        before = read_all(module, binary, wanted)
        plan = [change for want, have in zip(wanted, before) for change in set_commands(want, have)]
        after = before
        if plan and module.params["apply"] and not module.check_mode:
            for change in plan:
                hccn(module, binary, change["args"])
            after = read_all(module, binary, wanted)
    except HccnError as exc:
        module.fail_json(msg=str(exc))
    changing = bool(plan) and module.params["apply"]
    # An NPU still to be set in a check run is not held to its address.
    pending = {change["id"] for change in plan if change["setting"] == "ip"} if module.check_mode else set()
    findings = [f for f in device_findings(wanted, after) if not (f["kind"] == "address" and f["id"] in pending)]
    result = {"changed": changing, "devices": after, "plan": plan, "findings": findings}
    if module._diff and changing:
        planned = {change["id"] for change in plan}
        result["diff"] = {
            "before": diff_text([d for d in before if d["id"] in planned]),
            "after": diff_text([predicted(want, have) for want, have in zip(wanted, before) if want["id"] in planned]),
            "before_header": "hccn_tool", "after_header": "hccn_tool",
        }
    module.exit_json(**result)


if __name__ == "__main__":
    main()
