#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: pip_pins
short_description: Converge a Python environment to pip requirements, a local wheel or an editable project
version_added: "0.1.0"
description:
  - The one way the collection drives pip. Each call converges one of three things and runs
    C(pip install) only when the environment differs, so a converged environment is left
    alone and reports no change.
  - O(requirements) that are all pins (C(name), C(name==version), C(name==version.*)) are
    compared with C(python -m pip list --format json). Any other requirement (a specifier
    set, extras, an environment marker) makes pip decide, with
    C(pip install --dry-run --quiet --report -) (pip 22.2 or later); the requirements are
    satisfied when its report installs nothing. When something differs, pip installs all
    the requirements, so the satisfied ones hold their versions while it resolves.
  - O(editable) is satisfied when an installed distribution's C(direct_url.json) records an
    editable install of that directory; otherwise it runs C(pip install -e).
  - O(wheel) is satisfied when its project is installed once, at the wheel's version, with a
    RECORD and every file it lists unchanged, and the wheel's sha256 is the one recorded for
    the last install in C(<env>/.ascendops/<distribution>.sha256); otherwise it runs
    C(pip install --force-reinstall --no-deps) and records the hash. Over an installed
    distribution without a RECORD, which pip cannot uninstall, it runs
    C(pip install --ignore-installed --no-deps) instead.
  - The environment is read with its own interpreter (O(python)), not the one the module runs under.
  - In check mode it reports what would be installed and runs no install.
  - When pip finds no distribution for a requirement (for example a wheel missing from an
    offline wheelhouse) it fails and returns that requirement in C(missing).
author:
  - ascendops.gr00t maintainers (@ascendops)
