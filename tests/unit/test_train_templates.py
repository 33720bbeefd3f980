"""The launch templates, rendered and run with a stand-in torchrun that replays a known log."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import jinja2
import jinja2.nativetypes
import pytest
import yaml
from ansible.plugins.filter import core
from ansible.plugins.test import core as core_tests

from ansible_collections.ascendops.gr00t.plugins.filter.train import FilterModule as TrainFilters

REPO = Path(__file__).resolve().parents[2]
KNOWN_LOG = REPO / "tests" / "fixtures" / "train" / "known.log"


def render(name: str, variables: dict) -> str:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(REPO / "roles" / "train" / "templates")), undefined=jinja2.StrictUndefined,
                             trim_blocks=True)
    env.filters.update(core.FilterModule().filters())  # quote, ternary, bool, comment, to_nice_json, ...
    return env.get_template(name).render(**variables)


def role_var(name: str, variables: dict) -> object:
    """A variable of roles/train/vars/main.yml, templated with `variables` as Ansible would."""
    expression = yaml.safe_load((REPO / "roles" / "train" / "vars" / "main.yml").read_text())[name]
    env = jinja2.nativetypes.NativeEnvironment(undefined=jinja2.StrictUndefined)
    env.filters.update(core.FilterModule().filters())
    env.filters.update({f"ascendops.gr00t.{name}": f for name, f in TrainFilters().filters().items()})
    env.tests.update(core_tests.TestModule().tests())  # match, ...
    return env.from_string(expression).render(**variables)


def with_role_vars(node: dict) -> dict:
    """The node's variables and the role vars the launch script reads, as Ansible templates them."""
    node = dict(node, __train_gr00t_args=role_var("__train_gr00t_args", node))
    return dict(node, __train_keep_checkpoints=role_var("__train_keep_checkpoints", node))


def node_tools(tmp_path: Path) -> Path:
    """The FPS command and the log parser side by side, as the train role installs them."""
    tools = tmp_path / "tools"
    tools.mkdir(exist_ok=True)
    shutil.copy(REPO / "roles" / "train" / "files" / "train_fps.py", tools)
    shutil.copy(REPO / "plugins" / "module_utils" / "train_log.py", tools)
    shutil.copy(REPO / "roles" / "train" / "files" / "train_checkpoints.py", tools)
    return tools


@pytest.fixture
def node(tmp_path: Path) -> dict:
    """Variables of a single-node, 8-rank run whose torchrun replays known.log."""
    set_env = tmp_path / "set_env.sh"
    set_env.write_text("export ASCEND_HOME_PATH=/usr/local/Ascend/cann-9.0.0\n")
    fake_python = tmp_path / "python"
    fake_python.write_text(
        "#!/bin/bash\n"
        'if [ "$1 $2" = "-m torch.distributed.run" ]; then\n'
        '  printf "%s\\n" "$@" > {args}\n'
        "  cat {log}\n  exit 0\nfi\n"
        'exec python3 "$@"\n'.format(args=tmp_path / "torchrun.args", log=KNOWN_LOG))
    fake_python.chmod(0o755)
    out = tmp_path / "out"
    return {
        "ansible_managed": "Ansible managed", "inventory_hostname": "node1", "train_run_id": "perf",
        "__train_node_rank": 0, "__train_nnodes": 1, "__train_nproc": 8, "__train_world_size": 8,
        "__train_master_addr": "10.0.0.1", "train_master_port": 29500,
        "__train_log": str(out / "logs" / "node1.log"), "__train_exit_file": str(out / "logs" / "node1.exit"),
        "__train_pidfile": str(tmp_path / "train.pid"), "__train_env_file": str(tmp_path / "env.sh"),
        "train_gr00t_dir": str(tmp_path), "train_dataset_path": "/data/libero", "train_embodiment_tag": "LIBERO_PANDA",
        "train_global_batch_size": 640, "__train_max_steps": 8, "train_output_dir": str(out),
        "train_dataloader_num_workers": 0, "__train_save_steps": 9, "train_base_model_path": "/models/n17",
        "train_resume": False, "train_hf_home": "/data/gr00t/hf",
        "train_extra_args": ["--learning_rate", "1e-4"], "train_python": str(fake_python),
        "train_launcher": "/env/bin/gr00t_npu_launch.py", "train_entry_point": "gr00t/experiment/launch_finetune.py",
        "train_warmup_steps": 2, "__train_log_tool": str(node_tools(tmp_path) / "train_fps.py"),
        "train_mode": "full", "train_save_total_limit": None, "train_save_rotation_interval": 60,
        "__train_rotate_tool": str(node_tools(tmp_path) / "train_checkpoints.py"),
        "train_cann_set_env": str(set_env), "train_nnal_set_env": str(tmp_path / "absent.sh"),
        "train_nnal_cxx_abi": 1,
        "__train_site_packages": "/env/lib/python3.10/site-packages", "__train_visible_devices": list(range(8)),
        "train_hccl_socket_ifname": "", "__train_node_addr": "10.0.0.1", "train_hccl_connect_timeout": 1200,
        "train_hccl_exec_timeout": 1800, "train_hccl_buffsize": 200, "train_task_queue_enable": 2,
        "train_pytorch_npu_alloc_conf": "expandable_segments:True", "train_cpu_affinity_conf": "",
        "train_ds_accelerator": "npu", "train_extra_env": {"SOME_FLAG": "a b"},
    }


