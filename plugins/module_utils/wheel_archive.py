"""Read, rewrite and pack wheels (PEP 427) without pip or the `wheel` package.

Pure functions over bytes, so unit tests build small wheels in memory. A wheel is handled
as an ordered mapping of archive names to contents; packing is deterministic: entries in a
fixed order, one timestamp (SOURCE_DATE_EPOCH), fixed permissions, fixed compression.
Runs on the node's python (3.8 and later).
"""
from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import re
import time
import zipfile
import zlib
from typing import Dict, List, Optional, Tuple

# 1980-01-01T00:00:00Z, the earliest time a zip entry can hold: the default when no
# SOURCE_DATE_EPOCH is given, so a rebuild never depends on the clock.
DEFAULT_SOURCE_DATE_EPOCH = 315532800
FILE_MODE = 0o100644
COMPRESS_LEVEL = 6

# name-version(-build)?-python-abi-platform.whl
_WHEEL_NAME = re.compile(
    r"^(?P<name>[A-Za-z0-9_.]+)-(?P<version>[^-]+)(?:-(?P<build>\d[^-]*))?"
    r"-(?P<tag>[^-]+-[^-]+-[^-]+)\.whl$"
)
# PEP 440 public version with an optional local segment (canonical forms only).
_PEP440 = re.compile(
    r"^([1-9][0-9]*!)?(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))*((a|b|rc)(0|[1-9][0-9]*))?"
    r"(\.post(0|[1-9][0-9]*))?(\.dev(0|[1-9][0-9]*))?(\+[a-z0-9]+(\.[a-z0-9]+)*)?$"
)

Files = Dict[str, bytes]


class WheelError(Exception):
    """A wheel or an input to it is unusable; the message says what and why."""


def parse_wheel_filename(filename: str) -> Dict[str, str]:
    match = _WHEEL_NAME.match(filename)
    if not match:
        raise WheelError("{0} is not a wheel file name (want name-version-python-abi-platform.whl)".format(filename))
    return {k: v or "" for k, v in match.groupdict().items()}


def is_valid_version(version: str) -> bool:
    return bool(_PEP440.match(version))


