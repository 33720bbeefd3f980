"""Tests of the artifact_manifest lookup: a controller directory and an http source."""
from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from ansible.errors import AnsibleLookupError

from ansible_collections.ascendops.gr00t.plugins.lookup.artifact_manifest import (
    is_url, manifest_location, read_manifest, scrubbed)

SUM_A = "a" * 64
SUM_B = "B" * 64
MANIFEST = f"{SUM_A}  Ascend-cann-toolkit_9.0.0_linux-aarch64.run\n{SUM_B} *wheels/torch-2.7.1.whl\n"
REPO = Path(__file__).resolve().parents[2]
PARSED = {"Ascend-cann-toolkit_9.0.0_linux-aarch64.run": SUM_A, "wheels/torch-2.7.1.whl": SUM_B.lower()}


def test_is_url_and_location() -> None:
    assert is_url("https://mirror/ascend") and is_url("http://mirror")
    assert not is_url("/srv/ascend")
    assert manifest_location("/srv/ascend/", "SHA256SUMS") == "/srv/ascend/SHA256SUMS"


def test_reads_a_directory(tmp_path: Path) -> None:
    (tmp_path / "SHA256SUMS").write_text(MANIFEST)
    assert read_manifest(str(tmp_path), "SHA256SUMS") == PARSED


def test_missing_manifest_fails_unless_missing_ok(tmp_path: Path) -> None:
    with pytest.raises(AnsibleLookupError, match=f"cannot read {tmp_path}/SHA256SUMS"):
        read_manifest(str(tmp_path), "SHA256SUMS")
    assert read_manifest(str(tmp_path), "SHA256SUMS", missing_ok=True) == {}


def test_bad_line_names_the_manifest(tmp_path: Path) -> None:
    (tmp_path / "SHA256SUMS").write_text("not a sum line\n")
    with pytest.raises(AnsibleLookupError, match=r"SHA256SUMS: manifest line 1 is not"):
        read_manifest(str(tmp_path), "SHA256SUMS")


def test_scrubbed_hides_the_password_also_outside_a_url() -> None:
    text = scrubbed("cannot read https://ops:s3cr%21t@m/x: auth for s3cr!t failed", "https://ops:s3cr%21t@m")
    assert "s3cr" not in text and "ops:********@m" in text


class _Handler(BaseHTTPRequestHandler):
    expected_auth = "Basic " + base64.b64encode(b"ops:s3cret").decode()

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        if self.headers.get("Authorization") != self.expected_auth:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="mirror"')
            self.end_headers()
            return
        if self.path != "/ascend/SHA256SUMS":
            self.send_response(404)
            self.end_headers()
            return
        body = MANIFEST.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture()
def mirror() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_reads_a_url_with_basic_auth_from_the_url(mirror: str) -> None:
    assert read_manifest(f"http://ops:s3cret@{mirror}/ascend", "SHA256SUMS") == PARSED


def test_url_errors_do_not_show_the_password(mirror: str) -> None:
    with pytest.raises(AnsibleLookupError) as info:
        read_manifest(f"http://ops:wrong@{mirror}/ascend", "SHA256SUMS")
    assert "wrong" not in str(info.value) and "ops:********@" in str(info.value)
    with pytest.raises(AnsibleLookupError, match="404"):
        read_manifest(f"http://ops:s3cret@{mirror}/other", "SHA256SUMS")


def test_lookup_through_ansible(tmp_path: Path) -> None:
    """As a play calls it: Ansible's loader reads the options from DOCUMENTATION."""
    (tmp_path / "sums.txt").write_text(MANIFEST)
    expr = ("{{ lookup('ascendops.gr00t.artifact_manifest', '%s', manifest='sums.txt') | to_json }}"
            "|{{ lookup('ascendops.gr00t.artifact_manifest', '%s/none', missing_ok=true) | to_json }}") % (tmp_path, tmp_path)
    result = subprocess.run([str(Path(sys.executable).parent / "ansible"), "localhost", "-m", "ansible.builtin.debug",
                             "-a", f"msg={expr}", "-e", f"ansible_python_interpreter={sys.executable}"],
                            cwd=REPO, capture_output=True, text=True, check=False,
                            env={**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_STDOUT_CALLBACK": "json",
                                 "ANSIBLE_LOAD_CALLBACK_PLUGINS": "1"})
    assert result.returncode == 0, result.stdout + result.stderr
    # The json callback's document, then the timer callback's line.
    report = json.JSONDecoder().raw_decode(result.stdout[result.stdout.index("{"):])[0]
    msg = report["plays"][0]["tasks"][0]["hosts"]["localhost"]["msg"]
    found, missing = msg.split("|")
    assert json.loads(found) == PARSED and json.loads(missing) == {}
