"""``lurch materialize``: run a family builder per config and write deterministic Parquet plus the card."""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
from datasets.naming import filenames_for_dataset_split

from .. import __version__
from ..core.config import config_to_dict
from ..core.instance import content_hash
from ..core.rng import canonical_json
from ..core.shortcuts import TaskAuditor, lines_to_json, spread_indices
from ..core.workers import mortal_children
from ..dataset_builders._builder import (
    SPLIT,
    builder_class,
    check_limit,
    num_rows,
    release_arrow_memory,
    resolved_task,
)
from .card import render_card
from .layout import (
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
    progress_bars,
    read_summary,
    shard_file_name,
)
from .manifest import (
    CARD_NAME,
    JOURNAL_NAME,
    MANIFEST_NAME,
    STAGING_MARKER,
    build_manifest,
    config_entry,
    owned_card,
    owned_config,
    process_alive,
    read_json,
    read_manifest,
    write_json_atomic,
)

AUDIT_ROWS = 240  # rows the card's shortcut audit reads (evenly spaced)

# ---------------------------------------------------------------- materialize


def _arrow_batches(files: Sequence[str]) -> Iterator[pa.RecordBatch]:
    """Record batches of the builder's Arrow cache files in order, read one at a time (not memory-mapped), so
    memory stays flat in the number of rows."""
    for path in files:
        with pa.OSFile(path, "rb") as source:
            yield from pa.ipc.open_stream(source)


class _RowStats:
    """One streaming pass over the rows: content hashes, canonical-JSON sizes, the index column, the first
    row's generation stamps, and the card's shortcut audit of the rows at ``keep`` positions (fed to
    ``auditor`` as they pass; no row is held after its batch)."""

    STAMPS = ("family_version", "config_hash", "source_hash")

    def __init__(self, batches: Iterator[pa.RecordBatch], keep: Sequence[int], auditor: TaskAuditor) -> None:
        self.hashes: list[str] = []
        self.sizes: list[int] = []
        self.indices: list[int] = []
        self.first: dict[str, Any] | None = None
        wanted = set(keep)
        for batch in batches:
            for row in batch.to_pylist():
                position = len(self.hashes)
                self.hashes.append(content_hash(row))
                self.sizes.append(len(canonical_json(row)))
                self.indices.append(row["index"])
                if self.first is None:
                    self.first = {key: row[key] for key in self.STAMPS}
                if position in wanted:
                    auditor.add(row)
            del batch
            release_arrow_memory()


def _arrow_files(builder: datasets.DatasetBuilder) -> tuple[list[str], pa.Schema]:
    """The builder's Arrow cache files of the split in row order, and their schema, found without opening them
    as a Dataset: that memory-maps every record batch (about 40 MiB of pages at 6,400 rows of 16k tokens)."""
    split = builder.info.splits[SPLIT]
    files = filenames_for_dataset_split(builder.cache_dir, builder.dataset_name, SPLIT, "arrow", split.shard_lengths)
    if not files or not all(os.path.isfile(path) for path in files):  # another datasets layout: ask it
        dataset = builder.as_dataset(split=SPLIT)
        files = [entry["filename"] for entry in dataset.cache_files]
        del dataset
    with pa.OSFile(files[0], "rb") as source:
        schema = pa.ipc.open_stream(source).schema
    return files, schema


def _next_rows(batches: Iterator[pa.RecordBatch], pending: list[pa.RecordBatch], count: int) -> pa.Table:
    """The next ``count`` rows of the stream as one table; the rest of the last batch stays in ``pending``."""
    taken, have = [], 0
    while have < count:
        batch = pending.pop(0) if pending else next(batches)
        if have + batch.num_rows > count:
            cut = count - have
            pending.insert(0, batch.slice(cut))
            batch = batch.slice(0, cut)
        taken.append(batch)
        have += batch.num_rows
    return pa.Table.from_batches(taken)


