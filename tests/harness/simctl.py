#!/usr/bin/env python3
"""Test harness for simulated Ascend 910B nodes in local containers.

Everything here is test scaffolding: it brings up a container engine, builds a base
image with debootstrap (nothing is ever pulled), starts node containers reachable over
SSH and installs the simulated vendor tools (npu-smi, lspci, the driver) from tests/sim.
The roles under roles/ never see any of this; they see nodes.

Subcommands:
  engine                 make sure a Docker engine answers (install docker.io, start dockerd)
  image                  build or reuse the base node image, print its tag
  tag                    print the tag the base image has for the current recipe
  upstream-commit        print the commit of the GR00T release tarball the tests train with
  train-wheels DIR       download torch and GR00T's dependency set into DIR once, print their key
  train-env DIR          build the nodes' training env from those wheels once (.sim/train-env)
  train-data DIR         generate the tiny model, HF cache and dataset once (.sim/train-data)
  artifacts DIR          generate the simulated vendor installers and SHA256SUMS into DIR,
                         with the real GR00T release tarball ($GR00T_UPSTREAM_TARBALL or
                         ../shared/upstream/) staged beside them
  up CLUSTER             start the nodes of a cluster file (tests/sim/clusters/*.json)
  down CLUSTER           remove them
  provision CONTAINER    install the simulated hardware/vendor tools into a running container
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SIM_DIR = REPO / "tests" / "sim"
sys.path.insert(0, str(SIM_DIR))
from make_artifacts import write_if_changed  # noqa: E402  # pylint: disable=wrong-import-position
STATE_DIR = Path(os.environ.get("SIM_STATE_DIR", REPO / ".sim"))
GR00T_FIXTURES = STATE_DIR / "gr00t-fixtures"
# The training wheels and env (about 3 and 6.5 GB, minutes to fetch and build) live outside the
# checkout, keyed like everything here: a fresh clone on the same machine links to them instead
# of building them again. `make distclean` removes them.
CACHE_DIR = Path(os.environ.get("SIM_CACHE_DIR")
                 or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ascendops-sim")
# NVIDIA's GR00T release as an operator downloads it: GitHub's archive of one commit.
UPSTREAM_DIR = REPO.parent / "shared" / "upstream"
UPSTREAM_NAME = re.compile(r"^Isaac-GR00T-(?P<commit>[0-9a-f]{40})\.tar\.gz$")
IMAGE_REPO = "ascendops-sim-node"

# The recipe of the base image: its hash is the image tag, so a change here builds a new
# image and an unchanged recipe reuses the one already imported.
IMAGE_RECIPE = {
    "suite": "bookworm",
    "variant": "minbase",
    "mirror": os.environ.get("SIM_DEBIAN_MIRROR", "http://deb.debian.org/debian"),
    "packages": [
        "python3",
        "openssh-server",
        "sudo",
        "ca-certificates",
        "iproute2",
        "procps",
        "pciutils",
        "kmod",
        "systemd",
        "systemd-sysv",
        "dbus",
    ],
    "revision": 2,
}


class HarnessError(RuntimeError):
    """A failure the operator can act on; printed without a traceback."""


def log(msg: str) -> None:
    print(f"[simctl] {msg}", file=sys.stderr, flush=True)


def run(cmd: list[str], check: bool = True, capture: bool = False, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=check, text=True, capture_output=capture, **kw)


def docker_ok() -> bool:
    if shutil.which("docker") is None:
        return False
    return run(["docker", "info"], check=False, capture=True).returncode == 0


# ---------------------------------------------------------------- host packages

# The controller's own tools from the Debian archive, as (package, binary it brings).
ENGINE_PACKAGES = (("docker.io", "dockerd"), ("debootstrap", "debootstrap"))
# The unit tests decode videos with the system ffmpeg, as the gr00t stage's data check does on a node.
TEST_PACKAGES = (("ffmpeg", "ffprobe"),)


def ensure_packages(packages: tuple[tuple[str, str], ...], why: str) -> None:
    """Install from the Debian archive each package whose binary is not on PATH."""
    missing = [pkg for pkg, binary in packages if shutil.which(binary) is None]
    if not missing:
        return
    if os.geteuid() != 0:
        raise HarnessError(f"{' '.join(missing)} ({why}) missing, and installing needs root: run as root, or "
                           f"apt-get install --no-install-recommends {' '.join(missing)}")
    log(f"installing {' '.join(missing)} from the Debian archive ({why})")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    run(["apt-get", "update", "-qq"], env=env)
    run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing], env=env)


# ---------------------------------------------------------------- engine

def ensure_engine(timeout: int = 90) -> None:
    if docker_ok():
        return
    if os.geteuid() != 0:
        raise HarnessError(
            "no container engine answers and installing one needs root: run as root, or start "
            "Docker yourself and make `docker info` work for this user"
        )
    ensure_packages(ENGINE_PACKAGES, "the container engine and the base image")
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    logfile = STATE_DIR / "dockerd.log"
    log(f"starting dockerd (log: {logfile})")
    with open(logfile, "ab") as out:
        proc = subprocess.Popen(["dockerd"], stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if docker_ok():
            log("container engine is up")
            return
        if proc.poll() is not None:
            break
        time.sleep(1)
    tail = logfile.read_text(errors="replace").splitlines()[-15:]
    raise HarnessError(
        "dockerd did not come up (the kernel may refuse namespaces, cgroups or overlayfs "
        "in this environment). Last lines of its log:\n  " + "\n  ".join(tail)
    )


# ---------------------------------------------------------------- image

def image_tag() -> str:
    digest = hashlib.sha256(json.dumps(IMAGE_RECIPE, sort_keys=True).encode()).hexdigest()[:12]
    return f"{IMAGE_REPO}:{digest}"


def image_exists(tag: str) -> bool:
    return run(["docker", "image", "inspect", tag], check=False, capture=True).returncode == 0


def configure_rootfs(root: Path) -> None:
    """Make a debootstrapped tree usable as an SSH-reachable node."""
    (root / "run/sshd").mkdir(parents=True, exist_ok=True)
    for key in root.glob("etc/ssh/ssh_host_*"):
        key.unlink()  # each node gets its own host key from the harness
    sshd_conf = root / "etc/ssh/sshd_config.d/sim.conf"
    sshd_conf.write_text("PermitRootLogin prohibit-password\nPasswordAuthentication no\nUseDNS no\n")
    (root / "root/.ssh").mkdir(mode=0o700, parents=True, exist_ok=True)
    # systemd as PID 1 in a container: no getty, no udev trigger storms.
    for unit in ("getty@tty1.service", "systemd-udevd.service", "systemd-udev-trigger.service"):
        link = root / "etc/systemd/system" / unit
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.is_symlink():
            link.symlink_to("/dev/null")
    (root / "etc/apt/apt.conf.d/99sim").write_text('APT::Install-Recommends "false";\n')


def ensure_image() -> str:
    tag = image_tag()
    if image_exists(tag):
        return tag
    if shutil.which("debootstrap") is None:
        raise HarnessError("debootstrap is missing: run `simctl.py engine` first (it installs it)")
    log(f"building base image {tag} with debootstrap (about a minute)")
    work = Path(tempfile.mkdtemp(prefix="simimg-", dir=os.environ.get("TMPDIR", "/var/tmp")))
    try:
        root = work / "root"
        run(["debootstrap", f"--variant={IMAGE_RECIPE['variant']}",
             "--include=" + ",".join(IMAGE_RECIPE["packages"]),
             IMAGE_RECIPE["suite"], str(root), IMAGE_RECIPE["mirror"]],
            stdout=subprocess.DEVNULL)
        configure_rootfs(root)
        tar = subprocess.Popen(["tar", "-C", str(root), "--numeric-owner", "-c", "."],
                               stdout=subprocess.PIPE)
        run(["docker", "import", "--change", 'CMD ["/usr/sbin/sshd", "-D", "-e"]', "-", tag],
            stdin=tar.stdout, stdout=subprocess.DEVNULL)
        if tar.wait() != 0:
            raise HarnessError("packing the image tree failed")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return tag


# ---------------------------------------------------------------- artifacts

def make_artifacts(dest: Path, extra: list[str]) -> None:
    # The Python artifacts first: make_artifacts.py lists every file in SHA256SUMS.
    run([sys.executable, str(SIM_DIR / "make_python_artifacts.py"), "--dest", str(dest)])
    stage_gr00t_fixture(dest)
    stage_gr00t_upstream(dest)
    run([sys.executable, str(SIM_DIR / "make_artifacts.py"), "--dest", str(dest), *extra])
    run([sys.executable, str(SIM_DIR / "make_mx_driving.py"), "--dest", str(dest)])


def stage_gr00t_fixture(dest: Path) -> None:
    """Put the fixture GR00T release where an operator's artifact source has it.

    The source tarball of the later fixture commit (`Isaac-GR00T-<commit>.tar.gz`, the
    gr00t role's tarball source) and the fixture's one dependency wheel in `wheels/`. The
    fixture data (dataset, models) is staged on each node by `provision`.
    """
    run([sys.executable, str(SIM_DIR / "make_gr00t_fixtures.py"), str(GR00T_FIXTURES)], capture=True)
    commit = (GR00T_FIXTURES / "git" / "commits").read_text().split()[-1]
    tarball = dest / f"Isaac-GR00T-{commit}.tar.gz"
    if not tarball.exists():
        run(["git", "--git-dir", str(GR00T_FIXTURES / "git" / "Isaac-GR00T.git"), "archive", "--format=tar.gz",
             f"--prefix=Isaac-GR00T-{commit}/", "-o", str(tarball), commit])
    (dest / "wheels").mkdir(parents=True, exist_ok=True)
    for wheel in (GR00T_FIXTURES / "wheels").glob("*.whl"):
        shutil.copy2(wheel, dest / "wheels" / wheel.name)


def upstream_tarball() -> Path:
    """The real GR00T release tarball: $GR00T_UPSTREAM_TARBALL, else the newest in UPSTREAM_DIR.

    Training tests run NVIDIA's own trainer from it; without it they cannot, so a missing
    tarball stops the harness instead of training something else.
    """
    given = os.environ.get("GR00T_UPSTREAM_TARBALL", "")
    found = [Path(given)] if given else sorted(UPSTREAM_DIR.glob("Isaac-GR00T-*.tar.gz"))
    if not found or not found[-1].is_file():
        where = f"GR00T_UPSTREAM_TARBALL={given} is not a file" if given else f"nothing in {UPSTREAM_DIR}"
        raise HarnessError(
            f"no GR00T release tarball ({where}). Put GitHub's archive of the commit "
            "(https://github.com/NVIDIA/Isaac-GR00T/archive/<commit>.tar.gz, saved as Isaac-GR00T-<commit>.tar.gz; "
            f"49d40d23ad8a58b270e8a720c752ed2ae950a621 is the commit tested) in {UPSTREAM_DIR}, or set "
            "GR00T_UPSTREAM_TARBALL=/path/to/Isaac-GR00T-<commit>.tar.gz (also as a make variable)")
    return found[-1]


def upstream_commit(tarball: Path) -> str:
    match = UPSTREAM_NAME.match(tarball.name)
    if not match:
        raise HarnessError(f"{tarball}: a GR00T release tarball is named Isaac-GR00T-<40-hex commit>.tar.gz, "
                           "as GitHub serves the archive of a commit; rename it so the commit is known")
    return match["commit"]


def stage_gr00t_upstream(dest: Path) -> str:
    """Copy the real release into the artifact source, under the name the gr00t role looks for."""
    tarball = upstream_tarball()
    commit = upstream_commit(tarball)
    write_if_changed(dest / tarball.name, tarball.read_bytes(), 0o644)
    # For the inventories that train: the commit to check out, read with a file lookup.
    write_if_changed(STATE_DIR / "gr00t-upstream-commit", (commit + "\n").encode(), 0o644)
    return commit


# ---------------------------------------------------------------- training wheels

# What the simulated nodes train with: the real CPU-capable torch that python_env pins (PyPI's
# CUDA build runs on a CPU) under the env, and GR00T's own dependency set as the gr00t role
# derives it from the release's pyproject.toml. Only torch_npu, CANN and the NPUs stay simulated.
TRAIN_TORCH = ("torch==2.7.1",)
TRAIN_BOOTSTRAP = ("pip==26.3", "setuptools==80.9.0", "wheel==0.45.1")
DEEPSPEED_DEPS = ("hjson", "ninja", "py-cpuinfo", "pydantic>=2", "einops", "msgpack")


def gr00t_requirements(tarball: Path) -> tuple[list[str], list[str]]:
    """GR00T's requirements and upstream's locked versions as the gr00t role derives them, with
    the role's own filters and defaults (DeepSpeed replacing upstream's pin)."""
    sys.path.insert(0, str(REPO / "collections"))
    from ansible_collections.ascendops.gr00t.plugins.filter.gr00t import (
        gr00t_ascend_requirements, gr00t_lock_constraints)
    import yaml

    defaults = yaml.safe_load((REPO / "roles" / "gr00t" / "defaults" / "main.yml").read_text())
    with tarfile.open(tarball) as archive:
        top = {m.name: m for m in archive.getmembers() if m.name.count("/") == 1}
        text = {name.split("/")[1]: archive.extractfile(m).read().decode() for name, m in top.items()
                if name.endswith(("/pyproject.toml", "/uv.lock"))}
    drop, extra = defaults["gr00t_requirements_drop"], [f"deepspeed=={defaults['gr00t_deepspeed_version']}"]
    requirements = gr00t_ascend_requirements(text["pyproject.toml"], drop, extra)["requirements"]
    return requirements, gr00t_lock_constraints(text["uv.lock"], drop + defaults["gr00t_keep_installed"] + extra)


def cache_link(path: Path) -> Path:
    """`path`; when it is directly under the state directory and not there yet, it is made a
    link to its namesake in the cache directory (which the link then keeps existing)."""
    if path.parent.resolve() != STATE_DIR.resolve():
        return path
    if not path.is_symlink() and not path.exists():
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        path.symlink_to(CACHE_DIR / path.name)
    if path.is_symlink():
        path.resolve().mkdir(parents=True, exist_ok=True)
    return path


def clear_dir(path: Path) -> None:
    """Empty a directory but keep it: containers may hold it mounted."""
    path.mkdir(parents=True, exist_ok=True)
    for child in path.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def cann_python_packages() -> list[str]:
    """CANN's Python prerequisites as python_env installs them (the site-wide default)."""
    import yaml

    return yaml.safe_load((REPO / "roles" / "ascend" / "defaults" / "main.yml").read_text())[
        "ascend_cann_python_packages"]


