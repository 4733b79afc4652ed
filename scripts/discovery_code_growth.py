"""Run every module of the code kind's default configs and print how each function's operation count grows.

Each row's module is rebuilt from its seed (checked byte for byte against the row) and every function runs at
input sizes n and 4n (``families.discovery.code.measure``: traced line events plus the instrumented inputs'
comparisons, hashes, additions and copied characters). Prints, per kind and role, the smallest and largest growth
ratio over every row, and exits 1 unless every planted function grows at least PLANTED_MIN_RATIO-fold and every
other at most EFFICIENT_MAX_RATIO-fold.

    python scripts/discovery_code_growth.py                          # discovery_code and discovery_code_request
    python scripts/discovery_code_growth.py --config discovery_code --n 24
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict

from tqdm.auto import tqdm

from lurch_tasks.core.generation import generate_row, resolve_task, task_size
from lurch_tasks.core.shortcuts import spread_indices
from lurch_tasks.families.discovery.audit import rebuilt_module
from lurch_tasks.families.discovery.code import EFFICIENT_MAX_RATIO, PLANTED_MIN_RATIO, measure

DEFAULT_CONFIGS = ("discovery_code", "discovery_code_request")


def growth_by_kind(config: str, n: int | None, progress: bool) -> tuple[dict[tuple[str, str], list[float]], int, int]:
    """{(kind, role): growth ratios}, rows measured, rows whose module is not the one their seed builds."""
    task = resolve_task(config)
    size = task_size(task)
    indices = spread_indices(size, n) if n is not None and n < size else range(size)
    ratios: dict[tuple[str, str], list[float]] = defaultdict(list)
    mismatched = 0
    for index in tqdm(indices, desc=config, disable=not progress):
        module = rebuilt_module(generate_row(task, index))
        if module is None:
            mismatched += 1
            continue
        growth = measure(module)
        for function in module.functions:
            ratios[(function.kind, function.role)].append(growth[function.name])
    return ratios, len(indices), mismatched


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", action="append", help="config name (repeatable; default: the code kind's two)")
    parser.add_argument("--n", type=int, default=None, help="only N evenly spaced rows of each config")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args()
    failed = False
    for config in args.config or DEFAULT_CONFIGS:
        ratios, rows, mismatched = growth_by_kind(config, args.n, not args.quiet)
        functions = sum(len(v) for v in ratios.values())
        print(f"{config}: {rows} rows, {functions} functions run, {mismatched} modules not rebuilt byte for byte")
        print("| kind | role | functions | smallest growth | largest growth |")
        print("|---|---|---:|---:|---:|")
        for (kind, role), values in sorted(ratios.items()):
            print(f"| {kind} | {role} | {len(values)} | {min(values):.2f} | {max(values):.2f} |")
        planted = [v for (_, role), values in ratios.items() if role == "planted" for v in values]
        others = [v for (_, role), values in ratios.items() if role != "planted" for v in values]
        print(f"planted: smallest {min(planted):.2f} (need >= {PLANTED_MIN_RATIO:g}); others: largest "
              f"{max(others):.2f} (need <= {EFFICIENT_MAX_RATIO:g})\n")
        failed |= bool(mismatched) or min(planted) < PLANTED_MIN_RATIO or max(others) > EFFICIENT_MAX_RATIO
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
