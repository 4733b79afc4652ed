"""On-disk cache of the docs our lm-eval tasks generate, so a second ``lurch eval`` reads them back.

Where: ``$LURCH_CACHE_DIR/docs``, else ``$XDG_CACHE_HOME/lurch-tasks/docs``, else
``~/.cache/lurch-tasks/docs``. ``LURCH_CACHE_DIR=off`` switches the cache off (nothing is read or written).
Clearing it is deleting that folder.

One Arrow IPC file per key: the task name, the resolved config's hash (tokenizer and chat_template overrides
included), the seed, the split, the family and its version, the lurch-tasks version and a stamp of the
installed generator code and of a local tokenizer's files (so an edited generator or tokenizer never reads
stale docs). The file's schema metadata holds the key; its rows are (index, MAC, row as JSON), rows as
generated, before any per-run filtering (the model-window check), so any run of the same key reuses what
earlier runs generated and adds what they did not (a longer ``--limit``). JSON round-trips every value a row
holds exactly (floats, key order); the file is memory-mapped, so a run decodes only the rows it reads, and
each row read is checked against its MAC and index.

The cache is trusted input for ``lurch leaderboard validate`` (a doc read from it is what a submission is compared
with), so a CRC is not enough: each row carries an HMAC-SHA256 of (entry key, index, row) under a per-user secret
key (``$XDG_CONFIG_HOME/lurch-tasks/doc-cache.key``, else ``~/.config/lurch-tasks/doc-cache.key``; 32 random bytes,
created 0600, outside the cache folder). Whoever can write the cache but not read that key cannot forge a row: an
edited row fails its MAC and is regenerated. A key that is missing and cannot be created, or that others may read or
write, switches the cache off with one warning line. A file that fails a check is ignored with one warning
line and replaced by the next save. Saving writes a whole new file beside the entry and renames it over it:
readers only ever see whole files, an interrupted run leaves the entry as it was, and a cache that cannot be
written costs one warning line, never the run.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import pyarrow as pa

from .. import __version__
from ..core.config import config_hash

# The cache folder and the per-user MAC key are shared with core.disk_cache (tokenizer-derived tables).
from ..core.disk_cache import (  # noqa: F401 - part of this module's API
    CACHE_ENV,
    DISABLED,
    KEY_BYTES,
    KEY_FILE,
    cache_root,
    key_path,
    mac_key,
)
from ..core.files import atomic_output
from ..core.registry import get_family
from ..core.rng import canonical_json
from .window import warn

FORMAT = "2"  # 1: rows checked by CRC-32; 2: by HMAC-SHA256
KEY_FIELD = b"lurch_doc_cache_key"
FORMAT_FIELD = b"lurch_doc_cache_format"
SCHEMA = pa.schema([("index", pa.int64()), ("mac", pa.binary(32)), ("row", pa.large_string())])
_SKIP_DIRS = {"__pycache__", ".git", ".venv", "node_modules"}
_MAX_STAMPED_FILES = 5000
_STALE_SECONDS = 24 * 3600
SPILL_ROWS = 64  # rows put are written to the spill file in batches of this many ...
SPILL_CHARS = 8 << 20  # ... or fewer, once they hold this many characters of JSON


def docs_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    root = cache_root(environ)
    return None if root is None else root / "docs"


def row_mac(secret: bytes, key_json: str, index: int, text: str) -> bytes:
    """HMAC-SHA256 of one row under its entry's key: a row moved to another entry or index fails as well."""
    message = f"{key_json}\n{index}\n".encode("ascii") + text.encode("utf-8")
    return hmac.new(secret, message, hashlib.sha256).digest()


def cache_key(task: Any, split: str) -> dict[str, Any]:
    family = get_family(task.family)
    return {
        "task": task.name,
        "family": task.family,
        "family_version": family.version,
        "config_hash": config_hash(task.config),
        "seed": task.seed,
        "split": split,
        "lurch_tasks": __version__,
        "code": _code_stamp(family.generate.__module__),
        "tokenizer": _tokenizer_stamp(str(getattr(task.config, "tokenizer", "") or "")),
    }


def entry_path(folder: Path, key: Mapping[str, Any]) -> Path:
    digest = hashlib.sha256(canonical_json(dict(key)).encode("ascii")).hexdigest()[:24]
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in str(key["task"]))[:80]
    return folder / f"{safe}-{digest}.arrow"