def launch(tmp_path: Path, node: dict, template: str) -> subprocess.CompletedProcess:
    (tmp_path / "env.sh").write_text(render("train_env.sh.j2", node))
    script = tmp_path / "train.sh"
    script.write_text(render(template, with_role_vars(node)))
    return subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=60, check=False)


def test_performance_script_writes_fps(tmp_path: Path, node: dict) -> None:
    res = launch(tmp_path, node, "train_performance_8p.sh.j2")
    log = Path(node["__train_log"]).read_text()
    assert res.returncode == 0, log
    assert "FPS: 80.00 samples/s" in log
    result = json.loads((Path(node["train_output_dir"]) / "performance.json").read_text())
    assert result["samples_per_second"] == 80.0 and result["global_batch_size"] == 640
    assert Path(node["__train_exit_file"]).read_text().strip() == "0"
    assert Path(node["__train_pidfile"]).read_text().strip().isdigit()


def test_full_script_arguments(tmp_path: Path, node: dict) -> None:
    node["__train_max_steps"] = 20000
    res = launch(tmp_path, node, "train_8p.sh.j2")
    assert res.returncode == 0, Path(node["__train_log"]).read_text()
    args = (tmp_path / "torchrun.args").read_text().splitlines()
    assert args[:8] == ["-m", "torch.distributed.run", "--nnodes=1", "--node_rank=0", "--master_addr=10.0.0.1",
                        "--master_port=29500", "--nproc_per_node=8", "/env/bin/gr00t_npu_launch.py"]
    flags = dict(zip(args[9::2], args[10::2]))
    assert args[8] == "gr00t/experiment/launch_finetune.py"
    assert flags["--embodiment_tag"] == "LIBERO_PANDA" and flags["--num_gpus"] == "8"
    assert flags["--global_batch_size"] == "640" and flags["--max_steps"] == "20000"
    assert flags["--dataloader_num_workers"] == "0" and flags["--learning_rate"] == "1e-4"
    assert not (Path(node["train_output_dir"]) / "performance.json").exists()
    # GR00T has no DeepSpeed flag (it turns ZeRO-2 on by itself) and resumes only when asked.
    assert not any("deepspeed" in arg or "resume" in arg for arg in args)


def test_resume_is_the_bare_flag_and_only_with_a_checkpoint(tmp_path: Path, node: dict) -> None:
    """GR00T's tyro CLI takes --resume_from_checkpoint bare (`True` after it exits 2) and stops
    when the output directory has no checkpoint to resume from."""
    node["train_resume"] = True
    res = launch(tmp_path, node, "train_8p.sh.j2")
    assert res.returncode == 0, Path(node["__train_log"]).read_text()
    assert "--resume_from_checkpoint" not in (tmp_path / "torchrun.args").read_text().splitlines()
    (Path(node["train_output_dir"]) / "checkpoint-500").mkdir()
    res = launch(tmp_path, node, "train_8p.sh.j2")
    assert res.returncode == 0, Path(node["__train_log"]).read_text()
    args = (tmp_path / "torchrun.args").read_text().splitlines()
    assert args[-1] == "--resume_from_checkpoint" and args.count("--resume_from_checkpoint") == 1
    assert "[launch] resuming from the newest checkpoint" in Path(node["__train_log"]).read_text()


