"""Whether the pip sets the roles install on a node resolve from PyPI for a target platform.

The sets are the ones the roles render: their defaults and vars templated by Ansible's own
Templar with the collection's filters, GR00T's from the pyproject.toml and uv.lock of the
release tarball, and the gr00t stage's kept packages pinned at the versions the python_env set
resolves to, as the pip_pins module pins them on a node. uv resolves them, because it evaluates
environment markers for the target it is given (`--python-platform`); pip evaluates them for
the Python that runs it, whatever `--platform` says (pypa/pip#11664).
"""
from __future__ import annotations

import functools
import importlib
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[2]
PYPI = "https://pypi.org/simple"
# linux_<arch> -> uv's platform. manylinux_2_28: glibc 2.28 is the oldest of the OSes Huawei
# lists for 910B hosts (Kylin V10 SP3; Ubuntu 22.04 has 2.35, openEuler 22.03 2.34), and
# PyPI's torch 2.7.1 and torch_npu wheels for aarch64 are tagged manylinux_2_28.
PLATFORMS = {"aarch64": "aarch64-manylinux_2_28", "x86_64": "x86_64-manylinux_2_28"}
# The files whose variables make the sets, in the order Ansible layers them: the site-wide
# defaults (the ascend role, which every stage depends on) under each stage's own.
ROLE_FILES = (
    "roles/ascend/defaults/main.yml",
    "roles/python_env/defaults/main.yml",
    "roles/python_env/vars/main.yml",
    "roles/gr00t/defaults/main.yml",
    "roles/gr00t/vars/main.yml",
    "roles/mx_driving/defaults/main.yml",
)
# uv settings from the environment that add a source or change what may be picked: the
# answer is PyPI's for the pins as the roles write them.
UV_SOURCE_VARIABLES = frozenset({
    "UV_INDEX", "UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_EXTRA_INDEX_URL", "UV_FIND_LINKS", "UV_NO_INDEX",
    "UV_OFFLINE", "UV_CONSTRAINT", "UV_OVERRIDE", "UV_BUILD_CONSTRAINT", "UV_PRERELEASE", "UV_EXCLUDE_NEWER",
    "UV_INDEX_STRATEGY", "UV_TORCH_BACKEND",
})
# What uv says when it cannot talk to the index (as opposed to an index that answers "no").
_NETWORK = re.compile(r"dns error|client error \(Connect\)|Connection refused|timed out|error sending request"
                      r"|certificate|Network is unreachable|No route to host", re.I)
_REQUIRED = re.compile(r"you require ([A-Za-z0-9][A-Za-z0-9._-]*)")
_NAME_CHARS = "A-Za-z0-9._-"


class IndexUnreachable(RuntimeError):
    """The index did not answer: nothing can be said about the sets."""


@dataclass(frozen=True)
class Locked:
    """One package of a resolution: its version and the files uv picked for the target."""

    version: str
    wheels: tuple[str, ...]


@dataclass(frozen=True)
class Failure:
    """Requirements of a set the resolver refused, and its reason."""

    names: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class Outcome:
    """A set's resolution: what failed (in the order found), and what the rest resolved to."""

    failures: tuple[Failure, ...]
    locked: dict[str, Locked] = field(default_factory=dict)

    def versions(self) -> dict[str, str]:
        return {name: package.version for name, package in self.locked.items()}


@dataclass(frozen=True)
class RoleSets:
    """The pip sets of one node architecture, as the roles render them."""

    python_version: str
    python_env: list[str]
    gr00t: list[str]
    gr00t_constraints: list[str]
    gr00t_keep: list[str]
    mx_driving: str
    mx_driving_wheel: str


# ---------------------------------------------------------------- rendering


@functools.cache
def load_collection() -> None:
    """Ansible's plugin loader over the checkout's collections/ link, once: the roles' filters
    (ascendops.gr00t.*) and this module's imports of the collection resolve through it."""
    from ansible.plugins.loader import init_plugin_loader

    init_plugin_loader([str(REPO / "collections")])


@functools.cache
def pip_pins() -> ModuleType:
    """The collection's pip requirement helpers, which the pip_pins module uses on a node."""
    return importlib.import_module("ansible_collections.ascendops.gr00t.plugins.module_utils.pip_pins")


def upstream_text(tarball: Path, names: tuple[str, ...] = ("pyproject.toml", "uv.lock")) -> dict[str, str]:
    """The release's top-level files `names`, by name (GitHub's archive: one top folder)."""
    with tarfile.open(tarball) as archive:
        found = {member.name.split("/", 1)[1]: member for member in archive.getmembers()
                 if member.name.count("/") == 1 and member.name.split("/", 1)[1] in names}
        missing = sorted(set(names) - set(found))
        if missing:
            raise ValueError(f"{tarball} has no top-level {', '.join(missing)}: is it a GR00T release tarball?")
        return {name: archive.extractfile(member).read().decode() for name, member in found.items()}


