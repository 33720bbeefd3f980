"""A refusal names the variable the user set, with its value, and only the settings that are off.

Most stage settings default to a site-wide one (preflight_expected_npu_count is
"{{ ascend_npu_count }}"): the set_by lookup names the variable a value comes from, and each
check covers one setting, so a message lists the settings that fail and no other.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import ChainMap
from pathlib import Path
from typing import Any

import pytest
from ansible.template import trust_as_template

from ansible_collections.ascendops.gr00t.plugins.lookup.set_by import (
    joined,
    origin,
    passed_on,
    raw_value,
    set_by,
    template_names,
)
from rolevars import COLLECTIONS_ROOT, expression, failing, first_pass, one_line, run_cases

T = trust_as_template


# ---------------------------------------------------------------- set_by, the pure functions


def site() -> dict[str, Any]:
    """A stage's defaults over the site-wide ones, as a play sees them (not templated)."""
    return {"ascend_npu_count": 8, "preflight_expected_npu_count": T("{{ ascend_npu_count }}"),
            "ascend_conda_prefix": "/opt/miniforge3", "ascend_conda_env": "torch2.7.1",
            "train_conda_prefix": T("{{ ascend_conda_prefix }}"), "train_conda_env": T("{{ ascend_conda_env }}"),
            "train_python": T("{{ train_conda_prefix }}/envs/{{ train_conda_env }}/bin/python"),
            "ascend_dataset_path": "/data/libero",
            "train_dataset_path": T("{{ gr00t_dataset_path | default(ascend_dataset_path) }}"),
            "train_master_port": 29500,
            "npu_network_rendezvous_port": T("{{ train_master_port | default(29500) }}")}


def test_a_default_that_is_a_site_wide_variable_is_named_by_that_one() -> None:
    assert set_by("preflight_expected_npu_count", site()) == "ascend_npu_count"


def test_a_variable_set_on_its_own_is_named_by_itself() -> None:
    variables = site() | {"preflight_expected_npu_count": 4}
    assert set_by("preflight_expected_npu_count", variables) == "preflight_expected_npu_count"
    # A value from -e is trusted as a template, but is no reference.
    variables = site() | {"preflight_expected_npu_count": T("4")}
    assert set_by("preflight_expected_npu_count", variables) == "preflight_expected_npu_count"


def test_a_fallback_is_followed_only_when_the_first_variable_is_not_defined() -> None:
    assert set_by("train_dataset_path", site()) == "ascend_dataset_path"
    variables = site() | {"gr00t_dataset_path": "/data/mine"}
    assert set_by("train_dataset_path", variables) == "gr00t_dataset_path"
    # A literal fallback is the value's own.
    without_port = {k: v for k, v in site().items() if k != "train_master_port"}
    assert set_by("npu_network_rendezvous_port", without_port) == "npu_network_rendezvous_port"
    assert set_by("npu_network_rendezvous_port", site()) == "train_master_port"


def test_a_value_built_from_variables_names_those_it_comes_from() -> None:
    assert set_by("train_python", site()) == "train_python (from ascend_conda_prefix and ascend_conda_env)"
    variables = site() | {"train_python": "/usr/bin/python3"}
    assert set_by("train_python", variables) == "train_python"


def test_what_is_not_a_template_or_not_defined_is_named_as_it_is() -> None:
    variables = {"a": "{{ b }}", "b": 1, "c": T("{{ undefined_one }}")}
    # Not trusted as a template: Ansible does not template it either.
    assert set_by("a", variables) == "a"
    assert set_by("c", variables) == "c"
    assert set_by("nowhere", variables) == "nowhere"


def test_a_loop_of_references_ends_where_it_started() -> None:
    variables = {"a": T("{{ b }}"), "b": T("{{ a }}")}
    assert origin("a", variables) == "b"
    assert origin("b", variables) == "a"


def test_the_raw_value_is_read_through_every_layer_without_templating() -> None:
    class Rendering(dict):
        def get(self, key: str, default: Any = None) -> Any:
            return "rendered"

        def __getitem__(self, key: str) -> Any:
            return "rendered"

    layered = ChainMap({"x": 1}, Rendering(y=T("{{ x }}")))
    assert raw_value(layered, "y") == "{{ x }}"
    assert raw_value(layered, "z") is None


