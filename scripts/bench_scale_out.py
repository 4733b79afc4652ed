"""Benchmark: a Ray run (local instance, 2 workers) against one process, and what one shard costs.

Usage: python scripts/bench_scale_out.py [--config find_the_origin_long --config memory_drift_edge]
                                         [--workers 2] [--overhead-files 24] [--out DIR]

Three measurements, each on a fresh output folder:

1. Throughput: the configs written by one process (``lurch materialize``, ``num_proc=1``), by the local
   backend's process pool (``--num-proc`` = ``--workers``) and by Ray with
   ``--workers`` workers (one task per planned file, the default split), both including the finalize step (the
   fingerprint and shortcut audit that every run ends with). Ray is timed twice: with its start-up (what a user
   of ``--backend ray`` on one machine waits for) and on an instance already running (what a cluster user pays).
   The files of the two runs are compared by sha256: a benchmark of different bytes would be meaningless.
2. Per-shard overhead: one request of ``--overhead-files`` one-row files (``memory_drift_edge``,
   ``--max-rows-per-file 1``) written by a one-worker Ray instance as one shard and as one shard per file. The
   work is the same and runs in sequence, so the difference divided by the extra shards is what a shard costs
   (task dispatch, the staging checks and the shard's completion record), apart from its rows.
3. The same for a ``--shard I`` process (the Slurm-array path): the wall time of one ``lurch materialize --shard``
   process that writes a one-row file, i.e. the interpreter start-up, imports and checks a shard process pays.

Prints one JSON report.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lurch_tasks.hub import materialize
from lurch_tasks.hub.plan import MaterializeRequest
from lurch_tasks.hub.ray_backend import materialize_ray, require_ray
from lurch_tasks.hub.shards import finalize, write_shard


def file_hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*.parquet"))}


def timed(action) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def start_ray(ray, workers: int) -> float:
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    return timed(lambda: ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False))


def throughput(configs: list[str], workers: int, root: Path) -> dict:
    ray = require_ray()
    request = MaterializeRequest.create(configs)
    one = root / "one_process"
    one_s = timed(lambda: materialize(configs, one, progress=False))
    # For comparison: the local backend's process pool on the same cores, no Ray.
    pool_s = timed(lambda: materialize(configs, root / "process_pool", num_proc=workers, progress=False))

    # The user's view on one machine: materialize_ray starts its own instance and stops it afterwards.
    cold_s = timed(lambda: materialize_ray(request, str(root / "ray_cold"), num_cpus=workers, progress=False))
    # The cluster user's view: the instance (and its worker processes) already running.
    startup_s = start_ray(ray, workers)
    warm = root / "ray_warm"
    try:
        materialize_ray(request, str(root / "ray_warmup"), progress=False)  # workers import lurch_tasks once
        warm_s = timed(lambda: materialize_ray(request, str(warm), progress=False))
    finally:
        ray.shutdown()

    # The serial part of every run: finalize (fingerprints, the card's shortcut audit, the manifest) after the
    # shards; it bounds the speed-up from more workers (Amdahl).
    serial = root / "finalize_only"
    write_shard(request, str(serial), 0, 1, progress=False)
    finalize_s = timed(lambda: finalize(str(serial), progress=False))

    reference = file_hashes(one)
    identical = all(file_hashes(root / name) == reference for name in ("process_pool", "ray_cold", "ray_warm",
                                                                          "finalize_only"))
    rows = sum(f.rows for f in request.files)
    return {
        "configs": configs,
        "rows": rows,
        "files": len(request.files),
        "workers": workers,
        "one_process_seconds": round(one_s, 2),
        "process_pool_seconds": round(pool_s, 2),
        "ray_with_startup_seconds": round(cold_s, 2),
        "ray_startup_seconds": round(startup_s, 2),
        "ray_running_instance_seconds": round(warm_s, 2),
        "finalize_seconds": round(finalize_s, 2),
        "speedup_bound_with_serial_finalize": round(one_s / (finalize_s + (one_s - finalize_s) / workers), 2),
        "speedup_process_pool": round(one_s / pool_s, 2),
        "speedup_ray_with_startup": round(one_s / cold_s, 2),
        "speedup_ray_running_instance": round(one_s / warm_s, 2),
        "rows_per_second_one_process": round(rows / one_s, 1),
        "rows_per_second_ray_running_instance": round(rows / warm_s, 1),
        "byte_identical": identical,
    }


def ray_shard_overhead(files: int, root: Path) -> dict:
    ray = require_ray()
    request = MaterializeRequest.create(["memory_drift_edge"], limit=files, max_rows_per_file=1)
    assert len(request.files) == files
    start_ray(ray, 1)
    try:
        materialize_ray(request, str(root / "overhead_warmup"), num_shards=1, progress=False)
        one_shard_s = timed(lambda: materialize_ray(request, str(root / "overhead_1"), num_shards=1,
                                                    progress=False))
        many_s = timed(lambda: materialize_ray(request, str(root / "overhead_n"), num_shards=files,
                                               progress=False))
    finally:
        ray.shutdown()
    return {
        "files": files,
        "one_shard_seconds": round(one_shard_s, 2),
        "one_shard_per_file_seconds": round(many_s, 2),
        "ray_per_shard_overhead_ms": round(1000 * (many_s - one_shard_s) / (files - 1), 1),
    }


def process_shard_overhead(root: Path) -> dict:
    out = root / "cli_shard"
    lurch = str(Path(sys.executable).with_name("lurch"))
    command = [lurch, "materialize", "--config", "memory_drift_edge", "--limit", "2", "--max-rows-per-file", "1",
               "--shard", "0", "--num-shards", "2", "--out", str(out)]
    shard_s = timed(lambda: subprocess.run(command, check=True, capture_output=True))
    return {"shard_process_seconds": round(shard_s, 2)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", action="append", dest="configs")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--overhead-files", type=int, default=24)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    configs = sorted(args.configs or ["find_the_origin_long", "memory_drift_edge"])
    root = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="lurch-bench-scale-"))
    report = {
        "cpu_count": os.cpu_count(),
        "throughput": throughput(configs, args.workers, root),
        "ray_shard_overhead": ray_shard_overhead(args.overhead_files, root),
        "process_shard_overhead": process_shard_overhead(root),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