def role_templar(arch: str, pyproject: str, lock: str, overrides: dict[str, Any] | None = None) -> Any:
    """Ansible's Templar over the roles' defaults and vars for a node of `arch` (its
    `ansible_facts['architecture']`, which the per-architecture settings follow).

    The gr00t role reads the checkout's pyproject.toml and uv.lock in its first look
    (`__gr00t_look`); the release's files stand in that look at the paths the role reads.
    `overrides` are set over the defaults, as an inventory sets them.
    """
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar, trust_as_template

    load_collection()
    loader = DataLoader()
    variables: dict[str, Any] = {"ansible_facts": {"architecture": arch}}
    for name in ROLE_FILES:
        variables.update(loader.load_from_file(str(REPO / name), trusted_as_template=True))
    variables.update(overrides or {})
    templar = Templar(loader=loader, variables=variables)
    paths = [templar.template(trust_as_template(f"{{{{ {name} }}}}")) for name in ("__gr00t_pyproject", "__gr00t_uv_lock")]
    variables["__gr00t_look"] = {"text": {paths[0]: {"content": pyproject}, paths[1]: {"content": lock}}}
    return Templar(loader=loader, variables=variables)


def role_sets(arch: str, tarball: Path, overrides: dict[str, Any] | None = None) -> RoleSets:
    """What python_env, gr00t and mx_driving install on a node of `arch`, by their own expressions
    (with `overrides` set over the roles' defaults)."""
    from ansible.template import trust_as_template

    files = upstream_text(tarball)
    templar = role_templar(arch, files["pyproject.toml"], files["uv.lock"], overrides)

    def value(name: str) -> Any:
        return templar.template(trust_as_template(f"{{{{ {name} }}}}"))

    return RoleSets(
        python_version=str(value("python_env_python_version")),
        python_env=list(value("__python_env_pins")),
        gr00t=list(value("__gr00t_deps")["requirements"]),
        gr00t_constraints=list(value("__gr00t_constraints")),
        gr00t_keep=list(value("gr00t_keep_installed")),
        mx_driving="mx-driving=={0}".format(value("mx_driving_version")),
        mx_driving_wheel=str(value("mx_driving_wheel_file")).strip(),
    )


def gr00t_install_set(sets: RoleSets, installed: dict[str, str]) -> list[str]:
    """GR00T's set as pip_pins hands it to pip in an env holding `installed`: each kept package
    that is installed pinned at its version in place of upstream's line."""
    return pip_pins().with_pins(sets.gr00t, pip_pins().keep_pins(sets.gr00t_keep, installed))


# ---------------------------------------------------------------- uv


@functools.cache
def uv_binary() -> str:
    """The uv that requirements-dev.txt installs into the venv."""
    try:
        from uv import find_uv_bin
    except ImportError as exc:
        raise RuntimeError("uv is not installed in this Python: run `make venv` (requirements-dev.txt pins it)") from exc
    return find_uv_bin()


def compile_command(uv: str, requirements: Path, constraints: Path | None, platform: str, python_version: str,
                    cache_dir: Path, index: str = PYPI) -> list[str]:
    """`uv pip compile` of `requirements` for `platform` and CPython `python_version`, printed as pylock.toml
    (which names the files picked for the target).

    The source archives uv reads metadata from (deepspeed's) are built with this Python: the
    metadata does not depend on it, and without one named uv looks for a `python_version` on the
    machine, through every interpreter on PATH, on each run."""
    command = [uv, "pip", "compile", str(requirements), "--python", sys.executable, "--python-platform", platform,
               "--python-version", python_version, "--index-url", index, "--format", "pylock.toml",
               "--cache-dir", str(cache_dir), "--no-config", "--no-python-downloads", "--no-progress",
               "--color", "never", "--quiet"]
    return command + (["--constraints", str(constraints)] if constraints else [])


def prune_cache(cache_dir: Path) -> None:
    """Drop what no cache entry refers to any more. An index answer without cache validators (as
    some proxies serve PyPI's) makes uv fetch and unpack a source archive again into a new
    revision on each resolve, so without this the cache grows by every run's source archives."""
    subprocess.run([uv_binary(), "cache", "prune", "--cache-dir", str(cache_dir), "--quiet"], capture_output=True,
                   check=False, env=uv_environment(dict(os.environ)))


