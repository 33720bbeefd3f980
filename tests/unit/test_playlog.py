"""The benchmark and the fault suite read ansible-playbook's output through tests/harness/playlog.py."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import playlog  # noqa: E402 (path set just above)

OUTPUT = """\
TASK [ascendops.gr00t.artifact : Artifact | Wait for the installer to finish] ***
FAILED - RETRYING: [n2]: Artifact | Wait for the installer to finish (720 retries left).
fatal: [n2]: FAILED! =>\x20
    changed: false
    msg: non-zero return code
    rc: 1
    stderr: 'head: error writing ''standard output'': No space left on device'
ok: [n1]

TASK [ascendops.gr00t.artifact : Artifact | Explain the failed installer] ******
fatal: [n2]: FAILED! =>\x20
    changed: false
    msg: 'The CANN toolkit installer Ascend-cann-toolkit_9.0.0_linux-x86_64.run failed
        on n2 (rc=1). The disk filled up while it ran: free space on /usr/local/Ascend.'
fatal: [n3]: UNREACHABLE! =>\x20
    changed: false
    msg: 'Failed to connect to the host via ssh: Connection refused'
    unreachable: true

TASK [ascendops.gr00t.cann : CANN | Report the plan for toolkit] **************
ok: [n1] =>\x20
    msg: 'toolkit: install - -> 9.0.0 (repairing the interrupted install in /usr/local/Ascend/cann-9.0.0)'

PLAY RECAP *********************************************************************
\x1b[0;33mn1\x1b[0m                      : ok=72   changed=8    unreachable=0    failed=0    skipped=10
n2                         : ok=70   changed=1    unreachable=0    failed=1    skipped=10
n3                         : ok=12   changed=1    unreachable=1    failed=0    skipped=2

===============================================================================
ascendops.gr00t.gr00t : GR00T | Work out what pip must install ---------- 3.08s
ascendops.gr00t.artifact : Artifact | Wait for the installer to finish --- 12.51s
Gathering Facts --------------------------------------------------------- 1.20s
"""


def test_recap_counts_every_host() -> None:
    assert playlog.recap(OUTPUT) == {
        "n1": {"ok": 72, "changed": 8, "unreachable": 0, "failed": 0, "skipped": 10},
        "n2": {"ok": 70, "changed": 1, "unreachable": 0, "failed": 1, "skipped": 10},
        "n3": {"ok": 12, "changed": 1, "unreachable": 1, "failed": 0, "skipped": 2},
    }


def test_failure_message_is_the_last_explanation() -> None:
    msg = playlog.failure_message(OUTPUT, "n2")
    assert msg.startswith("The CANN toolkit installer") and msg.endswith("free space on /usr/local/Ascend.")
    assert "Connection refused" in playlog.failure_message(OUTPUT, "n3")
    assert playlog.failure_message(OUTPUT, "n1") == "(no failure)"


def test_results_are_per_host_and_one_line() -> None:
    blocks = playlog.results(OUTPUT, "n1")
    assert len(blocks) == 2 and "repairing the interrupted install" in blocks[1]
    assert playlog.results(OUTPUT, "n1", "fatal") == []


def test_changed_tasks_are_named_per_host() -> None:
    output = OUTPUT.replace("ok: [n1] =>\x20", "changed: [n1] =>\x20") + (
        "TASK [ascendops.gr00t.cann : CANN | Write the [login] snippet] ***\n\x1b[0;33mchanged: [n1]\x1b[0m\n"
        "ok: [n2]\n")
    assert playlog.changed_tasks(output, "n1") == [
        "ascendops.gr00t.cann : CANN | Report the plan for toolkit",
        "ascendops.gr00t.cann : CANN | Write the [login] snippet",
    ]
    assert playlog.changed_tasks(output, "n2") == []


def test_recap_of_no_run_is_empty() -> None:
    assert playlog.recap("ERROR! the playbook could not be found") == {}


def test_tasks_run_counts_banners_once() -> None:
    assert playlog.tasks_run(OUTPUT) == 3


def test_slowest_reads_profile_tasks_in_order() -> None:
    assert playlog.slowest(OUTPUT, 2) == [
        ("ascendops.gr00t.artifact : Artifact | Wait for the installer to finish", 12.51),
        ("ascendops.gr00t.gr00t : GR00T | Work out what pip must install", 3.08),
    ]
    assert playlog.slowest("PLAY RECAP") == []


def test_last_failure_names_the_task_and_every_host_that_failed_it() -> None:
    framed = "\n".join("  \u2502 " + line for line in (
        "TASK [Verify | Keep the refusal] ***",
        "ok: [n1]",
        "TASK [Verify | Assert the failure names the closed node] ***",
        "fatal: [n1]: FAILED! => ",
        "    assertion: __check_failure is defined",
        "    msg: no failure: the check passed",
        "ok: [n2]",
        "PLAY RECAP ***",
        "n1                         : ok=5   changed=0    unreachable=0    failed=1    skipped=0",
        "n2                         : ok=6   changed=0    unreachable=0    failed=0    skipped=0",
    ))
    assert playlog.last_failure(OUTPUT + framed) == "\n".join([
        "TASK [Verify | Assert the failure names the closed node] ***",
        "fatal: [n1]: FAILED! => ",
        "    assertion: __check_failure is defined",
        "    msg: no failure: the check passed",
        "n1: failed=1 unreachable=0",
    ])
    assert playlog.last_failure("TASK [x] ***\nok: [n1]\n") == "(no failed task in the log)"


def test_last_failure_of_a_failed_verifier_shows_pytests_error_and_summary() -> None:
    framed = "".join("  \u2502 " + line + "\n" for line in [
        "tests/test_entry_points.py::test_form[site.yml] FAILED [ 29%]",
        "E       AssertionError: rc=2",
        "E         Error while evaluating conditional: '__x' is undefined",
        "=========================== short test summary info ============================",
        "FAILED tests/test_entry_points.py::test_form[site.yml]",
        "========================= 1 failed, 5 passed in 80.01s =========================",
    ])
    assert playlog.last_failure(framed) == "\n".join([
        "E       AssertionError: rc=2",
        "E         Error while evaluating conditional: '__x' is undefined",
        "FAILED tests/test_entry_points.py::test_form[site.yml]",
        "========================= 1 failed, 5 passed in 80.01s =========================",
    ])