def test_the_parts_of_a_reference() -> None:
    assert passed_on(T("{{ a }}"), {}) == "a"
    assert passed_on(T("{{ a | default(b) }}"), {"a": 1}) == "a"
    assert passed_on(T("{{ a | default(b) }}"), {}) == "b"
    assert passed_on(T("{{ a | default(b) | int }}"), {}) is None
    assert passed_on(T("{{ a }}/x"), {}) is None
    assert template_names("{{ a }}/{{ b | replace('/', c) }}-{{ a }}") == ["a", "b", "c"]
    assert template_names("{{ a") == []
    assert joined(["a"]) == "a" and joined(["a", "b"]) == "a and b" and joined(["a", "b", "c"]) == "a, b and c"


def test_the_lookup_names_each_term(tmp_path: Path) -> None:
    play = tmp_path / "play.yml"
    play.write_text(json.dumps([{
        "hosts": "localhost", "gather_facts": False,
        "vars": {"site_count": 8, "stage_count": "{{ site_count }}"},
        "tasks": [{"ansible.builtin.debug": {
            "msg": "{{ lookup('ascendops.gr00t.set_by', 'stage_count', 'site_count', wantlist=True) }}"}}]}]))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(COLLECTIONS_ROOT), ANSIBLE_STDOUT_CALLBACK="json",
               ANSIBLE_LOCALHOST_WARNING="0", ANSIBLE_INVENTORY_UNPARSED_WARNING="0",
               ANSIBLE_CONFIG=str(tmp_path / "none.cfg"))
    res = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), str(play), "-c", "local"],
                         capture_output=True, text=True, env=env, cwd=tmp_path, check=False)
    document = json.loads(res.stdout[res.stdout.index("{"):])
    assert document["plays"][0]["tasks"][0]["hosts"]["localhost"]["msg"] == ["site_count", "site_count"]
    res = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), str(play), "-c", "local",
                          "-e", "stage_count=4"], capture_output=True, text=True, env=env, cwd=tmp_path, check=False)
    document = json.loads(res.stdout[res.stdout.index("{"):])
    assert document["plays"][0]["tasks"][0]["hosts"]["localhost"]["msg"] == ["stage_count", "site_count"]


# ---------------------------------------------------------------- the cases, rendered in one process

APT = {"ansible_facts": {"pkg_mgr": "apt"}}
ARCH = {"ansible_facts": {"architecture": "aarch64"}}
NODE = {"inventory_hostname": "n1", "groups": {"ascend_nodes": ["n1"]}}


def healthy_node(npus: int = 8, pci: int | None = None) -> dict[str, Any]:
    """What preflight reads on a node that has the whole stack installed and `npus` healthy NPUs."""
    return {
        "inventory_hostname": "n1", "ansible_check_mode": False,
        "ansible_facts": {
            "architecture": "aarch64", "distribution": "Ubuntu", "distribution_version": "22.04",
            "distribution_major_version": "22", "virtualization_role": "host", "kernel": "5.15.0",
            "ascend": {"driver_version": "25.5.1", "firmware_version": "7.8.0.6.201", "toolkit_version": "9.0.0",
                       "ops_version": "9.0.0", "nnal_version": "9.0.0"},
            "npu": {"present": True, "error": "", "count": npus,
                    "devices": [{"id": i, "health": "OK", "name": "910B3"} for i in range(npus)]}},
        "__preflight_node": {"mem_total_mb": 1048576, "dkms_missing": [], "conda_version": "24.3.0",
                             "install_root": {"exists": True, "owner": "root", "mode": "0755"},
                             "lspci": {"rc": 0, "count": npus if pci is None else pci, "stderr": ""}},
    }


def no_npu_smi() -> dict[str, Any]:
    """A node without npu-smi whose eight NPUs are on PCI."""
    node = healthy_node()
    node["ansible_facts"]["npu"] = {"present": False, "error": "npu-smi is not installed.", "count": 0, "devices": []}
    return node