def uv_environment(environ: dict[str, str]) -> dict[str, str]:
    """The environment for uv: the caller's (proxies, CA bundles) without settings that add a source."""
    return {key: value for key, value in environ.items() if key not in UV_SOURCE_VARIABLES}


def parse_pylock(text: str) -> dict[str, Locked]:
    """{canonical name: Locked} of a pylock.toml."""
    locked = {}
    for package in tomllib.loads(text).get("packages", []):
        wheels = tuple(wheel["url"].rsplit("/", 1)[-1] for wheel in package.get("wheels", []))
        locked[pip_pins().canonical_name(package["name"])] = Locked(str(package["version"]), wheels)
    return locked


def uv_reason(stderr: str) -> str:
    """uv's error with its causes and hints, without the warnings before it."""
    lines = stderr.strip().splitlines()
    start = next((n for n, line in enumerate(lines) if line.startswith("error:")), 0)
    return "\n".join(lines[start:]).strip()


def network_problem(stderr: str) -> str | None:
    """uv's error when it is about reaching the index rather than about the packages."""
    reason = uv_reason(stderr)
    return reason if _NETWORK.search(reason) else None


def mentioned(text: str, name: str) -> bool:
    """Whether `text` names the project `name` (torch is not mentioned by torch-npu)."""
    return re.search(rf"(?<![{_NAME_CHARS}]){re.escape(name)}(?![A-Za-z0-9_]|-[A-Za-z0-9])", text, re.I) is not None


def blamed(reason: str, names: list[str]) -> list[str]:
    """The requirements of `names` a resolver's reason holds against the set: those it says
    "you require"; else every one it mentions."""
    required = {pip_pins().canonical_name(name.rstrip("._-")) for name in _REQUIRED.findall(reason)}
    return [name for name in names if name in required] or [name for name in names if mentioned(reason, name)]


# ---------------------------------------------------------------- resolving


def index_problem(index: str = PYPI, timeout: float = 20) -> str | None:
    """Why `index` cannot be asked, in plain words; None when it answers."""
    try:
        with urllib.request.urlopen(urllib.request.Request(index.rstrip("/") + "/pip/", method="HEAD"),
                                    timeout=timeout):
            return None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        return (f"the package index {index} is unreachable ({reason}), so whether the product's pip sets "
                "resolve for the target platforms is unknown; this check needs the index (PyPI) to answer")


class Resolver:
    """uv pip compile for one platform and Python, with its downloads cached in `cache_dir`.

    Made in one thread, it can resolve in several: what it looks up once (uv's path, through
    sysconfig, whose first use is not thread-safe, and the collection's helpers) it looks up here.
    """

    def __init__(self, platform: str, python_version: str, cache_dir: Path, index: str = PYPI) -> None:
        self.platform, self.python_version, self.cache_dir, self.index = platform, python_version, cache_dir, index
        self.uv = uv_binary()
        pip_pins()

    def compile(self, requirements: list[str], constraints: list[str]) -> tuple[dict[str, Locked], str]:
        """(the resolution, '') or ({}, uv's reason). IndexUnreachable when the index does not answer."""
        with tempfile.TemporaryDirectory(prefix="target-resolve-") as scratch:
            wanted, held = Path(scratch) / "requirements.txt", Path(scratch) / "constraints.txt"
            wanted.write_text("\n".join(requirements) + "\n")
            held.write_text("\n".join(constraints) + "\n")
            command = compile_command(self.uv, wanted, held if constraints else None, self.platform,
                                      self.python_version, self.cache_dir, self.index)
            done = subprocess.run(command, capture_output=True, text=True, check=False,
                                  env=uv_environment(dict(os.environ)))
        if done.returncode == 0:
            return parse_pylock(done.stdout), ""
        problem = network_problem(done.stderr)
        if problem:
            raise IndexUnreachable(f"the package index {self.index} is unreachable from uv:\n{problem}")
        return {}, uv_reason(done.stderr) or f"uv exited {done.returncode} without a message"

    def resolve(self, requirements: list[str], constraints: list[str]) -> Outcome:
        """The set's outcome. A refused set is resolved again without the requirements uv blames,
        until the rest resolves: every requirement that fails is named, not only the first."""
        requirement_name = pip_pins().requirement_name
        failures: list[Failure] = []
        remaining = list(requirements)
        while True:
            locked, reason = self.compile(remaining, constraints)
            if not reason:
                return Outcome(tuple(failures), locked)
            names = blamed(reason, list(dict.fromkeys(map(requirement_name, remaining))))
            failures.append(Failure(tuple(names), reason))
            if not names:
                return Outcome(tuple(failures))
            remaining = [r for r in remaining if requirement_name(r) not in names]
