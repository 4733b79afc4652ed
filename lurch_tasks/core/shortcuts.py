"""Shortcut audit (DESIGN 3.5): solvers that read only the prompt and deliberately skip the reasoning.

A family registers two kinds of cheats next to its baselines:

- a :class:`Shortcut` turns a prompt into a model output without doing the task's reasoning (answer by
  position, frequency, length, sentence template, or a family trick). It is scored with the family's own
  scorer, and compared with chance = the family's seeded random baseline on the same rows.
- a :class:`Probe` reads one surface feature (a profile's length, a unit's position) of every candidate in a
  row and reports how well that feature alone separates gold candidates from the rest, as a ROC AUC folded
  to >= 0.5 (chance 0.5). A probe that separates well is a tell that any solver can combine with others.
- a :class:`~.probe.LearnedProbe` (one per family) hands every candidate's reasoning-free features to a
  logistic model fitted on other cases (:mod:`.probe`); its held-out answers are scored like a shortcut's, one
  line per report key (RECON: per category/format), and obey the same chance + ``MARGIN`` bound.

On a config that is not ``paper_faithful``, every shortcut must score within chance + ``MARGIN`` (or within
``NOISE_Z`` standard errors of it, when that is wider: a small slice cannot tell 0.05 from noise) and every
probe's AUC within 0.5 + ``PROBE_MARGIN`` (an AUC of 0.6: a random gold candidate outranks a random other
one 60% of the time; a ranking tell that weak cannot be turned into answers on its own).
A shortcut may declare the configs on which its regularity is the very thing being studied
(``expected_when``), e.g. reading d off other chains in Find the Origin's structured arrangement; there it
is reported but not counted. ``expected_in`` does the same for the rows of some audit slots only (ImplicitHop's
dispersion-0 rows, whose evidence is one block by definition): those slots get their own line, reported and
not counted, and the strategy is judged on the other slots. A probe may declare configs too, for a feature
the question itself points to (the relation a comparison asks about is the one its evidence must state).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .probe import Candidate, CandidateTable, LearnedProbe, ProbeItem, evaluate

MARGIN = 0.05
PROBE_MARGIN = 0.10
# A strategy fails only when its margin over chance is also beyond this many standard errors of the two means:
# on a full grid the 0.05 margin is the binding rule; on a small slice (CI) a margin that noise alone could
# produce (a six-option family's per-row scores of +1 / -0.2 have a standard deviation near 0.45) is reported,
# not failed.
NOISE_Z = 2.5

OK, FAIL, EXPECTED, KNOWN = "ok", "FAIL", "expected", "known hole"
BULKY_FIELDS = ("prompt", "context")  # what the learned probe drops of a row it keeps for scoring


@dataclass(frozen=True)
class Shortcut:
    """A prompt-only strategy. With ``variants``, the audit tries each and reports the best one."""

    name: str
    kind: str  # position | frequency | length | template | family
    description: str
    answer: Callable[[str, Any], str]  # (prompt, variant) -> model output
    variants: tuple[Any, ...] = (None,)
    expected_when: Callable[[Any], bool] | None = None  # config -> the regularity is the one studied
    expected_in: Callable[[str], bool] | None = None  # audit slot -> the regularity is what rows of that slot study


@dataclass(frozen=True)
class Probe:
    """A surface feature of candidates; ``features(row)`` -> [(value, is_gold), ...] for one row.

    A numeric probe is scored by its AUC within each row, averaged over rows. A ``categorical`` probe
    (value = a label such as the template that wrote a sentence) is scored over all rows pooled, each label
    replaced by its gold rate *learned on calibration rows from another seed* (an attacker who knows the
    generator but not the test world): how well the label alone ranks gold candidates first."""

    name: str
    kind: str
    description: str
    features: Callable[[dict], Sequence[tuple[Any, bool]]]
    categorical: bool = False
    expected_when: Callable[[Any], bool] | None = None  # config -> the feature separates gold by design


@dataclass(frozen=True)
class AuditLine:
    strategy: str
    kind: str
    score: float
    chance: float
    status: str
    note: str = ""

    @property
    def margin(self) -> float:
        return self.score - self.chance


def rank_auc(values: Iterable[tuple[float, bool]]) -> float | None:
    """ROC AUC of ``value`` for ``is_gold`` (ties count half); None without both classes."""
    counts: dict[float, list[int]] = {}  # value -> [samples, gold ones]
    for value, gold in values:
        cell = counts.setdefault(value, [0, 0])
        cell[0] += 1
        cell[1] += 1 if gold else 0
    return counted_rank_auc(counts)


def counted_rank_auc(by_value: Mapping[float, Sequence[int]]) -> float | None:
    """:func:`rank_auc` of samples given by value: value -> (how many, how many gold). The one implementation:
    tied samples share their average rank (ranks i+1..j), groups are summed in ascending value order, so the
    floats do not depend on whether the samples came one by one or counted."""
    positives = sum(golds for _, golds in by_value.values())
    negatives = sum(n for n, _ in by_value.values()) - positives
    if not positives or not negatives:
        return None
    rank_sum, i = 0.0, 0
    for value in sorted(by_value):
        n, golds = by_value[value]
        j = i + n
        rank_sum += (i + 1 + j) / 2 * golds
        i = j
    return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _status(score: float, chance: float, expected: bool, paper_faithful: bool, margin: float = MARGIN,
            noise: float = 0.0) -> str:
    if score <= chance + max(margin, noise):
        return OK
    if expected:
        return EXPECTED
    return KNOWN if paper_faithful else FAIL


@dataclass(frozen=True)
class LabelCounts:
    """A categorical probe's (label, gold) pairs of one row, counted: all its AUC reads (the AUC of a label's
    gold rate depends on how many candidates carry each (label, gold), not on their order), in a few numbers
    instead of one pair per sentence."""

    counts: tuple[tuple[Any, bool, int], ...]  # (label, gold, how many), in order of first appearance

    @classmethod
    def of(cls, pairs: Iterable[tuple[Any, bool]]) -> LabelCounts:
        counts: dict[tuple[Any, bool], int] = {}
        for label, gold in pairs:
            key = (label, bool(gold))
            counts[key] = counts.get(key, 0) + 1
        return cls(tuple((label, gold, n) for (label, gold), n in counts.items()))


def _add_counts(totals: dict[tuple[Any, bool], int], value: LabelCounts | Sequence[tuple[Any, bool]]) -> None:
    """Add a row's labels to ``totals``; a plain (label, gold) list is a measure of an older run's record."""
    counted = value if isinstance(value, LabelCounts) else LabelCounts.of(value)
    for label, gold, n in counted.counts:
        totals[(label, gold)] = totals.get((label, gold), 0) + n


@dataclass(frozen=True)
class RowMeasure:
    """What the audit keeps of one audited row: small, and enough to replay the row into the totals."""

    slot: str
    measured_chance: float | None  # the chance guess's score, when the slot has no exact chance
    row_chance: float  # the chance the learned probe's row is compared with
    item: ProbeItem | None  # the learned probe's view of the row
    scored: dict | None  # the row without its text, for the learned probe's scoring
    scores: tuple[tuple[float, ...], ...]  # per shortcut, per variant
    probes: tuple[Any, ...]  # per probe: a numeric probe's AUC (or None), a categorical one's LabelCounts


class StreamingAudit:
    """The audit of one config fed a row at a time, keeping only small per-row results (scores, AUCs, probe
    labels), never the rows: memory stays flat in the number of rows. :func:`run_audit` is this over a list.

    ``add(row)`` takes an audited row; ``add_calibration(row)`` a row that categorical probes learn their
    label rates on (the rows themselves when none is given). ``lines()`` is the same at any point of the
    stream as ``run_audit`` on the rows (and calibration rows) added so far, float for float: every sum runs
    in row order."""

    def __init__(self, config: Any, paper_faithful: bool, shortcuts: Sequence[Shortcut], probes: Sequence[Probe],
                 score: Callable[[dict, str], dict[str, float]], guess: Callable[[str, int], str | None],
                 chance: float | None = None, learned: LearnedProbe | None = None,
                 slot: Callable[[dict], str] | None = None,
                 slot_chance: Callable[[str], float | None] | None = None,
                 row_chance: Callable[[dict], float | None] | None = None) -> None:
        self.config, self.paper_faithful = config, paper_faithful
        self.exact_chance = chance  # known analytically: compared with instead of the random baseline's mean
        self.shortcuts, self.probes = tuple(shortcuts), tuple(probes)
        self.score, self.guess = score, guess
        # Rows are scored per slot (RECON: category/format): a strategy that works on one slot only must not be
        # diluted by the slots it cannot read. Each line reports a strategy's worst (variant, slot).
        self.slot_of = slot or (lambda row: "")
        self.slot_chance = slot_chance or (lambda name: None)
        # a row's exact chance (it depends on the row): kept with the slot's measured chances, so the slot's
        # chance is the exact mean of its rows
        self.row_chance = row_chance or (lambda row: None)
        self.rows = 0
        self._slot_rows: dict[str, int] = {}
        self._chance: dict[str, list[float]] = {}  # measured chance scores per slot without an exact chance
        self._sums: list[dict[tuple[int, str], list[float]]] = [{} for _ in self.shortcuts]  # -> [total, squares]
        self._aucs: list[list[float]] = [[] for _ in self.probes]  # numeric probes: one AUC per row
        # categorical probes: how many candidates carry each (label, gold), of the rows / the calibration rows
        self._pooled: list[dict[tuple[Any, bool], int]] = [{} for _ in self.probes]
        self._learned: list[dict[tuple[Any, bool], int]] = [{} for _ in self.probes]
        self._calibrated = False
        # the learned probe keeps each row's candidates and what the scorer reads (the row without its text)
        self.learned = learned
        self._items: list[ProbeItem] = []
        self._scored: list[dict] = []
        self._item_chances: list[float] = []

    def _exact(self, slot: str) -> float | None:
        exact = self.slot_chance(slot)
        return self.exact_chance if exact is None else exact

    def add(self, row: dict) -> None:
        self.absorb(self.measure(row))

    def measure(self, row: dict) -> RowMeasure:
        """Everything the audit keeps of ``row`` (a pure function of the row: it can run in the worker that
        generated it); :meth:`absorb` adds it to the totals."""
        slot = self.slot_of(row)
        row_chance = self._exact(slot)
        measured = None
        if row_chance is None and (exact := self.row_chance(row)) is not None:
            measured = row_chance = exact
        elif row_chance is None:
            measured = row_chance = self.score(row, self.guess(row["prompt"], 0) or "")["score"]
        item = self.learned.read(row) if self.learned is not None else None
        scored = None if item is None else {k: v for k, v in row.items() if k not in BULKY_FIELDS}
        scores = tuple(tuple(self.score(row, shortcut.answer(row["prompt"], variant))["score"]
                             for variant in shortcut.variants) for shortcut in self.shortcuts)
        probes: list[Any] = []
        for probe in self.probes:
            if probe.categorical:
                probes.append(LabelCounts.of(probe.features(row)))
            else:
                probes.append(rank_auc(probe.features(row)))
        return RowMeasure(slot, measured, row_chance, item, scored, scores, tuple(probes))

    def check(self, measure: RowMeasure) -> None:
        """A one-line ValueError unless ``measure`` has the shape and types :meth:`measure` gives on this audit: a
        measure read back from disk is checked before :meth:`absorb` adds it (which would fail mid-sum)."""
        _need(isinstance(measure.slot, str) and len(measure.slot) <= MAX_LABEL_CHARS, "slot", measure.slot,
              f"a string of at most {MAX_LABEL_CHARS} characters")
        _need(measure.measured_chance is None or _is_number(measure.measured_chance), "measured_chance",
              measure.measured_chance, "null or a number")
        _need(_is_number(measure.row_chance), "row_chance", measure.row_chance, "a number")
        shapes = [len(shortcut.variants) for shortcut in self.shortcuts]
        _need(isinstance(measure.scores, tuple) and [len(v) if isinstance(v, tuple) else -1 for v in measure.scores]
              == shapes and all(_is_number(x) for v in measure.scores for x in v), "scores", measure.scores,
              f"per shortcut a tuple of one number per variant ({shapes})")
        _need(isinstance(measure.probes, tuple) and len(measure.probes) == len(self.probes), "probes",
              measure.probes, f"a tuple of {len(self.probes)} probe values")
        for probe, value in zip(self.probes, measure.probes, strict=True):
            if probe.categorical:
                _need(_is_labels(value), f"probes[{probe.name}]", value, "(label, gold) counts")
            else:
                _need(value is None or _is_number(value), f"probes[{probe.name}]", value, "null or a number")
        if measure.item is None:
            _need(measure.scored is None, "scored", measure.scored, "null, as the row has no probe item")
            return
        _need(self.learned is not None, "item", measure.item, "null: this audit runs no learned probe")
        _need(isinstance(measure.scored, dict) and all(isinstance(k, str) for k in measure.scored), "scored",
              measure.scored, "the row without its text (an object)")
        item = measure.item
        _need(isinstance(item, ProbeItem) and all(isinstance(x, str) and len(x) <= MAX_LABEL_CHARS
                                                 for x in (item.group, item.model, item.report)),
              "item", item, f"a ProbeItem with group, model and report strings of at most {MAX_LABEL_CHARS} characters")
        candidates = item.candidates
        if isinstance(candidates, CandidateTable):
            return  # a registered table checks its own fields when it is built (e.g. graph's PairTable)
        _need(isinstance(candidates, tuple) and all(
            isinstance(c, Candidate) and isinstance(c.answer, str) and isinstance(c.gold, bool)
            and isinstance(c.features, tuple) and all(_is_number(x) for x in c.features) for c in candidates),
            "item.candidates", candidates, "a tuple of Candidate(answer string, gold bool, features numbers)")

    def absorb(self, measure: RowMeasure) -> None:
        """Add one row's measure; rows must be absorbed in row order (every sum runs in that order)."""
        self.rows += 1
        slot = measure.slot
        self._slot_rows[slot] = self._slot_rows.get(slot, 0) + 1
        if measure.measured_chance is not None:
            self._chance.setdefault(slot, []).append(measure.measured_chance)
        if measure.item is not None:
            self._items.append(measure.item)
            self._scored.append(measure.scored)
            self._item_chances.append(measure.row_chance)
        for values, sums in zip(measure.scores, self._sums, strict=True):
            for k, value in enumerate(values):
                cell = sums.setdefault((k, slot), [0.0, 0.0])
                cell[0] += value
                cell[1] += value * value
        for probe, value, aucs, pooled in zip(self.probes, measure.probes, self._aucs, self._pooled, strict=True):
            if probe.categorical:
                _add_counts(pooled, value)
            elif value is not None:
                aucs.append(value)

    def add_calibration(self, row: dict) -> None:
        self.absorb_calibration(self.calibration_labels(row))

    def calibration_labels(self, row: dict) -> tuple[LabelCounts, ...]:
        """What the categorical probes learn of a calibration row (one count per categorical probe)."""
        return tuple(LabelCounts.of(probe.features(row)) for probe in self.probes if probe.categorical)

    def absorb_calibration(self, labels: Sequence[LabelCounts | Sequence[tuple[Any, bool]]]) -> None:
        self._calibrated = True
        learned = [bucket for probe, bucket in zip(self.probes, self._learned, strict=True) if probe.categorical]
        for bucket, values in zip(learned, labels, strict=True):
            _add_counts(bucket, values)

    def _slot_chance_mean(self, slot: str) -> float:
        exact = self._exact(slot)
        return mean(self._chance.get(slot, [])) if exact is None else exact

    def _margin(self, sums: dict[tuple[int, str], list[float]], cell: tuple[int, str]) -> float:
        total = sums.get(cell, [0.0, 0.0])[0]
        return total / self._slot_rows.get(cell[1], 1) - self._slot_chance_mean(cell[1])

    def lines(self) -> list[AuditLine]:
        lines: list[AuditLine] = []
        slots = sorted(self._slot_rows)
        for shortcut, sums in zip(self.shortcuts, self._sums, strict=True):
            studied = [slot for slot in slots if shortcut.expected_in and shortcut.expected_in(slot)]
            judged = [slot for slot in slots if slot not in studied]
            if judged or not studied:
                lines.append(self._shortcut_line(shortcut, sums, judged or [""], shortcut.name, False,
                                                 many_slots=len(slots) > 1))
            if studied:
                lines.append(self._shortcut_line(shortcut, sums, studied, f"{shortcut.name}[{', '.join(studied)}]",
                                                 True, many_slots=True))
        for k, probe in enumerate(self.probes):
            if probe.categorical:
                learned = self._learned[k] if self._calibrated else self._pooled[k]
                aucs = _categorical_auc(learned, self._pooled[k])
            else:
                aucs = self._aucs[k]
            raw = mean(aucs) if aucs else 0.5
            folded = max(raw, 1.0 - raw)
            direction = "gold higher" if raw >= 0.5 else "gold lower"
            expected = bool(probe.expected_when and probe.expected_when(self.config))
            note = f"{direction}, {len(aucs)} rows; pass <= {0.5 + PROBE_MARGIN:g}"
            # a numeric probe's per-row AUCs are averaged: their standard error bounds what noise can do
            noise = 0.0 if probe.categorical or len(aucs) < 2 else NOISE_Z * (_variance(aucs) / len(aucs)) ** 0.5
            if PROBE_MARGIN < folded - 0.5 <= noise:
                note += f"; within noise (< {0.5 + noise:.3f})"
            lines.append(AuditLine(f"{probe.name} (AUC)", probe.kind, folded, 0.5,
                                   _status(folded, 0.5, expected, self.paper_faithful, PROBE_MARGIN, noise),
                                   note + ("; by design on this config" if expected else "")))
        return lines + self._learned_lines()

    def _shortcut_line(self, shortcut: Shortcut, sums: dict[tuple[int, str], list[float]], slots: Sequence[str],
                       name: str, studied: bool, many_slots: bool) -> AuditLine:
        """``shortcut`` at its worst (variant, slot) among ``slots``; ``studied``: slots whose rows study its
        regularity (reported, not counted)."""
        cells = [(k, slot) for slot in slots for k in range(len(shortcut.variants))]
        best_k, best_slot = max(cells, key=lambda cell: (self._margin(sums, cell), -cell[0]))  # first of ties
        total, squares = sums.get((best_k, best_slot), [0.0, 0.0])
        rows = self._slot_rows.get(best_slot, 0)
        best = total / rows if rows else 0.0
        chance = self._slot_chance_mean(best_slot)
        measured = self._chance.get(best_slot, [])
        best_variant = shortcut.variants[best_k]
        expected = studied or bool(shortcut.expected_when and shortcut.expected_when(self.config))
        notes = [] if best_variant is None else [f"best variant {best_variant}"]
        if many_slots:
            notes.append(f"worst slot {best_slot} ({rows} rows)")
        if studied:
            notes.append("the regularity these rows study")
        elif expected:
            notes.append("the regularity this config studies")
        # a slot's measured chance can agree with itself by luck (twelve misses: variance 0); under the null
        # the strategy and the guess score alike, so the chance side gets at least the strategy's variance
        chance_variance = max(_variance(measured), _sum_variance(total, squares, rows))
        noise = NOISE_Z * _standard_error(total, squares, rows, chance_variance, len(measured))
        if MARGIN < best - chance <= noise:
            notes.append(f"within noise on {rows} rows (< {noise:.3f})")
        return AuditLine(name, shortcut.kind, best, chance,
                         _status(best, chance, expected, self.paper_faithful, noise=noise), "; ".join(notes))

    def _learned_lines(self) -> list[AuditLine]:
        """One line per report key of the learned probe: its held-out score against chance on the same rows."""
        if self.learned is None or not self._items:
            return []
        lines = []
        for result in evaluate(self._items, self._scored, self._item_chances, self.learned, self.score):
            name = f"learned_probe[{result.report}]" if result.report else "learned_probe"
            if not result.rows:
                lines.append(AuditLine(name, "learned", 0.0, 0.0, OK,
                                       f"not scored: {result.skipped} rows, too few cases to hold one out"))
                continue
            score, chance = mean(result.scores), mean(result.chances)
            total = sum(result.scores)
            squares = sum(v * v for v in result.scores)
            # a slot's few chance scores can agree by luck (twelve -0.2 guesses: variance 0), so the chance side
            # is given at least the probe's own variance: under the null the two are drawn alike
            chance_variance = max(_variance(result.chances), _variance(result.scores))
            noise = NOISE_Z * _standard_error(total, squares, result.rows, chance_variance, len(result.chances))
            note = f"held out by case, {result.rows} rows"
            if result.auc is not None:
                note += f", AUC {result.auc:.3f}"
            if result.skipped:
                note += f", {result.skipped} not scored"
            if MARGIN < score - chance <= noise:
                note += f"; within noise on {result.rows} rows (< {noise:.3f})"
            lines.append(AuditLine(name, "learned", score, chance,
                                   _status(score, chance, False, self.paper_faithful, noise=noise), note))
        return lines