options:
  python:
    description: Python interpreter of the environment (its pip is used).
    type: path
    required: true
  requirements:
    description:
      - PEP 508 requirements, such as C(torch==2.7.1), C(numpy) or C(transformers[torch]>=4.51,<5; python_version>="3.10").
      - An unpinned name is satisfied by any installed version.
      - pip options do not belong here but in O(pip_args).
    type: list
    elements: str
  keep:
    description:
      - Projects held at the version the environment has; their requirements in
        O(requirements) are replaced by C(name==installed version), so pip neither replaces
        nor fights them. A project the environment does not have is left as required.
      - Only with O(requirements).
    type: list
    elements: str
    default: []
  editable:
    description: Directory of a local project to install editable (C(pip install -e)).
    type: path
  import_name:
    description:
      - With O(editable), a top-level package of the project; RV(origin) reports the file the
        environment's Python imports it from after the run, so a caller can check that the project
        is what the environment imports without running Python again.
    type: str
  wheel:
    description: Local wheel file to install, reinstalled whenever it changes.
    type: path
  constraints:
    description:
      - pip constraints (C(name==version) lines) for every resolve and install of
        O(requirements), such as upstream's validated versions from the
        C(ascendops.gr00t.gr00t_lock_constraints) filter. They limit the versions pip may pick;
        they install nothing by themselves.
    type: list
    elements: str
    default: []
  pip_args:
    description:
      - Extra pip install arguments, such as the output of the C(ascendops.gr00t.pip_options)
        filter, C(--no-index) or C(--no-deps).
      - The password of a URL among them or among O(requirements) (C(https://user:password@mirror/simple))
        is masked in everything the module returns.
    type: list
    elements: str
    default: []
extends_documentation_fragment:
  - ascendops.gr00t.attributes
notes:
  - Exactly one of O(requirements), O(editable) and O(wheel) is given.
"""

EXAMPLES = r"""
- name: Install the training stack from the wheelhouse
  ascendops.gr00t.pip_pins:
    python: /opt/miniforge3/envs/torch2.7.1/bin/python
    requirements: [torch==2.7.1, torch_npu==2.7.1.post2, protobuf==3.20.*, numpy]
    pip_args: "{{ '' | ascendops.gr00t.pip_options([], ['/var/cache/ascendops/artifacts/wheels']) }}"

- name: Install a project's dependencies, the installed torch kept as it is
  ascendops.gr00t.pip_pins:
    python: /opt/miniforge3/envs/torch2.7.1/bin/python
    requirements: ["transformers>=4.51,<5", "diffusers", "deepspeed==0.18.4"]
    keep: [torch, torch-npu, torchvision]
    constraints: [pyarrow==23.0.1, huggingface-hub==0.36.2]

- name: Install a checkout editable
  ascendops.gr00t.pip_pins:
    python: /opt/miniforge3/envs/torch2.7.1/bin/python
    editable: /opt/gr00t/Isaac-GR00T
    pip_args: [--no-deps, --no-build-isolation]

- name: Install a locally built wheel
  ascendops.gr00t.pip_pins:
    python: /opt/miniforge3/envs/torch2.7.1/bin/python
    wheel: /var/cache/ascendops/mx_driving/mx_driving-1.0.20260421.1-cp310-cp310-linux_aarch64.whl
    pip_args: [--no-index]
"""

RETURN = r"""
pending:
  description:
    - What the environment did not have before this run, with the version it had; empty when converged.
    - For O(requirements) given as pins, the pins; for others, what pip's report would install.
    - For O(editable) and O(wheel), one entry whose C(reasons) say why it is (re)installed.
  returned: always
  type: list
  elements: dict
  sample: [{"spec": "torch==2.7.1", "name": "torch", "have": null, "want": "2.7.1"}]
versions:
  description: Installed version of each project named by the requirements, the wheel or the
    editable project after the run (before it in check mode).
  returned: always
  type: dict
  sample: {"torch": "2.7.1", "numpy": "2.4.6"}
origin:
  description:
    - With O(import_name), the file the environment's Python finds that package in (C(importlib.util.find_spec));
      null when it finds none. After the run; before it in check mode.
  returned: when O(import_name) is given
  type: str
  sample: /opt/gr00t/Isaac-GR00T/gr00t/__init__.py
requirements:
  description: The requirements as installed, with the O(keep) pins in place of their projects' requirements.
  returned: when O(requirements) is given
  type: list
  elements: str
  sample: ["transformers>=4.51,<5", "torch==2.7.1"]
kept:
  description: The O(keep) pins, C(name==installed version).
  returned: when O(requirements) is given
  type: list
  elements: str
  sample: ["torch==2.7.1", "torch-npu==2.7.1.post2"]
sha256:
  description: sha256 of O(wheel); null when the file does not exist (check mode only).
  returned: when O(wheel) is given
  type: str
state:
  description: File holding the sha256 of the wheel installed last.
  returned: when O(wheel) is given
  type: str
  sample: /opt/miniforge3/envs/torch2.7.1/.ascendops/mx_driving.sha256
missing:
  description: The requirement pip found no distribution for, when that made it fail.
  returned: failure
  type: str
  sample: deepspeed==0.18.4
missing_name:
  description: The project name of C(missing).
  returned: failure
  type: str
  sample: deepspeed
"""

import json
import os
import re
import tempfile
from typing import Any, NoReturn

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ascendops.gr00t.plugins.module_utils.pip_pins import (
    PIP_ENV,
    PIP_QUIET,
    canonical_name,
    editable_points_at,
    is_pin,
    keep_pins,
    missing_distribution,
    parse_install_report,
    parse_pip_list,
    pending_pins,
    requirement_name,
    still_pending,
    wheel_reasons,
    with_pins,
)
from ansible_collections.ascendops.gr00t.plugins.module_utils.redact import url_passwords
from ansible_collections.ascendops.gr00t.plugins.module_utils.wheel_archive import (
    WheelError,
    installed_record_problems,
    parse_wheel_filename,
)

# Run by the environment's interpreter: its distributions, not those of the module's Python.
# `editable` prints every direct_url.json; `origin NAME` where the package NAME is found (its
# spec, without importing it); `dist NAME` prints sys.prefix and each installed distribution of
# NAME with its version, its directory and its RECORD (null when it has none).
QUERY = r"""
import importlib.metadata as metadata, importlib.util, json, sys
if sys.argv[1] == "origin":
    print(json.dumps(getattr(importlib.util.find_spec(sys.argv[2]), "origin", None)))
elif sys.argv[1] == "editable":
    found = []
    for dist in metadata.distributions():
        text = dist.read_text("direct_url.json")
        if text:
            try:
                found.append(dict(json.loads(text), name=dist.metadata["Name"], version=dist.version))
            except ValueError:
                pass
    print(json.dumps(found))
else:
    print(json.dumps({"prefix": sys.prefix, "found": [
        {"version": d.version, "site": str(d.locate_file("")), "record": d.read_text("RECORD")}
        for d in metadata.distributions(name=sys.argv[2])]}))
"""


def run_pip(module: AnsibleModule, python: str, args: list[str]) -> tuple[int, str, str, list[str]]:
    cmd = [python, "-m", "pip", *args]
    rc, out, err = module.run_command(cmd, environ_update=PIP_ENV)
    return rc, out, err, cmd


def fail_install(module: AnsibleModule, rc: int, out: str, err: str, cmd: list[str],
                 pending: list[dict[str, Any]]) -> NoReturn:
    missing = missing_distribution(err + "\n" + out)
    name = re.match(r"[A-Za-z0-9._-]+", missing).group(0) if missing else None
    module.fail_json(msg=f"pip install failed (rc={rc}): {(err.strip() or out.strip())[-2000:]}",
                     rc=rc, cmd=cmd, stdout=out, stderr=err, missing=missing, missing_name=name, pending=pending)


def install(module: AnsibleModule, python: str, args: list[str], pending: list[dict[str, Any]]) -> str:
    rc, out, err, cmd = run_pip(module, python, ["install", *PIP_QUIET, *module.params["pip_args"], *args])
    if rc != 0:
        fail_install(module, rc, out, err, cmd, pending)
    return out


def installed(module: AnsibleModule, python: str) -> dict[str, str]:
    rc, out, err, dummy = run_pip(module, python, ["list", "--format", "json", *PIP_QUIET])
    if rc != 0:
        module.fail_json(msg=f"`{python} -m pip list` failed (rc={rc}): {err.strip() or out.strip()}. "
                             "The environment has no working pip: recreate it.", rc=rc)
    return parse_pip_list(out)


def query(module: AnsibleModule, python: str, *args: str) -> Any:
    rc, out, err = module.run_command([python, "-c", QUERY, *args], environ_update=PIP_ENV)
    if rc != 0:
        module.fail_json(msg=f"{python} cannot list its distributions (rc={rc}): {err.strip()[-1000:]}", rc=rc)
    return json.loads(out)


def versions_of(names: list[str], have: dict[str, str]) -> dict[str, str | None]:
    return {name: have.get(name) for name in names}


def resolver_pending(module: AnsibleModule, python: str, specs: list[str],
                     have: dict[str, str]) -> list[dict[str, Any]]:
    """What pip itself would install for `specs` (its dry-run report)."""
    rc, out, err, cmd = run_pip(module, python, ["install", *PIP_QUIET, "--dry-run", "--quiet", "--report", "-",
                                                 *module.params["pip_args"], *specs])
    if rc != 0:
        if "no such option" in err:
            module.fail_json(msg=f"the pip of {python} has no --report (pip 22.2 or later is needed "
                                 "for requirements other than pins): upgrade pip in the environment", rc=rc)
        fail_install(module, rc, out, err, cmd, [])
    try:
        return parse_install_report(out, have)
    except ValueError as exc:
        module.fail_json(msg=str(exc), stdout=out, stderr=err)


def converge_requirements(module: AnsibleModule, python: str) -> NoReturn:
    try:
        for spec in module.params["requirements"]:
            requirement_name(spec)
    except ValueError as exc:
        module.fail_json(msg=f"requirements: {exc}")
    have = installed(module, python)
    kept = keep_pins(module.params["keep"], have)
    specs = with_pins(module.params["requirements"], kept)
    names = [requirement_name(spec) for spec in specs]
    by_resolver = not all(map(is_pin, specs))
    pending = resolver_pending(module, python, specs, have) if by_resolver else pending_pins(specs, have)
    result = {"changed": bool(pending), "pending": pending, "versions": versions_of(names, have),
              "requirements": specs, "kept": kept}
    if not pending or module.check_mode:
        module.exit_json(**result)

    out = install(module, python, specs, pending)
    have = installed(module, python)
    still = still_pending(pending, have) if by_resolver else pending_pins(specs, have)
    if still:
        module.fail_json(msg="pip install succeeded but the environment still differs: "
                             + ", ".join(f"{p['spec']} (has {p['have']})" for p in still),
                         pending=still, stdout=out)
    module.exit_json(**dict(result, versions=versions_of(names, have)))


def editable_versions(module: AnsibleModule, python: str, path: str) -> dict[str, str]:
    """{project: version} of the distributions installed editable from `path`; empty when none is."""
    return {canonical_name(record["name"]): record["version"]
            for record in query(module, python, "editable") if editable_points_at([record], path)}


def origin_of(module: AnsibleModule, python: str) -> dict[str, Any]:
    """{"origin": file} of O(import_name) as the environment finds it; nothing when not asked."""
    name = module.params["import_name"]
    return {"origin": query(module, python, "origin", name)} if name else {}


def converge_editable(module: AnsibleModule, python: str) -> NoReturn:
    path = os.path.normpath(module.params["editable"])
    versions = editable_versions(module, python, path)
    if versions:
        module.exit_json(changed=False, pending=[], versions=versions, **origin_of(module, python))
    if not os.path.isdir(path):
        module.fail_json(msg=f"editable: {path} is not a directory: check the project out first.")
    pending = [{"spec": f"-e {path}", "name": None, "have": None, "want": None,
                "reasons": [f"no distribution is installed editable from {path}"]}]
    if module.check_mode:
        module.exit_json(changed=True, pending=pending, versions={}, **origin_of(module, python))
    install(module, python, ["-e", path], pending)
    versions = editable_versions(module, python, path)
    if not versions:
        module.fail_json(msg=f"pip install -e {path} succeeded but no distribution records an editable "
                             f"install of {path} (direct_url.json)", pending=pending)
    module.exit_json(changed=True, pending=pending, versions=versions, **origin_of(module, python))


def wheel_state(module: AnsibleModule, python: str, dist: str) -> tuple[list[dict[str, Any]], str]:
    """The installed distributions of `dist` (version, RECORD problems) and the env's hash record file."""
    found = query(module, python, "dist", dist)
    dists = [{"version": d["version"], "record_problems": installed_record_problems(d["site"], d["record"]),
              "has_record": d["record"] is not None}
             for d in found["found"]]
    return dists, os.path.join(found["prefix"], ".ascendops", f"{dist}.sha256")


def reinstall_args(dists: list[dict[str, Any]]) -> list[str]:
    """How pip replaces what is installed: pip cannot uninstall a distribution without a RECORD
    (uninstall-no-record-file), so over one of those it installs the wheel's files in place."""
    if any(not d["has_record"] for d in dists):
        return ["--ignore-installed"]
    return ["--force-reinstall"]


def read_recorded(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().strip()
    except FileNotFoundError:
        return ""


def record_hash(path: str, sha256: str) -> None:
    """Write the hash file whole or not at all: a half-written one would hide a changed wheel."""
    os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".sha256.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(sha256 + "\n")
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def converge_wheel(module: AnsibleModule, python: str) -> NoReturn:
    wheel = module.params["wheel"]
    try:
        info = parse_wheel_filename(os.path.basename(wheel))
    except WheelError as exc:
        module.fail_json(msg=f"wheel: {exc}")
    dist, version = info["name"], info["version"]
    name = canonical_name(dist)
    dists, state = wheel_state(module, python, dist)
    have = dists[0]["version"] if len(dists) == 1 else None
    entry = {"spec": wheel, "name": name, "have": have, "want": version}
    result = {"state": state, "versions": {name: have}}
    if not os.path.isfile(wheel):
        if module.check_mode:
            # Check mode runs before the wheel is staged or built: it would be installed.
            module.exit_json(changed=True, pending=[dict(entry, reasons=[f"{wheel} is not there yet"])],
                             sha256=None, **result)
        module.fail_json(msg=f"wheel: {wheel} does not exist: stage or build it first.", **result)
    sha256 = module.sha256(wheel)
    reasons = wheel_reasons(version, dists, sha256, read_recorded(state))
    result.update(sha256=sha256, pending=[dict(entry, reasons=reasons)] if reasons else [])
    if not reasons or module.check_mode:
        module.exit_json(changed=bool(reasons), **result)

    install(module, python, reinstall_args(dists) + ["--no-deps", wheel], result["pending"])
    dists, state = wheel_state(module, python, dist)
    left = wheel_reasons(version, dists, sha256, sha256)
    if left:
        module.fail_json(msg=f"pip installed {os.path.basename(wheel)} but the environment still differs: "
                             + "; ".join(left), **result)
    record_hash(state, sha256)
    module.exit_json(changed=True, **dict(result, versions={name: dists[0]["version"]}))


def constraints_file(tmpdir: str, lines: list[str]) -> str:
    path = os.path.join(tmpdir, "constraints.txt")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("".join(line + "\n" for line in lines))
    return path


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "python": {"type": "path", "required": True},
            "requirements": {"type": "list", "elements": "str"},
            "keep": {"type": "list", "elements": "str", "default": []},
            "editable": {"type": "path"},
            "import_name": {"type": "str"},
            "wheel": {"type": "path"},
            "constraints": {"type": "list", "elements": "str", "default": []},
            "pip_args": {"type": "list", "elements": "str", "default": []},
        },
        mutually_exclusive=[("requirements", "editable", "wheel")],
        required_by={"import_name": "editable"},
        required_one_of=[("requirements", "editable", "wheel")],
        supports_check_mode=True,
    )
    # A mirror URL may carry user:password@: whatever the module returns (the command, pip's
    # output, a message) shows the password masked.
    module.no_log_values.update(url_passwords(module.params["pip_args"] + (module.params["requirements"] or [])))
    python = module.params["python"]
    if module.params["keep"] and module.params["requirements"] is None:
        module.fail_json(msg="keep applies to requirements only")
    if not os.access(python, os.X_OK):
        module.fail_json(msg=f"{python} does not exist or is not executable: create the environment first.")
    if module.params["requirements"] is not None:
        if module.params["constraints"]:
            module.params["pip_args"] += ["--constraint", constraints_file(module.tmpdir, module.params["constraints"])]
        converge_requirements(module, python)
    if module.params["editable"]:
        converge_editable(module, python)
    converge_wheel(module, python)


if __name__ == "__main__":
    main()
