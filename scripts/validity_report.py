"""Validity measurements that are too slow for CI: the full shortcut audit grid and placement effects.

    python scripts/validity_report.py placements [--rows 12]   # gold-edge separation and LURCH dispersion
    python scripts/validity_report.py audit [--config NAME ...]  # `lurch audit-shortcuts` on full configs
    python scripts/validity_report.py recon-slots [--rows N] [--config recon_all]  # RECON per (category, format)

RECON's stored config mixes sixteen quota slots, so a hole in one slot is diluted sixteen-fold in the config's
audit line: ``recon-slots`` scores every shortcut (best variant) against chance on each slot's rows alone, and
the learned surface probe's held-out score per slot (``--no-shortcuts`` / ``--no-learned`` for one of them).

The placement table compares matched pairs (the same people and gold graph in every mode), so the
differences are the placement's alone.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys

from lurch_tasks.core.generation import generate_row, iter_rows, resolve_task, task_size
from lurch_tasks.core.probe import evaluate
from lurch_tasks.core.registry import all_tasks, get_family
from lurch_tasks.core.shortcuts import BULKY_FIELDS, MARGIN, NOISE_Z, audit_task, format_table, mean, spread_indices

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


EXACT = ("mcq_single", "mcq_multi", "ordering")  # RECON formats whose chance is exactly 0


def recon_slots(name: str, rows: int | None, show: int, shortcuts: bool = True, learned: bool = True,
                every_variant: bool = False) -> None:
    """Per (category, format) slot of a RECON config: every shortcut's best variant vs chance (the seeded random
    answer's mean on the slot's rows; MCQ and ordering: exactly 0)."""
    task = resolve_task(name)
    family = get_family(task.family)
    per_case = len(task.config.slots())  # a case's questions are consecutive rows: whole cases, evenly spaced
    cases = spread_indices(task_size(task) // per_case, None if rows is None else max(1, rows // per_case))
    indices = [case * per_case + k for case in cases for k in range(per_case)]
    chance: dict[tuple[str, str], list[float]] = {}
    scores: dict[tuple[str, str], dict[tuple[str, int], list[float]]] = {}
    items, kept, item_chances = [], [], []
    for index in indices:
        row = generate_row(task, index, "test")
        slot = (row["difficulty"]["category"], row["answer_format"])
        chance.setdefault(slot, []).append(family.score(row, family.guess(row["prompt"], 0) or "")["score"])
        if learned and family.learned_probe is not None and (item := family.learned_probe.read(row)) is not None:
            items.append(item)
            kept.append({k: v for k, v in row.items() if k not in BULKY_FIELDS})
            item_chances.append(0.0 if slot[1] in EXACT else chance[slot][-1])
        if not shortcuts:
            continue
        table = scores.setdefault(slot, {})
        for shortcut in family.shortcuts:
            for k, variant in enumerate(shortcut.variants):
                table.setdefault((shortcut.name, k), []).append(
                    family.score(row, shortcut.answer(row["prompt"], variant))["score"])
    if learned and items:
        learned_table(name, family, items, kept, item_chances)
    if not shortcuts:
        return
    print(f"## {name}: {len(indices)} rows (evenly spaced of {task_size(task)}), per slot; "
          f"{'every variant' if every_variant else 'the best variant of each strategy'}: the {show} best of each "
          f"slot and every one above chance + max({MARGIN}, 2.5 SE)\n")
    print("| slot | rows | strategy | best variant | score | chance | margin | 2.5 SE |")
    print("|---|---|---|---|---|---|---|---|")
    for slot in sorted(scores):
        exact = slot[1] in EXACT
        base = 0.0 if exact else mean(chance[slot])
        best: dict[str, tuple[float, object, float]] = {}
        for (strategy, k), values in scores[slot].items():
            variant = next(s for s in family.shortcuts if s.name == strategy).variants[k]
            key = f"{strategy} [{variant}]" if every_variant else strategy
            if key not in best or mean(values) > best[key][0]:
                error = (_var(values) / len(values) + (0.0 if exact else _var(chance[slot]) / len(values))) ** 0.5
                best[key] = (mean(values), variant, NOISE_Z * error)
        ranked = sorted(best.items(), key=lambda item: -item[1][0])
        for j, (strategy, (value, variant, noise)) in enumerate(ranked):
            over = value > base + max(MARGIN, noise)
            if j < show or over:
                print(f"| {slot[0]} · {slot[1]} | {len(chance[slot])} | {strategy} | {variant} | {value:.3f} | "
                      f"{base:.3f} | {value - base:+.3f}{' **FAIL**' if over else ''} | {noise:.3f} |", flush=True)


def learned_table(name: str, family, items: list, kept: list[dict], chances: list[float]) -> None:
    """The learned probe's held-out score per slot: fitted per slot (as the audit does) and, for comparison, per
    answer format (one model over the slots of a format)."""
    print(f"## {name}: learned surface probe, held out by case ({len(items)} rows)\n")
    print("| slot | rows | model per format | AUC | model per slot | AUC | chance |")
    print("|---|---|---|---|---|---|---|")
    per_format = evaluate([dataclasses.replace(item, model=item.report.rpartition("/")[2]) for item in items], kept,
                          chances, family.learned_probe, family.score)
    per_slot = evaluate(items, kept, chances, family.learned_probe, family.score)
    for a, b in zip(per_format, per_slot, strict=True):
        base = mean(list(a.chances))
        cells = []
        for result in (a, b):
            values = list(result.scores)
            noise = NOISE_Z * ((_var(values) + _var(list(result.chances))) / max(1, len(values))) ** 0.5
            over = mean(values) > base + max(MARGIN, noise)
            cells.append(f"{mean(values):.3f}{' **FAIL**' if over else ''} | {result.auc or 0:.3f}")
        print(f"| {a.report} | {a.rows} | {cells[0]} | {cells[1]} | {base:.3f} |", flush=True)
    print()


def _var(values: list[float]) -> float:
    return statistics.variance(values) if len(values) > 1 else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("placements")
    p.add_argument("--rows", type=int, default=12)
    p.add_argument("--tokens", type=int, default=8192)
    p.add_argument("--connections", type=int, default=3)
    p = sub.add_parser("audit")
    p.add_argument("--config", action="append")
    p = sub.add_parser("recon-slots")
    p.add_argument("--config", default="recon_all")
    p.add_argument("--rows", type=int, default=None, help="evenly spaced rows (default: all)")
    p.add_argument("--show", type=int, default=1, help="strategies shown per slot besides the failing ones")
    p.add_argument("--no-shortcuts", action="store_true", help="the learned probe only")
    p.add_argument("--no-learned", action="store_true", help="the shortcuts only")
    p.add_argument("--every-variant", action="store_true", help="one line per variant, not per strategy")
    args = parser.parse_args()
    if args.command == "recon-slots":
        recon_slots(args.config, args.rows, args.show, not args.no_shortcuts, not args.no_learned,
                    args.every_variant)
        return 0
    if args.command == "placements":
        placements(args.rows, args.tokens, args.connections)
        return 0
    return audit(args.config or [t.name for t in all_tasks()])


if __name__ == "__main__":
    sys.exit(main())
