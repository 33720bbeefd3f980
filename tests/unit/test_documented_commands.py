"""Every ansible-playbook command in README.md and docs/ is one a test runs.

The forms molecule `default` runs on its converged node are FORMS in its entry-point test;
the others are listed here with the test that runs them or the reason none can.
"""
from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
ENTRY_POINTS = REPO / "molecule" / "default" / "tests" / "test_entry_points.py"

# (playbook, options) -> where it runs. Options are normalised by `form`.
ELSEWHERE: dict[tuple[str, tuple[str, ...]], str] = {
    ("site.yml", ()): "molecule default: converge and idempotence",
    ("site.yml", ("--check", "--diff")): "molecule default: the check steps, on a new and a converged node",
    ("playbooks/train.yml", ()): "molecule train: converge, idempotence and check",
    ("playbooks/train.yml", ("-e", "train_mode=performance")):
        "tests/unit/test_train_templates.py renders the performance run; molecule train runs the launch",
    ("playbooks/train_status.yml", ()): "molecule train verify.yml: the status tasks of the train role",
    ("playbooks/train_status.yml", ("-e", "train_status_wait=3600")):
        "molecule train verify.yml: the status tasks wait for the performance run; make demo runs the playbook",
    ("playbooks/train_stop.yml", ()): "molecule train verify.yml: the stop tasks of the train role",
    ("ascendops.gr00t.site", ()): "tests/installed: ascendops.gr00t.site --tags preflight from the installed tarball",
    ("ascendops.gr00t.train_status", ()): "tests/installed: from the installed tarball, report in the project",
    ("playbooks/cluster_check.yml", ()):
        "molecule train verify.yml: the cluster_check tasks of the train role, passing and with a node closed",
    ("playbooks/bundle.yml", ("-e", "bundle_dir", "-e", "bundle_vendor_dir", "-e", "gr00t_version", "-e",
                              "bundle_pip_python")):
        "not runnable here: it downloads from Huawei, PyPI and GitHub; tests/unit/test_bundle.py covers its logic",
    ("playbooks/bundle_check.yml", ()): "tests/unit/test_bundle.py runs the bundle_check module it calls",
    ("playbooks/npu_network.yml", ()): "molecule network: converge, idempotence, and every fault round",
    ("playbooks/npu_network.yml", ("--check", "--diff")): "molecule network: the check step on the converged nodes",
    ("playbooks/upgrade.yml", ("-e", "upgrade_batch_size=2")):
        "tests/faults: the rolling change of five nodes, batches of 2, stopped by an unhealthy NPU",
    ("playbooks/upgrade.yml", ("--check", "--diff", "-e", "upgrade_batch_size=2")):
        "tests/faults: the same change in check mode first, on the first batch",
}


def commands(text: str) -> list[str]:
    """ansible-playbook command lines in markdown: code blocks (with `\\` continuations) and inline code."""
    joined = re.sub(r"\\\n\s*", " ", text)
    found = re.findall(r"^\s*(ansible-playbook [^\n#]+)", joined, re.M)
    found += re.findall(r"`(ansible-playbook [^`]+)`", joined)
    return sorted({" ".join(command.split()) for command in found})


def form(command: str) -> tuple[str, tuple[str, ...]]:
    """(playbook, options) without the inventory; -e keeps its variable name, a value only when it is fixed text."""
    words = shlex.split(re.sub(r"<[^>]+>", "<value>", command))[1:]
    playbook, rest, options = words[0], words[1:], []
    while rest:
        word = rest.pop(0)
        if word == "-i":
            rest.pop(0)
        elif word == "-e":
            name, dummy, value = rest.pop(0).partition("=")
            options += ["-e", f"{name}={value}" if value and "<" not in value and "/" not in value
                        and "$" not in value else name]
        elif word in ("--tags", "--skip-tags", "--limit"):
            value = rest.pop(0)
            options += [word, "<node>" if word == "--limit" else value]
        else:
            options.append(word)
    return playbook, tuple(options)


def molecule_forms() -> set[tuple[str, tuple[str, ...]]]:
    """FORMS of the molecule entry-point test, normalised as the docs' commands are."""
    spec = importlib.util.spec_from_file_location("molecule_default_entry_points", ENTRY_POINTS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {form(" ".join(["ansible-playbook", playbook, *args])) for playbook, args in module.FORMS}


def test_commands_are_found_in_the_docs() -> None:
    found = [command for doc in DOCS for command in commands(doc.read_text())]
    assert "ansible-playbook site.yml -i inventories/<site> --tags preflight" in found
    assert any(command.startswith("ansible-playbook playbooks/bundle.yml") for command in found)


def test_form_normalises_inventory_limit_and_extra_vars() -> None:
    assert form("ansible-playbook site.yml -i inv --limit npu-node-09") == ("site.yml", ("--limit", "<node>"))
    assert form("ansible-playbook p.yml -i x -e a=1 -e b=/srv/x") == ("p.yml", ("-e", "a=1", "-e", "b"))


def test_molecule_forms_include_every_stage_tag() -> None:
    forms = molecule_forms()
    assert ("site.yml", ("--tags", "verify")) in forms
    assert ("site.yml", ("--tags", "cann")) in forms


def test_every_documented_command_is_run_by_a_test() -> None:
    covered = molecule_forms() | set(ELSEWHERE)
    missing = sorted({f"{doc.relative_to(REPO)}: {command}" for doc in DOCS
                      for command in commands(doc.read_text()) if form(command) not in covered})
    assert not missing, ("Documented but run by no test (add the form to FORMS in "
                         f"{ENTRY_POINTS.relative_to(REPO)} or to ELSEWHERE here): {missing}")
