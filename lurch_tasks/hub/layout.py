"""The layout of a materialized folder: fixed output parameters, file names, fingerprints, and reading a
folder's Parquet footers back (DESIGN 7).

Folder layout::

    OUT/README.md                                  dataset card (YAML header: configs, dataset_info, ...)
    OUT/<config>/test-00000-of-0000N.parquet       rows in index order, split at fixed row/byte limits

Every Parquet file carries two schema-metadata entries: ``huggingface`` (the datasets Features, so
``load_dataset`` restores exact types) and ``lurch`` (canonical JSON describing how the config was
generated and its row count, plus the file's own place in the plan under ``file``). What covers all files of a
config -- its fingerprint and shortcut audit -- is merged when the run is finalized (each file's audited rows
are measured by the worker that wrote it) and kept in the manifest;
the card is rendered from the footers and the manifest.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import datasets
import pyarrow.parquet as pq

from ..dataset_builders._builder import SPLIT

# ---------------------------------------------------------------- fixed output parameters
# Changing any of these changes the output bytes: treat them like a format version (plan.LAYOUT_VERSION; the file
# plan's own parameters live in plan.py).
ROW_GROUP_ROWS = 1_000
ROW_GROUP_BYTES = 4 * 2**20  # small row groups: materialize holds one at a time, so memory stays flat
PARQUET_OPTIONS: dict[str, Any] = {
    "version": "2.6",
    "compression": "zstd",
    "compression_level": 3,
    "use_dictionary": True,
    "write_statistics": True,
    "data_page_version": "1.0",
    "data_page_size": 1 << 20,
    "write_batch_size": 1024,
    "store_schema": True,
    "write_page_index": False,
    "write_page_checksum": False,
}
HASH_BATCH_ROWS = 64
AUDIT_ROWS = 240  # rows the card's shortcut audit reads (evenly spaced)
MAX_REPORTED_PROBLEMS = 100

META_KEY = b"lurch"
FILE_KEY = "file"  # the one entry of a file's ``lurch`` metadata that differs between the files of a config
HF_META_KEY = b"huggingface"
CODE_LICENSE = "Apache-2.0"
TAGS = ["long-context", "reasoning", "synthetic", "lurch"]
_PART = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


def shard_file_name(shard: int, num_shards: int, split: str = SPLIT) -> str:
    return f"{split}-{shard:05d}-of-{num_shards:05d}.parquet"


def fingerprint(row_hashes: Iterable[str]) -> str:
    """SHA-256 over the rows' content hashes (hex), one per line, in index order."""
    digest = hashlib.sha256()
    for row_hash in row_hashes:
        digest.update(row_hash.encode("ascii") + b"\n")
    return digest.hexdigest()


def size_category(num_rows_total: int) -> str:
    """The Hub's ``size_categories`` bucket of a row count."""
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if num_rows_total < limit:
            return label
    return "1M<n<10M" if num_rows_total < 10_000_000 else "n>10M"


def feature_type(feature: Any) -> str:
    """Short human-readable type of a datasets feature (for the card's field table)."""
    if isinstance(feature, dict):
        return "struct{" + ", ".join(f"{key}: {feature_type(sub)}" for key, sub in feature.items()) + "}"
    if isinstance(feature, datasets.List):
        return f"list<{feature_type(feature.feature)}>"
    return str(feature.dtype)


# ---------------------------------------------------------------- reading a folder


@dataclass(frozen=True)
class ConfigSummary:
    """What the card needs to know about one materialized config, read from its Parquet footers."""

    name: str
    files: tuple[str, ...]  # relative POSIX paths inside the folder
    num_examples: int
    num_bytes: int  # uncompressed Parquet data size
    download_size: int  # bytes of the Parquet files
    features: datasets.Features
    meta: dict[str, Any]  # the ``lurch`` metadata shared by every file of the config (``shared_meta``)
    fingerprint: str  # SHA-256 over the rows' content hashes in index order (from the manifest)
    shortcut_audit: dict[str, Any] | None  # the card's shortcut audit of the rows (from the manifest)


def config_files(config_dir: Path) -> list[Path]:
    return sorted(config_dir.glob(f"{SPLIT}-*.parquet"))


def config_dirs(folder: Path) -> list[Path]:
    """Sub-folders holding ``test-*.parquet`` files, by name (hidden folders are never configs)."""
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".") and config_files(p))


def file_meta(path: Path) -> tuple[dict[str, Any], datasets.Features]:
    metadata = pq.read_schema(path).metadata or {}
    if META_KEY not in metadata or HF_META_KEY not in metadata:
        raise ValueError(
            f"folder: {path} has no lurch-tasks metadata; allowed: Parquet files written by `lurch materialize`"
        )
    hf = json.loads(metadata[HF_META_KEY])
    return json.loads(metadata[META_KEY]), datasets.Features.from_dict(hf["info"]["features"])


def shared_meta(meta: dict[str, Any]) -> dict[str, Any]:
    """A file's ``lurch`` metadata without its own ``file`` entry: equal for every file of a config."""
    return {key: value for key, value in meta.items() if key != FILE_KEY}


def read_summary(config_dir: Path, entry: dict[str, Any] | None = None) -> ConfigSummary:
    """Summary of one config folder from its Parquet footers (no row is read) and its manifest ``entry`` (the
    fingerprint and shortcut audit measured over all files; folders of layout 1 kept them in the footers)."""
    files = config_files(config_dir)
    if not files:
        raise ValueError(f"folder: {config_dir} holds no {SPLIT}-*.parquet files; allowed: a materialized config")
    full, features = file_meta(files[0])
    meta = shared_meta(full)
    num_examples = num_bytes = 0
    for path in files:
        if shared_meta(file_meta(path)[0]) != meta:
            raise ValueError(f"folder: {path} was written by another materialize run than {files[0].name}")
        parquet_meta = pq.read_metadata(path)
        num_examples += parquet_meta.num_rows
        num_bytes += sum(parquet_meta.row_group(k).total_byte_size for k in range(parquet_meta.num_row_groups))
    entry = entry or {}
    return ConfigSummary(
        name=config_dir.name,
        files=tuple(f"{config_dir.name}/{path.name}" for path in files),
        num_examples=num_examples,
        num_bytes=num_bytes,
        download_size=sum(path.stat().st_size for path in files),
        features=features,
        meta=meta,
        fingerprint=entry.get("fingerprint", meta.get("fingerprint", "")),
        shortcut_audit=entry.get("shortcut_audit", meta.get("shortcut_audit")),
    )


def summarize_folder(folder: Path, manifest: dict[str, Any] | None = None) -> list[ConfigSummary]:
    """Summaries of every config folder, with the fingerprints and audits of ``manifest`` (default: the folder's)."""
    if manifest is None:
        from .manifest import read_manifest

        manifest = read_manifest(folder) or {"configs": {}}
    return [read_summary(d, manifest["configs"].get(d.name)) for d in config_dirs(folder)]


@contextmanager
def progress_bars(enabled: bool) -> Iterator[None]:
    """Turn datasets' (tqdm) progress bars on or off for the block, restoring the previous state."""
    before = datasets.is_progress_bar_enabled()
    try:
        if enabled != before:
            (datasets.enable_progress_bars if enabled else datasets.disable_progress_bars)()
        yield
    finally:
        if datasets.is_progress_bar_enabled() != before:
            (datasets.enable_progress_bars if before else datasets.disable_progress_bars)()
