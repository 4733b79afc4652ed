"""Same-signature competitors: the facts that make every hop's relation something to read.

A hop follows relation ``r`` from a subject to an entity of ``r``'s target type. A *competitor* of the hop is
the subject's fact for another relation of the same signature (source type -> target type): "Mara Quint used
to work for X" beside the gold "Mara Quint works for Y". With one in the context, a walk that follows entity
types but never reads which relation a line states is left with a coin flip at every hop. The schema has two
relations per signature, so a hop has one competitor at most; ``competitors_per_hop`` (0 or 1) is held exactly
on every hop of every question, whatever the other knobs (0 removes them: the relation-blind ablation).

Where the chain goes on, a competitor's value also gets the facts the gold bridge has for the next hop (the
gold relation and its competitors, the join's own lookup included), so a walk that looks one step ahead for
a path of the right types, or counts how connected a candidate is, finds the same behind both. The compared
year of a comparison has no competitor: each entity type has a single year relation, named by the question.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

from ...core.rng import StableRng
from .kb import Fact, KnowledgeBase
from .questions import Question
from .schema import BY_ID, RELATIONS, YEAR


@cache
def same_signature(relation: str) -> tuple[str, ...]:
    """The other relations from ``relation``'s source type to its target type (schema order); none for a year."""
    spec = BY_ID[relation]
    if spec.target == YEAR:
        return ()
    return tuple(r.id for r in RELATIONS if r.id != relation and (r.source, r.target) == (spec.source, spec.target))


MAX_COMPETITORS = min(len(same_signature(r.id)) for r in RELATIONS if r.target != YEAR)


def paths(question: Question) -> Iterator[tuple[tuple[str, ...], tuple[int, ...]]]:
    """Every branch as (relations, subjects): its hops, with the join's own lookup as the last hop."""
    join = question.join
    for branch in question.branches:
        relations, subjects = branch.relations, branch.entities[:-1]
        if join.relation is not None:
            relations, subjects = (*relations, join.relation), (*subjects, branch.answer)
        yield relations, subjects


def hops(question: Question) -> list[tuple[str, int]]:
    """(relation, subject) of every hop that has a same-signature relation (all but a comparison's year)."""
    return [(relation, subject) for relations, subjects in paths(question)
            for relation, subject in zip(relations, subjects, strict=True) if same_signature(relation)]


def decoy_facts(kb: KnowledgeBase, question: Question, level: int, rng: StableRng) -> list[Fact]:
    """The competitor facts of every hop (``level`` of them, seeded among its same-signature relations) and,
    where the chain goes on, the competitor's value's facts for the same relations the gold bridge has in the
    context for its next hop (the gold one and its competitors): a competitor's value is as connected, one
    step on, as the bridge it stands beside. Each fact once, required facts left out."""
    chosen: dict[tuple[str, int], tuple[str, ...]] = {}
    for relations, subjects in paths(question):
        for relation, subject in zip(relations, subjects, strict=True):
            options = list(same_signature(relation))
            chosen[(relation, subject)] = tuple(rng.sample(options, min(level, len(options)))) if options else ()
    required = set(chosen)
    out: dict[tuple[str, int], Fact] = {}

    def add(relation: str, subject: int) -> Fact | None:
        fact = kb.by_key.get((relation, subject))
        if fact is not None and fact.key() not in required:
            out.setdefault(fact.key(), fact)
        return fact

    for relations, subjects in paths(question):
        for hop, (relation, subject) in enumerate(zip(relations, subjects, strict=True)):
            for other in chosen[(relation, subject)]:
                fact = add(other, subject)
                if fact is None or hop + 1 == len(relations):
                    continue
                following = (relations[hop + 1], subjects[hop + 1])
                for step in (following[0], *chosen[following]):
                    add(step, fact.target)
    return list(out.values())


def competitor_keys(question: Question) -> set[tuple[str, int]]:
    """Keys of every same-signature competitor of every hop (all of them, whatever the level)."""
    return {(other, subject) for relation, subject in hops(question) for other in same_signature(relation)}


def competitor_counts(question: Question, present: set[tuple[str, int]]) -> list[int]:
    """Per hop (``hops`` order), how many of its same-signature competitors are among the ``present`` keys."""
    return [sum((other, subject) in present for other in same_signature(relation))
            for relation, subject in hops(question)]
