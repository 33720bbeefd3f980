"""Run molecule scenarios in lanes: the scenarios of a lane one after the other, the lanes side by side.

A scenario's controller and nodes wait on each other much of the time; beside another, each
scenario takes longer, but on 2 cores the eight took 36 minutes in two lanes against 42.5 one
after the other. Each scenario's
output goes to .sim/logs/molecule-<scenario>.log; this prints one line per scenario as it ends
and, for a failed one, its last failed task (playlog.py), so the end of the output says which
check failed and why. A lane stops at its first failed scenario; the other lane finishes the
scenario it is in and starts no more.

  python tests/harness/molecule_lanes.py "train network" "default cann_faults gr00t"
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "harness"))
from playlog import last_failure  # noqa: E402 (path set just above)

LOGS = REPO / ".sim" / "logs"


def parse_lanes(specs: list[str]) -> list[list[str]]:
    """Each argument is one lane: scenario names separated by spaces or commas. A scenario may
    be in one lane only (two runs of it would share its containers)."""
    lanes = [lane for lane in (spec.replace(",", " ").split() for spec in specs) if lane]
    seen: set[str] = set()
    for lane in lanes:
        for name in lane:
            if name in seen:
                raise SystemExit(f"scenario {name} is in more than one lane")
            seen.add(name)
    return lanes


class Lanes:
    def __init__(self, lanes: list[list[str]]) -> None:
        self.lanes = lanes
        self.failed: list[str] = []
        self.lock = threading.Lock()

    def say(self, line: str) -> None:
        with self.lock:
            print(line, flush=True)

    def run_lane(self, number: int, scenarios: list[str]) -> None:
        for name in scenarios:
            if self.failed:
                self.say(f"[lane {number}] {name}: not started (a scenario failed)")
                return
            log = LOGS / f"molecule-{name}.log"
            self.say(f"[lane {number}] {name}: started (output in {log.relative_to(REPO)})")
            start = time.monotonic()
            with open(log, "w", encoding="utf-8") as out:
                rc = subprocess.run(["molecule", "test", "-s", name], cwd=REPO, stdout=out,
                                    stderr=subprocess.STDOUT, check=False).returncode
            took = time.monotonic() - start
            if rc == 0:
                self.say(f"[lane {number}] {name}: passed in {took:.0f} s")
                continue
            with self.lock:
                self.failed.append(name)
            self.say(f"[lane {number}] {name}: FAILED (rc={rc}) after {took:.0f} s")
            return

    def run(self) -> int:
        LOGS.mkdir(parents=True, exist_ok=True)
        threads = [threading.Thread(target=self.run_lane, args=(number, lane))
                   for number, lane in enumerate(self.lanes, start=1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for name in self.failed:
            log = LOGS / f"molecule-{name}.log"
            print(f"=== molecule scenario {name} failed; its last failed task (full log: {log}):")
            print(last_failure(log.read_text(encoding="utf-8", errors="replace")))
        return 1 if self.failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("lanes", nargs="+", help="one argument per lane: its scenarios in order")
    args = parser.parse_args(argv)
    if not os.environ.get("SIM_IMAGE"):
        raise SystemExit("SIM_IMAGE is not set: run through `make molecule`, which sets it")
    return Lanes(parse_lanes(args.lanes)).run()


if __name__ == "__main__":
    sys.exit(main())