def data_look(model: str) -> dict[str, Any]:
    """The gr00t data checks' look at a staged dataset and VLM, with no base model at `model`."""
    parts = [".", "meta/info.json", "meta/episodes.jsonl", "meta/tasks.jsonl", "meta/modality.json", "videos"]
    vlm = "/hf/hub/models--nvidia--Cosmos-Reason2-2B/snapshots"
    return {"stat": {**{f"/data/libero/{part}": {"exists": True} for part in parts},
                     f"{model}/config.json": {"exists": False}},
            "glob": {"/data/libero/data/chunk-*/": ["/data/libero/data/chunk-000/"],
                     f"{vlm}/config.json": [], f"{vlm}/*/config.json": [f"{vlm}/abc/config.json"]},
            "json": {"/data/libero/meta/info.json": {"value": {"codebase_version": "v2.1"}}}}


DATA = {"ascend_dataset_path": "/data/libero", "ascend_hf_home": "/hf"}

CASES = {
    # The first pass (role_arguments) of each stage's own input checks.
    "preflight_count_site": first_pass("preflight", {"ascend_npu_count": 17}),
    "preflight_count_own": first_pass("preflight", {"preflight_expected_npu_count": 17}),
    "npu_driver_count": first_pass("npu_driver", {"ascend_npu_count": 17}),
    "npu_driver_version": first_pass("npu_driver", {"ascend_npu_driver_version": "x"}),
    "npu_driver_firmware": first_pass("npu_driver", {"npu_driver_firmware_version": "seven"}),
    "npu_driver_root": first_pass("npu_driver", {"ascend_install_root": "opt/Ascend"}),
    "npu_driver_poll": first_pass("npu_driver", {"npu_driver_install_poll": 0}),
    "npu_driver_timeout": first_pass("npu_driver", {"npu_driver_install_timeout": "abc"}),
    "cann_version": first_pass("cann", {"ascend_cann_version": "nine"}),
    "cann_packages": first_pass("cann", {"cann_packages": ["ops", "toolkit"]}),
    "python_env_prefix": first_pass("python_env", {"ascend_conda_prefix": "opt/m"}),
    "python_env_env_site": first_pass("python_env", {"ascend_conda_env": "base"}),
    "python_env_env_own": first_pass("python_env", {"python_env_name": "base"}),
    "python_env_miniforge": first_pass("python_env", {"ascend_miniforge_version": "24"}),
    "python_env_count": first_pass("python_env", {"ascend_npu_count": 0}),
    "python_env_pin": first_pass("python_env", {"ascend_python_packages": ["torch=2.7.1"]}),
    "python_env_pin_twice": first_pass("python_env", {"python_env_extra_packages": ["torch==2.6"]}),
    "mx_driving_local": first_pass("mx_driving", {"mx_driving_local_version": "a_b", **ARCH}),
    "mx_driving_local_no_facts": first_pass("mx_driving", {"mx_driving_local_version": "a_b"}),
    "mx_driving_python": first_pass("mx_driving", {"ascend_conda_prefix": "opt/m", **ARCH}),
    "gr00t_src": first_pass("gr00t", {"ascend_gr00t_src_dir": "gr00t"}),
    "gr00t_report": first_pass("gr00t", {"gr00t_report_dir": "reports"}),
    "gr00t_vlm": first_pass("gr00t", {"ascend_hf_home": "hf"}),
    "system_deps_http_proxy": first_pass("system_deps", {"ascend_http_proxy": "proxy:3128", **APT}),
    "system_deps_https_proxy": first_pass("system_deps", {"system_deps_https_proxy": "proxy.example.com", **APT}),
    "system_deps_mirror": first_pass("system_deps", {"system_deps_apt_mirror": "mirror", **APT}),
    "system_deps_suites": first_pass("system_deps", {"system_deps_apt_mirror": "http://m",
                                                     "system_deps_apt_mirror_suites": [], **APT}),
    # The stages' own asserts (tasks/preflight.yml), from the checks in their vars.
    "train_run": failing("__train_run_checks", ["train"], {"train_max_steps": -5}),
    "train_python": failing("__train_path_checks", ["train"], {"ascend_conda_prefix": "opt/m"}),
    "train_dataset": failing("__train_path_checks", ["train"], {"ascend_dataset_path": ""}),
    "train_output": failing("__train_path_checks", ["train"], {"train_output_root": "runs"}),
    "train_port": failing("__train_cluster_checks", ["train"], {"train_master_port": 80, **NODE}),
    "train_group": failing("__train_cluster_checks", ["train"], {"train_group": "gpu", **NODE}),
    "train_poll": failing("__train_timing_checks", ["train"], {"train_health_poll": 1000}),
    "npu_network_ports": failing("__npu_network_setting_checks", ["npu_network"],
                                 {"npu_network_hccl_ports": "60000:60031", **NODE}),
    "npu_network_port": failing("__npu_network_setting_checks", ["npu_network"], {"train_master_port": 99, **NODE}),
    "bundle_dir": failing("__bundle_setting_checks", ["bundle"],
                          {"ascend_artifact_source": "https://u:pw@mirror/ascend"}),
    "bundle_driver": failing("__bundle_setting_checks", ["bundle"],
                             {"ascend_artifact_source": "/srv/b", "ascend_npu_driver_version": ""}),
    "python_env_source": failing("__python_env_source_checks", ["python_env"],
                                 {"ascend_pip_index_url": "https://mirror/simple", "python_env_wheelhouse": False}),
    "python_env_extra_index": failing("__python_env_source_checks", ["python_env"],
                                      {"ascend_artifact_source": "/srv/a",
                                       "ascend_pip_extra_index_urls": ["https://extra/simple"],
                                       "python_env_wheelhouse": False, "python_env_pip_find_links": ["/srv/w"]}),
    "gr00t_version": failing("__gr00t_source_checks", ["gr00t"], {"gr00t_version": "main"}),
    "gr00t_repo": failing("__gr00t_source_checks", ["gr00t"], {"gr00t_version": "0" * 40, "ascend_gr00t_repo_url": ""}),
    "gr00t_patch_sites": failing("__gr00t_patch_checks", ["gr00t"], {"gr00t_patch_sites": ["capability_probe", "bogus"]}),
    "gr00t_patch_src": failing("__gr00t_patch_checks", ["gr00t"], {"ascend_gr00t_src_dir": "gr00t"}),
    # Preflight's node checks and its findings.
    "preflight_healthy": failing("__preflight_node_checks", ["preflight"], healthy_node()),
    "preflight_npus_site": failing("__preflight_node_checks", ["preflight"],
                                   {**healthy_node(7, pci=8), "ascend_npu_count": 8}),
    "preflight_npus_own": failing("__preflight_node_checks", ["preflight"],
                                  {**healthy_node(7, pci=8), "preflight_expected_npu_count": 8}),
    "preflight_pci_site": failing("__preflight_node_checks", ["preflight"],
                                  {**healthy_node(8, pci=7), "ascend_npu_count": 8}),
    "preflight_unmanaged": failing("__preflight_node_checks", ["preflight"],
                                   {**no_npu_smi(), "ascend_manage_driver": False}),
    "preflight_source_site": expression("{{ __preflight_source_missing_msg }}", ["preflight"],
                                        {"ascend_artifact_source": ""}),
    "preflight_source_own": expression("{{ __preflight_source_missing_msg }}", ["preflight"],
                                       {"preflight_artifact_source": ""}),
    "gr00t_model_site": expression("{{ __gr00t_data_problems }}", ["gr00t"],
                                   {"ascend_base_model_path": "/models/m", "__gr00t_look": data_look("/models/m"),
                                    **DATA}),
    "gr00t_model_own": expression("{{ __gr00t_data_problems }}", ["gr00t"],
                                  {"gr00t_base_model_path": "/models/m", "__gr00t_look": data_look("/models/m"),
                                   **DATA}),
}


