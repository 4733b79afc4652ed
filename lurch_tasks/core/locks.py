"""One writer at a time: advisory locks (``fcntl.flock``) on a lock file beside the folder being written.

A lock file ``PARENT/.NAME.lurch-lock`` belongs to the folder ``PARENT/NAME``. Writers hold it exclusively for the
whole run and keep their process id in it (for the waiting message); readers (``lurch validate``) hold it shared,
so they see a folder before or after a writer, never half-replaced. The kernel drops a flock when its process dies
(even by SIGKILL), so the lock of a killed run is free at once: there is no stale lock to break.

The file is removed by whoever holds it exclusively at the end; a process that locked a file which was removed
meanwhile (its inode is no longer the path's) starts over on the new one. Local file systems only: an fsspec
URL (s3://, gs://, ...) cannot be flock'ed, so runs into object stores are not serialized (see the README).
"""

from __future__ import annotations

import errno
import fcntl
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_SUFFIX = ".lurch-lock"


def lock_path(folder: Path) -> Path:
    """The lock file of ``folder``: a hidden sibling (the folder itself may not exist yet, or be replaced)."""
    folder = Path(os.path.abspath(folder))
    return folder.parent / f".{folder.name}{LOCK_SUFFIX}"


def holder(path: Path) -> int | None:
    """The process id written in a lock file by its exclusive holder (None when unknown)."""
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None


def _open_locked(path: Path, mode: int, blocking: bool) -> int | None:
    """A descriptor of ``path`` locked with ``mode`` (None when ``blocking`` is false and it is taken)."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, mode | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(fd)
            return None
        except BaseException:
            os.close(fd)
            raise
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)  # the holder we waited for removed the file: lock the current one


def _release(fd: int, path: Path) -> None:
    """Unlock; the file goes with the last user (only an exclusive holder can tell it is the last)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a no-op for a writer; a reader is alone if it succeeds
        path.unlink(missing_ok=True)
    except BlockingIOError:
        pass
    finally:
        os.close(fd)


def _wait(path: Path, mode: int, message: str) -> int:
    fd = _open_locked(path, mode, blocking=False)
    if fd is not None:
        return fd
    pid = holder(path)
    who = f"PID {pid}" if pid is not None else "another lurch process"
    print(f"lurch: waiting for {who}, which is {message}", file=sys.stderr, flush=True)
    fd = _open_locked(path, mode, blocking=True)
    assert fd is not None
    return fd


def _write_pid(fd: int) -> None:
    """For the messages of processes that wait; a full disk must not stop the lock itself."""
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    except OSError:
        pass


@contextmanager
def writing(folder: Path) -> Iterator[None]:
    """Hold ``folder``'s lock exclusively: waits (saying once for whom) while another process writes or reads it."""
    path = lock_path(folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = _wait(path, fcntl.LOCK_EX, f"writing {str(folder)!r}")
    try:
        _write_pid(fd)
        yield
    finally:
        _release(fd, path)


@contextmanager
def reading(folder: Path, message: str = "writing") -> Iterator[None]:
    """Hold ``folder``'s lock shared: with other readers (and shard writers, which share the output), never with an
    exclusive writer. Where no lock file can be made (a read-only parent) lurch cannot write either: no lock."""
    path = lock_path(folder)
    try:
        fd: int | None = _wait(path, fcntl.LOCK_SH, f"{message} {str(folder)!r}")
    except (PermissionError, FileNotFoundError, OSError) as error:
        if error.errno not in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOENT):
            raise
        fd = None
    try:
        yield
    finally:
        if fd is not None:
            _release(fd, path)


@contextmanager
def exclusive_or_fail(path: Path, what: str) -> Iterator[None]:
    """Hold the lock file ``path`` exclusively, or fail at once with one line naming the holder's process id."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = _open_locked(path, fcntl.LOCK_EX, blocking=False)
    if fd is None:
        pid = holder(path)
        raise ValueError(f"{what} is being written by {'PID ' + str(pid) if pid else 'another process'}; "
                              "allowed: wait for it to finish, or run another part")
    try:
        _write_pid(fd)
        yield
    finally:
        _release(fd, path)


def busy(path: Path) -> int | None:
    """The holder's process id (0 when unknown) if ``path`` is locked by another process, else None."""
    if not path.is_file():
        return None
    fd = _open_locked(path, fcntl.LOCK_EX, blocking=False)
    if fd is None:
        return holder(path) or 0
    _release(fd, path)
    return None
