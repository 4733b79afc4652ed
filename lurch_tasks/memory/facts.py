"""A running fact store: the built-in memory that needs no model and runs everywhere.

Each unit (a RECON entry, a line) becomes one fact indexed by its subjects: the named things it mentions (runs of
capitalised words, "the <words> from <Place>" item phrases), read after the unit's leading bracketed header (time,
entry type, author are metadata, and an author's name would otherwise index every entry they wrote). The store
updates as it reads: a later unit that withdraws a finding ("... is withdrawn", "no longer accepted", "retracted")
supersedes the earlier facts about exactly the same subjects, and a later correction ("corrected", "amended",
"revised") supersedes the earlier facts about its primary subject (the first subject it names). ``recall`` ranks the
facts still in force by the question's subjects and words (IDF-weighted overlap) and returns the best ``k`` texts
verbatim, in time order, so a caller can map them back to context units. Deterministic: no model, no RNG, ties
broken by position.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

_HEADER = re.compile(r"^(?:\s*\[[^\]]*\])+\s*")
# "the faded key card from Taeweisaer Depot": an item named by what it is and where it is from.
_ITEM = re.compile(r"\bthe ((?:[a-z]+ ){0,3}[a-z]+ (?:from|at|of|in) [A-Z][\w'-]*(?: [A-Z][\w'-]*)*)")
_NAME = re.compile(r"\b[A-Z][\w'-]*(?: [A-Z][\w'-]*)+")
# Capitalised only because they open a sentence or a clause: dropped from the front of a name run.
_OPENERS = frozenset("a an the on in at of for and but or to from by with following records analysis".split())
_RETRACTION = re.compile(r"\b(?:withdrawn|withdraws?|retract(?:ed|s|ion)?|no longer|rescinded|void|disregard)\b", re.I)
_CORRECTION = re.compile(r"\b(?:correction|corrected|amended|revised|updated)\b", re.I)
_WORD = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset(
    "a an the and or of to in on at for from by with as is was were be been it its this that which who what when "
    "where how why did does do not no yes are has had have after before than then there their they he she his her "
    "one any all every each into about question answer option options only".split()
)
_SUBJECT_WEIGHT = 3.0  # a shared subject counts for more than a shared word: it names the thing asked about


@dataclass(frozen=True)
class Fact:
    """One stored unit: its position in the context, its text, its subjects (in order of first mention) and
    whether it withdraws or corrects earlier findings."""

    position: int
    text: str
    subjects: tuple[str, ...]
    kind: str  # "fact" | "retraction" | "correction"


def _normalise(phrase: str) -> str:
    return " ".join(phrase.lower().split())


def _drop_openers(run: str) -> str:
    words = run.split()
    while words and words[0].lower() in _OPENERS:
        words = words[1:]
    return " ".join(words) if len(words) >= 2 else ""


def subjects_of(text: str) -> tuple[str, ...]:
    """The subjects a text names, normalised, in order of first mention: item phrases first masked out, so the
    place inside an item phrase is not a second subject of its own."""
    body = _HEADER.sub("", text)
    found: list[tuple[int, str]] = [(m.start(1), _normalise(m.group(1))) for m in _ITEM.finditer(body)]
    masked = _ITEM.sub(lambda m: " " * len(m.group(0)), body)
    for match in _NAME.finditer(masked):
        name = _drop_openers(match.group(0))
        if name:
            found.append((match.start(), _normalise(name)))
    ordered: list[str] = []
    for _, subject in sorted(found):
        if subject not in ordered:
            ordered.append(subject)
    return tuple(ordered)


def kind_of(text: str) -> str:
    body = _HEADER.sub("", text)
    if _RETRACTION.search(body):
        return "retraction"
    if _CORRECTION.search(body):
        return "correction"
    return "fact"


def words_of(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(_HEADER.sub("", text).lower()) if w not in _STOPWORDS)


def superseded_by(new: Fact, old: Fact) -> bool:
    """Whether ``new`` (later) puts ``old`` out of force. A withdrawal needs every subject of the old fact, and at
    least two when it names two, so "the step from A to B is withdrawn" ends "A led to B" but not "A was logged
    as a lead"; a correction ends the earlier facts about its primary subject."""
    if old.kind != "fact" or not old.subjects or not new.subjects:
        return False
    if new.kind == "retraction":
        return set(old.subjects) <= set(new.subjects) and len(old.subjects) >= min(2, len(new.subjects))
    if new.kind == "correction":
        return old.subjects[0] == new.subjects[0]
    return False


@dataclass(frozen=True)
class FactStoreConfig:
    include_superseded: bool = False  # recall superseded facts too (a plain subject index, no updating)


class FactStore:
    """The running fact store (see the module docstring)."""

    name = "facts"

    def __init__(self, config: FactStoreConfig = FactStoreConfig()) -> None:
        self.config = config
        self.facts: list[Fact] = []
        self.superseded: dict[int, int] = {}  # position of a superseded fact -> position of the unit that ended it
        self._by_subject: dict[str, list[int]] = {}
        self._words: list[frozenset[str]] = []

    def ingest(self, units: Sequence[str]) -> None:
        for unit in units:
            self._add(unit)

    def _add(self, text: str) -> None:
        fact = Fact(len(self.facts), text, subjects_of(text), kind_of(text))
        if fact.kind != "fact":
            candidates = sorted({p for s in fact.subjects for p in self._by_subject.get(s, ())})
            for position in candidates:
                if position not in self.superseded and superseded_by(fact, self.facts[position]):
                    self.superseded[position] = fact.position
        self.facts.append(fact)
        self._words.append(words_of(text))
        for subject in fact.subjects:
            self._by_subject.setdefault(subject, []).append(fact.position)

    def in_force(self, position: int) -> bool:
        return position not in self.superseded

    def history(self, subject: str) -> list[Fact]:
        """Every fact naming ``subject``, in time order (superseded ones included)."""
        return [self.facts[p] for p in self._by_subject.get(_normalise(subject), ())]

    def recall(self, question: str, k: int) -> list[str]:
        live = [f.position for f in self.facts if self.config.include_superseded or self.in_force(f.position)]
        if not live or k <= 0:
            return []
        n = len(self.facts)
        word_df = Counter(w for p in range(n) for w in self._words[p])
        query_words = words_of(question)
        query_subjects = set(subjects_of(question))

        def idf(df: int) -> float:
            return math.log((n + 1) / (df + 1)) + 1.0

        def score(position: int) -> float:
            fact = self.facts[position]
            shared_subjects = query_subjects.intersection(fact.subjects)
            subject_score = sum(idf(len(self._by_subject[s])) for s in shared_subjects)
            word_score = sum(idf(word_df[w]) for w in query_words & self._words[position])
            return _SUBJECT_WEIGHT * subject_score + word_score

        scored = [(score(p), p) for p in live]
        best = sorted((item for item in scored if item[0] > 0), key=lambda item: (-item[0], item[1]))[:k]
        return [self.facts[p].text for p in sorted(p for _, p in best)]

    @property
    def verbatim(self) -> bool:
        """Recall returns context units as written (a caller maps them back by identity)."""
        return True

    def describe(self) -> dict[str, Any]:
        kinds = Counter(f.kind for f in self.facts)
        return {
            "memory": self.name,
            "include_superseded": self.config.include_superseded,
            "units": len(self.facts),
            "subjects": len(self._by_subject),
            "retractions": kinds["retraction"],
            "corrections": kinds["correction"],
            "superseded": len(self.superseded),
        }
