"""Rebuild an mx_driving wheel whose patcher lacks the new API, without importing anything.

mx_driving (Ascend DrivingSDK) moved its `mx_driving.patcher` package from the old
`PatcherBuilder` API to a fluent `Patcher` with `TransformersNPU` and `DiffusersNPU`
patches, keeping the old names in `legacy.py`. An old wheel's compiled `_C` extension is
still good; only the patcher package has to be replaced, whole, from one source, with an
`__init__.py` that keeps every name the old one exported.

Importing mx_driving needs torch_npu and an NPU, so the API is detected from the source
text (ast), never by importing. Pure functions over `{archive name: bytes}` mappings.
"""
from __future__ import annotations

import ast
import hashlib
import os
import tarfile
from typing import Dict, List, Optional, Set, Tuple

from ansible_collections.ascendops.gr00t.plugins.module_utils.wheel_archive import (
    Files,
    WheelError,
    dist_info_dir,
    header_values,
    is_valid_version,
    pack,
    parse_wheel_filename,
    read_zip,
    record_problems,
    rename_dist_info,
    replace_header,
    wheel_tags,
)

PACKAGE = "mx_driving/patcher/"
# The new framework: a source without all of these is partial, and mixing its files
# with an old package is exactly what broke the hand-made port.
FRAMEWORK_FILES = (
    "patch.py", "patcher.py", "version.py", "reporting.py", "patcher_logger.py", "legacy.py",
    "transformers_patch.py", "diffusers_patch.py",
)
# Class -> the module of the new package that defines it.
NEW_API_CLASSES = {"Patcher": "patcher.py", "TransformersNPU": "transformers_patch.py",
                   "DiffusersNPU": "diffusers_patch.py"}
BRIDGE_MARKER = "# --- ascendops.gr00t bridge"
_SKIP_PARTS = ("__pycache__",)
_SKIP_SUFFIXES = (".pyc", ".pyo")


# ---------------------------------------------------------------- reading sources


def parse(source: bytes, what: str) -> ast.Module:
    try:
        return ast.parse(source.decode("utf-8"), filename=what)
    except (SyntaxError, UnicodeDecodeError, ValueError) as err:
        raise WheelError("{0} is not readable Python source: {1}".format(what, err))


