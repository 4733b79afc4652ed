"""Dispersion of unit members among distractors (paper 000, Algorithm 2, with two more modes)."""

from __future__ import annotations

from collections.abc import Sequence

from ...core.rng import StableRng

Unit = tuple[int, ...]


def cut_fractions(members: int, start: float, end: float) -> list[float]:
    """``members`` cut points spaced evenly from ``start`` to ``end`` (one point: the middle)."""
    if members == 1:
        return [(start + end) / 2]
    return [start + (end - start) * i / (members - 1) for i in range(members)]


def place(units: Sequence[Unit], distractors: Sequence[int], mode: str, start: float, end: float,
          rng: StableRng) -> list[int]:
    """The prompt's person order.

    ``spread``: the i-th member of every unit goes to the i-th cut point between fractions ``start`` and
    ``end`` of the distractor list (so the members of one unit are as far apart as the window allows);
    ``adjacent``: each unit's members stay together, units at evenly spaced cut points;
    ``random``: every member at an independent random position.
    """
    n = len(distractors)
    inserts: list[tuple[int, int, int]] = []  # (position in distractors, tie order, person)
    if mode == "spread":
        size = max(len(u) for u in units) if units else 0
        cuts = [round(f * n) for f in cut_fractions(size, start, end)]
        for j, unit in enumerate(units):
            for i, person in enumerate(unit):
                inserts.append((cuts[i], i * len(units) + j, person))
    elif mode == "adjacent":
        cuts = [round(f * n) for f in cut_fractions(len(units), start, end)]
        order = 0
        for j, unit in enumerate(units):
            for person in unit:
                inserts.append((cuts[j], order, person))
                order += 1
    elif mode == "random":
        order = 0
        for unit in units:
            for person in unit:
                inserts.append((rng.below(n + 1), order, person))
                order += 1
    else:
        raise ValueError(f"placement: {mode!r} is not allowed; allowed: spread | adjacent | random")
    inserts.sort()
    result: list[int] = []
    cursor = 0
    for position, _, person in inserts:
        result.extend(distractors[cursor:position])
        cursor = max(cursor, position)
        result.append(person)
    result.extend(distractors[cursor:])
    return result
