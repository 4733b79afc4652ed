"""Baselines that read only the prompt: the solver (parses every fact and question, follows the chains) and
a seeded random guess of an entity of the right type (the chance level of the shortcut audit)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ...core.rng import StableRng, derive_seed
from ...scoring.not_found import NOT_FOUND
from .prompt import CONTEXT_HEADER
from .schema import COMPARE_RELATIONS, COUNT_RELATIONS, RELATIONS, YEAR

_QUESTION = re.compile(r"^(?:Question: |\d+\. )(.*)$", re.MULTILINE)
_ITEM = re.compile(r"^\d+\. (.*)$")


@lru_cache(maxsize=1)
def fact_patterns() -> tuple[tuple[re.Pattern[str], str, int], ...]:
    """(regex, relation id, phrasing index) per fact template, the most specific first ("was born in the
    year" before "was born in")."""
    patterns = []
    for relation in RELATIONS:
        for phrasing, template in enumerate(relation.facts):
            literal = len(template.replace("{s}", "").replace("{t}", ""))
            regex = re.escape(template).replace(r"\{s\}", "(?P<s>.+?)").replace(r"\{t\}", "(?P<t>.+?)")
            patterns.append((literal, re.compile(f"^{regex}$"), relation.id, phrasing))
    patterns.sort(key=lambda item: -item[0])
    return tuple((pattern, relation, phrasing) for _, pattern, relation, phrasing in patterns)


@lru_cache(maxsize=1)
def _phrase_prefixes() -> tuple[tuple[str, str], ...]:
    """(prefix, relation id) of every question phrase, longest first ("the former employer of " first)."""
    prefixes = [(r.phrase.split("{x}")[0], r.id) for r in RELATIONS]
    return tuple(sorted(prefixes, key=lambda item: -len(item[0])))


@lru_cache(maxsize=1)
def _fact_literals() -> tuple[tuple[str, str, str], ...]:
    """(prefix, middle, suffix) literals of every pattern of ``fact_patterns``, in the same order: what a line
    must start with, contain and end with for the pattern to have any chance to match."""
    pieces = {}
    for relation in RELATIONS:
        for phrasing, template in enumerate(relation.facts):
            split = template.replace("{t}", "{s}").split("{s}")
            if len(split) != 3:  # every template names its source and its value once
                raise ValueError(f"fact template {template!r}: allowed: one {{s}} and one {{t}}")
            pieces[(relation.id, phrasing)] = (split[0], split[1], split[2])
    return tuple(pieces[(relation, phrasing)] for _, relation, phrasing in fact_patterns())


def match_fact(line: str) -> tuple[int, str, str] | None:
    """(index in ``fact_patterns``, source, value) of the first fact pattern that matches ``line``, or None.
    A pattern whose literals the line lacks is skipped before its regex runs: it cannot match, so the first
    match is the one trying every regex in order finds, at a fraction of the cost."""
    patterns = fact_patterns()
    for k, (prefix, middle, suffix) in enumerate(_fact_literals()):
        if middle in line and line.endswith(suffix) and line.startswith(prefix):
            match = patterns[k][0].match(line)
            if match:
                return k, match.group("s"), match.group("t")
    return None


def parse_fact(line: str) -> tuple[str, str, str] | None:
    """(relation id, source name, value) of one fact line, or None."""
    found = match_fact(line)
    if found is None:
        return None
    k, source, value = found
    return fact_patterns()[k][1], source[0].upper() + source[1:], value


def facts_in_order(prompt: str) -> list[tuple[str, str, str]]:
    """Every fact line of a prompt that parses, in context order: (relation id, source, value)."""
    _, _, body = prompt.partition(f"\n{CONTEXT_HEADER}\n")
    body, _, _ = body.rpartition("\n\n")
    return [parsed for line in body.split("\n") if (parsed := parse_fact(line))]


def facts_of(prompt: str) -> dict[tuple[str, str], str]:
    """Every fact of a prompt: (relation, source) -> value."""
    return {(relation, source): value for relation, source, value in facts_in_order(prompt)}


def _noun_chain(text: str) -> tuple[str, list[str]]:
    """(start name, relation ids first hop first) of a nested noun phrase ("the founder of X"); a bare name
    is a start with no hop."""
    outer_first = []
    while True:
        for prefix, relation in _phrase_prefixes():
            if text.startswith(prefix):
                outer_first.append(relation)
                text = text[len(prefix):]
                break
        else:
            return text, outer_first[::-1]


def _stepwise_chain(text: str) -> tuple[str, list[str]] | None:
    steps = text.rstrip(".").split("; ")
    if not steps or not steps[0].startswith("Start from "):
        return None
    start, relations = steps[0][len("Start from "):], []
    for step in steps[1:]:
        noun = step.removeprefix("then ").removeprefix("take ")
        for prefix, relation in _phrase_prefixes():
            if noun.startswith(prefix):
                relations.append(relation)
                break
        else:
            return None
    return start, relations


def parse_chain(question: str) -> tuple[str, list[str]] | None:
    """(start name, relation ids first hop first) of one list question, nested or stepwise."""
    if question.startswith("What is ") and question.endswith("?"):
        start, relations = _noun_chain(question[len("What is "):-1])
        return (start, relations) if relations else None
    return _stepwise_chain(question.removesuffix(" Where do you arrive?"))


def parse_item(item: str) -> tuple[str, list[str]] | None:
    """(start name, relation ids) of one item of a joined question, nested or stepwise."""
    return _stepwise_chain(item) if item.startswith("Start from ") else _noun_chain(item)


@dataclass(frozen=True)
class Asked:
    """What a prompt asks: a chain per branch, and the join (``("list",)``, ``("compare", relation,
    direction)`` or ``("count", relation, city)``)."""

    chains: tuple[tuple[str, tuple[str, ...]] | None, ...]
    join: tuple[str, ...]


def _closing_join(closing: str) -> tuple[str, ...] | None:
    for relation, predicates in COMPARE_RELATIONS.items():
        for direction, predicate in predicates.items():
            if closing == f"Which of them {predicate}?":
                return "compare", relation, direction
    for relation, predicate in COUNT_RELATIONS.items():
        head, _, tail = predicate.partition("{c}")
        prefix = f"How many of them {head}"
        if closing.startswith(prefix) and closing.endswith(f"{tail}?"):
            return "count", relation, closing[len(prefix):len(closing) - len(tail) - 1]
    return None


def asked(prompt: str) -> Asked | None:
    """The questions of an ImplicitHop prompt, or None when it has none."""
    _, _, tail = prompt.rpartition(f"\n{CONTEXT_HEADER}\n")
    _, _, tail = tail.rpartition("\n\n")
    lines = tail.split("\n")
    if lines and lines[0].startswith("Question: Consider these "):
        items = [m.group(1) for line in lines[1:] if (m := _ITEM.match(line))]
        join = _closing_join(lines[len(items) + 1]) if len(lines) > len(items) + 1 else None
        if not items or join is None:
            return None
        return Asked(tuple(_as_tuple(parse_item(item)) for item in items), join)
    questions = _QUESTION.findall(tail)
    return Asked(tuple(_as_tuple(parse_chain(q)) for q in questions), ("list",)) if questions else None


def _as_tuple(chain):
    return (chain[0], tuple(chain[1])) if chain else None


def follow(facts: dict[tuple[str, str], str], chain) -> str | None:
    """The end of a chain through the facts, or None where a fact is missing."""
    if chain is None:
        return None
    current, relations = chain
    for relation in relations:
        current = facts.get((relation, current))
        if current is None:
            return None
    return current


def join_answer(facts: dict[tuple[str, str], str], ends: list[str | None], join: tuple[str, ...]) -> str | None:
    """The joined answer over the chains' ends: the ends themselves (NOT FOUND for a chain that breaks), the
    earliest / latest, or the count (None where a chain breaks)."""
    if join[0] == "list":
        return "; ".join(NOT_FOUND if end is None else end for end in ends)
    if any(end is None for end in ends):
        return None
    values = [facts.get((join[1], end)) for end in ends]
    if any(value is None for value in values):
        return None
    if join[0] == "compare":
        pick = min if join[2] == "earliest" else max
        return pick(zip(values, ends, strict=True), key=lambda pair: int(pair[0]))[1]
    return str(sum(value == join[2] for value in values))


def solve(prompt: str) -> str | None:
    """The answer computed from the prompt's facts alone, or None when the prompt is not ImplicitHop's."""
    if f"\n{CONTEXT_HEADER}\n" not in prompt or (question := asked(prompt)) is None:
        return None
    facts = facts_of(prompt)
    answer = join_answer(facts, [follow(facts, chain) for chain in question.chains], question.join)
    return None if answer is None else f"FINAL ANSWER: {answer}"


def guess(prompt: str, seed: int) -> str | None:
    """A seeded pick, per question, among the context's values of the question's last relation's type (an
    entity of the right type); for a comparison, among the entities of the compared type; for a count, a
    number from 0 to the most the context allows: the chance level."""
    if f"\n{CONTEXT_HEADER}\n" not in prompt or (question := asked(prompt)) is None:
        return None
    facts = facts_of(prompt)
    rng = StableRng(derive_seed("implicit-hop-guess", seed, prompt[-200:]))
    if question.join[0] == "count":
        _, relation, city = question.join
        most = min(len(question.chains), sum(1 for (r, _), v in facts.items() if r == relation and v == city))
        return f"FINAL ANSWER: {rng.below(most + 1)}"
    if question.join[0] == "compare":
        sources = sorted({source for (r, source) in facts if r == question.join[1]})
        return f"FINAL ANSWER: {rng.choice(sources) if sources else ''}"
    target_of = {r.id: r.target for r in RELATIONS}
    by_type: dict[str, list[str]] = {}
    for (relation, _), value in sorted(facts.items()):
        if target_of[relation] != YEAR and value not in by_type.setdefault(target_of[relation], []):
            by_type[target_of[relation]].append(value)
    answers = []
    for chain in question.chains:
        candidates = by_type.get(target_of[chain[1][-1]], []) if chain else []
        answers.append(rng.choice(candidates) if candidates else "")
    return f"FINAL ANSWER: {'; '.join(answers)}"
