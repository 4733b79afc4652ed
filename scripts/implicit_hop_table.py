"""Requested against achieved axes of every ImplicitHop slice, and the spread of the axes held fixed.

    python scripts/implicit_hop_table.py [--config implicit_hop_depth ...] [--samples N]

Per slice and level of its varied axis: depth (requested, achieved), dispersion (target, mean and max
error), evidence scope (mean), questions per prompt, same-signature competitors per hop (min-max over the
rows) and competitor lines (mean), and across the whole slice the relative spread of the scope among rows
that share a fact count and length (it must stay within 10%), how far the fixed axes moved (they must not),
and which other recorded quantities move with the varied axis (questions per prompt, evidence scope).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict

from lurch_tasks.core.generation import generate_row, resolve_task

SLICES = ("implicit_hop_depth", "implicit_hop_scope", "implicit_hop_dispersion", "implicit_hop_length",
          "implicit_hop_grid", "implicit_hop_compare", "implicit_hop_count")
AXES = (("depth", "depth"), ("facts", "facts"), ("dispersion", "dispersion_target"), ("length", "target_tokens"))


def rows_of(name: str, samples: int | None) -> list[dict]:
    task = resolve_task(name, {"num_samples": samples} if samples else None)
    return [generate_row(task, i)["difficulty"] for i in range(task.config.size())]


def describe(name: str, rows: list[dict]) -> list[str]:
    varied = [axis for axis, field in AXES if len({r[field] for r in rows}) > 1]
    out = [f"## {name}: {len(rows)} rows, varied: {', '.join(varied) or 'none'}", "",
           "| level | rows | depth req / got | dispersion target | mean err | max err | scope mean | questions | "
           "competitors / hop | competitor lines |",
           "|---|---:|---|---:|---:|---:|---:|---|---|---:|"]
    key_field = dict(AXES)[varied[0]] if len(varied) == 1 else None
    groups: dict[object, list[dict]] = defaultdict(list)
    for row in rows:
        groups[row[key_field] if key_field else (row["depth"], row["facts"], row["dispersion_target"],
                                                   row["target_tokens"])].append(row)
    for level, group in sorted(groups.items()):
        depths = sorted({(r["depth"], r["reasoning_depth"]) for r in group})
        errors = [abs(r["evidence_dispersion"] - r["dispersion_target"]) for r in group]
        out.append(f"| {level} | {len(group)} | {', '.join(f'{a}/{b}' for a, b in depths)} | "
                   f"{', '.join(sorted({str(r['dispersion_target']) for r in group}))} | "
                   f"{statistics.mean(errors):.4f} | {max(errors):.4f} | "
                   f"{statistics.mean(r['evidence_scope'] for r in group):.4f} | {_span(group, 'questions')} | "
                   f"{_span(group, 'competitors_per_hop')} | "
                   f"{statistics.mean(r['competitor_lines'] for r in group):.1f} |")
    spreads = []
    by_scope_key: dict[tuple, list[float]] = defaultdict(list)
    for row in rows:
        by_scope_key[(row["facts"], row["target_tokens"])].append(row["evidence_scope"])
    for values in by_scope_key.values():
        mean = statistics.mean(values)
        spreads.append(max(abs(v / mean - 1) for v in values))
    fixed = [axis for axis, field in AXES if axis not in varied]
    out += ["", f"scope spread at a fixed fact count and length: at most {max(spreads):.1%}; fixed axes "
            f"({', '.join(fixed)}) take one value each: "
            f"{all(len({r[dict(AXES)[a]] for r in rows}) == 1 for a in fixed)}; depth exact on every row: "
            f"{all(r['depth'] == r['reasoning_depth'] for r in rows)}"]
    scopes = [statistics.mean(r["evidence_scope"] for r in group) for group in groups.values()]
    out += [f"moving with the varied axis: questions per prompt {_span(rows, 'questions')}; evidence scope "
            f"{min(scopes):.4f}-{max(scopes):.4f} (x{max(scopes) / min(scopes):.1f} across levels); competitors per "
            f"hop {_span(rows, 'competitors_per_hop')} (flat: {len({r['competitors_per_hop'] for r in rows}) == 1})",
            ""]
    return out


def _span(rows: list[dict], field: str) -> str:
    """``a`` when every row has one value, else ``min-max``."""
    values = [r[field] for r in rows]
    return str(min(values)) if min(values) == max(values) else f"{min(values)}-{max(values)}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", action="append", default=None, help="a slice (repeatable; default all)")
    parser.add_argument("--samples", type=int, default=None, help="rows per cell (default: the config's own)")
    args = parser.parse_args()
    for name in args.config or SLICES:
        print("\n".join(describe(name, rows_of(name, args.samples))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