def train_requirements() -> tuple[list[str], list[str], str]:
    """What the training env installs from wheels, upstream's constraints, and the DeepSpeed pin.

    The env python_env and gr00t make on a node, but torch_npu: CANN's Python prerequisites
    (protobuf 3.20.*), torch, DeepSpeed and GR00T's set. DeepSpeed publishes only a source
    archive, which builds against the installed torch: its own dependencies are wheels, and it
    is built in the env (train_env).
    """
    gr00t, constraints = gr00t_requirements(upstream_tarball())
    deepspeed = next(r for r in gr00t if r.startswith("deepspeed=="))
    return ([*TRAIN_BOOTSTRAP, *TRAIN_TORCH, *DEEPSPEED_DEPS, *cann_python_packages(),
             *(r for r in gr00t if r != deepspeed)], constraints, deepspeed)


def is_current(marker: Path, key: str) -> bool:
    return marker.is_file() and marker.read_text().strip() == key


def train_wheels(dest: Path) -> str:
    """Download the training wheelhouse once; reused while its requirements stay the same.

    Prints nothing when the cache is current. Returns the requirements' key, which also keys
    the env the train scenario builds from these wheels.
    """
    requirements, constraints, deepspeed = train_requirements()
    key = hashlib.sha256("\n".join(requirements + ["--"] + constraints).encode()).hexdigest()[:16]
    marker = cache_link(dest) / ".key"
    if is_current(marker, key):
        return key
    log(f"downloading the training wheels into {dest} (torch and GR00T's dependencies, about 3 GB, once)")
    # Wheels of other requirements would let pip on the node resolve to a set never tested.
    clear_dir(dest)
    # pip wheel, as an operator fills a wheelhouse: PyPI's wheels as they are, and a wheel built
    # from the few projects that publish only a source archive (omegaconf's antlr4 runtime).
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as pinned:
        pinned.write("".join(line + "\n" for line in constraints))
        pinned.flush()
        run([sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", "--prefer-binary",
             "--wheel-dir", str(dest), "--constraint", pinned.name, *requirements],
            env=dict(os.environ, PIP_CONFIG_FILE=os.devnull))
    run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
         "--no-binary=:all:", "--dest", str(dest), deepspeed], env=dict(os.environ, PIP_CONFIG_FILE=os.devnull))
    marker.write_text(key + "\n")
    return key