def _write_config(
    batches: Iterator[pa.RecordBatch],
    schema: pa.Schema,
    features: datasets.Features,
    meta: dict[str, Any],
    sizes: Sequence[int],
    config_dir: Path,
    max_rows_per_file: int,
) -> None:
    """Write the streamed rows as ``config_dir/test-KKKKK-of-NNNNN.parquet`` with fixed cuts and writer options;
    one row group is in memory at a time."""
    metadata = {
        HF_META_KEY: json.dumps({"info": {"features": features.to_dict()}}).encode("utf-8"),
        META_KEY: canonical_json(meta).encode("ascii"),
    }
    schema = schema.with_metadata(metadata)
    files = plan_chunks(sizes, max_rows_per_file, MAX_BYTES_PER_FILE)
    config_dir.mkdir(parents=True)
    pending: list[pa.RecordBatch] = []
    for shard, (start, stop) in enumerate(files):
        groups = plan_chunks(sizes[start:stop], ROW_GROUP_ROWS, ROW_GROUP_BYTES)
        with pq.ParquetWriter(str(config_dir / shard_file_name(shard, len(files))), schema, **PARQUET_OPTIONS) as w:
            for group_start, group_stop in groups:
                # One contiguous chunk per column and row group, so page layout cannot depend on how the
                # build was chunked.
                group = _next_rows(batches, pending, group_stop - group_start).combine_chunks()
                w.write_table(group.replace_schema_metadata(metadata), row_group_size=group_stop - group_start)
                del group
                release_arrow_memory()


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
    files, schema = _arrow_files(builder)  # rows are streamed from the cache files from here on
    expected = num_rows(task, limit)
    auditor = TaskAuditor(task)
    stats = _RowStats(_arrow_batches(files), spread_indices(expected, AUDIT_ROWS), auditor)
    if stats.indices != list(range(expected)):
        raise RuntimeError(f"{name}: the builder returned rows out of index order or incomplete")
    hashes, sizes, first = stats.hashes, stats.sizes, stats.first
    audit = _shortcut_audit(auditor)
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
    _write_config(_arrow_batches(files), schema, builder.info.features, meta, sizes, build_dir / name,
                  max_rows_per_file)


def _shortcut_audit(auditor: TaskAuditor) -> dict[str, Any]:
    """The shortcut audit on (up to ``AUDIT_ROWS`` evenly spaced of) the rows being written, for the card."""
    result = auditor.result()
    return {"rows": result.rows, "passed": result.passed, "lines": lines_to_json(result.lines)}


def _check_materialize_args(config_names: object, out_dir: object, num_proc: object) -> list[str]:
    names = [config_names] if isinstance(config_names, str) else list(config_names)  # type: ignore[call-overload]
    if not names or not all(isinstance(n, str) for n in names):
        raise ValueError(f"config_names: {config_names!r} is not allowed; allowed: a non-empty list of config names")
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"config_names: {duplicates[0]!r} is given twice; allowed: each config once")
    if not (isinstance(num_proc, int) and not isinstance(num_proc, bool) and num_proc >= 1):
        raise ValueError(f"num_proc: {num_proc!r} is not allowed; allowed: a positive integer")
    if not str(out_dir).strip():
        raise ValueError("out: '' is not allowed; allowed: a folder path (created if missing)")
    out = Path(out_dir)  # type: ignore[arg-type]
    if out.exists() and not out.is_dir():
        raise ValueError(f"out: {str(out)!r} is a file; allowed: a folder (created if missing)")
    for parent in out.parents:
        if parent.exists() and not parent.is_dir():
            raise ValueError(f"out: {str(parent)!r} is a file, so {str(out)!r} cannot be a folder; allowed: a path "
                             "whose parents are folders")
    return names


def check_not_view(name: str) -> None:
    from ..core.registry import get_task

    stored = get_task(name).stored_as
    if stored:
        raise ValueError(f"config: {name!r} is a view of {stored!r} (its lm-eval task reads that config's rows); "
                         f"allowed: materialize {stored!r}")


def check_ownership(out_dir: Path, names: Sequence[str], overwrite: bool) -> None:
    """Refuse (one line) to replace a card or config folder that an earlier run did not write, unless
    ``overwrite``. Everything else in ``out_dir`` is left alone in any case."""
    if not out_dir.is_dir():
        return
    manifest = read_manifest(out_dir)
    conflicts = [f"{name}/" for name in names if (out_dir / name).exists() and not owned_config(out_dir, name,
                                                                                              manifest)]
    if (out_dir / CARD_NAME).exists() and not owned_card(out_dir, manifest):
        conflicts.insert(0, CARD_NAME)
    if conflicts and not overwrite:
        raise FileExistsError(f"out: {str(out_dir)!r} already holds {', '.join(conflicts)} that lurch did not write "
                              "(or that changed since); allowed: another folder, or --overwrite to replace them")


def _kept_configs(out_dir: Path, names: Sequence[str]) -> list[Path]:
    """Config folders of an earlier run that this run keeps (and lists on the regenerated card)."""
    if not out_dir.is_dir():
        return []
    manifest = read_manifest(out_dir) or {"configs": {}}
    return [d for d in config_dirs(out_dir) if d.name not in names and d.name in manifest["configs"]]


def remove_stale_staging(out_dir: Path) -> list[Path]:
    """Staging folders of runs into ``out_dir`` that were killed (owner process gone, no journal needs them)."""
    if not out_dir.parent.is_dir():
        return []
    journal = read_json(out_dir / JOURNAL_NAME, "journal") if out_dir.is_dir() else None
    needed = {journal.get("staging")} if isinstance(journal, dict) else set()
    removed = []
    for candidate in sorted(out_dir.parent.glob(f".{out_dir.name}.tmp-*")):
        marker = candidate / STAGING_MARKER
        if not candidate.is_dir() or not marker.is_file() or str(candidate) in needed:
            continue
        try:
            pid = int(marker.read_text(encoding="ascii").strip())
        except (OSError, ValueError):
            continue
        if not process_alive(pid):
            shutil.rmtree(candidate, ignore_errors=True)
            removed.append(candidate)
    return removed


