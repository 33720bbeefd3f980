#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: bundle_check
short_description: Check that an offline bundle (artifact source directory) is complete and intact
version_added: "0.1.0"
description:
  - Hashes every file of a bundle directory (sha256; hidden files are ignored) and compares
    the files with the bundle's manifest (C(sha256sum) format) and with the files the chosen
    versions need.
  - Reports required files (or patterns) no file satisfies and manifest lines without a file
    (RV(missing)), files whose sha256 differs from the manifest (RV(mismatched)) and files
    the manifest does not list (RV(unlisted)), and fails with one message per problem that
    says how to fix it.
  - With O(update_manifest=true) it (re)writes the manifest to list every file present; the
    lines of absent files are kept, so they are still reported as missing. It refuses when a
    file differs from its line, because rewriting would hide a corrupt file. In check mode a
    required entry that matches neither a file nor a manifest line counts as a change (the
    run that fetches the file adds its line).
author:
  - ascendops.gr00t maintainers (@ascendops)
options:
  path:
    description: The bundle directory.
    type: path
    required: true
  manifest:
    description: Manifest file name in O(path).
    type: str
    default: SHA256SUMS
  required:
    description:
      - Files the bundle must hold, relative to O(path); an entry with C(*), C(?) or C([) is a
        pattern that at least one file must match (C(*) does not cross C(/)), e.g.
        C(wheels/torch_npu-2.7.1.post2-*.whl). Wheel distribution names compare normalized
        (C(PyYAML) matches C(pyyaml)).
    type: list
    elements: str
    default: []
  fail_on:
    description: Which kinds of problem fail the task; the others are only returned.
    type: list
    elements: str
    choices: [missing, mismatched, unlisted]
    default: [missing, mismatched, unlisted]
  update_manifest:
    description: Rewrite the manifest to list every file present, when its content changes.
    type: bool
    default: false
extends_documentation_fragment:
  - ascendops.gr00t.attributes
attributes:
  diff_mode:
    support: full
"""

EXAMPLES = r"""
- name: Check the artifact source before provisioning
  ascendops.gr00t.bundle_check:
    path: /srv/ascend-artifacts
    required:
      - Ascend-cann-toolkit_9.0.0_linux-aarch64.run
      - wheels/torch_npu-2.7.1.post2-*.whl

- name: List every file of a bundle in its manifest, failing only on corrupt files
  ascendops.gr00t.bundle_check:
    path: /srv/bundle
    update_manifest: true
    fail_on: [mismatched]
"""

RETURN = r"""
ok:
  description: Whether nothing is missing, mismatched or unlisted.
  returned: always
  type: bool
missing:
  description: Required files or patterns no file satisfies, then manifest lines whose file is absent.
  returned: always
  type: list
  elements: str
  sample: ["wheels/torch_npu-2.7.1.post2-*.whl"]
mismatched:
  description: Files whose sha256 differs from their manifest line.
  returned: always
  type: list
  elements: str
unlisted:
  description: Files the manifest does not list.
  returned: always
  type: list
  elements: str
problems:
  description: One message per problem of every kind, with the fix.
  returned: always
  type: list
  elements: str
files:
  description: Number of files in the bundle (manifest and hidden files not counted).
  returned: always
  type: int
manifest:
  description: Path of the manifest.
  returned: always
  type: str
"""

import os
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ascendops.gr00t.plugins.module_utils.bundle import (
    check_bundle,
    merge_manifest,
    parse_sha256sums,
    problem_messages,
    render_sha256sums,
    scan,
    sha256_file,
)

KINDS = ["missing", "mismatched", "unlisted"]


def _read_manifest(module: AnsibleModule, path: str) -> tuple[str | None, dict[str, str]]:
    if not os.path.exists(path):
        return None, {}
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        return text, parse_sha256sums(text)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        module.fail_json(msg=f"Cannot read the manifest {path}: {exc}. Fix or remove the bad line "
                             f"(each line is `<sha256>  <file>`, as sha256sum writes it).")
    return None, {}


def _write(module: AnsibleModule, path: str, text: str) -> None:
    handle, tmp = tempfile.mkstemp(prefix=".manifest-", dir=os.path.dirname(path))
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text)
    os.chmod(tmp, 0o644)
    module.atomic_move(tmp, path)


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "path": {"type": "path", "required": True},
            "manifest": {"type": "str", "default": "SHA256SUMS"},
            "required": {"type": "list", "elements": "str", "default": []},
            "fail_on": {"type": "list", "elements": "str", "choices": KINDS, "default": KINDS},
            "update_manifest": {"type": "bool", "default": False},
        },
        supports_check_mode=True,
    )
    root, name = module.params["path"], module.params["manifest"]
    manifest_path = os.path.join(root, name)
    if not os.path.isdir(root):
        module.fail_json(msg=f"The bundle {root} is not a directory. Point path (ascend_artifact_source) at the "
                             f"directory you copied the bundle into.", manifest=manifest_path)

    text, listed = _read_manifest(module, manifest_path)
    present = {rel: sha256_file(os.path.join(root, rel)) for rel in scan(root, name)}
    result = check_bundle(present, listed, module.params["required"])
    changed, diff = False, {}
    if module.params["update_manifest"]:
        if result["mismatched"]:
            problems = problem_messages(result, present, listed, root, name, ["mismatched"])
            module.fail_json(msg="Not rewriting the manifest, it would hide damage. " + " ".join(problems),
                             ok=False, problems=problems, files=len(present), manifest=manifest_path, **result)
        listed, pending = merge_manifest(present, listed, module.params["required"])
        new_text = render_sha256sums(listed)
        # Under --check the files still to be fetched are not there to hash: a pending
        # required entry adds a line once the run fetches it.
        changed = new_text != text or (module.check_mode and bool(pending))
        diff = {"before": text or "", "after": new_text, "before_header": manifest_path, "after_header": manifest_path}
        if changed and not module.check_mode:
            _write(module, manifest_path, new_text)
        result = check_bundle(present, listed, module.params["required"])
    elif text is None:
        result["missing"].insert(0, name)

    problems = problem_messages(result, present, listed, root, name, KINDS)
    output = {"changed": changed, "ok": not problems, "problems": problems, "files": len(present),
              "manifest": manifest_path, **result}
    if diff and module._diff:
        output["diff"] = diff
    failing = problem_messages(result, present, listed, root, name, module.params["fail_on"])
    if failing:
        module.fail_json(msg=f"The bundle {root} is not usable. " + " ".join(
            f"({i}) {m}" for i, m in enumerate(failing, 1)), **output)
    module.exit_json(**output)


if __name__ == "__main__":
    main()
