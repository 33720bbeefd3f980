"""The preload callback: after the playbook starts, the controller's main process holds every
filter and lookup file of the collection and ansible.builtin's tests, so forked workers do not
load them again."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Callable

import ansible_collections.ascendops.gr00t as collection

REPO = Path(__file__).resolve().parents[2]
# ansible_collections/ascendops/gr00t -> the directory holding ansible_collections.
COLLECTIONS_ROOT = Path(collection.__path__[0]).parents[1]

PROBE = """
import json, sys
from ansible.plugins.loader import init_plugin_loader
init_plugin_loader([sys.argv[1]])
from ansible_collections.ascendops.gr00t.plugins.callback.preload import PRELOAD, CallbackModule
before = set(sys.modules)
from ansible.plugins.loader import callback_loader
callback = callback_loader.get("ascendops.gr00t.preload")
callback.set_options()
callback.v2_playbook_on_start(None)
print(json.dumps({"loaded": sorted(set(sys.modules) - before),
                  "unresolved": [name for loader, name in PRELOAD if loader.get(name) is None]}))
"""


def probe() -> dict[str, list[str]]:
    res = subprocess.run([sys.executable, "-c", PROBE, str(COLLECTIONS_ROOT)],
                         capture_output=True, text=True, check=True, cwd=REPO)
    return json.loads(res.stdout.splitlines()[-1])


def test_every_plugin_file_is_loaded_and_every_name_resolves() -> None:
    found = probe()
    assert found["unresolved"] == []
    wanted = {f"ansible_collections.ascendops.gr00t.plugins.filter.{p.stem}"
              for p in (REPO / "plugins" / "filter").glob("*.py")}
    wanted |= {f"ansible_collections.ascendops.gr00t.plugins.lookup.{p.stem}"
               for p in (REPO / "plugins" / "lookup").glob("*.py")}
    assert wanted - set(found["loaded"]) == set()
    # ansible.builtin's tests (match, version, ...) live in ansible.plugins.test.core_<hash>.
    assert any(name.startswith("ansible.plugins.test.core") for name in found["loaded"])
    assert any(name.startswith("ansible.plugins.filter.core") for name in found["loaded"])


PLUGIN_CACHE_PROBE = """
import json, sys
from ansible.plugins.loader import Jinja2Loader, filter_loader, init_plugin_loader, test_loader
init_plugin_loader([sys.argv[1]])
from ansible_collections.ascendops.gr00t.plugins.callback import preload
names = {"filters": preload.collection_plugin_names(filter_loader, preload.COLLECTION),
         "tests": preload.collection_plugin_names(test_loader, preload.COLLECTION),
         "jinja_tests": preload.jinja_plugin_names(test_loader)}
before = {name: getattr(filter_loader.get(name), "ansible_name", None)
          for name in ["ascendops.gr00t.mask_credentials", "ansible.builtin.to_nice_yaml", "length", "combine"]}
scans = []
original = Jinja2Loader.get_with_context
def counted(self, name, *args, **kwargs):
    scans.append(name)
    return original(self, name, *args, **kwargs)
Jinja2Loader.get_with_context = counted
installed = [preload.install_plugin_cache(), preload.install_plugin_cache()]
after = {}
for dummy in range(3):
    after = {name: getattr(filter_loader.get(name), "ansible_name", None) for name in before}
print(json.dumps({"names": names, "before": before, "after": after, "installed": installed, "scans": scans,
                  "same": filter_loader.get("ascendops.gr00t.mask_credentials")
                          is filter_loader.get("ascendops.gr00t.mask_credentials")}))
"""


def test_plugin_cache_resolves_each_name_once_to_what_ansible_finds() -> None:
    res = subprocess.run([sys.executable, "-c", PLUGIN_CACHE_PROBE, str(COLLECTIONS_ROOT)],
                         capture_output=True, text=True, check=True, cwd=REPO)
    found = json.loads(res.stdout.splitlines()[-1])
    assert found["installed"] == [True, True]
    # Found or not (Jinja's own `length`), each name is looked for once however often it is asked for.
    assert found["after"] == found["before"] and found["before"]["length"] is None
    assert found["before"]["ascendops.gr00t.mask_credentials"] == "ascendops.gr00t.mask_credentials"
    assert sorted(found["scans"]) == sorted(found["before"]) and found["same"]
    assert "ascendops.gr00t.file_set_pending" in found["names"]["filters"]
    # The operators among Jinja's tests are no plugin names.
    assert "defined" in found["names"]["jinja_tests"] and "==" not in found["names"]["jinja_tests"]


FREEZE_PROBE = """
import gc, json, sys, weakref
from ansible.plugins.loader import init_plugin_loader
init_plugin_loader([sys.argv[1]])
from ansible_collections.ascendops.gr00t.plugins.callback.preload import CallbackModule
class Cycle:
    pass
