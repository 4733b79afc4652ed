"""``lurch materialize``: run a family builder per config and write deterministic Parquet plus the card."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq

from .. import __version__
from ..core.config import config_to_dict
from ..core.instance import content_hash
from ..core.registry import Task
from ..core.rng import canonical_json
from ..core.shortcuts import audit_rows, lines_to_json, spread_indices
from ..dataset_builders._builder import SPLIT, builder_class, check_limit, num_rows, resolved_task
from .card import render_card
from .layout import (
    HASH_BATCH_ROWS,
    HF_META_KEY,
    MAX_BYTES_PER_FILE,
    MAX_ROWS_PER_FILE,
    META_KEY,
    PARQUET_OPTIONS,
    ROW_GROUP_BYTES,
    ROW_GROUP_ROWS,
    config_dirs,
    fingerprint,
    plan_chunks,
    read_summary,
    shard_file_name,
)

AUDIT_ROWS = 240  # rows the card's shortcut audit reads (evenly spaced)

# ---------------------------------------------------------------- materialize


@contextmanager
def _progress_bars(enabled: bool) -> Iterator[None]:
    """Turn datasets' (tqdm) progress bars on or off for the block, restoring the previous state."""
    before = datasets.is_progress_bar_enabled()
    try:
        if enabled != before:
            (datasets.enable_progress_bars if enabled else datasets.disable_progress_bars)()
        yield
    finally:
        if datasets.is_progress_bar_enabled() != before:
            (datasets.enable_progress_bars if before else datasets.disable_progress_bars)()


def _row_stats(table: pa.Table) -> tuple[list[str], list[int]]:
    """Content hash and canonical-JSON size of every row, in table order."""
    hashes: list[str] = []
    sizes: list[int] = []
    for batch in table.to_batches(max_chunksize=HASH_BATCH_ROWS):
        for row in batch.to_pylist():
            hashes.append(content_hash(row))
            sizes.append(len(canonical_json(row)))
    return hashes, sizes


def _write_config(
    table: pa.Table,
    features: datasets.Features,
    meta: dict[str, Any],
    sizes: Sequence[int],
    config_dir: Path,
    max_rows_per_file: int,
) -> None:
    """Write ``table`` as ``config_dir/test-KKKKK-of-NNNNN.parquet`` with fixed cuts and writer options."""
    metadata = {
        HF_META_KEY: json.dumps({"info": {"features": features.to_dict()}}).encode("utf-8"),
        META_KEY: canonical_json(meta).encode("ascii"),
    }
    schema = table.schema.with_metadata(metadata)
    files = plan_chunks(sizes, max_rows_per_file, MAX_BYTES_PER_FILE)
    config_dir.mkdir(parents=True)
    for shard, (start, stop) in enumerate(files):
        # One contiguous chunk per column, so page layout cannot depend on how the build was chunked.
        part = table.slice(start, stop - start).combine_chunks().replace_schema_metadata(metadata)
        groups = plan_chunks(sizes[start:stop], ROW_GROUP_ROWS, ROW_GROUP_BYTES)
        with pq.ParquetWriter(str(config_dir / shard_file_name(shard, len(files))), schema, **PARQUET_OPTIONS) as w:
            for group_start, group_stop in groups:
                w.write_table(
                    part.slice(group_start, group_stop - group_start), row_group_size=group_stop - group_start
                )


def _build_config(
    name: str,
    build_dir: Path,
    cache_dir: Path,
    *,
    num_proc: int,
    overrides: Mapping[str, Any] | None,
    seed: int | None,
    limit: int | None,
    max_rows_per_file: int,
) -> None:
    """Run the family builder for one config and write its Parquet files into ``build_dir/name``."""
    task = resolved_task(name, overrides, seed)
    builder = builder_class(task.family)(
        cache_dir=str(cache_dir / name),
        config_name=name,
        overrides=dict(overrides or {}) or None,
        seed=seed,
        limit=limit,
    )
    builder.download_and_prepare(num_proc=num_proc if num_proc > 1 else None)
    dataset = builder.as_dataset(split=SPLIT)
    table = dataset.data.table
    expected = num_rows(task, limit)
    if table.column("index").to_pylist() != list(range(expected)):
        raise RuntimeError(f"{name}: the builder returned rows out of index order or incomplete")
    hashes, sizes = _row_stats(table)
    first = table.slice(0, 1).to_pylist()[0]
    audit = _shortcut_audit(task, table)
    meta = {
        "config_name": name,
        "task": task.name,
        "family": task.family,
        "family_version": first["family_version"],
        "config_hash": first["config_hash"],
        "source_hash": first["source_hash"],
        "seed": task.seed,
        "seed_override": seed,
        "overrides": dict(overrides or {}),
        "limit": limit,
        "task_size": num_rows(task, None),
        "num_examples": expected,
        "fingerprint": fingerprint(hashes),
        "config": config_to_dict(task.config),
        "description": task.description,
        "paper_faithful": task.paper_faithful,
        "shortcut_audit": audit,
        "generator": f"lurch-tasks {__version__}",
    }
    _write_config(table, builder.info.features, meta, sizes, build_dir / name, max_rows_per_file)


