"""Filters for the train role: whether every node is ready to train, one launch decision
for all nodes of a training group, the verdict of the collective check across them, whether
the launch reached its first step, and what GR00T's command line asks of it."""
from __future__ import annotations

import base64
import math
import re
from typing import Any

from ansible_collections.ascendops.gr00t.plugins.module_utils.collective import summarize
from ansible_collections.ascendops.gr00t.plugins.module_utils.train_run import (
    first_step_wait_goes_on,
    group_decision,
    health_round_seconds,
    health_verdict,
)

# Long tool output in a finding is cut as Jinja's truncate filter cut it: at a word, with "...",
# unless it is at most this many characters over.
_TRUNCATE_LEEWAY = 5


def train_group_decision(decisions: dict[str, dict], restart: bool = False, missing: Any = (),
                         group: str = "") -> dict:
    """{host: decision of train_status} -> {action: keep|launch|refuse, msg}."""
    return group_decision(decisions, bool(restart), [str(host) for host in missing], str(group))


def plain(value: Any) -> Any:
    """Ansible's lazily templated containers as plain lists and dicts: read more than once,
    a lazy list of one host's result came back empty for the next."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def collective_summary(hosts: list[str], results: list[Any], addrs: list[str]) -> dict:
    """Hosts, their collective_check results and addresses -> {ok, msg, report, culprits, ...}."""
    return summarize([str(h) for h in hosts], plain(list(results)), [str(a or "") for a in addrs])


def truncate(text: str, length: int = 200) -> str:
    """`text` stripped and, when longer than `length`, cut at a word and ended with "..."."""
    text = text.strip()
    if len(text) <= length + _TRUNCATE_LEEWAY:
        return text
    return text[:length - 3].rsplit(" ", 1)[0] + "..."


def npu_findings(node: dict) -> list[str]:
    npu, nproc, visible = node["npu"], int(node["nproc"]), list(node["visible_devices"])
    ids = [device["id"] for device in npu["devices"]]
    findings = []
    if not npu["present"] or npu["error"]:
        findings.append(f"NPUs: {npu['error']} Install the NPU driver (npu_driver stage) before training.")
    if nproc < 1 or npu["count"] < nproc:
        findings.append(f"NPUs: npu-smi shows {npu['count']} NPU(s), train_nproc_per_node asks for {nproc}. "
                        "Lower train_nproc_per_node (0 uses every NPU) or bring the missing cards back "
                        "(`npu-smi info`).")
    if len(visible) != nproc or any(device not in ids for device in visible):
        findings.append(f"NPUs: train_visible_devices {visible} must list {nproc} id(s) npu-smi shows ({ids}).")
    return findings


def python_findings(node: dict) -> list[str]:
    if node["site_packages"]:
        return []
    return [f"Python: {node['python']} does not run ({truncate(node['python_error'])}). "
            "Build the training env (python_env stage) or set train_python."]


def tag_registered(tag: str, registry: str) -> bool:
    """Whether embodiment_tags.py defines the tag, as an enum member name or a quoted value."""
    name = re.escape(tag)
    return bool(re.search(rf"(?m)^\s*{name}\s*=", registry) or re.search(rf"=\s*[\"']{name}[\"']", registry))


def tag_findings(node: dict) -> list[str]:
    slurped, tag, tag_file = node["tag_registry"], node["tag"], node["tag_file"]
    if "content" not in slurped:
        return [f"Embodiment tag: cannot read the tag registry {tag_file} (train_embodiment_tag_file): "
                f"{slurped.get('msg', '')} Check the GR00T checkout (gr00t stage) or set train_embodiment_tag_file."]
    if tag_registered(tag, base64.b64decode(slurped["content"]).decode("utf-8", errors="replace")):
        return []
    return [f"Embodiment tag: '{tag}' (train_embodiment_tag) is not registered in {tag_file}; GR00T would stop "
            "with \"Unknown tag\". Use a tag defined there (N1.7: LIBERO_PANDA for LIBERO data), or register "
            "yours in the checkout."]


def batch_findings(node: dict) -> list[str]:
    batch, world = int(node["global_batch_size"]), int(node["world_size"])
    if world > 0 and batch % world == 0:
        return []
    multiple = math.ceil(batch / max(world, 1)) * world
    return [f"Batch: train_global_batch_size {batch} is not divisible by the world size {world} "
            f"({node['nnodes']} node(s) x {node['nproc']} rank(s)). Use a multiple of {world}, e.g. {multiple}."]


def rendezvous_findings(node: dict) -> list[str]:
    master, addr, port = node["master"], node["master_addr"], node["master_port"]
    probe, reach = node["probe"], node["reach"]
    # Only the master probes and only the others reach, and only when no run holds the port:
    # elsewhere the result is empty or skipped.
    probed = bool(probe) and not probe.get("skipped")
    reached = bool(reach) and not reach.get("skipped")
    findings = []
    if not addr:
        findings.append(f"Rendezvous: no master address; set train_hccl_if_ip on {master} or train_master_addr.")
    if probed and probe.get("code") == "in_use":
        findings.append(f"Rendezvous: port {port} is in use on the master {master} ({probe.get('msg', '')}). "
                        f"Stop what holds it (`ss -ltnp 'sport = :{port}'`) or set train_master_port to a free port.")
    if probed and "code" not in probe:
        findings.append(f"Rendezvous: the port probe did not run on the master ({truncate(probe.get('msg', ''))}). "
                        f"Check that {node['node_python']} runs, or set train_check_master_port: false.")
    # tcp_reach's msg names the port and the last error: "29500 ([Errno 111] Connection refused)".
    if reached and reach.get("code") == "unreachable":
        findings.append(f"Rendezvous: {node['host']} cannot reach the master {addr} on TCP port "
                        f"{reach.get('msg', '')}. Open the port between the nodes (firewall), or set "
                        "train_hccl_if_ip / train_master_addr to an address the nodes share.")
    if reached and "code" not in reach:
        findings.append(f"Rendezvous: the reach check did not run on {node['host']} "
                        f"({truncate(reach.get('msg', ''))}). Check that {node['node_python']} runs, or set "
                        "train_check_master_port: false.")
    return findings


def train_check_failures(node: dict) -> list[str]:
    """Every reason this node cannot train, from what checks.yml gathered; empty when ready.

    Paths the run needs come last: each `stat` loop result's item carries its message.
    """
    node = plain(node)
    missing = [result["item"]["msg"] for result in node["paths"] if not result["stat"]["exists"]]
    return (npu_findings(node) + python_findings(node) + tag_findings(node) + batch_findings(node)
            + rendezvous_findings(node) + missing)


def train_readiness(hosts: list[str], failures: list[list[str]], group: str) -> dict:
    """The group's nodes and each one's train_check_failures -> {ok, msg}: a node may
    not launch ranks that would wait for a master or a peer that cannot start."""
    failing = [(host, list(found)) for host, found in zip(hosts, failures) if found]
    lines = [f"Training cannot start; nothing was changed on any node of {group}:"]
    for host, found in failing:
        lines.append(f"{host}:")
        lines.extend(f"  {number}. {msg}" for number, msg in enumerate(found, 1))
    return {"ok": not failing, "msg": "\n".join(lines) if failing else ""}


def train_health_round(timeout: Any, settle: Any) -> int:
    """Seconds of one round of the wait for the first step."""
    return health_round_seconds(int(timeout), int(settle))


def train_first_step_wait_goes_on(statuses: list, waited: Any, timeout: Any) -> bool:
    """Whether the group waits another round for the first step (statuses master first)."""
    return first_step_wait_goes_on(plain(list(statuses)), int(waited), int(timeout))


def train_health_verdict(hosts: list[str], statuses: list[dict], run_id: str, timeout: Any) -> dict:
    """The group's nodes (master first) and each one's train_status after the wait ->
    {ok, msg, reports}."""
    return health_verdict([str(h) for h in hosts], plain(list(statuses)), str(run_id), int(timeout))


# A flag at the start of a help line: tyro's boxed table (`│ --base-model-path STR`,
# `│ --tune-llm, --no-tune-llm`) and argparse's indented list (`  --dataset_path DATASET_PATH`).
HELP_FLAG = re.compile(r"^[\s│|]*(--[A-Za-z0-9][\w-]*)((?:, --[\w-]+)*)(?:[ =]([A-Z{][^\s]*))?", re.M)


def flag_key(flag: str) -> str:
    """tyro accepts --dataset_path and --dataset-path alike."""
    return flag.split("=", 1)[0].replace("_", "-")


def cli_flags(help_text: str) -> dict[str, bool]:
    """Every flag of a --help text, and whether it takes a value (False: a bare boolean flag)."""
    flags: dict[str, bool] = {}
    for match in HELP_FLAG.finditer(help_text):
        takes_value = bool(match.group(3))
        for flag in [match.group(1)] + re.findall(r"--[\w-]+", match.group(2)):
            flags[flag_key(flag)] = takes_value
    return flags


def train_cli_problems(help_text: str, argv: list[str]) -> list[str]:
    """What the entry point would refuse in argv: unknown flags, values after a bare boolean
    flag (GR00T: `--resume_from_checkpoint True` exits 2) and flags missing their value."""
    flags = cli_flags(help_text)
    known = ", ".join(sorted(flag for flag in flags if flag not in ("--help", "-h")))
    problems: list[str] = []
    for index, arg in enumerate(argv):
        arg = str(arg)
        if not arg.startswith("--"):
            continue
        following = str(argv[index + 1]) if index + 1 < len(argv) else None
        takes_value = flags.get(flag_key(arg))
        if takes_value is None:
            problems.append("{0} is not an option of the entry point".format(arg))
        elif not takes_value and "=" not in arg and following is not None and not following.startswith("--"):
            problems.append("{0} is a bare flag: remove the {1!r} after it".format(arg, following))
        elif takes_value and "=" not in arg and (following is None or following.startswith("--")):
            problems.append("{0} needs a value".format(arg))
    return problems + (["its options are: " + known] if problems else [])


def train_checkpoint_limit(argv: list[str]) -> int:
    """The save_total_limit GR00T takes from argv (`--save_total_limit N`, `--save-total-limit=N`;
    the last one should there be more); 0 when none is given or it is not a positive number. The
    launch script rotates every node's checkpoints by it; with 0 it rotates none (without the
    option, GR00T's own default rotates the primary's alone)."""
    limit = 0
    for index, arg in enumerate(argv):
        arg = str(arg)
        if flag_key(arg) != "--save-total-limit":
            continue
        value = arg.split("=", 1)[1] if "=" in arg else (str(argv[index + 1]) if index + 1 < len(argv) else "")
        limit = int(value) if re.fullmatch(r"\s*\d+\s*", value) else 0
    return limit


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {
            "train_group_decision": train_group_decision,
            "collective_summary": collective_summary,
            "train_check_failures": train_check_failures,
            "train_readiness": train_readiness,
            "train_health_round": train_health_round,
            "train_first_step_wait_goes_on": train_first_step_wait_goes_on,
            "train_health_verdict": train_health_verdict,
            "train_cli_problems": train_cli_problems,
            "train_checkpoint_limit": train_checkpoint_limit,
        }
