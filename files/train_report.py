#!/usr/bin/env python3
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Controller-side training report: a PNG of loss and grad norm over steps, and a JSON summary.

    train_report.py --png out.png --json out.json --global-batch-size 640 --warmup-steps 10 \
        node1=/path/node1.log node2=/path/node2.log

The numbers come from the collection's log parser (plugins/module_utils/train_log.py), the
same code the nodes run, so status, performance script and report always agree.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins" / "module_utils"))

from train_log import summarize  # noqa: E402  (path set above)


def summaries(logs: dict[str, Path], global_batch_size: int, warmup_steps: int,
              max_steps: Optional[int]) -> dict[str, dict]:
    return {node: summarize(path.read_text(encoding="utf-8", errors="replace") if path.exists() else "",
                            global_batch_size, warmup_steps, max_steps)
            for node, path in logs.items()}


def render_png(nodes: dict[str, dict], out: Path, title: str) -> None:
    """Loss and grad norm over steps, one line per node that logged steps."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_loss, ax_grad) = plt.subplots(2, 1, sharex=True, figsize=(9, 6), dpi=100)
    for node, summary in sorted(nodes.items()):
        series = summary["series"]
        for axis, key in ((ax_loss, "loss"), (ax_grad, "grad_norm")):
            points = [(s["step"], s[key]) for s in series if s[key] is not None]
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
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, format="png")
    plt.close(fig)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("logs", nargs="+", help="NODE=LOGFILE")
    parser.add_argument("--png", type=Path, required=True)
    parser.add_argument("--json", dest="json_out", type=Path, required=True)
    parser.add_argument("--global-batch-size", type=int, required=True)
    parser.add_argument("--warmup-steps", type=int, default=10)
    parser.add_argument("--max-steps", type=int)
    parser.add_argument("--title", default="GR00T training")
    args = parser.parse_args(argv)
    logs = {}
    for item in args.logs:
        node, sep, path = item.partition("=")
        if not sep:
            parser.error("expected NODE=LOGFILE, got {0!r}".format(item))
        logs[node] = Path(path)
    nodes = summaries(logs, args.global_batch_size, args.warmup_steps, args.max_steps)
    render_png(nodes, args.png, args.title)
    args.json_out.parent.mkdir(parents=True, exist_ok=True)
    args.json_out.write_text(json.dumps({"png": str(args.png), "nodes": nodes}, indent=2, sort_keys=True))
    print(args.png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
