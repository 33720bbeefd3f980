# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""The cluster collective check: the rank program torchrun starts, reading its results,
and the summary of every node's part.

The rank program runs in the training env's Python (torch, and torch_npu on a real node);
everything else runs in the node's or the controller's Python and needs only the standard
library.
"""
from __future__ import annotations

import json
import os
import re
from typing import Any, Iterable

# The reachability probe of the rank program, standard library only: a node's first rank
# takes connections on a free port while the check runs and connects to the other nodes'.
# A collective's own errors cannot tell the closed node from its peers (a rank that fails on
# the closed node drops its other pairs in turn, and those name it); a connection refused or
# unanswered says which node the others cannot reach.
REACH = r'''
import socket, threading


def own_addr(master):
    """The address this node reaches the master from, the one its peers reach it at."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.connect((master, 9))
        return udp.getsockname()[0]


def serve():
    """Accept and close connections on a free port, in the background; the port."""
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("", 0))
    srv.listen(128)

    def loop():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            conn.close()

    threading.Thread(target=loop, daemon=True).start()
    return srv.getsockname()[1]


def unreached(peers, timeout):
    """peers: {node_rank: "addr:port"} -> [[node_rank, "addr:port", error]] for each one that
    refused or did not answer within timeout seconds; all at once, so it takes one timeout."""
    failed = []

    def connect(node, peer):
        addr, port = peer.rsplit(":", 1)
        try:
            socket.create_connection((addr, int(port)), timeout=timeout).close()
        except OSError as exc:
            failed.append([node, peer, exc.strerror or type(exc).__name__])

    threads = [threading.Thread(target=connect, args=item) for item in sorted(peers.items())]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sorted(failed)
'''

# Started by torchrun on every rank: probes the other nodes (REACH, above), joins the process
# group the way training does (HCCL through torch_npu when an NPU is there, gloo otherwise),
# all-reduces a tensor of ones a few times and writes what it saw to <out>/rank-<RANK>.json
# after each stage, so a rank that hangs or dies still leaves how far it got.
# argv: out size_mb iters backend join_timeout token
WORKER = REACH + r'''
import datetime, json, os, statistics, sys, time

out, size_mb, iters, backend, join_timeout = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
rank, local_rank, world = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"]), int(os.environ["WORLD_SIZE"])
rec = {"rank": rank, "local_rank": local_rank, "world_size": world, "host": socket.gethostname(), "stage": "started"}


def write():
    tmp = os.path.join(out, ".rank-%d.json" % rank)
    with open(tmp, "w") as fh:
        json.dump(rec, fh)
    os.replace(tmp, os.path.join(out, "rank-%d.json" % rank))


