"""Find the Origin: how much the line distance between the destination and a chain start says (issue 27).

For each seed, every row of a config: the score of `start_at_distance` (the chain start exactly k lines from the
destination's line, one side first, else the other) for each k, the k chosen on seed 0 scored on the other seeds,
the best signed offset, the seeded random guess, and `start_in_window` (a chain start at a distance the origin
can have, |(chain_length - 1) * d| for d in the config's grid, read the chain length off the other chains; the
nearest, above first). Usage: scripts/find_origin_offsets.py [config] [seeds] [n]
"""

from __future__ import annotations

import sys
from collections import Counter

from lurch_tasks.core.generation import iter_rows, resolve_task, task_size
from lurch_tasks.core.registry import get_family
from lurch_tasks.core.shortcuts import spread_indices
from lurch_tasks.families.find_origin.shortcuts import (
    _DISTANCES,
    _origin_like_rows,
    _start_at_distance,
    view,
)


def chain_length_of(prompt: str) -> int:
    """The chain length read off the other chains: the most common number of links from a chain start."""
    v = view(prompt)
    row_of_source = {a: i for i, (a, _) in enumerate(v.pairs)}
    lengths = Counter()
    for start in sorted(_origin_like_rows(prompt)):
        rows = [start]
        while v.pairs[rows[-1]][1] in row_of_source and len(rows) <= 9:
            rows.append(row_of_source[v.pairs[rows[-1]][1]])
        if v.destination_row not in rows:
            lengths[len(rows)] += 1
    return lengths.most_common(1)[0][0] if lengths else 2


def start_in_window(prompt: str, d_values: tuple[int, ...], shaped: bool = False) -> str | None:
    """The nearest chain start at a distance the origin can have; ``shaped``: only starts whose would-be middle
    links (k * -d lines from the destination) are not chain starts either (the whole chain shape)."""
    v = view(prompt)
    chain_length = chain_length_of(prompt)
    links = chain_length - 1
    starts = _origin_like_rows(prompt)
    rows = sorted((abs(links * d), -links * d) for d in d_values
                  if not shaped or all(v.destination_row - k * d not in starts for k in range(1, links)))
    for _, offset in rows:
        r = v.destination_row + offset
        if r in starts:
            return v.pairs[r][0]
    return None


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else "find_the_origin_random"
    seeds = [int(s) for s in (sys.argv[2] if len(sys.argv) > 2 else "0,1,2,3").split(",")]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else None
    results = {}
    for seed in seeds:
        task = resolve_task(name, seed=seed)
        family = get_family(task.family)
        indices = spread_indices(task_size(task), n)
        totals, signed, window, chance, solved, rows = Counter(), Counter(), 0.0, 0.0, 0.0, 0
        surprising, by_length = 0.0, Counter()
        for row in iter_rows(task, indices):
            prompt = row["prompt"]
            rows += 1
            for variant in _DISTANCES:
                totals[variant] += family.score(row, _start_at_distance(prompt, variant))["score"]
            v = view(prompt)
            origin_row = next(i for i, (a, _) in enumerate(v.pairs) if a == row["answer_items"][0])
            signed[v.destination_row - origin_row] += 1
            word = start_in_window(prompt, task.config.d_values)
            hit = family.score(row, f"FINAL ANSWER: {word}" if word else "")["score"]
            window += hit
            by_length[row["difficulty"]["chain_length"], "hit"] += hit
            by_length[row["difficulty"]["chain_length"], "rows"] += 1
            word = start_in_window(prompt, task.config.d_values, shaped=True)
            surprising += family.score(row, f"FINAL ANSWER: {word}" if word else "")["score"]
            chance += family.score(row, family.guess(prompt, seed) or "")["score"]
            solved += family.score(row, family.solve(prompt) or "")["score"]
        results[seed] = {k: t / rows for k, t in totals.items()}
        best = max(results[seed], key=results[seed].get)
        print(f"{name} seed {seed}: {rows} rows; start_at_distance best {best} = {results[seed][best]:.3f}; "
              f"best signed offset {signed.most_common(1)[0][1] / rows:.3f}; start_in_window {window / rows:.3f} "
              f"(chain-shaped only {surprising / rows:.3f}); "
              f"chance {chance / rows:.3f}; reference solver {solved / rows:.3f}")
        lengths = sorted({length for length, _ in by_length})
        if len(lengths) > 1:
            print("  start_in_window per chain length:",
                  " ".join(f"{c}:{by_length[c, 'hit'] / by_length[c, 'rows']:.3f}" for c in lengths))
        print("  per k (above first):", " ".join(f"{k}:{results[seed][(k, -1)]:.3f}" for k in range(1, 16)))
    if len(seeds) > 1:
        chosen = max(results[seeds[0]], key=results[seeds[0]].get)
        print(f"k chosen on seed {seeds[0]}: {chosen}; on the other seeds:",
              " ".join(f"{results[s][chosen]:.3f}" for s in seeds[1:]))


if __name__ == "__main__":
    main()
