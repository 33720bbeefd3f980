"""The node after converge: patched checkout, report, dependencies, data, run environment."""
from __future__ import annotations

import json

SRC = "/opt/gr00t/Isaac-GR00T"
REPORT = "/opt/gr00t/report/gr00t_n1.7_ascend.patch"
PYTHON = "/opt/miniforge3/envs/torch2.7.1/bin/python"
SITES = {
    "gr00t/experiment/dist_utils.py": 'if dist.is_available() and dist.is_initialized() and dist.get_backend() == "hccl":',
    "gr00t/experiment/utils.py": 'if backend == "hccl"',
    "gr00t/data/dataset/sharded_mixture_dataset.py": 'if str(backend).lower() == "hccl":',
    "gr00t/experiment/trainer.py": '"pin_memory": False if hasattr(torch, "npu") else self.args.dataloader_pin_memory,',
    "gr00t/model/modules/dit.py": "except (TypeError, RuntimeError):",
}


def test_every_site_is_patched(host):
    for path, line in SITES.items():
        assert line in host.file("{0}/{1}".format(SRC, path)).content_string, path


def test_only_the_site_files_differ_from_the_commit(host):
    changed = host.check_output("git -C %s diff --name-only", SRC).split()
    assert sorted(changed) == sorted(SITES)


def test_report_is_exactly_the_patch(host):
    assert host.file(REPORT).is_file
    host.run_expect([0], "git -C %s apply --check --reverse %s", SRC, REPORT)
    assert host.file(REPORT).content_string.count("+++ b/") == len(SITES)


def test_gr00t_imports_from_the_checkout(host):
    origin = host.check_output("%s -c 'import gr00t, gr00t_fixture_dep; print(gr00t.__file__)'", PYTHON)
    assert origin == SRC + "/gr00t/__init__.py"
    direct_url = host.check_output(
        "%s -c 'import importlib.metadata as m; print(m.distribution(\"gr00t\").read_text(\"direct_url.json\"))'",
        PYTHON)
    assert json.loads(direct_url) == {"url": "file://" + SRC, "dir_info": {"editable": True}}


def test_dependency_set_drops_the_cuda_pieces(host):
    lines = [line for line in host.file("/opt/gr00t/report/requirements-ascend.txt").content_string.splitlines()
             if line and not line.startswith("#")]
    assert lines == ["gr00t-fixture-dep==1.0"]


def test_modality_copied_from_the_checkout(host):
    copied = host.file("/data/gr00t/datasets/libero/meta/modality.json")
    assert copied.content_string == host.file(SRC + "/examples/LIBERO/modality.json").content_string
    assert copied.mode == 0o644


def test_run_environment_is_offline(host):
    env = host.file("/opt/gr00t/gr00t-env.sh").content_string
    for line in ("export HF_HUB_OFFLINE=1", "export TRANSFORMERS_OFFLINE=1", "export HF_HOME=/data/gr00t/hf"):
        assert line in env
