"""Validity measurements that are too slow for CI: the full shortcut audit grid and placement effects.

    python scripts/validity_report.py placements [--rows 12]   # gold-edge separation and LURCH dispersion
    python scripts/validity_report.py audit [--config NAME ...]  # `lurch audit-shortcuts` on full configs
    python scripts/validity_report.py recon-slots [--rows N] [--config recon_all]  # RECON per (category, format)

RECON's stored config mixes sixteen quota slots, so a hole in one slot is diluted sixteen-fold in the config's
audit line: ``recon-slots`` scores every shortcut (best variant) against chance on each slot's rows alone.

The placement table compares matched pairs (the same people and gold graph in every mode), so the
differences are the placement's alone.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys

from lurch_tasks.core.generation import generate_row, iter_rows, resolve_task, task_size
from lurch_tasks.core.registry import all_tasks, get_family
from lurch_tasks.core.shortcuts import MARGIN, NOISE_Z, audit_task, format_table, mean, spread_indices

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


def recon_slots(name: str, rows: int | None, show: int) -> None:
    """Per (category, format) slot of a RECON config: every shortcut's best variant vs chance (the seeded random
    answer's mean on the slot's rows; MCQ and ordering: exactly 0)."""
    task = resolve_task(name)
    family = get_family(task.family)
    per_case = len(task.config.slots())  # a case's questions are consecutive rows: whole cases, evenly spaced
    cases = spread_indices(task_size(task) // per_case, None if rows is None else max(1, rows // per_case))
    indices = [case * per_case + k for case in cases for k in range(per_case)]
    chance: dict[tuple[str, str], list[float]] = {}
    scores: dict[tuple[str, str], dict[tuple[str, int], list[float]]] = {}
    for index in indices:
        row = generate_row(task, index, "test")
        slot = (row["difficulty"]["category"], row["answer_format"])
        chance.setdefault(slot, []).append(family.score(row, family.guess(row["prompt"], 0) or "")["score"])
        table = scores.setdefault(slot, {})
        for shortcut in family.shortcuts:
            for k, variant in enumerate(shortcut.variants):
                table.setdefault((shortcut.name, k), []).append(
                    family.score(row, shortcut.answer(row["prompt"], variant))["score"])
    print(f"## {name}: {len(indices)} rows (evenly spaced of {task_size(task)}), per slot; best variant per "
          f"strategy; the {show} best strategies of each slot and every one above chance + max({MARGIN}, 2.5 SE)\n")
    print("| slot | rows | strategy | best variant | score | chance | margin | 2.5 SE |")
    print("|---|---|---|---|---|---|---|---|")
    for slot in sorted(scores):
        exact = slot[1] in ("mcq_single", "mcq_multi", "ordering")
        base = 0.0 if exact else mean(chance[slot])
        best: dict[str, tuple[float, object, float]] = {}
        for (strategy, k), values in scores[slot].items():
            variant = next(s for s in family.shortcuts if s.name == strategy).variants[k]
            if strategy not in best or mean(values) > best[strategy][0]:
                error = (_var(values) / len(values) + (0.0 if exact else _var(chance[slot]) / len(values))) ** 0.5
                best[strategy] = (mean(values), variant, NOISE_Z * error)
        ranked = sorted(best.items(), key=lambda item: -item[1][0])
        for j, (strategy, (value, variant, noise)) in enumerate(ranked):
            over = value > base + max(MARGIN, noise)
            if j < show or over:
                print(f"| {slot[0]} · {slot[1]} | {len(chance[slot])} | {strategy} | {variant} | {value:.3f} | "
                      f"{base:.3f} | {value - base:+.3f}{' **FAIL**' if over else ''} | {noise:.3f} |", flush=True)


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
    args = parser.parse_args()
    if args.command == "recon-slots":
        recon_slots(args.config, args.rows, args.show)
        return 0
    if args.command == "placements":
        placements(args.rows, args.tokens, args.connections)
        return 0
    return audit(args.config or [t.name for t in all_tasks()])


if __name__ == "__main__":
    sys.exit(main())
