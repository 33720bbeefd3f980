"""Locate and edit the NPU patch sites of a GR00T N1.7 checkout.

Each site is found by its function name and the shape of one statement inside it (an
``nccl`` backend test, a ``pin_memory`` entry, a ``get_device_capability()`` unpacking),
never by line numbers or a stored diff, so the same edit lands on checkouts whose
surrounding code moved. The edit is made on the source text at the located node only:
line endings, indentation and every other byte of the file stay as they were.

Each edit is recognised afterwards by its effect (the function already tests ``hccl``,
``pin_memory`` already depends on ``torch.npu``, the capability probe already catches
``TypeError``), so a checkout fixed by hand or upstream reports ``already`` as well.

A site is located in a function, or for a field default (``DataConfig.video_backend``) in a
class body.
"""
from __future__ import annotations

import ast
import difflib
import os
import tempfile
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

NPU_DEVICE = 'torch.device(f"npu:{torch.npu.current_device()}")'
NPU_PRESENT = 'hasattr(torch, "npu")'


class SiteMissing(Exception):
    """The file, function or statement a site needs is not where the upstream commit has it."""


@dataclass(frozen=True)
class Site:
    """One edit: in `function` of `path` (a class, when `field` names the attribute it sets)."""

    name: str
    path: str
    function: str
    summary: str
    apply: Callable[["Source", ast.AST], Optional[List["Edit"]]]
    field: str = ""
    needs_torch: bool = True


@dataclass(frozen=True)
class Edit:
    start: int
    end: int
    text: str


