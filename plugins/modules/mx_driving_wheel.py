#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: mx_driving_wheel
short_description: Give an mx_driving wheel the new patcher API, rebuilding an old one reproducibly
version_added: "0.1.0"
description:
  - Reads an mx_driving wheel and detects its patcher API from the source text (never by
    importing it). A wheel whose C(mx_driving.patcher) has C(Patcher), C(TransformersNPU),
    C(DiffusersNPU) and C(legacy.py) is the new API and is returned as it is.
  - An old-API wheel is rebuilt - the whole C(mx_driving/patcher/) package is replaced by the one
    in O(patcher_src) (which must hold the complete new framework), with an C(__init__.py)
    that keeps every name the old one exported (the old API through C(legacy.py)). The
    compiled C(_C) extension, every other file, the platform tag and C(Root-Is-Purelib) false
    are kept; the dist-info is renamed to the new version and RECORD regenerated.
  - The archive is deterministic (sorted entries, the timestamp of O(source_date_epoch),
    fixed permissions), so the same inputs give a byte-identical wheel and a second run
    reports no change.
  - Before the wheel is put in O(dest) it is verified - C(_C) identical to the base's, tags
    unchanged, every RECORD hash right, the new classes present, and
    C(pip install --dry-run --no-deps) for the wheel's own platform and Python resolves it.
    It is written to a temporary directory in O(dest) and renamed into place, so a failure
    leaves nothing half-written.
author:
  - ascendops.gr00t maintainers (@ascendops)
options:
  base_wheel:
    description: The mx_driving wheel to inspect and, when needed, rebuild.
    type: path
    required: true
  patcher_src:
    description:
      - Where the new patcher package comes from - a DrivingSDK source tree that contains
        C(mx_driving/patcher/), a tar archive of one, or a donor mx_driving wheel that ships
        the new API.
      - Required when a rebuild is needed.
    type: path
  dest:
    description: Directory for the rebuilt wheel; created when missing.
    type: path
    required: true
  local_version:
    description:
      - Appended to the base version - V(1) gives C(<base>.1); a value starting with C(+)
        (e.g. V(+ascend.1)) gives the local version C(<base>+ascend.1).
    type: str
    default: "1"
  rebuild:
    description:
      - V(auto) rebuilds an old-API wheel and returns a new-API one unchanged.
      - V(always) rebuilds either.
      - V(never) only inspects, and returns the base wheel.
    type: str
    choices: [auto, always, never]
    default: auto
  source_date_epoch:
    description:
      - Timestamp of every archive entry, in seconds since the epoch.
      - Defaults to E(SOURCE_DATE_EPOCH) when set, else 315532800 (1980-01-01, the earliest a
        zip can hold).
    type: int
  python:
    description:
      - Interpreter whose pip runs the install dry-run (the environment the wheel is for).
      - Defaults to the interpreter running this module.
    type: path
  pip_check:
    description:
      - Run the C(pip install --dry-run) check. Turn it off only where that interpreter has no pip.
    type: bool
    default: true
notes:
  - Needs only the Python standard library; pip only for the dry-run check.
extends_documentation_fragment:
  - ascendops.gr00t.attributes
attributes:
  check_mode:
    details: Builds and verifies the wheel in memory and reports whether O(dest) would change; writes nothing.
"""

EXAMPLES = r"""
- name: Rebuild an old mx_driving wheel with the patcher of the 26.2.0.post2 wheel
  ascendops.gr00t.mx_driving_wheel:
    base_wheel: /var/cache/ascendops/artifacts/mx_driving-1.0.20260421-cp310-cp310-linux_aarch64.whl
    patcher_src: /var/cache/ascendops/artifacts/mx_driving-26.2.0.post2-cp310-cp310-manylinux2014_aarch64.whl
    dest: /var/cache/ascendops/mx_driving
    python: /opt/miniforge3/envs/torch2.7.1/bin/python
  register: mx_wheel

- name: Only tell which API a wheel has
  ascendops.gr00t.mx_driving_wheel:
    base_wheel: /tmp/mx_driving-26.2.0.post2-cp310-cp310-manylinux2014_aarch64.whl
    dest: /tmp
    rebuild: never
  register: mx_inspect
"""

RETURN = r"""
wheel:
  description: The wheel to install - the rebuilt one in O(dest), or O(base_wheel) when no rebuild was needed.
  returned: success
  type: str
  sample: /var/cache/ascendops/mx_driving/mx_driving-1.0.20260421.1-cp310-cp310-linux_aarch64.whl
sha256:
  description: sha256 of RV(wheel), hex.
  returned: success
  type: str
version:
  description: Version of RV(wheel).
  returned: success
  type: str
  sample: 1.0.20260421.1
api:
  description: The patcher API of the base wheel, V(new) or V(old).
  returned: success
  type: str
  sample: old
rebuilt:
  description: Whether RV(wheel) is a rebuild (whether or not this run wrote it).
  returned: success
  type: bool
base_version:
  description: Version of the base wheel.
  returned: success
  type: str
tags:
  description: Wheel tags of the base, kept by the rebuild.
  returned: success
  type: list
  elements: str
  sample: [cp310-cp310-linux_aarch64]
patcher_source:
  description: What the patcher package was taken from, and the sha256 over its files.
  returned: when rebuilt
  type: dict
  sample: {description: donor wheel mx_driving-26.2.0.post2-cp310-cp310-manylinux2014_aarch64.whl (26.2.0.post2),
           sha256: 3f0c...}
unbridged_exports:
  description: Names the old patcher exported that the new package defines nowhere (also warned).
  returned: when rebuilt
  type: list
  elements: str
