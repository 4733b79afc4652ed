"""The headline number: chance-normalised scores, averaged with equal weight per task and per family.

``normalized_score`` = (score - chance) / (1 - chance) per doc: 0 is what a uniform guess expects, 1 is perfect,
and RECON's penalised scores stay below 0 when a model does worse than guessing. Chance is the family's exact
expected score of a uniform guess where it is known (RECON's MCQ and ordering slots: 0), otherwise the mean score of
the family's seeded random baseline on the registered task (``chance.json``, written by ``scripts/chance_table.py``
and checked by the tests), per audit slot where the family has slots.

``balance_key`` names the unit that gets equal weight inside a family: the task (RECON: the question category), so a
family's headline is the mean over its tasks of their mean normalised score, and the umbrella's is the mean over the
four families (``headline``), whatever their doc counts.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from ..core.registry import get_family

CHANCE_FILE = Path(__file__).with_name("chance.json")


@cache
def chance_table() -> dict[str, Any]:
    """{"tasks": {task: {slot: chance}}, "families": {family: {slot: chance}}, ...} as written by the script."""
    return json.loads(CHANCE_FILE.read_text(encoding="utf-8"))


def doc_slot(doc: dict) -> str:
    """The audit slot of a doc ("" for families without slots): chance can differ between slots of one task."""
    family = get_family(doc["family"])
    return family.audit_slot(doc) if family.audit_slot is not None else ""


def chance(doc: dict) -> float:
    """The expected score of a uniform guess on ``doc``: exact where the family knows it, else the random
    baseline's mean on the doc's registered task and slot (the family's mean for that slot for a task the table
    does not hold, e.g. a paper replica)."""
    family = get_family(doc["family"])
    if family.row_chance is not None and (exact := family.row_chance(doc)) is not None:
        return exact
    slot = doc_slot(doc)
    if family.slot_chance is not None and (exact := family.slot_chance(slot)) is not None:
        return exact
    table = chance_table()
    by_task = table["tasks"].get(doc["task"], {})
    if slot in by_task:
        return by_task[slot]
    by_family = table["families"].get(doc["family"], {})
    if slot in by_family:
        return by_family[slot]
    if "" in by_family:
        return by_family[""]
    raise KeyError(f"no chance level for family {doc['family']!r} slot {slot!r}; rerun scripts/chance_table.py")


def normalized(doc: dict, score: float) -> float:
    """``score`` rescaled so that chance is 0 and a perfect answer 1."""
    level = chance(doc)
    return (float(score) - level) / (1.0 - level) if level < 1.0 else float(score >= 1.0)


def balance_key(doc: dict) -> str:
    """The unit weighted equally inside a family: the task, or RECON's question category (one stored config holds
    all six, and the family group's tasks are its per-category views)."""
    family = get_family(doc["family"])
    return family.balance_key(doc) if family.balance_key is not None else doc["task"]


def balanced_mean(items: Iterable[Any]) -> float:
    """lm-eval aggregation of ``headline``: items are ``[key, value]`` pairs (None: a doc that does not report it);
    the mean over keys of each key's mean value. NaN when nothing reported."""
    sums: dict[str, list[float]] = {}
    for item in items:
        if item is None:
            continue
        key, value = item
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        total = sums.setdefault(str(key), [0.0, 0])
        total[0] += float(value)
        total[1] += 1
    means = [total / count for total, count in sums.values() if count]
    return sum(means) / len(means) if means else math.nan
