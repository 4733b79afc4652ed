"""``lurch materialize``: plan the files, write them (in this process, in worker processes, in shards or on Ray),
then finalize: merge what covers all files (fingerprints, the card's shortcut audit, whose rows the writing
workers measured), write the card and the manifest, and move the folder into place."""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import shutil
import signal
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from .. import __version__
from ..core import locks
from ..core.files import inside
from ..core.shortcuts import BULKY_FIELDS, AuditEntry, TaskAuditor, lines_to_json
from ..core.workers import mortal_children
from ..dataset_builders._builder import builder_class, type_mismatches
from .card import render_card
from .layout import ConfigSummary, config_dirs, fingerprint, read_summary
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
    read_journal,
    read_json,
    read_owned_manifest,
    write_json_atomic,
)
from .plan import MAX_ROWS_PER_FILE, MaterializeRequest, PlannedFile
from .store import Store
from .write import FileRecord, audited_positions, config_meta, decode_audit, features_of, write_file

# ---------------------------------------------------------------- writing planned files


def _write_in_worker(job: tuple[MaterializeRequest, PlannedFile, Store]) -> FileRecord:
    return write_file(*job)


def write_files(request: MaterializeRequest, files: Sequence[PlannedFile], store: Store, *, num_proc: int = 1,
                progress: bool = True, on_record: Callable[[FileRecord], None] | None = None,
                desc: str = "generating") -> dict[str, FileRecord]:
    """Write ``files`` into ``store`` (``num_proc`` forked workers, each writing whole files); ``on_record`` sees
    every finished file in this process. Returns the records by relative path."""
    from tqdm.auto import tqdm

    records: dict[str, FileRecord] = {}
    total = sum(f.rows for f in files)
    with tqdm(total=total, desc=desc, unit="row", disable=not progress or not files) as bar:
        def done(record: FileRecord) -> None:
            records[record.path] = record
            if on_record is not None:
                on_record(record)

        if num_proc <= 1 or len(files) <= 1:
            for planned in files:
                done(write_file(request, planned, store, on_row=lambda: bar.update(1)))
            return records
        for planned in files:  # features and stamps are computed once, in the parent, and inherited by the fork
            features_of(request, planned.config), config_meta(request, planned.config)
        rows = {f.path: f.rows for f in files}
        with mortal_children(), multiprocessing.get_context("fork").Pool(min(num_proc, len(files))) as pool:
            for record in pool.imap_unordered(_write_in_worker, [(request, f, store) for f in files]):
                done(record)
                bar.update(rows[record.path])
    return records


# ---------------------------------------------------------------- finalizing


def _audit(request: MaterializeRequest, name: str, build: Store,
           records: Mapping[str, FileRecord] | None = None) -> dict[str, Any]:
    """The shortcut audit of (up to ``AUDIT_ROWS`` evenly spaced of) the rows written: each file's rows as the
    worker that wrote them measured them (its record's ``audit``), replayed in row order -- the same totals as
    auditing the rows here, float for float. A file whose record has no measures (a record of an older run) is
    read back and audited here."""
    task = request.task(name)
    wanted = audited_positions(request, name)
    auditor = TaskAuditor(task)
    features = features_of(request, name) if records else None
    for planned in request.config_files(name):
        inside = [p for p in wanted if planned.start <= p < planned.stop]
        if not inside:
            continue
        record = (records or {}).get(planned.path)
        entries = _entries(record, auditor, features)
        if entries is not None and [entry.index for entry in entries] == inside:
            for entry in entries:
                auditor.absorb(entry)
        else:
            for row in _read_rows(build, planned, inside):
                auditor.add(row)
    result = auditor.result()
    return {"rows": result.rows, "passed": result.passed, "lines": lines_to_json(result.lines)}


def _entries(record: FileRecord | None, auditor: TaskAuditor, features: Any) -> list[AuditEntry] | None:
    """A record's audit measures; None when it has none or they are unreadable or do not fit the audit (a record
    is read from disk: the rows are then re-read from the file, whose SHA-256 the record's check matched)."""
    if record is None or record.audit is None:
        return None
    try:
        entries = decode_audit(record.audit)
        for entry in entries:
            auditor.check(entry)
            scored = entry.measure.scored
            if scored is not None:  # what the scorer reads: the row's fields, typed as the file's schema
                text = {key: "" for key in BULKY_FIELDS if key in features}
                problems = type_mismatches({**scored, **text}, features)
                if problems:
                    raise ValueError(f"audit entry {entry.index}: scored row: {problems[0]}")
    except ValueError:
        return None
    return entries