class DocCache:
    """Rows of one key by index: ``get`` what is stored, ``put`` what was generated, ``save`` to disk.

    Open it with :func:`open_doc_cache`; a disabled cache (no ``path``) stores nothing and reads nothing. Rows
    put are spilled to a temporary file beside the entry every ``SPILL_ROWS`` rows (or ``SPILL_CHARS`` characters
    of JSON), so a long run holds a few rows, not all it generated, until ``save``."""

    def __init__(self, path: Path | None, key: dict[str, Any], secret: bytes = b"") -> None:
        self.path, self.key, self._secret = path, key, secret
        self._key_json = canonical_json(key)
        self._stored: pa.Table | None = None  # the entry on disk, memory-mapped
        self._position: dict[int, int] = {}  # index -> row of the stored table
        self._new: dict[int, str] = {}  # index -> JSON of rows generated this run, not spilled yet
        self._new_chars = 0
        self._spilled: set[int] = set()  # indices of rows written to the spill file
        self._spill_path: Path | None = None
        self._spill: tuple[Any, Any] | None = None  # (file, Arrow stream writer) while spilling
        self._warned = False
        if path is not None:
            self._load()

    def _load(self) -> None:
        assert self.path is not None
        try:
            reader = pa.ipc.open_file(pa.memory_map(str(self.path)))
            metadata = reader.schema.metadata or {}
            if metadata.get(FORMAT_FIELD) != FORMAT.encode() or reader.schema.remove_metadata() != SCHEMA:
                raise ValueError(f"not format {FORMAT}")
            if metadata.get(KEY_FIELD) != canonical_json(self.key).encode("ascii"):
                raise ValueError("written for another key")
            table = reader.read_all()
            indices = table.column("index").to_pylist()
            if len(set(indices)) != len(indices):
                raise ValueError("a row is stored twice")
        except (FileNotFoundError, NotADirectoryError):  # nothing stored (yet)
            return
        except (pa.ArrowException, ValueError, OSError) as err:
            self._corrupt(err)
            return
        self._stored, self._position = table, {index: row for row, index in enumerate(indices)}

    def get(self, index: int) -> dict[str, Any] | None:
        """The stored row ``index``, or None (not stored, or the file failed a check: then it is dropped)."""
        if index in self._new:
            return json.loads(self._new[index])
        if self._stored is None or index not in self._position:
            return None
        position = self._position[index]
        text = self._stored.column("row")[position].as_py()
        try:
            stored_mac = self._stored.column("mac")[position].as_py()
            if not hmac.compare_digest(row_mac(self._secret, self._key_json, index, text), stored_mac):
                raise ValueError(f"row {index} does not match its MAC (edited, or written with another key)")
            row = json.loads(text)
            if not isinstance(row, dict) or row.get("index") != index:
                raise ValueError(f"row {index} holds another row")
        except ValueError as err:  # json's errors are ValueErrors too
            self._stored, self._position = None, {}
            self._corrupt(err)
            return None
        return row

    def put(self, index: int, row: dict[str, Any]) -> None:
        """Add a generated row (written by ``save``; spilled to disk meanwhile). A row already spilled is not
        added twice (``get`` does not read the spill file back: the caller regenerates the same row)."""
        if self.path is None or index in self._spilled:
            return
        text = json.dumps(row, ensure_ascii=False, separators=(",", ":"))
        self._new[index] = text
        self._new_chars += len(text)
        if len(self._new) >= SPILL_ROWS or self._new_chars >= SPILL_CHARS:
            self._spill_new()

    def _new_table(self) -> pa.Table:
        return pa.table({"index": list(self._new),
                         "mac": [row_mac(self._secret, self._key_json, i, t) for i, t in self._new.items()],
                         "row": list(self._new.values())}, schema=SCHEMA)

    def _spill_new(self) -> None:
        assert self.path is not None
        try:
            if self._spill is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                handle, name = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
                os.close(handle)
                self._spill_path = Path(name)
                sink = pa.OSFile(name, "wb")
                self._spill = (sink, pa.ipc.new_stream(sink, SCHEMA))
            self._spill[1].write_table(self._new_table())
        except (OSError, pa.ArrowException) as err:
            self.discard()
            self.path = None  # a cache that cannot be written is off for the rest of this run
            self._problem(f"cannot write the doc cache in {self._folder()} ({_reason(err)}); the docs will be "
                          f"generated again next run (set {CACHE_ENV}=off to switch the cache off)")
            return
        self._spilled.update(self._new)
        self._new, self._new_chars = {}, 0

    def _close_spill(self) -> None:
        if self._spill is not None:
            sink, writer = self._spill
            self._spill = None
            try:
                writer.close()
            finally:
                sink.close()

    def discard(self) -> None:
        """Drop the rows put and not saved (and the spill file)."""
        try:
            self._close_spill()
        except (OSError, pa.ArrowException):
            pass
        if self._spill_path is not None:
            self._spill_path.unlink(missing_ok=True)
            self._spill_path = None
        self._new, self._new_chars, self._spilled = {}, 0, set()

    def save(self) -> None:
        """Write the stored, the spilled and the new rows as the entry (atomically, one batch in memory at a time);
        a failure is one warning line."""
        if self.path is None or not (self._new or self._spilled):
            return
        metadata = {FORMAT_FIELD: FORMAT.encode(), KEY_FIELD: canonical_json(self.key).encode("ascii")}
        schema = SCHEMA.with_metadata(metadata)
        try:
            self._close_spill()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            _sweep_stale_temporaries(self.path, keep=self._spill_path)
            write_entry(self.path, schema, self._parts(metadata))
        except (OSError, pa.ArrowException) as err:
            self._problem(f"cannot write the doc cache in {self._folder()} ({_reason(err)}); the docs will be "
                          f"generated again next run (set {CACHE_ENV}=off to switch the cache off)")
            self.discard()
            return
        self.discard()

    def _parts(self, metadata: dict[bytes, bytes]) -> Iterator[pa.Table | pa.RecordBatch]:
        """The entry's rows in order, a part at a time: stored, spilled (read back batch by batch), new."""
        if self._stored is not None:
            yield self._stored.replace_schema_metadata(metadata)
        if self._spill_path is not None:
            with pa.memory_map(str(self._spill_path)) as source:
                for batch in pa.ipc.open_stream(source):
                    yield batch.replace_schema_metadata(metadata)
        if self._new:
            yield self._new_table().replace_schema_metadata(metadata)

    def _folder(self) -> Path | str:
        return self.path.parent if self.path is not None else "the cache folder"

    def _corrupt(self, err: BaseException) -> None:
        self._problem(f"ignoring the damaged doc cache file {self.path} ({_reason(err)}); generating the docs "
                      "again and replacing it")

    def _problem(self, message: str) -> None:
        if not self._warned:
            self._warned = True
            warn(message)


