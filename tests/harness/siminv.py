"""Inventories and clusters of simulated nodes for the pytest suites that run playbooks
(tests/installed, tests/secrets): the demo inventory's settings, reached over SSH."""
from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
SIMCTL = [sys.executable, str(REPO / "tests" / "harness" / "simctl.py")]
ARTIFACTS = REPO / ".sim" / "artifacts"


def inventory(nodes: dict[str, int], **overrides: Any) -> dict:
    """An inventory of `nodes` (name -> SSH port on loopback) with the sim group vars."""
    group_vars = yaml.safe_load((REPO / "inventories" / "sim" / "group_vars" / "all.yml").read_text())
    group_vars.update(
        ansible_ssh_private_key_file=str(REPO / ".sim" / "ssh" / "id_ed25519"),
        ascend_artifact_source=str(ARTIFACTS),
        gr00t_version=(REPO / ".sim" / "gr00t-fixtures" / "git" / "commits").read_text().split()[-1],
        # The device network has its own suite (molecule network); these nodes have no addresses.
        ascend_manage_npu_network=False,
    )
    group_vars.update(overrides)
    hosts = {name: {"ansible_host": "127.0.0.1", "ansible_port": port} for name, port in nodes.items()}
    return {"all": {"vars": group_vars, "children": {"ascend_nodes": {"hosts": hosts}}}}


@contextmanager
def cluster(workdir: Path, name: str, nodes: dict[str, int]) -> Iterator[Path]:
    """Simulated nodes with the driver installed, started fresh and removed afterwards."""
    spec = workdir / f"{name}.json"
    spec.write_text(json.dumps({"name": name, "nodes": [
        {"name": node, "ssh_port": port, "driver": "25.5.1", "kernel_headers": True, "state": {}}
        for node, port in nodes.items()]}))
    subprocess.run([*SIMCTL, "down", str(spec)], check=True)
    subprocess.run([*SIMCTL, "up", str(spec), "--artifacts", str(ARTIFACTS)], check=True)
    try:
        yield spec
    finally:
        subprocess.run([*SIMCTL, "down", str(spec)], check=False)
