"""The collection as users get it: built with ansible-galaxy, installed from the tarball into
a directory of its own, and used from a project outside this repository against a simulated
node reached over SSH.

  .venv/bin/pytest -q tests/installed      (after `make sim`; about 2 minutes)
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "harness"))
from siminv import cluster, inventory  # noqa: E402 (path set just above)

BIN = Path(sys.executable).parent
NODE, PORT = "node1", 22240
STATE_DIR = "/var/lib/ascendops/train"
RUN_ID = "installed-check"

PLAYBOOK = """\
- name: Project | A role and two modules of the installed collection, by FQCN
  hosts: ascend_nodes
  gather_facts: true
  tasks:
    - name: Project | Read the NPUs
      ascendops.gr00t.npu_facts:

    - name: Project | Measure free space where CANN goes
      ascendops.gr00t.disk_free:
        paths: [/usr/local/Ascend]
      register: free

    - name: Project | Check the node with the preflight role
      ansible.builtin.include_role:
        name: ascendops.gr00t.preflight

    - name: Project | Assert what the modules and the role found
      ansible.builtin.assert:
        that:
          - ansible_facts['npu']['count'] == 8
          - free['paths']['/usr/local/Ascend']['free_bytes'] > 0
          - preflight_report is defined
"""


def run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without the repository's Ansible settings (make exports ANSIBLE_CONFIG,
    whose collections path finds the checkout as an installed ascendops.gr00t)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """collections/ with the tarball installed, and nothing of the repository on the path."""
    root = tmp_path_factory.mktemp("installed")
    built = run([str(BIN / "ansible-galaxy"), "collection", "build", str(REPO), "--output-path", str(root)], root,
                clean_env())
    assert built.returncode == 0, built.stdout + built.stderr
    tarball = next(root.glob("ascendops-gr00t-*.tar.gz"))
    # Its dependencies (ansible.posix, community.general) come with the ansible package.
    done = run([str(BIN / "ansible-galaxy"), "collection", "install", "--no-deps", "--force", "-p",
                str(root / "collections"), str(tarball)], root, clean_env())
    assert done.returncode == 0, done.stdout + done.stderr
    return root


@pytest.fixture(scope="module")
def project(installed: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """A project directory outside the repository, its inventory, and one simulated node."""
    proj = installed / "project"
    proj.mkdir()
    (proj / "inventory.yml").write_text(yaml.safe_dump(inventory({NODE: PORT}), sort_keys=False))
    (proj / "ansible.cfg").write_text(f"[defaults]\ncollections_path = {installed / 'collections'}\n"
                                      "host_key_checking = False\n")
    (proj / "play.yml").write_text(PLAYBOOK)
    env = clean_env(ANSIBLE_CONFIG=str(proj / "ansible.cfg"), PWD=str(proj))
    env["PATH"] = f"{BIN}:{env['PATH']}"
    with cluster(installed, "installed", {NODE: PORT}):
        yield proj, env


def playbook(project: tuple[Path, dict[str, str]], *args: str) -> subprocess.CompletedProcess:
    proj, env = project
    return run([str(BIN / "ansible-playbook"), "-i", "inventory.yml", *args], proj, env)


def test_the_tarball_holds_the_collection_and_not_the_tests(installed: Path) -> None:
    tree = installed / "collections" / "ansible_collections" / "ascendops" / "gr00t"
    assert (tree / "MANIFEST.json").is_file() and (tree / "playbooks" / "site.yml").is_file()
    for absent in ("tests", "molecule", ".sim", "requirements-dev.txt", "collections"):
        assert not (tree / absent).exists(), absent


def test_a_project_uses_a_role_and_two_modules_by_fqcn(project: tuple[Path, dict[str, str]]) -> None:
    res = playbook(project, "play.yml")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert "ok=" in res.stdout and "failed=0" in res.stdout


def test_the_site_playbook_runs_by_its_collection_name(project: tuple[Path, dict[str, str]]) -> None:
    res = playbook(project, "ascendops.gr00t.site", "--tags", "preflight")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert "Preflight | " in res.stdout


def test_train_status_reports_into_the_project_not_the_collection(project: tuple[Path, dict[str, str]],
                                                                  installed: Path) -> None:
    proj, env = project
    log = f"/opt/gr00t-runs/{RUN_ID}/logs/{NODE}.log"
    record = {"run_id": RUN_ID, "log": log, "exit_file": log.replace(".log", ".exit"), "max_steps": 8,
              "global_batch_size": 640, "warmup_steps": 1, "node_rank": 0, "nnodes": 1, "nproc_per_node": 8}
    container = f"installed-{NODE}"
    subprocess.run(["docker", "exec", container, "mkdir", "-p", STATE_DIR, os.path.dirname(log)], check=True)
    subprocess.run(["docker", "cp", str(REPO / "tests" / "fixtures" / "train" / "known.log"), f"{container}:{log}"],
                   check=True)
    subprocess.run(["docker", "exec", "-i", container, "sh", "-c", f"cat > {STATE_DIR}/run.json"],
                   input=json.dumps(record), text=True, check=True)
    res = playbook(project, "ascendops.gr00t.train_status")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    report = proj / "reports" / "train" / RUN_ID
    assert (report / "train.json").is_file() and (report / f"{NODE}.log").is_file(), res.stdout[-2000:]
    assert not list(installed.joinpath("collections").rglob("reports")), "a report was written into the collection"


# ansible-test sanity and ansible-lint run in `make lint` already, on the same files.
IMPORTER_CONFIG = """\
[galaxy-importer]
RUN_ANSIBLE_TEST = False
RUN_ANSIBLE_LINT = False
"""


def test_galaxy_importer_accepts_the_tarball(installed: Path) -> None:
    """Galaxy's own import checks (metadata, the docs of every plugin, role READMEs and metadata)."""
    config = installed / "galaxy-importer.cfg"
    config.write_text(IMPORTER_CONFIG)
    env = clean_env(GALAXY_IMPORTER_CONFIG=str(config))
    env["PATH"] = f"{BIN}:{env['PATH']}"
    tarball = next(installed.glob("ascendops-gr00t-*.tar.gz"))
    res = run([sys.executable, "-m", "galaxy_importer.main", str(tarball)], installed, env)
    output = res.stdout + res.stderr
    assert res.returncode == 0, output[-3000:]
    assert "Importer processing completed successfully" in output, output[-3000:]
    problems = [line for line in output.splitlines() if line.startswith(("ERROR", "WARNING"))]
    assert problems == [], "\n".join(problems)


