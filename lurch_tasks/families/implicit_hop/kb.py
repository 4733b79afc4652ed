"""A seeded knowledge base: invented entities of every type and one value for each of their relations.

Values are drawn uniformly among the entities of the target type (a person's mentor and rival are other
people, and differ), so every entity is the value of several facts and no entity stands out by how often
it is named. Years repeat; a comparison question picks entities whose years differ.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.rng import StableRng, derive_seed
from .names import NameMaker
from .schema import ENTITY_TYPES, RELATIONS, YEAR, Relation

YEAR_RANGES = {"person": (1890, 2005), "organisation": (1700, 2010)}


@dataclass(frozen=True)
class Fact:
    relation: str
    source: int  # entity id
    target: int  # entity id, or the year itself for a year relation


@dataclass(frozen=True)
class KnowledgeBase:
    names: tuple[str, ...]  # entity id -> name
    types: tuple[str, ...]  # entity id -> type
    values: dict[tuple[str, int], int]  # (relation id, source id) -> target id or year
    facts: tuple[Fact, ...]  # every (relation, source, value), in a seeded order

    def of_type(self, entity_type: str) -> list[int]:
        return [i for i, t in enumerate(self.types) if t == entity_type]

    def value(self, relation: str, source: int) -> int:
        return self.values[(relation, source)]


def type_counts(people: int) -> dict[str, int]:
    """Entities per type for a knowledge base with ``people`` people (the other types scale with it)."""
    return {"person": people, "organisation": max(4, people // 3), "city": max(4, people // 3),
            "region": max(3, people // 12), "artefact": max(3, people // 2)}


def build_kb(people: int, seed: int) -> KnowledgeBase:
    counts = type_counts(people)
    names_rng = NameMaker(StableRng(derive_seed("implicit-hop-names", seed, people)))
    names: list[str] = []
    types: list[str] = []
    for entity_type in ENTITY_TYPES:
        for _ in range(counts[entity_type]):
            names.append(names_rng.name(entity_type))
            types.append(entity_type)
    ids = {t: [i for i, x in enumerate(types) if x == t] for t in ENTITY_TYPES}
    rng = StableRng(derive_seed("implicit-hop-values", seed, people))
    values: dict[tuple[str, int], int] = {}
    for relation in RELATIONS:
        for source in ids[relation.source]:
            values[(relation.id, source)] = _draw(relation, source, ids, values, rng)
    facts = [Fact(r, s, t) for (r, s), t in values.items()]
    return KnowledgeBase(tuple(names), tuple(types), values, tuple(rng.shuffled(facts)))


def _draw(relation: Relation, source: int, ids: dict[str, list[int]], values: dict[tuple[str, int], int],
          rng: StableRng) -> int:
    if relation.target == YEAR:
        return rng.integer(*YEAR_RANGES[relation.source])
    taken = {source} | ({values[("mentor", source)]} if relation.id == "rival" else set())
    choices = [e for e in ids[relation.target] if e not in taken]
    return rng.choice(choices)
