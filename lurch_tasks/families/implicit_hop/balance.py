"""The join's values of a hop's competitor ends, so that a relation-blind walk's join says nothing.

A comparison or a count takes one more step over the chains' ends: a year, or a city. The chain's last entity hop
has ``competitors_per_hop`` same-signature competitors, whose values (the *competitor ends*) are entities of the
answer's type, and their join facts are in the context (``competitors.neighbour_keys``). Left as the knowledge base
drew them, those values gave the answer away to a reader who never reads a relation:

* compare: the winner is the extreme of the chains' ends, and a competitor end's year is a random one, so the
  extreme year among every end a type-consistent walk reaches is the winner one time in four (the gold ends'
  share of the reached ends), far above picking among the dated entities (``reachable_extreme_year``).
* count: a competitor end is almost never a native of the named city, so a walk that lands on one counts 0
  and a count of 0 is always right for it.

Here, per instance and seeded, the competitor ends' join values are redrawn (the knowledge base is the
instance's own): compare, the number of competitor ends more extreme than the winner is uniform from 0 to all of
them, so the winner's rank among the ends a blind walk reaches is uniform over the ranks it can have; count,
every chain's options (its gold end and its competitor ends) hold the same seeded number of natives whether the
gold end is one or not, so the option a walk takes is a native one time in two, whatever the gold. The gold
ends' own values never change, nor does any entity the question passes through.
"""

from __future__ import annotations

from ...core.rng import StableRng
from .competitors import same_signature
from .kb import YEAR_RANGES, Fact, KnowledgeBase
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


def _with_values(kb: KnowledgeBase, relation: str, values: dict[int, int]) -> KnowledgeBase:
    """The knowledge base with ``relation``'s value of each entity in ``values`` replaced (phrasing kept)."""
    facts = tuple(Fact(f.relation, f.source, values[f.source], f.phrasing)
                  if f.relation == relation and f.source in values else f for f in kb.facts)
    return KnowledgeBase(kb.names, kb.types, facts)


def balance_compare(kb: KnowledgeBase, question: Question, decoys: list[Fact],
                    rng: StableRng) -> tuple[KnowledgeBase, dict]:
    """Competitor ends' years: a seeded number ``beyond`` (uniform over 0 .. all of them, as far as the year
    range allows) lie beyond the winner's year in the asked direction, the others behind it; each year uniform
    in its side of the range, never the winner's. Returns the knowledge base and the record of the draw."""
    join = question.join
    ends = sorted({e for chain in competitor_ends(question, decoys) for e in chain})
    if not ends:
        return kb, {"beyond": 0, "years": {}}
    low, high = YEAR_RANGES[BY_ID[join.relation].source]
    winner = kb.value(join.relation, join.answer)
    ahead, behind = ((low, winner - 1), (winner + 1, high)) if join.direction == "earliest" else (
        (winner + 1, high), (low, winner - 1))
    room = max(ahead[1] - ahead[0] + 1, 0)
    beyond = rng.below(len(ends) + 1) if room else 0
    chosen = set(rng.sample(ends, beyond))
    years = {e: rng.integer(*(ahead if e in chosen else behind)) for e in ends}
    record = {"beyond": beyond, "years": {kb.names[e]: y for e, y in years.items()}}
    return _with_values(kb, join.relation, years), record


def balance_count(kb: KnowledgeBase, question: Question, decoys: list[Fact],
                  rng: StableRng) -> tuple[KnowledgeBase, dict]:
    """Competitor ends' cities: per chain, a seeded number ``natives`` (1 .. the competitor ends) of its
    options (gold end and competitor ends) live in / were born in the named city, the gold end counted as it
    is; a competitor end made a native or not gets the city or another seeded city none of its other city
    relations names (the relations of one signature never share a value). Returns the knowledge base and the
    record of the draw."""
    join = question.join
    siblings = same_signature(join.relation)
    cities = kb.of_type(BY_ID[join.relation].target)
    values: dict[int, int] = {}
    record = []
    for branch, ends in zip(question.branches, competitor_ends(question, decoys), strict=True):
        ends = [e for e in ends if e not in values]
        if not ends:
            record.append(None)
            continue
        gold = int(kb.value(join.relation, branch.answer) == join.target)
        wanted = 1 + rng.below(len(ends))
        # an end whose other city relation names the city cannot be a native by this one
        free = [e for e in ends if all(kb.value(s, e) != join.target for s in siblings)]
        natives = set(rng.sample(free, min(max(wanted - gold, 0), len(free))))
        for e in ends:
            if e in natives:
                values[e] = join.target
            elif kb.value(join.relation, e) == join.target:
                taken = {join.target} | {kb.value(s, e) for s in siblings}
                values[e] = rng.choice([c for c in cities if c not in taken])
        record.append({"natives": wanted, "made": sorted(kb.names[e] for e in natives)})
    return _with_values(kb, join.relation, values), {"chains": record}