def _variance(values: Sequence[float]) -> float:
    if len(values) < 2:
        return 0.0
    centre = mean(values)
    return sum((v - centre) ** 2 for v in values) / (len(values) - 1)


def _sum_variance(total: float, squares: float, rows: int) -> float:
    return max(0.0, (squares - total * total / rows) / (rows - 1)) if rows >= 2 else 0.0


def _standard_error(total: float, squares: float, rows: int, chance_variance: float, chance_rows: int) -> float:
    """Standard error of (strategy mean - chance mean), from the strategy's sums and the chance scores'
    variance (0 for an exact chance)."""
    if rows < 2:
        return 0.0
    variance = _sum_variance(total, squares, rows)
    return (variance / rows + (chance_variance / chance_rows if chance_rows else 0.0)) ** 0.5


def run_audit(rows: Sequence[dict], config: Any, paper_faithful: bool, shortcuts: Sequence[Shortcut],
              probes: Sequence[Probe], score: Callable[[dict, str], dict[str, float]],
              guess: Callable[[str, int], str | None], calibration: Sequence[dict] = (),
              learned: LearnedProbe | None = None, slot: Callable[[dict], str] | None = None,
              slot_chance: Callable[[str], float | None] | None = None,
              chance: float | None = None,
              row_chance: Callable[[dict], float | None] | None = None) -> list[AuditLine]:
    """Score every shortcut and probe on ``rows`` (all of one config); categorical probes learn their label
    rates on ``calibration`` rows (the same config under another seed; ``rows`` themselves when empty)."""
    audit = StreamingAudit(config, paper_faithful, shortcuts, probes, score, guess, chance, learned, slot, slot_chance,
                           row_chance)
    for row in rows:
        audit.add(row)
    for row in calibration:
        audit.add_calibration(row)
    return audit.lines()