TRAIN_ENV = STATE_DIR / "train-env"  # /opt/miniforge3 of the nodes that train (a bind mount)
TRAIN_DATA = STATE_DIR / "train-data"
TRAIN_ENV_PREFIX = "/opt/miniforge3/envs/torch2.7.1"  # where python_env puts the env


def in_node_image(script: str, *mounts: str) -> None:
    """Run a bash script in a throwaway container of the node image, with bind mounts."""
    volumes = [arg for mount in mounts for arg in ("-v", mount)]
    run(["docker", "run", "--rm", *volumes, ensure_image(), "/bin/bash", "-euo", "pipefail", "-c", script])


def train_env(wheels: Path) -> str:
    """The nodes' training env, built once per set of training wheels (and reused while they stay).

    A venv of the node image's python3 where python_env puts the env, with the real torch and
    GR00T's dependency set held to upstream's lock, as the gr00t role installs it. Built in a
    throwaway container so every scenario and the data generator share one copy.
    """
    key = train_wheels(wheels)
    marker = cache_link(TRAIN_ENV) / ".sim-key"
    if is_current(marker, key):
        return key
    log(f"building the training env in {TRAIN_ENV} (torch and GR00T's dependencies, about 6 GB, once)")
    clear_dir(TRAIN_ENV)
    requirements, constraints, deepspeed = train_requirements()
    build = TRAIN_ENV / ".build"
    build.mkdir()
    (build / "requirements.txt").write_text("".join(f"{line}\n" for line in requirements))
    (build / "constraints.txt").write_text("".join(f"{line}\n" for line in constraints))
    # Upstream pins Python 3.10; the node image has Debian 12's 3.11 (the sim inventories pass
    # the same --ignore-requires-python through gr00t_pip_extra_args).
    in_node_image(
        f"python3 -m venv --without-pip {TRAIN_ENV_PREFIX}; pip=$(echo /opt/wheels-train/pip-*.whl)/pip; "
        f"{TRAIN_ENV_PREFIX}/bin/python $pip install --quiet --disable-pip-version-check --no-index "
        "--find-links /opt/wheels-train --ignore-requires-python -c /opt/miniforge3/.build/constraints.txt "
        "-r /opt/miniforge3/.build/requirements.txt; "
        f"DS_BUILD_OPS=0 {TRAIN_ENV_PREFIX}/bin/python -m pip wheel --quiet --disable-pip-version-check --no-deps "
        f"--no-build-isolation --no-index -w /opt/miniforge3/.build/wheels /opt/wheels-train/{deepspeed.replace('==', '-')}.tar.gz; "
        f"{TRAIN_ENV_PREFIX}/bin/python -m pip install --quiet --disable-pip-version-check --no-index "
        f"--find-links /opt/wheels-train --find-links /opt/miniforge3/.build/wheels '{deepspeed}'",
        f"{TRAIN_ENV}:/opt/miniforge3", f"{wheels}:/opt/wheels-train:ro")
    marker.write_text(key + "\n")
    return key


