"""The learned surface probe (DESIGN 3.5): the attack nobody wrote by hand.

Hand-written shortcuts only catch the holes someone foresaw. The learned probe gives a classifier every
reasoning-free statistic of each candidate answer a family can compute from the prompt alone — where and how
often it is mentioned (first, second, median, last, mean position), its length, its overlap with the question,
its distance to the question's named entities and times, its place in the option list — and lets it learn which
combination points at gold. It is fitted per ``model`` key (e.g. an answer format) and scored only on held-out
cases: folds are whole groups (a case, a world), never single rows, so nothing learned from one case's quirks is
scored on that case. Each row's held-out probabilities are decoded into an ordinary model output and scored with
the family's own scorer, so the probe's score sits on the same scale as every shortcut and obeys the same bound:
chance + 0.05.

A family supplies a :class:`LearnedProbe`: ``read(row)`` -> :class:`ProbeItem` (its candidates with features and
gold flags) and ``decode(item, probabilities)`` -> an output. The fitting lives here, written once.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

FOLDS = 5
NEVER = 1.0  # the relative position given to a rank that does not exist (a thing mentioned fewer times)


@dataclass(frozen=True)
class Candidate:
    """One option, item, entity, pair or number a solver could answer with."""

    answer: str  # what it contributes to an output (an option letter, a name, "A>B", "3")
    gold: bool  # part of the gold answer (an ordering pair: "a comes before b")
    features: tuple[float, ...]  # reasoning-free surface features; one fixed length per model key


class CandidateTable(Sequence[Candidate]):
    """A row's candidates kept packed: a family's few numbers per row from which every candidate's features are
    rebuilt on demand, exactly (a row of graph reconstruction has ~5,000 pairs of 34 features: 7 MB as
    :class:`Candidate` objects, ~30 KB packed). The fit reads :meth:`matrix` and :meth:`golds`, decoders read
    :meth:`answer`; iterating builds the :class:`Candidate` objects (tests, diagnostics).

    A subclass is a frozen dataclass of JSON values and tuples, registered with
    :func:`~.shortcuts.register_audit_type` so that an audit entry holding it can be stored and read back."""

    def matrix(self) -> Any:
        """Every candidate's features, one row each: a float64 numpy array (len x width)."""
        raise NotImplementedError

    def golds(self) -> Sequence[bool]:
        raise NotImplementedError

    def width(self) -> int:
        """Features per candidate (a subclass that knows it without building the matrix says so)."""
        return int(self.matrix().shape[1]) if len(self) else 0

    def answer(self, k: int) -> str:
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self.golds())

    @overload
    def __getitem__(self, k: int) -> Candidate: ...

    @overload
    def __getitem__(self, k: slice) -> Sequence[Candidate]: ...

    def __getitem__(self, k: int | slice) -> Candidate | Sequence[Candidate]:
        if isinstance(k, slice):
            return tuple(self)[k]
        if not -len(self) <= k < len(self):
            raise IndexError(k)
        k %= len(self)
        return Candidate(self.answer(k), self.golds()[k], as_features(self.matrix()[k].tolist()))

    def __iter__(self) -> Iterator[Candidate]:
        matrix, golds = self.matrix(), self.golds()
        for k in range(len(golds)):
            yield Candidate(self.answer(k), golds[k], as_features(matrix[k].tolist()))


@dataclass(frozen=True)
class ProbeItem:
    """One row as the probe sees it."""

    group: str  # the case / world the row is drawn from: cross-validation folds never split one
    model: str  # rows with the same key share one fitted model
    report: str  # the audit line the row is reported under ("" = one line for the config)
    candidates: Sequence[Candidate]  # a tuple, or a CandidateTable (packed, rebuilt on demand)


def candidate_matrix(candidates: Sequence[Candidate]) -> Any:
    """The candidates' features as a float64 array (len x width); a ValueError when their lengths differ."""
    import numpy as np

    if isinstance(candidates, CandidateTable):
        return candidates.matrix()
    widths = {len(c.features) for c in candidates}
    if len(widths) > 1:
        raise ValueError(f"learned probe: candidates of one row have feature lengths {sorted(widths)}")
    return np.array([c.features for c in candidates], dtype=float)


def candidate_golds(candidates: Sequence[Candidate]) -> Sequence[bool]:
    return candidates.golds() if isinstance(candidates, CandidateTable) else [c.gold for c in candidates]


def candidate_answer(candidates: Sequence[Candidate], k: int) -> str:
    return candidates.answer(k) if isinstance(candidates, CandidateTable) else candidates[k].answer


