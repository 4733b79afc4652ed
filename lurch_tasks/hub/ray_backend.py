"""``lurch materialize --backend ray``: the shards of a sharded run as Ray tasks, then the finalize step.

Each task runs ``shards.write_shard`` -- the very function a ``--shard I`` process runs -- so the files are the same
bytes as a one-machine run. Tasks write into the run's staging folder beside the output, which every worker must
reach (a local folder on one machine; NFS or an object-store URL on a cluster), record each file as it lands and
mark their shard complete; so a driver killed half-way loses only the files in flight, and ``--resume`` submits
only the shards that are not complete (and, inside them, only the files that are not).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from .build import check_request
from .plan import MaterializeRequest, assign_shards
from .shards import ShardResult, check_out, check_shard_args, complete_shards, finalize, open_run, write_shard
from .store import Store

INSTALL_HINT = "pip install 'lurch-tasks[ray]'"


def require_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ValueError(f"backend: 'ray' needs Ray, which is not installed; allowed: {INSTALL_HINT}, or --backend "
                         "local") from None
    return ray


# Ray's own fate sharing kills gcs_server and raylet with a SIGKILLed driver, and the task workers follow within
# seconds; but the agents raylet starts (dashboard, runtime env) retry the dead GCS for about a minute (measured:
# 60-64 s). A watchdog that outlives the driver kills the processes of the instance the driver started as soon as
# the driver is gone (its stdin, a pipe from the driver, reaches end-of-file), checking each process's start time so
# that a reused PID is never hit.
_WATCHDOG = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
targets = [entry.split(":") for entry in sys.argv[1:]]
sys.stdin.buffer.read()
for pid, start in targets:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            if handle.read().rsplit(")", 1)[1].split()[19] == start:
                os.kill(int(pid), signal.SIGKILL)
    except (OSError, IndexError):
        pass
"""


def _descendants(root: int) -> dict[int, str]:
    """Process id -> start time (clock ticks since boot) of every live descendant of ``root`` (Linux /proc)."""
    parents: dict[int, tuple[int, str]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            parents[int(entry.name)] = (int(fields[1]), fields[19])
    found: dict[int, str] = {}
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        for pid, (ppid, start) in parents.items():
            if ppid == parent and pid not in found:
                found[pid] = start
                frontier.append(pid)
    return found


def _start_watchdog(before: dict[int, str]) -> subprocess.Popen | None:
    """Kill the local Ray instance's processes (this driver's descendants that were not there ``before``
    ray.init) when this driver dies, however it dies (None off Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    targets = [f"{pid}:{start}" for pid, start in _descendants(os.getpid()).items() if before.get(pid) != start]
    return subprocess.Popen([sys.executable, "-c", _WATCHDOG, *targets], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def _stop_watchdog(watchdog: subprocess.Popen | None) -> None:
    if watchdog is not None and watchdog.stdin is not None:
        watchdog.stdin.close()  # end-of-file: it kills whatever ray.shutdown() left, then exits
        watchdog.wait()


def _write_shard_task(request_json: dict[str, Any], out_url: str, shard: int, num_shards: int, resume: bool,
                      overwrite: bool) -> ShardResult:
    return write_shard(MaterializeRequest.from_json(request_json), out_url, shard, num_shards, resume=resume,
                       overwrite=overwrite, progress=False)


def materialize_ray(request: MaterializeRequest, out_url: str, *, num_shards: int | None = None,
                    address: str | None = None, resume: bool = False, overwrite: bool = False,
                    progress: bool = True, num_cpus: int | None = None) -> str:
    """Write every shard as a Ray task (default: one shard per planned file, the finest split), then finalize.

    ``address``: an existing cluster (``auto``, ``ray://HOST:10001``, ``HOST:6379``); without it a local Ray
    instance is started for the run (``num_cpus`` workers, default all cores) and stopped afterwards."""
    from tqdm.auto import tqdm

    ray = require_ray()
    shards = num_shards or len(request.files)
    check_shard_args(0, shards)
    # The checks every task runs, first in the driver: a bad request or a foreign output folder is one line before
    # any task is submitted.
    check_request(request)
    out = Store.at(out_url)
    check_out(out, request, overwrite)
    staging = open_run(out, request)
    done = complete_shards(staging, request, shards) if resume else set()
    todo = [k for k in range(shards) if k not in done]
    if done and progress:
        print(f"lurch: resuming: {len(done)} of {shards} shards are complete, {len(todo)} to write", file=sys.stderr)

    started = False
    watchdog = None
    if not ray.is_initialized():
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report leaves the machine
        options: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.WARNING,
                                   "log_to_driver": False}
        if address:
            ray.init(address=address, **options)
        else:
            before = _descendants(os.getpid()) if sys.platform.startswith("linux") else {}
            ray.init(num_cpus=num_cpus, **options)
            watchdog = _start_watchdog(before)
        started = True
    try:
        task = ray.remote(num_cpus=1, max_retries=2)(_write_shard_task)
        rows = {k: sum(f.rows for f in files) for k, files in enumerate(assign_shards(request.files, shards))}
        pending = {task.remote(request.to_json(), out_url, k, shards, resume, overwrite): k for k in todo}
        with tqdm(total=sum(rows[k] for k in todo), desc=f"ray: {len(todo)} shards", unit="row",
                  disable=not progress or not todo, file=sys.stderr) as bar:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    try:
                        ray.get(ref)
                    except ray.exceptions.RayTaskError as error:  # the shard's own error, without Ray's wrapping
                        raise (error.cause or error) from None
                    bar.update(rows[pending.pop(ref)])
    finally:
        if started:
            ray.shutdown()
        _stop_watchdog(watchdog)
    return finalize(out_url, overwrite=overwrite, progress=progress)