DEMO_WHEELS = STATE_DIR / "wheels-demo"


def demo_wheels(wheels: Path, artifacts: Path) -> Path:
    """The demo nodes' pip source: what an operator's local wheelhouse holds for a node.

    The training wheels, DeepSpeed as the wheel the bundle stage would build from its source
    archive (the one train_env built), and the simulated torch_npu (PyPI's is aarch64 only).
    The demo's python_env and gr00t stages install from it; rebuilt when any of them changes.
    """
    key = train_env(wheels)
    deepspeed = sorted((TRAIN_ENV / ".build" / "wheels").glob("deepspeed-*.whl"))
    torch_npu = sorted((artifacts / "wheels").glob("torch_npu-*.whl"))
    if not deepspeed or not torch_npu:
        raise HarnessError(f"no DeepSpeed wheel in {TRAIN_ENV}/.build/wheels or no torch_npu wheel in "
                           f"{artifacts}/wheels: run `make sim` first")
    extra = [*deepspeed, *torch_npu]
    key = hashlib.sha256(key.encode() + b"".join(f.read_bytes() for f in extra)).hexdigest()[:16]
    marker = DEMO_WHEELS / ".sim-key"
    if is_current(marker, key):
        return DEMO_WHEELS
    log(f"assembling the demo nodes' wheelhouse in {DEMO_WHEELS}")
    clear_dir(DEMO_WHEELS)
    for wheel in [*sorted(wheels.glob("*.whl")), *extra]:
        try:
            os.link(wheel, DEMO_WHEELS / wheel.name)
        except OSError:
            shutil.copy2(wheel, DEMO_WHEELS / wheel.name)
    marker.write_text(key + "\n")
    return DEMO_WHEELS


