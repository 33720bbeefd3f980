# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""pip requirements, wheels and editable projects: parse them, compare them with what an
environment has, read pip's reports and errors.

Used by the pip_pins module (on the node) and the pip filters (preflight, on the controller),
so a pin means the same thing in both places. A pin is `name`, `name==version` or
`name==version.*` (PEP 440 prefix match); the module compares pins itself and leaves any
other requirement (a specifier set, extras, a marker) to pip's resolver.
"""
from __future__ import annotations

import json
import os
import re
from typing import Any, NamedTuple
from urllib.parse import unquote

_PIN = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*"
    r"(?:==\s*(?P<version>[0-9]+(?:\.[0-9]+)*(?:[._-]?(?:a|b|rc|post|dev)[0-9]*)*(?:\+[A-Za-z0-9.]+)?)"
    r"(?P<wildcard>\.\*)?)?\s*$"
)
_RELEASE = re.compile(r"^v?(?P<release>[0-9]+(?:\.[0-9]+)*)(?P<rest>.*)$")
_NO_DISTRIBUTION = re.compile(r"No matching distribution found for\s+(?P<req>\S+)")
_REQUIREMENT_NAME = re.compile(r"^\s*(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:[\[(<>=!~;@]|$)")


# Every pip run in an environment: no version check, no prompt, and the user's ~/.local must
# neither satisfy nor receive the environment's packages.
PIP_QUIET = ["--disable-pip-version-check", "--no-input"]
PIP_ENV = {"PYTHONNOUSERSITE": "1"}


class Pin(NamedTuple):
    spec: str
    name: str
    version: str | None
    wildcard: bool


def canonical_name(name: str) -> str:
    """PEP 503 name: torch_npu, Torch-NPU and torch.npu are the same project."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_pin(spec: str) -> Pin:
    """A pin from `name`, `name==1.2` or `name==1.2.*`; ValueError for anything else."""
    match = _PIN.match(str(spec))
    if not match:
        raise ValueError(f"{spec!r} is not a pin: use name, name==version or name==version.*")
    return Pin(str(spec).strip(), canonical_name(match["name"]), match["version"], bool(match["wildcard"]))


def is_pin(spec: str) -> bool:
    """Whether `spec` is a pin the module can compare with `pip list` itself."""
    return bool(_PIN.match(str(spec)))


def requirement_name(spec: str) -> str:
    """The canonical project name of a PEP 508 requirement; ValueError for anything else.

    pip options (`-e .`, `--pre`) are refused: they belong in pip_args, where they apply
    to the whole install.
    """
    match = _REQUIREMENT_NAME.match(str(spec))
    if not match:
        raise ValueError(f"{spec!r} is not a requirement: use a PEP 508 requirement such as name>=1.2 "
                         "(pip options go into pip_args)")
    return canonical_name(match["name"])


def keep_pins(names: list[str], installed: dict[str, str]) -> list[str]:
    """`name==version` for each of `names` the environment has, at the version it has."""
    return [f"{name}=={installed[canonical_name(name)]}" for name in names if canonical_name(name) in installed]


def with_pins(requirements: list[str], pins: list[str]) -> list[str]:
    """`requirements` with each project of `pins` replaced by its pin (appended last)."""
    pinned = {requirement_name(pin) for pin in pins}
    return [r for r in requirements if requirement_name(r) not in pinned] + list(pins)


def pin_problems(specs: Any) -> list[str]:
    """One message per entry of `specs` that is not a pin, and per project pinned twice."""
    if isinstance(specs, (str, bytes)) or not isinstance(specs, (list, tuple)):
        return [f"expected a list of pins, got {specs!r}"]
    problems, seen = [], {}
    for spec in specs:
        try:
            pin = parse_pin(spec)
        except ValueError as exc:
            problems.append(str(exc))
            continue
        if pin.name in seen:
            problems.append(f"{pin.name} is pinned twice: {seen[pin.name]!r} and {pin.spec!r}")
        seen[pin.name] = pin.spec
    return problems