@pytest.fixture(scope="module")
def found() -> dict[str, Any]:
    """Each case's messages (each on one line), from one process for all of them."""
    return {name: one_line(value) if isinstance(value, list) else value for name, value in run_cases(CASES).items()}


# ---------------------------------------------------------------- the first pass, per message


def test_preflight_npu_count_names_the_site_wide_count(found: dict[str, Any]) -> None:
    assert found["preflight_count_site"] == [
        "ascend_npu_count is 17; an Atlas 800T A2 node has 8 NPUs. Set it between 1 and 16."]
    assert found["preflight_count_own"] == [
        "preflight_expected_npu_count is 17; an Atlas 800T A2 node has 8 NPUs. Set it between 1 and 16."]


def test_npu_driver_npu_count_names_the_site_wide_count_alone(found: dict[str, Any]) -> None:
    [msg] = found["npu_driver_count"]
    assert msg.startswith("ascend_npu_count is '17'")
    assert "npu_driver_npu_smi" not in msg and "preflight_expected_npu_count" not in msg


def test_npu_driver_versions_name_the_one_that_is_off(found: dict[str, Any]) -> None:
    [msg] = found["npu_driver_version"]
    assert msg.startswith("ascend_npu_driver_version is 'x'") and "firmware" not in msg
    [msg] = found["npu_driver_firmware"]
    assert msg.startswith("npu_driver_firmware_version is 'seven'") and "25.5.1" not in msg


