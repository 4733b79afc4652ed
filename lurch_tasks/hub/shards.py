"""Sharded materialize: ``--shard I --num-shards N`` writes the planned files of shard I (same names, same bytes as
a one-machine run), ``--finalize`` checks that every shard is there and complete and then writes the card, and
``--resume`` regenerates only what a crashed run did not finish.

Every shard of a run shares one staging folder beside the output, ``.<OUT>.lurch-shards`` (on the same file
system: a local folder, NFS, or an fsspec URL such as ``s3://bucket/prefix``)::

    plan.json                                 the request and its plan digest (every shard checks it is the same)
    build/<config>/test-KKKKK-of-NNNNN.parquet   the planned files, each written under a temporary name and moved
    records/<config>/test-KKKKK-of-NNNNN.json    per file: SHA-256, sizes, row content hashes, the audit measures of its
                                                 audited rows (after the move)
    shards/shard-IIIII-of-NNNNN.json          per shard, once all its files are recorded

Nothing appears in ``OUT`` before the finalize step: a folder that ``lurch validate`` or ``load_dataset`` would
accept is never incomplete. On a local file system the finalized folder appears with one rename (or config by
config under the journal, when ``OUT`` already holds other configs); on an object store its files are copied,
the card and then the manifest last.
"""

from __future__ import annotations

import posixpath
import re
import shutil
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core import locks
from .build import (
    card_and_manifest,
    check_ownership,
    check_request,
    finalize_local,
    recover_interrupted,
    write_files,
)
from .manifest import CARD_NAME, MANIFEST_NAME, PLAN_NAME, SHARDS_SUFFIX, manifest_bytes
from .plan import MaterializeRequest, PlannedFile, assign_shards
from .store import Store
from .write import FileRecord, record_bytes_cap, shown

SUFFIX = SHARDS_SUFFIX
LOCKS = "locks"  # in the staging folder: one lock file per shard being written
_MARKER = re.compile(r"shard-(\d{5})-of-(\d{5})\.json")


def marker_name(shard: int, num_shards: int) -> str:
    return f"shard-{shard:05d}-of-{num_shards:05d}.json"


def record_name(planned: PlannedFile) -> str:
    return f"records/{planned.config}/{planned.name[: -len('.parquet')]}.json"


def staging_for(out: Store) -> Store:
    return out.sibling(f".{posixpath.basename(out.root)}{SUFFIX}")


def check_shard_args(shard: object, num_shards: object) -> tuple[int, int]:
    if not (isinstance(num_shards, int) and not isinstance(num_shards, bool) and num_shards >= 1):
        raise ValueError(f"num_shards: {num_shards!r} is not allowed; allowed: a positive integer")
    if not (isinstance(shard, int) and not isinstance(shard, bool) and 0 <= shard < num_shards):
        raise ValueError(f"shard: {shard!r} is not allowed; allowed: 0..{num_shards - 1} (with --num-shards "
                         f"{num_shards})")
    return shard, num_shards


# ---------------------------------------------------------------- the run's staging folder


def check_out(out: Store, request: MaterializeRequest, overwrite: bool) -> None:
    """Fail before any work when finalizing could not succeed."""
    if out.is_local:
        recover_interrupted(Path(out.root))
        check_ownership(Path(out.root), request.configs, overwrite)
    elif out.names():
        raise FileExistsError(f"out: {out.url!r} is not empty; allowed: a new or empty prefix (replacing configs in an "
                              "existing folder is supported for local folders)")


def open_run(out: Store, request: MaterializeRequest) -> Store:
    """The staging folder of ``request``'s run into ``out``, created on first use; a staging folder of another
    request (other configs, knobs, seed, limit, or another lurch-tasks plan) is a one-line error."""
    staging = staging_for(out)
    stored = staging.read_json(PLAN_NAME)
    if stored is None:
        staging.write_json(PLAN_NAME, {"digest": request.digest, "request": request.to_json()})
        return staging
    if not isinstance(stored, dict) or stored.get("digest") != request.digest:
        theirs = stored.get("request") if isinstance(stored, dict) else None
        theirs = theirs if isinstance(theirs, dict) else {}
        raise ValueError(f"out: {staging.url!r} holds an unfinished sharded run of another request (configs "
                         f"{theirs.get('configs')}, overrides {theirs.get('overrides')}, seed {theirs.get('seed')}, "
                         f"limit {theirs.get('limit')}); allowed: the same --config/--set/--seed/--limit as that run, "
                         "or delete that staging folder to start over")
    return staging


