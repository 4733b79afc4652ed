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
from .baselines import Asked, asked, fact_patterns, facts_in_order, follow, join_answer
from .schema import BY_ID, YEAR


@dataclass(frozen=True)
class View:
    mentions: tuple[tuple[str, str], ...]  # (name, type) in context order, two per fact line (one for a year)
    lines: tuple[int, ...]  # the fact line of every mention
    facts: dict[tuple[str, str], str]  # (relation, source) -> value
    asked: Asked | None


@lru_cache(maxsize=8)
def view(prompt: str) -> View:
    mentions: list[tuple[str, str]] = []
    lines: list[int] = []
    facts = {}
    for k, (relation, source, value) in enumerate(facts_in_order(prompt)):
        spec = BY_ID[relation]
        mentions.append((source, spec.source))
        lines.append(k)
        if spec.target != YEAR:
            mentions.append((value, spec.target))
            lines.append(k)
        facts[(relation, source)] = value
    return View(tuple(mentions), tuple(lines), facts, asked(prompt))


@dataclass(frozen=True)
class Target:
    """What one pick must name: an entity of ``kind``, near the ``starts`` (never one of them)."""

    kind: str
    starts: tuple[str, ...]


def _targets(v: View) -> list[Target | None]:
    """A target per answer: one per list question, one for a whole comparison, none for a count."""
    if v.asked is None:
        return []
    if v.asked.join[0] == "list":
        return [Target(BY_ID[c[1][-1]].target, (c[0],)) if c and c[1] else None for c in v.asked.chains]
    if v.asked.join[0] == "compare":
        starts = tuple(c[0] for c in v.asked.chains if c)
        return [Target(BY_ID[v.asked.join[1]].source, starts)]
    return []


def _per_target(pick):
    """A strategy from ``pick(view, target) -> name or None``, naming an entity for every answer."""
    def answer(prompt: str, _: object) -> str:
        v = view(prompt)
        return "FINAL ANSWER: " + "; ".join((pick(v, t) or "") if t else "" for t in _targets(v))
    return answer


def _candidates(v: View, target: Target) -> list[tuple[int, str]]:
    """(mention position, name) of every mention of an entity of the target's type, other than a start."""
    return [(i, name) for i, (name, kind) in enumerate(v.mentions) if kind == target.kind and name not in target.starts]


def _first(v: View, target: Target) -> str | None:
    found = _candidates(v, target)
    return found[0][1] if found else None


def _last(v: View, target: Target) -> str | None:
    found = _candidates(v, target)
    return found[-1][1] if found else None


def _most_frequent(v: View, target: Target) -> str | None:
    counts = Counter(name for _, name in _candidates(v, target))
    return max(sorted(counts), key=lambda name: counts[name]) if counts else None


def _by_length(longest: bool):
    def pick(v: View, target: Target) -> str | None:
        names = sorted({name for _, name in _candidates(v, target)})
        return (max if longest else min)(names, key=len) if names else None
    return pick


def _nearest_start(v: View, target: Target) -> str | None:
    """The candidate mentioned closest to a start entity's first mention (ties: the earlier)."""
    firsts = [next((i for i, (name, _) in enumerate(v.mentions) if name == start), None) for start in target.starts]
    firsts = [i for i in firsts if i is not None]
    found = _candidates(v, target)
    if not firsts or not found:
        return None
    return min(found, key=lambda item: (min(abs(item[0] - k) for k in firsts), item[0]))[1]


def _nearest_any_mention(v: View, target: Target) -> str | None:
    """The candidate mentioned closest to any mention of a start entity, outside the starts' own fact lines
    (reading a line that names the start is a lookup, the reasoning itself on a one-step chain)."""
    starts = [i for i, (name, _) in enumerate(v.mentions) if name in target.starts]
    own_lines = {v.lines[i] for i in starts}
    found = [(i, name) for i, name in _candidates(v, target) if v.lines[i] not in own_lines]
    if not starts or not found:
        return None
    return min(found, key=lambda item: (min(abs(item[0] - k) for k in starts), item[0]))[1]


def _one_hop(prompt: str, _: object) -> str:
    """Only the last relation of every chain, applied straight to its start (a chain read as if it had one
    step), then the join. A chain of one step is the reasoning itself: a list question abstains on it, a
    joined question abstains as a whole."""
    v = view(prompt)
    if v.asked is None:
        return ""
    shortened = [(c[0], c[1][-1:]) if c and len(c[1]) > 1 else None for c in v.asked.chains]
    if v.asked.join[0] == "list":
        return "FINAL ANSWER: " + "; ".join(follow(v.facts, c) or "" for c in shortened)
    answer = join_answer(v.facts, [follow(v.facts, c) for c in shortened], v.asked.join)
    return "" if answer is None else f"FINAL ANSWER: {answer}"


