"""Tests of roles/mx_driving/files/gr00t_npu_launch.py with fake torch, torch_npu, mx_driving and GR00T modules.

Every fake module appends a line to $FAKE_LOG when it is imported or called, so a test
reads back the exact order of imports, patcher calls and the entry point's sys.argv.
The launcher runs in a subprocess, as a training job starts it.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

LAUNCHER = Path(__file__).resolve().parents[2] / "roles" / "mx_driving" / "files" / "gr00t_npu_launch.py"

LOGGER = "import json, os\ndef log(*e):\n    open(os.environ['FAKE_LOG'], 'a').write(json.dumps(list(e)) + '\\n')\n"
FAKES = {
    "fakelog.py": LOGGER,
    "torch/__init__.py": "from fakelog import log\nlog('import', 'torch')\n",
    "torch_npu/__init__.py": (
        "import sys\nfrom fakelog import log\n"
        # The real failure: mx_driving._C loaded before torch_npu registers the NPU twice.
        "if 'mx_driving._C' in sys.modules:\n    raise RuntimeError('Two accelerators: npu and npu')\n"
        "log('import', 'torch_npu')\n"),
    "torch_npu/contrib/__init__.py": "",
    "torch_npu/contrib/transfer_to_npu.py": "from fakelog import log\nlog('import', 'transfer_to_npu')\n",
    "mx_driving/__init__.py": "import torch, torch_npu\nimport mx_driving._C\nfrom fakelog import log\n"
                              "log('import', 'mx_driving')\n",
    "mx_driving/_C.py": "",
    "mx_driving/patcher/__init__.py": (
        "from fakelog import log\nlog('import', 'mx_driving.patcher')\n"
        "class Patch:\n    pass\n"
        "class TransformersNPU(Patch):\n    pass\n"
        "class DiffusersNPU(Patch):\n    pass\n"
        "class QWen3VLNPU(Patch):\n    pass\n"
        "class Patcher:\n"
        "    def add(self, *classes):\n        log('add', *[c.__name__ for c in classes])\n        return self\n"
        "    def apply(self):\n        log('apply')\n        return self\n"),
    "gr00t/__init__.py": "",
    "gr00t/experiment/__init__.py": "",
    "gr00t/experiment/launch_finetune.py": (
        "import sys\nfrom fakelog import log\nlog('entry', __name__, sys.argv)\n"
        "if '--fail' in sys.argv:\n    sys.exit(3)\n"),
}


@pytest.fixture
def fake(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    for name, text in FAKES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def launch(fake: Path, *args: str, env: dict | None = None, cwd: Path | None = None) -> tuple[int, list, str]:
    log = fake.parent / "log.jsonl"
    log.unlink(missing_ok=True)
    environ = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(fake), "FAKE_LOG": str(log)}
    environ.update(env or {})
    proc = subprocess.run([sys.executable, str(LAUNCHER), *args], env=environ, cwd=cwd or fake.parent,
                          capture_output=True, text=True, check=False)
    events = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return proc.returncode, events, proc.stderr


def test_import_order_patcher_then_module_entry(fake: Path) -> None:
    rc, events, err = launch(fake, "-m", "gr00t.experiment.launch_finetune", "--dataset_path", "/d", "-m", "x")
    assert rc == 0, err
    assert events[:6] == [
        ["import", "torch"], ["import", "torch_npu"], ["import", "transfer_to_npu"],
        ["import", "mx_driving"], ["import", "mx_driving.patcher"],
        ["add", "TransformersNPU", "DiffusersNPU"],
    ]
    assert events[6] == ["apply"]
    name, argv = events[7][1], events[7][2]
    assert name == "__main__"
    assert argv[0].endswith("gr00t/experiment/launch_finetune.py")
    assert argv[1:] == ["--dataset_path", "/d", "-m", "x"]
    assert "mx_driving patcher applied: TransformersNPU, DiffusersNPU" in err


def test_script_entry_keeps_argv(fake: Path) -> None:
    script = fake / "gr00t" / "experiment" / "launch_finetune.py"
    rc, events, err = launch(fake, str(script), "--num_gpus", "8", "--", "--tail")
    assert rc == 0, err
    assert events[-1] == ["entry", "__main__", [str(script), "--num_gpus", "8", "--", "--tail"]]


def test_module_entry_found_from_the_working_directory(fake: Path, tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    (checkout / "localpkg").mkdir(parents=True)
    (checkout / "localpkg" / "__init__.py").write_text("")
    (checkout / "localpkg" / "run.py").write_text("import sys\nfrom fakelog import log\nlog('entry', sys.argv[1:])\n")
    rc, events, err = launch(fake, "-m", "localpkg.run", "a", cwd=checkout)
    assert rc == 0, err
    assert events[-1] == ["entry", ["a"]]


def test_patch_list_from_option_and_environment(fake: Path) -> None:
    rc, events, dummy = launch(fake, "--patches", "QWen3VLNPU", "-m", "gr00t.experiment.launch_finetune")
    assert rc == 0 and ["add", "QWen3VLNPU"] in events
    rc, events, dummy = launch(fake, "-m", "gr00t.experiment.launch_finetune",
                               env={"GR00T_NPU_PATCHES": "DiffusersNPU, TransformersNPU"})
    assert rc == 0 and ["add", "DiffusersNPU", "TransformersNPU"] in events
    rc, events, dummy = launch(fake, "--patches=TransformersNPU", "-m", "gr00t.experiment.launch_finetune",
                               env={"GR00T_NPU_PATCHES": "DiffusersNPU"})
    assert rc == 0 and ["add", "TransformersNPU"] in events


@pytest.mark.parametrize("how", [["--no-patcher"], ["--patches", "none"]])
def test_patcher_off_still_imports_torch_npu_first(fake: Path, how: list[str]) -> None:
    rc, events, err = launch(fake, *how, "-m", "gr00t.experiment.launch_finetune")
    assert rc == 0, err
    assert [e[1] for e in events if e[0] == "import"] == ["torch", "torch_npu", "transfer_to_npu"]
    assert not any(e[0] in ("add", "apply") for e in events)
    assert "mx_driving patcher off" in err


def test_environment_none_turns_it_off(fake: Path) -> None:
    rc, events, dummy = launch(fake, "-m", "gr00t.experiment.launch_finetune", env={"GR00T_NPU_PATCHES": "none"})
    assert rc == 0 and not any(e[0] == "add" for e in events)


def test_entry_exit_code_passes_through(fake: Path) -> None:
    rc, events, dummy = launch(fake, "-m", "gr00t.experiment.launch_finetune", "--fail")
    assert rc == 3 and events[-1][0] == "entry"


def test_old_patcher_api_is_named(fake: Path) -> None:
    (fake / "mx_driving" / "patcher" / "__init__.py").write_text("class PatcherBuilder:\n    pass\n")
    rc, events, err = launch(fake, "-m", "gr00t.experiment.launch_finetune")
    assert rc == 2
    assert "mx_driving.patcher has no Patcher, TransformersNPU, DiffusersNPU" in err and "old patcher API" in err
    assert not any(e[0] == "entry" for e in events)


def test_unknown_patch_is_refused(fake: Path) -> None:
    rc, dummy, err = launch(fake, "--patches", "NoSuchPatch", "-m", "gr00t.experiment.launch_finetune")
    assert rc == 2 and "has no NoSuchPatch" in err


def test_missing_torch_npu_is_named(fake: Path) -> None:
    (fake / "torch_npu" / "__init__.py").write_text("raise ImportError('libhccl.so: cannot open shared object')\n")
    rc, events, err = launch(fake, "-m", "gr00t.experiment.launch_finetune")
    assert rc == 2 and "cannot import torch_npu" in err and "set_env.sh" in err
    assert not any(e[0] == "entry" for e in events)


@pytest.mark.parametrize("args,message", [
    ([], "no entry point"),
    (["--bogus", "-m", "x"], "unknown launcher option '--bogus'"),
    (["--patches"], "unknown launcher option '--patches'"),
])
def test_bad_arguments(fake: Path, args: list[str], message: str) -> None:
    rc, events, err = launch(fake, *args)
    assert rc == 2 and message in err and events == []


def test_help(fake: Path) -> None:
    proc = subprocess.run([sys.executable, str(LAUNCHER), "--help"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and "Two accelerators" in proc.stdout
