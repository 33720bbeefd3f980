# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""The NPU device network (RoCE ports of the 910B NPUs) as hccn_tool sees it.

Pure functions: address plans and their checks, parsers for hccn_tool's output, what to
set so a node matches its plan, the host port ranges of net.ipv4.ip_local_reserved_ports
and the sockets that hold a port. The modules and filters of the npu_network role call them.
"""
from __future__ import annotations

import ipaddress
import re
from typing import Any, Optional

HCCN_DIRS = ["/usr/local/Ascend/driver/tools"]
ADDRESS_FIX = "npu_network_addresses or npu_network_base_address/npu_network_address_stride"
IPV4 = re.compile(r"\b(\d{1,3}(?:\.\d{1,3}){3})\b")


# ---------------------------------------------------------------- address plans

def _ip(value: Any) -> Optional[ipaddress.IPv4Address]:
    try:
        return ipaddress.IPv4Address(str(value).strip())
    except ValueError:
        return None


def _netmask(value: Any) -> Optional[int]:
    """Prefix length of a dotted netmask or a /prefix; None when it is neither."""
    text = str(value).strip().lstrip("/")
    try:
        return ipaddress.IPv4Network("0.0.0.0/" + text).prefixlen
    except ValueError:
        return None


def expand_addresses(addresses: list, base: str, stride: int, count: int) -> list[str]:
    """The node's NPU addresses: the explicit list, else base + id * stride."""
    if addresses:
        return [str(a).strip() for a in addresses]
    start = _ip(base)
    if start is None:
        return []
    out = []
    for npu in range(count):
        value = int(start) + npu * int(stride)
        out.append(str(ipaddress.IPv4Address(value)) if value <= 0xFFFFFFFF else "out of range")
    return out


def node_problems(host: str, spec: dict) -> tuple[list[dict], list[str]]:
    """One node's wanted devices and what is wrong with its inputs.

    spec: addresses, base_address, stride, netmask, gateway, netdetect, count.
    """
    count = int(spec.get("count") or 0)
    addresses = expand_addresses(spec.get("addresses") or [], spec.get("base_address") or "",
                                 int(spec.get("stride") or 1), count)
    problems: list[str] = []
    if not addresses:
        if spec.get("base_address"):
            problems.append(f"{host}: npu_network_base_address '{spec['base_address']}' is not an IPv4 address; "
                            "set it to the address of NPU 0, e.g. 192.168.100.11.")
        else:
            problems.append(f"{host}: no NPU addresses; set {ADDRESS_FIX} for this node.")
        return [], problems
    if len(addresses) != count:
        problems.append(f"{host}: npu_network_addresses lists {len(addresses)} address(es), the node has {count} "
                        f"NPU(s) (npu-smi); list exactly one per NPU, NPU 0 first.")
    prefix = _netmask(spec.get("netmask", ""))
    if prefix is None:
        problems.append(f"{host}: npu_network_netmask '{spec.get('netmask')}' is not a netmask; "
                        "set it like 255.255.255.0.")
    devices = []
    subnets: dict[str, list[int]] = {}
    for npu, text in enumerate(addresses):
        address = _ip(text)
        if address is None:
            problems.append(f"{host} NPU {npu}: '{text}' is not an IPv4 address; fix {ADDRESS_FIX}.")
            continue
        if prefix is not None:
            subnet = str(ipaddress.IPv4Network(f"{address}/{prefix}", strict=False))
            subnets.setdefault(subnet, []).append(npu)
        devices.append({"id": npu, "address": str(address), "netmask": _mask_text(prefix),
                        "gateway": str(spec.get("gateway") or ""), "netdetect": str(spec.get("netdetect") or "")})
    if len(subnets) > 1:
        main = max(subnets, key=lambda s: len(subnets[s]))
        for subnet, npus in sorted(subnets.items()):
            if subnet == main:
                continue
            for npu in npus:
                problems.append(
                    f"{host} NPU {npu}: {addresses[npu]} is in {subnet}, the node's other NPUs in {main}; all NPU "
                    f"addresses of an Atlas 800T A2 must be in one subnet: fix {ADDRESS_FIX} or npu_network_netmask.")
    for key in ("gateway", "netdetect"):
        problems.extend(_in_subnet_problem(host, key, spec.get(key), subnets))
    return devices, problems


def _mask_text(prefix: Optional[int]) -> str:
    return "" if prefix is None else str(ipaddress.IPv4Network(f"0.0.0.0/{prefix}").netmask)


