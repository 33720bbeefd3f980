"""The benchmark reads changed counts from ansible-playbook's PLAY RECAP."""
import importlib.util
from pathlib import Path

SPEC = importlib.util.spec_from_file_location(
    "provision_bench", Path(__file__).resolve().parents[1] / "bench" / "provision_bench.py")
bench = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(bench)

RECAP_TEXT = """
PLAY RECAP *********************************************************************
\x1b[0;33mnode1\x1b[0m                      : \x1b[0;32mok=72  \x1b[0m \x1b[0;33mchanged=8   \x1b[0m unreachable=0    failed=0    skipped=10   rescued=0    ignored=0
node2                      : ok=70   changed=0    unreachable=0    failed=1    skipped=10   rescued=0    ignored=0
"""


def test_recap_reads_every_host_through_colour_codes():
    assert bench.recap(RECAP_TEXT) == {
        "node1": {"ok": 72, "changed": 8, "unreachable": 0, "failed": 0},
        "node2": {"ok": 70, "changed": 0, "unreachable": 0, "failed": 1},
    }


def test_recap_of_no_run_is_empty():
    assert bench.recap("ERROR! the playbook could not be found") == {}
