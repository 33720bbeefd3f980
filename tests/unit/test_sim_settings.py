"""The simulated nodes are described twice: for molecule (.config/molecule/config.yml, inline
group_vars, since molecule's inventory links would replace every scenario's own variables) and
for the demo and the pytest suites (inventories/sim/group_vars/all.yml). Every setting both
give must agree, so a scenario and the demo provision the same node."""
from __future__ import annotations

from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
# Paths: molecule names them from its project directory, the inventory from its own; the
# inventory alone turns the device network on (the network scenario sets its own).
DIFFER_BY_PLACE = {"ascend_artifact_source", "gr00t_version", "ascend_manage_npu_network"}


def molecule_vars() -> dict:
    config = yaml.safe_load((REPO / ".config" / "molecule" / "config.yml").read_text(encoding="utf-8"))
    return config["provisioner"]["inventory"]["group_vars"]["all"]


def inventory_vars() -> dict:
    return yaml.safe_load((REPO / "inventories" / "sim" / "group_vars" / "all.yml").read_text(encoding="utf-8"))


def test_shared_settings_agree() -> None:
    molecule, inventory = molecule_vars(), inventory_vars()
    shared = (set(molecule) & set(inventory)) - DIFFER_BY_PLACE
    assert len(shared) >= 15, sorted(shared)
    assert {name: molecule[name] for name in shared} == {name: inventory[name] for name in shared}


def test_every_node_setting_is_in_both() -> None:
    """A setting of the simulated node in one file only is one the other forgot."""
    molecule, inventory = molecule_vars(), inventory_vars()
    only_molecule = set(molecule) - set(inventory) - {"sim_artifacts"} - DIFFER_BY_PLACE
    only_inventory = {name for name in set(inventory) - set(molecule) - DIFFER_BY_PLACE
                      if not name.startswith(("ansible_", "npu_network_"))}
    assert (sorted(only_molecule), sorted(only_inventory)) == ([], [])