def _in_subnet_problem(host: str, key: str, value: Any, subnets: dict[str, list[int]]) -> list[str]:
    if not value:
        return []
    address = _ip(value)
    if address is None:
        return [f"{host}: npu_network_{key} '{value}' is not an IPv4 address; set one in the NPU subnet or ''."]
    if len(subnets) == 1 and address not in ipaddress.IPv4Network(next(iter(subnets))):
        return [f"{host}: npu_network_{key} {value} is outside the NPU subnet {next(iter(subnets))}; "
                f"set npu_network_{key} to an address in it."]
    return []


def cluster_plan(nodes: dict[str, dict]) -> dict[str, dict]:
    """{host: spec} -> {host: {devices, problems}}, duplicates checked across all hosts."""
    plan = {}
    owners: dict[str, tuple[str, int]] = {}
    for host in nodes:
        devices, problems = node_problems(host, nodes[host])
        for device in devices:
            first = owners.setdefault(device["address"], (host, device["id"]))
            if first != (host, device["id"]):
                problems.append(
                    f"{host} NPU {device['id']}: {device['address']} is also the address of {first[0]} NPU {first[1]}; "
                    f"every NPU address must be unique in the cluster: fix {ADDRESS_FIX} on one of the two nodes.")
        plan[host] = {"devices": devices, "problems": problems}
    return plan


# ---------------------------------------------------------------- hccn_tool output

def hccn_module(items: str, item_options: dict, **more: dict) -> tuple[Any, str]:
    """An AnsibleModule taking `hccn_tool`, the list option `items` of dicts with
    `item_options`, and `more` options; with hccn_tool's path, or failed without it."""
    from ansible.module_utils.basic import AnsibleModule

    module = AnsibleModule(
        argument_spec=dict({"hccn_tool": {"type": "str", "default": "hccn_tool"},
                            items: {"type": "list", "elements": "dict", "required": True, "options": item_options}},
                           **more),
        supports_check_mode=True,
    )
    name = module.params["hccn_tool"]
    binary = module.get_bin_path(name, opt_dirs=HCCN_DIRS)
    if binary is None:
        module.fail_json(msg=f"{name} not found on PATH or in {HCCN_DIRS[0]}: install the NPU driver (it ships "
                             "hccn_tool) or set npu_network_hccn_tool to its path.")
    return module, binary


# Every hccn_tool query (-g) prints at least one line. ansible-core's run_command waits for a
# command's output one second at a time and stops reading once the command has exited: the
# reply of a command that writes and exits just after such a wait ran out is lost, and the
# command seems to have answered nothing with exit 0 (a query that takes over a second, as
# eight side by side on a busy node do). A query reads and changes nothing, so an empty reply
# is asked again; one that stays empty is no answer either.
QUERY_ATTEMPTS = 3


def query(module: Any, argv: list[str]) -> tuple[int, str, str]:
    """rc, stdout and stderr of one hccn_tool query, asked up to QUERY_ATTEMPTS times while it
    exits 0 with no output."""
    for dummy in range(QUERY_ATTEMPTS):
        rc, out, err = module.run_command(argv)
        if rc != 0 or out.strip() or err.strip():
            break
    return rc, out, err


def parse_fields(text: str) -> dict[str, str]:
    """`key:value` lines (`ipaddr:A`, `link status: UP`) -> {key: value}, keys lower case."""
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            out[key.strip().lower()] = value.strip()
    return out


def first_address(text: str) -> str:
    """The first IPv4 address in an output, '' when there is none (an unset gateway)."""
    match = IPV4.search(text)
    return match.group(1) if match else ""


def parse_ping(rc: int, text: str) -> bool:
    """Whether a `-ping -g` answered: exit 0 and at least one reply received."""
    match = re.search(r"(\d+)\s+packets? transmitted,\s*(\d+)\s+received", text)
    return rc == 0 and match is not None and int(match.group(2)) > 0


