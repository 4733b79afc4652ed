"""Baselines that read only the prompt: the solver (parses every fact and question, follows the chains) and
a seeded random guess of an entity of the right type (the chance level of the shortcut audit)."""

from __future__ import annotations

import re
from functools import lru_cache

from ...core.rng import StableRng, derive_seed
from .prompt import CONTEXT_HEADER
from .schema import RELATIONS, YEAR

_QUESTION = re.compile(r"^(?:Question: |\d+\. )(.*)$", re.MULTILINE)


@lru_cache(maxsize=1)
def _fact_patterns() -> tuple[tuple[re.Pattern[str], str], ...]:
    """One regex per fact template, the most specific first ("was born in the year" before "was born in")."""
    patterns = []
    for relation in RELATIONS:
        for template in relation.facts:
            literal = len(template.replace("{s}", "").replace("{t}", ""))
            regex = re.escape(template).replace(r"\{s\}", "(?P<s>.+?)").replace(r"\{t\}", "(?P<t>.+?)")
            patterns.append((literal, re.compile(f"^{regex}$"), relation.id))
    patterns.sort(key=lambda item: -item[0])
    return tuple((pattern, relation) for _, pattern, relation in patterns)


@lru_cache(maxsize=1)
def _phrase_prefixes() -> tuple[tuple[str, str], ...]:
    """(prefix, relation id) of every question phrase, longest first ("the former employer of " first)."""
    prefixes = [(r.phrase.split("{x}")[0], r.id) for r in RELATIONS]
    return tuple(sorted(prefixes, key=lambda item: -len(item[0])))


def parse_fact(line: str) -> tuple[str, str, str] | None:
    """(relation id, source name, value) of one fact line, or None."""
    for pattern, relation in _fact_patterns():
        match = pattern.match(line)
        if match:
            source, value = match.group("s"), match.group("t")
            return relation, source[0].upper() + source[1:], value
    return None


def facts_in_order(prompt: str) -> list[tuple[str, str, str]]:
    """Every fact line of a prompt that parses, in context order: (relation id, source, value)."""
    _, _, body = prompt.partition(f"\n{CONTEXT_HEADER}\n")
    body, _, _ = body.rpartition("\n\n")
    return [parsed for line in body.split("\n") if (parsed := parse_fact(line))]


def facts_of(prompt: str) -> dict[tuple[str, str], str]:
    """Every fact of a prompt: (relation, source) -> value."""
    return {(relation, source): value for relation, source, value in facts_in_order(prompt)}


def parse_chain(question: str) -> tuple[str, list[str]] | None:
    """(start name, relation ids first hop first) of one question, nested or stepwise."""
    if question.startswith("What is ") and question.endswith("?"):
        text, outer_first = question[len("What is "):-1], []
        while True:
            for prefix, relation in _phrase_prefixes():
                if text.startswith(prefix):
                    outer_first.append(relation)
                    text = text[len(prefix):]
                    break
            else:
                return (text, outer_first[::-1]) if outer_first else None
    steps = question.removesuffix(" Where do you arrive?").rstrip(".").split("; ")
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


def questions_of(prompt: str) -> list[str]:
    _, _, tail = prompt.rpartition(f"\n{CONTEXT_HEADER}\n")
    _, _, tail = tail.rpartition("\n\n")
    return _QUESTION.findall(tail)


def solve(prompt: str) -> str | None:
    """The answers computed from the prompt's facts alone, or None when the prompt is not ImplicitHop's."""
    if f"\n{CONTEXT_HEADER}\n" not in prompt:
        return None
    facts = facts_of(prompt)
    answers = []
    for question in questions_of(prompt):
        chain = parse_chain(question)
        if chain is None:
            return None
        current, relations = chain
        for relation in relations:
            current = facts.get((relation, current))
            if current is None:
                return None
        answers.append(current)
    return f"FINAL ANSWER: {'; '.join(answers)}" if answers else None


def guess(prompt: str, seed: int) -> str | None:
    """A seeded pick, per question, among the context's values of the question's last relation's type (an
    entity of the right type): the chance level."""
    if f"\n{CONTEXT_HEADER}\n" not in prompt:
        return None
    facts = facts_of(prompt)
    target_of = {r.id: r.target for r in RELATIONS}
    by_type: dict[str, list[str]] = {}
    for (relation, _), value in sorted(facts.items()):
        if target_of[relation] != YEAR and value not in by_type.setdefault(target_of[relation], []):
            by_type[target_of[relation]].append(value)
    rng = StableRng(derive_seed("implicit-hop-guess", seed, prompt[-200:]))
    answers = []
    for question in questions_of(prompt):
        chain = parse_chain(question)
        candidates = by_type.get(target_of[chain[1][-1]], []) if chain else []
        answers.append(rng.choice(candidates) if candidates else "")
    return f"FINAL ANSWER: {'; '.join(answers)}"
