"""Every pip set the roles install on a node resolves from PyPI for linux aarch64 (the 910B hosts)
and x86_64, for the env's CPython (python_env_python_version, 3.10).

The sets are the roles' own (tests/harness/target_resolve.py renders them with Ansible's Templar
from the roles' defaults and vars and the GR00T release tarball the training tests use):
python_env's pins with CANN's Python prerequisites; GR00T's set held to its uv.lock, with the
kept packages pinned at the versions python_env's set resolves to, as on a node; and mx_driving's
wheel in the env python_env makes, which must be the file the role names. A set that does not
resolve fails naming every requirement the resolver refuses, with its reason. A failure that is a
fact of a vendor's release is listed in KNOWN and expected (strictly: the test fails once the set
resolves, so the entry goes). A default of the roles that leaves a requirement out for such a fact
is listed in NEEDED: without it the set must fail on exactly that requirement (once it resolves
without, the default may go). An unreachable index fails every test saying so.

uv's downloads (index pages, metadata, the source archives it reads metadata from) are cached in
$SIM_CACHE_DIR/uv, and what no entry refers to any more is pruned after each run.
"""
from __future__ import annotations

import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import simctl  # noqa: E402  # pylint: disable=wrong-import-position
import target_resolve as tr  # noqa: E402  # pylint: disable=wrong-import-position

ARCHES = ("aarch64", "x86_64")
SETS = {
    "python_env": "python_env's pins and CANN's Python prerequisites (__python_env_pins)",
    "gr00t": "GR00T's dependency set as the gr00t role renders it (__gr00t_deps, __gr00t_constraints)",
    "mx_driving": "mx_driving's wheel (mx_driving_version) in the env python_env makes",
}
# Failures that are facts of a vendor's release: (set, arch) -> (the requirements refused, why).
# An entry changes nothing the roles install: a node of that architecture fails there the same way.
KNOWN = {
    ("python_env", "x86_64"): (
        ("torch-npu",),
        "PyPI's x86_64 wheel of torch_npu 2.7.1.post2 requires torch==2.7.1+cpu, which PyPI does not have "
        "(the simulated x86_64 nodes use a torch_npu double)"),
}
# Defaults that leave requirements out for a fact of a vendor's release: (set, arch) -> (the
# settings without them, the requirements the set then fails on, why).
NEEDED = {
    ("gr00t", "aarch64"): (
        {"gr00t_requirements_drop_by_arch": {}},
        ("torchcodec",),
        "GR00T's pyproject pins torchcodec==0.10.0a0 on linux aarch64 from scripts/deployment/dgpu/wheels/, "
        "which the release holds only as a Git LFS pointer; PyPI has no torchcodec 0.10.0a0 (nor an aarch64 "
        "wheel of 0.4.0, the release for torch 2.7), so gr00t_requirements_drop_by_arch leaves torchcodec out "
        "on aarch64"),
}
CACHE_DIR = simctl.CACHE_DIR / "uv"


class KnownUnresolvable(AssertionError):
    """A set fails exactly as KNOWN says it does (any other failure fails the test)."""


@pytest.fixture(scope="session")
def role_sets() -> dict[str, tr.RoleSets]:
    tarball = simctl.upstream_tarball()
    return {arch: tr.role_sets(arch, tarball) for arch in ARCHES}


@pytest.fixture(scope="session")
def cache_dir() -> Iterator[Path]:
    yield CACHE_DIR
    tr.prune_cache(CACHE_DIR)


@pytest.fixture(scope="session")
def outcomes(role_sets: dict[str, tr.RoleSets], cache_dir: Path) -> dict[tuple[str, str], tr.Outcome]:
    """Every set's outcome, by (set, arch). The resolver mostly waits on the index, so the
    architectures, and gr00t and mx_driving within one, resolve side by side."""
    problem = tr.index_problem(tr.PYPI)
    if problem:
        pytest.fail(problem, pytrace=False)
    resolvers = {arch: tr.Resolver(tr.PLATFORMS[arch], role_sets[arch].python_version, cache_dir, tr.PYPI)
                 for arch in ARCHES}
    try:
        with ThreadPoolExecutor(len(ARCHES)) as pool:
            found = dict(zip(ARCHES, pool.map(lambda arch: arch_outcomes(resolvers[arch], role_sets[arch]), ARCHES)))
    except tr.IndexUnreachable as exc:
        pytest.fail(str(exc), pytrace=False)
    return {(set_name, arch): found[arch][set_name] for arch in ARCHES for set_name in SETS}