def _top_statements(body: List[ast.stmt]) -> List[ast.stmt]:
    """Module-level statements, including those inside top-level if/try blocks."""
    found = []
    for node in body:
        found.append(node)
        if isinstance(node, ast.If):
            found += _top_statements(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            found += _top_statements(node.body + node.orelse + node.finalbody)
            for handler in node.handlers:
                found += _top_statements(handler.body)
    return found


def _assigned(target: ast.expr) -> List[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in _assigned(elt)]
    return []


def bound_names(tree: ast.Module, with_module_imports: bool = True) -> Set[str]:
    """Names a module binds at top level: classes, functions, assignments, imports."""
    names = set()
    for node in _top_statements(tree.body):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(n for target in node.targets for n in _assigned(target))
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            names.update(_assigned(node.target))
        elif isinstance(node, ast.ImportFrom) and node.module not in ("__future__", "typing"):
            names.update(alias.asname or alias.name for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Import) and with_module_imports:
            names.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
    return names


def declared_all(tree: ast.Module) -> Optional[List[str]]:
    """The literal `__all__` of a module, or None when it has none."""
    for node in _top_statements(tree.body):
        if isinstance(node, ast.Assign) and "__all__" in [n for t in node.targets for n in _assigned(t)]:
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                return None
            return [str(v) for v in value]
    return None


def class_methods(tree: ast.Module, name: str) -> Optional[Set[str]]:
    """Method names of top-level class `name`, or None when the module does not define it."""
    for node in _top_statements(tree.body):
        if isinstance(node, ast.ClassDef) and node.name == name:
            return {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return None


def old_exports(init: bytes) -> List[str]:
    """The names an `mx_driving.patcher` `__init__.py` really exports.

    Its `__all__` when it has one (names listed there but never bound never worked, so
    there is nothing to keep), otherwise every public name it binds except plain module
    imports.
    """
    tree = parse(init, PACKAGE + "__init__.py")
    bound = bound_names(tree, with_module_imports=False)
    listed = declared_all(tree)
    names = listed if listed is not None else sorted(bound)
    return [n for n in dict.fromkeys(names) if n in bound and not n.startswith("_")]


def package_of(files: Files) -> Files:
    """The files of `mx_driving/patcher/`, keyed by their name inside the package."""
    return {n[len(PACKAGE):]: d for n, d in files.items() if n.startswith(PACKAGE)}


def new_api_problems(package: Files) -> List[str]:
    """Why a patcher package is not the new API; empty when it is."""
    problems = []
    if "legacy.py" not in package:
        problems.append("no legacy.py")
    for cls, module in sorted(NEW_API_CLASSES.items()):
        if module not in package:
            problems.append("no {0}".format(module))
            continue
        methods = class_methods(parse(package[module], PACKAGE + module), cls)
        if methods is None:
            problems.append("{0} defines no class {1}".format(module, cls))
        elif cls == "Patcher" and not {"add", "apply"} <= methods:
            problems.append("patcher.py's Patcher has no add/apply (the old PatcherBuilder API)")
    if "__init__.py" not in package:
        problems.append("no __init__.py")
    else:
        exported = bound_names(parse(package["__init__.py"], PACKAGE + "__init__.py"))
        missing = [c for c in sorted(NEW_API_CLASSES) if c not in exported]
        if missing:
            problems.append("__init__.py does not export {0}".format(", ".join(missing)))
    return problems


def detect_api(files: Files) -> str:
    """`new` when the wheel's patcher has Patcher, TransformersNPU, DiffusersNPU and legacy.py, else `old`."""
    return "old" if new_api_problems(package_of(files)) else "new"


# ---------------------------------------------------------------- patcher source


def _keep(relative: str) -> bool:
    parts = relative.split("/")
    return not any(p in _SKIP_PARTS for p in parts) and not relative.endswith(_SKIP_SUFFIXES)


def patcher_from_tree(root: str) -> Files:
    top = os.path.join(root, "mx_driving", "patcher")
    if not os.path.isdir(top):
        raise WheelError("patcher_src {0} has no mx_driving/patcher/ directory: give a DrivingSDK source tree, "
                         "a tarball of one, or a donor mx_driving wheel".format(root))
    files = {}
    for directory, subdirs, names in os.walk(top):
        subdirs[:] = sorted(d for d in subdirs if d not in _SKIP_PARTS)
        for name in sorted(names):
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, top).replace(os.sep, "/")
            if os.path.isfile(path) and _keep(relative):
                with open(path, "rb") as handle:
                    files[relative] = handle.read()
    return files


def patcher_from_tar(path: str) -> Files:
    """The shallowest `.../mx_driving/patcher/` package in a tarball of a source tree."""
    try:
        with tarfile.open(path) as archive:
            members = [m for m in archive.getmembers() if m.isfile()]
            prefixes = sorted({m.name[:m.name.index(PACKAGE) + len(PACKAGE)] for m in members
                               if PACKAGE in m.name and m.name.endswith(PACKAGE + "__init__.py")},
                              key=lambda p: (p.count("/"), p))
            if not prefixes:
                raise WheelError("patcher_src {0} holds no mx_driving/patcher/__init__.py".format(path))
            if len(prefixes) > 1 and prefixes[0].count("/") == prefixes[1].count("/"):
                raise WheelError("patcher_src {0} holds more than one mx_driving/patcher/ ({1}); give a tarball "
                                 "of one source tree".format(path, ", ".join(prefixes)))
            files = {}
            for member in sorted(members, key=lambda m: m.name):
                relative = member.name[len(prefixes[0]):]
                if member.name.startswith(prefixes[0]) and _keep(relative):
                    handle = archive.extractfile(member)
                    files[relative] = handle.read() if handle else b""
            return files
    except (tarfile.TarError, EOFError, OSError) as err:
        raise WheelError("patcher_src {0} is not a readable tar archive ({1})".format(path, err))


def load_patcher_source(path: str) -> Tuple[Files, str]:
    """The patcher package from a source tree, a tarball of one or a donor wheel, and a description."""
    if os.path.isdir(path):
        return patcher_from_tree(path), "source tree {0}".format(path)
    if not os.path.isfile(path):
        raise WheelError("patcher_src {0} does not exist".format(path))
    if path.endswith(".whl"):
        with open(path, "rb") as handle:
            donor = read_zip(handle.read(), "patcher_src " + path)
        info = parse_wheel_filename(os.path.basename(path))
        return package_of(donor), "donor wheel {0} ({1})".format(os.path.basename(path), info["version"])
    if tarfile.is_tarfile(path):
        return patcher_from_tar(path), "source tarball {0}".format(os.path.basename(path))
    raise WheelError("patcher_src {0} is neither a directory, a .whl nor a tar archive".format(path))


def source_problems(package: Files) -> List[str]:
    missing = [f for f in FRAMEWORK_FILES + ("__init__.py",) if f not in package]
    if missing:
        return ["it lacks {0} of mx_driving/patcher/: a partial source, or a DrivingSDK revision older than "
                "the TransformersNPU/DiffusersNPU patcher; use one complete source that has them, such as a "
                "new-API mx_driving wheel (26.1 or later)".format(", ".join(missing))]
    return new_api_problems(package)


def package_digest(package: Files) -> str:
    digest = hashlib.sha256()
    for name in sorted(package):
        digest.update(name.encode("utf-8") + b"\0" + hashlib.sha256(package[name]).digest())
    return digest.hexdigest()


# ---------------------------------------------------------------- bridge


def bridge_imports(exports: List[str], package: Files) -> Tuple[Dict[str, str], List[str]]:
    """Which module of the new package provides each name its `__init__.py` does not bind.

    `legacy.py` first (it holds the old API), then the module of a new-API class, then any
    other module. Returns {name: module} and the names no module defines.
    """
    init_names = bound_names(parse(package["__init__.py"], PACKAGE + "__init__.py"))
    modules = ["legacy.py"] + sorted(set(NEW_API_CLASSES.values())) + sorted(
        n for n in package if n.endswith(".py") and "/" not in n and n != "__init__.py"
        and n != "legacy.py" and n not in NEW_API_CLASSES.values())
    defined = {m: bound_names(parse(package[m], PACKAGE + m), with_module_imports=False) for m in modules}
    imports, unresolved = {}, []
    for name in dict.fromkeys(sorted(NEW_API_CLASSES) + exports):
        if name in init_names:
            continue
        provider = next((m for m in modules if name in defined[m]), None)
        if provider:
            imports[name] = provider[:-3]
        else:
            unresolved.append(name)
    return imports, unresolved


def bridged_init(package: Files, exports: List[str], base_version: str, source: str) -> Tuple[bytes, List[str]]:
    """The source's `__init__.py` with a block that re-exports every old and new name it lacks."""
    imports, unresolved = bridge_imports(exports, package)
    text = package["__init__.py"].decode("utf-8").rstrip("\n") + "\n"
    lines = [
        "",
        "",
        BRIDGE_MARKER + " (mx_driving_wheel) " + "-" * 40,
        "# Rebuilt from mx_driving {0} with the patcher package of {1}.".format(base_version, source),
        "# Every name the old mx_driving.patcher exported resolves here, the old API through legacy.py.",
    ]
    if unresolved:
        lines.append("# Not defined by the new package, so no longer exported: {0}".format(", ".join(unresolved)))
    for module in sorted(set(imports.values())):
        names = sorted(n for n, m in imports.items() if m == module)
        lines.append("from mx_driving.patcher.{0} import {1}  # noqa: E402,F401".format(module, ", ".join(names)))
    declared = declared_all(parse(package["__init__.py"], PACKAGE + "__init__.py"))
    added = [n for n in dict.fromkeys(list(imports) + [n for n in exports if n not in unresolved])
             if declared is not None and n not in declared]
    if added:
        lines.append("__all__ = list(__all__) + {0!r}".format(sorted(added)))
    return (text + "\n".join(lines) + "\n").encode("utf-8"), unresolved


# ---------------------------------------------------------------- rebuild


class BaseWheel:
    """A parsed base wheel: its files, dist-info, name, version, tags and `_C` extensions."""

    def __init__(self, filename: str, data: bytes) -> None:
        self.filename = filename
        self.info = parse_wheel_filename(filename)
        self.files = read_zip(data, filename)
        self.dist_info = dist_info_dir(self.files, filename)
        self.version = header_values(self.files[self.dist_info + "/METADATA"].decode("utf-8"), "Version")[0] \
            if self.dist_info + "/METADATA" in self.files else self.info["version"]
        self.tags = wheel_tags(self.files, self.dist_info)
        self.extensions = {n: d for n, d in self.files.items() if _is_extension(n)}
        if not self.extensions:
            raise WheelError("{0} has no mx_driving/_C*.so: not a built mx_driving wheel (its compiled operators "
                             "are what a rebuild must keep)".format(filename))
        if self.version != self.info["version"]:
            raise WheelError("{0}: METADATA says version {1}, the file name {2}".format(
                filename, self.version, self.info["version"]))


def _is_extension(name: str) -> bool:
    return name.startswith("mx_driving/_C") and name.endswith(".so") and name.count("/") == 1


def output_version(base_version: str, local_version: str) -> str:
    """`<base>.<local>`, or `<base><local>` when local_version starts with `+` (e.g. `+ascend.1`)."""
    version = base_version + local_version if local_version.startswith("+") else base_version + "." + local_version
    if not is_valid_version(version):
        raise WheelError("local_version {0!r} on mx_driving {1} gives {2!r}, not a PEP 440 version; set local_version "
                         "to a local label such as +ascend.1".format(local_version, base_version, version))
    return version


def output_filename(base: BaseWheel, version: str) -> str:
    return "{0}-{1}-{2}.whl".format(base.info["name"], version, base.info["tag"])


def rebuild(base: BaseWheel, package: Files, source: str, version: str, epoch: int) -> Tuple[bytes, List[str]]:
    """The base wheel with its whole patcher package replaced; bytes and the old names left out."""
    exports = old_exports(base.files[PACKAGE + "__init__.py"]) if PACKAGE + "__init__.py" in base.files else []
    init, unresolved = bridged_init(package, exports, base.version, source)
    files = {n: d for n, d in base.files.items() if not n.startswith(PACKAGE)}
    for name, data in package.items():
        files[PACKAGE + name] = init if name == "__init__.py" else data
    name_part = base.dist_info[:-len(".dist-info")].rsplit("-", 1)[0]
    dist_info = "{0}-{1}.dist-info".format(name_part, version)
    files = rename_dist_info(files, base.dist_info, dist_info)
    metadata = dist_info + "/METADATA"
    files[metadata] = replace_header(files[metadata].decode("utf-8"), "Version", version).encode("utf-8")
    wheel = files[dist_info + "/WHEEL"].decode("utf-8")
    wheel = replace_header(wheel, "Root-Is-Purelib", "false")
    files[dist_info + "/WHEEL"] = replace_header(wheel, "Generator", "ascendops.gr00t mx_driving_wheel").encode("utf-8")
    return pack(files, dist_info, epoch), unresolved


def output_problems(data: bytes, base: BaseWheel, version: str) -> List[str]:
    """Everything wrong with a rebuilt wheel, checked from its bytes against the base."""
    files = read_zip(data, "the rebuilt wheel")
    try:
        dist_info = dist_info_dir(files, "the rebuilt wheel")
    except WheelError as err:
        return [str(err)]
    problems = record_problems(files, dist_info + "/RECORD")
    for name, blob in sorted(base.extensions.items()):
        if files.get(name) != blob:
            problems.append("{0} differs from the base wheel's".format(name))
    extra = sorted(n for n in files if _is_extension(n) and n not in base.extensions)
    problems += ["{0} was not in the base wheel".format(n) for n in extra]
    for name, blob in base.files.items():
        if name.startswith((PACKAGE, base.dist_info + "/")) or name in base.extensions:
            continue
        if files.get(name) != blob:
            problems.append("{0} differs from the base wheel's".format(name))
    if wheel_tags(files, dist_info) != base.tags:
        problems.append("WHEEL tags {0} differ from the base's {1}".format(wheel_tags(files, dist_info), base.tags))
    wheel = files[dist_info + "/WHEEL"].decode("utf-8")
    if header_values(wheel, "Root-Is-Purelib") != ["false"]:
        problems.append("WHEEL does not say Root-Is-Purelib: false")
    if header_values(files[dist_info + "/METADATA"].decode("utf-8"), "Version") != [version]:
        problems.append("METADATA does not say Version: {0}".format(version))
    problems += ["the patcher has {0}".format(p) for p in new_api_problems(package_of(files))]
    return problems
