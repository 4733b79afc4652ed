"""Write ``lurch_tasks/scoring/chance.json``: the chance level of every in-suite task, per audit slot.

Chance is the mean score of the family's seeded random baseline (the guess ``lurch eval --model lurch-random``
makes) over every doc of the registered task and ``--seeds`` seeds; slots whose exact chance the family knows
(RECON's MCQ and ordering: 0) and rows whose exact chance the family computes (discovery's code rows: 1/F) are
left to the family. ``lurch_tasks.scoring.headline`` reads the table; the tests
check it names the current family versions and recompute a slice of it.

    python scripts/chance_table.py                 # every in-suite task, every doc (minutes)
    python scripts/chance_table.py --rows 64       # a quick, evenly spread slice (the tests use this)
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict

from tqdm.auto import tqdm

from lurch_tasks.core.files import atomic_output
from lurch_tasks.core.generation import generate_row, resolve_task, task_size
from lurch_tasks.core.registry import all_tasks, get_family
from lurch_tasks.core.shortcuts import spread_indices
from lurch_tasks.scoring.headline import CHANCE_FILE


def table_tasks() -> list[str]:
    """In-suite tasks, with views replaced by the stored config they read (RECON's six views -> recon_all)."""
    names: list[str] = []
    for task in all_tasks():
        if task.in_suite:
            name = task.stored_as or task.name
            if name not in names:
                names.append(name)
    return names


def task_chance(name: str, rows: int | None, seeds: int, progress: bool = False) -> dict[str, float]:
    """{slot: mean random-baseline score} over ``rows`` evenly spread docs of ``name`` (all when None)."""
    task = resolve_task(name)
    family = get_family(task.family)
    size = task_size(task)
    indices = spread_indices(size, rows) if rows is not None and rows < size else range(size)
    sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    for index in tqdm(indices, desc=name, disable=not progress):
        row = generate_row(task, index, "test")
        slot = family.audit_slot(row) if family.audit_slot is not None else ""
        if family.slot_chance is not None and family.slot_chance(slot) is not None:
            continue
        if family.row_chance is not None and family.row_chance(row) is not None:
            continue
        for seed in range(seeds):
            sums[slot][0] += float(family.score(row, family.guess(row["prompt"], seed) or "")["score"])
            sums[slot][1] += 1
    return {slot: round(total / count, 6) for slot, (total, count) in sorted(sums.items())}


def build(rows: int | None, seeds: int, progress: bool = False) -> dict:
    tasks = {name: task_chance(name, rows, seeds, progress) for name in table_tasks()}
    families: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for name, slots in tasks.items():
        for slot, value in slots.items():
            families[resolve_task(name).family][slot].append(value)
    return {
        "about": "mean score of each family's seeded random baseline (scripts/chance_table.py)",
        "seeds": seeds, "rows": rows,
        # every in-suite family, those whose chances are all exact (left to the family) included
        "versions": {family: get_family(family).version
                     for family in sorted({resolve_task(name).family for name in tasks})},
        "tasks": tasks,
        "families": {family: {slot: round(sum(v) / len(v), 6) for slot, v in sorted(slots.items())}
                     for family, slots in sorted(families.items())},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=None, help="evenly spread docs per task (default: all)")
    parser.add_argument("--seeds", type=int, default=4, help="random-baseline seeds per doc (default 4)")
    parser.add_argument("--check", action="store_true", help="compare with the committed table instead of writing")
    args = parser.parse_args()
    table = build(args.rows, args.seeds, progress=True)
    text = json.dumps(table, indent=1, sort_keys=True) + "\n"
    if args.check:
        same = CHANCE_FILE.read_text(encoding="utf-8") == text
        print("chance.json is up to date" if same else "chance.json differs: rerun without --check")
        return 0 if same else 1
    with atomic_output(CHANCE_FILE) as handle:
        handle.write(text)
    print(f"wrote {CHANCE_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
