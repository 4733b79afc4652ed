"""Ordering answers (RECON, paper App. D.1): the model gets the gold set of m items as letters and writes a
permutation; Kendall's tau = (C - D) / C(m, 2) over its pairs, in [-1, 1]. An answer with a wrong item, a
repeat or a missing item (wrong cardinality) scores 0, as abstaining does. Items for memory drift are the
ordered adjacent pairs ("A>C")."""

from __future__ import annotations

from itertools import combinations

from .mcq import ABSTAIN, parse_letters


def kendall_tau(gold: tuple[str, ...], predicted: tuple[str, ...]) -> float:
    """(concordant - discordant) / C(m, 2); 0 unless ``predicted`` is a permutation of ``gold``."""
    m = len(gold)
    if m < 2 or len(predicted) != m or set(predicted) != set(gold):
        return 0.0 if m >= 2 else float(tuple(predicted) == tuple(gold))
    rank = {item: k for k, item in enumerate(predicted)}
    concordant = sum(1 for a, b in combinations(gold, 2) if rank[a] < rank[b])
    pairs = m * (m - 1) // 2
    return (concordant - (pairs - concordant)) / pairs


def adjacent_pairs(order: tuple[str, ...]) -> list[str]:
    return [f"{a}>{b}" for a, b in zip(order, order[1:], strict=False)]


def parse_order(output: object, letters: str) -> tuple[str, ...] | str | None:
    """The letters of the final answer in order, ``ABSTAIN``, or None (see ``mcq.parse_letters``)."""
    return parse_letters(output, letters)


def ordering_score(gold: tuple[str, ...], predicted: tuple[str, ...] | str | None) -> dict[str, float]:
    abstained = predicted == ABSTAIN
    order = () if abstained or not predicted else tuple(predicted)
    tau = kendall_tau(gold, order) if order else 0.0
    return {"score": tau, "accuracy": float(order == tuple(gold)), "abstain_rate": float(abstained)}
