# -*- coding: utf-8 -*-
# Copyright: ascendops.gr00t maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import annotations

DOCUMENTATION = r"""
---
name: preload
type: aggregate
short_description: Prepare the controller's main process for the workers it forks
version_added: "0.2.0"
description:
  - Ansible runs each task on each node in a worker process forked from the controller's main
    process. A filter, test or lookup plugin that the main process has not loaded is loaded
    again by every worker whose templates use it. For this collection's roles that was about
    1.5 s of controller CPU per node on a rerun that changes nothing (docs/benchmark.md).
  - This callback loads this collection's filters and lookup and ansible.builtin's filters and
    tests in the main process when the playbook starts, so every worker inherits them. It prints
    nothing and changes no result.
  - When each task starts, it collects the main process's cyclic garbage and freezes what is
    left (Python's C(gc.freeze)), just before the task's workers fork. A garbage collection in
    a worker then no longer walks, and so copies, the whole inherited heap. Measured on a
    rerun that changes nothing, it saves about 13% of the controller CPU at one and four nodes
    (docs/benchmark.md).
  - Ansible compiles a template's text (Jinja to Python code) every time it renders it, and most
    templates are rendered in the workers, so a compiled template dies with its worker and the next
    task or node compiles it again (about 1500 compiles per node on a rerun). With O(compile_cache)
    on, a template's compiled code is kept on the controller in O(cache_dir), under a key made
    of the template's text, the Jinja settings that shape the code and the Python, Jinja and
    ansible-core versions; a worker, and a later run, loads it instead of compiling again. Templates
    loaded from files (the template module) are not kept. This replaces two methods of ansible-core's
    Jinja environment, which are internal to ansible-core; when they are not found, the cache stays
    off and the run is as without it.
  - Ansible builds each module's payload (the module zipped with the module_utils it imports) once per
    run, in the run's temporary directory. With O(module_cache) on, the payloads of a run are kept in
    O(cache_dir) with the sha256 of every file they were built from, and a later run starts with the
    ones whose files are unchanged. Where ansible-core keeps a run's payloads and how it writes them
    are internal to it; if either changes, no kept payload is used and Ansible builds them as before.
  - Ansible finds a filter or test named by its collection (C(ascendops.gr00t.mask_credentials)),
    and each of Jinja's own (C(length), C(default), C(defined)), which it looks for among
    ansible.builtin's first, by walking every plugin file of that collection each time a template
    environment asks for it, and a worker makes several environments per task (about 300 such
    walks per node on a rerun). With O(plugin_cache) on, what a name resolves to, found or not, is
    kept for the run, and Jinja's and this collection's filters and tests are resolved in the main
    process when the playbook starts, so each worker inherits them. This replaces a method of
    ansible-core's Jinja plugin loader, internal to ansible-core; when it is not found, the cache
    stays off and the run is as without it.
  - When the first play that runs one of this collection's roles starts, it reads the argument
    specs, defaults and vars of all of the collection's roles through the playbook's loader, which
    keeps what it parsed. The ascend role's first pass reads them all on every node; a worker then
    finds them parsed instead of parsing them again.
  - Enable it with C(callbacks_enabled) in C(ansible.cfg); the project's configuration does.
options:
  compile_cache:
    description:
      - Keep compiled templates for the rest of the run, shared by every worker.
      - Set it to false if a template renders differently with it than without it.
    type: bool
    default: true
    env:
      - name: ASCENDOPS_COMPILE_CACHE
    ini:
      - section: callback_preload
        key: compile_cache
  plugin_cache:
    description:
      - Keep what a filter or test name resolves to, found or not, for the rest of the run, and
        resolve Jinja's and this collection's filters and tests in the main process.
      - Set it to false if a filter or test is added to a collection while a run is going on.
    type: bool
    default: true
    env:
      - name: ASCENDOPS_PLUGIN_CACHE
    ini:
      - section: callback_preload
        key: plugin_cache
  module_cache:
    description:
      - Keep the module payloads Ansible builds (a module zipped with the module_utils it imports, built
        once per module and run, about 0.15 s of controller CPU each) for later runs, in O(cache_dir).
      - A kept payload is used only while every file it was built from is unchanged on the controller,
        compared by sha256 when a run starts; otherwise Ansible builds it again.
    type: bool
    default: true
    env:
      - name: ASCENDOPS_MODULE_CACHE
    ini:
      - section: callback_preload
        key: module_cache
  cache_dir:
    description:
      - Where compiled templates (C(jinja-code/)) and module payloads (C(modules/)) are kept across
        runs, one subdirectory per Python, Jinja and ansible-core combination; a subdirectory no run
        has added to for 30 days is removed when a run starts. C(rm -rf) of the directory is always
        safe.
      - Code is loaded from it, so each of its directories must belong to the user running Ansible and
        be writable by no one else; otherwise, and when empty, nothing is kept across runs (compiled
        templates are then kept in the run's own temporary directory, removed when the run ends).
    type: str
    default: ~/.ansible/ascendops
    env:
      - name: ASCENDOPS_CACHE_DIR
    ini:
      - section: callback_preload
        key: cache_dir
author:
  - ascendops.gr00t maintainers (@ascendops)
requirements:
  - listed in C(callbacks_enabled)
"""