def _read_rows(build: Store, planned: PlannedFile, positions: Sequence[int]) -> Iterator[dict[str, Any]]:
    """The rows at ``positions`` (config row indices inside ``planned``) read back from the written file."""
    inside = [p - planned.start for p in positions]
    with build.open(planned.path) as handle:
        parquet = pq.ParquetFile(handle)
        first = 0
        for group in range(parquet.metadata.num_row_groups):
            size = parquet.metadata.row_group(group).num_rows
            here = [p - first for p in inside if first <= p < first + size]
            if here:
                table = parquet.read_row_group(group)
                for offset in here:
                    yield table.slice(offset, 1).to_pylist()[0]
                del table
            first += size


def serial_audit(request: MaterializeRequest, name: str, build: Store) -> dict[str, Any]:
    """The audit as finalize ran it before workers measured their rows: every audited row read back and audited
    in this process. Kept as the reference the per-file measures must reproduce exactly (tests)."""
    return _audit(request, name, build, records=None)


def _summary(request: MaterializeRequest, name: str, records: Mapping[str, FileRecord], build: Store,
             audit: bool = True) -> ConfigSummary:
    """A config's summary from its file records (the footers need not be read again) and the audit."""
    files = request.config_files(name)
    missing = [f.path for f in files if f.path not in records]
    if missing:
        raise RuntimeError(f"{name}: files {missing} were not written; this is a bug")
    own = [records[f.path] for f in files]
    meta = config_meta(request, name)
    if sum(r.num_rows for r in own) != meta["num_examples"]:
        raise RuntimeError(f"{name}: the files hold {sum(r.num_rows for r in own)} rows, the plan "
                           f"{meta['num_examples']}; this is a bug")
    return ConfigSummary(
        name=name,
        files=tuple(r.path for r in own),
        num_examples=meta["num_examples"],
        num_bytes=sum(r.num_bytes for r in own),
        download_size=sum(r.size for r in own),
        features=features_of(request, name),
        meta=meta,
        fingerprint=fingerprint(h for r in own for h in r.row_hashes),
        shortcut_audit=_audit(request, name, build, records) if audit else None,
    )


def check_request(request: MaterializeRequest) -> None:
    """Fail fast, before any work: unknown configs, views, bad overrides or seed, missing builders."""
    for name in request.configs:
        check_not_view(name)
        builder_class(request.task(name).family)


def card_and_manifest(request: MaterializeRequest, records: Mapping[str, FileRecord], build: Store, *,
                      kept: Sequence[ConfigSummary] = (), kept_entries: Mapping[str, Any] | None = None,
                      progress: bool = True) -> tuple[bytes, dict[str, Any]]:
    """The card and the manifest of the folder the written files make (with configs ``kept`` from earlier runs)."""
    from tqdm.auto import tqdm

    names = list(request.configs)
    summaries = [_summary(request, name, records, build)
                 for name in tqdm(names, desc="auditing", unit="config", disable=not progress or len(names) < 2)]
    card = render_card([*summaries, *kept]).encode("utf-8")
    entries = {s.name: config_entry({p: records[p].sha256 for p in s.files}, s) for s in summaries}
    entries.update(kept_entries or {})
    return card, build_manifest(hashlib.sha256(card).hexdigest(), entries, f"lurch-tasks {__version__}")