def read_zip(data: bytes, what: str) -> Files:
    """All file entries of a zip archive, in archive order, CRC-checked."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            files = {}
            for info in archive.infolist():
                if not info.is_dir():
                    files[info.filename] = archive.read(info)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as err:
        raise WheelError("{0} is not a readable zip archive ({1}): the file is corrupt or truncated".format(what, err))
    if not files:
        raise WheelError("{0} is an empty archive".format(what))
    return files


def dist_info_dir(files: Files, what: str) -> str:
    """The one top-level `<name>-<version>.dist-info` directory that holds WHEEL."""
    found = sorted({n.split("/", 1)[0] for n in files if re.match(r"^[^/]+\.dist-info/WHEEL$", n)})
    if len(found) != 1:
        raise WheelError("{0} has {1} .dist-info directories with a WHEEL file, a wheel has exactly one".format(
            what, len(found) or "no"))
    return found[0]


def parse_headers(text: str) -> List[Tuple[str, str]]:
    """`Key: value` lines of a WHEEL file or a METADATA header, in order, repeats kept."""
    headers = []
    for line in text.splitlines():
        if not line.strip():
            break
        key, sep, value = line.partition(":")
        if sep:
            headers.append((key.strip(), value.strip()))
    return headers


def header_values(text: str, key: str) -> List[str]:
    return [v for k, v in parse_headers(text) if k.lower() == key.lower()]


def replace_header(text: str, key: str, value: str) -> str:
    """Set every `key:` line of the header block (before the first blank line) to `value`, or add one."""
    head, sep, body = text.partition("\n\n")
    lines = head.split("\n")
    ending = "\n" if not sep and lines[-1] == "" else ""
    lines = [line for line in lines if line] if ending else lines
    hit = [i for i, line in enumerate(lines) if line.partition(":")[0].strip().lower() == key.lower()]
    for i in hit:
        lines[i] = "{0}: {1}".format(key, value)
    if not hit:
        lines.append("{0}: {1}".format(key, value))
    return "\n".join(lines) + ending + sep + body


def record_digest(data: bytes) -> str:
    """`sha256=<urlsafe base64, no padding>`, the hash form of a RECORD line."""
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")


def make_record(files: Files, record_name: str) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for name, data in files.items():
        if name != record_name:
            writer.writerow([name, record_digest(data), len(data)])
    writer.writerow([record_name, "", ""])
    return out.getvalue().encode("utf-8")


def record_problems(files: Files, record_name: str) -> List[str]:
    """Every way RECORD and the archive disagree: missing lines, wrong hashes or sizes, extras."""
    problems = []
    listed = {}
    for row in csv.reader(io.StringIO(files.get(record_name, b"").decode("utf-8"))):
        if len(row) != 3:
            problems.append("RECORD has a malformed line: {0}".format(",".join(row)))
        else:
            listed[row[0]] = (row[1], row[2])
    for name, data in files.items():
        if name == record_name:
            continue
        if name not in listed:
            problems.append("{0} is not in RECORD".format(name))
        elif listed[name] != (record_digest(data), str(len(data))):
            problems.append("RECORD has a wrong hash or size for {0}".format(name))
    problems += ["RECORD lists {0}, which is not in the wheel".format(n) for n in listed
                 if n not in files and n != record_name]
    return problems


def archive_order(names: List[str], dist_info: str) -> List[str]:
    """Package files sorted, then the .dist-info files sorted, RECORD last (PEP 427)."""
    record = dist_info + "/RECORD"
    body = sorted(n for n in names if not n.startswith(dist_info + "/"))
    meta = sorted(n for n in names if n.startswith(dist_info + "/") and n != record)
    return body + meta + [record]


def zip_date_time(epoch: int) -> Tuple[int, int, int, int, int, int]:
    stamp = time.gmtime(max(epoch, DEFAULT_SOURCE_DATE_EPOCH))
    return (stamp.tm_year, stamp.tm_mon, stamp.tm_mday, stamp.tm_hour, stamp.tm_min, stamp.tm_sec - stamp.tm_sec % 2)


def pack(files: Files, dist_info: str, epoch: int) -> bytes:
    """A wheel archive of `files` with a fresh RECORD; the same input gives the same bytes."""
    record = dist_info + "/RECORD"
    order = archive_order([n for n in files if n != record], dist_info)
    ordered = {name: files[name] for name in order if name != record}
    ordered[record] = make_record(ordered, record)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in ordered.items():
            info = zipfile.ZipInfo(name, date_time=zip_date_time(epoch))
            info.create_system = 3
            info.external_attr = FILE_MODE << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=COMPRESS_LEVEL)
    return buffer.getvalue()


def rename_dist_info(files: Files, old_dir: str, new_dir: str) -> Files:
    """Move `<old>.dist-info/` and a `<old>.data/` next to it to the new name and version."""
    old_data, new_data = old_dir[:-len(".dist-info")] + ".data", new_dir[:-len(".dist-info")] + ".data"
    renamed = {}
    for name, data in files.items():
        top, sep, rest = name.partition("/")
        if top == old_dir:
            name = new_dir + sep + rest
        elif top == old_data:
            name = new_data + sep + rest
        renamed[name] = data
    return renamed


def wheel_tags(files: Files, dist_info: str) -> List[str]:
    return header_values(files[dist_info + "/WHEEL"].decode("utf-8"), "Tag")


def platform_of(tag: str) -> str:
    """First platform of a compressed tag: cp310-cp310-manylinux2014_aarch64 -> manylinux2014_aarch64."""
    return tag.split("-")[2].split(".")[0]


def python_version_of(tag: str) -> Optional[str]:
    """`3.10` for cp310 (or py310); None for a tag such as py3 that names no minor version."""
    match = re.match(r"^(?:cp|py)(\d)(\d+)$", tag.split("-")[0].split(".")[0])
    return "{0}.{1}".format(match.group(1), match.group(2)) if match else None


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def installed_record_problems(site_dir: str, record: Optional[str]) -> List[str]:
    """Files an installed distribution's RECORD lists that are missing or changed on disk.

    `record` is None when the distribution has no RECORD: nothing it installed can be checked.
    """
    if record is None:
        return ["no RECORD: its installed files cannot be checked"]
    problems = []
    for row in csv.reader(io.StringIO(record)):
        if len(row) != 3 or not row[1]:
            continue  # RECORD itself and files pip compiled or wrote after the install carry no hash
        path = os.path.normpath(os.path.join(site_dir, row[0]))
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except (IOError, OSError):
            problems.append("{0} is missing".format(row[0]))
            continue
        if record_digest(data) != row[1]:
            problems.append("{0} differs from what was installed".format(row[0]))
    return problems
