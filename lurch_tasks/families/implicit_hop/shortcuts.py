"""Shortcut strategies for ImplicitHop: answer each question without following its chain.

Every strategy reads only the prompt: the fact lines (parsed with the generator's templates, so an attacker
knows every entity's type) and the questions (start entity and relation path). For each question it picks a
candidate of the answer's type: by position (first or last mentioned), by frequency, by name length, by
closeness to the start entity's first mention, or by the one-hop answer (only the last relation, applied to
the start entity).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from ...core.shortcuts import Probe, Shortcut
from .baselines import _fact_patterns, facts_in_order, parse_chain, questions_of
from .schema import BY_ID, YEAR


@dataclass(frozen=True)
class View:
    mentions: tuple[tuple[str, str], ...]  # (name, type) in context order, two per fact line
    facts: dict[tuple[str, str], str]  # (relation, source) -> value
    questions: tuple[tuple[str, tuple[str, ...]] | None, ...]  # (start, relations) per question


@lru_cache(maxsize=8)
def view(prompt: str) -> View:
    mentions: list[tuple[str, str]] = []
    facts = {}
    for relation, source, value in facts_in_order(prompt):
        spec = BY_ID[relation]
        mentions.append((source, spec.source))
        if spec.target != YEAR:
            mentions.append((value, spec.target))
        facts[(relation, source)] = value
    questions = tuple((c[0], tuple(c[1])) if (c := parse_chain(q)) else None for q in questions_of(prompt))
    return View(tuple(mentions), facts, questions)


def _answer_type(question: tuple[str, tuple[str, ...]]) -> str:
    return BY_ID[question[1][-1]].target


def _per_question(pick):
    """A strategy from ``pick(view, question) -> name or None``, answering every question of the prompt."""
    def answer(prompt: str, _: object) -> str:
        v = view(prompt)
        picks = [(pick(v, q) or "") if q else "" for q in v.questions]
        return "FINAL ANSWER: " + "; ".join(picks)
    return answer


def _candidates(v: View, question) -> list[tuple[int, str]]:
    """(mention position, name) of every mention of an entity of the answer's type, other than the start."""
    wanted = _answer_type(question)
    return [(i, name) for i, (name, kind) in enumerate(v.mentions) if kind == wanted and name != question[0]]


def _first(v: View, question) -> str | None:
    found = _candidates(v, question)
    return found[0][1] if found else None


def _last(v: View, question) -> str | None:
    found = _candidates(v, question)
    return found[-1][1] if found else None


def _most_frequent(v: View, question) -> str | None:
    counts = Counter(name for _, name in _candidates(v, question))
    return max(sorted(counts), key=lambda name: counts[name]) if counts else None


def _by_length(longest: bool):
    def pick(v: View, question) -> str | None:
        names = sorted({name for _, name in _candidates(v, question)})
        return (max if longest else min)(names, key=len) if names else None
    return pick


def _nearest_start(v: View, question) -> str | None:
    """The candidate mentioned closest to the start entity's first mention (ties: the earlier)."""
    first = next((i for i, (name, _) in enumerate(v.mentions) if name == question[0]), None)
    found = _candidates(v, question)
    if first is None or not found:
        return None
    return min(found, key=lambda item: (abs(item[0] - first), item[0]))[1]


def _nearest_any_mention(v: View, question) -> str | None:
    """The candidate mentioned closest to any mention of the start entity, outside the start's own fact
    lines (reading a line that names the start is a lookup, the reasoning itself on a one-step chain)."""
    starts = [i for i, (name, _) in enumerate(v.mentions) if name == question[0]]
    own_lines = {i // 2 for i in starts}  # two mentions per fact line
    found = [(i, name) for i, name in _candidates(v, question) if i // 2 not in own_lines]
    if not starts or not found:
        return None
    return min(found, key=lambda item: (min(abs(item[0] - k) for k in starts), item[0]))[1]


def _one_hop(v: View, question) -> str | None:
    """The last relation applied straight to the start entity (a chain read as if it had one step); on a
    one-step chain that is the reasoning itself, so it abstains there."""
    return v.facts.get((question[1][-1], question[0])) if len(question[1]) > 1 else None


SHORTCUTS = (
    Shortcut("first_candidate", "position", "the first-mentioned entity of the answer's type",
             _per_question(_first)),
    Shortcut("last_candidate", "position", "the last-mentioned entity of the answer's type", _per_question(_last)),
    Shortcut("most_frequent", "frequency", "the most often mentioned entity of the answer's type",
             _per_question(_most_frequent)),
    Shortcut("longest_name", "length", "the entity of the answer's type with the longest name",
             _per_question(_by_length(True))),
    Shortcut("shortest_name", "length", "the entity of the answer's type with the shortest name",
             _per_question(_by_length(False))),
    Shortcut("nearest_start", "family", "the entity of the answer's type mentioned nearest the start entity",
             _per_question(_nearest_start)),
    Shortcut("nearest_any_mention", "family", "the entity of the answer's type mentioned nearest any mention of "
             "the start, outside the start's own facts", _per_question(_nearest_any_mention)),
    Shortcut("one_hop", "family", "only the last relation, applied to the start entity", _per_question(_one_hop)),
)
def _per_line(feature):
    """A probe over the context's fact lines; gold = a required fact (an evidence span)."""
    def features(row: dict) -> list[tuple[object, bool]]:
        gold = {span["start"] for span in row["evidence"]}
        lines, out, offset = row["context"].split("\n"), [], 0
        for k, line in enumerate(lines):
            out.append((feature(line, k, len(lines)), offset in gold))
            offset += len(line) + 1
        return out
    return features


def _template_of(line: str) -> str:
    for pattern, relation in _fact_patterns():
        if pattern.match(line):
            return f"{relation}:{pattern.pattern}"
    return "?"


PROBES = (
    Probe("fact_length", "length", "characters of a fact line; gold = a required fact",
          _per_line(lambda line, k, n: float(len(line)))),
    Probe("fact_position", "position", "position of a fact line in the context",
          _per_line(lambda line, k, n: k / max(n - 1, 1))),
    Probe("fact_centrality", "position", "closeness of a fact line to the middle of the context",
          _per_line(lambda line, k, n: -abs(k / max(n - 1, 1) - 0.5))),
    Probe("fact_template", "template", "which template wrote a fact line; gold = a required fact",
          _per_line(lambda line, k, n: _template_of(line)), categorical=True),
)