def write_entry(path: Path, schema: pa.Schema, parts: Iterable[pa.Table | pa.RecordBatch]) -> None:
    """``parts`` (tables or record batches of ``schema``) as the Arrow IPC file ``path``, replacing it only once it
    is whole."""
    with atomic_output(path, binary=True) as out, pa.ipc.new_file(out, schema) as writer:
        for part in parts:
            if isinstance(part, pa.Table):
                writer.write_table(part, max_chunksize=256)
            else:
                writer.write_batch(part)


def _sweep_stale_temporaries(path: Path, keep: Path | None = None) -> None:
    """Temporary files of this entry left by a killed run (more than a day old; never ``keep``)."""
    for candidate in path.parent.glob(f".{path.name}.*.tmp"):
        if candidate == keep:
            continue
        try:
            if time.time() - candidate.stat().st_mtime > _STALE_SECONDS:
                candidate.unlink()
        except OSError:
            continue


def open_doc_cache(task: Any, split: str) -> DocCache:
    """The doc cache of ``task`` and ``split`` (disabled with ``LURCH_CACHE_DIR=off``, or when the MAC key cannot
    be used: one warning line)."""
    folder = docs_dir()
    key = cache_key(task, split)
    if folder is None:
        return DocCache(None, key)
    try:
        secret = _mac_key_once()
    except ValueError as err:
        _warn_once(f"{err}; the doc cache is off for this run")
        return DocCache(None, key)
    return DocCache(entry_path(folder, key), key, secret)


@lru_cache(maxsize=4)
def _mac_key_for(path: Path) -> bytes:
    return mac_key(path)


def _mac_key_once() -> bytes:
    return _mac_key_for(key_path())


@lru_cache(maxsize=8)
def _warn_once(message: str) -> None:
    warn(message)


# ---------------------------------------------------------------- stamps of what generated the rows


@lru_cache(maxsize=16)
def _code_stamp(module_name: str) -> str:
    """Digest of (path, size, mtime) of every file of the installed lurch-tasks package and of the package that
    defines the family's generator: editing or reinstalling either starts a fresh cache entry."""
    packages = {"lurch_tasks", module_name.split(".", 1)[0]}
    digest = hashlib.sha256()
    for name in sorted(packages):
        module = sys.modules.get(name)
        if module is None:
            continue
        if getattr(module, "__path__", None):  # a package: all its files
            paths = [path for root in sorted(module.__path__) if Path(root).is_dir() for path in _files(Path(root))]
        else:  # a single module
            paths = [Path(module.__file__)] if getattr(module, "__file__", None) else []
        for path in paths:
            try:
                info = path.stat()
            except OSError:
                continue
            digest.update(f"{path}\0{info.st_size}\0{info.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()[:16]


def _files(root: Path) -> list[Path]:
    found: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        found += [Path(folder) / f for f in sorted(files) if not f.endswith((".pyc", ".pyo"))]
        if len(found) > _MAX_STAMPED_FILES:
            break
    return found


def _tokenizer_stamp(spec: str) -> str:
    """Size and mtime of a local tokenizer's files (a folder or a .gguf); empty for a named tokenizer."""
    if not spec:
        return ""
    path = Path(spec).expanduser()
    try:
        if path.is_file():
            info = path.stat()
            return f"{info.st_size}:{info.st_mtime_ns}"
        if path.is_dir():
            files = [f for f in sorted(path.iterdir()) if f.is_file()]
            parts = [f"{f.name}:{f.stat().st_size}:{f.stat().st_mtime_ns}" for f in files]
            return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    except OSError:
        return "unreadable"
    return ""


def _reason(err: BaseException) -> str:
    text = " ".join(str(err).split())[:160]
    return text or type(err).__name__
