"""A leaderboard submission: a folder, ``.zip`` or ``.tar.gz`` holding ``submission.json`` and the lm-eval output of
one model (``results_*.json`` and ``samples_*.jsonl`` written with ``--log_samples``).

Archives are unpacked into a temporary folder that is removed afterwards; a member with an absolute path, a ``..``
part, a link or a device, or an archive that would unpack to more than ``MAX_UNPACKED`` bytes, is refused.
"""

from __future__ import annotations

import json
import shutil
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from importlib import resources
from pathlib import Path, PurePosixPath

import jsonschema

SUBMISSION_FILE = "submission.json"
MAX_UNPACKED = 8 * 1024**3  # a full memory_drift submission is well under 1 GiB of sample logs


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
        document = json.loads(found[0].read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        return None, [f"{SUBMISSION_FILE}: not valid JSON ({error})"]
    problems = schema_problems(document)
    return (document if not problems else None), problems


def _safe_name(name: str) -> bool:
    path = PurePosixPath(name)
    return not path.is_absolute() and ".." not in path.parts and "\\" not in name


def _unpack_zip(archive: Path, target: Path) -> None:
    with zipfile.ZipFile(archive) as bundle:
        members = bundle.infolist()
        if sum(m.file_size for m in members) > MAX_UNPACKED:
            raise ValueError(f"submission: {archive.name} unpacks to more than {MAX_UNPACKED} bytes")
        for member in members:
            if not _safe_name(member.filename) or (member.external_attr >> 16) & 0o170000 == 0o120000:
                raise ValueError(f"submission: {archive.name} member {member.filename!r} is not allowed; allowed: "
                                 "plain files with relative paths")
        bundle.extractall(target)


def _unpack_tar(archive: Path, target: Path) -> None:
    with tarfile.open(archive, "r:*") as bundle:
        members = bundle.getmembers()
        if sum(m.size for m in members) > MAX_UNPACKED:
            raise ValueError(f"submission: {archive.name} unpacks to more than {MAX_UNPACKED} bytes")
        for member in members:
            if not _safe_name(member.name) or not (member.isfile() or member.isdir()):
                raise ValueError(f"submission: {archive.name} member {member.name!r} is not allowed; allowed: "
                                 "plain files and folders with relative paths")
        bundle.extractall(target, filter="data")


@contextmanager
def opened(path: Path) -> Iterator[Path]:
    """The submission as a folder: ``path`` itself, or an archive unpacked into a temporary folder."""
    path = Path(path)
    if path.is_dir():
        yield path
        return
    if not path.is_file():
        raise ValueError(f"submission: {str(path)!r} does not exist; allowed: a folder, .zip or .tar.gz")
    name = path.name.lower()
    if not name.endswith((".zip", ".tar.gz", ".tgz", ".tar")):
        raise ValueError(f"submission: {str(path)!r} is not allowed; allowed: a folder, .zip or .tar.gz")
    target = Path(tempfile.mkdtemp(prefix="lurch-submission-"))
    try:
        try:
            (_unpack_zip if name.endswith(".zip") else _unpack_tar)(path, target)
        except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as error:
            raise ValueError(f"submission: {path.name} cannot be unpacked ({error})") from None
        yield target
    finally:
        shutil.rmtree(target, ignore_errors=True)