import base64
import gc
import hashlib
import importlib.util
import io
import json
import marshal
import os
import pickle
import pkgutil
import shutil
import stat
import sys
import threading
import time
import types
import typing as t
import zipfile

import ansible
import jinja2
from ansible import constants as C
from ansible.release import __version__ as ansible_version
from ansible.plugins.callback import CallbackBase
from ansible.plugins.loader import Jinja2Loader, filter_loader, lookup_loader, test_loader

# One name per collection and plugin type is enough for filters and tests: resolving one of
# them loads every plugin file of that collection (ansible.builtin's included).
PRELOAD = (
    (filter_loader, "ansible.builtin.bool"),
    (test_loader, "ansible.builtin.match"),
    (filter_loader, "ascendops.gr00t.mask_credentials"),
    (lookup_loader, "ascendops.gr00t.artifact_manifest"),
    # The lookups the stages render their files with, in the tasks and in the checks that skip a
    # write whose file is already as rendered (file_set_pending).
    (lookup_loader, "ascendops.gr00t.role_template"),
    # The lookup a refusal names the variable the user set with.
    (lookup_loader, "ascendops.gr00t.set_by"),
    (lookup_loader, "ansible.builtin.file"),
)


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "ascendops.gr00t.preload"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args: t.Any, **kwargs: t.Any) -> None:
        super().__init__(*args, **kwargs)
        # The kept module payloads (None: not kept across runs) and those this run started with.
        self.module_dir: str | None = None
        self.restored: set[str] = set()
        self.roles_read = False

    def v2_playbook_on_start(self, playbook: object) -> None:
        for loader, name in PRELOAD:
            loader.get(name)
        if self.get_option("plugin_cache") and install_plugin_cache():
            for loader in (filter_loader, test_loader):
                for name in jinja_plugin_names(loader) + collection_plugin_names(loader, COLLECTION):
                    loader.get(name)
        now = time.time()
        if self.get_option("compile_cache"):
            internals = _ansible_environment()
            if internals is not None:
                cache_dir = (persistent_directory(self.get_option("cache_dir"), "jinja-code", now)
                             or run_directory("jinja-code"))
                install_compile_cache(*internals, CompileCache(cache_dir))
        if self.get_option("module_cache"):
            self.module_dir = persistent_directory(self.get_option("cache_dir"), "modules", now)
            if self.module_dir is not None:
                self.restored = restore_payloads(self.module_dir, run_directory(ANSIBALLZ_CACHE))

    def v2_playbook_on_play_start(self, play: t.Any) -> None:
        if self.roles_read:
            return
        for role in play.get_roles():
            if role._role_collection == COLLECTION:
                read_role_files(play._loader, os.path.dirname(role._role_path))
                self.roles_read = True
                return

    def v2_playbook_on_stats(self, stats: object) -> None:
        if self.module_dir is not None:
            keep_payloads(run_directory(ANSIBALLZ_CACHE), self.module_dir, self.restored)

    def v2_playbook_on_task_start(self, task: object, is_conditional: bool) -> None:
        freeze_heap()


COLLECTION = "ascendops.gr00t"
# What plugins/action/role_arguments.py reads of every stage.
ROLE_FILES = (("meta", "argument_specs.yml"), ("defaults", "main.yml"), ("vars", "main.yml"))


def read_role_files(loader: t.Any, roles_dir: str) -> list[str]:
    """Parse each role's ROLE_FILES under roles_dir with the loader, which caches them (as the
    action loads them: trusted as templates, not copied); the paths read."""
    read = []
    for role in sorted(os.listdir(roles_dir)):
        for parts in ROLE_FILES:
            path = os.path.join(roles_dir, role, *parts)
            if os.path.isfile(path):
                loader.load_from_file(path, trusted_as_template=True, unsafe=True)
                read.append(path)
    return read


