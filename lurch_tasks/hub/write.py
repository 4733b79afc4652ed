"""Writing one planned Parquet file: generate its rows in index order, cut row groups at fixed row / byte limits,
and return the file's record (SHA-256, sizes, the rows' content hashes). The same function runs in a one-machine
run, in a worker process, in a shard process on another machine and in a Ray task, so the bytes cannot differ."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import zlib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields
from functools import lru_cache
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq

from .. import __version__
from ..core.config import config_to_dict
from ..core.generation import generate_row
from ..core.rng import canonical_json
from ..core.shortcuts import AuditEntry, TaskAuditor, spread_indices
from ..dataset_builders._builder import (
    SPLIT,
    num_rows,
    release_arrow_memory,
    resolved_task,
    task_features,
    type_mismatches,
)
from .layout import AUDIT_ROWS, FILE_KEY, HF_META_KEY, META_KEY, PARQUET_OPTIONS, ROW_GROUP_BYTES, ROW_GROUP_ROWS
from .plan import LAYOUT_VERSION, MaterializeRequest, PlannedFile
from .store import Store

# A record is read back from a staging folder (another machine may have written it): every field is checked and
# the reads are bounded. Measured maxima (HANDOFF.md): the largest audit blob of the registered configs is 4.9 M
# characters, inflating to 19 MB (find_the_origin_long, 28 rows of 16k-128k tokens in one file; a file holds
# about 16 MiB of row JSON however many rows); a row hash takes 70 bytes of record.
MAX_AUDIT_CHARS = 64 * 2**20  # base64 characters of a record's audit
MAX_AUDIT_JSON_BYTES = 256 * 2**20  # what they inflate to (a zlib bomb stops here)
MAX_PATH_CHARS = 1_000
MAX_COUNT = 2**63 - 1  # sizes and row counts: what an int64 footer field holds
_SHA256 = re.compile(r"[0-9a-f]{64}")


def record_bytes_cap(rows: int) -> int:
    """The most bytes a record of a file of ``rows`` rows is read up to: its audit, 80 bytes per row hash (70 as
    written, indented), and 64 KiB for the other fields."""
    return MAX_AUDIT_CHARS + 80 * rows + 64 * 1024


def shown(value: Any) -> str:
    """A value of a record for an error message, short whatever its size."""
    if isinstance(value, (str, list, dict)) and len(value) > 40:
        return f"{type(value).__name__} of length {len(value)}"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


@dataclass(frozen=True)
class FileRecord:
    """What a written file holds; a sharded run keeps one per file beside the staged data."""

    path: str  # relative POSIX path inside the output folder
    sha256: str
    size: int  # bytes on disk
    num_rows: int
    num_bytes: int  # uncompressed data size (the sum of the row groups' sizes), as the card reports it
    row_hashes: tuple[str, ...]  # content hash of every row, in index order
    # the card's shortcut audit of the file's audited rows, measured by the process that wrote them
    # (``encode_audit``); None in a record of an older run: finalize then reads those rows back
    audit: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "row_hashes": list(self.row_hashes)}

    @classmethod
    def from_json(cls, data: Any) -> FileRecord:
        """A record as read from disk, every field's type and length checked: a one-line ValueError naming the
        field, its value and what is allowed."""
        if not isinstance(data, dict):
            raise ValueError(f"record: {shown(data)} is not allowed; allowed: a JSON object of "
                             f"{', '.join(f.name for f in fields(cls))}")
        names = [f.name for f in fields(cls)]
        for key in data:
            if key not in names:
                raise ValueError(f"record: field {shown(key)} is not allowed; allowed: {', '.join(names)}")
        for name in names[:-1]:  # audit may be missing: a record of an older run
            if name not in data:
                raise ValueError(f"record: field {name!r} is missing; allowed: a record with {', '.join(names)}")
        _check(data, "path", isinstance(data["path"], str) and 0 < len(data["path"]) <= MAX_PATH_CHARS,
               f"a relative path of 1 to {MAX_PATH_CHARS} characters")
        _check(data, "sha256", _is_sha256(data["sha256"]), "64 lowercase hexadecimal digits")
        for name in ("size", "num_rows", "num_bytes"):
            value = data[name]
            _check(data, name, isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT,
                   f"an integer in 0..{MAX_COUNT}")
        hashes = data["row_hashes"]
        _check(data, "row_hashes", isinstance(hashes, list) and len(hashes) == data["num_rows"],
               f"a list of one hash per row ({data['num_rows']} rows)")
        for k, digest in enumerate(hashes):
            if not _is_sha256(digest):
                raise ValueError(f"record: field 'row_hashes'[{k}] {shown(digest)} is not allowed; allowed: 64 "
                                 "lowercase hexadecimal digits")
        audit = data.get("audit")
        _check(data, "audit", audit is None or (isinstance(audit, str) and len(audit) <= MAX_AUDIT_CHARS),
               f"null or a string of at most {MAX_AUDIT_CHARS} characters")
        return cls(data["path"], data["sha256"], data["size"], data["num_rows"], data["num_bytes"], tuple(hashes),
                   audit)


def _is_sha256(value: Any) -> bool:
    return isinstance(value, str) and _SHA256.fullmatch(value) is not None


def _check(data: dict[str, Any], name: str, ok: bool, allowed: str) -> None:
    if not ok:
        raise ValueError(f"record: field {name!r} {shown(data.get(name))} is not allowed; allowed: {allowed}")


def encode_audit(entries: Sequence[AuditEntry]) -> str:
    """A file's audit entries as one compact string (zlib'd JSON, base64): a record stays a small JSON file."""
    text = json.dumps([entry.to_json() for entry in entries], separators=(",", ":"), allow_nan=True)
    return base64.b64encode(zlib.compress(text.encode("utf-8"), 6)).decode("ascii")


def decode_audit(blob: str) -> list[AuditEntry]:
    """``encode_audit``'s entries back; a one-line ValueError for anything else, read within ``MAX_AUDIT_CHARS``
    and inflated within ``MAX_AUDIT_JSON_BYTES``."""
    try:
        if len(blob) > MAX_AUDIT_CHARS:
            raise ValueError(f"{len(blob)} characters, more than {MAX_AUDIT_CHARS}")
        inflater = zlib.decompressobj()
        text = inflater.decompress(base64.b64decode(blob.encode("ascii"), validate=True), MAX_AUDIT_JSON_BYTES)
        if inflater.unconsumed_tail:
            raise ValueError(f"inflates past {MAX_AUDIT_JSON_BYTES} bytes")
        if not inflater.eof:
            raise ValueError("a truncated zlib stream")
        data = json.loads(text.decode("utf-8"))
        if not isinstance(data, list):
            raise ValueError(f"{type(data).__name__}, not a list of entries")
        return [AuditEntry.from_json(item) for item in data]
    except (ValueError, TypeError, zlib.error, RecursionError) as error:
        reason = " ".join(str(error).split())[:200]
        raise ValueError(f"audit: unreadable ({type(error).__name__}: {reason}); allowed: the record lurch "
                         "wrote") from None


def audited_positions(request: MaterializeRequest, name: str) -> list[int]:
    """The rows of config ``name`` the card's shortcut audit reads: ``AUDIT_ROWS`` evenly spaced ones."""
    return sorted(set(spread_indices(sum(f.rows for f in request.config_files(name)), AUDIT_ROWS)))


