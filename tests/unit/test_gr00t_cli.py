"""The arguments the launch script gives GR00T, parsed by GR00T's own command line: its
FinetuneConfig from the upstream release tarball, through tyro, as launch_finetune.py does.

The tarball is the one an operator stages (Isaac-GR00T-<commit>.tar.gz); the test looks for it
where the harness does (tests/harness/simctl.py: $GR00T_UPSTREAM_TARBALL, else ../shared/upstream/
beside the repository); without it the test fails with where to put it.
"""
from __future__ import annotations

import importlib.util
import sys
import tarfile
from pathlib import Path
from types import ModuleType

import pytest

from ansible_collections.ascendops.gr00t.plugins.filter.train import cli_flags, train_cli_problems
# node is a fixture, used by name below.
from test_train_templates import launch, node  # noqa: F401  # pylint: disable=unused-import

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "harness"))
import simctl  # noqa: E402  # pylint: disable=wrong-import-position
CONFIG = "gr00t/configs/finetune_config.py"
ENTRY = "gr00t/experiment/launch_finetune.py"
ARGPARSE_HELP = """usage: launch_finetune.py [-h] --dataset_path DATASET_PATH [--resume_from_checkpoint]

options:
  -h, --help            show this help message and exit
  --dataset_path DATASET_PATH
  --num_gpus NUM_GPUS
  --resume_from_checkpoint
"""


@pytest.fixture(scope="module")
def finetune_config(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    tyro = pytest.importorskip("tyro")
    tarball = simctl.upstream_tarball()
    dest = tmp_path_factory.mktemp("upstream")
    with tarfile.open(tarball) as archive:
        member = next(m for m in archive.getmembers() if m.name.endswith("/" + CONFIG))
        path = dest / "finetune_config.py"
        path.write_bytes(archive.extractfile(member).read())
    spec = importlib.util.spec_from_file_location("gr00t_finetune_config", path)
    module = importlib.util.module_from_spec(spec)
    # tyro reads the field docs from the source, which inspect finds through sys.modules.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    module.tyro = tyro
    return module


@pytest.fixture(scope="module")
def help_text(finetune_config: ModuleType) -> str:
    """`launch_finetune.py --help` as tyro prints it."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        finetune_config.tyro.cli(finetune_config.FinetuneConfig, args=["--help"], prog="launch_finetune.py")
    return out.getvalue()


def gr00t_args(tmp_path: Path, run: dict) -> list[str]:
    res = launch(tmp_path, run, "train_8p.sh.j2")
    assert res.returncode == 0, Path(run["__train_log"]).read_text()
    args = (tmp_path / "torchrun.args").read_text().splitlines()
    return args[args.index(ENTRY) + 1:]


def test_the_help_parser_reads_tyro_and_argparse(help_text: str) -> None:
    flags = cli_flags(help_text)
    assert flags["--base-model-path"] is True and flags["--global-batch-size"] is True
    assert flags["--resume-from-checkpoint"] is False and flags["--no-tune-llm"] is False
    assert "--deepspeed-config" not in flags
    assert cli_flags(ARGPARSE_HELP) == {"--dataset-path": True, "--num-gpus": True,
                                        "--resume-from-checkpoint": False}


@pytest.mark.parametrize("resume", [False, True], ids=["fresh", "resume"])
def test_gr00t_takes_the_launch_arguments(tmp_path: Path, node: dict, finetune_config: ModuleType,  # noqa: F811
                                          help_text: str, resume: bool) -> None:
    node["train_resume"] = resume
    (Path(node["train_output_dir"]) / "checkpoint-500").mkdir(parents=True)
    args = gr00t_args(tmp_path, node)
    assert train_cli_problems(help_text, args) == []
    config = finetune_config.tyro.cli(finetune_config.FinetuneConfig, args=args)
    assert config.resume_from_checkpoint is resume
    assert (config.num_gpus, config.global_batch_size, config.max_steps) == (8, 640, 8)
    assert config.embodiment_tag == "LIBERO_PANDA" and config.dataloader_num_workers == 0


def test_what_gr00t_refuses_is_named(help_text: str) -> None:
    problems = train_cli_problems(help_text, ["--dataset_path", "/d", "--resume_from_checkpoint", "True",
                                              "--deepspeed_config", "/ds.json", "--max_steps"])
    assert problems[:3] == ["--resume_from_checkpoint is a bare flag: remove the 'True' after it",
                            "--deepspeed_config is not an option of the entry point",
                            "--max_steps needs a value"]
    assert problems[3].startswith("its options are: --base-model-path, ") and "--resume-from-checkpoint" in problems[3]
    assert train_cli_problems(ARGPARSE_HELP, ["--dataset_path=/d", "--num_gpus", "2"]) == []