def install_plugin_cache() -> bool:
    """Keep, for the rest of the process and its workers, what a filter or test name resolves to,
    found or not (Jinja's own filters, such as `length`, are looked for among ansible.builtin's
    first, and not found there); False when ansible-core's Jinja plugin loader has no such method
    (the cache stays off). A name asked for with other arguments, or that fails, is not kept."""
    original = getattr(Jinja2Loader, "get_with_context", None)
    if original is None or getattr(original, "keeps_found", False):
        return original is not None
    found: dict[tuple[str, str], t.Any] = {}

    def get_with_context(self: t.Any, name: str, *args: t.Any, **kwargs: t.Any) -> t.Any:
        if args or kwargs:
            return original(self, name, *args, **kwargs)
        key = (self.type, name)
        result = found.get(key)
        if result is None:
            result = found[key] = original(self, name)
        return result

    get_with_context.keeps_found = True  # type: ignore[attr-defined]
    Jinja2Loader.get_with_context = get_with_context  # type: ignore[method-assign]
    return True


def jinja_plugin_names(loader: t.Any) -> list[str]:
    """Jinja's own filters (or tests), by the names templates use (not the operators among the
    tests, such as `==`)."""
    return sorted(name for name in (jinja2.filters.FILTERS if loader.type == "filter" else jinja2.tests.TESTS)
                  if name.isidentifier())


def collection_plugin_names(loader: t.Any, collection: str) -> list[str]:
    """The qualified name of every filter (or test) in the collection's plugin files."""
    try:
        package = importlib.import_module(f"ansible_collections.{collection}.plugins.{loader.type}")
    except ImportError:
        return []
    names = []
    for dummy, module_name, is_package in pkgutil.iter_modules(package.__path__, prefix=package.__name__ + "."):
        if is_package:
            continue
        plugins = getattr(importlib.import_module(module_name), f"{loader.type.title()}Module", None)
        if plugins is not None:
            names += [f"{collection}.{name}" for name in getattr(plugins(), loader.method_map_name)()]
    return sorted(names)


def freeze_heap() -> None:
    """Collect the main process's cyclic garbage, then move what lives into the permanent generation.

    The workers for a task fork right after its start. A garbage collection in a worker walks every
    object it tracks and writes to each header, which copies every page of the inherited heap (the
    kernel's copy-on-write); frozen objects are not walked. Collecting first keeps what the main process
    threw away since the last task from being frozen for the rest of the run.
    """
    gc.collect()
    gc.freeze()