def train_data(wheels: Path) -> Path:
    """Generate the tiny model, Hugging Face cache and dataset once per generator and release.

    tests/sim/make_train_data.py runs in the training env with GR00T's own code from the
    release tarball (importable, not installed), in a throwaway container.
    """
    env_key = train_env(wheels)
    tarball = upstream_tarball()
    generator = SIM_DIR / "make_train_data.py"
    key = hashlib.sha256(generator.read_bytes() + tarball.name.encode() + env_key.encode()).hexdigest()[:16]
    marker = TRAIN_DATA / ".sim-key"
    if is_current(marker, key):
        return TRAIN_DATA
    log(f"generating the tiny GR00T model, Hugging Face cache and dataset into {TRAIN_DATA}")
    clear_dir(TRAIN_DATA)
    in_node_image(
        "mkdir /tmp/gr00t && tar -xzf /opt/upstream.tar.gz -C /tmp/gr00t --strip-components=1; "
        f"cd /tmp/gr00t && PYTHONPATH=/tmp/gr00t {TRAIN_ENV_PREFIX}/bin/python /opt/ascend-sim/make_train_data.py "
        "--checkout /tmp/gr00t --out /opt/sim-train-data",
        f"{TRAIN_ENV}:/opt/miniforge3:ro", f"{TRAIN_DATA}:/opt/sim-train-data", f"{tarball}:/opt/upstream.tar.gz:ro",
        f"{SIM_DIR}:/opt/ascend-sim:ro")
    marker.write_text(key + "\n")
    return TRAIN_DATA


