# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Throughput of a GR00T training log, for the performance script on rank 0.

    train_fps.py LOG --global-batch-size N --warmup-steps W [--max-steps M] [--json OUT]

Prints the FPS line and exits 1 when no step after the warm-up was timed. The numbers come
from the collection's log parser (train_log.py), which the train role installs beside this
script (module ascendops.gr00t.train_log_parser).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))

from train_log import summarize  # noqa: E402  (path set above)


def main(argv: Optional[list[str]] = None) -> int:
    """Print the FPS of the log; 0 when there is one, 1 when no step after the warm-up was timed."""
    parser = argparse.ArgumentParser(description="Throughput of a GR00T training log.")
    parser.add_argument("log")
    parser.add_argument("--global-batch-size", type=int, required=True)
    parser.add_argument("--warmup-steps", type=int, default=10)
    parser.add_argument("--max-steps", type=int)
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args(argv)
    with open(args.log, encoding="utf-8", errors="replace") as fh:
        summary = summarize(fh.read(), args.global_batch_size, args.warmup_steps, args.max_steps)
    summary.pop("series")
    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as fh:
            json.dump(summary, fh, indent=2, sort_keys=True)
    fps = summary["samples_per_second"]
    if fps is None:
        print("FPS: no timed step after the {0} warm-up steps".format(args.warmup_steps))
        return 1
    print("FPS: {0:.2f} samples/s (global batch {1}, mean step {2:.3f} s over steps > {3})".format(
        fps, args.global_batch_size, summary["mean_step_time"], args.warmup_steps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