"""

import os
import shutil
import subprocess
import sys
import tempfile
from typing import Dict, List

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ascendops.gr00t.plugins.module_utils.mx_driving_rebuild import (
    BaseWheel,
    detect_api,
    load_patcher_source,
    output_filename,
    output_problems,
    output_version,
    package_digest,
    rebuild,
    source_problems,
)
from ansible_collections.ascendops.gr00t.plugins.module_utils.wheel_archive import (
    DEFAULT_SOURCE_DATE_EPOCH,
    WheelError,
    platform_of,
    python_version_of,
    sha256_hex,
)


def source_date_epoch(value: int | None) -> int:
    if value is not None:
        return value
    env = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if env:
        if not env.isdigit():
            raise WheelError("SOURCE_DATE_EPOCH is {0!r}, want seconds since the epoch".format(env))
        return int(env)
    return DEFAULT_SOURCE_DATE_EPOCH


def pip_dry_run_argv(python: str, tag: str, find_links: str, target: str, name: str, version: str) -> List[str]:
    """pip resolves the wheel for its own platform and Python, from `find_links` only."""
    argv = [python, "-m", "pip", "install", "--dry-run", "--no-deps", "--disable-pip-version-check",
            "--target", target, "--platform", platform_of(tag), "--only-binary=:all:", "--no-index",
            "--find-links", find_links]
    pyver = python_version_of(tag)
    if pyver:
        argv += ["--python-version", pyver]
    return argv + ["{0}=={1}".format(name, version)]


def run(argv: List[str]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          check=False, env=dict(os.environ, PIP_NO_INPUT="1", PIP_CONFIG_FILE=os.devnull))


def pip_check(python: str, wheel_dir: str, base: BaseWheel, version: str) -> None:
    probe = run([python, "-m", "pip", "--version"])
    if probe.returncode != 0:
        raise WheelError("{0} has no pip ({1}); install pip there, or set pip_check: false to skip the "
                         "install dry-run".format(python, probe.stdout.strip()[-300:]))
    target = tempfile.mkdtemp(prefix="mx-driving-pip-")
    try:
        result = run(pip_dry_run_argv(python, base.info["tag"], wheel_dir, target, base.info["name"], version))
    finally:
        shutil.rmtree(target, ignore_errors=True)
    if result.returncode != 0:
        raise WheelError("pip cannot install the rebuilt wheel for {0}: {1}".format(
            base.info["tag"], result.stdout.strip()[-1500:]))


def write_verified(module: AnsibleModule, data: bytes, dest: str, filename: str, base: BaseWheel,
                   version: str) -> None:
    """Write to a temporary directory in `dest`, pip-check there, then rename into place."""
    staging = tempfile.mkdtemp(prefix=".mx_driving_wheel-", dir=dest)
    try:
        path = os.path.join(staging, filename)
        with open(path, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(path, 0o644)
        if module.params["pip_check"]:
            pip_check(module.params["python"] or sys.executable, staging, base, version)
        os.replace(path, os.path.join(dest, filename))
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def read_file(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def run_module(module: AnsibleModule) -> Dict[str, object]:
    params = module.params
    base_path = params["base_wheel"]
    data = read_file(base_path)
    if data is None:
        raise WheelError("base_wheel {0} does not exist".format(base_path))
    base = BaseWheel(os.path.basename(base_path), data)
    api = detect_api(base.files)
    result = {"changed": False, "api": api, "base_version": base.version, "tags": base.tags, "rebuilt": False,
              "wheel": base_path, "sha256": sha256_hex(data), "version": base.version}
    if params["rebuild"] == "never" or (params["rebuild"] == "auto" and api == "new"):
        return result

    if not params["patcher_src"]:
        raise WheelError("{0} has the {1} patcher API and needs a rebuild, but patcher_src is not set: give a "
                         "DrivingSDK source tree, a tarball of one, or a new-API mx_driving wheel".format(
                             base.filename, api))
    package, description = load_patcher_source(params["patcher_src"])
    problems = source_problems(package)
    if problems:
        raise WheelError("patcher_src {0} is unusable: {1}".format(params["patcher_src"], "; ".join(problems)))
    version = output_version(base.version, params["local_version"])
    built, unresolved = rebuild(base, package, description, version, source_date_epoch(params["source_date_epoch"]))
    problems = output_problems(built, base, version)
    if problems:
        raise WheelError("the rebuilt wheel failed verification: {0}".format("; ".join(problems)))

    filename = output_filename(base, version)
    dest = params["dest"]
    target = os.path.join(dest, filename)
    same = read_file(target) == built
    if not same and not module.check_mode:
        os.makedirs(dest, exist_ok=True)
        write_verified(module, built, dest, filename, base, version)
    for name in unresolved:
        module.warn("mx_driving.patcher.{0} was exported by {1} but the new patcher package defines no {0}; "
                    "code importing it will fail".format(name, base.filename))
    result.update(changed=not same, rebuilt=True, wheel=target, sha256=sha256_hex(built), version=version,
                  patcher_source={"description": description, "sha256": package_digest(package)},
                  unbridged_exports=unresolved)
    return result


def main() -> None:
    module = AnsibleModule(
        argument_spec=dict(
            base_wheel=dict(type="path", required=True),
            patcher_src=dict(type="path"),
            dest=dict(type="path", required=True),
            local_version=dict(type="str", default="1"),
            rebuild=dict(type="str", choices=["auto", "always", "never"], default="auto"),
            source_date_epoch=dict(type="int"),
            python=dict(type="path"),
            pip_check=dict(type="bool", default=True),
        ),
        supports_check_mode=True,
    )
    try:
        module.exit_json(**run_module(module))
    except (WheelError, OSError) as err:
        module.fail_json(msg=str(err))


if __name__ == "__main__":
    main()