@dataclass(frozen=True)
class LearnedProbe:
    description: str
    read: Callable[[dict], ProbeItem | None]  # a generated row -> its candidates (None: the row is not probed)
    decode: Callable[[ProbeItem, Sequence[float]], str]  # held-out P(gold) per candidate -> a model output


# --- generic features ------------------------------------------------------------------------------------


def mention_positions(text: str, needle: str) -> list[float]:
    """Start offsets of every (non-overlapping) occurrence of ``needle`` in ``text``, divided by its length."""
    if not needle or not text:
        return []
    found, start, size = [], text.find(needle), float(len(text))
    while start >= 0:
        found.append(start / size)
        start = text.find(needle, start + len(needle))
    return found


def rank_features(positions: Sequence[float]) -> tuple[float, ...]:
    """(count, first, second, median, last, mean) of relative positions; a missing rank is ``NEVER``."""
    ordered = sorted(positions)
    if not ordered:
        return (0.0, NEVER, NEVER, NEVER, NEVER, NEVER)
    return (float(len(ordered)), ordered[0], ordered[1] if len(ordered) > 1 else NEVER,
            float(statistics.median(ordered)), ordered[-1], float(statistics.fmean(ordered)))


RANK_FEATURES = ("count", "first", "second", "median", "last", "mean")


def nearest_distance(positions: Sequence[float], anchors: Sequence[float]) -> float:
    """The smallest gap between a position and an anchor (e.g. a mention of the question's entity); 1.0 when
    either side is empty."""
    if not positions or not anchors:
        return 1.0
    return min(abs(p - a) for p in positions for a in anchors)


def word_overlap(text: str, other: str) -> float:
    """Shared lower-cased words over the words of ``text`` (0 for an empty text)."""
    words = {w.strip(".,;:?!()[]\"'").lower() for w in text.split()} - {""}
    others = {w.strip(".,;:?!()[]\"'").lower() for w in other.split()} - {""}
    return len(words & others) / len(words) if words else 0.0


# --- fitting ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProbeResult:
    """Held-out outcome of one report key."""

    report: str
    rows: int
    scores: tuple[float, ...]  # the family score of each row's decoded output
    chances: tuple[float, ...]  # the chance score of the same rows
    auc: float | None  # held-out AUC of P(gold) over every candidate of these rows
    skipped: int  # rows of a model key with too few groups to hold one out


def held_out_probabilities(items: Sequence[ProbeItem]) -> list[list[float] | None]:
    """P(gold) for every candidate of every item, each predicted by a model that never saw the item's group.

    One standardised logistic regression per ``model`` key, GroupKFold over ``group`` (up to ``FOLDS`` folds). An
    item whose model key has fewer than two groups, or whose training folds hold one class only, gets None."""
    by_model: dict[str, list[int]] = {}
    for k, item in enumerate(items):
        if item.candidates:
            by_model.setdefault(item.model, []).append(k)
    out: list[list[float] | None] = [None] * len(items)
    for model in sorted(by_model):
        for k, probabilities in zip(by_model[model], _fit_model([items[k] for k in by_model[model]]), strict=True):
            out[k] = probabilities
    return out


def _fit_model(items: Sequence[ProbeItem]) -> list[list[float] | None]:
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    groups = sorted({item.group for item in items})
    if len(groups) < 2:
        return [None] * len(items)
    sizes = [len(item.candidates) for item in items]
    # a packed table is rebuilt for each fold rather than kept expanded: the whole matrix of every row never
    # exists at once, only a fold's training rows (a fold never splits an item: its group is held out whole)
    blocks = [item.candidates if isinstance(item.candidates, CandidateTable) else candidate_matrix(item.candidates)
              for item in items]
    widths = {block.width() if isinstance(block, CandidateTable) else block.shape[1]
              for block, size in zip(blocks, sizes, strict=True) if size}
    if len(widths) != 1:
        raise ValueError(f"learned probe: candidates of model {items[0].model!r} have feature lengths {sorted(widths)}")
    y = np.array([gold for item in items for gold in candidate_golds(item.candidates)], dtype=int)
    group_index = {g: n for n, g in enumerate(groups)}
    row_groups = np.repeat([group_index[item.group] for item in items], sizes)
    owner = np.repeat(np.arange(len(items)), sizes)
    predicted = np.full(len(y), np.nan)
    for train, test in GroupKFold(n_splits=min(FOLDS, len(groups))).split(np.empty((len(y), 0)), y, row_groups):
        if len(set(y[train].tolist())) < 2:
            continue
        held_out = set(owner[test].tolist())
        kept = [k for k in range(len(items)) if k not in held_out]  # in item order: the rows of x[train]
        # the stacked matrices are fresh: the scaler may scale them in place (the same arithmetic as on a copy
        # of its own, one matrix fewer in memory)
        model = make_pipeline(StandardScaler(copy=False), LogisticRegression(C=1.0, max_iter=2000))
        model.fit(_stack(blocks, sizes, kept, items[0].model), y[train])
        predicted[test] = model.predict_proba(_stack(blocks, sizes, sorted(held_out), items[0].model))[:, 1]
    out: list[list[float] | None] = []
    start = 0
    for size in sizes:
        chunk = predicted[start:start + size]
        start += size
        out.append(None if np.isnan(chunk).any() else [float(p) for p in chunk])
    return out


