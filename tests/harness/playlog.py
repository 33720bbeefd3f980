"""Read ansible-playbook output (default callback): the PLAY RECAP and per-host results.

Shared by the provisioning benchmark and the fault-injection suite. Run as a script, it prints the
last failed task of a saved log (`playlog.py last-failure LOG`): `make molecule` ends a failed
scenario with it, so the end of the test output says which check failed and why.
"""
from __future__ import annotations

import re
import sys
import textwrap

import yaml

RECAP = re.compile(r"^(\S+)\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)\s+skipped=(\d+)", re.M)
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# profile_tasks' closing list: "<role> : <task> ------- 12.34s", slowest first.
PROFILE = re.compile(r"^(\S.*?) -{3,} (\d+\.\d+)s$", re.M)
TASK = re.compile(r"^TASK \[", re.M)
# molecule frames each line of ansible-playbook's output: "  │ TASK [...]".
FRAME = re.compile(r"^ *\u2502 ?", re.M)
# pytest's last line: "===== 1 failed, 33 passed in 150.20s =====".
PYTEST_TOTALS = re.compile(r"^=+ .*\b(failed|passed|error)")


def recap(output: str) -> dict[str, dict[str, int]]:
    """Per-host counts from the PLAY RECAP of an ansible-playbook run."""
    return {host: {"ok": int(ok), "changed": int(changed), "unreachable": int(unreachable), "failed": int(failed),
                   "skipped": int(skipped)}
            for host, ok, changed, unreachable, failed, skipped in RECAP.findall(ANSI.sub("", output))}


def tasks_run(output: str) -> int:
    """How many tasks the run started (each TASK banner once, whatever the host count)."""
    return len(TASK.findall(ANSI.sub("", output)))


def slowest(output: str, limit: int = 5) -> list[tuple[str, float]]:
    """The slowest tasks from profile_tasks' closing list, as (name, seconds)."""
    rows = [(name, float(seconds)) for name, seconds in PROFILE.findall(ANSI.sub("", output))]
    return sorted(rows, key=lambda row: row[1], reverse=True)[:limit]


def _blocks(output: str, host: str | None, status: str) -> list[str]:
    """The result blocks of `host` (of any host when None) with one of the statuses."""
    text = ANSI.sub("", output) + "\n."
    name = re.escape(host) if host is not None else r"[^\]]+"
    return re.findall(rf"^(?:{status}): \[{name}\].*?\n(?=\S)", text, re.M | re.S)


def results(output: str, host: str, status: str = r"\w+") -> list[str]:
    """Each result block of `host` (`ok: [host] => ...` and its indented lines), on one line each."""
    return [" ".join(block.split()) for block in _blocks(output, host, status)]


def changed_tasks(output: str, host: str) -> list[str]:
    """The tasks (`<role> : <name>`) that reported `changed: [host]`, in order."""
    found, task = [], ""
    for line in ANSI.sub("", output).splitlines():
        if TASK.match(line):
            task = line[len("TASK ["):].rsplit("]", 1)[0]
        elif line.startswith(f"changed: [{host}]"):
            found.append(task)
    return found


def failure_message(output: str, host: str) -> str:
    """The msg of the last failure of `host`: a role's explanation follows the raw failure.

    The result under the `fatal: [host]: ... =>` line is YAML (callback_result_format = yaml).
    """
    blocks = _blocks(output, host, "fatal|failed")
    if not blocks:
        return "(no failure)"
    body = textwrap.dedent(blocks[-1].split("\n", 1)[1])
    try:
        data = yaml.safe_load(body)
    except yaml.YAMLError:
        data = None
    if isinstance(data, dict) and "msg" in data:
        return " ".join(str(data["msg"]).split())
    return " ".join(blocks[-1].split())


def last_failure(output: str) -> str:
    """The last task that failed on some host: its banner, every host's failure under it and the
    recap lines of the hosts that failed. Rescued failures count too (the refusals a test expects);
    the last one is the one that ended the run when the run failed."""
    text = FRAME.sub("", ANSI.sub("", output))
    banners = [m.start() for m in TASK.finditer(text)]
    for start, end in reversed(list(zip(banners, banners[1:] + [len(text)]))):
        section = text[start:end]
        failures = _blocks(section, None, "fatal|failed")
        if failures:
            counts = recap(text[start:])
            failed_hosts = [f"{host}: failed={c['failed']} unreachable={c['unreachable']}"
                            for host, c in counts.items() if c["failed"] or c["unreachable"]]
            return "\n".join([section.splitlines()[0], *(block.rstrip() for block in failures), *failed_hosts])
    return pytest_failure(text) or "(no failed task in the log)"


def pytest_failure(text: str, most: int = 25) -> str:
    """A failed verifier (testinfra) instead: the first lines of pytest's error (`E ` lines) and
    its short summary, which names the test."""
    errors = [line.rstrip() for line in text.splitlines() if line.startswith("E ")][:most]
    start = text.rfind("short test summary info")
    summary: list[str] = []
    for line in text[start:].splitlines()[1:most] if start >= 0 else []:
        summary.append(line.rstrip())
        if PYTEST_TOTALS.match(line):
            break
    return "\n".join(errors + summary).strip()


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "last-failure":
        sys.exit("usage: playlog.py last-failure LOG")
    with open(sys.argv[2], encoding="utf-8", errors="replace") as fh:
        print(last_failure(fh.read()))