@dataclass
class Source:
    """A file's text with the offsets needed to map ast positions onto it."""

    text: str
    path: str = "<patched>"
    tree: ast.Module = field(init=False)
    line_starts: List[int] = field(init=False)
    newline: str = field(init=False)

    def __post_init__(self) -> None:
        self.tree = ast.parse(self.text, filename=self.path)
        self.line_starts = [0]
        for index, char in enumerate(self.text):
            if char == "\n":
                self.line_starts.append(index + 1)
        self.newline = "\r\n" if "\r\n" in self.text else "\n"

    def offset(self, lineno: int, col: int) -> int:
        """String index of an ast (1-based line, UTF-8 byte column) position."""
        start = self.line_starts[lineno - 1]
        line = self.text[start:self.line_starts[lineno] if lineno < len(self.line_starts) else len(self.text)]
        return start + len(line.encode("utf-8")[:col].decode("utf-8"))

    def span(self, node: ast.AST) -> Tuple[int, int]:
        return (self.offset(node.lineno, node.col_offset), self.offset(node.end_lineno, node.end_col_offset))

    def segment(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.text[start:end]

    def line_start(self, node: ast.AST) -> int:
        return self.line_starts[node.lineno - 1]

    def prefix(self, node: ast.AST) -> str:
        """The text between the start of the node's first line and the node."""
        return self.text[self.line_start(node):self.offset(node.lineno, node.col_offset)]

    def indent(self, node: ast.AST) -> str:
        prefix = self.prefix(node)
        return prefix[:len(prefix) - len(prefix.lstrip())]


# ------------------------------------------------------------------ shape helpers


def find_function(tree: ast.AST, name: str) -> Optional[ast.AST]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node
    return None


def find_class(tree: ast.AST, name: str) -> Optional[ast.ClassDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    return None


def compares_with(node: ast.AST, value: str) -> Optional[ast.Constant]:
    """The string constant `value` that `node` (or an operand inside it) is compared to.

    Matches ``x == "nccl"``, ``"nccl" == x`` and ``x in ("nccl", ...)``.
    """
    for sub in ast.walk(node):
        if not (isinstance(sub, ast.Compare) and len(sub.ops) == 1):
            continue
        if isinstance(sub.ops[0], ast.Eq):
            candidates = [sub.left, sub.comparators[0]]
        elif isinstance(sub.ops[0], ast.In) and isinstance(sub.comparators[0], (ast.Tuple, ast.List, ast.Set)):
            candidates = list(sub.comparators[0].elts)
        else:
            continue
        for side in candidates:
            if isinstance(side, ast.Constant) and side.value == value:
                return side
    return None


def tests_backend(function: ast.AST, backend: str) -> bool:
    return any(compares_with(node.test, backend) for node in ast.walk(function)
               if isinstance(node, (ast.If, ast.IfExp)))


def swapped_test(source: Source, test: ast.AST, constant: ast.Constant, backend: str) -> str:
    """The source of `test` with the compared backend name replaced by `backend`."""
    start, end = source.span(test)
    const_start, const_end = source.span(constant)
    quote = source.text[const_start]
    return (source.text[start:const_start] + quote + backend + quote + source.text[const_end:end])


def module_binds(tree: ast.Module, name: str) -> bool:
    """Whether a top-level import binds `name` (``import torch``, ``import torch.nn``, not ``as``)."""
    return any(isinstance(node, ast.Import) and any((alias.asname or alias.name.split(".")[0]) == name
                                                    for alias in node.names)
               for node in tree.body)


def first_backend_test(function: ast.AST, backend: str) -> Optional[ast.AST]:
    """The first if statement or conditional expression (in source order) testing `backend`."""
    found = [node for node in ast.walk(function)
             if isinstance(node, (ast.If, ast.IfExp)) and compares_with(node.test, backend)]
    return min(found, key=lambda n: (n.lineno, n.col_offset)) if found else None


# ------------------------------------------------------------------ site edits


def hccl_device_branch(source: Source, function: ast.AST) -> Optional[List[Edit]]:
    """Sites 1 and 3: an hccl branch returning the current NPU, placed before the nccl one.

    The branch reuses the nccl test with the backend name swapped, so it needs exactly
    the names the nccl test already uses; the nccl and every later branch stay untouched.
    """
    if tests_backend(function, "hccl"):
        return None
    node = first_backend_test(function, "nccl")
    if node is None:
        raise SiteMissing('no branch tests the backend against "nccl"')
    if isinstance(node, ast.IfExp):
        return hccl_ifexp(source, node)
    if not isinstance(node.body[-1], ast.Return):
        raise SiteMissing("its nccl branch does not return a device")
    indent = source.indent(node)
    inner = source.indent(node.body[0]) if node.body[0].lineno > node.lineno else indent + "    "
    nl = source.newline
    constant = compares_with(node.test, "nccl")
    text = ("if " + swapped_test(source, node.test, constant, "hccl") + ":" + nl
            + inner + "return " + NPU_DEVICE + nl + indent)
    start = source.offset(node.lineno, node.col_offset)
    return [Edit(start, start, text)]


def hccl_ifexp(source: Source, node: ast.IfExp) -> List[Edit]:
    """`A if <nccl> else B` becomes `A if <nccl> else NPU if <hccl> else B`."""
    test = swapped_test(source, node.test, compares_with(node.test, "nccl"), "hccl")
    start, end = source.span(node.orelse)
    if node.lineno == node.end_lineno:
        text = "{0} if {1} else {2}".format(NPU_DEVICE, test, source.segment(node.orelse))
    else:
        # A conditional split over lines inside parentheses: one clause per line, as upstream writes it.
        text = "{0}{nl}{i}if {1}{nl}{i}else {2}".format(NPU_DEVICE, test, source.segment(node.orelse),
                                                        nl=source.newline, i=source.indent(node.orelse))
    return [Edit(start, end, text)]


def hccl_like_nccl(source: Source, function: ast.AST) -> Optional[List[Edit]]:
    """Site 2: the device conditional gains an hccl clause with the NPU device."""
    if tests_backend(function, "hccl"):
        return None
    node = first_backend_test(function, "nccl")
    if not isinstance(node, ast.IfExp):
        raise SiteMissing('no "<cuda device> if backend == \'nccl\' else <cpu device>" conditional')
    return hccl_ifexp(source, node)


def is_npu_guard(node: ast.AST) -> bool:
    return (isinstance(node, ast.IfExp) and isinstance(node.test, ast.Call)
            and isinstance(node.test.func, ast.Name) and node.test.func.id == "hasattr"
            and len(node.test.args) == 2 and isinstance(node.test.args[1], ast.Constant)
            and node.test.args[1].value == "npu")


def pin_memory_off_on_npu(source: Source, function: ast.AST) -> Optional[List[Edit]]:
    """Site 4: pin_memory becomes False when torch has the NPU backend, as before otherwise."""
    values = []
    for node in ast.walk(function):
        if isinstance(node, ast.Dict):
            values += [v for k, v in zip(node.keys, node.values)
                       if isinstance(k, ast.Constant) and k.value == "pin_memory"]
        elif isinstance(node, ast.Call):
            values += [kw.value for kw in node.keywords if kw.arg == "pin_memory"]
    if not values:
        raise SiteMissing('no "pin_memory" entry for the DataLoader')
    edits = []
    for value in values:
        if is_npu_guard(value) or (isinstance(value, ast.Constant) and value.value is False):
            continue
        start, end = source.span(value)
        edits.append(Edit(start, end, "False if {0} else {1}".format(NPU_PRESENT, source.segment(value))))
    return edits or None


def catches(handler: ast.ExceptHandler, name: str) -> bool:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(kind, ast.Name) and kind.id == name for kind in kinds)


def capability_probe_tolerant(source: Source, function: ast.AST) -> Optional[List[Edit]]:
    """Site 5: the capability query returns False instead of raising where the API is missing."""
    for node in ast.walk(function):
        if isinstance(node, ast.Try) and any(catches(h, "TypeError") for h in node.handlers):
            return None
    body = getattr(function, "body", [])
    for statement in body:
        if (isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call)
                and isinstance(statement.value.func, ast.Attribute)
                and statement.value.func.attr == "get_device_capability"):
            indent = source.indent(statement)
            unit = source.indent(body[0])[len(source.indent(function)):] or "    "
            nl = source.newline
            lines = []
            if not module_binds(source.tree, "warnings"):
                lines += ["import warnings", ""]
            lines += ["try:",
                      unit + "with warnings.catch_warnings():",
                      unit * 2 + 'warnings.simplefilter("ignore")',
                      unit * 2 + source.segment(statement),
                      "except (TypeError, RuntimeError):",
                      unit + "return False"]
            start = source.line_start(statement)
            end = source.offset(statement.end_lineno, statement.end_col_offset)
            text = nl.join((indent + line) if line else "" for line in lines)
            return [Edit(start, end, text)]
    raise SiteMissing("no top-level `major, minor = ...get_device_capability()` statement")