def arch_outcomes(resolver: tr.Resolver, sets: tr.RoleSets) -> dict[str, tr.Outcome]:
    """The sets as a node of the resolver's platform installs them. gr00t and mx_driving go into
    the env python_env makes: what of python_env's set resolves stands for what the env holds."""
    python_env = resolver.resolve(sets.python_env, [])
    env = python_env.versions()
    with ThreadPoolExecutor(2) as pool:
        gr00t = pool.submit(resolver.resolve, tr.gr00t_install_set(sets, env), sets.gr00t_constraints)
        mx_driving = pool.submit(resolver.resolve, [sets.mx_driving], [f"{n}=={v}" for n, v in env.items()])
        return {"python_env": python_env, "gr00t": gr00t.result(), "mx_driving": mx_driving.result()}


def report(set_name: str, arch: str, python_version: str, result: tr.Outcome) -> str:
    lines = [f"{SETS[set_name]} does not resolve for linux {arch}, CPython {python_version}, from {tr.PYPI}:"]
    lines += [f"- {', '.join(failure.names) or '(no requirement named)'}: {failure.reason}"
              for failure in result.failures]
    return "\n".join(lines)


def expected(set_name: str, arch: str) -> list[pytest.MarkDecorator]:
    if (set_name, arch) not in KNOWN:
        return []
    names, why = KNOWN[(set_name, arch)]
    return [pytest.mark.xfail(strict=True, raises=KnownUnresolvable,
                              reason=f"{set_name} on {arch} is known to fail on {', '.join(names)}: {why}")]


@pytest.mark.parametrize("set_name, arch", [pytest.param(s, a, marks=expected(s, a), id=f"{s}-{a}")
                                            for s in SETS for a in ARCHES])
def test_set_resolves(set_name: str, arch: str, role_sets: dict[str, tr.RoleSets],
                      outcomes: dict[tuple[str, str], tr.Outcome]) -> None:
    result = outcomes[(set_name, arch)]
    if not result.failures:
        return
    message = report(set_name, arch, role_sets[arch].python_version, result)
    refused = {name for failure in result.failures for name in failure.names}
    known = KNOWN.get((set_name, arch))
    if known and refused == set(known[0]) and all(failure.names for failure in result.failures):
        raise KnownUnresolvable(message)
    pytest.fail(message, pytrace=False)


@pytest.mark.parametrize("set_name, arch", [pytest.param(s, a, id=f"{s}-{a}") for s, a in NEEDED])
def test_a_drop_for_a_vendor_gap_is_still_needed(set_name: str, arch: str, role_sets: dict[str, tr.RoleSets],
                                                 outcomes: dict[tuple[str, str], tr.Outcome], cache_dir: Path) -> None:
    """The set rendered without the default fails on exactly the requirements it leaves out."""
    settings, names, why = NEEDED[(set_name, arch)]
    sets = tr.role_sets(arch, simctl.upstream_tarball(), settings)
    resolver = tr.Resolver(tr.PLATFORMS[arch], sets.python_version, cache_dir, tr.PYPI)
    env = outcomes[("python_env", arch)].versions()
    try:
        result = resolver.resolve(tr.gr00t_install_set(sets, env), sets.gr00t_constraints)
    except tr.IndexUnreachable as exc:
        pytest.fail(str(exc), pytrace=False)
    refused = {name for failure in result.failures for name in failure.names}
    if refused == set(names) and all(failure.names for failure in result.failures):
        return
    shown = ", ".join(f"{key}={value!r}" for key, value in settings.items())
    if not result.failures:
        pytest.fail(f"{SETS[set_name]} resolves for {arch} with {shown}: what it leaves out ({', '.join(names)}) "
                    f"resolves now, so the default may go ({why})", pytrace=False)
    pytest.fail(f"with {shown}, expected a failure on {', '.join(names)} only ({why}); got:\n"
                + report(set_name, arch, sets.python_version, result), pytrace=False)


@pytest.mark.parametrize("arch", ARCHES)
def test_mx_driving_wheel_is_the_file_the_role_names(arch: str, role_sets: dict[str, tr.RoleSets],
                                                     outcomes: dict[tuple[str, str], tr.Outcome]) -> None:
    """With mx_driving_wheel_source artifact the role stages mx_driving_wheel_file: PyPI's wheel
    for the target must be that file."""
    sets = role_sets[arch]
    picked = outcomes[("mx_driving", arch)].locked.get("mx-driving")
    if picked is None:
        pytest.fail(f"mx-driving does not resolve for {arch}; test_set_resolves[mx_driving-{arch}] says why",
                    pytrace=False)
    if sets.mx_driving_wheel not in picked.wheels:
        pytest.fail(f"mx_driving_wheel_file renders {sets.mx_driving_wheel} for {arch}, but PyPI's wheel of mx-driving "
                    f"{picked.version} for linux {arch} CPython {sets.python_version} is "
                    f"{', '.join(picked.wheels) or 'none (a source archive only)'}", pytrace=False)
