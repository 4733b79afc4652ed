"""Find the Origin: the floor of `start_in_window` when the chain length can be read (issue 27).

A chain shape of L - 1 links and signed distance d' around the destination is a start (L - 1) * d' lines away and
no start at k * d', 0 < k < L - 1. Along the lines d', 2d', ... the first start fixes the one length whose shape of
d' fits, so a row has at most one look-alike per signed d' of the grid, and two shapes of one length conflict when
one's start is the other's middle link. For every (L, d) of `find_the_origin_depth` this prints the largest number
K of shapes of length L that fit together with the target's (exact: every subset of each side's 14 distances, the
list taken as long enough), and the mean of 1/K over the grid: what an attacker who reads L and picks one look-alike
by rank scores even when the gold's rank among them is uniform. Then, for that floor and for 1/28 (every signed d'
one look-alike and the length unreadable: the best any layout of this kind allows), the chance that one variant of a
strategy scoring exactly that shows above chance + 0.05 on 196, 392 and 588 rows (binomial; chance taken as 0.005).
Usage: scripts/find_origin_floor.py
"""

from __future__ import annotations

import math
from itertools import combinations

from lurch_tasks.core.generation import resolve_task


def conflict(a: int, b: int, links: int) -> bool:
    """Shapes of ``links`` links at same-side distances a and b: one's start where the other has a middle link."""
    return any(links * a == k * b or links * b == k * a for k in range(1, links))


def largest_fitting(nodes: list[int], links: int) -> int:
    """Size of the largest set of distances whose shapes fit together (exhaustive over subsets)."""
    best = 0
    for mask in range(1 << len(nodes)):
        chosen = [x for i, x in enumerate(nodes) if mask >> i & 1]
        if len(chosen) > best and not any(conflict(a, b, links) for a, b in combinations(chosen, 2)):
            best = len(chosen)
    return best


def above_margin(rate: float, rows: int, chance: float = 0.005) -> float:
    """P(hits / rows > chance + 0.05) for hits ~ Binomial(rows, rate)."""
    need = math.floor((chance + 0.05) * rows) + 1
    return sum(math.comb(rows, k) * rate**k * (1 - rate) ** (rows - k) for k in range(need, rows + 1))


def main() -> None:
    config = resolve_task("find_the_origin_depth").config
    side = sorted({abs(d) for d in config.d_values})
    inverse = []
    for length in config.chain_lengths:
        links = length - 1
        other_side = largest_fitting(side, links)
        ks = [1 + other_side + largest_fitting([x for x in side if x != d and not conflict(x, d, links)], links)
              for d in side]
        inverse.extend(1 / k for k in ks)
        print(f"chain length {length}: K per |d| {ks}")
    print(f"mean 1/K over the grid: {sum(inverse) / len(inverse):.4f} (the floor of a rank pick among the "
          "look-alikes of the read length, with the gold's rank uniform)")
    for label, rate in (("length read", sum(inverse) / len(inverse)), ("length hidden, 1/28", 1 / 28)):
        print(f"{label}: P(one variant > chance + 0.05) on 196 / 392 / 588 rows:",
              " / ".join(f"{above_margin(rate, rows):.3f}" for rows in (196, 392, 588)))


if __name__ == "__main__":
    main()
