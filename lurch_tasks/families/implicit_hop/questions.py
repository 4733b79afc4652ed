"""Question shapes: parallel chains of lookups through the knowledge base, and their wording.

A branch starts at a named entity and follows ``hops`` relations; every entity it passes through after the
start is a *bridge* (never named in the question) and the last one is the branch's answer. Branches of one
question share no entity, so every required fact is distinct and no question names another branch's bridge.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

from ...core.rng import StableRng
from .kb import KnowledgeBase
from .schema import BY_ID, COUNT_RELATIONS, RELATIONS, outgoing

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
    starts = _starts(kb.types, hops)
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


@lru_cache(maxsize=64)
def _starts(types: tuple[str, ...], hops: int) -> tuple[int, ...]:
    """The entities (of a knowledge base's ``types``) a chain of ``hops`` lookups can leave, ascending:
    remembered, as a question's seeded draws ask for them again and again."""
    leaving = {t for t in set(types) if _continuing(t) or (hops == 1 and outgoing(t))}
    return tuple(e for e, t in enumerate(types) if t in leaving)


def sample_branches(kb: KnowledgeBase, lengths: Sequence[int], rng: StableRng) -> list[Branch]:
    """Branches of the given lengths, pairwise disjoint."""
    taken: set[int] = set()
    branches = []
    for hops in lengths:
        branch = sample_branch(kb, hops, rng, taken)
        taken.update(branch.entities)
        branches.append(branch)
    return branches


@dataclass(frozen=True)
class Join:
    """The question's final step over its branches' ends. ``list``: every end is an answer. ``compare``:
    ``relation`` is a year relation of the ends, and the answer is the end whose year comes first
    (``direction`` earliest) or last. ``count``: ``relation`` leads every end to a city, and the answer is
    how many ends it leads to the named ``target`` city."""

    kind: str
    relation: str | None = None
    target: int | None = None
    direction: str | None = None
    answer: int | None = None  # compare: the winning end (entity id); count: how many ends reach ``target``


@dataclass(frozen=True)
class Question:
    branches: tuple[Branch, ...]
    join: Join

    def final_keys(self) -> list[tuple[str, int]]:
        """The join's own facts: the join relation of every branch's end (none for a list)."""
        if self.join.relation is None:
            return []
        return [(self.join.relation, branch.answer) for branch in self.branches]


LIST = Join("list")


@cache
def _into(entity_type: str) -> tuple[str, ...]:
    """Relations from any entity into ``entity_type`` (a chain can arrive at it through them)."""
    return tuple(r.id for r in RELATIONS if r.target == entity_type)


def branch_to(kb: KnowledgeBase, end: int, hops: int, rng: StableRng, taken: set[int]) -> Branch | None:
    """A branch of ``hops`` lookups that arrives at ``end``, drawn backwards (seeded relation, then a seeded
    entity whose value for it is the current one) through entities not in ``taken``; None at a dead end."""
    entities, relations = [end], []
    for _ in range(hops):
        options = [(relation, fresh) for relation in _into(kb.types[entities[0]])
                   if (fresh := [e for e in kb.sources(relation, entities[0]) if e not in taken and e not in entities])]
        if not options:
            return None
        relation, fresh = options[rng.below(len(options))]
        entities.insert(0, rng.choice(fresh))
        relations.insert(0, relation)
    return Branch(tuple(relations), tuple(entities))


def _branches_to(kb: KnowledgeBase, ends: Sequence[int], lengths: Sequence[int], rng: StableRng,
                 taken: set[int]) -> list[Branch] | None:
    """Disjoint branches of ``lengths`` lookups arriving at ``ends`` (one each), or None."""
    taken = set(taken) | set(ends)
    branches = []
    for end, hops in zip(ends, lengths, strict=True):
        branch = branch_to(kb, end, hops, rng, taken - {end})
        if branch is None:
            return None
        taken.update(branch.entities)
        branches.append(branch)
    return branches


def sample_compare(kb: KnowledgeBase, lengths: Sequence[int], rng: StableRng, relation: str,
                   direction: str) -> Question:
    """Branches of ``lengths`` lookups (the year lookup included) ending at people or organisations whose
    years (by ``relation``) all differ, and which of them came first or last (``direction``). The winner is
    drawn first, uniformly among the entities that can win, and the other ends among those it beats: the
    answer's year is not pushed to the extremes of the knowledge base, as the first of a few random draws
    would be."""
    m = len(lengths)
    year = {e: kb.value(relation, e) for e in kb.of_type(BY_ID[relation].source)}
    sign = 1 if direction == "earliest" else -1
    beaten = {e: [o for o in year if sign * year[e] < sign * year[o]] for e in year}
    contenders = [e for e in year if len({year[o] for o in beaten[e]}) >= m - 1]
    for _ in range(MAX_ATTEMPTS if contenders else 0):
        winner = rng.choice(contenders)
        by_year: dict[int, list[int]] = {}
        for other in beaten[winner]:
            by_year.setdefault(year[other], []).append(other)
        others = [rng.choice(by_year[y]) for y in rng.sample(sorted(by_year), m - 1)]  # distinct years
        ends = [winner, *others]
        ends = [ends[k] for k in rng.shuffled(list(range(m)))]
        branches = _branches_to(kb, ends, [hops - 1 for hops in lengths], rng, set())
        if branches is None:
            continue
        return Question(tuple(branches), Join("compare", relation, None, direction, winner))
    raise ValueError(f"join: no compare question of shape {list(lengths)} after {MAX_ATTEMPTS} tries; allowed: "
                     "fewer branches, or a longer context")


def sample_count(kb: KnowledgeBase, lengths: Sequence[int], rng: StableRng, wanted: int) -> Question:
    """Branches of ``lengths`` lookups (the city lookup included) ending at people, of whom ``wanted`` mod
    (the most possible + 1) have the named city as their value: every count from 0 up comes round equally."""
    m = len(lengths)
    for _ in range(MAX_ATTEMPTS):
        relation = rng.choice(sorted(COUNT_RELATIONS))
        city = rng.choice(kb.of_type(BY_ID[relation].target))
        natives = list(kb.sources(relation, city))
        others = [e for e in kb.of_type(BY_ID[relation].source) if kb.value(relation, e) != city]
        count = wanted % (min(m, len(natives)) + 1)
        if len(others) < m - count:
            continue
        chosen = rng.sample(natives, count) + rng.sample(others, m - count)
        ends = [chosen[k] for k in rng.shuffled(list(range(m)))]
        branches = _branches_to(kb, ends, [hops - 1 for hops in lengths], rng, {city})
        if branches is None:
            continue
        return Question(tuple(branches), Join("count", relation, city, None, count))
    raise ValueError(f"join: no count question of shape {list(lengths)} after {MAX_ATTEMPTS} tries; allowed: "
                     "fewer branches, or a longer context")


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