garbage = Cycle()
garbage.self = garbage
alive = weakref.ref(garbage)
garbage = None
before = gc.get_freeze_count()
CallbackModule().v2_playbook_on_task_start(None, False)
print(json.dumps({"before": before, "after": gc.get_freeze_count(), "cycle_frozen": alive() is not None}))
"""


def test_task_start_collects_then_freezes_the_heap() -> None:
    res = subprocess.run([sys.executable, "-c", FREEZE_PROBE, str(COLLECTIONS_ROOT)],
                         capture_output=True, text=True, check=True, cwd=REPO)
    found = json.loads(res.stdout.splitlines()[-1])
    assert found["before"] == 0
    assert found["after"] > 0
    # A cycle the main process dropped before the task is collected, not kept for the whole run.
    assert found["cycle_frozen"] is False


CACHE_PROBE = """
import json, sys, tempfile
from ansible.plugins.loader import init_plugin_loader
init_plugin_loader([sys.argv[1]])
from ansible.template import Templar
from ansible.parsing.dataloader import DataLoader
from ansible._internal._datatag._tags import TrustedAsTemplate
from ansible_collections.ascendops.gr00t.plugins.callback import preload

environment, compile_context = preload._ansible_environment()
compiled = []
original = environment.compile
def counting(self, source, *args, **kwargs):
    compiled.append(str(source)[:40])
    return original(self, source, *args, **kwargs)
environment.compile = counting
cache = preload.CompileCache(tempfile.mkdtemp())
preload.install_compile_cache(environment, compile_context, cache)

def render(variables):
    templar = Templar(loader=DataLoader(), variables=variables)
    out = [templar.template(TrustedAsTemplate().tag(text)) for text in
           ("{{ a }}/{{ b | upper }}", "{{ a ~ '-' ~ b }}", "{% if a == 'x' %}yes{% else %}no{% endif %}")]
    out.append(templar.evaluate_conditional(TrustedAsTemplate().tag("a == 'x' and b is defined")))
    try:
        templar.template(TrustedAsTemplate().tag("{{ a | }}"))
    except Exception as error:
        out.append(type(error).__name__)
    return out