write()
try:
    import torch
    import torch.distributed as dist

    device = "cpu"
    if backend in ("auto", "hccl"):
        try:
            import torch_npu  # noqa: F401
            npu = getattr(torch, "npu", None)
            has_npu = bool(npu is not None and npu.is_available())
        except ImportError:
            has_npu = False
        if has_npu:
            backend, device = "hccl", "npu:%d" % local_rank
            torch.npu.set_device(local_rank)
        elif backend == "hccl":
            raise RuntimeError("backend hccl asked for, but torch_npu sees no NPU on this node")
        else:
            backend = "gloo"
    rec["backend"] = backend

    def sync():
        if device.startswith("npu"):
            torch.npu.synchronize()

    def reach():
        # Through torchrun's own store (the agent's, on the master): every node's port, then
        # every node's probe done, so no node stops taking connections while another probes.
        nodes, node = int(os.environ.get("GROUP_WORLD_SIZE", "1")), int(os.environ.get("GROUP_RANK", "0"))
        if nodes < 2 or local_rank != 0:
            return
        wait = datetime.timedelta(seconds=min(join_timeout, 60))
        store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), is_master=False,
                              timeout=wait)
        store.set("ascendops-reach/%d" % node, "%s:%d" % (own_addr(os.environ["MASTER_ADDR"]), serve()))
        keys = {n: "ascendops-reach/%d" % n for n in range(nodes) if n != node}
        store.wait(list(keys.values()), wait)
        rec["unreached_peers"] = unreached({n: store.get(k).decode() for n, k in keys.items()}, 5)
        store.add("ascendops-reach-done", 1)
        deadline = time.monotonic() + wait.total_seconds()
        while store.add("ascendops-reach-done", 0) < nodes and time.monotonic() < deadline:
            time.sleep(0.1)

    try:
        reach()
    except Exception as exc:  # the probe only explains a failure; it never makes one
        rec["reach_error"] = ("%s: %s" % (type(exc).__name__, exc))[:500]
    write()

    start = time.monotonic()
    dist.init_process_group(backend=backend, timeout=datetime.timedelta(seconds=join_timeout))
    rec.update(stage="joined", join_seconds=round(time.monotonic() - start, 3))
    write()
    numel = max(int(size_mb * 2 ** 20) // 4, 1)
    x = torch.ones(numel, dtype=torch.float32, device=device)
    dist.all_reduce(x)
    sync()
    times = []
    for _ in range(iters):
        x.fill_(1.0)
        sync()
        t0 = time.perf_counter()
        dist.all_reduce(x)
        sync()
        times.append(time.perf_counter() - t0)
    got = (float(x[0].item()), float(x[-1].item()))
    dist.barrier()
    dist.destroy_process_group()
    rec.update(stage="done", bytes=numel * 4, seconds=statistics.median(times),
               correct=got == (float(world), float(world)), value=got[0])
    write()
except BaseException as exc:
    rec["error"] = ("%s: %s" % (type(exc).__name__, exc))[:2000]
    write()
    raise
'''

STAGES = ("started", "joined", "done")
# The stages of a rank that joined the process group.
JOINED = ("joined", "done")


def bus_bandwidth_gbps(nbytes: int, seconds: float, world_size: int) -> float:
    """All-reduce bus bandwidth in GB/s, as nccl-tests and hccl_test count it: the
    algorithm bandwidth (bytes / time) times 2(n-1)/n, what each link carries."""
    if seconds <= 0 or world_size < 1:
        return 0.0
    return nbytes / seconds * 2 * (world_size - 1) / world_size / 1e9


def torchrun_argv(python: str, script: str, script_args: Iterable[Any], nnodes: int, node_rank: int,
                  master_addr: str, master_port: int, nproc_per_node: int) -> list[str]:
    """The torchrun command line of one node, as the launch scripts write it (no restarts:
    a check that fails must say so, not try again)."""
    return [
        python, "-m", "torch.distributed.run",
        "--nnodes=%d" % nnodes, "--node_rank=%d" % node_rank,
        "--master_addr=%s" % master_addr, "--master_port=%d" % master_port,
        "--nproc_per_node=%d" % nproc_per_node, "--max_restarts=0",
        script, *[str(a) for a in script_args],
    ]


def read_rank_records(out_dir: str) -> list[dict]:
    """The records the ranks of this node wrote, by rank; unreadable ones are skipped (a
    rank killed while writing leaves only its temporary file)."""
    records = []
    for name in sorted(os.listdir(out_dir)):
        if re.fullmatch(r"rank-\d+\.json", name):
            try:
                with open(os.path.join(out_dir, name), encoding="utf-8") as fh:
                    records.append(json.load(fh))
            except (OSError, ValueError):
                continue
    return sorted(records, key=lambda r: r.get("rank", -1))


def node_result(rc: int | None, timed_out: bool, records: list[dict], nproc: int, output: str,
                timeout: int) -> dict:
    """One node's part of the check from torchrun's exit, the rank records and its output."""
    stages = [r.get("stage", "started") for r in records] + ["absent"] * max(nproc - len(records), 0)
    done = [r for r in records if r.get("stage") == "done"]
    errors = [r["error"] for r in records if r.get("error")]
    correct = all(r.get("correct") for r in done)
    ok = rc == 0 and not timed_out and len(done) == nproc and correct
    world = max([r.get("world_size", 0) for r in records] or [0])
    seconds = max((r["seconds"] for r in done), default=None)
    nbytes = max((r.get("bytes", 0) for r in done), default=0)
    tail = [line for line in output.splitlines() if line.strip()][-15:]
    if ok:
        msg = "all %d rank(s) joined and all-reduced" % nproc
    elif done and not correct:
        msg = "the all-reduce returned %s, not the world size %d" % (
            sorted({r.get("value") for r in done}), world)
    elif timed_out:
        msg = "no result within %d s; rank stages: %s" % (timeout, ", ".join(stages))
    elif errors:
        msg = errors[0]
    else:
        msg = "torchrun exited with %s; rank stages: %s; %s" % (
            rc, ", ".join(stages), tail[-1] if tail else "no output")
    return {
        "ok": ok,
        "rc": rc,
        "timed_out": timed_out,
        "joined": bool(records) and len(records) == nproc and all(s in JOINED for s in stages),
        "stages": stages,
        "backend": next((r["backend"] for r in records if r.get("backend")), None),
        "world_size": world,
        "bytes": nbytes,
        "seconds": seconds,
        "busbw_gbps": round(bus_bandwidth_gbps(nbytes, seconds, world), 3) if seconds else None,
        "errors": errors,
        # The other nodes this node's probe could not connect to: [node_rank, "addr:port", error].
        # (Not "unreachable": Ansible takes a true "unreachable" in a result for a lost host.)
        "unreached_peers": sorted(u for r in records for u in r.get("unreached_peers", [])),
        "reach_errors": [r["reach_error"] for r in records if r.get("reach_error")],
        "reason": msg,
        "output_tail": tail,
    }


def marked_pids(token: str, proc_root: str = "/proc") -> list[int]:
    """Processes whose command line carries the check's token: torchrun starts each rank in
    a session of its own, so killing torchrun's group does not reach them."""
    pids = []
    mypid = os.getpid()
    for name in os.listdir(proc_root):
        if not name.isdigit() or int(name) == mypid:
            continue
        try:
            with open(os.path.join(proc_root, name, "cmdline"), "rb") as fh:
                argv = fh.read().split(b"\0")
        except OSError:
            continue
        if token.encode() in argv:
            pids.append(int(name))
    return sorted(pids)


def refused_by(results: dict[str, dict]) -> dict[str, list[list]]:
    """Each node (by its place in the group, its node rank) -> the other nodes whose probe
    could not connect to it, each with the error: [[node, error], ...]."""
    hosts = list(results)
    refused: dict[str, list[list]] = {}
    for prober, r in results.items():
        for node, _peer, error in r.get("unreached_peers", []):
            if 0 <= node < len(hosts) and hosts[node] != prober:
                refused.setdefault(hosts[node], []).append([prober, error])
    return refused


def culprits(results: dict[str, dict], addrs: dict[str, str]) -> list[str]:
    """The nodes to blame when the check failed: those the other nodes could not connect to,
    while others they could; else those none of whose ranks joined while other nodes' ranks
    did; else those that did not join while others did; else those whose address the most
    other nodes' errors name; else those that failed on their own while the others waited;
    else every failed node."""
    failed = [h for h, r in results.items() if not r.get("ok")]
    if not failed:
        return []
    # The probe's word is first: the collective's errors follow whichever pair broke first.
    refused = refused_by(results)
    closed = [h for h in results if h in refused]
    if closed and len(closed) < len(results):
        return closed
    # A node whose ports are closed never has a rank join, while the others' ranks may join
    # and then fail on it (each naming whichever peer dropped it first).
    none_joined = [h for h, r in results.items() if not any(s in JOINED for s in r.get("stages", []))]
    if none_joined and len(none_joined) < len(results):
        return none_joined
    joined = [h for h, r in results.items() if r.get("joined")]
    if joined:
        missing = [h for h in results if h not in joined]
        if missing:
            return missing
    # A closed node's own ranks may name a peer that dropped them in turn, so the node the
    # most others name is the one to blame; a tie (two nodes naming each other) blames both.
    named_by: dict[str, int] = {}
    for host, addr in addrs.items():
        if not addr or host not in results:
            continue
        pattern = re.compile(r"(?<![\d.])" + re.escape(addr) + r"(?![\d])")
        namers = [other for other, r in results.items() if other != host
                  and any(pattern.search(t) for t in r.get("errors", []) + r.get("output_tail", []))]
        if namers:
            named_by[host] = len(namers)
    if named_by:
        most = max(named_by.values())
        return [h for h, n in named_by.items() if n == most]
    alone = [h for h in failed if not results[h].get("timed_out")]
    if alone and len(alone) < len(failed):
        return alone
    return failed


def stage_counts(stages: list[str]) -> str:
    """How many ranks reached each stage, furthest first: '6 done', '1 joined 7 absent'."""
    order = STAGES[::-1] + ("absent",)
    counts = [(stage, stages.count(stage)) for stage in order if stages.count(stage)]
    return " ".join("%d %s" % (n, stage) for stage, n in counts) or "-"


def summary_table(results: dict[str, dict]) -> str:
    """One line per node: pass/fail, ranks and their stages, collective time, bus bandwidth."""
    lines = ["%-20s %-5s %-7s %-16s %9s %8s" % ("node", "check", "backend", "rank stages", "time ms", "busbw GB/s")]
    for host, r in results.items():
        lines.append("%-20s %-5s %-7s %-16s %9s %8s" % (
            host, "pass" if r.get("ok") else "FAIL", r.get("backend") or "-",
            stage_counts(r.get("stages", [])),
            "%.2f" % (r["seconds"] * 1000) if r.get("seconds") else "-",
            "%.3f" % r["busbw_gbps"] if r.get("busbw_gbps") is not None else "-"))
    return "\n".join(lines)


def node_outcome(raw: Any) -> dict:
    """A node's result as the controller got it: the module's return, or what stands in for
    it when the node never ran the check or did not finish it."""
    if not isinstance(raw, dict) or ("stages" not in raw and not raw.get("finished", 1)):
        reason = "did not finish the check" if isinstance(raw, dict) else "did not run the check"
        return {"ok": False, "joined": False, "timed_out": True, "stages": [], "errors": [],
                "output_tail": [], "reason": reason}
    if "stages" not in raw:
        return {"ok": False, "joined": False, "timed_out": False, "stages": [], "errors": [],
                "output_tail": [], "reason": str(raw.get("msg", "the check did not start"))}
    return raw


def summarize(hosts: list[str], raw_results: list[Any], addrs: list[str]) -> dict:
    """The whole group's verdict, a message naming the nodes to look at, and a report."""
    results = {h: node_outcome(r) for h, r in zip(hosts, raw_results)}
    blamed = culprits(results, dict(zip(hosts, addrs)))
    done = [r for r in results.values() if r.get("seconds")]
    ok = bool(results) and all(r.get("ok") for r in results.values())
    seconds = max((r["seconds"] for r in done), default=None)
    busbw = min((r["busbw_gbps"] for r in done if r.get("busbw_gbps") is not None), default=None)
    world = max((r.get("world_size") or 0 for r in results.values()), default=0)
    if ok:
        verdict = "collective check passed: %d node(s), %d rank(s), all-reduce %.2f ms, bus bandwidth %s GB/s" % (
            len(results), world, (seconds or 0) * 1000, busbw)
    else:
        verdict = "collective check FAILED; did not join or failed: %s" % ", ".join(blamed)
    lines = ["Training cannot start: the collective check across %s failed; nothing was launched." % ", ".join(hosts)]
    if results and all(r.get("stages") and set(r["stages"]) == {"absent"} for r in results.values()):
        lines.append("No node started a rank: the torchrun agents never all met at the rendezvous, so a node of "
                     "the group did not start torchrun or cannot reach the master's port.")
    refused = refused_by(results)
    for host in blamed:
        r = results[host]
        lines.append("%s: %s" % (host, r.get("reason") or "failed"))
        if refused.get(host):
            lines.append("  | the other nodes could not connect to it: %s" % ", ".join(
                "%s (%s)" % (prober, error) for prober, error in refused[host]))
        # A rank's own error says it all; without one, torchrun's last lines say why.
        if not r.get("errors"):
            lines.extend("  | " + line for line in r.get("output_tail", [])[-5:])
    others = [h for h in results if h not in blamed and not results[h].get("ok")]
    if others:
        lines.append("Waiting on them, also failed: %s (%s)" % (
            ", ".join(others), "; ".join("%s: %s" % (h, results[h].get("reason")) for h in others)))
    lines.append(
        "Fix: on the node(s) named, check the device network (playbooks/npu_network.yml: links, addresses, "
        "ping mesh), that the HCCL host ports and the rendezvous port are open between the nodes (firewall), "
        "and that the training env imports torch and torch_npu; rerun playbooks/cluster_check.yml. "
        "train_cluster_check: false skips the check.")
    return {
        "ok": ok,
        "failed": [h for h, r in results.items() if not r.get("ok")],
        "culprits": blamed,
        "seconds": seconds,
        "busbw_gbps": busbw,
        "world_size": world,
        "report": summary_table(results) + "\n" + verdict,
        "msg": verdict if ok else "\n".join(lines),
    }
