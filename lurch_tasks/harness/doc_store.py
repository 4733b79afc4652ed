"""Docs streamed into a memory-mapped Arrow file, so `lurch eval` never holds all its docs as Python objects.

``datasets.Dataset.from_list`` needs every row in memory at once (and builds column lists beside them): for a
long-context task that is most of a run's memory, growing with ``--limit``. Here rows arrive one at a time,
are converted in small batches (each batch's types inferred by pyarrow, as ``from_list`` does), spilled to
disk, and finally written with the types unified over all batches (the same permissive promotion: a struct
field one batch lacks is null there, a null column takes the others' type) into one Arrow stream file that
``datasets`` memory-maps. The dataset equals ``from_list`` of the same rows: columns, types and values.

The files live in a per-process folder in the system's temporary folder (``TMPDIR``; on a RAM-backed /tmp point it
at a disk to make the docs' pages reclaimable), removed at exit.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

import pyarrow as pa

BATCH_ROWS = 16  # rows converted at once: enough for pyarrow's batch overhead to vanish, little memory
BATCH_PROMPT_CHARS = 1 << 20  # ... or fewer, once their prompts reach this (a long-context row is megabytes)


def batches(rows: Iterable[dict[str, Any]], size: int = BATCH_ROWS,
            chars: int = BATCH_PROMPT_CHARS) -> Iterator[list[dict[str, Any]]]:
    """``rows`` in lists of at most ``size`` rows, closed early once their prompts hold ``chars`` characters."""
    batch: list[dict[str, Any]] = []
    held = 0
    for row in rows:
        batch.append(row)
        prompt = row.get("prompt")
        held += len(prompt) if isinstance(prompt, str) else 0
        if len(batch) >= size or held >= chars:
            yield batch
            batch, held = [], 0
    if batch:
        yield batch


def unified_schema(schemas: list[pa.Schema]) -> pa.Schema:
    """The schema ``pa.concat_tables(..., promote_options="permissive")`` gives tables of these schemas."""
    return pa.concat_tables([s.empty_table() for s in schemas], promote_options="permissive").schema


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` with ``schema``'s columns and types (missing columns and struct fields null)."""
    if table.schema == schema:
        return table
    return pa.concat_tables([schema.empty_table(), table], promote_options="permissive").select(schema.names)


def write_stream(rows: Iterable[dict[str, Any]], folder: Path, size: int = BATCH_ROWS) -> Path | None:
    """``rows`` as one Arrow stream file in ``folder`` (types unified over all rows; None when there are none);
    only one batch of rows and one spilled batch are in memory at a time."""
    spilled: list[tuple[Path, pa.Schema]] = []
    pool = pa.default_memory_pool()
    for number, batch in enumerate(batches(rows, size)):
        table = pa.Table.from_pylist(batch)
        path = folder / f"batch-{number:06d}.arrow"
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        spilled.append((path, table.schema))
        del table
        pool.release_unused()  # mimalloc keeps freed batches otherwise: memory would creep with the row count
    if not spilled:
        return None
    schema = unified_schema([s for _, s in spilled])
    out = folder / "docs.arrow"
    with pa.OSFile(str(out), "wb") as sink, pa.ipc.new_stream(sink, schema) as writer:
        for path, _ in spilled:
            with pa.memory_map(str(path)) as source:
                writer.write_table(conform(pa.ipc.open_stream(source).read_all(), schema))
            path.unlink()
            pool.release_unused()
    return out


def rows_to_dataset(rows: Iterable[dict[str, Any]], size: int = BATCH_ROWS) -> Any:
    """A ``datasets.Dataset`` of ``rows``, memory-mapped from disk (equal to ``Dataset.from_list(list(rows))``)."""
    import datasets

    folder = Path(tempfile.mkdtemp(prefix="docs-", dir=_run_folder()))
    path = write_stream(rows, folder, size)
    return datasets.Dataset.from_list([]) if path is None else datasets.Dataset.from_file(str(path))


@lru_cache(maxsize=1)
def _run_folder() -> str:
    """This process's folder for doc files (in the system's temporary folder: ``TMPDIR``), removed at exit."""
    folder = tempfile.mkdtemp(prefix="lurch-eval-")
    atexit.register(shutil.rmtree, folder, True)
    return folder
