"""Reference solver, random baseline and family audits on every row of registered configs.

For each config: every row (or ``--n`` evenly spaced ones) is generated; the family's reference solver and its
seeded random guess (the baseline ``lurch eval --model lurch-random`` runs) are scored with the family's scorer,
and the family's per-row audit (what ``lurch validate`` runs on each row) and cross-row audit are collected.
Prints one line per config: rows, solver mean and minimum, random mean against the family's exact chance (when
it has one, or the mean of its rows' exact chances), and the number of audit problems (the first few are shown).

    python scripts/baseline_check.py                        # every default config, every row
    python scripts/baseline_check.py --config recon_all --n 400
    python scripts/baseline_check.py --paper --n 200        # the paper-faithful configs, 200 rows each
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field

from tqdm.auto import tqdm

from lurch_tasks.core.generation import generate_row, resolve_task, task_size
from lurch_tasks.core.registry import all_tasks, get_family
from lurch_tasks.core.shortcuts import spread_indices


@dataclass
class Tally:
    rows: int = 0
    solver: float = 0.0
    solver_min: float = 1.0
    random: float = 0.0
    row_chance: float = 0.0  # the sum of the rows' exact chances, where the family computes one per row
    problems: list[str] = field(default_factory=list)


def check(name: str, n: int | None, progress: bool) -> tuple[Tally, float | None]:
    task = resolve_task(name)
    family = get_family(task.family)
    tally, summaries = Tally(), []
    indices = spread_indices(task_size(task), n)
    for index in tqdm(indices, desc=name, unit="row", disable=not progress, leave=False):
        row = generate_row(task, index, "test")
        solved = family.score(row, family.solve(row["prompt"]) or "")["score"]
        tally.rows += 1
        tally.solver += solved
        tally.solver_min = min(tally.solver_min, solved)
        tally.random += family.score(row, family.guess(row["prompt"], 0) or "")["score"]
        exact = None if family.row_chance is None else family.row_chance(row)
        tally.row_chance += 0.0 if exact is None else exact
        tally.problems += [f"{row['id']}: {problem}" for problem in family.audit(row)]
        if family.row_summary is not None:
            summaries.append(family.row_summary(row))
    if family.audit_rows is not None:
        complete = len(indices) == task_size(task)
        tally.problems += [f"{name}: {p}" for p in family.audit_rows(task.config, summaries, complete)]
    chance = None if family.chance is None else family.chance(task.config)
    if chance is None and family.row_chance is not None and tally.row_chance:
        chance = tally.row_chance / max(tally.rows, 1)  # the mean of the rows' exact chances (discovery code: 1/F)
    return tally, chance


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", action="append", help="config name (repeatable; default: every default config)")
    parser.add_argument("--paper", action="store_true", help="the paper-faithful configs instead of the defaults")
    parser.add_argument("--n", type=int, help="only N evenly spaced rows of each config (default all)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args()
    names = args.config or [t.name for t in all_tasks() if t.paper_faithful == args.paper]
    print("| config | rows | solver mean | solver min | random | exact chance | audit problems |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    failed = False
    for name in names:
        tally, chance = check(name, args.n, not args.quiet)
        rows = max(tally.rows, 1)
        shown = "–" if chance is None else f"{chance:.3f}"
        print(f"| `{name}` | {tally.rows} | {tally.solver / rows:.3f} | {tally.solver_min:.3f} | "
              f"{tally.random / rows:.3f} | {shown} | {len(tally.problems)} |", flush=True)
        for problem in tally.problems[:5]:
            print(f"  problem: {problem}", flush=True)
        failed = failed or tally.solver_min < 1.0 or bool(tally.problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
