"""Where unit members go among the distractors (paper 000, Algorithm 2, and leak-free modes).

``scatter`` (the default) is the only mode in which gold positions carry no information: every unit is
dropped at a seeded random place, its first and last member a seeded separation apart. ``spread`` (the
source code's cut points) and ``segments`` (the paper's Algorithm 2 text) are kept for paper-faithful
replication; from them gold positions can be computed from the layout alone (see ``lurch audit-shortcuts``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...core.rng import StableRng

Unit = tuple[int, ...]
MODES = ("scatter", "spread", "segments", "adjacent", "random")


@dataclass(frozen=True)
class PlacementKnobs:
    mode: str
    start: float = 0.1  # spread / segments / adjacent: the window of the distractor list they use
    end: float = 1.0
    separation: float = 0.5  # scatter: target distance of a unit's first and last member (context fraction)
    jitter: float = 0.25  # scatter: the separation is drawn uniformly from separation +- jitter


def cut_fractions(members: int, start: float, end: float) -> list[float]:
    """``members`` cut points spaced evenly from ``start`` to ``end`` (one point: the middle)."""
    if members == 1:
        return [(start + end) / 2]
    return [start + (end - start) * i / (members - 1) for i in range(members)]


def _scatter(units: Sequence[Unit], n: int, knobs: PlacementKnobs, rng: StableRng) -> list[tuple[int, int, int]]:
    """Each unit's first and last member are ``span`` apart (seeded in separation +- jitter), starting at a
    uniform place in [0, 1 - span]; further members (star leaves, clique members) go anywhere, uniformly.
    At the default separation 0.5 every member's position is uniform over the context (a pair: one in
    [0, 1-s], one in [s, 1], s symmetric around 0.5); other separations make positions informative, as
    ``lurch audit-shortcuts`` reports."""
    low, high = max(0.0, knobs.separation - knobs.jitter), min(1.0, knobs.separation + knobs.jitter)
    inserts = []
    for j, unit in enumerate(units):
        span = low + (high - low) * rng.uniform()
        start = (1.0 - span) * rng.uniform()
        ends = [start, start + span] if len(unit) > 1 else [start]
        fractions = [ends[0], *(rng.uniform() for _ in range(len(unit) - 2)), ends[-1]][: len(unit)]
        for i, (person, fraction) in enumerate(zip(unit, fractions, strict=True)):
            inserts.append((fraction, j * 64 + i, person))
    # Ties (two members rounding to one gap) keep the order of their fractions.
    return [(round(fraction * n), rank, person) for rank, (fraction, _, person) in enumerate(sorted(inserts))]


def _segments(units: Sequence[Unit], n: int, knobs: PlacementKnobs, rng: StableRng) -> list[tuple[int, int, int]]:
    """Algorithm 2 as written: [start, end) of the distractors split into k segments, unit j interleaved into
    segment j (each member at a seeded position inside it)."""
    k = len(units)
    inserts = []
    for j, unit in enumerate(units):
        low = knobs.start + (knobs.end - knobs.start) * j / k
        high = knobs.start + (knobs.end - knobs.start) * (j + 1) / k
        positions = sorted(low + (high - low) * rng.uniform() for _ in unit)
        for i, (person, fraction) in enumerate(zip(unit, positions, strict=True)):
            inserts.append((round(fraction * n), j * 64 + i, person))
    return inserts


def place(units: Sequence[Unit], distractors: Sequence[int], knobs: PlacementKnobs, rng: StableRng) -> list[int]:
    """The prompt's person order: the distractors keep their order, unit members are inserted among them.

    ``scatter``: see the module docstring; ``spread``: the i-th member of every unit at the i-th of evenly
    spaced cut points between ``start`` and ``end``; ``segments``: unit j inside segment j; ``adjacent``:
    each unit's members together, units at evenly spaced cut points; ``random``: every member anywhere.
    """
    n = len(distractors)
    inserts: list[tuple[int, int, int]] = []  # (position in distractors, tie order, person)
    if knobs.mode == "scatter":
        inserts = _scatter(units, n, knobs, rng)
    elif knobs.mode == "segments":
        inserts = _segments(units, n, knobs, rng)
    elif knobs.mode == "spread":
        size = max(len(u) for u in units) if units else 0
        cuts = [round(f * n) for f in cut_fractions(size, knobs.start, knobs.end)]
        for j, unit in enumerate(units):
            for i, person in enumerate(unit):
                inserts.append((cuts[i], i * len(units) + j, person))
    elif knobs.mode == "adjacent":
        cuts = [round(f * n) for f in cut_fractions(len(units), knobs.start, knobs.end)]
        order = 0
        for j, unit in enumerate(units):
            for person in unit:
                inserts.append((cuts[j], order, person))
                order += 1
    elif knobs.mode == "random":
        order = 0
        for unit in units:
            for person in unit:
                inserts.append((rng.below(n + 1), order, person))
                order += 1
    else:
        raise ValueError(f"placement: {knobs.mode!r} is not allowed; allowed: {' | '.join(MODES)}")
    inserts.sort()
    result: list[int] = []
    cursor = 0
    for position, _, person in inserts:
        result.extend(distractors[cursor:position])
        cursor = max(cursor, position)
        result.append(person)
    result.extend(distractors[cursor:])
    return result
