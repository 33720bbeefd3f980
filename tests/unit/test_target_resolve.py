"""tests/harness/target_resolve.py without the network: uv's command line and environment, its
pylock.toml and error text, whom a refusal blames, and how a refused set is resolved again."""
from __future__ import annotations

import io
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import target_resolve as tr  # noqa: E402 (path set just above)

PYLOCK = '''
lock-version = "1.0"
created-by = "uv"
requires-python = ">=3.10"

[[packages]]
name = "mx-driving"
version = "26.2.0.post2"
wheels = [{ url = "https://files.pythonhosted.org/packages/a2/30/mx_driving-26.2.0.post2-cp310-cp310-manylinux2014_aarch64.whl", size = 7335424 }]

[[packages]]
name = "DeepSpeed"
version = "0.18.4"
sdist = { url = "https://files.pythonhosted.org/packages/1d/06/deepspeed-0.18.4.tar.gz", size = 1 }
'''
TORCHCODEC = """warning: The requested Python version 3.10 is not available; 3.11.7 will be used to build dependencies instead.
error: No solution found when resolving dependencies
  cause: Because there is no version of torchcodec{platform_machine == 'aarch64' and sys_platform == 'linux'}==0.10.0a0 \
and you require torchcodec{platform_machine == 'aarch64' and sys_platform == 'linux'}==0.10.0a0, we can conclude that \
your requirements are unsatisfiable.
"""
TORCH_NPU = """error: No solution found when resolving dependencies
  cause: Because there is no version of torch==2.7.1+cpu and torch-npu==2.7.1.post2 depends on torch==2.7.1+cpu, we can \
conclude that torch-npu==2.7.1.post2 cannot be used.
         And because you require torch-npu==2.7.1.post2, we can conclude that your requirements are unsatisfiable.
"""
NO_CA = """error: Failed to fetch: https://pypi.org/simple/dm-tree/
  cause: error sending request for url (https://pypi.org/simple/dm-tree/)
  cause: client error (Connect)
  cause: invalid peer certificate: UnknownIssuer
"""


def test_compile_command_resolves_for_the_target_from_the_index() -> None:
    command = tr.compile_command("uv", Path("r.txt"), Path("c.txt"), "aarch64-manylinux_2_28", "3.10", Path("/c"))
    joined = " ".join(command)
    for part in ("pip compile r.txt", "--python-platform aarch64-manylinux_2_28", "--python-version 3.10",
                 f"--index-url {tr.PYPI}", "--format pylock.toml", "--cache-dir /c", "--constraints c.txt",
                 f"--python {sys.executable}", "--no-config"):
        assert part in joined
    assert "--constraints" not in tr.compile_command("uv", Path("r.txt"), None, "x86_64-manylinux_2_28", "3.10",
                                                     Path("/c"))


def test_uv_keeps_the_network_settings_but_no_other_source() -> None:
    environ = {"SSL_CERT_FILE": "/ca.pem", "HTTPS_PROXY": "http://proxy:3128", "UV_HTTP_TIMEOUT": "60",
               "UV_EXTRA_INDEX_URL": "https://mirror/simple", "UV_INDEX_URL": "https://mirror/simple"}
    assert tr.uv_environment(environ) == {"SSL_CERT_FILE": "/ca.pem", "HTTPS_PROXY": "http://proxy:3128",
                                          "UV_HTTP_TIMEOUT": "60"}


def test_pylock_gives_versions_and_the_files_picked() -> None:
    locked = tr.parse_pylock(PYLOCK)
    assert locked["mx-driving"] == tr.Locked("26.2.0.post2", ("mx_driving-26.2.0.post2-cp310-cp310-manylinux2014_aarch64.whl",))
    # A project with a source archive only has no wheel for the target.
    assert locked["deepspeed"] == tr.Locked("0.18.4", ())
    assert tr.Outcome((), locked).versions() == {"mx-driving": "26.2.0.post2", "deepspeed": "0.18.4"}


def test_the_reason_is_uvs_error_without_the_warnings() -> None:
    assert tr.uv_reason(TORCHCODEC).startswith("error: No solution found")
    assert "warning" not in tr.uv_reason(TORCHCODEC)


def test_an_unreachable_index_is_told_from_a_refusal() -> None:
    assert "invalid peer certificate" in tr.network_problem(NO_CA)
    assert tr.network_problem("error: Failed to fetch: https://pypi.org/simple/x/\n  cause: dns error\n")
    assert tr.network_problem(TORCHCODEC) is None
    assert tr.network_problem(TORCH_NPU) is None


