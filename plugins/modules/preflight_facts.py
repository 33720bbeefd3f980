#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: preflight_facts
short_description: Read what the preflight checks need from a node in one run
version_added: "0.2.0"
description:
  - Counts the NPU functions on PCI (C(lspci -D -d)), lists the packages of a dkms build of
    the driver's modules that are not installed (dpkg, or rpm where there is no dpkg), reads
    the owner and mode of the Ascend install root, measures free space at the install paths
    (at the nearest existing directory), asks the Miniforge prefix's conda for its version and reads the
    node's memory (C(/proc/meminfo)).
  - Also sets the facts of M(ascendops.gr00t.npu_facts) (with O(ascendops.gr00t.npu_facts#module:required=false))
    and of M(ascendops.gr00t.ascend_install_facts) for O(install_root), so the preflight reads a node with
    one module run.
  - Reads only; never reports a change. A command that is missing or fails is reported, not
    raised, so the preflight report can name every problem at once.
author:
  - ascendops.gr00t maintainers (@ascendops)
options:
  pci_id:
    description: The C(vendor:device) id of the NPUs (19e5:d802 for the 910B).
    type: str
    required: true
  kernel:
    description: The running kernel release, for the kernel headers package.
    type: str
    required: true
  install_root:
    description: The Ascend install root.
    type: path
    required: true
  disk_paths:
    description: Absolute paths to measure free space for.
    type: list
    elements: path
    default: []
  conda_prefix:
    description: The Miniforge prefix whose C(bin/conda) is asked for its version.
    type: path
    required: true
  npu_smi:
    description:
      - Name or path of the npu-smi binary, as for M(ascendops.gr00t.npu_facts).
      - A missing or failing npu-smi is reported in C(ansible_facts.npu.present) and
        C(ansible_facts.npu.error) (see RV(ansible_facts)), not raised.
    type: str
    default: npu-smi
extends_documentation_fragment:
  - ascendops.gr00t.attributes
  - ascendops.gr00t.installer_lock
  - ascendops.gr00t.attributes.facts
"""

EXAMPLES = r"""
- name: Read the node for the preflight checks
  ascendops.gr00t.preflight_facts:
    pci_id: "19e5:d802"
    kernel: "{{ ansible_facts['kernel'] }}"
    install_root: /usr/local/Ascend
    disk_paths: [/usr/local/Ascend, /opt]
    conda_prefix: /opt/miniforge3
    npu_smi: npu-smi
  register: node
"""

RETURN = r"""
lspci:
  description: The rc of C(lspci), the NPU functions it listed and its stderr.
  returned: always
  type: dict
  sample: {"rc": 0, "count": 8, "stderr": ""}
dkms_missing:
  description: The packages of a dkms build that are not installed (dkms, gcc, the headers of O(kernel)).
  returned: always
  type: list
  elements: str
  sample: ["linux-headers-5.15.0-105-generic"]
install_root:
  description: Whether O(install_root) exists, its owner and its mode (octal string).
  returned: always
  type: dict
  sample: {"exists": true, "owner": "root", "mode": "0755"}
disk:
  description: Per path of O(disk_paths), where it was measured and the free bytes there.
  returned: always
  type: dict
  sample: {"/usr/local/Ascend": {"measured_at": "/usr/local", "exists": false, "free_bytes": 83500552192,
                                 "total_bytes": 270553206784}}
conda_version:
  description: What C(conda --version) answered, without the C(conda) word; empty when it did not answer.
  returned: always
  type: str
  sample: 24.3.0
mem_total_mb:
  description: The node's memory in MiB (C(MemTotal) of C(/proc/meminfo)), -1 when it cannot be read.
  returned: always
  type: int
  sample: 1572864
ansible_facts:
  description: The C(npu) facts of M(ascendops.gr00t.npu_facts) and the C(ascend) facts of
    M(ascendops.gr00t.ascend_install_facts); see those modules for their keys.
  returned: always
  type: dict
  sample: {"npu": {"present": false, "count": 0, "devices": [], "npu_smi_version": null,
                   "error": "npu-smi not found: ..."},
           "ascend": {"root": "/usr/local/Ascend", "driver_version": null, "toolkit_version": null}}
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ascendops.gr00t.plugins.module_utils.ascend_install import install_facts
from ansible_collections.ascendops.gr00t.plugins.module_utils.commands import run_if_present
from ansible_collections.ascendops.gr00t.plugins.module_utils.conda_env import conda_version
from ansible_collections.ascendops.gr00t.plugins.module_utils.disk import measure
from ansible_collections.ascendops.gr00t.plugins.module_utils.installer_lock import ARGUMENT_SPEC as INSTALLER_LOCK, wait_or_fail
from ansible_collections.ascendops.gr00t.plugins.module_utils.npu_gather import npu_facts
from ansible_collections.ascendops.gr00t.plugins.module_utils.preflight import (
    dkms_packages, dpkg_installed, mem_total_mb, owner_and_mode, pci_functions)


def dkms_missing(module: AnsibleModule, kernel: str) -> list[str]:
    if module.get_bin_path("dpkg-query"):
        return [pkg for pkg in dkms_packages("dpkg", kernel)
                if not dpkg_installed(*run_if_present(module, ["dpkg-query", "-W", "-f=${Status}", pkg])[:2])]
    return [pkg for pkg in dkms_packages("rpm", kernel) if run_if_present(module, ["rpm", "-q", pkg])[0] != 0]


def read_mem_total_mb(path: str = "/proc/meminfo") -> int:
    try:
        with open(path, encoding="utf-8") as handle:
            return mem_total_mb(handle.read())
    except OSError:
        return -1


def main() -> None:
    module = AnsibleModule(
        argument_spec=dict(
            pci_id=dict(type="str", required=True),
            kernel=dict(type="str", required=True),
            install_root=dict(type="path", required=True),
            disk_paths=dict(type="list", elements="path", default=[]),
            conda_prefix=dict(type="path", required=True),
            npu_smi=dict(type="str", default="npu-smi"),
            **INSTALLER_LOCK,
        ),
        supports_check_mode=True,
    )
    params = module.params
    relative = [p for p in [params["install_root"], params["conda_prefix"], *params["disk_paths"]]
                if not os.path.isabs(p)]
    if relative:
        module.fail_json(msg="install_root, conda_prefix and disk_paths must be absolute, got: {0}".format(
            ", ".join(relative)))
    wait_or_fail(module)
    rc, out, err = run_if_present(module, ["lspci", "-D", "-d", params["pci_id"]])
    conda_rc, conda_out, dummy = run_if_present(module, [os.path.join(params["conda_prefix"], "bin", "conda"), "--version"])
    module.exit_json(
        changed=False,
        lspci={"rc": rc, "count": pci_functions(out) if rc == 0 else -1, "stderr": err.strip()},
        dkms_missing=dkms_missing(module, params["kernel"]),
        install_root=owner_and_mode(params["install_root"]),
        disk={path: measure(path) for path in params["disk_paths"]},
        conda_version=conda_version(conda_rc, conda_out),
        mem_total_mb=read_mem_total_mb(),
        ansible_facts={"npu": npu_facts(module, params["npu_smi"], board=False, required=False),
                       "ascend": install_facts(params["install_root"])})


if __name__ == "__main__":
    main()
