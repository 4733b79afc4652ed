"""``lurch validate``: prove a materialized folder is exactly what the generator produces, and that it loads.

Checks, in order of cost:

1. structure: the manifest against the files on disk (set of files, SHA-256 of each), the card against the
   manifest (same configs, the card unedited, its ``dataset_info`` row counts, data files and features);
2. rows: every row is regenerated from its (task, config, seed, split, index) and compared field by field
   with the stored one (the first differing field is reported), after the schema check and the family's
   own audit; rows must be complete and in index order, and the footer's count and fingerprint must match;
3. loading: ``datasets.load_dataset(folder, config)`` offline, into a throwaway cache, for every config.

Unreadable Parquet or YAML is reported as one line naming the file.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq

from ..core.config import config_to_dict
from ..core.generation import generate_row
from ..core.instance import content_hash, schema_errors
from ..core.registry import get_family
from ..core.rng import canonical_json
from ..dataset_builders._builder import SPLIT, resolved_task
from .card import card_configs, card_header
from .layout import FILE_KEY, HASH_BATCH_ROWS, config_dirs, config_files, file_meta, fingerprint, progress_bars
from .manifest import CARD_NAME, JOURNAL_NAME, MANIFEST_NAME, file_sha256, read_manifest
from .plan import LAYOUT_VERSION, MAX_ROWS_PER_FILE, MaterializeRequest

MAX_REPORTED_PROBLEMS = 100
FOLDER = "(folder)"  # summary key of problems that belong to no single config


def validate_folder(folder: Path, *, progress: bool = True, load: bool = True) -> dict[str, dict[str, Any]]:
    """Returns ``{config: {"rows": n, "problems": [first problems], "problem_count": total}}``, plus an entry
    ``"(folder)"`` when the folder itself has problems (manifest, card, an unfinished replacement)."""
    from tqdm.auto import tqdm

    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"folder: {str(folder)!r} is not a folder; allowed: a folder written by `lurch materialize`")
    dirs = config_dirs(folder)
    if not dirs and not (folder / MANIFEST_NAME).exists():
        raise ValueError(f"folder: {str(folder)!r} holds no <config>/{SPLIT}-*.parquet; allowed: a materialized folder")
    manifest, folder_problems = _structure_problems(folder, dirs)
    per_config: dict[str, list[str]] = {d.name: [] for d in dirs}
    for name, problem in _card_problems(folder, dirs, manifest):
        (per_config.setdefault(name, []) if name else folder_problems).append(problem)
    total = 0
    for d in dirs:
        for path in config_files(d):
            try:
                total += pq.read_metadata(path).num_rows
            except (OSError, pa.ArrowException):
                pass  # reported below, with the file's name
    summary: dict[str, dict[str, Any]] = {}
    with tqdm(total=total, desc="validating", unit="row", disable=not progress) as bar:
        for config_dir in dirs:
            entry = (manifest or {}).get("configs", {}).get(config_dir.name)
            rows, more = _validate_config(config_dir, bar, entry)
            problems = per_config.pop(config_dir.name) + more
            if load and not problems:
                with progress_bars(progress):
                    problems += _load_problems(folder, config_dir.name, rows)
            summary[config_dir.name] = _entry(rows, problems)
    for name, problems in per_config.items():  # configs the card or manifest lists but the disk lacks
        summary[name] = _entry(0, problems)
    if folder_problems:
        summary[FOLDER] = _entry(0, folder_problems)
    return summary


def _entry(rows: int, problems: list[str]) -> dict[str, Any]:
    return {"rows": rows, "problems": problems[:MAX_REPORTED_PROBLEMS], "problem_count": len(problems)}


# ---------------------------------------------------------------- structure: manifest and card


def _structure_problems(folder: Path, dirs: list[Path]) -> tuple[dict[str, Any] | None, list[str]]:
    problems: list[str] = []
    if (folder / JOURNAL_NAME).exists():
        problems.append(f"folder: an interrupted `lurch materialize` left {JOURNAL_NAME}: the replacement is "
                        "unfinished; re-run `lurch materialize` into this folder to complete it")
    try:
        manifest = read_manifest(folder)
    except ValueError as error:
        return None, problems + [str(error)]
    if manifest is None:
        return None, problems + [f"folder: no {MANIFEST_NAME}; allowed: a folder written by `lurch materialize` "
                                 "(re-materialize folders from before the manifest)"]
    on_disk = {d.name for d in dirs}
    for name, entry in sorted(manifest["configs"].items()):
        config_dir = folder / name
        if not config_dir.is_dir():
            problems.append(f"{name}: listed in {MANIFEST_NAME} but its folder is missing")
            continue
        present = sorted(f"{name}/{p.name}" for p in config_dir.iterdir())
        for missing in sorted(set(entry["files"]) - set(present)):
            problems.append(f"{missing}: listed in {MANIFEST_NAME} but missing")
        for extra in sorted(set(present) - set(entry["files"])):
            problems.append(f"{extra}: not written by `lurch materialize` (not in {MANIFEST_NAME})")
        for relative, sha in sorted(entry["files"].items()):
            path = folder / relative
            if path.is_file() and file_sha256(path) != sha:
                problems.append(f"{relative}: SHA-256 differs from {MANIFEST_NAME} (the file changed)")
    for name in sorted(on_disk - set(manifest["configs"])):
        problems.append(f"{name}: config folder not in {MANIFEST_NAME}")
    card = folder / CARD_NAME
    if card.is_file() and file_sha256(card) != manifest.get("card_sha256"):
        problems.append(f"{CARD_NAME}: changed since `lurch materialize` wrote it (SHA-256 differs from "
                        f"{MANIFEST_NAME})")
    return manifest, problems


def _card_problems(folder: Path, dirs: list[Path], manifest: dict[str, Any] | None) -> Iterator[tuple[str, str]]:
    """(config or "", problem) for every way the card disagrees with the manifest and the files."""
    try:
        header = card_header(folder)
        listed = card_configs(folder)
    except ValueError as error:
        yield "", str(error)
        return
    expected = set(manifest["configs"]) if manifest else {d.name for d in dirs}
    for name in sorted(set(listed) - expected):
        yield "", f"README.md: config {name!r} is listed but was not materialized (no such config in the folder)"
    for name in sorted(expected - set(listed)):
        yield name, f"{name}: not listed in README.md `configs:`"
    infos = {info.get("config_name"): info for info in header.get("dataset_info") or [] if isinstance(info, dict)}
    for name in sorted(expected & set(listed)):
        if listed[name] != [f"{name}/{SPLIT}-*.parquet"]:
            yield name, f"README.md: config {name!r} data_files {listed[name]} differ from {name}/{SPLIT}-*.parquet"
        info = infos.get(name)
        if info is None:
            yield name, f"README.md: no dataset_info for config {name!r}"
            continue
        rows = (manifest or {}).get("configs", {}).get(name, {}).get("rows")
        splits = info.get("splits") or [{}]
        if rows is not None and splits[0].get("num_examples") != rows:
            yield name, (f"README.md: dataset_info of {name!r} says {splits[0].get('num_examples')} examples, the "
                         f"folder holds {rows}")
        files = config_files(folder / name)
        if files:
            try:
                stored = file_meta(files[0])[1]
                carded = datasets.Features._from_yaml_list(info.get("features") or [])
            except (ValueError, TypeError, KeyError, OSError, pa.ArrowException) as error:
                yield name, f"README.md: features of {name!r} do not parse ({type(error).__name__})"
                continue
            if carded != stored:
                yield name, f"README.md: features of {name!r} differ from those stored in its Parquet files"


# ---------------------------------------------------------------- rows: regenerate and compare


def _validate_config(config_dir: Path, bar: Any, entry: dict[str, Any] | None) -> tuple[int, list[str]]:
    problems: list[str] = []
    hashes: list[str] = []
    files = config_files(config_dir)
    try:
        meta: dict[str, Any] | None = file_meta(files[0])[0] if files else None
    except (ValueError, OSError, pa.ArrowException) as error:
        return 0, [_unreadable(files[0], error)]
    task, why = _task_of(meta, config_dir.name)
    if why:
        problems.append(why)
    elif meta is not None and meta.get("layout", 1) >= LAYOUT_VERSION:
        problems += _plan_problems(config_dir, files, meta)
    family = get_family(task.family) if task is not None else None
    summaries: list[Any] = []
    for path in files:
        try:
            for batch in pq.ParquetFile(path).iter_batches(batch_size=HASH_BATCH_ROWS):
                for row in batch.to_pylist():
                    problems += _row_problems(row, len(hashes), config_dir.name, task)
                    hashes.append(content_hash(row))
                    if family is not None and family.row_summary is not None:
                        summaries.append(family.row_summary(row))
                bar.update(batch.num_rows)
        except (OSError, pa.ArrowException) as error:
            problems.append(_unreadable(path, error))
            return len(hashes), problems
    if family is not None and family.audit_rows is not None:
        complete = len(hashes) == task.config.size()
        problems += [f"{config_dir.name}: {p}" for p in family.audit_rows(task.config, summaries, complete)]
    if meta is not None:
        if meta.get("num_examples") != len(hashes):
            problems.append(f"{config_dir.name}: {len(hashes)} rows, metadata records {meta.get('num_examples')}")
        if task is not None and len(hashes) != _expected_rows(task, meta):
            problems.append(f"{config_dir.name}: {len(hashes)} rows, the generator makes {_expected_rows(task, meta)}")
        recorded = (entry or {}).get("fingerprint", meta.get("fingerprint"))
        if recorded != fingerprint(hashes):
            problems.append(f"{config_dir.name}: fingerprint of the rows differs from the recorded one")
    return len(hashes), problems


def _plan_problems(config_dir: Path, files: list[Path], meta: dict[str, Any]) -> list[str]:
    """The files are exactly those the plan of the recorded request names, each holding its planned rows."""
    try:
        request = MaterializeRequest.create([config_dir.name], meta.get("overrides"), meta.get("seed_override"),
                                            meta.get("limit"), meta.get("max_rows_per_file", MAX_ROWS_PER_FILE))
        planned = request.config_files(config_dir.name)
    except (ValueError, KeyError, TypeError) as error:
        return [f"{config_dir.name}: cannot rebuild its file plan ({error})"]
    names = [p.name for p in files]
    if names != [f.name for f in planned]:
        missing = sorted({f.name for f in planned} - set(names))
        extra = sorted(set(names) - {f.name for f in planned})
        return [f"{config_dir.name}: files differ from the plan (missing {missing}, unplanned {extra})"]
    problems = []
    for path, f in zip(files, planned, strict=True):
        try:
            own = file_meta(path)[0].get(FILE_KEY, {})
        except (ValueError, OSError, pa.ArrowException) as error:
            problems.append(_unreadable(path, error))
            continue
        if own.get("rows") != [f.start, f.stop]:
            problems.append(f"{config_dir.name}/{path.name}: records rows {own.get('rows')}, the plan puts rows "
                            f"[{f.start}, {f.stop}) there")
    return problems


def _unreadable(path: Path, error: Exception) -> str:
    reason = " ".join(str(error).split())[:160]
    return f"{path.parent.name}/{path.name}: unreadable Parquet ({type(error).__name__}: {reason})"


def _task_of(meta: dict[str, Any] | None, name: str) -> tuple[Any, str]:
    """The task that generated the config (from its footer), or why it cannot be rebuilt."""
    if meta is None:
        return None, f"{name}: no metadata to regenerate the rows from"
    try:
        task = resolved_task(meta["task"], meta.get("overrides") or None, meta.get("seed_override"))
    except (ValueError, KeyError, TypeError) as error:
        return None, f"{name}: cannot rebuild its task from the metadata ({error})"
    if canonical_json(config_to_dict(task.config)) != canonical_json(meta.get("config")):
        return None, (f"{name}: the registered config {meta['task']!r} differs from the one recorded (another "
                      "lurch-tasks version?); rows cannot be regenerated")
    return task, ""


def _expected_rows(task: Any, meta: dict[str, Any]) -> int:
    size = task.config.size()
    return min(size, meta["limit"]) if meta.get("limit") else size


def _row_problems(row: dict[str, Any], position: int, config: str, task: Any) -> list[str]:
    where = row.get("id") or f"{config}[{position}]"
    problems = [f"{where}: {error}" for error in schema_errors(row)]
    if row.get("index") != position:
        problems.append(f"{where}: index {row.get('index')!r} at position {position}; allowed: rows in index order")
    if row.get("config_name") != config:
        problems.append(f"{where}: config_name {row.get('config_name')!r} in folder {config!r}")
    if task is not None:
        difference = _first_difference(row, position, task)
        if difference:
            problems.append(f"{where}: {difference}")
    try:
        family = get_family(row.get("family", ""))
    except ValueError as error:
        return problems + [f"{where}: {error}"]
    try:
        problems += [f"{where}: {problem}" for problem in family.audit(row)]
    except Exception as error:  # an audit crash on a malformed row is a finding, not a reason to stop
        problems.append(f"{where}: audit failed: {type(error).__name__}: {error}")
    return problems


def _first_difference(row: dict[str, Any], position: int, task: Any) -> str:
    """The first field (in record order) where ``row`` differs from the regenerated row ``position``."""
    try:
        expected = generate_row(task, position, SPLIT)
    except ValueError as error:
        return f"cannot be regenerated ({error})"
    for field, value in expected.items():
        if row.get(field) != value:
            return f"field {field!r} differs from the regenerated row"
    for field in sorted(set(row) - set(expected)):
        return f"field {field!r} is not in the generated record"
    return ""


# ---------------------------------------------------------------- loading


def _load_problems(folder: Path, name: str, rows: int) -> list[str]:
    """``load_dataset`` the config offline into a throwaway cache (a stale cache cannot hide a fault)."""
    with tempfile.TemporaryDirectory(prefix="lurch-validate-") as cache:
        try:
            loaded = datasets.load_dataset(str(folder), name, split=SPLIT, cache_dir=cache)
        except Exception as error:  # whatever breaks loading is the finding
            reason = " ".join(str(error).split())[:200]
            return [f"{name}: load_dataset fails: {type(error).__name__}: {reason}"]
        if len(loaded) != rows:
            return [f"{name}: load_dataset gives {len(loaded)} rows, the files hold {rows}"]
    return []