def stored_request(staging: Store) -> MaterializeRequest:
    stored = staging.read_json(PLAN_NAME)
    if stored is None:
        raise ValueError(f"out: no sharded run to finalize ({staging.url!r} is missing); allowed: a folder whose "
                         "shards were written with `lurch materialize --shard I --num-shards N --out ...`")
    try:  # plan.json is read from disk: any shape but the one lurch writes is one line
        request = MaterializeRequest.from_json(stored["request"])
    except (KeyError, TypeError, AttributeError, ValueError) as error:
        raise ValueError(f"out: {staging.path(PLAN_NAME)!r} is not a plan lurch wrote ({type(error).__name__}: "
                         f"{str(error)[:200]}); allowed: the plan of a sharded run (delete that staging folder to "
                         "start over)") from None
    if request.digest != stored.get("digest"):
        raise ValueError(f"out: the run in {staging.url!r} was planned by another lurch-tasks version (plan digests "
                         "differ); allowed: finalize with the version that wrote the shards")
    return request


def _valid_record(staging: Store, planned: PlannedFile, refuse: str | None = None) -> FileRecord | None:
    """The record of a file that is complete on disk (its size and SHA-256 match), or None. A record that is not
    what lurch writes is no record (the file is written again), or with ``refuse`` (what to do instead) a one-line
    ValueError naming the record, the field, its value and what is allowed."""
    name = record_name(planned)
    data = staging.read_json(name, max_bytes=record_bytes_cap(planned.rows))
    path = f"build/{planned.path}"
    if data is None or not staging.is_file(path):
        return None
    try:  # a record is read from disk: every field is checked before it is used
        record = FileRecord.from_json(data)
        if record.path != planned.path:
            raise ValueError(f"record: field 'path' {shown(record.path)} is not allowed; allowed: {planned.path!r}, "
                             "the file it records")
        if record.num_rows != planned.rows:
            raise ValueError(f"record: field 'num_rows' {record.num_rows} is not allowed; allowed: {planned.rows}, "
                             "the rows the plan gives the file")
    except ValueError as error:
        if refuse is None:
            return None
        raise ValueError(f"shards: {staging.path(name)}: {error} ({refuse})") from None
    if staging.size(path) != record.size or staging.sha256(path) != record.sha256:
        return None
    return record


# ---------------------------------------------------------------- one shard


@dataclass(frozen=True)
class ShardResult:
    shard: int
    num_shards: int
    written: tuple[str, ...]  # files generated by this call
    reused: tuple[str, ...]  # files a crashed earlier call had finished (--resume)


def write_shard(request: MaterializeRequest, out_url: str, shard: int, num_shards: int, *, num_proc: int = 1,
                resume: bool = False, overwrite: bool = False, progress: bool = True,
                on_record: Callable[[FileRecord], None] | None = None) -> ShardResult:
    """Write the planned files of shard ``shard`` of ``num_shards`` into the run's staging folder, record each one,
    then mark the shard complete. With ``resume``, files already complete are kept and not generated again."""
    check_shard_args(shard, num_shards)
    check_request(request)
    out = Store.at(out_url)
    # Shards of different I write at the same time (each shares the output's lock, so a finalize waits for them and
    # they wait for a finalize); two processes on one shard do not (the second fails, naming the first).
    with _output_shared(out):
        check_out(out, request, overwrite)
        staging = open_run(out, request)
        with _shard_lock(staging, shard, num_shards, out):
            return _write_shard_locked(request, staging, shard, num_shards, num_proc=num_proc, resume=resume,
                                       progress=progress, on_record=on_record)


def _output_shared(out: Store) -> Any:
    """The output's lock, shared (local folders only: an fsspec URL cannot be flock'ed)."""
    if not out.is_local:
        return nullcontext()
    Path(out.root).parent.mkdir(parents=True, exist_ok=True)
    return locks.reading(Path(out.root))


