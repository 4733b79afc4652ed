"""Validity measurements that are too slow for CI: the full shortcut audit grid and placement effects.

    python scripts/validity_report.py placements [--rows 12]   # gold-edge separation and LURCH dispersion
    python scripts/validity_report.py audit [--config NAME ...]  # `lurch audit-shortcuts` on full configs
    python scripts/validity_report.py recon-slots [--rows N] [--config recon_all]  # RECON per (category, format)

RECON's stored config mixes sixteen quota slots; the audit reports each strategy at its worst slot. ``recon-slots``
runs the same audit (``core.shortcuts.TaskAuditor``) on each slot's rows alone and prints its lines: every slot's
best strategies, each failing line, and the learned surface probe's held-out score (``--no-shortcuts`` /
``--no-learned`` leave one side out).

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
from lurch_tasks.core.shortcuts import (
    FAIL,
    MARGIN,
    AuditLine,
    TaskAuditor,
    audit_task,
    format_table,
    spread_indices,
)

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


def slot_auditor(task, shortcuts: bool, learned: bool) -> TaskAuditor:
    """The shortcut audit of ``task`` as ``lurch audit-shortcuts`` runs it (the family's strategies, probes, slot
    and learned probe), with one side left out on request."""
    return TaskAuditor(task, shortcuts=shortcuts, learned=learned)


def slot_lines(auditor: TaskAuditor) -> list[AuditLine]:
    return list(auditor.result().lines)


def recon_slots(name: str, rows: int | None, show: int, shortcuts: bool = True, learned: bool = True) -> int:
    """Per (category, format) slot of a RECON config: the shortcut audit run on that slot's rows alone, printed as
    the audit's own lines (each strategy at its best variant; the learned probe held out by case), so this table
    and ``lurch audit-shortcuts`` cannot disagree. Returns 1 when a slot fails."""
    task = resolve_task(name)
    family = get_family(task.family)
    per_case = len(task.config.slots())  # a case's questions are consecutive rows: whole cases, evenly spaced
    cases = spread_indices(task_size(task) // per_case, None if rows is None else max(1, rows // per_case))
    indices = [case * per_case + k for case in cases for k in range(per_case)]
    auditors: dict[str, TaskAuditor] = {}
    counts: dict[str, int] = {}
    for index in indices:
        row = generate_row(task, index, "test")
        slot = family.audit_slot(row)
        if slot not in auditors:
            auditors[slot] = slot_auditor(task, shortcuts, learned)
        auditors[slot].add(row)
        counts[slot] = counts.get(slot, 0) + 1
    print(f"## {name}: {len(indices)} rows (whole cases, evenly spaced of {task_size(task)}), the shortcut audit per "
          f"slot: the {show} best lines of each slot and every failing one (pass: <= chance + {MARGIN:g}, or within "
          f"noise)\n")
    print("| slot | rows | strategy | kind | score | chance | margin | status | note |")
    print("|---|---|---|---|---|---|---|---|---|")
    failed = 0
    for slot in sorted(auditors):
        lines = slot_lines(auditors[slot])
        scored = [line for line in lines if not line.strategy.endswith("(AUC)")]
        ranked = sorted(scored, key=lambda line: -line.margin)
        shown = [line for j, line in enumerate(ranked) if j < show or line.status == FAIL
                 or line.strategy.startswith("learned_probe")]
        shown += [line for line in lines if line.strategy.endswith("(AUC)") and line.status == FAIL]
        failed += any(line.status == FAIL for line in lines)
        for line in shown:
            print(f"| {slot} | {counts[slot]} | "
                  f"{line.strategy} | {line.kind} | {line.score:.3f} | {line.chance:.3f} | {line.margin:+.3f} | "
                  f"{'**FAIL**' if line.status == FAIL else line.status} | {line.note} |", flush=True)
    print(f"\n{len(auditors)} slots, {failed} failing")
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
    p = sub.add_parser("recon-slots")
    p.add_argument("--config", default="recon_all")
    p.add_argument("--rows", type=int, default=None, help="evenly spaced rows (default: all)")
    p.add_argument("--show", type=int, default=1, help="strategies shown per slot besides the failing ones")
    p.add_argument("--no-shortcuts", action="store_true", help="the learned probe only")
    p.add_argument("--no-learned", action="store_true", help="the shortcuts only")
    args = parser.parse_args()
    if args.command == "recon-slots":
        return recon_slots(args.config, args.rows, args.show, not args.no_shortcuts, not args.no_learned)
    if args.command == "placements":
        placements(args.rows, args.tokens, args.connections)
        return 0
    return audit(args.config or [t.name for t in all_tasks()])


if __name__ == "__main__":
    sys.exit(main())
