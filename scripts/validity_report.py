"""Validity measurements that are too slow for CI: the full shortcut audit grid and placement effects.

    python scripts/validity_report.py placements [--rows 12]   # gold-edge separation and LURCH dispersion
    python scripts/validity_report.py audit [--config NAME ...]  # `lurch audit-shortcuts` on full configs

The placement table compares matched pairs (the same people and gold graph in every mode), so the
differences are the placement's alone.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys

from lurch_tasks.core.generation import iter_rows, resolve_task
from lurch_tasks.core.registry import all_tasks
from lurch_tasks.core.shortcuts import audit_task, format_table

MODES = ("scatter", "spread", "segments", "random", "adjacent")


def placements(rows: int, tokens: int, connections: int) -> None:
    print(f"| task | placement | mean sep. (tokens) | min | max | mean sep. / context | LURCH dispersion | "
          f"rows ({tokens} tokens, {connections} units) |")
    print("|---|---|---|---|---|---|---|---|")
    for task in ("edge", "subgraph", "clique"):
        for mode in MODES:
            config = resolve_task(f"memory_drift_{task}", {"context_tokens": [tokens], "connections": [connections],
                                                           "num_samples": rows, "placement": mode})
            seps, fractions, dispersion = [], [], []
            for row in iter_rows(config, range(rows)):
                edge_seps = json.loads(row["params"])["edge_separation_tokens"]
                seps += edge_seps
                fractions += [s / row["difficulty"]["context_tokens"] for s in edge_seps]
                dispersion.append(row["difficulty"]["evidence_dispersion"])
            print(f"| {task} | {mode} | {statistics.mean(seps):.0f} | {min(seps)} | {max(seps)} | "
                  f"{statistics.mean(fractions):.2f} | {statistics.mean(dispersion):.3f} | {rows} |")


def audit(names: list[str]) -> int:
    failed = 0
    for name in names:
        result = audit_task(resolve_task(name))
        kind = "paper-faithful" if result.paper_faithful else "default"
        print(f"## {name} ({result.rows} rows, {kind}): {'pass' if result.passed else 'FAIL'}\n")
        print(format_table(result.lines) + "\n", flush=True)
        failed += not result.passed
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("placements")
    p.add_argument("--rows", type=int, default=12)
    p.add_argument("--tokens", type=int, default=8192)
    p.add_argument("--connections", type=int, default=3)
    p = sub.add_parser("audit")
    p.add_argument("--config", action="append")
    args = parser.parse_args()
    if args.command == "placements":
        placements(args.rows, args.tokens, args.connections)
        return 0
    return audit(args.config or [t.name for t in all_tasks()])


if __name__ == "__main__":
    sys.exit(main())