first = render({"a": "x", "b": "y"})
after_first = len(compiled)
second = render({"a": "z", "b": "w"})
after_second = len(compiled)
# A worker starts with an empty memory and finds the code in the shared directory.
cache.codes.clear()
third = render({"a": "x", "b": "y"})
print(json.dumps({"first": first, "second": second, "third": third, "compiled": [after_first, after_second, len(compiled)]}))
"""


def test_compile_cache_renders_the_same_and_compiles_each_text_once() -> None:
    res = subprocess.run([sys.executable, "-c", CACHE_PROBE, str(COLLECTIONS_ROOT)],
                         capture_output=True, text=True, check=True, cwd=REPO)
    found = json.loads(res.stdout.splitlines()[-1])
    assert found["first"] == ["x/Y", "x-y", "yes", True, "AnsibleTemplateSyntaxError"]
    assert found["second"] == ["z/W", "z-w", "no", False, "AnsibleTemplateSyntaxError"]
    assert found["third"] == found["first"]
    first, second, third = found["compiled"]
    assert first > 0
    # Rendering again, with other values or from the shared files, compiles only the broken template.
    assert second - first <= 1
    assert third - second <= 1


def test_compile_key_tells_settings_kinds_and_texts_apart() -> None:
    from ansible_collections.ascendops.gr00t.plugins.callback import preload
    import jinja2

    env = jinja2.Environment()
    base = preload.environment_settings(env, None)
    assert preload.compile_key(base, "template", "{{ a }}") == preload.compile_key(base, "template", "{{ a }}")
    assert preload.compile_key(base, "template", "{{ a }}") != preload.compile_key(base, "expression", "{{ a }}")
    assert preload.compile_key(base, "template", "{{ a }}") != preload.compile_key(base, "template", "{{ b }}")
    assert preload.compile_key(base, "template", "a") != preload.compile_key(
        preload.environment_settings(env, True), "template", "a")
    env.trim_blocks = True
    assert preload.compile_key(base, "template", "a") != preload.compile_key(
        preload.environment_settings(env, None), "template", "a")


def test_compile_cache_recompiles_a_damaged_file(tmp_path: Path) -> None:
    from ansible_collections.ascendops.gr00t.plugins.callback import preload

    calls = []

    def compile_code():
        calls.append(1)
        return compile("x = 1", "<t>", "exec")

    preload.CompileCache(str(tmp_path)).get("k", compile_code)
    [path] = list(tmp_path.iterdir())
    path.write_bytes(b"\x00broken")
    code = preload.CompileCache(str(tmp_path)).get("k", compile_code)
    assert len(calls) == 2
    assert code.co_filename == "<t>"
    assert preload.CompileCache(str(tmp_path)).get("k", compile_code) is not None
    assert len(calls) == 2


def test_cache_directory_is_kept_per_versions_and_private(tmp_path: Path) -> None:
    from ansible_collections.ascendops.gr00t.plugins.callback import preload

    base = tmp_path / "cache"
    kept = preload.persistent_directory(str(base), "jinja-code", 0.0)
    assert kept == str(base / "jinja-code" / preload.CODE_VERSIONS_DIGEST)
    assert (base / "jinja-code").stat().st_mode & 0o777 == 0o700
    assert preload.persistent_directory("", "jinja-code", 0.0) is None
    # Code is loaded from it: a directory others can write to, or a link, is not used.
    (base / "jinja-code").chmod(0o777)
    assert preload.persistent_directory(str(base), "jinja-code", 0.0) is None
    (base / "jinja-code").chmod(0o700)
    (tmp_path / "link").symlink_to(base / "jinja-code")
    assert preload.persistent_directory(str(tmp_path), "link", 0.0) is None


def test_cache_directory_drops_other_versions_unused_for_30_days(tmp_path: Path) -> None:
    import os

    from ansible_collections.ascendops.gr00t.plugins.callback import preload

    now = 100 * 24 * 3600.0
    root = tmp_path / "modules"
    root.mkdir(mode=0o700)
    for name, age_days in (("stale", 31), ("recent", 29), (preload.CODE_VERSIONS_DIGEST, 365)):
        (root / name).mkdir(mode=0o700)
        (root / name / "code").write_bytes(b"")
        os.utime(root / name, (now - age_days * 24 * 3600, now - age_days * 24 * 3600))
    preload.persistent_directory(str(tmp_path), "modules", now)
    assert sorted(p.name for p in root.iterdir()) == sorted(["recent", preload.CODE_VERSIONS_DIGEST])


def write_payload(path: Path, entries: dict[str, bytes]) -> None:
    """A payload as ansible-core keeps one: a pickled object whose zip_data is the base64 of a zip."""
    import base64
    import io
    import pickle
    import types
    import zipfile

    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        for name, content in entries.items():
            archive.writestr(name, content)
    path.write_bytes(pickle.dumps(types.SimpleNamespace(zip_data=base64.b64encode(data.getvalue()))))


def test_module_payloads_are_kept_and_used_while_their_files_are_unchanged(tmp_path: Path) -> None:
    from ansible_collections.ascendops.gr00t.plugins.callback import preload

    src, kept, run, later = (tmp_path / name for name in ("src", "kept", "run", "later"))
    for directory in (src, kept, run, later):
        directory.mkdir()
    (src / "util.py").write_bytes(b"X = 1\n")

    def locate(entry: str) -> str | None:
        return str(src / entry.rsplit("/", 1)[-1]) if entry.startswith("c/") else None

    write_payload(run / "c.mod-ZIP_DEFLATED-none", {"c/__init__.py": b"", "c/util.py": b"X = 1\n"})
    # An entry that is not its file's bytes (the file changed after the build): not kept.
    write_payload(run / "c.stale-ZIP_DEFLATED-none", {"c/util.py": b"X = 0\n"})
    (run / "c.mod-ZIP_DEFLATED-none.lock").write_bytes(b"")
    preload.keep_payloads(str(run), str(kept), set(), locate)
    assert sorted(p.name for p in kept.iterdir()) == [
        "c.mod-ZIP_DEFLATED-none", "c.mod-ZIP_DEFLATED-none" + preload.SOURCES_SUFFIX]

    assert preload.restore_payloads(str(kept), str(later), locate) == {"c.mod-ZIP_DEFLATED-none"}
    assert (later / "c.mod-ZIP_DEFLATED-none").read_bytes() == (run / "c.mod-ZIP_DEFLATED-none").read_bytes()

    (later / "c.mod-ZIP_DEFLATED-none").unlink()
    (src / "util.py").write_bytes(b"X = 2\n")
    assert preload.restore_payloads(str(kept), str(later), locate) == set()
    assert list(later.iterdir()) == []
    (src / "util.py").write_bytes(b"X = 1\n")
    assert preload.restore_payloads(str(kept), str(later), locate) == {"c.mod-ZIP_DEFLATED-none"}
    # A package __init__.py that appears where Ansible wrote its own is a change too.
    (later / "c.mod-ZIP_DEFLATED-none").unlink()
    (src / "__init__.py").write_bytes(b"")
    assert preload.restore_payloads(str(kept), str(later), locate) == set()


def test_a_payload_kept_from_another_checkout_is_not_used(tmp_path: Path) -> None:
    """Two checkouts (or installs) of the collection on one controller build payloads of the
    same names: a run uses only those built from the files it loads itself, even when the other
    checkout's files are unchanged."""
    from ansible_collections.ascendops.gr00t.plugins.callback import preload

    old, new, kept, run, later = (tmp_path / name for name in ("old", "new", "kept", "run", "later"))
    for directory in (old, new, kept, run, later):
        directory.mkdir()
    (old / "mod.py").write_bytes(b"OPTIONS = 1\n")
    (new / "mod.py").write_bytes(b"OPTIONS = 2\n")

    def locate_in(root: Path) -> Callable[[str], str | None]:
        return lambda entry: str(root / entry.rsplit("/", 1)[-1])

    write_payload(run / "c.mod-ZIP_DEFLATED-none", {"c/mod.py": b"OPTIONS = 1\n"})
    preload.keep_payloads(str(run), str(kept), set(), locate_in(old))
    assert preload.restore_payloads(str(kept), str(later), locate_in(new)) == set()
    assert preload.restore_payloads(str(kept), str(later), locate_in(old)) == {"c.mod-ZIP_DEFLATED-none"}
    # A list kept in an older form is not used either.
    (kept / ("c.mod-ZIP_DEFLATED-none" + preload.SOURCES_SUFFIX)).write_text(
        '{"%s": "%s"}' % (old / "mod.py", "0" * 64))
    assert preload.restore_payloads(str(kept), str(later / "x"), locate_in(old)) == set()


