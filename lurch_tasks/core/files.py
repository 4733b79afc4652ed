"""Atomic file output: write beside the target, flush to disk, rename on success, leave nothing on failure."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any


@contextmanager
def atomic_output(path: Path, binary: bool = False) -> Iterator[IO[Any]]:
    """A text (or ``binary``) handle whose content replaces ``path`` only when the block ends without an
    exception (including KeyboardInterrupt): an existing file is never truncated and no partial file is left."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with (os.fdopen(handle, "wb") if binary else os.fdopen(handle, "w", encoding="utf-8")) as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    finally:
        Path(temporary).unlink(missing_ok=True)
