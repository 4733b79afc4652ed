"""Child processes that die with their parent and leave Ctrl-C to it (Linux; partly a no-op elsewhere).

Process pools (datasets' ``num_proc``) fork workers and a manager process that run none of our code before
they start; an at-fork hook reaches them all. It is active only inside ``mortal_children()``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager

_PR_SET_PDEATHSIG = 1
_parent_pid: int | None = None  # set while mortal_children() is active; inherited by forked children


def _make_mortal() -> None:
    """In a freshly forked child: SIGKILL when the parent dies (no orphans after a kill -9), and ignore
    SIGINT, so a terminal's Ctrl-C is handled once, by the parent, which cleans up and exits 130."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # When the parent stops the pool (Ctrl-C), a worker's half-run generator is finalized with an
    # "Exception ignored" traceback; real worker errors still reach the parent through the pool.
    sys.unraisablehook = _quiet_unraisable
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != _parent_pid:  # the parent died before prctl took effect
        os._exit(1)


def _quiet_unraisable(unraisable: object) -> None:
    return None


def _after_fork_in_child() -> None:
    if _parent_pid is not None:
        _make_mortal()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


@contextmanager
def mortal_children() -> Iterator[None]:
    """Every process forked inside the block dies with this one and ignores SIGINT."""
    global _parent_pid
    previous, _parent_pid = _parent_pid, os.getpid()
    try:
        yield
    finally:
        _parent_pid = previous