def _stack(blocks: Sequence[Any], sizes: Sequence[int], chosen: Sequence[int], model: str) -> Any:
    """The features of the ``chosen`` items, stacked in that order into one preallocated float64 array (a packed
    table's matrix is built here and dropped once copied)."""
    import numpy as np

    x: Any = None
    start, widths = 0, set()
    for k in chosen:
        if not sizes[k]:
            continue
        block = blocks[k].matrix() if isinstance(blocks[k], CandidateTable) else blocks[k]
        widths.add(block.shape[1])
        if len(widths) > 1:
            raise ValueError(f"learned probe: candidates of model {model!r} have feature lengths {sorted(widths)}")
        if x is None:
            x = np.empty((sum(sizes[c] for c in chosen), block.shape[1]), dtype=float)
        x[start:start + sizes[k]] = block
        start += sizes[k]
    return np.empty((0, 0), dtype=float) if x is None else x


def evaluate(items: Sequence[ProbeItem], rows: Sequence[dict], chances: Sequence[float], probe: LearnedProbe,
             score: Callable[[dict, str], dict[str, float]]) -> list[ProbeResult]:
    """Fit, decode and score: one result per report key (sorted), over the items that got held-out predictions.
    ``rows`` are what the family scorer reads of each item's row; ``chances`` each row's chance score."""
    from .shortcuts import rank_auc

    probabilities = held_out_probabilities(items)
    scores: dict[str, list[float]] = {}
    chance: dict[str, list[float]] = {}
    pairs: dict[str, list[tuple[float, bool]]] = {}
    skipped: dict[str, int] = {}
    for item, row, row_chance, predicted in zip(items, rows, chances, probabilities, strict=True):
        if predicted is None:
            skipped[item.report] = skipped.get(item.report, 0) + 1
            continue
        output = probe.decode(item, predicted)
        scores.setdefault(item.report, []).append(score(row, output)["score"])
        chance.setdefault(item.report, []).append(row_chance)
        pairs.setdefault(item.report, []).extend(zip(predicted, candidate_golds(item.candidates), strict=True))
    return [ProbeResult(report, len(scores.get(report, [])), tuple(scores.get(report, [])),
                        tuple(chance.get(report, [])), rank_auc(pairs[report]) if report in pairs else None,
                        skipped.get(report, 0))
            for report in sorted(set(scores) | set(skipped))]


# --- decoders the families share -------------------------------------------------------------------------


def top_answer(item: ProbeItem, probabilities: Sequence[float]) -> str:
    """The candidate with the highest P(gold) (the first on ties)."""
    best = max(range(len(probabilities)), key=lambda k: (probabilities[k], -k))
    return candidate_answer(item.candidates, best)


def likely_answers(item: ProbeItem, probabilities: Sequence[float], threshold: float = 0.5) -> list[str]:
    """Every candidate with P(gold) >= ``threshold``, in candidate order; at least the top one."""
    if len(probabilities) != len(item.candidates):
        raise ValueError(f"{len(probabilities)} probabilities for {len(item.candidates)} candidates")
    chosen = [candidate_answer(item.candidates, k) for k, p in enumerate(probabilities) if p >= threshold]
    return chosen or [top_answer(item, probabilities)]


def order_from_pairs(item: ProbeItem, probabilities: Sequence[float]) -> list[str]:
    """Items sorted by their expected wins over ordered-pair candidates whose answer is ``"a>b"`` (a before b):
    each pair adds P to a and 1 - P to b (with both directions present, each counts twice, evenly)."""
    wins: dict[str, float] = {}
    for candidate, p in zip(item.candidates, probabilities, strict=True):
        first, _, second = candidate.answer.partition(">")
        wins[first] = wins.get(first, 0.0) + p
        wins[second] = wins.get(second, 0.0) + 1.0 - p
    return sorted(wins, key=lambda name: (-wins[name], name))


def as_features(values: Sequence[Any]) -> tuple[float, ...]:
    return tuple(float(v) for v in values)
