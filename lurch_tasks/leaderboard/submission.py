"""A leaderboard submission: a folder, ``.zip`` or ``.tar.gz`` holding ``submission.json`` and the lm-eval output of
one model (``results_*.json`` and ``samples_*.jsonl`` written with ``--log_samples``).

Archives are hostile input. They are unpacked once into a temporary folder that is removed afterwards, one member
at a time and in chunks, under limits on the member count, the bytes of one member and of the whole archive, and the
compression ratio: checked before anything is written where the format allows (a zip's central directory, a tar
member's header) and again on the bytes actually produced (headers can lie). A member with an absolute path, a ``..``
part, a link, a device, encryption or an unknown compression is refused; a corrupt archive is one reason.
"""

from __future__ import annotations

import json
import lzma
import shutil
import struct
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import IO

import jsonschema

from ..core.files import inside
from ..core.text import printable

SUBMISSION_FILE = "submission.json"
# Limits sized on real runs: `lurch eval --model lurch-solver --tasks memory_drift --limit 2 --log_samples` is 3.7 MB
# in 20 files, about 0.84 GB scaled to every doc (recon_cascade, the largest file, about 160 MB); a full run measured
# 1.2 GB (README, Leaderboard: later docs are longer), so its largest file is about 230 MB. Zip compresses the logs
# about 7.5x, xz about 31x. Each limit leaves 3x or more headroom.
MAX_MEMBERS = 1000  # files and folders
MAX_MEMBER = 1024**3  # bytes one member may unpack to
MAX_UNPACKED = 4 * 1024**3  # bytes a whole archive may unpack to
MAX_RATIO = 200  # unpacked bytes per archive byte (a whole archive, and each zip member) ...
RATIO_FLOOR = 64 * 1024**2  # ... once past this many bytes (small archives of tiny files compress well)
CHUNK = 1024**2
MAX_METADATA = 1024**2  # bytes of submission.json
ZIP_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA)
ARCHIVES = (".zip", ".tar.gz", ".tgz", ".tar", ".tar.xz", ".txz")
# Everything a corrupt archive raises while it is read: bad CRC, truncated stream, corrupt deflate/xz/bzip2 data,
# an unsupported feature, a member that exists twice (FileExistsError).
UNPACK_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, tarfile.TarError, EOFError, OSError, zlib.error,
                 lzma.LZMAError, NotImplementedError, RuntimeError, UnicodeError, struct.error)


@lru_cache(maxsize=1)
def submission_schema() -> dict:
    return json.loads(resources.files("lurch_tasks.leaderboard").joinpath("submission.schema.json").read_text("utf-8"))