def keyword_constant(keyword: str, value: object) -> Callable[[Source, ast.AST], Optional[List[Edit]]]:
    """Optional sites: one call keyword of the function set to a constant."""

    def apply(source: Source, function: ast.AST) -> Optional[List[Edit]]:
        for node in ast.walk(function):
            if isinstance(node, ast.Call):
                for kw in node.keywords:
                    if kw.arg == keyword:
                        if isinstance(kw.value, ast.Constant) and kw.value.value == value:
                            return None
                        start, end = source.span(kw.value)
                        return [Edit(start, end, repr(value) if not isinstance(value, str) else '"%s"' % value)]
        raise SiteMissing("no call passing {0}=".format(keyword))

    return apply


def field_default(field_name: str, value: str) -> Callable[[Source, ast.AST], Optional[List[Edit]]]:
    """Optional sites: the string default of a class-level field (``name: str = "..."``).

    Only the constant changes, in the quotes upstream wrote it with; the annotation stays.
    """

    def apply(source: Source, cls: ast.AST) -> Optional[List[Edit]]:
        for node in getattr(cls, "body", []):
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == field_name:
                if not (isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
                    raise SiteMissing("the field {0} has no string default".format(field_name))
                if node.value.value == value:
                    return None
                start, end = source.span(node.value)
                quote = source.text[start] if source.text[start] in "'\"" else '"'
                return [Edit(start, end, quote + value + quote)]
        raise SiteMissing("no field {0} in its body".format(field_name))

    return apply


# GR00T's training loader decodes with DataConfig.video_backend; launch_finetune.py has no flag
# for it, so the backend is the field's default.
VIDEO_BACKEND_FILE = "gr00t/configs/data/data_config.py"


def video_backend_site(backend: str) -> Site:
    """The optional site that makes `backend` DataConfig's default video backend."""
    return Site("video_backend", VIDEO_BACKEND_FILE, "DataConfig",
                'DataConfig.video_backend defaults to "{0}"'.format(backend),
                field_default("video_backend", backend), field="video_backend", needs_torch=False)


REQUIRED_SITES: Tuple[Site, ...] = (
    Site("collective_device", "gr00t/experiment/dist_utils.py", "_collective_device",
         "hccl returns the current NPU device", hccl_device_branch),
    Site("save_decision_device", "gr00t/experiment/utils.py", "_broadcast_save_decision",
         "hccl broadcasts on the current NPU device like nccl on CUDA", hccl_like_nccl),
    Site("pg_tensor_device", "gr00t/data/dataset/sharded_mixture_dataset.py", "_get_default_pg_tensor_device",
         "hccl returns the current NPU device", hccl_device_branch),
    Site("dataloader_pin_memory", "gr00t/experiment/trainer.py", "get_train_dataloader",
         "pin_memory is False on the NPU", pin_memory_off_on_npu),
    Site("capability_probe", "gr00t/model/modules/dit.py", "_is_spark_sm121",
         "a failing get_device_capability() means no sm121 instead of an error", capability_probe_tolerant),
)

OPTIONAL_SITES: Dict[str, Site] = {
    "tf32_off": Site("tf32_off", "gr00t/experiment/experiment.py", "run",
                     "TrainingArguments(tf32=False)", keyword_constant("tf32", False)),
    "spawn_workers": Site("spawn_workers", "gr00t/experiment/experiment.py", "run",
                          'DataLoader workers start with "spawn"',
                          keyword_constant("multiprocessing_context", "spawn")),
}

REQUIRED_NAMES = tuple(site.name for site in REQUIRED_SITES)


def select_sites(names: List[str], optional: Dict[str, bool], video_backend: str = "") -> List[Site]:
    """The required sites named, the optional ones wanted, and the video backend site when a
    backend is given (empty: data_config.py stays as upstream has it)."""
    unknown = [n for n in names if n not in REQUIRED_NAMES]
    if unknown:
        raise ValueError("unknown site(s) {0}; known: {1}".format(", ".join(unknown), ", ".join(REQUIRED_NAMES)))
    chosen = [site for site in REQUIRED_SITES if site.name in names]
    chosen += [OPTIONAL_SITES[key] for key, wanted in sorted(optional.items()) if wanted]
    return chosen + ([video_backend_site(video_backend)] if video_backend else [])


# ------------------------------------------------------------------ applying


def apply_edits(text: str, edits: List[Edit]) -> str:
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[:edit.start] + edit.text + text[edit.end:]
    return text


def patch_text(text: str, path: str, sites: List[Site]) -> Tuple[str, Dict[str, dict]]:
    """Apply `sites` (all in file `path`) to `text`, one at a time, re-parsing after each.

    Returns the new text and a status per site: patched, already, or missing with a reason.
    Raises SyntaxError when the file does not parse, before or after an edit.
    """
    statuses: Dict[str, dict] = {}
    for site in sites:
        source = Source(text, path)
        scope = find_class(source.tree, site.function) if site.field else find_function(source.tree, site.function)
        status = site_status(site)
        try:
            if scope is None:
                raise SiteMissing(("class {0} not found" if site.field else "function {0}() not found").format(
                    site.function))
            if site.needs_torch and not module_binds(source.tree, "torch"):
                raise SiteMissing("the module does not import torch")
            edits = site.apply(source, scope)
        except SiteMissing as missing:
            status.update(status="missing", reason=str(missing))
        else:
            if edits:
                text = apply_edits(text, edits)
                compile(text, path, "exec", dont_inherit=True)
            status["status"] = "patched" if edits else "already"
        statuses[site.name] = status
    return text, statuses


def site_status(site: Site) -> dict:
    """A site's report entry before its status: file, function (the class, with `field`) and change."""
    status = {"file": site.path, "function": site.function, "change": site.summary}
    if site.field:
        status["field"] = site.field
    return status


def unified_diff(before: str, after: str, path: str) -> str:
    """A git-apply-able diff of one file (a/ b/ prefixes, CRLF lines kept as they are)."""
    diff = difflib.unified_diff(split_lines(before), split_lines(after), "a/" + path, "b/" + path)
    out = []
    for line in diff:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def split_lines(text: str) -> List[str]:
    lines = text.split("\n")
    result = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        result.append(lines[-1])
    return result


# ------------------------------------------------------------------ checkout level


@dataclass
class FilePlan:
    path: str
    before: str
    after: str
    statuses: Dict[str, dict]

    @property
    def changed(self) -> bool:
        return self.before != self.after


def read_text(path: str) -> str:
    """File text with line endings exactly as stored."""
    with open(path, "rb") as handle:
        return handle.read().decode("utf-8")


def plan_checkout(src: str, sites: List[Site]) -> List[FilePlan]:
    """What patching `src` would do, file by file; reads only."""
    by_file: Dict[str, List[Site]] = {}
    for site in sites:
        by_file.setdefault(site.path, []).append(site)
    plans = []
    for path, file_sites in by_file.items():
        full = os.path.join(src, path)
        if not os.path.isfile(full):
            statuses = {site.name: dict(site_status(site), status="missing", reason="file not found")
                        for site in file_sites}
            plans.append(FilePlan(path, "", "", statuses))
            continue
        before = read_text(full)
        after, statuses = patch_text(before, path, file_sites)
        plans.append(FilePlan(path, before, after, statuses))
    return plans


def missing_message(plans: List[FilePlan], src: str, expected_commit: str) -> Optional[str]:
    problems = ["{0}: {1} - {2}".format(os.path.join(src, status["file"]), status_where(status), status["reason"])
                for plan in plans for status in plan.statuses.values() if status["status"] == "missing"]
    if not problems:
        return None
    return ("GR00T NPU patch: {0} site(s) not found where the upstream commit {1} has them: {2}. "
            "The checkout is not the expected GR00T N1.7 revision (check gr00t_version) or upstream moved the "
            "code; nothing was changed.").format(len(problems), expected_commit or "(not given)", "; ".join(problems))


def status_where(status: dict) -> str:
    """A report entry's place as messages name it: ``function()`` or ``Class.field``."""
    return "{0}.{1}".format(status["function"], status["field"]) if status.get("field") else status["function"] + "()"


def pristine_text(plan: FilePlan, stored: Optional[str], from_git: Callable[[str], Optional[str]]) -> Optional[str]:
    """The unpatched text of a planned file, for the combined patch.

    A file patched now from a state without any of our edits is its own pristine copy;
    otherwise the copy kept when it was patched, else the committed version.
    """
    statuses = [s["status"] for s in plan.statuses.values()]
    if "patched" in statuses and "already" not in statuses:
        return plan.before
    if stored is not None:
        return stored
    return from_git(plan.path)


def atomic_write(path: str, text: str, like: Optional[str] = None) -> None:
    """Write `text` to `path` through a temporary file in the same directory and a rename.

    Mode and owner are taken from `like` (or the existing file), so a checkout patched as
    root keeps belonging to its user.
    """
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    reference = like if like and os.path.exists(like) else (path if os.path.exists(path) else None)
    fd, tmp = tempfile.mkstemp(prefix=".gr00t-patch-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
        if reference:
            stat = os.stat(reference)
            os.chmod(tmp, stat.st_mode & 0o7777)
            if os.geteuid() == 0:
                os.chown(tmp, stat.st_uid, stat.st_gid)
        else:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def revert_plan(src: str, sites: List[Site], pristine_dir: str) -> Tuple[List[Tuple[str, str]], List[str]]:
    """Files whose text is exactly our edit of their kept unpatched copy, with that copy.

    Returns (path, unpatched text) pairs to restore and the paths left alone because they
    also hold other changes. Files without a kept copy are not ours to restore.
    """
    by_file: Dict[str, List[Site]] = {}
    for site in sites:
        by_file.setdefault(site.path, []).append(site)
    restore, kept = [], []
    for path, file_sites in sorted(by_file.items()):
        full, stored = os.path.join(src, path), os.path.join(pristine_dir, path)
        if not (os.path.isfile(full) and os.path.isfile(stored)):
            continue
        current, pristine = read_text(full), read_text(stored)
        if current == pristine:
            continue
        if patch_text(pristine, path, file_sites)[0] == current:
            restore.append((path, pristine))
        else:
            kept.append(path)
    return restore, kept