def finalize_local(request: MaterializeRequest, staging: Path, records: Mapping[str, FileRecord], out_dir: Path, *,
                   overwrite: bool, progress: bool = True) -> Path:
    """Card and manifest for the files in ``staging/build``, then the folder moved into place: a new ``out_dir``
    with one rename, an existing one config by config under a journal (a killed run is completed by the next)."""
    names = list(request.configs)
    recover_interrupted(out_dir)
    check_ownership(out_dir, names, overwrite)
    kept = _kept_configs(out_dir, names)
    previous = (read_owned_manifest(out_dir) or {"configs": {}}) if out_dir.is_dir() else {"configs": {}}
    build_dir = staging / "build"
    card, manifest = card_and_manifest(
        request, records, Store.at(str(build_dir)), kept=[read_summary(d, previous["configs"][d.name]) for d in kept],
        kept_entries={d.name: previous["configs"][d.name] for d in kept}, progress=progress)
    (build_dir / CARD_NAME).write_bytes(card)
    write_json_atomic(build_dir / MANIFEST_NAME, manifest)
    with _signals_blocked():  # a Ctrl-C waits for the renames, so they finish or (if killed) resume
        _move_into_place(build_dir, out_dir, names, staging)
    return out_dir


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

    The bytes depend only on (configs, overrides, seed, limit, max_rows_per_file) and the package/pyarrow
    versions -- not on ``num_proc``, the process, the hash seed or how a sharded run split the work (see
    ``plan``). Everything is built in a staging folder next to ``out_dir``. A new ``out_dir`` appears with one
    rename; in an existing one, each rebuilt config and the card are renamed into place under a journal, so a
    killed run is completed by the next one. Configs of earlier runs that are not rebuilt are kept and listed on
    the new card; files lurch did not write are never replaced (unless ``overwrite``) nor deleted.
    """
    names = check_materialize_args(config_names, out_dir, num_proc)
    out_dir = Path(out_dir)
    request = MaterializeRequest.create(names, overrides, seed, limit, max_rows_per_file)
    check_request(request)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    with locks.writing(out_dir):  # one writer at a time: a second run waits, then builds on this one's output
        _materialize_locked(request, out_dir, num_proc=num_proc, progress=progress, overwrite=overwrite)
    return out_dir


def _materialize_locked(request: MaterializeRequest, out_dir: Path, *, num_proc: int, progress: bool,
                        overwrite: bool) -> None:
    names = list(request.configs)
    remove_stale_staging(out_dir)
    recover_interrupted(out_dir)
    check_ownership(out_dir, names, overwrite)
    kept = _kept_configs(out_dir, names)
    previous = (read_owned_manifest(out_dir) or {"configs": {}}) if out_dir.is_dir() else {"configs": {}}
    for d in kept:  # damaged earlier output fails here, before any work
        read_summary(d, previous["configs"][d.name])

    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
    try:
        (staging / STAGING_MARKER).write_text(str(os.getpid()), encoding="ascii")
        (staging / "build").mkdir()
        records = write_files(request, request.files, Store.at(str(staging / "build")), num_proc=num_proc,
                              progress=progress)
        finalize_local(request, staging, records, out_dir, overwrite=overwrite, progress=progress)
    finally:
        if not _journal_needs(out_dir, staging):  # a replacement that failed half-way is completed by the next run
            shutil.rmtree(staging, ignore_errors=True)


def _journal_needs(out_dir: Path, staging: Path) -> bool:
    try:
        journal = read_journal(out_dir)
    except ValueError:
        return False
    return journal is not None and journal["staging"] == Path(os.path.abspath(staging))


def check_materialize_args(config_names: object, out_dir: object, num_proc: object) -> list[str]:
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
    manifest = read_owned_manifest(out_dir)
    for name in names:  # a config folder that is a symbolic link out of the folder is never moved nor replaced
        inside(out_dir, name, "out")
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
    manifest = read_owned_manifest(out_dir) or {"configs": {}}
    return [d for d in config_dirs(out_dir) if d.name not in names and d.name in manifest["configs"]]


def remove_stale_staging(out_dir: Path) -> list[Path]:
    """Staging folders of runs into ``out_dir`` that were killed (owner process gone, no journal needs them)."""
    if not out_dir.parent.is_dir():
        return []
    journal = read_journal(out_dir)  # a planted journal is refused here, before anything is removed
    needed = {journal["staging"]} if journal else set()
    removed = []
    for candidate in sorted(out_dir.parent.glob(f".{out_dir.name}.tmp-*")):
        marker = candidate / STAGING_MARKER
        if (candidate.is_symlink() or not candidate.is_dir() or marker.is_symlink() or not marker.is_file()
                or Path(os.path.abspath(candidate)) in needed):
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
    journal = read_journal(out_dir)
    if journal is None:
        return []
    staging = journal["staging"]
    build = staging / "build"
    if build.is_symlink() or not build.is_dir():
        raise ValueError(f"out: {str(out_dir)!r} was left half-replaced by an interrupted run whose staging folder "
                         f"{str(staging)!r} is gone; allowed: re-run with --overwrite")
    staged_manifest = build / MANIFEST_NAME  # moved into place last: until then, the new one is in the staging
    staged = read_json(staged_manifest if staged_manifest.is_file() else out_dir / MANIFEST_NAME, "manifest")
    configs = staged.get("configs") if isinstance(staged, dict) else None
    foreign = [name for name in journal["names"] if not isinstance(configs, dict) or name not in configs]
    if foreign:  # the interrupted run's new manifest lists every config it was moving into place
        raise ValueError(f"journal: {str(out_dir / JOURNAL_NAME)!r} names {foreign[0]!r}, which the interrupted run's "
                         "manifest does not list; allowed: the journal lurch wrote (move it away if you did not "
                         "interrupt a run here)")
    _complete_moves(out_dir, journal)
    shutil.rmtree(staging, ignore_errors=True)
    return list(journal["names"])


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
    journal = {"staging": os.path.abspath(staging), "names": list(names)}  # absolute: a resumed run may run elsewhere
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
