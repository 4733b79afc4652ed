"""``lurch validate``: check a materialized folder row by row against the schema and the family audits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from ..core.instance import content_hash, schema_errors
from ..core.registry import get_family
from ..dataset_builders._builder import SPLIT
from .card import card_configs
from .layout import HASH_BATCH_ROWS, config_dirs, config_files, file_meta, fingerprint
from .manifest import JOURNAL_NAME

MAX_REPORTED_PROBLEMS = 100

def validate_folder(folder: Path, *, progress: bool = True) -> dict[str, dict[str, Any]]:
    """Schema + family audit on every row of every ``<config>/*.parquet``.

    Returns ``{config: {"rows": n, "problems": [first problems], "problem_count": total}}``. Also checks
    that rows are in index order with the folder's config name, that the recorded row count and
    fingerprint match the rows, and that README.md lists the config.
    """
    from tqdm.auto import tqdm

    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"folder: {str(folder)!r} is not a folder; allowed: a folder written by `lurch materialize`")
    dirs = config_dirs(folder)
    if not dirs:
        raise ValueError(f"folder: {str(folder)!r} holds no <config>/{SPLIT}-*.parquet; allowed: a materialized folder")
    try:
        listed = set(card_configs(folder))
    except ValueError as error:
        listed, card_problem = set(), str(error)
    else:
        card_problem = ""
    if (folder / JOURNAL_NAME).exists():
        card_problem = (f"folder: an interrupted `lurch materialize` left {JOURNAL_NAME}: the replacement is "
                        "unfinished; re-run `lurch materialize` into this folder to complete it")
    total = sum(pq.read_metadata(path).num_rows for d in dirs for path in config_files(d))
    summary: dict[str, dict[str, Any]] = {}
    with tqdm(total=total, desc="validating", unit="row", disable=not progress) as bar:
        for config_dir in dirs:
            problems: list[str] = [card_problem] if card_problem else []
            if not card_problem and config_dir.name not in listed:
                problems.append(f"{config_dir.name}: not listed in README.md `configs:`")
            rows, more = _validate_config(config_dir, bar)
            problems += more
            summary[config_dir.name] = {
                "rows": rows,
                "problems": problems[:MAX_REPORTED_PROBLEMS],
                "problem_count": len(problems),
            }
    return summary


def _validate_config(config_dir: Path, bar: Any) -> tuple[int, list[str]]:
    problems: list[str] = []
    hashes: list[str] = []
    try:
        meta: dict[str, Any] | None = file_meta(config_files(config_dir)[0])[0]
    except ValueError as error:
        meta = None
        problems.append(str(error))
    for path in config_files(config_dir):
        for batch in pq.ParquetFile(path).iter_batches(batch_size=HASH_BATCH_ROWS):
            for row in batch.to_pylist():
                problems += _row_problems(row, len(hashes), config_dir.name)
                hashes.append(content_hash(row))
            bar.update(batch.num_rows)
    if meta is not None:
        if meta.get("num_examples") != len(hashes):
            problems.append(f"{config_dir.name}: {len(hashes)} rows, metadata records {meta.get('num_examples')}")
        if meta.get("fingerprint") != fingerprint(hashes):
            problems.append(f"{config_dir.name}: fingerprint of the rows differs from the recorded one")
    return len(hashes), problems


def _row_problems(row: dict[str, Any], position: int, config: str) -> list[str]:
    where = row.get("id") or f"{config}[{position}]"
    problems = [f"{where}: {error}" for error in schema_errors(row)]
    if row.get("index") != position:
        problems.append(f"{where}: index {row.get('index')!r} at position {position}; allowed: rows in index order")
    if row.get("config_name") != config:
        problems.append(f"{where}: config_name {row.get('config_name')!r} in folder {config!r}")
    try:
        family = get_family(row.get("family", ""))
    except ValueError as error:
        return problems + [f"{where}: {error}"]
    try:
        problems += [f"{where}: {problem}" for problem in family.audit(row)]
    except Exception as error:  # an audit crash on a malformed row is a finding, not a reason to stop
        problems.append(f"{where}: audit failed: {type(error).__name__}: {error}")
    return problems

