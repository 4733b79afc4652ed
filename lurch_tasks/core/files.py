"""Atomic file output: write beside the target, flush to disk, rename on success, leave nothing on failure."""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import IO, Any

_UMASK = os.umask(0o022)  # read once (os.umask can only read by setting), then restored
os.umask(_UMASK)


@contextmanager
def atomic_output(path: Path, binary: bool = False) -> Iterator[IO[Any]]:
    """A text (or ``binary``) handle whose content replaces ``path`` only when the block ends without an
    exception (including KeyboardInterrupt): an existing file is never truncated and no partial file is left."""
    # A Ctrl-C between creating the temporary file and entering ``try`` would leave it behind: hold signals there.
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    try:
        os.chmod(temporary, 0o666 & ~_UMASK)  # mkstemp's 0600 would make the result private to its writer
        with (os.fdopen(handle, "wb") if binary else os.fdopen(handle, "w", encoding="utf-8")) as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    finally:
        Path(temporary).unlink(missing_ok=True)


def inside(folder: Path, relative: object, what: str) -> Path:
    """``folder / relative`` for a path read from an untrusted file (a manifest, journal or record): a relative POSIX
    path that stays inside ``folder`` (no ``..``, no absolute path, no backslash, no symlink leading out), or a
    one-line ValueError naming ``what`` and the path."""
    text = relative if isinstance(relative, str) else None
    parts = PurePosixPath(text).parts if text else ()
    if (not text or "\\" in text or "\0" in text or PurePosixPath(text).is_absolute() or not parts
            or any(part in ("..", ".") for part in parts)):
        raise ValueError(f"{what}: path {relative!r} is not allowed; allowed: a relative path inside "
                         f"{str(folder)!r}")
    target = folder / Path(*parts)
    base = folder.resolve()
    resolved = target.resolve()
    if resolved != base and base not in resolved.parents:
        raise ValueError(f"{what}: path {relative!r} leads outside {str(folder)!r} (through a symbolic link); "
                         "allowed: a path inside the folder")
    return target


def check_owned_folder(out: Path, overwrite: bool, manifest: str, tool: str) -> None:
    """An output folder is new or empty, or (with ``overwrite``) one that ``tool`` wrote (it holds ``manifest``)."""
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"--out: {str(out)!r} is a file; allowed: a folder")
    if out.is_dir() and any(out.iterdir()):
        if not overwrite:
            raise FileExistsError(f"--out: {str(out)!r} is not empty; allowed: a new folder, or --overwrite (replaces "
                                  f"only the files {tool} wrote)")
        if not (out / manifest).is_file():
            raise FileExistsError(f"--out: {str(out)!r} was not written by {tool} (no {manifest}); allowed: a "
                                  f"new or empty folder, or a folder {tool} wrote")
        owned_files(out, manifest, tool)  # refuse a planted manifest before any work


def write_owned_folder(out: Path, files: dict[str, bytes], manifest: str, tool: str, version: str) -> None:
    """Write ``files`` (relative path -> bytes) and a ``manifest`` listing them into ``out``.

    A new (or empty) folder appears with one rename of a staging folder beside it, which is removed on failure. In a
    folder ``tool`` wrote before, each of its files is replaced atomically and its own stale files are removed;
    a file it did not write is never replaced or deleted (one with a name it needs is an error)."""
    files = dict(files)
    files[manifest] = (json.dumps({"written_by": f"{tool} ({version})", "files": sorted(files)}, indent=2)
                       + "\n").encode("utf-8")
    if out.is_dir() and any(out.iterdir()):
        _replace_owned(out, files, manifest, tool)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".lurch-tmp", dir=out.parent))
    try:
        for name, data in files.items():
            (staging / name).parent.mkdir(parents=True, exist_ok=True)
            (staging / name).write_bytes(data)
        if out.is_dir():
            out.rmdir()  # empty: checked by the caller
        staging.rename(out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def owned_files(out: Path, manifest: str, tool: str) -> list[str]:
    """The files ``tool``'s ``manifest`` in ``out`` lists, each checked to stay inside ``out`` (the manifest is
    untrusted: a folder received from someone else may list ``../victim``); a one-line ValueError otherwise."""
    where = str(out / manifest)
    try:
        document = json.loads((out / manifest).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"--out: {where!r} is unreadable ({type(error).__name__}); allowed: the manifest {tool} "
                         "wrote, or another --out folder") from None
    listed = document.get("files") if isinstance(document, dict) else None
    if not isinstance(listed, list) or not str(document.get("written_by", "")).startswith(f"{tool} ("):
        raise ValueError(f"--out: {where!r} is not a manifest {tool} wrote; allowed: another --out folder")
    for name in listed:
        inside(out, name, f"--out: {where}")
    return [name for name in listed if name != manifest]


def _replace_owned(out: Path, files: dict[str, bytes], manifest: str, tool: str) -> None:
    previous = owned_files(out, manifest, tool)
    for name in files:
        inside(out, name, f"{tool} output")
    foreign = [name for name in sorted(files) if name != manifest and (out / name).exists() and name not in previous]
    if foreign:
        raise FileExistsError(f"--out: {str(out / foreign[0])!r} was not written by {tool}; allowed: move it away, or "
                              "another --out folder")
    for name, data in files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        with atomic_output(out / name, binary=True) as handle:
            handle.write(data)
    for name in previous:
        if name not in files and (out / name).is_file() and not (out / name).is_symlink():
            (out / name).unlink()
