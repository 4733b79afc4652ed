"""A count's cities, so that a relation-blind reading of the count says nothing.

A count takes one more step over the chains' ends: "how many of them live in <city>?". Left as the knowledge
base drew them, the cities gave the count away to a reader who never reads which relation a line states:

* the join's own lookup: a person has four city relations (born in, lives in, studied in, holidays in), the
  relations of one signature never share a value, and the named city is rarely any of them by chance; so
  "the items with a line linking them to the city" were almost exactly the ones counted (at depth 2, where every
  item is named, the whole answer);
* the chain's last hop: its competitor ends (the values of the last bridge's other same-signature facts) were
  almost never natives of the city, so a walk that landed on one counted 0, and a count of 0 was always right.

Here, per instance and seeded (the knowledge base is the instance's own), every end the count can reach holds
one line to the named city: a gold end not counted gets one of its join competitors (drawn in the context) set
to the city; and every chain's options (gold end and competitor ends) hold the same seeded number of natives
whether the gold end is one or not, each competitor end with exactly one line to the city too. A reader who
does not read relations then sees the same thing on every item. The gold ends' join values never change (the
answer is the knowledge base's), nor does any fact of an entity the question passes through but the competitor
relations of its ends.
"""

from __future__ import annotations

from ...core.rng import StableRng
from .competitors import same_signature
from .kb import Fact, KnowledgeBase
from .questions import Question
from .schema import BY_ID


def competitor_ends(question: Question, decoys: list[Fact]) -> list[list[int]]:
    """Per chain, the values of its last entity hop's competitors in the context (none for a chain without an
    entity hop), entities of the question left out (their values are the question's own)."""
    present = {fact.key(): fact.target for fact in decoys}
    fixed = {e for branch in question.branches for e in branch.entities}
    out = []
    for branch in question.branches:
        if not branch.relations:
            out.append([])
            continue
        subject = branch.entities[-2]
        ends = [present[(other, subject)] for other in same_signature(branch.relations[-1])
                if (other, subject) in present]
        out.append([e for e in ends if e not in fixed])
    return out


def _with_values(kb: KnowledgeBase, values: dict[tuple[str, int], int]) -> KnowledgeBase:
    """The knowledge base with the value of each (relation, source) in ``values`` replaced (phrasing kept)."""
    facts = tuple(Fact(f.relation, f.source, values[f.key()], f.phrasing) if f.key() in values else f
                  for f in kb.facts)
    return KnowledgeBase(kb.names, kb.types, facts)


def balance_count(kb: KnowledgeBase, question: Question, decoys: list[Fact],
                  rng: StableRng) -> tuple[KnowledgeBase, dict]:
    """The knowledge base with the count's cities balanced (module docstring), and the record of the draws:
    per chain the natives wanted among its options and the competitor ends made natives, and the ends whose
    join competitor was set to the city."""
    join = question.join
    city, relations = join.target, (join.relation, *same_signature(join.relation))
    cities = kb.of_type(BY_ID[join.relation].target)
    drawn = {fact.key() for fact in decoys}
    values: dict[tuple[str, int], int] = {}

    def value(relation: str, entity: int) -> int:
        return values.get((relation, entity), kb.value(relation, entity))

    def link(entity: int, choices: list[str]) -> str | None:
        """One of ``choices`` (competitor relations of the join) set to the city, unless one already names it."""
        if any(value(r, entity) == city for r in relations) or not choices:
            return None
        chosen = rng.choice(choices)
        values[(chosen, entity)] = city
        return kb.names[entity]

    linked = [link(b.answer, [r for r in same_signature(join.relation) if (r, b.answer) in drawn])
              for b in question.branches if kb.value(join.relation, b.answer) != city]
    chains, seen = [], set()
    for branch, ends in zip(question.branches, competitor_ends(question, decoys), strict=True):
        ends = [e for e in ends if e not in seen]
        seen.update(ends)
        if not ends:
            chains.append(None)
            continue
        wanted = 1 + rng.below(len(ends))  # natives among the options, whatever the gold end is
        natives = set(rng.sample(ends, max(wanted - int(kb.value(join.relation, branch.answer) == city), 0)))
        for e in ends:
            if e in natives:  # the join names the city; another relation that named it gets another city
                for r in same_signature(join.relation):
                    if value(r, e) == city:
                        values[(r, e)] = _other_city(kb, e, relations, city, cities, value, rng)
                values[(join.relation, e)] = city
            else:
                if value(join.relation, e) == city:
                    values[(join.relation, e)] = _other_city(kb, e, relations, city, cities, value, rng)
                link(e, list(same_signature(join.relation)))
        chains.append({"natives": wanted, "made": sorted(kb.names[e] for e in natives)})
    record = {"linked": sorted(name for name in linked if name), "chains": chains}
    return _with_values(kb, values), record


def _other_city(kb: KnowledgeBase, entity: int, relations: tuple[str, ...], city: int, cities: list[int], value,
                rng: StableRng) -> int:
    """A seeded city none of the entity's city relations names (they never share a value), not the named one."""
    taken = {city} | {value(r, entity) for r in relations}
    return rng.choice([c for c in cities if c not in taken])
