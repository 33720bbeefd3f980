#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: gr00t_npu_patch
short_description: Patch a GR00T N1.7 checkout so it trains on Ascend NPUs (hccl)
version_added: "0.1.0"
description:
  - Finds each NPU patch site of a GR00T N1.7 checkout by parsing its Python (function name
    and statement shape, never line numbers or a stored diff) and edits the located statement
    only; line endings (CRLF too), indentation and all other bytes stay as they were.
  - "C(collective_device): C(gr00t/experiment/dist_utils.py) C(_collective_device()) returns
    C(npu:<current device>) under hccl; the nccl and cpu branches are untouched."
  - "C(save_decision_device): C(gr00t/experiment/utils.py) C(_broadcast_save_decision())
    broadcasts on the current NPU under hccl, as it does on CUDA under nccl."
  - "C(pg_tensor_device): C(gr00t/data/dataset/sharded_mixture_dataset.py)
    C(_get_default_pg_tensor_device()) returns the current NPU under hccl."
  - "C(dataloader_pin_memory): C(gr00t/experiment/trainer.py) C(get_train_dataloader()) passes
    C(pin_memory=False) when torch has the NPU backend (C(torch.npu)), the configured value otherwise."
  - "C(capability_probe): C(gr00t/model/modules/dit.py) C(_is_spark_sm121()) returns False instead of
    raising when C(get_device_capability()) fails (TypeError, RuntimeError), with warnings silenced."
  - "Optional C(video_backend): C(gr00t/configs/data/data_config.py) C(DataConfig.video_backend) defaults to
    I(video_backend) (upstream's is C(torchcodec)); GR00T's training data loader decodes with it and
    C(launch_finetune.py) has no flag for it. Only the string constant changes."
  - A site that already has the change (made here, by hand or upstream) reports C(already);
    a required site that cannot be found fails the task before any file is written, naming the
    file, the function and the upstream commit the checkout was expected to be.
  - Every edited file is compiled before it is written; files are replaced through a temporary
    file and a rename, keeping mode and owner.
  - Writes C(gr00t_n1.7_ascend.patch) into I(report_dir) - the combined unified diff of all
    edits relative to the unpatched files, applicable with C(git apply) - and keeps the unpatched
    copies it needs for that under C(report_dir/pristine).
author:
  - ascendops.gr00t maintainers (@ascendops)
options:
  src:
    description: Root of the GR00T checkout (the directory holding C(gr00t/) and C(pyproject.toml)).
    type: path
    required: true
  report_dir:
    description: Directory for C(gr00t_n1.7_ascend.patch) and the unpatched copies; created if absent.
    type: path
    required: true
  sites:
    description: Required sites to apply. All five by default.
    type: list
    elements: str
    choices: [collective_device, save_decision_device, pg_tensor_device, dataloader_pin_memory, capability_probe]
    default: [collective_device, save_decision_device, pg_tensor_device, dataloader_pin_memory, capability_probe]
  tf32_off:
    description: Also pass C(tf32=False) to C(TrainingArguments) in C(gr00t/experiment/experiment.py) C(run()).
    type: bool
    default: false
  spawn_workers:
    description:
      - Also start DataLoader workers with C(spawn) (C(multiprocessing_context="spawn") in C(run())),
        which lets C(dataloader_num_workers) be above 0 on NPUs, where forked workers cannot re-initialise
        the device.
    type: bool
    default: false
  video_backend:
    description:
      - Also make this GR00T's default video backend (the C(video_backend) site); empty leaves
        C(data_config.py) as upstream has it.
      - C(ffmpeg) decodes with the system C(ffmpeg) and C(ffprobe), a process per read, where no
        torchcodec build exists for the node (aarch64 with torch 2.7).
      - A checkout whose C(DataConfig) has no C(video_backend) field with a string default fails the
        task, naming the file and the field.
    type: str
    choices: ["", torchcodec, ffmpeg]
    default: ""
  expected_commit:
    description: The upstream commit the checkout should be at; only used in error messages.
    type: str
    default: ""
  state:
    description:
      - C(present) applies the patch.
      - C(absent) restores the unpatched copy of every file whose text is exactly this module's edit of
        it (as before updating the checkout to another commit); a file that also holds other changes is
        left as it is and listed in C(kept).
    type: str
    choices: [present, absent]
    default: present
extends_documentation_fragment:
  - ascendops.gr00t.attributes
attributes:
  diff_mode:
    support: full
"""

EXAMPLES = r"""
- name: Patch the checkout for Ascend NPUs
  ascendops.gr00t.gr00t_npu_patch:
    src: /opt/gr00t/Isaac-GR00T
    report_dir: /opt/gr00t/report
    expected_commit: "{{ gr00t_version }}"
  register: gr00t_patch

- name: Also start DataLoader workers with spawn
  ascendops.gr00t.gr00t_npu_patch:
    src: /opt/gr00t/Isaac-GR00T
    report_dir: /opt/gr00t/report
    spawn_workers: true

- name: Also decode the dataset's videos with the system ffmpeg
  ascendops.gr00t.gr00t_npu_patch:
    src: /opt/gr00t/Isaac-GR00T
    report_dir: /opt/gr00t/report
    video_backend: ffmpeg
"""

RETURN = r"""
sites:
  description:
    - Per site, the file, function, intended change, status (patched, already, missing) and a reason when missing.
    - The C(video_backend) site names its class under C(function) and the attribute under C(field).
  returned: always
  type: dict
  sample:
    collective_device:
      file: gr00t/experiment/dist_utils.py
      function: _collective_device
      change: hccl returns the current NPU device
      status: patched
files:
  description: Checkout-relative paths of the files edited (or, in check mode, that would be).
  returned: always
  type: list
  elements: str
  sample: [gr00t/experiment/dist_utils.py]
report:
  description: Path of the combined patch.
  returned: always
  type: str
  sample: /opt/gr00t/report/gr00t_n1.7_ascend.patch
unreviewed:
  description: Files with an edit already in place whose unpatched text was not available, so the combined patch lacks them.
  returned: always
  type: list
  elements: str
kept:
  description: With I(state=absent), files left patched because they hold other changes too.
  returned: when state is absent
  type: list
  elements: str
diff:
  description: Per edited file, the text before and after (with C(--diff)).
  returned: when diff mode is on and a file changes
  type: list
  elements: dict
"""

import os
import subprocess
from typing import Optional

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ascendops.gr00t.plugins.module_utils.gr00t_patch import (
    OPTIONAL_SITES,
    REQUIRED_NAMES,
    atomic_write,
    missing_message,
    plan_checkout,
    pristine_text,
    read_text,
    revert_plan,
    select_sites,
    unified_diff,
)

REPORT_NAME = "gr00t_n1.7_ascend.patch"


def committed_text(src: str, path: str) -> Optional[str]:
    """The file as committed at HEAD, when the checkout is a git work tree."""
    if not os.path.isdir(os.path.join(src, ".git")):
        return None
    try:
        result = subprocess.run(["git", "-C", src, "show", "HEAD:" + path], capture_output=True, check=False)
    except OSError:
        return None
    return result.stdout.decode("utf-8") if result.returncode == 0 else None


def stored_text(path: str) -> Optional[str]:
    return read_text(path) if os.path.isfile(path) else None


def revert(module: AnsibleModule, src: str, sites: list, pristine_dir: str) -> None:
    try:
        restore, kept = revert_plan(src, sites, pristine_dir)
    except (SyntaxError, UnicodeDecodeError) as error:
        module.fail_json(msg="GR00T NPU patch: cannot tell our edit of {0} apart: {1}".format(
            getattr(error, "filename", None) or src, error))
    result = dict(changed=bool(restore), files=[path for path, dummy in restore], kept=kept)
    if module._diff and restore:
        result["diff"] = [dict(before_header=os.path.join(src, path), after_header=os.path.join(src, path),
                               before=read_text(os.path.join(src, path)), after=text) for path, text in restore]
    if not module.check_mode:
        for path, text in restore:
            atomic_write(os.path.join(src, path), text)
    module.exit_json(**result)


def main() -> None:
    module = AnsibleModule(
        argument_spec=dict(
            src=dict(type="path", required=True),
            report_dir=dict(type="path", required=True),
            sites=dict(type="list", elements="str", choices=list(REQUIRED_NAMES), default=list(REQUIRED_NAMES)),
            tf32_off=dict(type="bool", default=False),
            spawn_workers=dict(type="bool", default=False),
            video_backend=dict(type="str", choices=["", "torchcodec", "ffmpeg"], default=""),
            expected_commit=dict(type="str", default=""),
            state=dict(type="str", choices=["present", "absent"], default="present"),
        ),
        supports_check_mode=True,
    )
    params = module.params
    src, report_dir = params["src"], params["report_dir"]
    if not os.path.isdir(os.path.join(src, "gr00t")):
        module.fail_json(msg="src={0} is not a GR00T checkout (no gr00t/ package there); set gr00t_src_dir to the "
                             "directory holding gr00t/ and pyproject.toml.".format(src))
    sites = select_sites(params["sites"], {key: params[key] for key in OPTIONAL_SITES}, params["video_backend"])
    if params["state"] == "absent":
        revert(module, src, sites, os.path.join(report_dir, "pristine"))
    try:
        plans = plan_checkout(src, sites)
    except (SyntaxError, UnicodeDecodeError) as error:
        module.fail_json(msg="GR00T NPU patch: {0} cannot be patched safely: {1}. Nothing was changed.".format(
            getattr(error, "filename", None) or src, error))
    problem = missing_message(plans, src, params["expected_commit"])
    if problem:
        module.fail_json(msg=problem, sites={k: v for plan in plans for k, v in plan.statuses.items()})

    report = os.path.join(report_dir, REPORT_NAME)
    pristine_dir = os.path.join(report_dir, "pristine")
    patch_parts, unreviewed, writes = [], [], []
    for plan in sorted(plans, key=lambda p: p.path):
        stored_path = os.path.join(pristine_dir, plan.path)
        pristine = pristine_text(plan, stored_text(stored_path), lambda path: committed_text(src, path))
        if pristine is None:
            unreviewed.append(plan.path)
            continue
        if pristine != stored_text(stored_path):
            writes.append((stored_path, pristine, os.path.join(src, plan.path)))
        patch_parts.append(unified_diff(pristine, plan.after, plan.path))
    patch = "".join(patch_parts)
    if patch != stored_text(report):
        writes.append((report, patch, None))

    edited = [plan for plan in plans if plan.changed]
    result = dict(
        changed=bool(edited or writes),
        sites={k: v for plan in plans for k, v in plan.statuses.items()},
        files=[plan.path for plan in edited],
        report=report,
        unreviewed=unreviewed,
    )
    if module._diff and edited:
        result["diff"] = [dict(before_header=os.path.join(src, p.path), after_header=os.path.join(src, p.path),
                               before=p.before, after=p.after) for p in edited]
    if not module.check_mode:
        for plan in edited:
            atomic_write(os.path.join(src, plan.path), plan.after)
        for path, text, like in writes:
            atomic_write(path, text, like)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