def test_the_required_project_is_blamed() -> None:
    assert tr.blamed(TORCHCODEC, ["numpy", "torchcodec", "torch"]) == ["torchcodec"]
    # torch is in the set and in the reason, but the set requires torch-npu, which needs another torch.
    assert tr.blamed(TORCH_NPU, ["torch", "torch-npu", "numpy"]) == ["torch-npu"]


def test_without_a_required_project_every_one_mentioned_is_blamed() -> None:
    reason = "error: Because torch==2.7.1 depends on numpy<2 and numpy>=2 is pinned, ..."
    assert tr.blamed(reason, ["torch", "torch-npu", "numpy", "scipy"]) == ["torch", "numpy"]
    assert tr.blamed("error: something else", ["torch"]) == []


def test_mentioned_matches_whole_project_names() -> None:
    assert tr.mentioned("you require torch==2.7.1", "torch")
    assert tr.mentioned("and torch.", "torch")
    assert not tr.mentioned("you require torch-npu==2.7.1.post2", "torch")
    assert not tr.mentioned("you require pytorch", "torch")
    assert tr.mentioned("torchcodec{platform_machine == 'aarch64'}==0.10.0a0", "torchcodec")


class ScriptedResolver(tr.Resolver):
    """A Resolver whose uv answers from a script: each call refuses the first blamed name left."""

    def __init__(self, refusals: dict[str, str]) -> None:  # pylint: disable=super-init-not-called
        self.refusals, self.calls = refusals, []

    def compile(self, requirements: list[str], constraints: list[str]) -> tuple[dict[str, tr.Locked], str]:
        self.calls.append(list(requirements))
        for name, reason in self.refusals.items():
            if any(r.startswith(name) for r in requirements):
                return {}, reason
        return {r.split("==")[0]: tr.Locked(r.split("==")[1], ()) for r in requirements}, ""


def test_every_refused_requirement_is_named_and_the_rest_resolves() -> None:
    resolver = ScriptedResolver({"torchcodec": TORCHCODEC, "torch-npu": TORCH_NPU})
    outcome = resolver.resolve(["torch==2.7.1", "torch-npu==2.7.1.post2", "torchcodec==0.10.0a0; sys_platform == 'linux'"],
                               [])
    assert [failure.names for failure in outcome.failures] == [("torchcodec",), ("torch-npu",)]
    assert outcome.versions() == {"torch": "2.7.1"}
    assert resolver.calls[-1] == ["torch==2.7.1"]


def test_a_refusal_that_names_no_requirement_ends_the_search() -> None:
    outcome = ScriptedResolver({"torch": "error: the resolver gave up"}).resolve(["torch==2.7.1"], [])
    assert outcome.failures == (tr.Failure((), "error: the resolver gave up"),)
    assert outcome.locked == {}


def test_an_index_nobody_answers_on_is_named() -> None:
    problem = tr.index_problem("http://127.0.0.1:9/simple", timeout=5)
    assert problem.startswith("the package index http://127.0.0.1:9/simple is unreachable (")


def test_upstream_text_reads_the_top_level_files(tmp_path: Path) -> None:
    tarball = tmp_path / "Isaac-GR00T-0.tar.gz"
    with tarfile.open(tarball, "w:gz") as archive:
        for name, text in (("Isaac-GR00T-0/pyproject.toml", "[project]\n"), ("Isaac-GR00T-0/uv.lock", "version = 1\n"),
                           ("Isaac-GR00T-0/scripts/uv.lock", "nested\n")):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    assert tr.upstream_text(tarball) == {"pyproject.toml": "[project]\n", "uv.lock": "version = 1\n"}
    try:
        tr.upstream_text(tarball, ("pyproject.toml", "setup.py"))
    except ValueError as exc:
        assert "no top-level setup.py" in str(exc)
    else:
        raise AssertionError("a tarball without setup.py was read")


def test_gr00t_keeps_the_installed_torch_stack() -> None:
    sets = tr.RoleSets("3.10", [], ["torch==2.7.0", "torchvision==0.22.1", "numpy==1.26.4"], [],
                       ["torch", "torch-npu", "torchvision", "protobuf"], "mx-driving==1", "mx.whl")
    assert tr.gr00t_install_set(sets, {"torch": "2.7.1", "torch-npu": "2.7.1.post2", "protobuf": "3.20.3"}) == [
        "torchvision==0.22.1", "numpy==1.26.4", "torch==2.7.1", "torch-npu==2.7.1.post2", "protobuf==3.20.3"]
