"""A seeded knowledge base: invented entities of every type, one value for each of their relations, and one
sentence per fact.

Values are a balanced assignment: for every relation, each entity of the target type is the value of the
same number of sources (give or take one), so no entity is named more often than its peers because of the
draw, and a walk along relations does not favour any entity (a question's answer is no more frequent in
the context than any other candidate of its type). Years repeat; comparisons pick entities whose years
differ.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from string import Formatter
from typing import NamedTuple

from ...core.names import NameMaker
from ...core.rng import StableRng, derive_seed
from .schema import BY_ID, ENTITY_TYPES, RELATIONS, YEAR, Relation

YEAR_RANGES = {"person": (1890, 2005), "organisation": (1700, 2010)}
MIN_PEOPLE = 12  # the smallest knowledge base still holds eight-hop chains of distinct entities


class Fact(NamedTuple):
    """One (relation, source) and its value: a named tuple, as a knowledge base builds hundreds per instance (a
    frozen dataclass sets each field through ``object.__setattr__``)."""

    relation: str
    source: int  # entity id
    target: int  # entity id, or the year itself for a year relation
    phrasing: int  # index into the relation's sentence templates

    def key(self) -> tuple[str, int]:
        return self.relation, self.source


@dataclass(frozen=True)
class KnowledgeBase:
    names: tuple[str, ...]  # entity id -> name
    types: tuple[str, ...]  # entity id -> type
    facts: tuple[Fact, ...]  # every (relation, source) once, in a seeded order

    def value(self, relation: str, source: int) -> int:
        return self.by_key[(relation, source)].target

    @property
    def by_key(self) -> dict[tuple[str, int], Fact]:
        cached = self.__dict__.get("_by_key")
        if cached is None:
            cached = {(fact.relation, fact.source): fact for fact in self.facts}  # fact.key(), without the calls
            object.__setattr__(self, "_by_key", cached)
        return cached

    def sources(self, relation: str, target: int) -> tuple[int, ...]:
        """Every entity whose ``relation`` is ``target`` (ascending ids): the way back along a relation."""
        cached = self.__dict__.get("_sources")
        if cached is None:
            cached = {}
            for fact in sorted(self.facts, key=lambda f: f.source):
                cached.setdefault((fact.relation, fact.target), []).append(fact.source)
            cached = {key: tuple(value) for key, value in cached.items()}
            object.__setattr__(self, "_sources", cached)
        return cached.get((relation, target), ())

    def of_type(self, entity_type: str) -> list[int]:
        return [i for i, t in enumerate(self.types) if t == entity_type]


def type_counts(people: int) -> dict[str, int]:
    """Entities per type for a knowledge base with ``people`` people (the other types scale with it)."""
    # At least 10 of every type: an answer's type never leaves only a handful of candidates to guess from.
    return {"person": people, "organisation": max(10, people // 3), "city": max(10, people // 3),
            "region": max(10, people // 12), "artefact": max(10, people // 2)}


def facts_per_person(years: bool = True) -> float:
    """Facts per person of a large knowledge base (for sizing it to a token budget); ``years``: year facts
    counted too (only a comparison puts them in the context)."""
    counts = type_counts(1200)
    return sum(counts[r.source] for r in RELATIONS if years or r.target != YEAR) / counts["person"]


def build_kb(people: int, seed: int) -> KnowledgeBase:
    """The knowledge base with ``people`` people (and the other types in proportion) for ``seed``."""
    counts = type_counts(max(people, MIN_PEOPLE))
    maker = NameMaker(StableRng(derive_seed("implicit-hop-names", seed)))
    names: list[str] = []
    types: list[str] = []
    for entity_type in ENTITY_TYPES:
        for _ in range(counts[entity_type]):
            names.append(maker.name(entity_type))
            types.append(entity_type)
    ids = {t: [i for i, x in enumerate(types) if x == t] for t in ENTITY_TYPES}
    rng = StableRng(derive_seed("implicit-hop-values", seed))
    values: dict[tuple[str, int], int] = {}
    for relation in RELATIONS:
        values.update(_assign(relation, ids, values, rng))
    phrasings = {relation.id: len(relation.facts) for relation in RELATIONS}
    draws = rng.below_each([phrasings[r] for r, _ in values])
    # tuple.__new__ in C: a named tuple's own __new__ is a Python function, called once per fact
    new = tuple.__new__
    facts = [new(Fact, (r, s, t, phrasing)) for ((r, s), t), phrasing in zip(values.items(), draws, strict=True)]
    return KnowledgeBase(tuple(names), tuple(types), tuple(rng.shuffled(facts)))


def _relation(relation_id: str) -> Relation:
    return BY_ID[relation_id]


@cache
def _siblings(relation_id: str) -> tuple[str, ...]:
    """The other relations of the same signature (source and target types), in schema order."""
    relation = BY_ID[relation_id]
    return tuple(r.id for r in RELATIONS if r.id != relation.id and (r.source, r.target) == (relation.source,
                                                                                            relation.target))


def _assign(relation: Relation, ids: dict[str, list[int]], values: dict[tuple[str, int], int],
            rng: StableRng) -> dict[tuple[str, int], int]:
    """A balanced value for every source of ``relation``: targets are dealt from a shuffled deck holding
    each target equally often; a source may not be its own value, nor the value of another relation of the same
    signature (a rival is not the mentor, a former employer not the employer): a hop's competitor leads
    elsewhere."""
    sources = ids[relation.source]
    if relation.target == YEAR:
        return {(relation.id, s): rng.integer(*YEAR_RANGES[relation.source]) for s in sources}
    targets = ids[relation.target]
    deck = rng.shuffled([targets[i % len(targets)] for i in range(len(sources))])
    out: dict[tuple[str, int], int] = {}
    siblings = _siblings(relation.id)

    def banned_for(source: int) -> set[int]:
        banned = {source}
        for other in siblings:
            value = values.get((other, source))
            if value is not None:
                banned.add(value)
        return banned

    # the values of the siblings dealt already, per source in ``sources`` order: a card's clash is read off them
    # without building every source's banned set (a sibling deals every source at once, or none yet)
    columns = [[values[(other, s)] for s in sources] for other in siblings if sources and (other, sources[0]) in values]
    for position, source in enumerate(sources):
        card = deck[position]
        clash = card == source
        for column in columns:
            clash = clash or column[position] == card
        if clash:  # swap with a later card that fits here and whose source accepts ours
            banned = banned_for(source)
            for later in range(position + 1, len(deck)):
                # ``banned_for(sources[later])`` read off the columns: no set built per later card
                other = sources[later]
                if deck[later] not in banned and card != other and all(column[later] != card for column in columns):
                    deck[position], deck[later] = deck[later], deck[position]
                    break
            else:  # no later card fits: take any allowed target (the deck stays balanced up to one)
                deck[position] = rng.choice([t for t in targets if t not in banned])
        out[(relation.id, source)] = deck[position]
    return out


def render_fact(kb: KnowledgeBase, fact: Fact) -> str:
    """The fact as one sentence, capitalised (a name may be the sentence's first word)."""
    relation = _relation(fact.relation)
    target = str(fact.target) if relation.target == YEAR else kb.names[fact.target]
    text = relation.facts[fact.phrasing].format(s=kb.names[fact.source], t=target)
    return text[0].upper() + text[1:]


def render_facts(kb: KnowledgeBase, facts: list[Fact]) -> list[str]:
    """``render_fact`` of every fact, for a whole context at once: each template made once into a ``%`` format of
    its two values (its first letter capitalised already), a sentence then one C call."""
    formats = _formats()
    names, out = kb.names, []
    append = out.append
    for relation, source, target, phrasing in facts:
        form, source_first, dated, opened = formats[relation][phrasing]
        source, target = names[source], target if dated else names[target]
        text = form % ((source, target) if source_first else (target, source))
        if opened and not "A" <= text[0] <= "Z":  # a value first: capitalised
            text = text[0].upper() + text[1:]
        append(text)
    return out


@cache
def _formats() -> dict[str, list[tuple[str, bool, bool, bool]]]:
    """Per relation, per phrasing: (the template as a ``%`` format of its two values in line order, whether the
    source comes first, whether the target is a year, whether a value opens the line), built once per process."""
    formats: dict[str, list[tuple[str, bool, bool, bool]]] = {}
    for relation in RELATIONS:
        formats[relation.id] = []
        for template in relation.facts:
            first, field_1, middle, _, last = _split_template(template)
            if first and not "A" <= first[0] <= "Z":  # as ``render_fact`` capitalises a line's first letter
                first = first[0].upper() + first[1:]
            form = "%s".join(part.replace("%", "%%") for part in (first, middle, last))
            formats[relation.id].append((form, field_1 == "s", relation.target == YEAR, not first))
    return formats


@cache
def _split_template(template: str) -> tuple[str, str, str, str, str]:
    """(literal, field, literal, field, literal) of a template with the fields ``{s}`` and ``{t}`` once each
    (every relation's are: ``schema``), as ``str.format`` reads it."""
    parsed = list(Formatter().parse(template))
    fields = [(text, field) for text, field, spec, conversion in parsed if field is not None and not spec
              and not conversion]
    tail = "".join(text for text, field, _, _ in parsed if field is None)
    if len(parsed) - (tail != "") != 2 or sorted(field for _, field in fields) != ["s", "t"]:
        raise ValueError(f"fact template {template!r}: allowed: the fields {{s}} and {{t}} once each")
    (first, field_1), (middle, field_2) = fields
    return first, field_1, middle, field_2, tail