def test_npu_driver_install_root_names_the_site_wide_root(found: dict[str, Any]) -> None:
    [msg] = found["npu_driver_root"]
    assert msg.startswith("ascend_install_root is 'opt/Ascend'") and "npu_driver_install_root" not in msg


def test_npu_driver_poll_and_timeout_are_named_apart(found: dict[str, Any]) -> None:
    [msg] = found["npu_driver_poll"]
    assert msg.startswith("npu_driver_install_poll is '0'") and "npu_driver_install_timeout is" not in msg
    # A timeout that is not a number is named alone, not again with the poll interval.
    assert found["npu_driver_timeout"] == ["npu_driver_install_timeout is 'abc' (want seconds, e.g. 1800)."]


def test_cann_names_the_one_setting_that_is_off(found: dict[str, Any]) -> None:
    assert found["cann_version"] == ["ascend_cann_version is 'nine' (want e.g. 9.0.0)."]
    [msg] = found["cann_packages"]
    assert msg.startswith("cann_packages is ['ops', 'toolkit']")
    assert "cann_version" not in msg and "cann_install_root" not in msg


def test_python_env_names_the_one_setting_that_is_off(found: dict[str, Any]) -> None:
    [msg] = found["python_env_prefix"]
    assert msg.startswith("ascend_conda_prefix is 'opt/m'")
    for correct in ("python_env_name", "ascend_conda_env", "python_env_python_version", "python_env_miniforge_version"):
        assert correct not in msg
    [msg] = found["python_env_env_site"]
    assert msg.startswith("ascend_conda_env is 'base'") and "opt/miniforge3" not in msg
    [msg] = found["python_env_env_own"]
    assert msg.startswith("python_env_name is 'base'")
    [msg] = found["python_env_miniforge"]
    assert msg.startswith("ascend_miniforge_version is '24'") and "ascend_conda_prefix" not in msg


def test_python_env_npu_count_is_apart_from_the_compatibility_table(found: dict[str, Any]) -> None:
    [msg] = found["python_env_count"]
    assert msg.startswith("ascend_npu_count is '0'")
    assert "python_env_torch_npu_cann_compatibility" not in msg and "preflight_expected_npu_count" not in msg


def test_python_env_pins_name_the_list_that_holds_the_bad_pin(found: dict[str, Any]) -> None:
    [msg] = found["python_env_pin"]
    assert msg.startswith("ascend_python_packages has pins pip cannot use: 'torch=2.7.1'")
    assert "cann_python_packages" not in msg and "extra_packages" not in msg
    [msg] = found["python_env_pin_twice"]
    assert msg.startswith("A project is pinned in two of") and "'torch==2.6'" in msg


def test_mx_driving_names_the_one_setting_that_is_off(found: dict[str, Any]) -> None:
    assert found["mx_driving_local"] == ["mx_driving_local_version is 'a_b' (want e.g. 1 or +ascend.1)."]
    [msg] = found["mx_driving_python"]
    assert msg.startswith("mx_driving_python (from ascend_conda_prefix and ascend_conda_env) is 'opt/m/envs/")
    assert "mx_driving_build_dir" not in msg


def test_mx_driving_checks_its_settings_without_facts_but_the_wheel_file(found: dict[str, Any]) -> None:
    """The wheel's file name needs the node's architecture; the other settings are checked without it."""
    assert found["mx_driving_local_no_facts"] == ["mx_driving_local_version is 'a_b' (want e.g. 1 or +ascend.1)."]


