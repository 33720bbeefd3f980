#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: npu_facts
short_description: Gather facts about the Ascend NPUs of a node with npu-smi
version_added: "0.1.0"
description:
  - Runs C(npu-smi info) and returns the NPU count, the npu-smi version and, per device,
    its name, health, PCI bus id, power, temperature, AI Core usage and HBM usage, and its
    chips (one on a 910B server, two on an Atlas A3; the NPU count counts NPUs, not chips).
  - With O(board=true) it also runs C(npu-smi info -t board -i <id>) for every device and
    adds the driver (software) version, the firmware version and their compatibility.
  - An Atlas A3 prints its two chips as one NPU row over two chip rows or as the NPU row
    repeated per chip; both give one device with two chips, never two devices.
  - Fails with the tool's own message and a hint when npu-smi is missing or reports an
    error. C(-8005) is an internal error of the device driver (restart the device driver or
    reboot the node; in a container, check the C(/dev/davinci*) devices are passed in);
    C(-8012) the device is not ready, still starting (wait and retry, reboot if it stays);
    C(-8020) the device is used by another process (find it with C(fuser -v /dev/davinci*)).
author:
  - ascendops.gr00t maintainers (@ascendops)
options:
  npu_smi:
    description:
      - Name or path of the npu-smi binary.
      - A name is looked up on E(PATH) and in C(/usr/local/sbin), C(/usr/local/bin) and
        C(/usr/local/Ascend/driver/tools).
    type: str
    default: npu-smi
  required:
    description:
      - When V(true), a missing or failing npu-smi fails the task.
      - When V(false), the task succeeds and reports the problem in RV(ansible_facts.npu.present) and
        RV(ansible_facts.npu.error), so a caller can collect it with other findings.
    type: bool
    default: true
  board:
    description:
      - Also query the board information of every device and add C(software_version),
        C(firmware_version) and C(compatibility) to it.
    type: bool
    default: false
notes:
  - The module only reads; it never reports a change.
extends_documentation_fragment:
  - ascendops.gr00t.attributes
  - ascendops.gr00t.attributes.facts
"""

EXAMPLES = r"""
- name: Gather NPU facts
  ascendops.gr00t.npu_facts:

- name: Require eight healthy NPUs
  ansible.builtin.assert:
    that:
      - ansible_facts.npu.count == 8
      - ansible_facts.npu.devices | rejectattr('health', 'equalto', 'OK') | list | length == 0
    fail_msg: "{{ ansible_facts.npu.devices | rejectattr('health', 'equalto', 'OK') | list }}"

- name: Gather NPU facts with firmware versions, npu-smi outside PATH
  ascendops.gr00t.npu_facts:
    npu_smi: /usr/local/Ascend/driver/tools/npu-smi
    board: true
"""

RETURN = r"""
ansible_facts:
  description: Facts added to the host.
  returned: success
  type: complex
  contains:
    npu:
      description: The NPUs as npu-smi reports them.
      returned: success
      type: dict
      contains:
        present:
          description: Whether the npu-smi binary was found.
          type: bool
          returned: success
          sample: true
        error:
          description: Why npu-smi gave no result (with O(required=false)); null when it did.
          type: str
          returned: success
          sample: null
        count:
          description: Number of NPUs npu-smi lists.
          type: int
          returned: success
          sample: 8
        npu_smi_version:
          description: Version in the title row of C(npu-smi info); null when it has none.
          type: str
          returned: success
          sample: 25.5.1
        devices:
          description: One entry per NPU, sorted by id.
          type: list
          elements: dict
          returned: success
          contains:
            id:
              description: NPU id, as taken by C(npu-smi -i).
              type: int
              sample: 0
            name:
              description: Chip name.
              type: str
              sample: 910B3
            health:
              description:
                - One of V(OK), V(Warning), V(Alarm), V(Critical), V(UNKNOWN).
                - When npu-smi prints a row per chip (Atlas A3), the worst of them.
              type: str
              sample: OK
            bus_id:
              description: PCI bus id of the first chip.
              type: str
              sample: "0000:C1:00.0"
            chip:
              description: Index of the first chip within the NPU.
              type: int
              sample: 0
            power_w:
              description: Power draw in watts; null when npu-smi prints NA.
              type: float
              sample: 101.8
            temp_c:
              description: Temperature in degrees Celsius; null when npu-smi prints NA.
              type: int
              sample: 43
            aicore_pct:
              description: AI Core usage of the first chip in percent; null when npu-smi prints NA.
              type: int
              sample: 0
            hbm_used_mb:
              description: HBM in use on the first chip, in MB; null when npu-smi prints none.
              type: int
              sample: 3318
            hbm_total_mb:
              description: HBM size of the first chip, in MB; null when npu-smi prints none.
              type: int
              sample: 65536
            chips:
              description:
                - Every chip of the NPU in the order printed (one on a 910B server, two on an
                  Atlas A3), each with C(chip) (index), C(bus_id), C(aicore_pct),
                  C(hbm_used_mb) and C(hbm_total_mb); the first one's values are also at the
                  top level of the device.
              type: list
              elements: dict
              sample: [{"chip": 0, "bus_id": "0000:C1:00.0", "aicore_pct": 0, "hbm_used_mb": 3318, "hbm_total_mb": 65536}]
            software_version:
              description: Driver version from the board information.
              type: str
              returned: when O(board=true)
              sample: 25.5.1
            firmware_version:
              description: Firmware version from the board information.
              type: str
              returned: when O(board=true)
              sample: 7.8.0.6.201
            compatibility:
              description: Whether driver and firmware match, from the board information.
              type: str
              returned: when O(board=true)
              sample: OK
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ascendops.gr00t.plugins.module_utils.npu_gather import npu_facts


def main() -> None:
    module = AnsibleModule(
        argument_spec=dict(
            npu_smi=dict(type="str", default="npu-smi"),
            board=dict(type="bool", default=False),
            required=dict(type="bool", default=True),
        ),
        supports_check_mode=True,
    )
    facts = npu_facts(module, module.params["npu_smi"], module.params["board"], module.params["required"])
    module.exit_json(changed=False, ansible_facts={"npu": facts})


if __name__ == "__main__":
    main()
