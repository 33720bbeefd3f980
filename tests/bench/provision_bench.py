#!/usr/bin/env python3
"""Provisioning benchmark on simulated nodes (a script, not a timed test).

For each cluster size: start that many fresh simulated nodes, run site.yml (first run),
run it again (rerun), and print wall times, the rerun/first ratio, the changed tasks
and task count of the rerun; with --profile-tasks, its slowest tasks too (profile_tasks costs the
controller CPU itself, so the CPU figures are read without it by default).
Goals: rerun <= 20% of the first run with changed=0; N nodes <= 1.5x one.

With --per-stage, each stage's playbook then runs once more on the converged nodes, for the
controller CPU of each stage. Controller CPU is the user+sys time of ansible-playbook and
every process it waited for (its forks, the ssh clients), read with getrusage.

With --reruns N, each size reruns site.yml N times and the median wall and CPU are reported.

With --snapshot, only one node is provisioned: it is converged, committed to an image, and
each size starts that many nodes from the image (each with its own name, hostname and host
key), so only the converged rerun is measured and the controller's work is all that grows
with the node count. This reaches 8 and more nodes on 2 cores.

  .venv/bin/python tests/bench/provision_bench.py --nodes 1 4
  .venv/bin/python tests/bench/provision_bench.py --snapshot --nodes 1 4 8
  .venv/bin/python tests/bench/provision_bench.py --snapshot --nodes 1 4 8 --reruns 3
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "harness"))
from playlog import recap, slowest, tasks_run  # noqa: E402 (path set just above)

SIMCTL = [sys.executable, str(REPO / "tests" / "harness" / "simctl.py")]
WORK = REPO / ".sim" / "bench"
BASE_PORT = 22300
# The converged node --snapshot commits and starts every size from.
SNAPSHOT_IMAGE = "ascendops-bench-snapshot:latest"
# The venv's ansible-playbook, whether or not the venv is on PATH.
PLAYBOOK_BIN = Path(sys.executable).parent / "ansible-playbook"
# site.yml's stages in order (playbooks/<stage>.yml), for --per-stage.
STAGES = ["preflight", "system_deps", "npu_driver", "npu_network", "cann", "python_env", "mx_driving", "gr00t",
          "train", "summary"]


def write_cluster(count: int, image: str = "") -> tuple[Path, Path]:
    """A cluster file for simctl and an inventory for it, both under .sim/bench; with `image`,
    nodes started from that image (a converged node's snapshot)."""
    WORK.mkdir(parents=True, exist_ok=True)
    prefix = "s" if image else "b"
    nodes = [{"name": f"{prefix}{i}", "ssh_port": BASE_PORT + i, "driver": None, "kernel_headers": True, "state": {}}
             for i in range(1, count + 1)]
    cluster = WORK / f"cluster-{prefix}{count}.json"
    spec: dict[str, object] = {"name": f"bench{prefix}{count}", "nodes": nodes}
    if image:
        spec["image"] = image
    cluster.write_text(json.dumps(spec, indent=2))
    inventory = WORK / f"inventory-{prefix}{count}"
    (inventory / "group_vars").mkdir(parents=True, exist_ok=True)
    hosts = {"ascend_nodes": {"hosts": {n["name"]: {"ansible_host": "127.0.0.1", "ansible_port": n["ssh_port"]}
                                        for n in nodes}}}
    (inventory / "hosts.yml").write_text(yaml.safe_dump(hosts, sort_keys=False))
    sim_vars = yaml.safe_load((REPO / "inventories" / "sim" / "group_vars" / "all.yml").read_text())
    sim_vars["ansible_ssh_private_key_file"] = str(REPO / ".sim" / "ssh" / "id_ed25519")
    sim_vars["ascend_artifact_source"] = str(REPO / ".sim" / "artifacts")
    # The sim inventory finds the fixture GR00T commit relative to itself; this one lives elsewhere.
    sim_vars["gr00t_version"] = (REPO / ".sim" / "gr00t-fixtures" / "git" / "commits").read_text().split()[-1]
    # The device network has its own suite (molecule network); these nodes have no addresses.
    sim_vars["ascend_manage_npu_network"] = False
    (inventory / "group_vars" / "all.yml").write_text(yaml.safe_dump(sim_vars, sort_keys=False))
    return cluster, inventory


def children_cpu() -> float:
    """user+sys seconds of every child process waited for so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# ansible-playbook's environment: the project's settings, plus profile_tasks with --profile-tasks.
RUN_ENV = dict(os.environ)


def timed_run(inventory: Path, playbook: str = "site.yml") -> tuple[float, float, str]:
    """Wall seconds, controller CPU seconds and the output of one ansible-playbook run."""
    start, cpu = time.monotonic(), children_cpu()
    res = subprocess.run([str(PLAYBOOK_BIN), playbook, "-i", str(inventory)], cwd=REPO,
                         capture_output=True, text=True, check=False, env=RUN_ENV)
    elapsed, used = time.monotonic() - start, children_cpu() - cpu
    if res.returncode != 0:
        sys.stderr.write(res.stdout[-4000:] + res.stderr[-2000:])
        raise SystemExit(f"{playbook} failed on {inventory} (rc={res.returncode})")
    return elapsed, used, res.stdout


@contextmanager
def started(cluster: Path) -> Iterator[None]:
    """The cluster's nodes, started fresh and removed afterwards."""
    subprocess.run([*SIMCTL, "down", str(cluster)], check=True)
    subprocess.run([*SIMCTL, "up", str(cluster)], check=True)
    try:
        yield
    finally:
        subprocess.run([*SIMCTL, "down", str(cluster)], check=True)


def converged_rerun(inventory: Path, per_stage: bool, reruns: int = 1) -> tuple[float, float, str, dict[str, float]]:
    """site.yml on converged nodes `reruns` times (the median wall and controller CPU, the last
    output), then with per_stage the controller CPU of each stage's playbook alone."""
    runs = [timed_run(inventory) for dummy in range(reruns)]
    rerun, rerun_cpu = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
    stages = {stage: timed_run(inventory, f"playbooks/{stage}.yml")[1] for stage in STAGES} if per_stage else {}
    return rerun, rerun_cpu, runs[-1][2], stages


def bench(count: int, per_stage: bool, reruns: int) -> dict[str, object]:
    cluster, inventory = write_cluster(count)
    with started(cluster):
        first, first_cpu, dummy = timed_run(inventory)
        rerun = converged_rerun(inventory, per_stage, reruns)
    return summary(count, first, first_cpu, *rerun)


def summary(count: int, first: float, first_cpu: float, rerun: float, rerun_cpu: float, output: str,
            stages: dict[str, float]) -> dict[str, object]:
    hosts = recap(output)
    return {"nodes": count, "first_s": first, "rerun_s": rerun, "ratio": rerun / first if first else 0.0,
            "first_cpu_s": first_cpu, "rerun_cpu_s": rerun_cpu,
            "rerun_changed": sum(h["changed"] for h in hosts.values()),
            "rerun_ok_per_node": max(h["ok"] for h in hosts.values()),
            "rerun_skipped_per_node": max(h["skipped"] for h in hosts.values()),
            "rerun_tasks": tasks_run(output), "rerun_slowest": slowest(output), "stage_cpu_s": stages}


def snapshot() -> tuple[str, float, float]:
    """Converge one fresh node and commit it to an image; returns the image and the first run's
    wall and controller CPU seconds."""
    cluster, inventory = write_cluster(1)
    with started(cluster):
        first, first_cpu, dummy = timed_run(inventory)
        container = f"{json.loads(cluster.read_text())['name']}-b1"
        subprocess.run(["docker", "commit", container, SNAPSHOT_IMAGE], check=True, stdout=subprocess.DEVNULL)
    return SNAPSHOT_IMAGE, first, first_cpu


def bench_snapshot(count: int, image: str, first: float, first_cpu: float, per_stage: bool,
                   reruns: int) -> dict[str, object]:
    """Converged reruns on `count` nodes started from the snapshot."""
    cluster, inventory = write_cluster(count, image)
    with started(cluster):
        rerun = converged_rerun(inventory, per_stage, reruns)
    return summary(count, first, first_cpu, *rerun)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, nargs="+", default=[1])
    parser.add_argument("--per-stage", action="store_true", help="controller CPU of each stage on a converged rerun")
    parser.add_argument("--snapshot", action="store_true",
                        help="provision one node and start every size from its snapshot (converged reruns only)")
    parser.add_argument("--reruns", type=int, default=1,
                        help="converged reruns per size; their median is reported (the first after a start is the "
                             "slowest: the node containers are cold)")
    parser.add_argument("--profile-tasks", action="store_true",
                        help="also list the slowest tasks (profile_tasks; adds to the controller CPU)")
    args = parser.parse_args()
    if args.profile_tasks:
        RUN_ENV["ANSIBLE_CALLBACKS_ENABLED"] = "ansible.posix.profile_tasks,ascendops.gr00t.preload"
    subprocess.run([*SIMCTL, "engine"], check=True)
    if args.snapshot:
        image, first, first_cpu = snapshot()
        rows = [bench_snapshot(n, image, first, first_cpu, args.per_stage, args.reruns) for n in args.nodes]
    else:
        rows = [bench(n, args.per_stage, args.reruns) for n in args.nodes]
    print(f"{'nodes':>5}  {'first run':>10}  {'rerun':>8}  {'rerun/first':>11}  {'rerun changed':>13}"
          f"  {'rerun CPU':>9}  {'CPU/node':>8}  {'ok/node':>7}  {'skipped/node':>12}")
    for row in rows:
        print(f"{row['nodes']:>5}  {row['first_s']:>9.1f}s  {row['rerun_s']:>7.1f}s  {row['ratio']:>11.2f}"
              f"  {row['rerun_changed']:>13}  {row['rerun_cpu_s']:>8.1f}s  {row['rerun_cpu_s'] / row['nodes']:>7.1f}s"
              f"  {row['rerun_ok_per_node']:>7}  {row['rerun_skipped_per_node']:>12}")
    if len(rows) > 1:
        low, high = rows[0], rows[-1]
        marginal = (high["rerun_cpu_s"] - low["rerun_cpu_s"]) / (high["nodes"] - low["nodes"])
        print(f"rerun controller CPU per added node ({low['nodes']} -> {high['nodes']} nodes): {marginal:.1f}s")
        if not args.snapshot:  # one first run serves every size of a snapshot bench
            print(f"first run {high['nodes']} nodes / {low['nodes']} node: {high['first_s'] / low['first_s']:.2f}x")
    for row in rows:
        if row["stage_cpu_s"]:
            print(f"controller CPU per stage, converged, {row['nodes']} node(s) (each playbook alone):")
            for stage, seconds in row["stage_cpu_s"].items():
                print(f"  {seconds:>6.1f}s  {stage}")
        if row["rerun_slowest"]:
            print(f"slowest tasks of the {row['nodes']}-node rerun:")
        for name, seconds in row["rerun_slowest"]:
            print(f"  {seconds:>6.1f}s  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
