"""A folder on any fsspec file system (a local path, ``file://``, ``s3://``, ``gs://``, ``memory://``, ...): the few
operations a sharded materialize needs, each of them safe to repeat.

Files are written under a temporary name and moved into place, so a reader never sees half a file (on object
stores the move is a copy of a complete object). Local paths go through fsspec's local file system, whose move
is a rename.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Any

import fsspec
from fsspec.implementations.local import LocalFileSystem

TMP_MARK = ".lurch-tmp-"
# A staging JSON file is read whole: plans are ~1 KB, a shard marker ~60 bytes per file it lists, a file record is
# capped by its reader (row hashes, audit measures). Far above those, far below what a hostile file could hold.
MAX_JSON_BYTES = 64 * 2**20


@dataclass(frozen=True)
class Store:
    fs: Any  # fsspec.AbstractFileSystem
    root: str  # path inside ``fs`` (no protocol)
    url: str  # how the user named it (for messages)

    @classmethod
    def at(cls, url: str) -> Store:
        try:
            fs, root = fsspec.core.url_to_fs(str(url))
        except (ImportError, ValueError) as error:
            reason = " ".join(str(error).split())[:200]
            raise ValueError(f"out: {str(url)!r} cannot be opened ({reason}); allowed: a local folder or an fsspec URL "
                             "whose file system is installed (e.g. s3fs for s3://)") from None
        root = root.rstrip("/") or "/"
        return cls(fs, root, root if isinstance(fs, LocalFileSystem) else str(url))

    @property
    def is_local(self) -> bool:
        return isinstance(self.fs, LocalFileSystem)

    def path(self, relative: str = "") -> str:
        return posixpath.join(self.root, relative) if relative else self.root

    def child(self, relative: str) -> Store:
        return Store(self.fs, self.path(relative), posixpath.join(self.url.rstrip("/"), relative))

    def sibling(self, name: str) -> Store:
        parent = posixpath.dirname(self.root)
        if not parent or parent == self.root:
            raise ValueError(f"out: {self.url!r} has no parent folder to stage in; allowed: a folder below a parent "
                             "(e.g. s3://bucket/datasets/NAME, not s3://bucket)")
        prefix = self.url[: len(self.url.rstrip("/")) - len(posixpath.basename(self.root))]
        return Store(self.fs, posixpath.join(parent, name), prefix + name)

    # ------------------------------------------------------------ reading

    def exists(self, relative: str = "") -> bool:
        return bool(self.fs.exists(self.path(relative)))

    def is_file(self, relative: str) -> bool:
        return bool(self.fs.isfile(self.path(relative)))

    def names(self, relative: str = "") -> list[str]:
        """Names of the entries of a folder (empty when it is missing), sorted."""
        target = self.path(relative)
        if not self.fs.isdir(target):
            return []
        return sorted(posixpath.basename(entry.rstrip("/")) for entry in self.fs.ls(target, detail=False))

    def read_bytes(self, relative: str) -> bytes:
        return bytes(self.fs.cat_file(self.path(relative)))

    def read_json(self, relative: str, max_bytes: int = MAX_JSON_BYTES) -> Any:
        """The JSON in a file, or None when it is missing; a one-line ValueError when unreadable or larger than
        ``max_bytes`` (a staging folder is read from disk: a corrupt or hostile file must not be read whole)."""
        if not self.is_file(relative):
            return None
        def too_big(size: str) -> ValueError:
            return ValueError(f"{self.path(relative)}: {size} bytes; allowed: at most {max_bytes} bytes, the file "
                              "lurch wrote (remove the staging folder to start over)")

        try:
            size = self.size(relative)
            if size > max_bytes:
                raise too_big(str(size))
            with self.open(relative) as handle:
                data = handle.read(max_bytes + 1)  # bounded even when the file grew after its size was read
            if len(data) > max_bytes:
                raise too_big(f"more than {max_bytes}")
            return json.loads(data.decode("utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
            raise ValueError(f"{self.path(relative)}: unreadable ({type(error).__name__}); allowed: the file lurch "
                             "wrote (remove the staging folder to start over)") from None

    def open(self, relative: str) -> IO[bytes]:
        return self.fs.open(self.path(relative), "rb")

    def size(self, relative: str) -> int:
        return int(self.fs.size(self.path(relative)))

    def sha256(self, relative: str) -> str:
        digest = hashlib.sha256()
        with self.open(relative) as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()

    # ------------------------------------------------------------ writing

    @contextmanager
    def writing(self, relative: str) -> Iterator[IO[bytes]]:
        """A binary handle whose bytes appear at ``relative`` only when the block ends without an exception."""
        target = self.path(relative)
        folder = posixpath.dirname(target)
        self.fs.makedirs(folder, exist_ok=True)
        temporary = posixpath.join(folder, f"{TMP_MARK}{uuid.uuid4().hex}-{posixpath.basename(target)}")
        try:
            with self.fs.open(temporary, "wb") as handle:
                yield handle
            self.fs.mv(temporary, target)
        finally:
            if self.fs.exists(temporary):
                self.fs.rm(temporary)

    def write_bytes(self, relative: str, data: bytes) -> None:
        with self.writing(relative) as handle:
            handle.write(data)

    def write_json(self, relative: str, data: Any) -> None:
        self.write_bytes(relative, (json.dumps(data, indent=1, sort_keys=True) + "\n").encode("utf-8"))

    def remove(self, relative: str = "") -> None:
        if self.exists(relative):
            self.fs.rm(self.path(relative), recursive=True)

    def remove_temporaries(self, relative: str, keep: Callable[[str], bool] = lambda name: False) -> list[str]:
        """Delete the temporary files that killed writers left in a folder (those ``keep`` does not protect)."""
        gone = [name for name in self.names(relative) if name.startswith(TMP_MARK) and not keep(name)]
        for name in gone:
            self.fs.rm(self.path(posixpath.join(relative, name)))
        return gone