def test_gr00t_paths_name_only_the_relative_one(found: dict[str, Any]) -> None:
    assert found["gr00t_src"] == ["ascend_gr00t_src_dir is 'gr00t'; want an absolute path."]
    assert found["gr00t_report"] == ["gr00t_report_dir is 'reports'; want an absolute path."]
    [msg] = found["gr00t_vlm"]
    assert msg.startswith("gr00t_vlm_path (from ascend_hf_home and gr00t_vlm_id) is 'hf/hub/")


def test_system_deps_proxies_are_named_apart_by_what_sets_them(found: dict[str, Any]) -> None:
    assert found["system_deps_http_proxy"] == [
        'ascend_http_proxy is proxy:3128; set it to a proxy URL such as http://proxy.example.com:3128, or '
        'to "" for no proxy.']
    [msg] = found["system_deps_https_proxy"]
    assert msg.startswith("system_deps_https_proxy is proxy.example.com;") and "http_proxy" not in msg


def test_system_deps_apt_mirror_and_suites_are_named_apart(found: dict[str, Any]) -> None:
    [msg] = found["system_deps_mirror"]
    assert msg.startswith("system_deps_apt_mirror is 'mirror'") and "suites" not in msg
    [msg] = found["system_deps_suites"]
    assert msg.startswith("system_deps_apt_mirror_suites is []")


# ---------------------------------------------------------------- the stages' own asserts


def test_train_run_settings_name_only_the_one_that_is_off(found: dict[str, Any]) -> None:
    assert found["train_run"] == ["train_max_steps is '-5'; want a positive integer."]


def test_train_paths_name_the_variables_the_values_come_from(found: dict[str, Any]) -> None:
    assert found["train_python"] == [
        "train_python (from ascend_conda_prefix and ascend_conda_env) is 'opt/m/envs/torch2.7.1/bin/python'; "
        "want an absolute path."]
    assert found["train_dataset"] == ["ascend_dataset_path is empty; set it to the pre-staged LeRobot dataset."]
    [msg] = found["train_output"]
    assert msg.startswith("train_output_dir (from train_output_root and train_run_id) is 'runs/")


def test_train_cluster_and_timing_settings_name_only_the_one_that_is_off(found: dict[str, Any]) -> None:
    assert found["train_port"] == ["train_master_port is '80'; want a port, 1024 to 65535."]
    assert found["train_group"] == ["train_group is 'gpu'; want an inventory group holding n1."]
    assert found["train_poll"] == [
        "train_health_poll is '1000', above train_health_timeout '900'; want the poll interval at most the timeout."]


def test_npu_network_settings_name_only_the_one_that_is_off(found: dict[str, Any]) -> None:
    assert found["npu_network_ports"] == [
        "npu_network_hccl_ports is '60000:60031'; want ports and ranges like 60000-60031, comma-separated."]
    # The rendezvous port is the train stage's when that is set.
    assert found["npu_network_port"] == ["train_master_port is '99'; want a port, 1024 to 65535."]


def test_bundle_settings_name_the_site_wide_variables(found: dict[str, Any]) -> None:
    [msg] = found["bundle_dir"]
    assert msg.startswith("ascend_artifact_source is 'https://u:********@mirror/ascend'; want an absolute directory")
    assert "bundle_cann_version" not in msg and "bundle_gr00t_version" not in msg
    assert found["bundle_driver"] == [
        "ascend_npu_driver_version is empty; want the NPU driver version while ascend_manage_driver is true."]


def test_python_env_sources_name_what_falls_short_alone(found: dict[str, Any]) -> None:
    assert found["python_env_source"] == [
        "ascend_artifact_source is empty; set it to the directory or URL that holds the Miniforge installer."]
    [msg] = found["python_env_extra_index"]
    assert msg.startswith("ascend_pip_extra_index_urls is ['https://extra/simple'], but ascend_pip_index_url is empty")
    assert "Miniforge" not in msg and "find-links" not in msg


def test_gr00t_source_names_the_setting_that_is_off(found: dict[str, Any]) -> None:
    [msg] = found["gr00t_version"]
    assert msg.startswith("gr00t_version is 'main'; gr00t_source git needs the full 40-character commit id")
    assert "repo_url" not in msg
    assert found["gr00t_repo"] == ["ascend_gr00t_repo_url is empty; gr00t_source git clones from it."]