class CompileCache:
    """Compiled templates by key: this process's own, then files that every worker of the run shares."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.codes: dict[str, types.CodeType] = {}

    def get(self, key: str, compile_code: t.Callable[[], types.CodeType]) -> types.CodeType:
        digest = hashlib.sha256(key.encode()).hexdigest()
        code = self.codes.get(digest)
        if code is not None:
            return code
        path = os.path.join(self.directory, digest)
        try:
            with open(path, "rb") as handle:
                code = marshal.load(handle)
        except (OSError, EOFError, ValueError, TypeError):
            code = compile_code()
            # Written under a name of its own, then renamed: a worker reading at the same time
            # finds either the whole file or none.
            partial = f"{path}.{os.getpid()}"
            with open(partial, "wb") as handle:
                marshal.dump(code, handle)
            os.replace(partial, path)
        self.codes[digest] = code
        return code


# Where ansible-core builds a run's module payloads (executor/module_common.py), in the run's temporary directory.
ANSIBALLZ_CACHE = "ansiballz_cache"
SOURCES_SUFFIX = ".sources.json"


def payload_entries(path: str) -> dict[str, bytes] | None:
    """The files in a payload Ansible built (a pickled object whose zip_data is the base64 of a zip), or None."""
    try:
        with open(path, "rb") as handle:
            payload = pickle.load(handle)  # nosec B301: written by ansible-core, in a directory private to this user
        with zipfile.ZipFile(io.BytesIO(base64.b64decode(payload.zip_data))) as archive:
            return {name: archive.read(name) for name in archive.namelist()}
    except Exception:  # pylint: disable=broad-except
        return None


def locate_source(entry: str) -> str | None:
    """The controller file a payload entry is built from: ansible/... in ansible-core, ansible_collections/ns/name/... in the collection."""
    parts = entry.split("/")
    if parts[0] == "ansible":
        return os.path.join(os.path.dirname(os.path.dirname(ansible.__file__)), entry)
    if parts[0] == "ansible_collections" and len(parts) > 3:
        try:
            spec = importlib.util.find_spec(".".join(parts[:3]))
        except (ImportError, ValueError):
            return None
        if spec is not None and spec.submodule_search_locations:
            return os.path.join(list(spec.submodule_search_locations)[0], *parts[3:])
    return None


def file_digest(path: str | None) -> str | None:
    """sha256 of a file, None when there is none."""
    if path is None:
        return None
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None


def memoized_digests() -> t.Callable[[str], str | None]:
    """file_digest that reads each file once: the payloads share most of their module_utils."""
    digests: dict[str, str | None] = {}

    def digest_of(path: str) -> str | None:
        if path not in digests:
            digests[path] = file_digest(path)
        return digests[path]

    return digest_of


def payload_sources(entries: dict[str, bytes], locate: t.Callable[[str], str | None],
                    digest_of: t.Callable[[str], str | None] = file_digest) -> dict[str, list[str | None]] | None:
    """For each payload entry, the file it was built from and that file's sha256 (None: none there),
    or None when the payload was not built from these files.

    Every entry must be its file's bytes, except a package's __init__.py, which Ansible writes itself.
    """
    sources: dict[str, list[str | None]] = {}
    for entry, data in entries.items():
        path = locate(entry)
        package_init = entry.rsplit("/", 1)[-1] == "__init__.py"
        if path is None:
            if not package_init:
                return None
            continue
        digest = digest_of(path)
        if digest != hashlib.sha256(data).hexdigest() and not package_init:
            return None
        sources[entry] = [path, digest]
    return sources


def sources_unchanged(sources: object, locate: t.Callable[[str], str | None],
                      digest_of: t.Callable[[str], str | None]) -> bool:
    """Every entry of a payload still comes from the same file (this run finds the collection and
    ansible-core where that payload's run did: another checkout or install of either has the same
    module names), and every such file has the same sha256 (or is still missing)."""
    if not isinstance(sources, dict):
        return False
    for entry, source in sources.items():
        if not (isinstance(source, list) and len(source) == 2):
            return False
        path, digest = source
        if locate(entry) != path or digest_of(path) != digest:
            return False
    return True


def keep_payloads(run_cache: str, directory: str, restored: set[str],
                  locate: t.Callable[[str], str | None] = locate_source) -> None:
    """Keep the payloads the run built (not those it started with), each with the sha256 of the files it was built from."""
    digest_of = memoized_digests()
    for entry in os.scandir(run_cache):
        if not entry.is_file() or entry.name.endswith((".lock", "-part")) or entry.name in restored:
            continue
        entries = payload_entries(entry.path)
        sources = payload_sources(entries, locate, digest_of) if entries is not None else None
        if sources is None:
            continue
        target = os.path.join(directory, entry.name)
        partial = f"{target}.{os.getpid()}"
        shutil.copyfile(entry.path, partial)
        with open(f"{partial}{SOURCES_SUFFIX}", "w", encoding="utf-8") as handle:
            json.dump(sources, handle)
        # The list first: a payload without one is never used.
        os.replace(f"{partial}{SOURCES_SUFFIX}", f"{target}{SOURCES_SUFFIX}")
        os.replace(partial, target)


def restore_payloads(directory: str, run_cache: str,
                     locate: t.Callable[[str], str | None] = locate_source) -> set[str]:
    """Put the kept payloads whose files are unchanged where Ansible looks for the run's payloads; their names."""
    digest_of = memoized_digests()
    restored = set()
    for entry in os.scandir(directory):
        if not entry.name.endswith(SOURCES_SUFFIX):
            continue
        payload = entry.path[:-len(SOURCES_SUFFIX)]
        try:
            with open(entry.path, encoding="utf-8") as handle:
                sources = json.load(handle)
            if os.path.isfile(payload) and sources_unchanged(sources, locate, digest_of):
                target = os.path.join(run_cache, os.path.basename(payload))
                shutil.copyfile(payload, f"{target}-part")
                os.replace(f"{target}-part", target)
                restored.add(os.path.basename(payload))
        except (OSError, ValueError):
            continue
    return restored


# Compiled code is only valid for the Python, Jinja and ansible-core that produced it.
CODE_VERSIONS = (sys.version, jinja2.__version__, ansible_version)


# One subdirectory of cache_dir per combination of them (and per kind): the unit of removal.
CODE_VERSIONS_DIGEST = hashlib.sha256(repr(CODE_VERSIONS).encode()).hexdigest()[:16]
STALE_SECONDS = 30 * 24 * 3600


