"""Benchmark: where `lurch materialize` spends its time -- writing the files (workers measure the card's audit
rows there) vs finalizing (the serial part: merging the audit, the learned probe's fit, the card).

Usage: python scripts/bench_audit_phases.py CONFIG NUM_PROC [MAX_ROWS_PER_FILE]

Prints wall and this process's CPU seconds of each phase, and the workers' CPU seconds.
"""

from __future__ import annotations

import json
import resource
import sys
import tempfile
import time
from pathlib import Path

from lurch_tasks.hub import build


def main() -> None:
    config, num_proc = sys.argv[1], int(sys.argv[2])
    per_file = {"max_rows_per_file": int(sys.argv[3])} if len(sys.argv) > 3 else {}
    phases: dict[str, tuple[float, float]] = {}

    def timed(name, fn):
        def wrapper(*args, **kwargs):
            wall, cpu = time.perf_counter(), time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                phases[name] = (round(time.perf_counter() - wall, 2), round(time.process_time() - cpu, 2))
        return wrapper

    build.write_files = timed("write", build.write_files)
    build.finalize_local = timed("finalize", build.finalize_local)
    out = Path(tempfile.mkdtemp(prefix="lurch-phases-")) / "out"
    wall = time.perf_counter()
    build.materialize([config], out, num_proc=num_proc, progress=False, **per_file)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({"config": config, "num_proc": num_proc, "total_wall": round(time.perf_counter() - wall, 2),
                      "phases (wall, parent cpu)": phases,
                      "workers_cpu": round(children.ru_utime + children.ru_stime, 2)}))


if __name__ == "__main__":
    main()