# ---------------------------------------------------------------- nodes

def ssh_dir() -> Path:
    d = STATE_DIR / "ssh"
    d.mkdir(parents=True, exist_ok=True, mode=0o700)
    return d


def ensure_keypair(path: Path, kind: str = "ed25519") -> Path:
    if not path.exists():
        run(["ssh-keygen", "-q", "-t", kind, "-N", "", "-C", f"sim-{path.name}", "-f", str(path)])
    return path


def docker_exec(container: str, *cmd: str, check: bool = True) -> subprocess.CompletedProcess:
    return run(["docker", "exec", container, *cmd], check=check, capture=True)


def put_files(container: str, files: dict[str, tuple[bytes, int]]) -> None:
    """Copy {dest: (content, mode)} into a container, running or not, owned by root."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for dest, (content, mode) in sorted(files.items()):
            info = tarfile.TarInfo(dest.lstrip("/"))
            info.size, info.mode, info.uid, info.gid = len(content), mode, 0, 0
            tar.addfile(info, io.BytesIO(content))
    res = subprocess.run(["docker", "cp", "-", f"{container}:/"], input=buf.getvalue(), capture_output=True, check=False)
    if res.returncode != 0:
        raise HarnessError(f"copying files into {container} failed: {res.stderr.decode(errors='replace').strip()}")


def put_file(container: str, src: Path, dest: str, mode: int = 0o644) -> None:
    put_files(container, {dest: (src.read_bytes(), mode)})


def provision(container: str, node: dict) -> None:
    """Install the simulated hardware view and vendor state described by `node`.

    node keys: state (npu-smi state dict; also hccn_tool's "hccn" faults and timedatectl's
    "clock"), kernel_headers (bool), driver (version or null),
    artifacts (controller dir holding the simulated driver .run when driver is set),
    prebuilt_kernel (bool, default true: the HDK's prebuilt modules match the running kernel;
    false: only a dkms build can load the driver), hot_reset_fails (bool, default false: driver
    installs end with exit code 2, reboot required), train_data (bool, default false: the tiny
    model, Hugging Face cache and LIBERO dataset of `train-data` under /data).
    """
    # The lspci double shadows pciutils' through PATH order, as /usr/local/bin comes first.
    put_files(container, {
        "/etc/npu-sim/state.json": (json.dumps(node.get("state", {}), indent=2).encode(), 0o644),
        "/usr/local/bin/lspci": ((SIM_DIR / "bin" / "lspci").read_bytes(), 0o755),
        # The RoCE ports of the NPUs (their faults are in the state's "hccn" key) and the
        # clock-sync status (its "clock" key): timedatectl cannot reach systemd in a container.
        "/usr/local/bin/hccn_tool": ((SIM_DIR / "bin" / "hccn_tool").read_bytes(), 0o755),
        "/usr/local/bin/timedatectl": ((SIM_DIR / "bin" / "timedatectl").read_bytes(), 0o755),
    })
    kernel = docker_exec(container, "uname", "-r").stdout.strip()
    if node.get("kernel_headers", True):
        docker_exec(container, "mkdir", "-p", f"/lib/modules/{kernel}/build")
    knobs = {
        "/etc/npu-sim/prebuilt_kernels": (f"{kernel}\n" if node.get("prebuilt_kernel", True) else "").encode(),
        "/etc/npu-sim/hot_reset": b"fail\n" if node.get("hot_reset_fails", False) else b"ok\n",
    }
    put_files(container, {path: (data, 0o644) for path, data in knobs.items()})
    driver = node.get("driver")
    if driver:
        install_sim_driver(container, Path(node["artifacts"]), driver)
    if node.get("train_data"):
        # What an operator stages for a run: the dataset (written to: rank 0 saves its
        # statistics there), the base model and the Hugging Face cache with the VLM.
        docker_exec(container, "mkdir", "-p", "/data/models")
        for source, dest in (("dataset", "/data/libero"), ("model", "/data/models/GR00T-N1.7-tiny"),
                             ("hf_home", "/data/hf")):
            if docker_exec(container, "test", "-e", dest, check=False).returncode != 0:
                run(["docker", "cp", f"{TRAIN_DATA / source}/.", f"{container}:{dest}"], capture=True)
    if node.get("gr00t_data", True) and (GR00T_FIXTURES / "data").is_dir():
        # What an operator stages by hand: the LeRobot dataset and the model folders.
        docker_exec(container, "mkdir", "-p", "/data")
        run(["docker", "cp", f"{GR00T_FIXTURES / 'data'}/.", f"{container}:/data/gr00t"], capture=True)


def install_sim_driver(container: str, artifacts: Path, version: str) -> None:
    """Pre-install the simulated driver by running its installer, as an operator would."""
    runfiles = sorted(artifacts.glob(f"Ascend-hdk-910b-npu-driver_{version}_linux-*.run"))
    if not runfiles:
        raise HarnessError(f"no simulated driver {version} in {artifacts}: run `simctl.py artifacts` first")
    have = docker_exec(container, "cat", "/usr/local/Ascend/driver/version.info", check=False)
    if f"Version={version}" in have.stdout:
        return
    docker_exec(container, "sh", "-c", "id HwHiAiUser >/dev/null 2>&1 || "
                "{ groupadd HwHiAiUser && useradd -g HwHiAiUser -d /home/HwHiAiUser -m -s /bin/bash HwHiAiUser; }")
    put_file(container, runfiles[0], f"/tmp/{runfiles[0].name}", 0o755)
    res = docker_exec(container, "bash", f"/tmp/{runfiles[0].name}", "--full", "--install-for-all",
                      "--quiet", "--nox11", check=False)
    if res.returncode not in (0, 2):
        raise HarnessError(f"simulated driver install failed in {container}:\n{res.stdout}{res.stderr}")
    docker_exec(container, "rm", "-f", f"/tmp/{runfiles[0].name}")


def load_cluster(path: Path) -> dict:
    data = json.loads(path.read_text())
    for key in ("name", "nodes"):
        if key not in data:
            raise HarnessError(f"{path}: missing key {key!r}")
    return data


def known_hosts_update(entries: dict[str, str]) -> None:
    """Record the nodes' host keys so SSH host key checking stays on."""
    kh = Path.home() / ".ssh" / "known_hosts"
    kh.parent.mkdir(mode=0o700, exist_ok=True)
    kh.touch(mode=0o600)
    for host in entries:
        run(["ssh-keygen", "-R", host, "-f", str(kh)], check=False, capture=True)
    with open(kh, "a") as fh:
        for host, key in entries.items():
            fh.write(f"{host} {key}\n")


