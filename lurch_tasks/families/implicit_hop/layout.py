"""Where the required facts go: a line order whose LURCH evidence dispersion hits a target.

Dispersion (DESIGN 3.4) is the share of non-evidence tokens lying between the first and the last evidence
line. With per-line token costs known, the evidence lines are laid out as: ``before`` distractor lines, the
first evidence line, ``gaps`` of distractor lines between consecutive evidence lines, the last evidence
line, the rest. The gaps together hold a run of distractor lines whose tokens come closest to
``target * all distractor tokens``; where that run starts is seeded (over the starts that can hold it,
the two extreme ones weighted up) and so is how it splits into gaps (inner lines nearer the run's ends),
so the evidence lines neither crowd the middle of the context nor follow from the layout.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...core.rng import StableRng

END_MASS = 0.75  # each extreme start also takes width x END_MASS of the range beyond its end


@dataclass(frozen=True)
class Layout:
    before: int  # distractor lines before the first evidence line
    gaps: tuple[int, ...]  # distractor lines between consecutive evidence lines (len = evidence - 1)
    inside_tokens: int  # distractor tokens between the first and the last evidence line
    distractor_tokens: int

    @property
    def dispersion(self) -> float:
        return self.inside_tokens / self.distractor_tokens if self.distractor_tokens else 0.0

    def order(self, evidence: Sequence[int], distractors: Sequence[int]) -> list[int]:
        """The lines in context order: ``evidence`` and ``distractors`` are line ids, each in its own order."""
        lines: list[int] = list(distractors[:self.before])
        taken = self.before
        for k, line in enumerate(evidence):
            lines.append(line)
            if k < len(self.gaps):
                lines += distractors[taken:taken + self.gaps[k]]
                taken += self.gaps[k]
        return lines + list(distractors[taken:])


def disperse(distractor_costs: Sequence[int], evidence_lines: int, target: float, rng: StableRng,
             stratum: tuple[int, int] = (0, 1)) -> Layout:
    """A layout of ``evidence_lines`` evidence lines among distractor lines of the given token costs (in
    context order) whose dispersion is as close to ``target`` as whole lines allow. ``stratum`` (k, K): the
    run's start is drawn from the k-th of K equal shares of its distribution, so K samples of one cell
    cover every part of the context once instead of by luck."""
    costs = np.asarray(distractor_costs, dtype=np.int64)
    total = int(costs.sum())
    if evidence_lines < 2 or not len(costs):
        start = rng.below(len(costs) + 1)
        return Layout(start, (0,) * max(evidence_lines - 1, 0), 0, total)
    prefix = np.concatenate([[0], np.cumsum(costs)])
    want = target * total
    # For every start, the end whose run of lines comes closest to the wanted tokens.
    ends = np.clip(np.searchsorted(prefix, prefix + want), 0, len(costs))
    shorter = np.maximum(ends - 1, np.arange(len(prefix)))
    ends = np.where(np.abs(prefix[shorter] - prefix - want) <= np.abs(prefix[ends] - prefix - want), shorter, ends)
    error = np.abs(prefix[ends] - prefix - want)
    # Every start about as good as the best (within half a line, and 1% of the distractor tokens at most).
    feasible = np.flatnonzero(error <= max(error.min(), min(costs.max() / 2, total / 100)))
    start = int(feasible[_edge_weighted(len(feasible), target, rng, stratum)])
    run = int(ends[start] - start)
    cuts = sorted(_toward_ends(run, rng) for _ in range(evidence_lines - 2))
    gaps = tuple(b - a for a, b in zip([0, *cuts], [*cuts, run], strict=True))
    return Layout(start, gaps, int(prefix[start + run] - prefix[start]), total)


def _toward_ends(run: int, rng: StableRng) -> int:
    """Where an inner evidence line falls in a run of ``run`` distractor lines: arcsine-distributed (more
    often near the run's ends than in its middle), which, summed over the run's possible starts, keeps the
    evidence lines from crowding the middle of the context."""
    return round(run * (1 - math.cos(math.pi * rng.uniform())) / 2)


def _edge_weighted(count: int, width: float, rng: StableRng, stratum: tuple[int, int] = (0, 1)) -> int:
    """A start among ``count`` feasible ones: uniform, with the two extreme starts also taking the mass of
    ``width / 2`` of the range beyond each end. A window that must span a share ``width`` of the distractors
    would, at a uniform start, sit in the middle more often than at the ends; the extra end mass evens out
    where the evidence lines fall."""
    if count <= 1 or width >= 1:
        return 0
    extra = round(count * END_MASS * width / (1 - width))
    k, strata = stratum
    draw = int((k + rng.uniform()) / strata * (count + 2 * extra))
    return min(max(draw - extra, 0), count - 1)
