"""The paper's graph metrics from intended true and false positives (FN = P - TP), for answer corpora."""

from __future__ import annotations


def expected_graph_metrics(tp: int, fp: int, num_gold: int) -> dict[str, float]:
    """memory drift = 1 - max(0, (2·TP - 0.5·FP - FN) / (2·P)); score = 1 - drift; P/R/F1 on edges."""
    fn = num_gold - tp
    drift = 1.0 - max(0.0, (2 * tp - 0.5 * fp - fn) / (2 * num_gold))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / num_gold
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"score": 1.0 - drift, "memory_drift": drift, "precision": precision, "recall": recall, "f1": f1}
