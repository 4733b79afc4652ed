"""``lurch validate``: prove a materialized folder is exactly what the generator produces, and that it loads.

Nothing the folder says about itself is trusted but its request (each config's overrides, seed, limit and rows
per file, read from its footers): from that request the file plan, every row, every footer, the Arrow schema, the
manifest and the card are rebuilt and compared with what is on disk. Checks, in order of cost:

1. structure: the manifest against the files on disk (set of files, SHA-256 of each), the card against the
   manifest (same configs, its checksum, its ``dataset_info`` row counts, data files and features);
2. per config: the files are exactly the planned ones; each file's Arrow schema (types, field order, nullability)
   and footer metadata (``lurch`` and ``huggingface``, byte for byte) are what ``materialize`` writes, and so are
   its Parquet layout (format version, codec, statistics, row groups cut where the writer cuts them);
3. rows: every row is regenerated from its (task, config, seed, split, index) and compared field by field
   with the stored one (the first differing field is reported), after the schema check and the family's
   own audit; rows must be complete and in index order; the fingerprint and the card's shortcut audit (on the
   same evenly spaced rows as ``materialize``) are measured again;
4. the whole manifest (every field, no key it does not write) and the whole card (README.md, byte for byte) are
   rebuilt from what steps 2-3 measured, and compared with the folder's;
5. loading: ``datasets.load_dataset(folder, config)`` offline, into a throwaway cache, for every config.

Rows are streamed (one batch in memory). Unreadable Parquet or YAML is reported as one line naming the file.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq

from .. import __version__
from ..core.config import config_to_dict
from ..core.generation import generate_row
from ..core.instance import schema_errors
from ..core.registry import get_family
from ..core.rng import canonical_json
from ..core.shortcuts import TaskAuditor, lines_to_json, spread_indices
from ..core.text import printable
from ..dataset_builders._builder import SPLIT
from .build import check_request
from .card import card_configs, card_header, render_card
from .layout import (
    AUDIT_ROWS,
    HASH_BATCH_ROWS,
    PARQUET_OPTIONS,
    ConfigSummary,
    config_dirs,
    config_files,
    file_meta,
    fingerprint,
    progress_bars,
)
from .manifest import (
    CARD_NAME,
    JOURNAL_NAME,
    MANIFEST_NAME,
    build_manifest,
    config_entry,
    file_sha256,
    read_manifest,
)
from .plan import MAX_ROWS_PER_FILE, MaterializeRequest, PlannedFile
from .write import closes_row_group, config_meta, features_of, file_schema

MAX_REPORTED_PROBLEMS = 100
FOLDER = "(folder)"  # summary key of problems that belong to no single config
GENERATOR = f"lurch-tasks {__version__}"  # what materialize records; another version's folder is not rebuilt here
SHOWN_CHARS = 80  # of a value quoted in a problem line
ARROW_SCHEMA_KEY = b"ARROW:schema"  # the footer entry where pyarrow stores the Arrow schema (store_schema=True)


@dataclasses.dataclass
class _Checked:
    """What validating one config found: its rows, its problems and, when it is exactly what materialize writes,
    the summary the card and the manifest are rebuilt from."""

    rows: int = 0
    problems: list[str] = dataclasses.field(default_factory=list)
    summary: ConfigSummary | None = None


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
    hashes: dict[str, str] = {}  # SHA-256 of every file hashed once, by relative path
    manifest, folder_problems = _structure_problems(folder, dirs, hashes)
    per_config: dict[str, list[str]] = {d.name: [] for d in dirs}
    card_problems = list(_card_problems(folder, dirs, manifest))
    for name, problem in card_problems:
        (per_config.setdefault(name, []) if name else folder_problems).append(problem)
    total = 0
    for d in dirs:
        for path in config_files(d):
            try:
                total += pq.read_metadata(path).num_rows
            except (OSError, pa.ArrowException):
                pass  # reported below, with the file's name
    checked: dict[str, _Checked] = {}
    with tqdm(total=total, desc="validating", unit="row", disable=not progress) as bar:
        for config_dir in dirs:
            entry = (manifest or {}).get("configs", {}).get(config_dir.name)
            checked[config_dir.name] = _validate_config(config_dir, bar, entry if isinstance(entry, dict) else None)
    rebuilt = _rebuilt_problems(folder, manifest, checked, hashes, card_checked=not card_problems)
    for name, problems in rebuilt.items():
        (per_config.setdefault(name, []) if name else folder_problems).extend(problems)
    summary: dict[str, dict[str, Any]] = {}
    for config_dir in dirs:
        result = checked[config_dir.name]
        problems = per_config.pop(config_dir.name) + result.problems
        if load and not problems:
            with progress_bars(progress):
                problems += _load_problems(folder, config_dir.name, result.rows)
        summary[config_dir.name] = _entry(result.rows, problems)
    for name, problems in per_config.items():  # configs the card or manifest lists but the disk lacks
        summary[name] = _entry(0, problems)
    if folder_problems:
        summary[FOLDER] = _entry(0, folder_problems)
    return summary


def _entry(rows: int, problems: list[str]) -> dict[str, Any]:
    return {"rows": rows, "problems": problems[:MAX_REPORTED_PROBLEMS], "problem_count": len(problems)}


def _shown(value: Any) -> str:
    """A value from the folder quoted in a problem line: one printable line, cut short."""
    text = printable(repr(value))
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


# ---------------------------------------------------------------- structure: manifest and card


def _structure_problems(folder: Path, dirs: list[Path],
                        hashes: dict[str, str]) -> tuple[dict[str, Any] | None, list[str]]:
    """The manifest (None when missing or unreadable) and how the files on disk disagree with it; fills
    ``hashes`` with the SHA-256 of every file it hashed."""
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
        if not isinstance(entry, dict) or not isinstance(entry.get("files"), dict):
            problems.append(f"{MANIFEST_NAME}: configs.{printable(name)} is not a config entry; allowed: the entry "
                            "`lurch materialize` writes")
            continue
        if not config_dir.is_dir():
            problems.append(f"{printable(name)}: listed in {MANIFEST_NAME} but its folder is missing")
            continue
        present = sorted(f"{name}/{p.name}" for p in config_dir.iterdir())
        for missing in sorted(set(entry["files"]) - set(present)):
            problems.append(f"{printable(missing)}: listed in {MANIFEST_NAME} but missing")
        for extra in sorted(set(present) - set(entry["files"])):
            problems.append(f"{printable(extra)}: not written by `lurch materialize` (not in {MANIFEST_NAME})")
        for relative, sha in sorted(entry["files"].items()):
            path = folder / relative
            if relative in present and path.is_file():
                hashes[relative] = file_sha256(path)
                if hashes[relative] != sha:
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
        entry = (manifest or {}).get("configs", {}).get(name)
        rows = entry.get("rows") if isinstance(entry, dict) else None  # a malformed entry is reported elsewhere
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


# ---------------------------------------------------------------- one config: plan, footers, rows


def _validate_config(config_dir: Path, bar: Any, entry: dict[str, Any] | None) -> _Checked:
    name = config_dir.name
    files = config_files(config_dir)
    try:
        meta = file_meta(files[0])[0]
    except (ValueError, OSError, pa.ArrowException) as error:
        return _Checked(problems=[_unreadable(files[0], error)])
    request, task, why = _request_of(meta, name)
    meta = meta if isinstance(meta, dict) else {}
    checked = _Checked(problems=[why] if why else [])
    planned = request.config_files(name) if request is not None else ()
    footers: dict[str, pq.FileMetaData] = {}
    if request is not None:
        checked.problems += _plan_problems(config_dir, planned)
        fields = _read_back(features_of(request, name).arrow_schema)
        for f in planned:
            if (config_dir / f.name).is_file():
                checked.problems += _footer_problems(config_dir / f.name, request, f, fields, footers)
    family = get_family(task.family) if task is not None else None
    planned_rows = sum(f.rows for f in planned)
    audited = set(spread_indices(planned_rows, AUDIT_ROWS))  # the rows materialize's audit reads (build._audit)
    auditor = TaskAuditor(task) if task is not None else None
    row_hashes: list[str] = []
    summaries: list[Any] = []
    sizes: dict[str, list[int]] = {}  # canonical-JSON bytes of every row, by file: where the row groups must end
    for path in files:
        sizes[path.name] = []
        try:
            for batch in pq.ParquetFile(path).iter_batches(batch_size=HASH_BATCH_ROWS):
                for row in batch.to_pylist():
                    position = len(row_hashes)
                    checked.problems += _row_problems(row, position, name, task)
                    encoded = canonical_json(row).encode("ascii")
                    row_hashes.append(hashlib.sha256(encoded).hexdigest())  # the row's content hash
                    sizes[path.name].append(len(encoded))
                    if family is not None and family.row_summary is not None:
                        summaries.append(family.row_summary(row))
                    if auditor is not None and position in audited:
                        auditor = _audit_add(auditor, row, name, checked.problems)
                bar.update(batch.num_rows)
        except (OSError, pa.ArrowException) as error:
            checked.problems.append(_unreadable(path, error))
            checked.rows = len(row_hashes)
            return checked
    checked.rows = len(row_hashes)
    if family is not None and family.audit_rows is not None:
        complete = len(row_hashes) == task.config.size()
        checked.problems += [f"{name}: {p}" for p in family.audit_rows(task.config, summaries, complete)]
    if meta.get("num_examples") != len(row_hashes):
        checked.problems.append(f"{name}: {len(row_hashes)} rows, metadata records {_shown(meta.get('num_examples'))}")
    if task is not None and len(row_hashes) != planned_rows:
        checked.problems.append(f"{name}: {len(row_hashes)} rows, the generator makes {planned_rows}")
    recorded = (entry or {}).get("fingerprint", meta.get("fingerprint"))
    if recorded != fingerprint(row_hashes):
        checked.problems.append(f"{name}: fingerprint of the rows differs from the recorded one")
    if request is None or auditor is None or checked.problems:
        return checked  # the rows are wrong: their row groups and the card rebuilt from them would only add noise
    for f in planned:
        checked.problems += _row_group_problems(f, footers[f.path], sizes[f.name])
    if not checked.problems:
        checked.summary = _rebuilt_summary(request, config_dir, planned, footers, fingerprint(row_hashes), auditor)
    return checked


def _request_of(meta: Any, name: str) -> tuple[MaterializeRequest | None, Any, str]:
    """The request that materialized config ``name`` (from the claims of its footer: overrides, seed, limit, rows
    per file; the config is the folder's name), its task, or why it cannot be rebuilt."""
    if not isinstance(meta, dict):
        return None, None, f"{name}: the footer's lurch metadata is not a JSON object; allowed: what materialize writes"
    try:
        request = MaterializeRequest.create([name], meta.get("overrides"), meta.get("seed_override"),
                                            meta.get("limit"), meta.get("max_rows_per_file", MAX_ROWS_PER_FILE))
        check_request(request)
        task = request.task(name)
        request.config_files(name)  # the plan
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        reason = printable(" ".join(str(error).split()))[:200]
        return None, None, f"{name}: cannot rebuild its request and file plan from the footer ({reason})"
    if canonical_json(config_to_dict(task.config)) != canonical_json(meta.get("config")):
        return None, None, (f"{name}: the registered config {name!r} differs from the one recorded (another "
                            "lurch-tasks version?); rows cannot be regenerated")
    return request, task, ""


def _audit_add(auditor: TaskAuditor, row: dict[str, Any], name: str, problems: list[str]) -> TaskAuditor | None:
    try:
        auditor.add(row)
    except Exception as error:  # a row the shortcut audit cannot read is a finding, not a reason to stop
        problems.append(f"{row.get('id') or name}: shortcut audit failed: {type(error).__name__}: "
                        f"{printable(error)[:160]}")
        return None
    return auditor


def _plan_problems(config_dir: Path, planned: Sequence[PlannedFile]) -> list[str]:
    """Every planned file is there and nothing else is (whatever its name)."""
    names = {p.name for p in config_dir.iterdir()}
    wanted = {f.name for f in planned}
    plan = f"it plans {len(planned)}: {SPLIT}-*-of-{len(planned):05d}.parquet"
    problems = [f"{config_dir.name}/{n}: planned for this config but missing" for n in sorted(wanted - names)]
    return problems + [f"{config_dir.name}/{printable(n)}: not a file `lurch materialize` plans for this config "
                       f"({plan})" for n in sorted(names - wanted)]


def _read_back(schema: pa.Schema) -> pa.Schema:
    """``schema`` as a Parquet file written with it reads back (list items are named ``element`` there)."""
    sink = pa.BufferOutputStream()
    pq.write_table(schema.empty_table(), sink, **PARQUET_OPTIONS)
    return pq.read_schema(pa.BufferReader(sink.getvalue()))


def _footer_problems(path: Path, request: MaterializeRequest, planned: PlannedFile, fields: pa.Schema,
                     footers: dict[str, pq.FileMetaData]) -> list[str]:
    """The file's Arrow schema (against ``fields``, the config's schema as materialize's files read back), footer
    metadata and Parquet layout against what materialize writes there."""
    relative = f"{path.parent.name}/{path.name}"
    try:
        footer = pq.read_metadata(path)
        schema = pq.read_schema(path)
    except (OSError, pa.ArrowException) as error:
        return [_unreadable(path, error)]
    footers[planned.path] = footer
    expected = file_schema(request, planned)
    entries = {key: value for key, value in (footer.metadata or {}).items() if key != ARROW_SCHEMA_KEY}
    problems = _schema_problems(relative, schema, fields)
    problems += _metadata_problems(relative, entries, expected.metadata)
    problems += _metadata_problems(relative, schema.metadata or {}, expected.metadata)
    problems += _layout_problems(relative, footer)
    return list(dict.fromkeys(problems))  # the footer's entries and the schema's metadata usually agree


def _schema_problems(relative: str, found: pa.Schema, expected: pa.Schema) -> list[str]:
    for position, (have, want) in enumerate(zip(found.names, expected.names, strict=False)):
        if have != want:
            return [f"{relative}: Arrow schema field {position} is {_shown(have)}; materialize writes {want!r} there "
                    "(field names and order)"]
    if len(found.names) != len(expected.names):
        return [f"{relative}: Arrow schema has {len(found.names)} fields; materialize writes {len(expected.names)}"]
    for have, want in zip(found, expected, strict=True):
        if not have.equals(want, check_metadata=True):
            return [f"{relative}: Arrow schema field {want.name!r} is {_field_text(have)}; materialize writes "
                    f"{_field_text(want)}"]
    return []


def _field_text(arrow_field: pa.Field) -> str:
    text = printable(str(arrow_field.type)) + ("" if arrow_field.nullable else " not null")
    if arrow_field.metadata:
        text += f" with metadata {_shown(arrow_field.metadata)}"
    return text if len(text) <= 2 * SHOWN_CHARS else text[: 2 * SHOWN_CHARS - 3] + "..."


def _metadata_problems(relative: str, found: dict[bytes, bytes], expected: dict[bytes, bytes]) -> list[str]:
    problems = []
    for key in sorted(set(found) | set(expected)):
        label = printable(key.decode("utf-8", "replace"))
        if key not in expected:
            problems.append(f"{relative}: footer entry {label!r} is not written by `lurch materialize`")
        elif key not in found:
            problems.append(f"{relative}: footer entry {label!r} is missing")
        elif found[key] != expected[key]:
            problems += _json_problems(f"{relative}: footer `{label}`", found[key], expected[key])
    return problems


def _json_problems(where: str, found: bytes, expected: bytes) -> list[str]:
    try:
        parsed = json.loads(found)
    except (ValueError, UnicodeDecodeError):
        return [f"{where} is not JSON; allowed: what `lurch materialize` writes"]
    differences = [f"{where} field {path} {message}" for path, message in _differences(parsed, json.loads(expected))]
    return differences or [f"{where} holds the same fields in other bytes (key order or spacing); allowed: the bytes "
                           "`lurch materialize` writes"]


def _differences(found: Any, expected: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(path, what differs) for every leaf where the JSON value ``found`` differs from ``expected``."""
    if isinstance(found, dict) and isinstance(expected, dict):
        for key in sorted(set(found) | set(expected), key=str):
            step = f".{key}" if str(key).isidentifier() else f"[{key!r}]"  # file paths as ['a/b.parquet']
            sub = printable(path + step if path or step.startswith("[") else key)
            if key not in expected:
                yield sub, "is not written by `lurch materialize`"
            elif key not in found:
                yield sub, "is missing"
            else:
                yield from _differences(found[key], expected[key], sub)
    elif isinstance(found, list) and isinstance(expected, list) and len(found) == len(expected):
        for position, (have, want) in enumerate(zip(found, expected, strict=True)):
            yield from _differences(have, want, f"{path}[{position}]")
    elif found != expected or type(found) is not type(expected):  # type: 1 is not 1.0 nor True
        yield path or "(whole value)", f"is {_shown(found)}; materialize writes {_shown(expected)}"


def _layout_problems(relative: str, footer: pq.FileMetaData) -> list[str]:
    """The Parquet options of ``layout.PARQUET_OPTIONS`` that a footer records."""
    if footer.format_version != PARQUET_OPTIONS["version"]:
        return [f"{relative}: Parquet format version {_shown(footer.format_version)}; materialize writes "
                f"{PARQUET_OPTIONS['version']}"]
    if ARROW_SCHEMA_KEY not in (footer.metadata or {}):
        return [f"{relative}: footer has no {ARROW_SCHEMA_KEY.decode()} entry; materialize stores the Arrow schema"]
    codec = str(PARQUET_OPTIONS["compression"]).upper()
    for group in range(footer.num_row_groups):
        for k in range(footer.num_columns):
            column = footer.row_group(group).column(k)
            if column.compression != codec:
                return [f"{relative}: column {column.path_in_schema!r} of row group {group} is compressed with "
                        f"{column.compression}; materialize writes {codec}"]
            if column.is_stats_set != PARQUET_OPTIONS["write_statistics"] or (
                    column.has_offset_index != PARQUET_OPTIONS["write_page_index"]):
                return [f"{relative}: column {column.path_in_schema!r} of row group {group} has statistics "
                        f"{column.is_stats_set}, page index {column.has_offset_index}; materialize writes "
                        f"{PARQUET_OPTIONS['write_statistics']}, {PARQUET_OPTIONS['write_page_index']}"]
    return []


def _row_groups(sizes: Sequence[int]) -> list[int]:
    """Rows per row group as ``write_file`` cuts a file whose rows have ``sizes`` bytes of canonical JSON."""
    groups: list[int] = []
    rows = group_bytes = 0
    for size in sizes:
        if closes_row_group(rows, group_bytes, size):
            groups.append(rows)
            rows = group_bytes = 0
        rows += 1
        group_bytes += size
    return groups + [rows] if rows else groups


def _row_group_problems(planned: PlannedFile, footer: pq.FileMetaData, sizes: Sequence[int]) -> list[str]:
    found = [footer.row_group(k).num_rows for k in range(footer.num_row_groups)]
    expected = _row_groups(sizes)
    if found == expected:
        return []
    return [f"{planned.path}: row groups of {_shown(found)} rows; materialize cuts this file into {_shown(expected)}"]


def _rebuilt_summary(request: MaterializeRequest, config_dir: Path, planned: Sequence[PlannedFile],
                     footers: dict[str, pq.FileMetaData], rows_fingerprint: str, auditor: TaskAuditor) -> ConfigSummary:
    """The config's summary as materialize makes it, from the request and what was measured (not from the claims
    of the folder): the card and the manifest are rebuilt from it."""
    audit = auditor.result()
    footer_list = [footers[f.path] for f in planned]
    return ConfigSummary(
        name=config_dir.name,
        files=tuple(f.path for f in planned),
        num_examples=sum(f.rows for f in planned),
        num_bytes=sum(m.row_group(k).total_byte_size for m in footer_list for k in range(m.num_row_groups)),
        download_size=sum((config_dir / f.name).stat().st_size for f in planned),
        features=features_of(request, config_dir.name),
        meta=config_meta(request, config_dir.name),
        fingerprint=rows_fingerprint,
        # recorded as build._audit records it
        shortcut_audit={"rows": audit.rows, "passed": audit.passed, "lines": lines_to_json(audit.lines)},
    )


def _unreadable(path: Path, error: Exception) -> str:
    reason = " ".join(str(error).split())[:160]
    return f"{path.parent.name}/{path.name}: unreadable Parquet ({type(error).__name__}: {printable(reason)})"


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


# ---------------------------------------------------------------- the manifest and the card, rebuilt


def _rebuilt_problems(folder: Path, manifest: dict[str, Any] | None, checked: dict[str, _Checked],
                      hashes: dict[str, str], *, card_checked: bool) -> dict[str, list[str]]:
    """``{config or "": problems}``: the manifest and the card against those materialize writes for the configs
    as rebuilt (a config that is not exactly what materialize writes has its own problems already)."""
    problems: dict[str, list[str]] = {"": []}
    summaries = [c.summary for c in checked.values() if c.summary is not None]
    card_sha = None
    if summaries and len(summaries) == len(checked):
        card = render_card(summaries).encode("utf-8")
        card_sha = hashlib.sha256(card).hexdigest()
        if card_checked:
            problems[""] += _card_text_problems(folder / CARD_NAME, card)
    if manifest is None:
        return problems
    entries = {s.name: config_entry({p: hashes.get(p) or file_sha256(folder / p) for p in s.files}, s)
               for s in summaries}
    expected = build_manifest(card_sha or manifest.get("card_sha256"), entries, GENERATOR)
    top = {key: value for key, value in manifest.items() if key != "configs"}
    problems[""] += [f"{MANIFEST_NAME}: {path} {message}" for path, message in
                     _differences(top, {key: value for key, value in expected.items() if key != "configs"})]
    for name, entry in entries.items():
        problems[name] = [f"{MANIFEST_NAME}: {path} {message}" for path, message in
                          _differences(manifest["configs"].get(name), entry, f"configs.{name}")]
    return problems


def _card_text_problems(path: Path, expected: bytes) -> list[str]:
    """README.md against the card materialize renders for the folder, byte for byte (the first differing line)."""
    try:
        found = path.read_bytes()
    except OSError as error:
        return [f"{CARD_NAME}: unreadable ({type(error).__name__})"]
    if found == expected:
        return []
    have, want = found.decode("utf-8", "replace").split("\n"), expected.decode("utf-8").split("\n")
    for number, (line, wanted) in enumerate(zip(have, want, strict=False), 1):
        if line != wanted:
            column = next((k for k, (a, b) in enumerate(zip(line, wanted, strict=False)) if a != b),
                          min(len(line), len(wanted)))
            return [f"{CARD_NAME}: line {number} reads {_excerpt(line, column)}; the card materialize renders for "
                    f"this folder reads {_excerpt(wanted, column)}"]
    return [f"{CARD_NAME}: {len(have)} lines; the card materialize renders for this folder has {len(want)}"]


def _excerpt(line: str, column: int) -> str:
    """The part of a card line around ``column`` (where it differs), quoted."""
    start = max(0, column - SHOWN_CHARS // 4)
    text = printable(repr(line[start : start + SHOWN_CHARS]))
    return ("..." if start else "") + text + ("..." if start + SHOWN_CHARS < len(line) else "")


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