def test_environment_file(tmp_path: Path, node: dict) -> None:
    (tmp_path / "env.sh").write_text(render("train_env.sh.j2", node))
    res = subprocess.run(["bash", "-euo", "pipefail", "-c", 'source "$0"; env', str(tmp_path / "env.sh")],
                         capture_output=True, text=True, check=True)
    env = dict(line.split("=", 1) for line in res.stdout.splitlines() if "=" in line)
    assert env["ASCEND_RT_VISIBLE_DEVICES"] == "0,1,2,3,4,5,6,7"
    assert env["HCCL_IF_IP"] == "10.0.0.1" and "HCCL_SOCKET_IFNAME" not in env
    assert env["HF_HUB_OFFLINE"] == "1" and env["TRANSFORMERS_OFFLINE"] == "1" and env["NO_ALBUMENTATIONS_UPDATE"] == "1"
    # GR00T loads the gated VLM's processor by its hub id: the checked cache must be HF_HOME.
    assert env["HF_HOME"] == "/data/gr00t/hf"
    assert env["LD_LIBRARY_PATH"].startswith("/env/lib/python3.10/site-packages/torch/lib:")
    # DeepSpeed builds its ops with the env's ninja, from PATH.
    assert env["PATH"].split(":")[0] == str(Path(node["train_python"]).parent)
    assert env["ASCEND_HOME_PATH"] == "/usr/local/Ascend/cann-9.0.0" and env["SOME_FLAG"] == "a b"
    node["train_hccl_socket_ifname"] = "enp189s0f0"
    assert "export HCCL_SOCKET_IFNAME=enp189s0f0" in render("train_env.sh.j2", node)
    assert "HCCL_IF_IP" not in render("train_env.sh.j2", node)


def test_environment_file_sources_nnal_with_the_abi(tmp_path: Path, node: dict) -> None:
    """Without --cxx_abi= nnal's set_env.sh guesses the ABI with the first python3 on PATH."""
    nnal = tmp_path / "nnal_set_env.sh"
    nnal.write_text('export ATB_ARGS="$*"\n')
    node["train_nnal_set_env"] = str(nnal)
    (tmp_path / "env.sh").write_text(render("train_env.sh.j2", node))
    res = subprocess.run(["bash", "-euo", "pipefail", "-c", 'source "$0"; echo "$ATB_ARGS"', str(tmp_path / "env.sh")],
                         capture_output=True, text=True, check=True)
    assert res.stdout.strip() == "--cxx_abi=1"


def saving_torchrun(tmp_path: Path, node: dict, rc: int, state: tuple[int, ...] = ()) -> None:
    """torchrun as the ranks of one node save: checkpoint-10 to -50 (ZeRO-2 shards, with
    trainer_state.json for the steps in `state`), then a few seconds more of training, a listing
    of the output directory while it is still alive, and exit code `rc`."""
    out = Path(node["train_output_dir"])
    saves = "".join(
        f'mkdir -p {out}/checkpoint-{s}/global_step{s}; echo x > {out}/checkpoint-{s}/global_step{s}/shard.pt\n'
        + (f"echo '{{\"global_step\": {s}}}' > {out}/checkpoint-{s}/trainer_state.json\n" if s in state else "")
        for s in (10, 20, 30, 40, 50))
    fake_python = Path(node["train_python"])
    fake_python.write_text(
        "#!/bin/bash\n"
        'if [ "$1 $2" = "-m torch.distributed.run" ]; then\n'
        f"{saves}  sleep 3\n  ls {out} | grep checkpoint- > {tmp_path / 'alive.ls'}\n  exit {rc}\nfi\n"
        'exec python3 "$@"\n')