def test_module_payload_entries_map_to_ansible_core_files() -> None:
    import ansible

    from ansible_collections.ascendops.gr00t.plugins.callback import preload

    basic = preload.locate_source("ansible/module_utils/basic.py")
    assert basic == str(Path(ansible.__file__).parent / "module_utils" / "basic.py")
    assert Path(basic).is_file()
    mine = preload.locate_source("ansible_collections/ascendops/gr00t/plugins/module_utils/preflight.py")
    assert mine is not None and Path(mine).read_bytes() == (REPO / "plugins/module_utils/preflight.py").read_bytes()
    assert preload.locate_source("ansible_collections/__init__.py") is None


def test_the_role_files_the_first_pass_reads_are_parsed_once_in_the_main_process(tmp_path: Path) -> None:
    """Every role's argument specs, defaults and vars, as plugins/action/role_arguments.py reads
    them: through the loader that the workers inherit, which keeps what it parsed."""
    from ansible.parsing.dataloader import DataLoader
    from ansible_collections.ascendops.gr00t.plugins.callback import preload

    roles = Path(list(collection.__path__)[0]) / "roles"
    loader = DataLoader()
    read = preload.read_role_files(loader, str(roles))
    assert str(roles / "gr00t" / "meta" / "argument_specs.yml") in read
    assert str(roles / "ascend" / "vars" / "main.yml") in read
    assert all(path in loader._FILE_CACHE for path in read)
    assert not any(path.endswith("tasks/main.yml") for path in read)
    cached = loader._FILE_CACHE[str(roles / "cann" / "defaults" / "main.yml")]
    assert loader.load_from_file(str(roles / "cann" / "defaults" / "main.yml"), trusted_as_template=True,
                                 unsafe=True) is cached