def recover_interrupted(out_dir: Path) -> list[str]:
    """Finish a replacement that a killed run left half-done (its journal is still there); returns the
    configs it completed."""
    journal = read_json(out_dir / JOURNAL_NAME, "journal") if out_dir.is_dir() else None
    if journal is None:
        return []
    staging = Path(journal.get("staging", ""))
    if not (staging / "build").is_dir():
        raise ValueError(f"out: {str(out_dir)!r} was left half-replaced by an interrupted run whose staging folder "
                         f"{str(staging)!r} is gone; allowed: re-run with --overwrite")
    _complete_moves(out_dir, journal)
    shutil.rmtree(staging, ignore_errors=True)
    return list(journal["names"])


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
    overwrite: bool = False,
) -> Path:
    """Write ``out_dir/<config>/test-*.parquet`` for every config, ``out_dir/README.md`` and the manifest.

    The bytes depend only on (configs, overrides, seed, limit) and the package/pyarrow versions -- not on
    ``num_proc``, the process or the hash seed. Everything is built in a staging folder next to
    ``out_dir``. A new ``out_dir`` appears with one rename; in an existing one, each rebuilt config and the
    card are renamed into place under a journal, so a killed run is completed by the next one. Configs of
    earlier runs that are not rebuilt are kept and listed on the new card; files lurch did not write are
    never replaced (unless ``overwrite``) nor deleted.
    """
    names = _check_materialize_args(config_names, out_dir, num_proc)
    out_dir = Path(out_dir)
    check_limit(limit)
    if not isinstance(max_rows_per_file, int) or max_rows_per_file < 1:
        raise ValueError(f"max_rows_per_file: {max_rows_per_file!r} is not allowed; allowed: a positive integer")
    for name in names:  # fail fast: unknown configs, views, bad overrides/seed, missing builders
        check_not_view(name)
        builder_class(resolved_task(name, overrides, seed).family)
    remove_stale_staging(out_dir)
    recover_interrupted(out_dir)
    check_ownership(out_dir, names, overwrite)
    kept = _kept_configs(out_dir, names)
    kept_summaries = [read_summary(d) for d in kept]  # damaged earlier output fails here, before any work

    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
    (staging / STAGING_MARKER).write_text(str(os.getpid()), encoding="ascii")
    try:
        build = staging / "build"
        build.mkdir()
        with progress_bars(progress), mortal_children():
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
        (build / CARD_NAME).write_text(render_card(summaries), encoding="utf-8", newline="\n")
        entries = {name: config_entry(build, name, read_summary(build / name).meta) for name in names}
        previous = (read_manifest(out_dir) or {"configs": {}}) if out_dir.is_dir() else {"configs": {}}
        entries.update({d.name: previous["configs"][d.name] for d in kept})
        write_json_atomic(build / MANIFEST_NAME, build_manifest(build, entries, f"lurch-tasks {__version__}"))
        with _signals_blocked():  # a Ctrl-C waits for the renames, so they finish or (if killed) resume
            _move_into_place(build, out_dir, names, staging)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return out_dir


@contextmanager
def _signals_blocked() -> Iterator[None]:
    blocked = {signal.SIGINT, signal.SIGTERM}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _move_into_place(build: Path, out_dir: Path, names: Sequence[str], staging: Path) -> None:
    """Rename the built folder into place (new ``out_dir``: one atomic rename), or replace each built config,
    the card and the manifest under a journal that a later run uses to finish the job if this one dies."""
    if not out_dir.exists():
        os.replace(build, out_dir)
        return
    journal = {"staging": str(staging), "names": list(names)}
    write_json_atomic(out_dir / JOURNAL_NAME, journal)
    _complete_moves(out_dir, journal)


def _complete_moves(out_dir: Path, journal: dict[str, Any]) -> None:
    """Idempotent: every step checks what is already done, so a resumed run picks up where one stopped."""
    staging = Path(journal["staging"])
    build, trash = staging / "build", staging / "trash"
    trash.mkdir(exist_ok=True)
    for name in journal["names"]:
        if not (build / name).exists():
            continue  # already moved
        target = out_dir / name
        if target.exists():
            os.replace(target, trash / name)
        os.replace(build / name, target)
    for file_name in (CARD_NAME, MANIFEST_NAME):  # the manifest last: it vouches for what is in place
        if (build / file_name).exists():
            os.replace(build / file_name, out_dir / file_name)
    (out_dir / JOURNAL_NAME).unlink(missing_ok=True)