def test_gr00t_patch_names_only_the_setting_that_is_off(found: dict[str, Any]) -> None:
    [msg] = found["gr00t_patch_sites"]
    assert msg.startswith("gr00t_patch_sites names ['bogus'];") and "gr00t_src_dir" not in msg
    assert found["gr00t_patch_src"] == ["ascend_gr00t_src_dir is 'gr00t'; want an absolute path."]


# ---------------------------------------------------------------- preflight's node checks


def test_preflight_npu_count_on_the_node_names_the_site_wide_count(found: dict[str, Any]) -> None:
    assert found["preflight_healthy"] == []
    # Eight functions on PCI: the driver misses one, which the PCI check says on its own.
    [msg, pci] = found["preflight_npus_site"]
    assert msg.startswith("NPUs: npu-smi shows 7 NPU(s)") and "ascend_npu_count is 8." in msg
    assert "set ascend_npu_count for a node that is meant to run with fewer" in msg
    assert "preflight_expected_npu_count" not in msg
    assert pci.startswith("PCI: lspci shows 8 NPU function(s) but npu-smi shows 7")
    [msg, pci] = found["preflight_npus_own"]
    assert "preflight_expected_npu_count is 8." in msg and "ascend_npu_count" not in msg


def test_preflight_pci_count_names_the_site_wide_count(found: dict[str, Any]) -> None:
    [count, mismatch] = found["preflight_pci_site"]
    assert count.startswith("PCI: lspci shows 7 device(s)") and "ascend_npu_count is 8." in count
    assert "preflight_expected_npu_count" not in count
    assert mismatch.startswith("PCI: lspci shows 7 NPU function(s) but npu-smi shows 8")


def test_preflight_driver_not_managed_names_the_site_wide_switch(found: dict[str, Any]) -> None:
    [msg] = [m for m in found["preflight_unmanaged"] if "is not managed here" in m]
    assert "(ascend_manage_driver is false)" in msg and "set ascend_manage_driver: true" in msg
    assert "preflight_manage_driver" not in msg


def test_preflight_empty_source_names_the_site_wide_source(found: dict[str, Any]) -> None:
    assert found["preflight_source_site"].startswith("ascend_artifact_source is empty.")
    assert found["preflight_source_own"].startswith("preflight_artifact_source is empty.")


def test_gr00t_missing_base_model_names_what_sets_its_path(found: dict[str, Any]) -> None:
    for case, setting in (("gr00t_model_site", "ascend_base_model_path"), ("gr00t_model_own", "gr00t_base_model_path")):
        [model] = [problem for problem in found[case] if problem.startswith("base model:")]
        assert model.endswith(f"or set {setting})"), model


# ---------------------------------------------------------------- one stage's assert, end to end


def test_the_train_stage_refuses_naming_only_the_setting_that_is_off(tmp_path: Path) -> None:
    """train_max_steps=-5 passes the spec (an int) and the first pass; the stage's own assert names
    it, and none of the run settings that are right."""
    (tmp_path / "hosts.ini").write_text(f"[ascend_nodes]\nlocalhost ansible_connection=local "
                                        f"ansible_python_interpreter={sys.executable}\n")
    (tmp_path / "play.yml").write_text(json.dumps([{
        "hosts": "ascend_nodes", "gather_facts": False,
        "tasks": [{"ansible.builtin.include_role": {"name": "ascendops.gr00t.train", "tasks_from": "preflight"}}]}]))
    (tmp_path / "ansible.cfg").write_text("[defaults]\n")
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(COLLECTIONS_ROOT), ANSIBLE_STDOUT_CALLBACK="json",
               ANSIBLE_CONFIG=str(tmp_path / "ansible.cfg"), ANSIBLE_LOCALHOST_WARNING="0")
    res = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", "hosts.ini", "play.yml",
                          "-e", "train_max_steps=-5"], capture_output=True, text=True, env=env, cwd=tmp_path,
                         check=False)
    document = json.loads(res.stdout[res.stdout.index("{"):])
    failed = [task for task in document["plays"][0]["tasks"] if task["hosts"]["localhost"].get("failed")]
    assert [task["task"]["name"].endswith("Train | Assert the run settings") for task in failed] == [True]
    assert failed[0]["hosts"]["localhost"]["msg"] == (
        "Run settings on localhost: train_max_steps is '-5'; want a positive integer.")
