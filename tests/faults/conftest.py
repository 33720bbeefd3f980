"""Print the fault table the suite writes, so it is in the log of every run."""
from __future__ import annotations

from pathlib import Path

import pytest

REPORT = Path(__file__).resolve().parents[2] / ".sim" / "faults" / "report.md"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if REPORT.is_file():
        terminalreporter.write_sep("=", "fault table")
        terminalreporter.write_line(REPORT.read_text())
