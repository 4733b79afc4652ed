"""Question shapes: parallel chains of lookups through the knowledge base, and their wording.

A branch starts at a named entity and follows ``hops`` relations; every entity it passes through after the
start is a *bridge* (never named in the question) and the last one is the branch's answer. Branches of one
question share no entity, so every required fact is distinct and no question names another branch's bridge.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from ...core.rng import StableRng
from .kb import KnowledgeBase
from .schema import BY_ID, YEAR, outgoing

MAX_ATTEMPTS = 2000  # fresh starts tried per branch before the knowledge base is declared too small


@dataclass(frozen=True)
class Branch:
    relations: tuple[str, ...]  # relation ids, first hop first
    entities: tuple[int, ...]  # the start, the bridges, the answer: len(relations) + 1 entity ids

    @property
    def start(self) -> int:
        return self.entities[0]

    @property
    def answer(self) -> int:
        return self.entities[-1]

    @property
    def hops(self) -> int:
        return len(self.relations)


@cache
def _continuing(entity_type: str) -> tuple[str, ...]:
    """Relations from ``entity_type`` into a type that has relations of its own (a chain can go on)."""
    return tuple(r.id for r in outgoing(entity_type) if outgoing(r.target))


def sample_branch(kb: KnowledgeBase, hops: int, rng: StableRng, taken: set[int]) -> Branch:
    """One branch of ``hops`` lookups through entities not in ``taken``: a seeded start among the types a
    chain of that length can leave, then at every hop a seeded relation (any relation on the last hop)."""
    starts = [e for e, t in enumerate(kb.types) if _continuing(t) or (hops == 1 and outgoing(t))]
    for _ in range(MAX_ATTEMPTS):
        current = rng.choice(starts)
        if current in taken:
            continue
        entities, relations = [current], []
        for hop in range(hops):
            options = _continuing(kb.types[current]) if hop < hops - 1 else tuple(
                r.id for r in outgoing(kb.types[current]))
            if not options:
                break
            relation = rng.choice(options)
            current = kb.value(relation, current)
            if current in taken or current in entities:
                break
            entities.append(current)
            relations.append(relation)
        if len(relations) == hops:
            return Branch(tuple(relations), tuple(entities))
    raise ValueError(f"hops: the knowledge base holds no fresh {hops}-hop chain after {MAX_ATTEMPTS} tries; "
                     "allowed: fewer hops or branches, or a longer context")


def sample_branches(kb: KnowledgeBase, lengths: Sequence[int], rng: StableRng) -> list[Branch]:
    """Branches of the given lengths, pairwise disjoint."""
    taken: set[int] = set()
    branches = []
    for hops in lengths:
        branch = sample_branch(kb, hops, rng, taken)
        taken.update(branch.entities)
        branches.append(branch)
    return branches


def nested_phrase(kb: KnowledgeBase, branch: Branch) -> str:
    """"the birthplace of the founder of Ostrin Works": the start named, every bridge implied."""
    text = kb.names[branch.start]
    for relation in branch.relations:
        text = BY_ID[relation].phrase.format(x=text)
    return text


def stepwise_phrase(kb: KnowledgeBase, branch: Branch) -> str:
    """"start from Ostrin Works; take its founder; then take the birthplace of that one"."""
    steps = [f"start from {kb.names[branch.start]}"]
    for k, relation in enumerate(branch.relations):
        noun = BY_ID[relation].phrase.format(x="it" if k == 0 else "that one")
        steps.append(f"take {noun}" if k == 0 else f"then take {noun}")
    return "; ".join(steps)


def answer_is_year(branch: Branch) -> bool:
    return BY_ID[branch.relations[-1]].target == YEAR