def _shard_lock_path(staging: Store, shard: int, num_shards: int) -> Path:
    return Path(staging.path(f"{LOCKS}/{marker_name(shard, num_shards)[: -len('.json')]}.lock"))


@contextmanager
def _shard_lock(staging: Store, shard: int, num_shards: int, out: Store) -> Iterator[None]:
    if not staging.is_local:
        yield
        return
    with locks.exclusive_or_fail(_shard_lock_path(staging, shard, num_shards),
                                 f"shard: shard {shard} of {num_shards} of {out.url!r}"):
        yield


def remove_own_temporaries(staging: Store, files: list) -> list[str]:
    """Delete the temporaries that this shard's killed writers left in its config folders, and no other's: per
    config, since configs share file names (test-00000-of-00004.parquet) and another shard may be writing the
    same name in another config's folder right now."""
    gone = []
    for folder in sorted({f.config for f in files}):
        own = tuple(f.name for f in files if f.config == folder)
        gone += staging.remove_temporaries(f"build/{folder}", keep=lambda name, own=own: not name.endswith(own))
    return gone


def _write_shard_locked(request: MaterializeRequest, staging: Store, shard: int, num_shards: int, *, num_proc: int,
                        resume: bool, progress: bool, on_record: Callable[[FileRecord], None] | None) -> ShardResult:
    files = assign_shards(request.files, num_shards)[shard]
    remove_own_temporaries(staging, files)
    reused = {f.path: r for f in files if resume and (r := _valid_record(staging, f)) is not None}
    todo = [f for f in files if f.path not in reused]

    by_path = {f.path: f for f in files}

    def recorded(record: FileRecord) -> None:
        staging.write_json(record_name(by_path[record.path]), record.to_json())
        if on_record is not None:
            on_record(record)

    write_files(request, todo, staging.child("build"), num_proc=num_proc, progress=progress, on_record=recorded,
                desc=f"shard {shard}/{num_shards}")
    staging.write_json(f"shards/{marker_name(shard, num_shards)}",
                       {"digest": request.digest, "shard": shard, "num_shards": num_shards,
                        "files": [f.path for f in files]})
    return ShardResult(shard, num_shards, tuple(f.path for f in todo), tuple(sorted(reused)))


def complete_shards(staging: Store, request: MaterializeRequest, num_shards: int) -> set[int]:
    """Shards of an N-shard run whose marker is there and whose every file is complete (for --resume)."""
    done = set()
    for shard, files in enumerate(assign_shards(request.files, num_shards)):
        marker = staging.read_json(f"shards/{marker_name(shard, num_shards)}")
        complete = all(_valid_record(staging, f) for f in files)
        if isinstance(marker, dict) and marker.get("digest") == request.digest and complete:
            done.add(shard)
    return done


# ---------------------------------------------------------------- finalize