def stored_row(row: dict[str, Any], schema: pa.Schema) -> dict[str, Any]:
    """``row`` as it reads back from its Parquet file (the Arrow types of the schema): what the audit sees."""
    return pa.Table.from_pylist([row], schema=schema).to_pylist()[0]


@lru_cache(maxsize=32)
def _stamps(name: str, overrides_json: str, seed: int | None) -> tuple[str, str, str]:
    row = generate_row(resolved_task(name, json.loads(overrides_json) or None, seed), 0, SPLIT)
    return row["family_version"], row["config_hash"], row["source_hash"]


def config_meta(request: MaterializeRequest, name: str) -> dict[str, Any]:
    """The ``lurch`` footer metadata shared by every file of a config: how it was generated (no measured value:
    the fingerprint and the shortcut audit cover all files and live in the manifest)."""
    task = request.task(name)
    family_version, cfg_hash, src_hash = _stamps(name, request.overrides_json, request.seed)
    return {
        "config_name": name,
        "task": task.name,
        "family": task.family,
        "family_version": family_version,
        "config_hash": cfg_hash,
        "source_hash": src_hash,
        "seed": task.seed,
        "seed_override": request.seed,
        "overrides": request.overrides,
        "limit": request.limit,
        "max_rows_per_file": request.max_rows_per_file,
        "task_size": num_rows(task, None),
        "num_examples": num_rows(task, request.limit),
        "config": config_to_dict(task.config),
        "description": task.description,
        "paper_faithful": task.paper_faithful,
        "layout": LAYOUT_VERSION,
        "generator": f"lurch-tasks {__version__}",
    }


