"""Benchmark: peak memory of `lurch materialize` as the instance count grows (it must stay flat).

    python scripts/bench_memory.py [--rows 64 640 6400] [--tokens 16384] [--config find_the_origin]

Each size runs in a fresh process (peak RSS is per process), materializing the first N rows of the config
at one token target; prints rows, seconds and peak RSS, and the largest size's RSS relative to the smallest.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile

CHILD = """
import json, resource, sys, time
from pathlib import Path
from lurch_tasks.core.generation import resolve_task
from lurch_tasks.hub import materialize
config, rows, tokens, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
cells = len(resolve_task(config, {"context_tokens": [tokens]}).config.cells())
overrides = {"context_tokens": [tokens], "num_samples": -(-rows // cells)}
start = time.perf_counter()
materialize([config], out, overrides=overrides, limit=rows, progress=False)
print(json.dumps({"rows": rows, "seconds": round(time.perf_counter() - start, 1),
                  "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="find_the_origin")
    parser.add_argument("--tokens", type=int, default=16384)
    parser.add_argument("--rows", type=int, nargs="+", default=[64, 640, 6400])
    args = parser.parse_args()
    results = []
    print(f"{args.config} at {args.tokens} tokens per prompt")
    print("| rows | seconds | peak RSS (MiB) |\n|---:|---:|---:|")
    for rows in args.rows:
        with tempfile.TemporaryDirectory(prefix="lurch-mem-") as tmp:
            proc = subprocess.run([sys.executable, "-c", CHILD, args.config, str(rows), str(args.tokens),
                                   f"{tmp}/out"], capture_output=True, text=True, check=False)
        if proc.returncode:
            print(proc.stderr[-2000:], file=sys.stderr)
            return proc.returncode
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        results.append(result)
        print(f"| {result['rows']} | {result['seconds']} | {result['peak_rss_mib']} |", flush=True)
    first, last = results[0]["peak_rss_mib"], results[-1]["peak_rss_mib"]
    print(f"peak RSS at {results[-1]['rows']} rows / at {results[0]['rows']} rows: {last / first:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