def _shortcut_audit(task: Task, table: pa.Table) -> dict[str, Any]:
    """The shortcut audit on (up to ``AUDIT_ROWS`` evenly spaced of) the rows being written, for the card."""
    positions = spread_indices(table.num_rows, AUDIT_ROWS)
    rows = table.take(positions).to_pylist()
    result = audit_rows(task, rows)
    return {"rows": result.rows, "passed": result.passed, "lines": lines_to_json(result.lines)}


def _check_materialize_args(config_names: object, out_dir: Path, num_proc: object) -> list[str]:
    names = [config_names] if isinstance(config_names, str) else list(config_names)  # type: ignore[call-overload]
    if not names or not all(isinstance(n, str) for n in names):
        raise ValueError(f"config_names: {config_names!r} is not allowed; allowed: a non-empty list of config names")
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"config_names: {duplicates[0]!r} is given twice; allowed: each config once")
    if not (isinstance(num_proc, int) and not isinstance(num_proc, bool) and num_proc >= 1):
        raise ValueError(f"num_proc: {num_proc!r} is not allowed; allowed: a positive integer")
    if out_dir.exists() and not out_dir.is_dir():
        raise ValueError(f"out_dir: {str(out_dir)!r} is a file; allowed: a folder (created if missing)")
    return names


def materialize(
    config_names: list[str],
    out_dir: Path,
    *,
    num_proc: int = 1,
    overrides: dict | None = None,
    seed: int | None = None,
    limit: int | None = None,
    progress: bool = True,
    max_rows_per_file: int = MAX_ROWS_PER_FILE,
) -> Path:
    """Write ``out_dir/<config>/test-*.parquet`` for every config, plus ``out_dir/README.md``.

    The bytes depend only on (configs, overrides, seed, limit) and the package/pyarrow versions -- not on
    ``num_proc``, the process or the hash seed. Everything is built in a temporary folder next to
    ``out_dir`` and renamed into place: each config folder is replaced whole, configs already in
    ``out_dir`` that are not rebuilt are kept, and the card is regenerated to list all of them.
    """
    out_dir = Path(out_dir)
    names = _check_materialize_args(config_names, out_dir, num_proc)
    check_limit(limit)
    if not isinstance(max_rows_per_file, int) or max_rows_per_file < 1:
        raise ValueError(f"max_rows_per_file: {max_rows_per_file!r} is not allowed; allowed: a positive integer")
    for name in names:  # fail fast: unknown configs, bad overrides/seed, missing builders
        builder_class(resolved_task(name, overrides, seed).family)
    kept = [d for d in config_dirs(out_dir) if d.name not in names] if out_dir.is_dir() else []
    kept_summaries = [read_summary(d) for d in kept]  # foreign Parquet folders fail here, before any work

    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
    try:
        build = staging / "build"
        build.mkdir()
        with _progress_bars(progress):
            for name in names:
                _build_config(
                    name,
                    build,
                    staging / "cache",
                    num_proc=num_proc,
                    overrides=overrides,
                    seed=seed,
                    limit=limit,
                    max_rows_per_file=max_rows_per_file,
                )
        summaries = [read_summary(build / name) for name in names] + kept_summaries
        (build / "README.md").write_text(render_card(summaries), encoding="utf-8", newline="\n")
        _move_into_place(build, out_dir, names, staging / "trash")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return out_dir


def _move_into_place(build: Path, out_dir: Path, names: Sequence[str], trash: Path) -> None:
    """Rename the built folder (or, when ``out_dir`` exists, each built config and the card) into place."""
    if not out_dir.exists():
        os.replace(build, out_dir)
        return
    trash.mkdir()
    for name in names:
        target = out_dir / name
        if target.exists():
            os.replace(target, trash / name)
        os.replace(build / name, target)
    os.replace(build / "README.md", out_dir / "README.md")

