"""Item-level scoring shared by every family (DESIGN 5)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class ItemScores:
    tp: int
    fp: int
    fn: int
    memory_drift: float
    precision: float
    recall: float
    f1: float

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def memory_drift(tp: int, fp: int, fn: int, num_gold: int) -> float:
    """1 - max(0, (2·TP - 0.5·FP - 1.0·FN) / (2·P)); in [0, 1], lower is better.

    With no gold items the answer is perfect only if nothing was predicted.
    """
    if num_gold == 0:
        return 0.0 if fp == 0 else 1.0
    return 1.0 - max(0.0, (2.0 * tp - 0.5 * fp - 1.0 * fn) / (2.0 * num_gold))


def score_items(gold_items: Iterable[str], predicted_items: Iterable[str]) -> ItemScores:
    """TP/FP/FN over deduplicated atomic items, with memory drift, precision, recall and F1."""
    gold = set(gold_items)
    predicted = set(predicted_items)
    tp = len(gold & predicted)
    fp = len(predicted - gold)
    fn = len(gold - predicted)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return ItemScores(tp, fp, fn, memory_drift(tp, fp, fn, len(gold)), precision, recall, f1)