def container_running(name: str) -> bool:
    res = run(["docker", "inspect", "-f", "{{.State.Running}}", name], check=False, capture=True)
    return res.returncode == 0 and res.stdout.strip() == "true"


def cluster_up(path: Path, artifacts: Path) -> None:
    cluster = load_cluster(path)
    # "image": start the nodes from another image, e.g. a snapshot of a converged node
    # (docker commit): each still gets its own name, hostname and host key.
    tag = cluster.get("image") or ensure_image()
    network = f"sim-{cluster['name']}"
    if run(["docker", "network", "inspect", network], check=False, capture=True).returncode != 0:
        run(["docker", "network", "create", network], capture=True)
    client_key = ensure_keypair(ssh_dir() / "id_ed25519")
    hosts: dict[str, str] = {}
    for node in cluster["nodes"]:
        name = f"{cluster['name']}-{node['name']}"
        hostkey = ensure_keypair(ssh_dir() / f"host_{name}")
        if not container_running(name):
            run(["docker", "rm", "-f", name], check=False, capture=True)
            log(f"starting node {name} (ssh on 127.0.0.1:{node['ssh_port']})")
            # tmpfs: small file systems of a fixed size, e.g. to fill a disk on purpose.
            tmpfs = [arg for mount in node.get("tmpfs", []) for arg in ("--tmpfs", mount)]
            # The NPUs' RoCE fabric: one directory every node's hccn_tool double publishes to.
            fabric = STATE_DIR / f"fabric-{cluster['name']}"
            fabric.mkdir(parents=True, exist_ok=True)
            # Kernel settings as on a host: net.ipv4.ip_local_reserved_ports is the node's own
            # (its network namespace), but Docker mounts /proc/sys read-only.
            caps = ["--cap-add", "SYS_ADMIN"] if cluster.get("writable_sysctl") else []
            # Shared storage as a site has it: "<controller path>:<node path>[:ro]", where the
            # controller path may start with {repo} or {state} (the harness's state directory).
            mounts = [arg for mount in cluster.get("mounts", [])
                      for arg in ("-v", mount.format(repo=REPO, state=STATE_DIR))]
            run(["docker", "create", "--name", name, "--hostname", node["name"],
                 "--network", network, "--network-alias", node["name"], *caps,
                 "-p", f"127.0.0.1:{node['ssh_port']}:22", *tmpfs, "-v", f"{fabric}:/var/lib/npu-sim/fabric",
                 *mounts, "--label", f"ascendops.sim.cluster={cluster['name']}", tag], capture=True)
            put_files(name, {
                "/etc/ssh/ssh_host_ed25519_key": (hostkey.read_bytes(), 0o600),
                "/etc/ssh/ssh_host_ed25519_key.pub": (hostkey.with_suffix(".pub").read_bytes(), 0o644),
                "/root/.ssh/authorized_keys": (client_key.with_suffix(".pub").read_bytes(), 0o600),
            })
            run(["docker", "start", name], capture=True)
            if cluster.get("writable_sysctl"):
                run(["docker", "exec", name, "mount", "-o", "remount,rw", "/proc/sys"], capture=True)
            provision(name, dict(node, artifacts=str(artifacts)))
        pub = hostkey.with_suffix(".pub").read_text().split()
        hosts[f"[127.0.0.1]:{node['ssh_port']}"] = f"{pub[0]} {pub[1]}"
    known_hosts_update(hosts)
    wait_for_ssh(cluster, client_key)