def _split(version: str) -> tuple[tuple[int, ...], str]:
    """(release without trailing zeros, normalised rest): 2.7.1.post2 -> ((2, 7, 1), 'post2')."""
    match = _RELEASE.match(version.strip().lower())
    if not match:
        return (), version.strip().lower()
    release = [int(part) for part in match["release"].split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    return tuple(release), re.sub(r"[-_.]", "", match["rest"])


def version_matches(installed: str, wanted: str, wildcard: bool = False) -> bool:
    """Whether an installed version satisfies `==wanted` (or `==wanted.*`).

    A local label (`2.7.1+cpu`) is ignored unless the pin names one, as pip does.
    """
    if "+" not in wanted:
        installed = installed.split("+", 1)[0]
    have_release, have_rest = _split(installed)
    want_release, want_rest = _split(wanted)
    if wildcard:
        padded = have_release + (0,) * max(0, len(want_release) - len(have_release))
        return padded[: len(want_release)] == want_release
    return (have_release, have_rest) == (want_release, want_rest)


def parse_pip_list(text: str) -> dict[str, str]:
    """`pip list --format json` output as {canonical name: version}."""
    return {canonical_name(entry["name"]): str(entry["version"]) for entry in json.loads(text or "[]")}


def pin_plan(specs: list[str], rc: int, pip_list: str) -> list[dict[str, Any]] | None:
    """The pins `pip list` (its rc and output) does not satisfy; None when a requirement is not a
    pin (pip's resolver decides those) or pip did not answer (pip_pins says why)."""
    if rc != 0 or not all(map(is_pin, specs)):
        return None
    return pending_pins(specs, parse_pip_list(pip_list))


def pending_pins(specs: list[str], installed: dict[str, str]) -> list[dict[str, Any]]:
    """The pins an environment does not satisfy, in the order given, with what it has."""
    pending = []
    for spec in specs:
        pin = parse_pin(spec)
        have = installed.get(pin.name)
        if have is None or (pin.version and not version_matches(have, pin.version, pin.wildcard)):
            pending.append({"spec": pin.spec, "name": pin.name, "have": have, "want": pin.version})
    return pending


def parse_install_report(text: str, installed: dict[str, str]) -> list[dict[str, Any]]:
    """What a `pip install --dry-run --report -` would install, as pending entries.

    An empty list means the environment already satisfies the requirements.
    """
    try:
        report = json.loads(text)
        items = report["install"]
        metadata = [(canonical_name(item["metadata"]["name"]), str(item["metadata"]["version"])) for item in items]
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"pip's installation report is not readable ({exc}): {str(text)[:200]!r}") from exc
    return [{"spec": f"{name}=={version}", "name": name, "have": installed.get(name), "want": version}
            for name, version in metadata]


def still_pending(pending: list[dict[str, Any]], installed: dict[str, str]) -> list[dict[str, Any]]:
    """The pending entries an environment still does not have at the wanted version."""
    return [{**entry, "have": installed.get(entry["name"])} for entry in pending
            if installed.get(entry["name"]) is None
            or (entry["want"] and not version_matches(installed[entry["name"]], entry["want"]))]


def editable_points_at(direct_urls: list[Any], path: str) -> bool:
    """Whether one of the installed distributions' direct_url.json records an editable install of `path`."""
    wanted = "file://" + os.path.normpath(path)
    return any(isinstance(record, dict) and unquote(str(record.get("url", ""))).rstrip("/") == wanted
               and isinstance(record.get("dir_info"), dict) and record["dir_info"].get("editable") is True
               for record in direct_urls)


def wheel_reasons(version: str, installed: list[dict[str, Any]], sha256: str, recorded: str) -> list[str]:
    """Why a wheel of `version` (hash `sha256`) must be installed; empty when it is in place.

    `installed` holds the environment's distributions of the wheel's project (`version` and
    `record_problems`, the files its RECORD lists that are missing or changed); `recorded`
    is the hash of the wheel installed last, empty when unknown.
    """
    if not installed:
        return ["not installed"]
    reasons = []
    if len(installed) > 1:
        reasons.append("installed {0} times ({1})".format(len(installed), ", ".join(d["version"] for d in installed)))
    elif not version_matches(installed[0]["version"], version):
        reasons.append(f"version {installed[0]['version']} installed")
    if sha256 != recorded:
        reasons.append("another wheel installed last" if recorded else "no hash recorded for the installed wheel")
    for dist in installed:
        reasons += dist["record_problems"][:3]
    return reasons


def pin_versions(specs: list[str]) -> dict[str, str]:
    """{canonical name: pinned version, '' when unpinned}."""
    return {pin.name: pin.version or "" for pin in map(parse_pin, specs)}


def missing_distribution(output: str) -> str | None:
    """The requirement pip could not find anywhere (`No matching distribution found for X`)."""
    match = _NO_DISTRIBUTION.search(output or "")
    return match["req"] if match else None
