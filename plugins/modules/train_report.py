#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: train_report
short_description: Render a GR00T training report (loss and grad norm plot, JSON summary) from fetched logs
version_added: "0.1.0"
description:
  - Reads the training logs of the run's nodes, as fetched to the controller, with the
    collection's log parser (the code the nodes' status and FPS report run), and writes a PNG
    of loss and grad norm over steps (one line per node) and a JSON summary per node.
  - Meant to run on the controller (delegated to C(localhost) with the controller's Python,
    which needs matplotlib). A file is written only when its content differs (the same logs
    render the same bytes), so a report of a finished run reports no change.
  - In check mode it writes nothing and reports whether it would.
author:
  - ascendops.gr00t maintainers (@ascendops)
requirements:
  - matplotlib (on the host it runs on)
options:
  logs:
    description: Node name to the path of its fetched log; a missing file counts as a node with no steps yet.
    type: dict
    required: true
  png:
    description: Path of the plot to write; its directory is made when missing.
    type: path
    required: true
  json:
    description: Path of the JSON summary to write; its directory is made when missing.
    type: path
    required: true
  global_batch_size:
    description: Samples per step across the cluster, for the throughput.
    type: int
    required: true
  warmup_steps:
    description: Steps left out of the throughput.
    type: int
    default: 10
  max_steps:
    description: Steps of the run, for the ETA; none when unknown.
    type: int
  title:
    description: Title of the plot.
    type: str
    default: GR00T training
extends_documentation_fragment:
  - ascendops.gr00t.attributes
attributes:
  check_mode:
    support: partial
    details: Reports a change and writes nothing.
"""

EXAMPLES = r"""
- name: Render the report on the controller
  ascendops.gr00t.train_report:
    logs:
      node1: reports/train/run-1/node1.log
      node2: reports/train/run-1/node2.log
    png: reports/train/run-1/train.png
    json: reports/train/run-1/train.json
    global_batch_size: 640
    warmup_steps: 10
  delegate_to: localhost
  vars:
    ansible_python_interpreter: "{{ ansible_playbook_python }}"
  run_once: true
"""

RETURN = r"""
nodes:
  description: Per node, the log parser's summary (last step, loss, grad norm, throughput, ETA, series).
  returned: always
  type: dict
  sample: {"node1": {"last_step": 120, "loss": 0.41, "samples_per_second": 80.0}}
png:
  description: Path of the plot.
  returned: always
  type: str
  sample: reports/train/run-1/train.png
"""

import io
import json
import os
from typing import Optional

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ascendops.gr00t.plugins.module_utils.train_log import summarize
from ansible_collections.ascendops.gr00t.plugins.module_utils.train_run import read_text


def summaries(logs: dict[str, str], global_batch_size: int, warmup_steps: int,
              max_steps: Optional[int]) -> dict[str, dict]:
    return {node: summarize(read_text(path), global_batch_size, warmup_steps, max_steps)
            for node, path in logs.items()}


def render_png(nodes: dict[str, dict], title: str) -> bytes:
    """Loss and grad norm over steps, one line per node that logged steps, as PNG bytes (the
    same logs give the same bytes)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_loss, ax_grad) = plt.subplots(2, 1, sharex=True, figsize=(9, 6), dpi=100)
    for node, summary in sorted(nodes.items()):
        for axis, key in ((ax_loss, "loss"), (ax_grad, "grad_norm")):
            points = [(s["step"], s[key]) for s in summary["series"] if s[key] is not None]
            if points:
                axis.plot(*zip(*points), marker=".", label=node)
    ax_loss.set_ylabel("loss")
    ax_grad.set_ylabel("grad norm")
    ax_grad.set_xlabel("step")
    for axis in (ax_loss, ax_grad):
        axis.grid(True, alpha=0.3)
        if axis.get_legend_handles_labels()[0]:
            axis.legend(loc="upper right")
        else:
            axis.text(0.5, 0.5, "no steps logged yet", transform=axis.transAxes, ha="center")
    fig.suptitle(title)
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="png")
    plt.close(fig)
    return out.getvalue()


def differs(path: str, data: bytes) -> bool:
    """Whether the file at `path` is missing or holds other bytes."""
    try:
        with open(path, "rb") as current:
            return current.read() != data
    except FileNotFoundError:
        return True


def write(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "wb") as out:
        out.write(data)


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "logs": {"type": "dict", "required": True},
            "png": {"type": "path", "required": True},
            "json": {"type": "path", "required": True},
            "global_batch_size": {"type": "int", "required": True},
            "warmup_steps": {"type": "int", "default": 10},
            "max_steps": {"type": "int"},
            "title": {"type": "str", "default": "GR00T training"},
        },
        supports_check_mode=True,
    )
    params = module.params
    nodes = summaries({str(node): str(path) for node, path in params["logs"].items()},
                      params["global_batch_size"], params["warmup_steps"], params["max_steps"])
    try:
        png = render_png(nodes, params["title"])
    except ImportError as exc:
        module.fail_json(msg=f"The plot needs matplotlib in the Python this runs with ({exc}): "
                             "pip install matplotlib into the controller's Ansible environment.")
    report = json.dumps({"png": params["png"], "nodes": nodes}, indent=2, sort_keys=True).encode()
    # Rewritten only when the logs say something new: a report of a finished run is changed=0.
    stale = [(path, data) for path, data in ((params["png"], png), (params["json"], report)) if differs(path, data)]
    if not module.check_mode:
        for path, data in stale:
            write(path, data)
    module.exit_json(changed=bool(stale), nodes=nodes, png=params["png"])


if __name__ == "__main__":
    main()