def wait_for_ssh(cluster: dict, key: Path, timeout: int = 30) -> None:
    for node in cluster["nodes"]:
        deadline = time.monotonic() + timeout
        while True:
            res = run(["ssh", "-i", str(key), "-p", str(node["ssh_port"]), "-o", "BatchMode=yes",
                       "-o", "StrictHostKeyChecking=yes", "-o", "ConnectTimeout=3",
                       "root@127.0.0.1", "true"], check=False, capture=True)
            if res.returncode == 0:
                break
            if time.monotonic() > deadline:
                raise HarnessError(f"node {node['name']} does not answer SSH: {res.stderr.strip()}")
            time.sleep(1)


def cluster_down(path: Path) -> None:
    cluster = load_cluster(path)
    for node in cluster["nodes"]:
        run(["docker", "rm", "-f", f"{cluster['name']}-{node['name']}"], check=False, capture=True)
    run(["docker", "network", "rm", f"sim-{cluster['name']}"], check=False, capture=True)


# ---------------------------------------------------------------- CLI

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("engine")
    sub.add_parser("host-tools")
    sub.add_parser("image")
    sub.add_parser("tag")
    sub.add_parser("upstream-commit")
    for name in ("train-wheels", "train-env", "train-data", "demo-wheels"):
        p = sub.add_parser(name)
        p.add_argument("wheels", type=Path)
        if name == "demo-wheels":
            p.add_argument("--artifacts", type=Path, default=STATE_DIR / "artifacts")
    p = sub.add_parser("artifacts")
    p.add_argument("dest", type=Path)
    p.add_argument("extra", nargs=argparse.REMAINDER)
    for name in ("up", "down"):
        p = sub.add_parser(name)
        p.add_argument("cluster", type=Path)
        p.add_argument("--artifacts", type=Path, default=STATE_DIR / "artifacts")
    p = sub.add_parser("provision")
    p.add_argument("container")
    p.add_argument("--node", type=Path, required=True, help="JSON file with the node's simulated state")
    p.add_argument("--artifacts", type=Path, default=STATE_DIR / "artifacts")
    args = parser.parse_args(argv)
    try:
        if args.cmd == "engine":
            ensure_engine()
        elif args.cmd == "host-tools":
            ensure_packages(TEST_PACKAGES, "the unit tests' video decoding")
        elif args.cmd == "image":
            ensure_engine()
            print(ensure_image())
        elif args.cmd == "tag":
            print(image_tag())
        elif args.cmd == "upstream-commit":
            print(upstream_commit(upstream_tarball()))
        elif args.cmd == "train-wheels":
            print(train_wheels(args.wheels))
        elif args.cmd == "train-env":
            ensure_engine()
            print(train_env(args.wheels))
        elif args.cmd == "train-data":
            ensure_engine()
            print(train_data(args.wheels))
        elif args.cmd == "demo-wheels":
            ensure_engine()
            print(demo_wheels(args.wheels, args.artifacts))
        elif args.cmd == "artifacts":
            make_artifacts(args.dest, args.extra)
        elif args.cmd == "up":
            ensure_engine()
            cluster_up(args.cluster, args.artifacts)
        elif args.cmd == "down":
            cluster_down(args.cluster)
        elif args.cmd == "provision":
            node = json.loads(args.node.read_text())
            provision(args.container, dict(node, artifacts=str(args.artifacts)))
    except HarnessError as exc:
        print(f"[simctl] ERROR: {exc}", file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as exc:
        detail = (exc.stderr or "").strip() if isinstance(exc.stderr, str) else ""
        print(f"[simctl] ERROR: {' '.join(map(str, exc.cmd))} exited {exc.returncode}\n{detail}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