def checkpoint_dirs(node: dict) -> list[str]:
    return sorted(p.name for p in Path(node["train_output_dir"]).glob("checkpoint-*"))


@pytest.mark.parametrize(("rc", "after"), [
    (0, ["checkpoint-40", "checkpoint-50"]),
    # A failed run's last save may be cut off on this node: it stays, with the newest two before it.
    (1, ["checkpoint-30", "checkpoint-40", "checkpoint-50"]),
])
def test_other_node_rotates_its_own_checkpoints(tmp_path: Path, node: dict, rc: int, after: list[str]) -> None:
    """The Trainer rotates on the world's rank 0 alone: the script of node 1 of 2 rotates that
    node's checkpoints by the same save_total_limit, while torchrun runs and after it."""
    node.update(__train_node_rank=1, __train_nnodes=2, __train_world_size=16, train_save_total_limit=2,
                train_save_rotation_interval=1)
    saving_torchrun(tmp_path, node, rc)
    res = launch(tmp_path, node, "train_8p.sh.j2")
    log = Path(node["__train_log"]).read_text()
    assert res.returncode == rc, log
    script = (tmp_path / "train.sh").read_text()
    assert "train_checkpoints.py" in script and "--primary" not in script
    # While the run was alive: the newest two complete ones and the newest, which may be written.
    assert (tmp_path / "alive.ls").read_text().split() == ["checkpoint-30", "checkpoint-40", "checkpoint-50"]
    assert checkpoint_dirs(node) == after
    assert "[launch] keeping the newest 2 complete checkpoint(s)" in log
    assert f"[checkpoints] removed {node['train_output_dir']}/checkpoint-10 (save_total_limit 2;" in log


def test_primary_rotates_by_trainer_state(tmp_path: Path, node: dict) -> None:
    """On the primary a save is complete with trainer_state.json: a cut-off newest one stays."""
    node.update(__train_nnodes=2, __train_world_size=16, train_save_total_limit=2, train_save_rotation_interval=1)
    saving_torchrun(tmp_path, node, 1, state=(10, 20, 30, 40))
    res = launch(tmp_path, node, "train_8p.sh.j2")
    assert res.returncode == 1, Path(node["__train_log"]).read_text()
    assert "--primary" in (tmp_path / "train.sh").read_text()
    assert checkpoint_dirs(node) == ["checkpoint-30", "checkpoint-40", "checkpoint-50"]


@pytest.mark.parametrize("limit", [None, 0])
def test_without_a_limit_nothing_is_rotated(tmp_path: Path, node: dict, limit: object) -> None:
    node.update(__train_node_rank=1, __train_nnodes=2, __train_world_size=16, train_save_total_limit=limit)
    saving_torchrun(tmp_path, node, 0)
    res = launch(tmp_path, node, "train_8p.sh.j2")
    assert res.returncode == 0, Path(node["__train_log"]).read_text()
    assert "train_checkpoints.py" not in (tmp_path / "train.sh").read_text()
    assert len(checkpoint_dirs(node)) == 5


def test_the_limit_gr00t_is_given_is_the_one_kept(node: dict) -> None:
    """train_save_total_limit is passed to GR00T; one given in train_extra_args counts as well; a
    performance run writes no checkpoint and rotates none."""
    def role_vars(**changes: object) -> dict:
        return with_role_vars(dict(node, **changes))

    assert "--save_total_limit" not in role_vars()["__train_gr00t_args"]
    assert role_vars()["__train_keep_checkpoints"] == 0
    limited = role_vars(train_save_total_limit=3)
    assert limited["__train_gr00t_args"][-2:] == ["--save_total_limit", "3"]
    assert limited["__train_keep_checkpoints"] == 3
    keep_all = role_vars(train_save_total_limit=0)
    assert keep_all["__train_gr00t_args"][-2:] == ["--save_total_limit", "0"]
    assert keep_all["__train_keep_checkpoints"] == 0
    assert role_vars(train_extra_args=["--save-total-limit=4"])["__train_keep_checkpoints"] == 4
    assert role_vars(train_save_total_limit=3, train_mode="performance")["__train_keep_checkpoints"] == 0