def _extreme_year(prompt: str, _: object) -> str:
    """A comparison answered by the earliest / latest year of the compared kind anywhere in the context."""
    v = view(prompt)
    if v.asked is None or v.asked.join[0] != "compare":
        return ""
    _, relation, direction = v.asked.join
    dated = sorted((int(value), source) for (r, source), value in v.facts.items() if r == relation)
    if not dated:
        return ""
    return f"FINAL ANSWER: {(dated[0] if direction == 'earliest' else dated[-1])[1]}"


def _constant_count(prompt: str, count: int) -> str:
    """A count answered by one fixed number, whatever the question."""
    v = view(prompt)
    return f"FINAL ANSWER: {count}" if v.asked is not None and v.asked.join[0] == "count" else ""


def _city_share(prompt: str, share: float) -> str:
    """A count read off how many people in the whole context the city relation leads to the named city, as
    a share of the chains (the city's population, not the chains' ends)."""
    v = view(prompt)
    if v.asked is None or v.asked.join[0] != "count":
        return ""
    _, relation, city = v.asked.join
    natives = sum(1 for (r, _), value in v.facts.items() if r == relation and value == city)
    return f"FINAL ANSWER: {min(len(v.asked.chains), round(natives * share))}"


SHORTCUTS = (
    Shortcut("first_candidate", "position", "the first-mentioned entity of the answer's type",
             _per_target(_first)),
    Shortcut("last_candidate", "position", "the last-mentioned entity of the answer's type", _per_target(_last)),
    Shortcut("most_frequent", "frequency", "the most often mentioned entity of the answer's type",
             _per_target(_most_frequent)),
    Shortcut("longest_name", "length", "the entity of the answer's type with the longest name",
             _per_target(_by_length(True))),
    Shortcut("shortest_name", "length", "the entity of the answer's type with the shortest name",
             _per_target(_by_length(False))),
    Shortcut("nearest_start", "family", "the entity of the answer's type mentioned nearest a start entity",
             _per_target(_nearest_start)),
    Shortcut("nearest_any_mention", "family", "the entity of the answer's type mentioned nearest any mention of "
             "a start, outside the starts' own facts", _per_target(_nearest_any_mention)),
    Shortcut("one_hop", "family", "only the last relation of every chain, applied to its start", _one_hop),
    Shortcut("extreme_year", "family", "compare: the earliest / latest year of the compared kind in the whole "
             "context", _extreme_year),
    Shortcut("constant_count", "frequency", "count: one fixed number (the best of 0-8)", _constant_count,
             variants=tuple(range(9))),
    Shortcut("city_population", "family", "count: how many people in the context the relation leads to the city, "
             "times a share", _city_share, variants=(0.25, 0.5, 1.0)),
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


def _template_of(line: str) -> tuple[str, int] | None:
    """(relation, phrasing index) of the template that wrote a fact line."""
    for pattern, relation, phrasing in fact_patterns():
        if pattern.match(line):
            return relation, phrasing
    return None


def _always(_config) -> bool:
    return True


PROBES = (
    Probe("fact_length", "length", "characters of a fact line; gold = a required fact",
          _per_line(lambda line, k, n: float(len(line)))),
    Probe("fact_position", "position", "position of a fact line in the context",
          _per_line(lambda line, k, n: k / max(n - 1, 1))),
    Probe("fact_centrality", "position", "closeness of a fact line to the middle of the context",
          _per_line(lambda line, k, n: -abs(k / max(n - 1, 1) - 0.5))),
    Probe("fact_template", "template", "which of its relation's phrasings wrote a fact line (the wording, "
          "whatever the relation); gold = a required fact",
          _per_line(lambda line, k, n: (_template_of(line) or ("", -1))[1]), categorical=True),
    # Every required fact states a relation its question names ("the founder of ..."), and questions name
    # some relations more often than the knowledge base holds them: the relation alone ranks gold lines
    # higher by construction, as the question's own words do. Reported, never counted.
    Probe("fact_relation", "template", "which relation (and phrasing) a fact line states",
          _per_line(lambda line, k, n: _template_of(line)), categorical=True, expected_when=_always),
)