def check_shards(staging: Store, request: MaterializeRequest) -> dict[str, FileRecord]:
    """Every shard of one --num-shards split present once, each listing its planned files, every file complete;
    returns the records. Missing, duplicated or foreign shards are one line naming them."""
    found: dict[int, set[int]] = {}
    for name in staging.names("shards"):
        match = _MARKER.fullmatch(name)
        if match is None:
            continue
        shard, count = int(match.group(1)), int(match.group(2))
        found.setdefault(count, set()).add(shard)
    if not found:
        raise ValueError(f"shards: none of the run in {staging.url!r} is complete; allowed: finalize after every "
                         "`--shard I --num-shards N` run has finished")
    if len(found) > 1:
        splits = "; ".join(f"{sorted(shards)} of {count}" for count, shards in sorted(found.items()))
        raise ValueError(f"shards: duplicated shards from different --num-shards splits ({splits}); allowed: one "
                         f"--num-shards for every shard of a run (delete the markers of the other split in "
                         f"{staging.path('shards')})")
    ((num_shards, present),) = found.items()
    missing = sorted(set(range(num_shards)) - present)
    if missing:
        raise ValueError(f"shards: {len(missing)} of {num_shards} missing: {', '.join(map(str, missing))}; allowed: "
                         f"run `lurch materialize ... --shard I --num-shards {num_shards}` for each of them, then "
                         "finalize")
    assignment = assign_shards(request.files, num_shards)
    for shard in range(num_shards):
        marker = staging.read_json(f"shards/{marker_name(shard, num_shards)}")
        marker = marker if isinstance(marker, dict) else {}
        if marker.get("digest") != request.digest or marker.get("files") != [f.path for f in assignment[shard]]:
            raise ValueError(f"shards: shard {shard} of {num_shards} was written for another plan; allowed: re-run it "
                             f"with the run's options (`--shard {shard} --num-shards {num_shards}`)")
    owner = {f.path: shard for shard, files in enumerate(assignment) for f in files}
    records = {f.path: r for f in request.files
               if (r := _valid_record(staging, f, refuse=f"or re-run shard {owner[f.path]} of {num_shards} with "
                                                        "--resume to write that file again")) is not None}
    broken = [f.path for f in request.files if f.path not in records]
    if broken:
        owners = sorted({k for k, files in enumerate(assignment) for f in files if f.path in broken})
        raise ValueError(f"shards: {len(broken)} file(s) incomplete or missing ({broken[0]}, ...) in shard(s) "
                         f"{', '.join(map(str, owners))} of {num_shards}; allowed: re-run those shards with --resume")
    return records


def finalize(out_url: str, *, overwrite: bool = False, progress: bool = True) -> str:
    """Check the sharded run into ``out_url``, write its card and manifest, and put the folder in place."""
    out = Store.at(out_url)
    if not out.is_local:  # an object store cannot be locked: one finalize at a time is the caller's job (README)
        return _finalize(out, overwrite=overwrite, progress=progress)
    Path(out.root).parent.mkdir(parents=True, exist_ok=True)
    with locks.writing(Path(out.root)):
        return _finalize(out, overwrite=overwrite, progress=progress)


def _finalize(out: Store, *, overwrite: bool, progress: bool) -> str:
    staging = staging_for(out)
    request = stored_request(staging)
    check_request(request)
    if staging.is_local:
        for lock in sorted(Path(staging.path(LOCKS)).glob("*.lock")):
            pid = locks.busy(lock)
            if pid is not None:  # a shard process that does not share the output's lock (an older lurch-tasks)
                who = f"PID {pid}" if pid else "another process"
                raise ValueError(f"shards: {lock.stem} is still being written by {who}; allowed: finalize after "
                                 "every shard has finished")
    if not staging.exists("build") and _finalized(out, request):  # killed after the move, before the clean-up
        staging.remove()
        return out.url
    records = check_shards(staging, request)
    if out.is_local:
        finalize_local(request, Path(staging.root), records, Path(out.root), overwrite=overwrite, progress=progress)
        shutil.rmtree(staging.root, ignore_errors=True)
    else:
        _finalize_remote(request, staging, records, out, progress=progress)
        staging.remove()
    return out.url


def _finalized(out: Store, request: MaterializeRequest) -> bool:
    manifest = out.read_json(MANIFEST_NAME)
    configs = manifest.get("configs") if isinstance(manifest, dict) else None
    return isinstance(configs, dict) and all(name in configs for name in request.configs)


def _finalize_remote(request: MaterializeRequest, staging: Store, records: Mapping[str, FileRecord], out: Store, *,
                     progress: bool) -> None:
    """Copy the files into a new or empty prefix, then the card, then the manifest (which vouches for the rest)."""
    if out.names():
        raise FileExistsError(f"out: {out.url!r} is not empty; allowed: a new or empty prefix (replacing configs in an "
                              "existing folder is supported for local folders)")
    card, manifest = card_and_manifest(request, records, staging.child("build"), progress=progress)
    for planned in request.files:
        out.fs.makedirs(out.path(planned.config), exist_ok=True)
        out.fs.copy(staging.path(f"build/{planned.path}"), out.path(planned.path))
    out.write_bytes(CARD_NAME, card)
    out.write_bytes(MANIFEST_NAME, manifest_bytes(manifest))
