"""Find the Origin: the floor of `start_in_window` when the chain length can be read (issue 27).

A chain shape of L - 1 links and signed distance d' around the destination is a start (L - 1) * d' lines away and
no start at k * d', 0 < k < L - 1. Along the lines d', 2d', ... the first start fixes the one length whose shape of
d' fits, so a row has at most one look-alike per signed d' of the grid, and two shapes of one length conflict when
one's start is the other's middle link. For every (L, d) of `find_the_origin_depth` this prints the largest number
K of shapes of length L that fit together with the target's (exact: a maximum independent set of each side's
conflict graph, the list taken as long enough), and the mean of 1/K over the grid: what an attacker who reads L and
picks one look-alike by rank scores even when the gold's rank among them is uniform. Then, for that floor and for
1/(number of signed d) (every signed d' one look-alike and the length unreadable), the chance that one variant of a
strategy scoring exactly that shows above chance + 0.05 on 196, 392 and 588 rows (binomial; chance taken as 0.005).

With ``--rows SEED``, the same on generated rows: per row, the look-alikes a reader of which lines start chains
finds for the true L on the config's grid (the gold among them), K per chain length, mean 1/K, and on how many rows
the gold is the nearest / the farthest look-alike.

Usage: scripts/find_origin_floor.py [--d-max 15] [--rows SEED ...]
  --d-max N   the grid ±2..±N instead of the config's (15: the grid before 2.3.0)
"""

from __future__ import annotations

import argparse
import json
import math
from functools import cache

from lurch_tasks.core.generation import iter_rows, resolve_task
from lurch_tasks.core.shortcuts import spread_indices
from lurch_tasks.families.find_origin.shortcuts import _origin_like_rows, _shaped, view


def conflict(a: int, b: int, links: int) -> bool:
    """Shapes of ``links`` links at same-side distances a and b: one's start where the other has a middle link."""
    return any(links * a == k * b or links * b == k * a for k in range(1, links))


def largest_fitting(nodes: list[int], links: int) -> int:
    """Size of the largest set of distances whose shapes fit together: an exact maximum independent set of the
    conflict graph (branch on the most conflicted distance: leave it out, or take it and drop its conflicts)."""

    @cache
    def best(left: frozenset[int]) -> int:
        degree = {x: sum(conflict(x, y, links) for y in left if y != x) for x in left}
        if not left or max(degree.values()) == 0:
            return len(left)
        pivot = max(sorted(left), key=lambda x: degree[x])
        rest = left - {pivot}
        return max(best(rest), 1 + best(frozenset(y for y in rest if not conflict(pivot, y, links))))

    return best(frozenset(nodes))


def above_margin(rate: float, rows: int, chance: float = 0.005) -> float:
    """P(hits / rows > chance + 0.05) for hits ~ Binomial(rows, rate)."""
    need = math.floor((chance + 0.05) * rows) + 1
    return sum(math.comb(rows, k) * rate**k * (1 - rate) ** (rows - k) for k in range(need, rows + 1))


def exact_floor(d_values: tuple[int, ...], chain_lengths: tuple[int, ...]) -> float:
    side = sorted({abs(d) for d in d_values})
    inverse = []
    for length in chain_lengths:
        links = length - 1
        other_side = largest_fitting(side, links)
        ks = [1 + other_side + largest_fitting([x for x in side if x != d and not conflict(x, d, links)], links)
              for d in side]
        inverse.extend(1 / k for k in ks)
        print(f"chain length {length}: K per |d| {ks}")
    floor = sum(inverse) / len(inverse)
    print(f"mean 1/K over the grid: {floor:.4f} (the floor of a rank pick among the look-alikes of the read length, "
          "with the gold's rank uniform)")
    hidden = 1 / len({d for d in d_values})
    for label, rate in (("length read", floor), (f"length hidden, 1/{len(set(d_values))}", hidden)):
        print(f"{label}: P(one variant > chance + 0.05) on 196 / 392 / 588 rows:",
              " / ".join(f"{above_margin(rate, rows):.3f}" for rows in (196, 392, 588)))
    return floor


def measured(task, grid: tuple[int, ...]) -> None:
    """Look-alikes on generated rows, for the true chain length on ``grid``."""
    by_length: dict[int, list[int]] = {}
    inverse, nearest, farthest = [], 0, 0
    for row in iter_rows(task, spread_indices(task.config.size(), None)):
        params = json.loads(row["params"])
        d, length = params["cell"]["d"], params["cell"]["chain_length"]
        v = view(row["prompt"])
        shaped = _shaped(v, _origin_like_rows(row["prompt"]), length - 1, grid)
        assert d in shaped, row["id"]  # the gold is always one of them
        by_length.setdefault(length, []).append(len(shaped))
        inverse.append(1 / len(shaped))
        nearest += min(abs(x) for x in shaped) == abs(d)
        farthest += max(abs(x) for x in shaped) == abs(d)
    for length, ks in sorted(by_length.items()):
        print(f"  chain length {length}: K mean {sum(ks) / len(ks):.1f} (min {min(ks)}, max {max(ks)})")
    print(f"  {len(inverse)} rows: mean 1/K {sum(inverse) / len(inverse):.4f}; the gold the nearest look-alike (|d|) "
          f"on {nearest} rows, the farthest on {farthest}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d-max", type=int, default=None, help="the grid ±2..±N instead of the config's")
    parser.add_argument("--rows", type=int, nargs="*", default=[], help="seeds whose generated rows to measure")
    args = parser.parse_args()
    overrides = {"d_values": [d for d in range(-args.d_max, args.d_max + 1) if abs(d) > 1]} if args.d_max else None
    task = resolve_task("find_the_origin_depth", overrides)
    config = task.config
    print(f"grid: d in ±{min(abs(d) for d in config.d_values)}..±{max(abs(d) for d in config.d_values)} "
          f"({len(config.d_values)} signed), chain lengths {list(config.chain_lengths)}")
    exact_floor(config.d_values, config.chain_lengths)
    for seed in args.rows:
        print(f"generated rows, seed {seed} ({config.context_tokens} tokens):")
        measured(resolve_task(task.name, overrides, seed=seed), tuple(config.d_values))


if __name__ == "__main__":
    main()
