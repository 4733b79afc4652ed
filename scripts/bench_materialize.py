"""Benchmark: materialize a config and compare its cost with tokenizing its contexts once.

Usage: python scripts/bench_materialize.py --config find_the_origin_long [--num-proc 1] [--out DIR]

Prints wall time, peak memory (max RSS of this process and its children), the time to tokenize every
produced context once with the config's tokenizer, and their ratio (generation time / tokenize-once time):
the figure that says whether generation stays linear in output size.
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

from lurch_tasks.core.generation import resolve_task
from lurch_tasks.core.tokens import get_token_counter
from lurch_tasks.hub import materialize


def peak_rss_mib() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) / 1024  # Linux reports KiB


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="find_the_origin_long")
    parser.add_argument("--num-proc", type=int, default=1)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()

    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="lurch-bench-"))
    start = time.perf_counter()
    materialize([args.config], out, num_proc=args.num_proc, progress=True)
    generation_s = time.perf_counter() - start

    table = pq.read_table(sorted((out / args.config).glob("*.parquet")), columns=["context"])
    contexts = table.column("context").to_pylist()
    counter = get_token_counter(resolve_task(args.config).config.tokenizer)
    counter.count("warm up")
    start = time.perf_counter()
    tokens = sum(counter.count(text) for text in contexts)
    tokenize_s = time.perf_counter() - start

    report = {
        "config": args.config,
        "rows": len(contexts),
        "context_tokens": tokens,
        "num_proc": args.num_proc,
        "materialize_seconds": round(generation_s, 2),
        "peak_rss_mib": round(peak_rss_mib(), 1),
        "tokenize_once_seconds": round(tokenize_s, 3),
        "ratio_materialize_to_tokenize_once": round(generation_s / tokenize_s, 2),
        "tokens_per_second": round(tokens / generation_s),
        "parquet_bytes": sum(p.stat().st_size for p in out.rglob("*.parquet")),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