def _categorical_auc(learned: Mapping[tuple[Any, bool], int], pooled: Mapping[tuple[Any, bool], int]) -> list[float]:
    """Each label replaced by its gold rate in ``learned``; the AUC of that rate over ``pooled`` (both counts of
    (label, gold)): the same floats as :func:`rank_auc` over the pairs one by one."""
    counts: dict[Any, list[int]] = {}
    for (label, gold), n in learned.items():
        counts.setdefault(label, [0, 0])[int(gold)] += n
    rate = {label: gold / (gold + other) for label, (other, gold) in counts.items()}
    total, golds = sum(learned.values()), sum(n for (_, gold), n in learned.items() if gold)
    base = golds / total if total else 0.0  # the mean of the 0/1 gold flags, exactly
    by_value: dict[float, list[int]] = {}  # rate -> [candidates, gold ones]
    for (label, gold), n in pooled.items():
        cell = by_value.setdefault(rate.get(label, base), [0, 0])
        cell[0] += n
        cell[1] += n if gold else 0
    auc = counted_rank_auc(by_value)
    return [] if auc is None else [auc]


MAX_LABEL_CHARS = 1_000  # slots, report keys, probe labels: short names in every family


def _shown(value: Any) -> str:
    text = repr(value) if not isinstance(value, (tuple, list, dict)) else f"a {type(value).__name__} of {len(value)}"
    return text if len(text) <= 80 else text[:77] + "..."