def schema_problems(document: object) -> list[str]:
    """Every way ``document`` breaks the submission schema, one line each (empty when valid)."""
    validator = jsonschema.Draft202012Validator(submission_schema())
    errors = sorted(validator.iter_errors(document), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{SUBMISSION_FILE}: {'/'.join(map(str, e.absolute_path)) or '<top>'}: {e.message}" for e in errors]


def read_submission_json(folder: Path) -> tuple[dict | None, list[str]]:
    """The parsed ``submission.json`` found in ``folder`` (at its top or one level down) and its problems."""
    found = sorted(folder.glob(SUBMISSION_FILE)) or sorted(folder.glob(f"*/{SUBMISSION_FILE}"))
    if not found:
        return None, [f"{SUBMISSION_FILE}: missing; allowed: the submission's metadata file at the folder's top"]
    try:
        if found[0].stat().st_size > MAX_METADATA:
            return None, [f"{SUBMISSION_FILE}: {found[0].stat().st_size} bytes; allowed: at most {MAX_METADATA}"]
        document = json.loads(found[0].read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        return None, [f"{SUBMISSION_FILE}: not valid JSON ({printable(error)[:200]})"]
    problems = schema_problems(document)
    return (document if not problems else None), problems


def _safe_name(name: str) -> bool:
    path = PurePosixPath(name)
    return not path.is_absolute() and ".." not in path.parts and "\\" not in name and "\0" not in name


@dataclass
class _Budget:
    """What unpacking one archive may still produce; every byte written and every member is counted, so an archive
    whose headers lie (a zip's ``file_size``, a tar's member count) is stopped at the limit, not after it."""

    archive: str
    allowed: int  # total bytes: MAX_UNPACKED, or MAX_RATIO times the archive's size (with a floor)
    members: int = 0
    written: int = 0

    def member(self, name: str) -> None:
        self.members += 1
        if self.members > MAX_MEMBERS:
            raise ValueError(f"submission: {self.archive} has more than {MAX_MEMBERS} members; allowed: at most "
                             f"{MAX_MEMBERS} (a submission is submission.json and one lm-eval run)")

    def add(self, name: str, member_bytes: int, chunk: int) -> None:
        self.written += chunk
        if member_bytes > MAX_MEMBER:
            raise ValueError(f"submission: {self.archive} member {printable(name)!r} unpacks to more than "
                             f"{MAX_MEMBER} bytes; allowed: at most {MAX_MEMBER} per member")
        if self.written > self.allowed:
            raise ValueError(f"submission: {self.archive} unpacks to more than {self.allowed} bytes; allowed: at "
                             f"most {MAX_UNPACKED} bytes and {MAX_RATIO} times the archive's size")


def _budget(archive: Path) -> _Budget:
    return _Budget(archive.name, min(MAX_UNPACKED, max(RATIO_FLOOR, MAX_RATIO * archive.stat().st_size)))


def _copy(source: IO[bytes], target: Path, name: str, budget: _Budget) -> None:
    """Stream one member into ``target`` in chunks, counting the bytes actually produced."""
    produced = 0
    with target.open("xb") as out:
        while chunk := source.read(CHUNK):
            produced += len(chunk)
            budget.add(name, produced, len(chunk))
            out.write(chunk)


def _refused(archive: str, name: str, what: str, allowed: str) -> ValueError:
    return ValueError(f"submission: {archive} member {printable(name)!r} {what}; allowed: {allowed}")


def _zip_entries(archive: Path) -> int:
    """The member count the end-of-central-directory record declares, read before the directory itself is parsed
    (parsing a million entries costs seconds and hundreds of MB)."""
    with archive.open("rb") as handle:
        record = zipfile._EndRecData(handle)  # type: ignore[attr-defined]  # stable since Python 2; no public twin
    if record is None:
        raise zipfile.BadZipFile("File is not a zip file")
    return int(record[zipfile._ECD_ENTRIES_TOTAL])  # type: ignore[attr-defined]


def _unpack_zip(archive: Path, target: Path) -> None:
    budget = _budget(archive)
    if _zip_entries(archive) > MAX_MEMBERS:
        budget.members = MAX_MEMBERS
        budget.member("")
    with zipfile.ZipFile(archive) as bundle:
        members = bundle.infolist()
        declared = 0
        for member in members:  # every check the central directory allows, before anything is written
            budget.member(member.filename)
            if not _safe_name(member.filename) or (member.external_attr >> 16) & 0o170000 == 0o120000:
                raise _refused(archive.name, member.filename, "is not allowed", "plain files with relative paths")
            if member.flag_bits & 0x1:
                raise _refused(archive.name, member.filename, "is encrypted", "members without encryption")
            if member.compress_type not in ZIP_METHODS:
                raise _refused(archive.name, member.filename, f"uses compression method {member.compress_type}",
                               "stored, deflate, bzip2 or lzma")
            ratio = member.file_size / max(member.compress_size, 1)
            if member.file_size > RATIO_FLOOR and ratio > MAX_RATIO:
                raise _refused(archive.name, member.filename, f"has a compression ratio of {ratio:.0f}",
                               f"at most {MAX_RATIO}")
            declared += member.file_size
            budget.add(member.filename, member.file_size, 0)
        if declared > budget.allowed:
            budget.add("", 0, declared)  # raises, naming the limit
        budget.members = 0
        for member in members:
            budget.member(member.filename)
            path = inside(target, member.filename.rstrip("/"), f"submission: {archive.name}") \
                if member.filename.rstrip("/") else target
            if member.is_dir():
                path.mkdir(parents=True, exist_ok=True)
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            with bundle.open(member) as source:
                _copy(source, path, member.filename, budget)


def _unpack_tar(archive: Path, target: Path) -> None:
    """Members read one by one from the stream (``r|*``): counting stops a million-member archive at the limit
    instead of listing every member first."""
    budget = _budget(archive)
    with tarfile.open(archive, "r|*") as bundle:
        for member in bundle:
            budget.member(member.name)
            if not _safe_name(member.name) or not (member.isfile() or member.isdir()) or member.issparse():
                raise _refused(archive.name, member.name, "is not allowed",
                               "plain files and folders with relative paths")
            budget.add(member.name, member.size, 0)  # the header's size, before reading it
            name = member.name.rstrip("/")
            path = inside(target, name, f"submission: {archive.name}") if name not in ("", ".") else target
            if member.isdir():
                path.mkdir(parents=True, exist_ok=True)
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            source = bundle.extractfile(member)
            if source is not None:
                _copy(source, path, member.name, budget)
            bundle.members.clear()  # a stream keeps every header read so far; nothing here needs them


@contextmanager
def opened(path: Path) -> Iterator[Path]:
    """The submission as a folder: ``path`` itself, or an archive unpacked (once) into a temporary folder."""
    path = Path(path)
    if path.is_dir():
        yield path
        return
    if not path.is_file():
        raise ValueError(f"submission: {printable(str(path))!r} does not exist; allowed: a folder, .zip, .tar.gz or "
                         ".tar.xz")
    name = path.name.lower()
    if not name.endswith(ARCHIVES):
        raise ValueError(f"submission: {printable(str(path))!r} is not allowed; allowed: a folder, .zip, .tar.gz or "
                         ".tar.xz")
    target = Path(tempfile.mkdtemp(prefix="lurch-submission-"))
    try:
        try:
            (_unpack_zip if name.endswith(".zip") else _unpack_tar)(path, target)
        except UNPACK_ERRORS as error:
            raise ValueError(f"submission: {printable(path.name)} cannot be unpacked ({type(error).__name__}: "
                             f"{printable(error)})") from None
        yield target
    finally:
        shutil.rmtree(target, ignore_errors=True)
