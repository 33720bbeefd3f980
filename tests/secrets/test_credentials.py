"""Credentials in a pip index URL and a proxy URL never show: not in the output of the stages
that use them (a failing pip install included), not in the node's logs or files.

  .venv/bin/pytest -q tests/secrets      (after `make sim`; about 3 minutes)
"""
from __future__ import annotations

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

NODE, PORT = "node1", 22241
INDEX_PASSWORD = "Idx5ecret-91"
PROXY_PASSWORD = "Pr0xy5ecret-17"
# Nothing listens on port 9 of the node: pip and apt fail at once, as with a mirror that is down.
INDEX_URL = f"http://ci:{INDEX_PASSWORD}@127.0.0.1:9/simple"
PROXY_URL = f"http://ops:{PROXY_PASSWORD}@127.0.0.1:9"
SECRETS = (INDEX_PASSWORD, PROXY_PASSWORD)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    work = tmp_path_factory.mktemp("secrets")
    inv = inventory({NODE: PORT}, ascend_pip_index_url=INDEX_URL, ascend_http_proxy=PROXY_URL,
                    ascend_https_proxy=PROXY_URL, system_deps_apt_cache_valid_time=0,
                    # Nothing may wait long on the dead mirror.
                    python_env_install_timeout=300)
    (work / "inventory.yml").write_text(yaml.safe_dump(inv, sort_keys=False))
    with cluster(work, "secrets", {NODE: PORT}):
        yield work


def playbook(site: Path, name: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-v", "-i",
                           str(site / "inventory.yml"), str(REPO / "playbooks" / name)],
                          cwd=REPO, capture_output=True, text=True, check=False, env=dict(os.environ))


def leaks(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


def test_system_deps_through_a_proxy_with_a_password(site: Path) -> None:
    res = playbook(site, "system_deps.yml")
    out = res.stdout + res.stderr
    assert "127.0.0.1:9" in out or res.returncode == 0, out[-3000:]
    assert leaks(out) == [], out[-3000:]


def test_a_failing_pip_install_from_an_index_with_a_password(site: Path) -> None:
    res = playbook(site, "python_env.yml")
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-3000:]
    assert "pip install into" in out or "pip found no distribution" in out, out[-3000:]
    assert "ci:********@127.0.0.1:9" in out, out[-3000:]
    assert leaks(out) == [], out[-3000:]


def test_nothing_on_the_node_holds_a_password(site: Path) -> None:
    found = subprocess.run(
        ["docker", "exec", f"secrets-{NODE}", "grep", "-rIl", "-e", INDEX_PASSWORD, "-e", PROXY_PASSWORD,
         "/etc", "/opt", "/var/log", "/var/lib/ascendops", "/root", "/tmp", "/usr/local/Ascend"],
        capture_output=True, text=True, check=False)
    # grep exits 1 when nothing matches, 2 on an error such as a missing directory.
    assert found.stdout.strip() == "", found.stdout
