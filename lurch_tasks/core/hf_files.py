"""A Hugging Face tokenizer folder read without transformers, once transformers has been seen to read it the same.

transformers' ``AutoTokenizer.from_pretrained`` spends ~0.15 s of a cold start around the Rust load of
``tokenizer.json`` (it parses the whole file again in Python, for its added tokens). When the Rust pipeline it
builds serializes exactly as ``tokenizers.Tokenizer.from_file`` of that file does, counting with either gives the
same tokens, so a later process may load the file alone. That fact is recorded in the disk cache
(``core.disk_cache``) under the folder's content (every file but model weights, by hash) and both libraries'
versions: another file, edit or version reads another record, and without a record (or without a cache)
transformers loads the folder as before.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

TOKENIZER_FILE = "tokenizer.json"
RECORD_TABLE = "hf-tokenizer-record"
RECORD_RULE = 2  # bump when what a record means or its key changes
MAX_HASHED_BYTES = 64 * 2**20  # the largest tokenizer files are a few tens of MB
# Model weights sit beside a tokenizer in a model folder; no tokenizer reads them, and hashing gigabytes would
# cost more than the load this saves.
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack", ".onnx", ".gguf", ".npz")


@dataclass(frozen=True)
class FolderRecord:
    """What transformers made of a folder: whether its Rust pipeline is the file's own (``equivalent``), and the
    pipeline's content key (``HFTokenCounter.table_stamp``; None for a slow tokenizer)."""

    equivalent: bool
    stamp: str | None


def tokenizer_file(name: str) -> Path | None:
    """``tokenizer.json`` of a tokenizer spec that is a local folder holding one; None for anything else (a GGUF
    file, a hub id)."""
    if name.lower().endswith(".gguf"):
        return None
    path = Path(name).expanduser() / TOKENIZER_FILE
    return path if path.is_file() else None


def folder_digest(folder: Path) -> str | None:
    """SHA-256 over the names, sizes and file digests of the folder's files (sorted), model weights left out;
    None when a file is larger than any tokenizer file (``MAX_HASHED_BYTES``): hashing it in every process would
    cost more than the load a record saves, so such a folder keeps transformers' path."""
    digest = hashlib.sha256()
    for path in sorted(folder.iterdir()):
        if path.suffix.lower() in _WEIGHT_SUFFIXES or not path.is_file():
            continue
        size = path.stat().st_size
        if size > MAX_HASHED_BYTES:
            return None
        with path.open("rb") as handle:
            content = hashlib.file_digest(handle, "sha256").digest()
        digest.update(path.name.encode("utf-8") + b"\0" + str(size).encode("ascii") + b"\0" + content)
    return digest.hexdigest()


def record_key(file: Path) -> dict[str, object] | None:
    """The disk-cache key of the folder's record; None when the folder is not hashed (``folder_digest``)."""
    from importlib.metadata import version

    files = folder_digest(file.parent)
    if files is None:
        return None
    return {"files": files, "transformers": version("transformers"), "tokenizers": version("tokenizers"),
            "rule": RECORD_RULE}


def read_record(file: Path) -> FolderRecord | None:
    """The record of the folder of ``file`` as it is now, or None (none yet, no cache, unreadable)."""
    from .disk_cache import read_table, tables_enabled

    if not tables_enabled():
        return None
    try:
        key = record_key(file)
        table = None if key is None else read_table(RECORD_TABLE, key)
    except (OSError, ValueError, ImportError):  # a folder changing under us, transformers not installed: no record
        return None
    if table is None:
        return None
    stamp = table["stamp"].tobytes().decode("ascii")
    return FolderRecord(bool(table["equivalent"][0]), stamp or None)


def save_record(file: Path, backend, stamp: str | None) -> FolderRecord | None:
    """Compare transformers' Rust pipeline (``backend``, None for a slow tokenizer) with the file's own and record
    the outcome (best effort: a cache that cannot be written keeps nothing); None without a cache (nothing is
    compared: no later process could read the outcome)."""
    from tokenizers import Tokenizer

    from .disk_cache import tables_enabled, write_table

    if not tables_enabled():
        return None
    equivalent = backend is not None and Tokenizer.from_file(str(file)).to_str() == backend.to_str()
    record = FolderRecord(equivalent, stamp)
    arrays = {"equivalent": np.array([equivalent], dtype=np.uint8),
              "stamp": np.frombuffer((stamp or "").encode("ascii"), dtype=np.uint8)}
    try:
        key = record_key(file)
        if key is not None:
            write_table(RECORD_TABLE, key, arrays)
    except (OSError, ValueError, ImportError):
        pass
    return record


def load_file(file: Path):
    """The Rust tokenizer of ``tokenizer.json`` alone."""
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(file))
