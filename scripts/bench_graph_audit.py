"""Benchmark: CPU seconds and peak RSS of `lurch materialize` for one config, and the card's shortcut audit it
wrote (saved, to compare two versions of the code on the same rows).

    python scripts/bench_graph_audit.py --config memory_drift_edge [--tokens 16384] [--rows 16 160]
        [--num-samples 2] [--num-proc 1] [--save DIR]

Each size runs in a fresh process (peak RSS is per process). With ``--tokens``, the first N rows at one token
target (as scripts/bench_memory.py); without it, the config's whole grid with ``--num-samples`` per cell.
``--save DIR`` writes DIR/<config>-<rows>.json: the manifest's shortcut_audit, the card's bytes (SHA-256) and
every Parquet file's SHA-256, so two runs can be compared with ``cmp``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile

CHILD = """
import hashlib, json, resource, sys, time
from pathlib import Path
from lurch_tasks.core.generation import resolve_task
from lurch_tasks.hub import materialize
config, rows, tokens, samples, num_proc, out = (sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]),
                                                 int(sys.argv[5]), Path(sys.argv[6]))
overrides, limit = {}, None
if tokens:
    cells = len(resolve_task(config, {"context_tokens": [tokens]}).config.cells())
    overrides, limit = {"context_tokens": [tokens], "num_samples": -(-rows // cells)}, rows
elif samples:
    overrides = {"num_samples": samples}
start = time.process_time()
materialize([config], out, overrides=overrides or None, limit=limit, progress=False, num_proc=num_proc)
own = resource.getrusage(resource.RUSAGE_SELF)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
manifest = json.loads((out / "lurch-manifest.json").read_text())
entry = manifest["configs"][config]
files = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted((out / config).glob("*.parquet"))}
print(json.dumps({"rows": sum(f.get("num_rows", 0) for f in entry.get("summary", {}).get("files", []))
                  if isinstance(entry.get("summary"), dict) else None,
                  "cpu_s": round(time.process_time() - start + kids.ru_utime + kids.ru_stime, 2),
                  "peak_rss_mib": round(max(own.ru_maxrss, kids.ru_maxrss) / 1024, 1),
                  "audit": entry["shortcut_audit"],
                  "card_sha256": hashlib.sha256((out / "README.md").read_bytes()).hexdigest(),
                  "files": files}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="memory_drift_edge")
    parser.add_argument("--tokens", type=int, default=0, help="one token target, the first --rows rows")
    parser.add_argument("--rows", type=int, nargs="+", default=[16, 160])
    parser.add_argument("--num-samples", type=int, default=0, help="without --tokens: samples per cell")
    parser.add_argument("--num-proc", type=int, default=1)
    parser.add_argument("--save", default=None)
    args = parser.parse_args()
    sizes = args.rows if args.tokens else [0]
    print("| config | rows | CPU s | peak RSS (MiB) | audit rows |\n|---|---:|---:|---:|---:|")
    for rows in sizes:
        with tempfile.TemporaryDirectory(prefix="lurch-gaudit-") as tmp:
            proc = subprocess.run([sys.executable, "-c", CHILD, args.config, str(rows), str(args.tokens),
                                   str(args.num_samples), str(args.num_proc), f"{tmp}/out"],
                                  capture_output=True, text=True, check=False)
        if proc.returncode:
            print(proc.stderr[-3000:], file=sys.stderr)
            return proc.returncode
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        label = rows if args.tokens else f"grid x{args.num_samples or 'default'}"
        print(f"| {args.config} | {label} | {result['cpu_s']} | {result['peak_rss_mib']} | "
              f"{result['audit']['rows']} |", flush=True)
        if args.save:
            tag = f"{args.config}-{rows if args.tokens else 'grid' + str(args.num_samples)}"
            with open(f"{args.save}/{tag}.json", "w") as handle:
                json.dump({k: v for k, v in result.items() if k not in ("cpu_s", "peak_rss_mib", "rows")},
                          handle, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
