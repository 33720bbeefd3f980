#!/usr/bin/env python3
"""Provisioning benchmark on simulated nodes (a script, not a timed test).

For each cluster size: start that many fresh simulated nodes, run site.yml (first run),
run it again (rerun), and print wall times, the rerun/first ratio, the changed tasks
and task count of the rerun, and its slowest tasks (from profile_tasks).
Goals: rerun <= 20% of the first run with changed=0; N nodes <= 1.5x one.

  .venv/bin/python tests/bench/provision_bench.py --nodes 1 4
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "harness"))
from playlog import recap, slowest, tasks_run  # noqa: E402 (path set just above)

SIMCTL = [sys.executable, str(REPO / "tests" / "harness" / "simctl.py")]
WORK = REPO / ".sim" / "bench"
BASE_PORT = 22300


def write_cluster(count: int) -> tuple[Path, Path]:
    """A cluster file for simctl and an inventory for it, both under .sim/bench."""
    WORK.mkdir(parents=True, exist_ok=True)
    nodes = [{"name": f"b{i}", "ssh_port": BASE_PORT + i, "driver": None, "kernel_headers": True, "state": {}}
             for i in range(1, count + 1)]
    cluster = WORK / f"cluster-{count}.json"
    cluster.write_text(json.dumps({"name": f"bench{count}", "nodes": nodes}, indent=2))
    inventory = WORK / f"inventory-{count}"
    (inventory / "group_vars").mkdir(parents=True, exist_ok=True)
    hosts = {"ascend_nodes": {"hosts": {n["name"]: {"ansible_host": "127.0.0.1", "ansible_port": n["ssh_port"]}
                                        for n in nodes}}}
    (inventory / "hosts.yml").write_text(yaml.safe_dump(hosts, sort_keys=False))
    sim_vars = yaml.safe_load((REPO / "inventories" / "sim" / "group_vars" / "all.yml").read_text())
    sim_vars["ansible_ssh_private_key_file"] = str(REPO / ".sim" / "ssh" / "id_ed25519")
    sim_vars["ascend_artifact_source"] = str(REPO / ".sim" / "artifacts")
    # The sim inventory finds the fixture GR00T commit relative to itself; this one lives elsewhere.
    sim_vars["gr00t_version"] = (REPO / ".sim" / "gr00t-fixtures" / "git" / "commits").read_text().split()[-1]
    (inventory / "group_vars" / "all.yml").write_text(yaml.safe_dump(sim_vars, sort_keys=False))
    return cluster, inventory


def timed_run(inventory: Path) -> tuple[float, str]:
    start = time.monotonic()
    res = subprocess.run(["ansible-playbook", "site.yml", "-i", str(inventory)], cwd=REPO,
                         capture_output=True, text=True, check=False)
    elapsed = time.monotonic() - start
    if res.returncode != 0:
        sys.stderr.write(res.stdout[-4000:] + res.stderr[-2000:])
        raise SystemExit(f"site.yml failed on {inventory} (rc={res.returncode})")
    return elapsed, res.stdout


def bench(count: int) -> dict[str, object]:
    cluster, inventory = write_cluster(count)
    subprocess.run([*SIMCTL, "down", str(cluster)], check=True)
    subprocess.run([*SIMCTL, "up", str(cluster)], check=True)
    try:
        first, dummy = timed_run(inventory)
        rerun, output = timed_run(inventory)
    finally:
        subprocess.run([*SIMCTL, "down", str(cluster)], check=True)
    return {"nodes": count, "first_s": first, "rerun_s": rerun, "ratio": rerun / first,
            "rerun_changed": sum(h["changed"] for h in recap(output).values()),
            "rerun_tasks": tasks_run(output), "rerun_slowest": slowest(output)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, nargs="+", default=[1])
    args = parser.parse_args()
    subprocess.run([*SIMCTL, "engine"], check=True)
    rows = [bench(n) for n in args.nodes]
    print(f"{'nodes':>5}  {'first run':>10}  {'rerun':>8}  {'rerun/first':>11}  {'rerun changed':>13}"
          f"  {'rerun tasks':>11}")
    for row in rows:
        print(f"{row['nodes']:>5}  {row['first_s']:>9.1f}s  {row['rerun_s']:>7.1f}s  {row['ratio']:>11.2f}"
              f"  {row['rerun_changed']:>13}  {row['rerun_tasks']:>11}")
    for row in rows:
        print(f"slowest tasks of the {row['nodes']}-node rerun:")
        for name, seconds in row["rerun_slowest"]:
            print(f"  {seconds:>6.1f}s  {name}")
    if len(rows) > 1:
        print(f"first run {rows[-1]['nodes']} nodes / {rows[0]['nodes']} node: "
              f"{rows[-1]['first_s'] / rows[0]['first_s']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