def set_commands(wanted: dict, current: dict) -> list[dict]:
    """hccn_tool settings that bring one NPU from `current` to `wanted`."""
    npu = str(wanted["id"])
    changes = []
    if (current.get("address"), current.get("netmask")) != (wanted["address"], wanted["netmask"]):
        changes.append({"id": wanted["id"], "setting": "ip",
                        "before": f"{current.get('address') or '-'}/{current.get('netmask') or '-'}",
                        "after": f"{wanted['address']}/{wanted['netmask']}",
                        "args": ["-i", npu, "-ip", "-s", "address", wanted["address"], "netmask", wanted["netmask"]]})
    for key, flag, word in (("gateway", "-gateway", "gateway"), ("netdetect", "-netdetect", "address")):
        if wanted.get(key) and current.get(key) != wanted[key]:
            changes.append({"id": wanted["id"], "setting": key, "before": current.get(key) or "-",
                            "after": wanted[key], "args": ["-i", npu, flag, "-s", word, wanted[key]]})
    return changes


def device_findings(wanted: list[dict], found: list[dict]) -> list[dict]:
    """[{id, kind, msg}] for every NPU whose port is down, unhealthy or not at its address."""
    by_id = {device["id"]: device for device in found}
    out = []
    for want in wanted:
        have, npu = by_id.get(want["id"], {}), want["id"]
        if have.get("link") != "UP":
            out.append({"id": npu, "kind": "link", "msg": (
                f"NPU {npu}: link status {have.get('link') or 'unknown'}; check the cable, optics and switch port "
                f"(`hccn_tool -i {npu} -lldp -g` names it), then `hccn_tool -i {npu} -link -g` must say UP.")})
        if have.get("health") != "Success":
            out.append({"id": npu, "kind": "health", "msg": (
                f"NPU {npu}: net health status {have.get('health') or 'unknown'}; make npu_network_netdetect "
                f"({want.get('netdetect') or 'unset'}) an address that answers in the NPU subnet and check the link, "
                f"then `hccn_tool -i {npu} -net_health -g` must say Success.")})
        if (have.get("address"), have.get("netmask")) != (want["address"], want["netmask"]):
            out.append({"id": npu, "kind": "address", "msg": (
                f"NPU {npu}: address {have.get('address') or 'unset'}/{have.get('netmask') or '-'}, configured "
                f"{want['address']}/{want['netmask']}; run the npu_network stage without --tags verify to set it, "
                f"or fix {ADDRESS_FIX}.")})
    return out


def ping_targets(plan: dict[str, dict], host: str, peers: list[str], full_mesh: bool) -> list[dict]:
    """What `host` pings: the same-index NPU of every peer, or every NPU of every peer."""
    targets = []
    for peer in peers:
        if peer == host:
            continue
        for mine in plan[host]["devices"]:
            for theirs in plan[peer]["devices"]:
                if full_mesh or theirs["id"] == mine["id"]:
                    targets.append({"npu": mine["id"], "address": theirs["address"], "peer": peer,
                                    "peer_npu": theirs["id"]})
    return targets


# ---------------------------------------------------------------- host ports

def parse_ranges(text: str) -> list[tuple[int, int]]:
    """`8080,60000-60031` -> merged, sorted [(8080, 8080), (60000, 60031)]."""
    spans = []
    for part in re.split(r"[,\s]+", str(text or "").strip()):
        if not part:
            continue
        low, high = (part.split("-", 1) + [part])[:2]
        spans.append((int(low), int(high)))
    merged: list[tuple[int, int]] = []
    for low, high in sorted(spans):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(high, merged[-1][1]))
        else:
            merged.append((low, high))
    return merged


def format_ranges(spans: list[tuple[int, int]]) -> str:
    """The kernel's own format of ip_local_reserved_ports."""
    return ",".join(str(low) if low == high else f"{low}-{high}" for low, high in spans)


def merge_ranges(existing: str, wanted: str) -> str:
    """What is reserved already plus what is wanted, never less than either."""
    return format_ranges(parse_ranges(f"{existing},{wanted}"))


def port_users(ss_output: str, ranges: str) -> list[dict]:
    """Sockets of `ss -Htanp` whose local port is in `ranges`: [{port, state, process}]."""
    spans = parse_ranges(ranges)
    users = []
    for line in ss_output.splitlines():
        fields = line.split()
        if len(fields) < 4:
            continue
        if fields[0] == "TIME-WAIT":
            continue  # a closed connection the kernel still remembers; nothing holds the port
        port = fields[3].rpartition(":")[2]
        if not port.isdigit() or not any(low <= int(port) <= high for low, high in spans):
            continue
        match = re.search(r'users:\(\("([^"]*)",pid=(\d+)', line)
        process = f"{match.group(1)} (pid {match.group(2)})" if match else "an unnamed process"
        users.append({"port": int(port), "state": fields[0], "process": process})
    return users
