"""Run an Ansible module's main() in-process, as the controller would invoke it."""
from __future__ import annotations

import json
from typing import Callable

import pytest
from ansible.module_utils import _internal, basic
from ansible.module_utils.common import warnings as module_warnings


def run_module(main: Callable[[], None], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
               args: dict) -> dict:
    """Run `main` with `args` as module arguments; return the JSON result it printed."""
    monkeypatch.setattr(basic, "_ANSIBLE_ARGS", json.dumps({"ANSIBLE_MODULE_ARGS": args}).encode())
    # ansible-core 2.19 also wants the serialization profile the controller would send.
    monkeypatch.setattr(basic, "_ANSIBLE_PROFILE", "legacy", raising=False)
    # A module runs apart from the controller: once a test imports controller code (filters),
    # warnings would go to the display instead of the result. Each run also starts with no
    # warnings kept from an earlier one, as a real module process does.
    monkeypatch.setattr(_internal, "is_controller", False)
    monkeypatch.setattr(module_warnings, "_global_warnings", {})
    monkeypatch.setattr(module_warnings, "_global_deprecations", {}, raising=False)
    with pytest.raises(SystemExit):
        main()
    return json.loads(capsys.readouterr().out)
