"""Same-signature competitors: the facts that make every hop's relation something to read.

A hop follows relation ``r`` from a subject to an entity of ``r``'s target type. A *competitor* of the hop is
the subject's fact for another relation of the same signature (source type -> target type): "Mara Quint used
to work for X" beside the gold "Mara Quint works for Y". The schema has four relations per signature (their
values differ), so a hop has up to three; ``competitors_per_hop`` of them are in the context, exactly, on
every hop of every question whatever the other knobs, and a walk that follows entity types but never reads
which relation a line states is right on a hop one time in ``competitors_per_hop + 1``. 0 removes them all
(the relation-blind ablation). The compared year of a comparison has no competitor: each entity type has a
single year relation, named by the question.

A competitor's value gets its facts for the chain's next hop (all four relations of that signature) first
among the distractors (``neighbour_keys``), so it is about as connected one step on as the gold bridge, whose
next hop and competitors are always there; further on, the gold chain stays the better-covered path where the
knowledge base is larger than the context (forcing whole decoy trees would cost more lines than 1k holds).
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
    """The competitor facts of every hop: ``level`` of its same-signature relations (seeded) from its subject,
    each fact once, required facts left out."""
    out: dict[tuple[str, int], Fact] = {}
    required = {key for relations, subjects in paths(question) for key in zip(relations, subjects, strict=True)}
    for relation, subject in hops(question):
        for other in rng.sample(list(same_signature(relation)), level):
            fact = kb.by_key[(other, subject)]
            if fact.key() not in required:
                out.setdefault(fact.key(), fact)
    return list(out.values())


def neighbour_keys(kb: KnowledgeBase, question: Question, decoys: list[Fact]) -> dict[tuple[str, int], int]:
    """Keys of the facts a competitor's value has for the signature of the chain's next hop (all four
    relations of it), where the chain goes on, each with its rank: 0 for the chain's own next relation, 1 for
    the others. They go in the context before other distractors where they fit, so a competitor's value is
    about as connected, one step on, as the gold bridge beside it (whose next hop and its competitors are
    always there); where only some fit (1k-2k tokens), the next relation's lines come first, so the chain's
    relations are stated about other subjects as well as about the bridges."""
    following: dict[tuple[str, int], tuple[str, ...]] = {}
    for relations, subjects in paths(question):
        for hop in range(len(relations) - 1):
            nxt = relations[hop + 1]
            for other in same_signature(relations[hop]):
                following[(other, subjects[hop])] = (nxt, *same_signature(nxt))
    out: dict[tuple[str, int], int] = {}
    for fact in decoys:
        for rank, step in enumerate(following.get(fact.key(), ())):
            if (step, fact.target) in kb.by_key:
                out[(step, fact.target)] = min(out.get((step, fact.target), 1), min(rank, 1))
    return out


def competitor_keys(question: Question) -> set[tuple[str, int]]:
    """Keys of every same-signature competitor of every hop (all of them, whatever the level)."""
    return {(other, subject) for relation, subject in hops(question) for other in same_signature(relation)}


def competitor_counts(question: Question, present: set[tuple[str, int]]) -> list[int]:
    """Per hop (``hops`` order), how many of its same-signature competitors are among the ``present`` keys."""
    return [sum((other, subject) in present for other in same_signature(relation))
            for relation, subject in hops(question)]