def test_an_execution_environment_takes_only_the_runtime_requirements(installed: Path) -> None:
    """ansible-builder reads meta/execution-environment.yml: matplotlib, not the development pins."""
    res = run([str(BIN / "ansible-builder"), "introspect", "--sanitize", str(installed / "collections")],
              installed, clean_env())
    assert res.returncode == 0, res.stderr
    python = yaml.safe_load(res.stdout)["python"]
    assert [line.split()[0] for line in python] == ["matplotlib>=3.8"], res.stdout


@pytest.mark.parametrize("plugin_type", ["module", "filter"])
def test_ansible_doc_documents_every_plugin_of_the_installed_collection(installed: Path, plugin_type: str) -> None:
    env = clean_env(ANSIBLE_COLLECTIONS_PATH=str(installed / "collections"))
    listed = run([str(BIN / "ansible-doc"), "-t", plugin_type, "-l", "ascendops.gr00t"], installed, env)
    assert listed.returncode == 0, listed.stderr
    names = [line.split()[0] for line in listed.stdout.splitlines() if line.startswith("ascendops.gr00t.")]
    assert len(names) >= 10, listed.stdout
    assert "UNDOCUMENTED" not in listed.stdout, listed.stdout
    shown = run([str(BIN / "ansible-doc"), "-t", plugin_type, *names], installed, env)
    assert shown.returncode == 0 and "UNDOCUMENTED" not in shown.stdout, shown.stderr[-2000:]
