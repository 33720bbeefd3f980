"""Filters for the gr00t role: GR00T's dependency set for Ascend, and its data checks.

GR00T's pyproject is written for CUDA: it pins torch from a cu128 index and pulls
flash-attn, triton and tensorrt. On an Ascend node torch (with torch_npu) is already in
the env and those builds do not exist, so the set pip installs is rendered from the
checkout's own pyproject with those left out and DeepSpeed added.
"""
from __future__ import annotations

import tomllib
from typing import Any

from ansible_collections.ascendops.gr00t.plugins.module_utils.pip_pins import canonical_name, requirement_name


PYPI = "https://pypi.org/simple"


def is_dropped(name: str, drop: list[str]) -> bool:
    """A dropped name also covers its variants (tensorrt drops tensorrt-cu12, tensorrt-cu13)."""
    return any(name == canonical_name(d) or name.startswith(canonical_name(d) + "-") for d in drop)


def gr00t_ascend_requirements(pyproject: str, drop: list[str], extra: list[str]) -> dict[str, list[str]]:
    """The Ascend requirement set of a GR00T pyproject.toml.

    Returns `requirements` (the project's dependencies minus `drop`, plus `extra`) and
    `dropped` (what was left out, including any custom index of [tool.uv.sources]).
    """
    data = tomllib.loads(pyproject)
    dependencies = data.get("project", {}).get("dependencies")
    if not isinstance(dependencies, list):
        raise ValueError("pyproject.toml has no [project] dependencies list: is this a GR00T checkout?")
    extra_names = {requirement_name(r) for r in extra}
    kept, dropped = [], []
    for requirement in dependencies:
        name = requirement_name(requirement)
        (dropped if is_dropped(name, drop) or name in extra_names else kept).append(requirement)
    indexes = [index.get("url", "") for index in data.get("tool", {}).get("uv", {}).get("index", [])]
    dropped += ["index {0}".format(url) for url in indexes if url]
    return {"requirements": kept + list(extra), "dropped": dropped}


def gr00t_lock_constraints(lock: str, skip: list[str]) -> list[str]:
    """Upstream's validated versions from its uv.lock, as pip constraints (`name==version`).

    pyproject.toml pins some projects and leaves their dependencies open, so a fresh resolve
    can pick releases upstream never ran (a pyarrow that refuses numpy 1.26). The lock holds
    the set upstream validated. Left out: the projects `skip` names (dropped, kept or replaced;
    names or requirements)
    and every project they depend on in the lock, which come with them as they need; projects
    locked at several versions (one per platform); and ones not from PyPI (a CUDA index, a path,
    URL, git or editable source), whose builds an Ascend node does not use.
    """
    packages = tomllib.loads(lock).get("package", [])
    if not isinstance(packages, list):
        raise ValueError("uv.lock has no [[package]] tables: is this upstream's uv.lock?")
    versions: dict[str, set[str]] = {}
    needs: dict[str, set[str]] = {}
    foreign: set[str] = set()
    for package in packages:
        name = canonical_name(package["name"])
        versions.setdefault(name, set()).add(str(package.get("version", "")))
        needs.setdefault(name, set()).update(canonical_name(d["name"]) for d in package.get("dependencies", []))
        if package.get("source", {}).get("registry") != PYPI:
            foreign.add(name)
    skipped = [requirement_name(spec) for spec in skip]
    left_out = {name for name in versions if is_dropped(name, skipped)}
    pending = list(left_out)
    while pending:
        for dependency in needs.get(pending.pop(), set()) - left_out:
            left_out.add(dependency)
            pending.append(dependency)
    return sorted("{0}=={1}".format(name, next(iter(found))) for name, found in versions.items()
                  if len(found) == 1 and name not in left_out | foreign)


def lerobot_problems(dataset: str, found: dict[str, Any], info: dict[str, Any] | None) -> list[str]:
    """What keeps `dataset` from being a LeRobot v2 tree GR00T can train on.

    `found` maps the relative paths checked (meta/info.json, meta/episodes.jsonl,
    meta/tasks.jsonl, meta/modality.json, videos, data) to whether they exist, plus
    `chunks`, the number of data/chunk-* directories; `info` is meta/info.json parsed.
    """
    problems = []
    if not found.get("."):
        return ["{0} does not exist".format(dataset)]
    for path in ("meta/info.json", "meta/episodes.jsonl", "meta/tasks.jsonl", "meta/modality.json", "videos"):
        if not found.get(path):
            problems.append("{0}/{1} is missing".format(dataset, path))
    if not found.get("chunks"):
        problems.append("{0}/data has no chunk-* directory".format(dataset))
    version = str((info or {}).get("codebase_version", ""))
    if found.get("meta/info.json") and not version.startswith("v2"):
        problems.append("{0}/meta/info.json has codebase_version '{1}', GR00T reads LeRobot v2 (v2.0, v2.1)".format(
            dataset, version or "(none)"))
    return problems


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {"gr00t_ascend_requirements": gr00t_ascend_requirements, "gr00t_lock_constraints": gr00t_lock_constraints,
                "lerobot_problems": lerobot_problems}
