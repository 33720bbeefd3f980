"""Offline bundle logic: manifests, required-file patterns and the completeness check.

A bundle is a directory with the files the chosen versions need and a manifest in
`sha256sum` format listing every one of them by its path relative to the directory
(`wheels/<file>.whl` for the pip wheelhouse). The same layout is the artifact source the
roles read, so a checked bundle can be used as `ascend_artifact_source` as it is.
"""
from __future__ import annotations

import fnmatch
import hashlib
import os
import re
from typing import Iterable

WHEELHOUSE = "wheels"
_GLOB_CHARS = re.compile(r"[*?\[]")
_PIN = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(.*?)\s*(?:;.*)?$")


def parse_sha256sums(text: str) -> dict[str, str]:
    """Parse `sha256sum` output (`<hex>  <name>` or `<hex> *<name>`) into {name: hex}."""
    sums: dict[str, str] = {}
    for lineno, line in enumerate(str(text).splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = re.fullmatch(r"([0-9a-fA-F]{64})\s+\*?(.+)", line)
        if not match:
            raise ValueError(f"manifest line {lineno} is not '<sha256>  <file>': {line[:80]!r}")
        sums[match.group(2).strip()] = match.group(1).lower()
    return sums


def render_sha256sums(sums: dict[str, str]) -> str:
    """The manifest text for {name: hex}, one `<hex>  <name>` line per file, sorted by name."""
    return "".join(f"{sums[name]}  {name}\n" for name in sorted(sums))


def normalize_dist(name: str) -> str:
    """A distribution name as wheel file names spell it (PEP 503/427): torch-npu -> torch_npu."""
    return re.sub(r"[-_.]+", "_", name).lower()


def _normalize_wheel_name(path: str) -> str:
    """`wheels/PyYAML-6.0-...whl` -> `wheels/pyyaml-6.0-...whl`; other paths are unchanged."""
    head, dummy, base = path.rpartition("/")
    if not base.endswith(".whl") or "-" not in base:
        return path
    dist, rest = base.split("-", 1)
    return f"{head}/{normalize_dist(dist)}-{rest}" if head else f"{normalize_dist(dist)}-{rest}"


def _split_pin(pin: str) -> tuple[str, str]:
    match = _PIN.match(str(pin))
    if not match:
        raise ValueError(f"pip pin {pin!r} is not `name`, `name==version` or `name==version.*`")
    return normalize_dist(match.group(1)), match.group(2)


def pin_name(pin: str) -> str:
    """The normalized distribution name of a pip pin: `Torch-NPU==2.7.1` -> `torch_npu`."""
    return _split_pin(pin)[0]


def wheel_pattern(pin: str, directory: str = WHEELHOUSE) -> str:
    """The wheel file pattern a pip pin needs in the bundle.

    `torch_npu==2.7.1.post2` -> `wheels/torch_npu-2.7.1.post2-*.whl`, `protobuf==3.20.*` ->
    `wheels/protobuf-3.20.*-*.whl`; a pin without an exact version (`attrs`, `numpy>=1.26`)
    needs some wheel of the package: `wheels/attrs-*.whl`.
    """
    name, spec = _split_pin(pin)
    exact = re.fullmatch(r"===?\s*([A-Za-z0-9.*+!_-]+)", spec)
    if spec and not exact and not re.fullmatch(r"(?:[<>!~=]=?\s*[A-Za-z0-9.*+!_-]+\s*,?\s*)+", spec):
        raise ValueError(f"pip pin {pin!r} has a version specifier this check cannot read: {spec!r}")
    stem = f"{name}-{exact.group(1)}-*.whl" if exact else f"{name}-*.whl"
    return f"{directory}/{stem}" if directory else stem


def is_pattern(entry: str) -> bool:
    return bool(_GLOB_CHARS.search(entry))


def matches(pattern: str, names: Iterable[str]) -> list[str]:
    """The names a required entry (a plain name or a glob) stands for, sorted.

    Wheel distribution names are compared normalized, so `wheels/pyyaml-*.whl` finds
    `wheels/PyYAML-6.0.2-...whl`. A `*` does not cross a `/`.
    """
    wanted = _normalize_wheel_name(pattern)
    depth = wanted.count("/")
    return sorted(n for n in names
                  if n.count("/") == depth and fnmatch.fnmatchcase(_normalize_wheel_name(n), wanted))


def sha256_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def scan(root: str, manifest: str) -> list[str]:
    """Relative paths of the files in a bundle, without the manifest and hidden entries.

    Hidden files and directories (a `.` name, e.g. an editor's swap file) are not part of a
    bundle and are never listed or reported.
    """
    found = []
    for top, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in files:
            if name.startswith("."):
                continue
            rel = os.path.relpath(os.path.join(top, name), root).replace(os.sep, "/")
            if rel != manifest:
                found.append(rel)
    return sorted(found)


def check_bundle(present: dict[str, str], manifest: dict[str, str], required: Iterable[str]) -> dict[str, list[str]]:
    """Compare the files of a bundle ({name: sha256}) with its manifest and what is required.

    missing: required entries no file satisfies, and manifest lines whose file is absent;
    mismatched: files whose sha256 differs from their manifest line;
    unlisted: files without a manifest line.
    """
    missing = [entry for entry in required if not matches(entry, present)]
    missing += [name for name in sorted(manifest) if name not in present and name not in missing]
    mismatched = [name for name in sorted(present) if name in manifest and manifest[name] != present[name]]
    unlisted = [name for name in sorted(present) if name not in manifest]
    return {"missing": missing, "mismatched": mismatched, "unlisted": unlisted}


def merge_manifest(present: dict[str, str], manifest: dict[str, str],
                   required: Iterable[str]) -> tuple[dict[str, str], list[str]]:
    """The manifest listing every file present, and the required entries still pending.

    Lines of absent files are kept (they stay reported as missing, nothing is forgotten);
    pending entries match neither a file nor a line, so fetching them will add lines.
    """
    merged = {**manifest, **present}
    return merged, [entry for entry in required if not matches(entry, merged)]


def problem_messages(result: dict[str, list[str]], present: dict[str, str], manifest: dict[str, str],
                     path: str, manifest_name: str, kinds: Iterable[str]) -> list[str]:
    """One message per kind of problem asked for: every file it concerns, then the fix."""
    kinds = set(kinds)
    missing = result["missing"] if "missing" in kinds else []
    required = [e for e in missing if e not in manifest and e != manifest_name]
    dropped = [e for e in missing if e in manifest]
    messages = []
    if manifest_name in missing:
        messages.append(
            f"{path} has no manifest {manifest_name}. Build the bundle with playbooks/bundle.yml, which writes "
            f"it, or list the files you checked (`cd {path} && sha256sum <files> > {manifest_name}`).")
    if required:
        messages.append(
            f"Missing in {path}, needed by the chosen versions: {', '.join(required)}. Build the bundle with "
            f"playbooks/bundle.yml on a machine with access (it fetches only what is missing) and copy it over "
            f"again, or put the files there and list them in {manifest_name}.")
    if dropped:
        messages.append(
            f"Listed in {manifest_name} but not in {path}: {', '.join(dropped)}. The copy of the bundle is "
            f"incomplete: copy these files again, or delete their lines from {manifest_name} if no version in "
            f"use needs them.")
    if "mismatched" in kinds and result["mismatched"]:
        detail = "; ".join(f"{n} (sha256 {present[n]}, {manifest_name} expects {manifest[n]})"
                           for n in result["mismatched"])
        messages.append(
            f"Corrupt or replaced files in {path}: {detail}. Copy them again from the bundle you built; where "
            f"you build, move them out of {path} and rerun playbooks/bundle.yml to fetch them again.")
    if "unlisted" in kinds and result["unlisted"]:
        messages.append(
            f"In {path} but without a line in {manifest_name}: {', '.join(result['unlisted'])}. Check these "
            f"files, then list them (`cd {path} && sha256sum <file> >> {manifest_name}`, or rerun "
            f"playbooks/bundle.yml), or move them out.")
    return messages