def _need(ok: bool, field: str, value: Any, allowed: str) -> None:
    if not ok:
        raise ValueError(f"field {field!r} {_shown(value)} is not allowed; allowed: {allowed}")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float))


def _is_label(value: Any) -> bool:
    if isinstance(value, tuple):
        return all(_is_label(part) for part in value)
    if isinstance(value, str):
        return len(value) <= MAX_LABEL_CHARS
    return value is None or isinstance(value, (int, float))


def _is_labels(value: Any) -> bool:
    """A categorical probe's value: LabelCounts, or an older run's list of (label, gold) pairs."""
    if isinstance(value, LabelCounts):
        return isinstance(value.counts, tuple) and all(
            isinstance(c, tuple) and len(c) == 3 and _is_label(c[0]) and isinstance(c[1], bool)
            and isinstance(c[2], int) and not isinstance(c[2], bool) and c[2] >= 0 for c in value.counts)
    return isinstance(value, (list, tuple)) and all(
        isinstance(p, (list, tuple)) and len(p) == 2 and _is_label(p[0]) for p in value)


def failures(lines: Sequence[AuditLine]) -> list[AuditLine]:
    return [line for line in lines if line.status == FAIL]


def format_table(lines: Sequence[AuditLine]) -> str:
    header = ("strategy", "kind", "score", "chance", "margin", "status", "note")
    body = [(line.strategy, line.kind, f"{line.score:.3f}", f"{line.chance:.3f}", f"{line.margin:+.3f}",
             line.status, line.note) for line in lines]
    widths = [max(len(str(r[i])) for r in [header, *body]) for i in range(len(header))]
    render = [" | ".join(str(cell).ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
              for r in [header, *body]]
    return "\n".join([render[0], "-+-".join("-" * w for w in widths), *render[1:]])


@dataclass(frozen=True)
class TaskAudit:
    task: str
    rows: int
    paper_faithful: bool
    lines: tuple[AuditLine, ...]

    @property
    def passed(self) -> bool:
        return not failures(self.lines)


def spread_indices(size: int, n: int | None) -> list[int]:
    """``n`` indices evenly spaced over ``range(size)`` (all of them when ``n`` is None or >= size): a slice
    that covers every knob axis, unlike a prefix of a grid whose slow axis comes last."""
    if n is None or n >= size:
        return list(range(size))
    return sorted({(k * size) // n for k in range(n)})


def audit_task(task: Any, n: int | None = None, split: str = "test", progress: bool = False) -> TaskAudit:
    """Generate ``n`` evenly spaced rows of ``task`` (all when None) and run its family's shortcut audit, one
    row at a time (memory flat in ``n``)."""
    from .generation import generate_row, task_size

    chosen = spread_indices(task_size(task), n)
    indices: Any = chosen
    if progress:
        from tqdm.auto import tqdm

        indices = tqdm(chosen, desc=f"generating {task.name}", unit="row", disable=len(chosen) < 20)
    auditor = TaskAuditor(task, split)
    for index in indices:
        auditor.add(generate_row(task, index, split))
    return auditor.result()


@dataclass(frozen=True)
class AuditEntry:
    """One audited row as a worker measured it: its index, its measure, its calibration row's labels."""

    index: int
    measure: RowMeasure
    calibration: tuple[LabelCounts, ...] | None  # an older run's record: (label, gold) lists

    def to_json(self) -> Any:
        return to_tagged((self.index, self.measure, self.calibration))

    @classmethod
    def from_json(cls, data: Any) -> AuditEntry:
        """An entry read back (from a record on disk); a one-line ValueError unless it is (index, measure,
        calibration). :meth:`TaskAuditor.check` then checks it fits the audit it is absorbed into."""
        value = from_tagged(data)
        if not (isinstance(value, tuple) and len(value) == 3):
            raise ValueError(f"audit entry: a {type(value).__name__}; allowed: (index, measure, calibration)")
        index, measure, calibration = value
        if not (isinstance(index, int) and not isinstance(index, bool) and index >= 0):
            raise ValueError(f"audit entry: index {_shown(index)} is not allowed; allowed: a row index")
        return cls(index, measure, calibration)


# Audit entries travel through JSON files (a sharded run's records): tuples, dicts with any keys and the audit's
# dataclasses are tagged so that what is read back is equal, type for type, to what was measured (a label that
# was a tuple must stay one: it is a dict key of the categorical probes). Floats survive JSON exactly (repr).
_TAGGED: dict[str, Any] = {}


def register_audit_type(cls: type) -> type:
    """Let audit entries hold ``cls`` (a frozen dataclass of storable values, e.g. a family's packed
    :class:`~.probe.CandidateTable`); usable as a class decorator. Its name is its tag: it must be unique."""
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"audit entry type {cls.__name__}: not a dataclass; allowed: frozen dataclasses")
    known = _tag_types().get(cls.__name__)
    if known is not None and known is not cls:
        raise ValueError(f"audit entry type {cls.__name__!r} is registered twice; allowed: one class per name")
    _TAGGED[cls.__name__] = cls
    return cls


def _tag_types() -> dict[str, Any]:
    if "RowMeasure" not in _TAGGED:
        from .probe import Candidate

        _TAGGED.update({"RowMeasure": RowMeasure, "ProbeItem": ProbeItem, "Candidate": Candidate,
                        "LabelCounts": LabelCounts})
    return _TAGGED


def _family_tag_types() -> dict[str, Any]:
    """The tags with the types families register too: a family's probes register theirs when its shortcuts module
    is imported, which a process that only generated rows never did (``core.registry.Deferred``)."""
    from .registry import all_families

    for family in all_families():
        family.probes, family.learned_probe  # noqa: B018 - reading them imports the modules that register
    return _tag_types()


def to_tagged(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [to_tagged(v) for v in value]
    if isinstance(value, tuple):
        return {"tuple": [to_tagged(v) for v in value]}
    if isinstance(value, dict):
        return {"dict": [[to_tagged(k), to_tagged(v)] for k, v in value.items()]}
    name = type(value).__name__
    if dataclasses.is_dataclass(value) and _tag_types().get(name) is type(value):
        return {name: [to_tagged(getattr(value, f.name)) for f in dataclasses.fields(value)]}
    raise TypeError(f"audit entry: {type(value).__name__} cannot be stored; allowed: JSON values, tuples, dicts, "
                    f"{', '.join(sorted(_tag_types()))}")


def from_tagged(value: Any) -> Any:
    if isinstance(value, list):
        return [from_tagged(v) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) != 1:
        raise ValueError("audit entry: an untagged object; allowed: what lurch wrote")
    (tag, body), = value.items()
    if tag == "tuple":
        return tuple(from_tagged(v) for v in body)
    if tag == "dict":
        return {from_tagged(k): from_tagged(v) for k, v in body}
    cls = _tag_types().get(tag) or _family_tag_types().get(tag)
    if cls is None:
        raise ValueError(f"audit entry: unknown tag {tag!r}; allowed: what lurch wrote")
    return cls(*(from_tagged(v) for v in body))


class TaskAuditor:
    """The shortcut audit of ``task`` on rows fed one at a time (e.g. while a materialize run streams them);
    each row is dropped once its scores are taken.

    Categorical probes learn on calibration rows: the same indices under the next seed, generated as each
    row arrives."""

    def __init__(self, task: Any, split: str = "test", shortcuts: bool = True, learned: bool = True) -> None:
        """``shortcuts=False`` leaves out the strategies and probes, ``learned=False`` the learned probe (a
        diagnostic run of one side; ``lurch audit-shortcuts`` runs both)."""
        from .generation import MAX_SEED
        from .registry import get_family

        family = get_family(task.family)
        self.task, self.split = task, split
        probes = family.probes if shortcuts else ()
        self._calibration_task = None
        if any(probe.categorical for probe in probes):
            self._calibration_task = dataclasses.replace(task, seed=(task.seed + 1) % (MAX_SEED + 1))
        self._audit = StreamingAudit(task.config, task.paper_faithful, family.shortcuts if shortcuts else (), probes,
                                     family.score, family.guess,
                                     None if family.chance is None else family.chance(task.config),
                                     family.learned_probe if learned else None, family.audit_slot, family.slot_chance,
                                     family.row_chance)

    def add(self, row: dict) -> None:
        self.absorb(self.measure(row))

    def measure(self, row: dict) -> AuditEntry:
        """What the audit keeps of ``row`` and of its calibration row (generated here): a pure function of the
        row, so a worker can measure the rows it wrote and the totals be replayed later, in row order."""
        from .generation import generate_row

        calibration = None
        if self._calibration_task is not None:
            calibration = self._audit.calibration_labels(
                generate_row(self._calibration_task, row["index"], self.split))
        return AuditEntry(row["index"], self._audit.measure(row), calibration)

    def check(self, entry: AuditEntry) -> None:
        """A one-line ValueError unless ``entry`` (read back from disk) fits this audit: what :meth:`measure`
        gives, field for field, so that :meth:`absorb` and the result cannot fail on it."""
        try:
            _need(isinstance(entry.measure, RowMeasure), "measure", entry.measure, "a RowMeasure")
            self._audit.check(entry.measure)
            categorical = sum(1 for probe in self._audit.probes if probe.categorical)
            if self._calibration_task is None:
                _need(entry.calibration is None, "calibration", entry.calibration, "null (no categorical probe)")
            else:
                _need(isinstance(entry.calibration, tuple) and len(entry.calibration) == categorical
                      and all(_is_labels(value) for value in entry.calibration), "calibration", entry.calibration,
                      f"(label, gold) counts of {categorical} categorical probe(s)")
        except ValueError as error:
            raise ValueError(f"audit entry {entry.index}: {error}") from None

    def absorb(self, entry: AuditEntry) -> None:
        """Add a measured row: the same totals as :meth:`add` on the row, when entries come in row order."""
        self._audit.absorb(entry.measure)
        if entry.calibration is not None:
            self._audit.absorb_calibration(entry.calibration)

    def result(self) -> TaskAudit:
        return TaskAudit(self.task.name, self._audit.rows, self.task.paper_faithful, tuple(self._audit.lines()))


def audit_rows(task: Any, rows: Iterable[dict], split: str = "test") -> TaskAudit:
    """The shortcut audit of ``task`` on rows already generated (e.g. the rows a materialize run wrote)."""
    auditor = TaskAuditor(task, split)
    for row in rows:
        auditor.add(row)
    return auditor.result()


def lines_to_json(lines: Sequence[AuditLine]) -> list[dict[str, Any]]:
    return [{"strategy": line.strategy, "kind": line.kind, "score": round(line.score, 4),
             "chance": round(line.chance, 4), "status": line.status, "note": line.note} for line in lines]
