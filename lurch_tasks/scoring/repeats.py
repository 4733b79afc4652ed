"""Several answers to one doc (lm-eval's ``repeats``; the LURCH paper averages three sampled answers per question):
each answer is scored on its own and the doc's metrics are their mean, so a doc counts once whatever its repeats."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def answers_of(results: Sequence[Any]) -> list[Any]:
    """The answers lm-eval hands ``process_results`` for one doc: ``[answer]`` (its default filter keeps the first
    repeat), or ``[[answer, ...]]`` when the task keeps every repeat."""
    first = results[0] if results else ""
    answers = list(first) if isinstance(first, (list, tuple)) else [first]
    return answers or [""]


def mean_scores(scored: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The answers' metrics averaged name by name: a number is the mean over the answers that report it (None when
    none does); anything else is the first answer's."""
    if len(scored) == 1:
        return dict(scored[0])
    out: dict[str, Any] = {}
    for name in scored[0]:
        values = [s.get(name) for s in scored]
        numbers = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if numbers and len(numbers) == len([v for v in values if v is not None]):
            out[name] = sum(numbers) / len(numbers)
        elif all(v is None for v in values):
            out[name] = None
        else:
            out[name] = scored[0][name]
    return out