def persistent_directory(base: str, kind: str, now: float) -> str | None:
    """base/kind/<versions>, created private when missing; None when base is empty or not private to this user."""
    if not base:
        return None
    root = os.path.join(os.path.expanduser(base), kind)
    try:
        if private_directory(root):
            prune_stale(root, CODE_VERSIONS_DIGEST, now)
            directory = os.path.join(root, CODE_VERSIONS_DIGEST)
            if private_directory(directory):
                return directory
    except OSError:
        pass
    return None


def run_directory(kind: str) -> str:
    """A directory of the run's own temporary directory on the controller (removed when the run ends)."""
    directory = os.path.join(C.DEFAULT_LOCAL_TMP, kind)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    return directory


def private_directory(path: str) -> bool:
    """Create path (mode 0700) if missing; true when it is a real directory of this user that no one else can write."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    info = os.lstat(path)
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o022


def prune_stale(base: str, keep: str, now: float) -> None:
    """Remove the subdirectories of other versions that no run has added code to for STALE_SECONDS."""
    for entry in os.scandir(base):
        if entry.name != keep and entry.is_dir(follow_symlinks=False) \
                and now - entry.stat(follow_symlinks=False).st_mtime > STALE_SECONDS:
            try:
                shutil.rmtree(entry.path)
            except OSError:
                continue  # another run removing it too, or a file of someone else's: left as it is


def compile_key(settings: tuple[object, ...], kind: str, text: str) -> str:
    """The key of one compiled template: everything its Python code depends on, then its text."""
    return repr(CODE_VERSIONS + settings + (kind, text))


def environment_settings(environment: jinja2.Environment, escape_backslashes: object) -> tuple[object, ...]:
    """What of a Jinja environment shapes the code it compiles (the lexer's and the code generator's settings)."""
    return (
        type(environment).__qualname__,
        environment.block_start_string, environment.block_end_string,
        environment.variable_start_string, environment.variable_end_string,
        environment.comment_start_string, environment.comment_end_string,
        environment.line_statement_prefix, environment.line_comment_prefix,
        environment.trim_blocks, environment.lstrip_blocks, environment.newline_sequence,
        environment.keep_trailing_newline, environment.optimized, environment.is_async,
        bool(environment.autoescape), getattr(environment.finalize, "__qualname__", None),
        tuple(sorted(environment.extensions)), escape_backslashes,
    )


def _ansible_environment() -> tuple[type, type] | None:
    """ansible-core's Jinja environment class and its compile context, when both are where the cache expects them."""
    try:
        from ansible._internal._templating import _jinja_bits
    except ImportError:
        return None
    environment = getattr(_jinja_bits, "AnsibleEnvironment", None)
    context = getattr(_jinja_bits, "_TemplateCompileContext", None)
    if environment is None or context is None or not hasattr(environment, "_debuggable_template_source"):
        return None
    return environment, context


def install_compile_cache(environment: type, compile_context: t.Any, cache: CompileCache) -> None:
    """Replace the environment's compile and compile_expression with ones that go through the cache."""
    original_compile = environment.compile
    original_compile_expression = environment.compile_expression
    # compile_expression parses the expression and compiles the parsed tree: the expression's text,
    # noted here, is the key of that tree.
    expression = threading.local()

    def compile_through_cache(self: jinja2.Environment, source: object, name: str | None = None,
                              filename: str | None = None, raw: bool = False,
                              defer_init: bool = False) -> object:
        def compile_code() -> types.CodeType:
            return original_compile(self, source, name, filename, raw, defer_init)

        if isinstance(source, str):
            kind, text = "template", str(source)
        else:
            # The noted text belongs to this one tree only, not to any compiled while it compiles.
            kind, text, expression.text = "expression", getattr(expression, "text", None), None
        if (raw or defer_init or name is not None or filename is not None or text is None
                or self._debuggable_template_source):
            return compile_code()
        context = compile_context.current(optional=True)
        settings = environment_settings(self, context.escape_backslashes if context else None)
        return cache.get(compile_key(settings, kind, text), compile_code)

    def compile_expression_through_cache(self: jinja2.Environment, source: str, *args: object,
                                         **kwargs: object) -> object:
        outer = getattr(expression, "text", None)
        expression.text = str(source)
        try:
            return original_compile_expression(self, source, *args, **kwargs)
        finally:
            expression.text = outer

    environment.compile = compile_through_cache
    environment.compile_expression = compile_expression_through_cache