def features_of(request: MaterializeRequest, name: str) -> datasets.Features:
    return task_features(name, request.overrides or None, request.seed)


def file_schema(request: MaterializeRequest, planned: PlannedFile) -> pa.Schema:
    """The exact Arrow schema of a planned file: field types and order, and the footer metadata (``lurch`` and
    ``huggingface``, byte for byte); ``lurch validate`` compares every file with it."""
    features = features_of(request, planned.config)
    meta = {**config_meta(request, planned.config),
            FILE_KEY: {"number": planned.number, "count": planned.count, "rows": [planned.start, planned.stop]}}
    metadata = {
        HF_META_KEY: json.dumps({"info": {"features": features.to_dict()}}).encode("utf-8"),
        META_KEY: canonical_json(meta).encode("ascii"),
    }
    return features.arrow_schema.with_metadata(metadata)


def closes_row_group(rows: int, group_bytes: int, next_bytes: int) -> bool:
    """Whether a row of ``next_bytes`` of row JSON starts a new row group after ``rows`` rows of ``group_bytes``."""
    return rows > 0 and (rows >= ROW_GROUP_ROWS or group_bytes + next_bytes > ROW_GROUP_BYTES)


def write_file(request: MaterializeRequest, planned: PlannedFile, store: Store,
               on_row: Callable[[], None] | None = None) -> FileRecord:
    """Generate rows ``planned.start..stop`` and write them as ``store/planned.path``; one row group is in memory
    at a time. Row groups close at ``ROW_GROUP_ROWS`` rows or before ``ROW_GROUP_BYTES`` of row JSON."""
    task = request.task(planned.config)
    features = features_of(request, planned.config)
    schema = file_schema(request, planned)
    hashes: list[str] = []
    audited = [p for p in audited_positions(request, planned.config) if planned.start <= p < planned.stop]
    auditor = TaskAuditor(task) if audited else None
    entries: list[AuditEntry] = []
    group: list[dict[str, Any]] = []
    group_bytes = 0

    def flush(writer: pq.ParquetWriter) -> None:
        nonlocal group, group_bytes
        if group:
            writer.write_table(pa.Table.from_pylist(group, schema=schema), row_group_size=len(group))
        group, group_bytes = [], 0
        release_arrow_memory()

    with store.writing(planned.path) as sink, pq.ParquetWriter(sink, schema, **PARQUET_OPTIONS) as writer:
        for index in range(planned.start, planned.stop):
            row = generate_row(task, index, SPLIT)
            problems = type_mismatches(row, features)
            if problems:
                raise ValueError(f"{row.get('id', index)}: {problems[0]}; allowed: the field types of row 0 (a family "
                                 "must give every row the same types)")
            encoded = canonical_json(row).encode("ascii")
            hashes.append(hashlib.sha256(encoded).hexdigest())
            if closes_row_group(len(group), group_bytes, len(encoded)):
                flush(writer)
            group.append(row)
            group_bytes += len(encoded)
            if auditor is not None and index in audited:  # measured here, in parallel, not re-read at finalize
                entries.append(auditor.measure(stored_row(row, schema)))
            if on_row is not None:
                on_row()
        flush(writer)
    with store.open(planned.path) as handle:
        footer = pq.read_metadata(handle)
    data_bytes = sum(footer.row_group(k).total_byte_size for k in range(footer.num_row_groups))
    return FileRecord(planned.path, store.sha256(planned.path), store.size(planned.path), footer.num_rows, data_bytes,
                      tuple(hashes), encode_audit(entries) if entries else None)
