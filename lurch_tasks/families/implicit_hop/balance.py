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


# --- a comparison's years -------------------------------------------------------------------------------------
# A comparison asks which of the chains' ends was born / founded earliest (or latest). Left as the knowledge base
# drew them (0.4.0), the years told a reader who never reads relations where the answer was (measured on
# ``implicit_hop_compare``, the learned probe 0.16-0.20 against a chance of 0.07-0.11):
#
# * who is dated: the ends and their competitor ends (the values of the last bridge's other same-signature facts,
#   whose year lines fit first) always, other people or organisations one time in four, and those others, which a
#   walk from the starts rarely reaches, were never the answer;
# * the years: the answer beats the other ends, drawn among the entities it beats, so among every dated entity its
#   year stood near the asked extreme and the other ends' near the opposite one.
#
# Here, per instance and seeded, exactly the entities a relation-blind reader would consider are dated: every
# chain's *options*, its end and the values of its last bridge's competitor facts. Their years are drawn afresh,
# distinct, from the knowledge base's range: the answer at a seeded rank among them, uniform over every rank it
# can hold (it beats the other ends, so not the last ones), the other ends at seeded ranks behind it, the
# competitor ends on the ranks left. Which dated entity is the answer is then as likely at any rank a winner can
# hold: picking the most extreme year is right one time in (dated - ends + 1), against one in (dated) for a
# uniform guess among the dated.
#
# Not closed: a reader who knew every chain's options (not which one is the end) could weigh an option x by the
# other chains' options behind it. Drawing orders so that every possible answer is equally likely given the
# options (an order kept with probability 1 / the number of end choices that make x the answer) was tried: in
# these small knowledge bases the chains share options, few are eligible, and the most extreme year alone then
# scored chance + 0.085 on 720 rows (this draw: + 0.029).


def compare_options(question: Question, decoys: list[Fact]) -> list[list[int]]:
    """Per chain, its options: its end first, then the values of its last bridge's competitor facts in the
    context (a bridge among them too: its year is none of the comparison's; a start never, the question names it)."""
    present = {fact.key(): fact.target for fact in decoys}
    starts = {branch.start for branch in question.branches}
    out = []
    for branch in question.branches:
        subject = branch.entities[-2]
        found = [present[(other, subject)] for other in same_signature(branch.relations[-1])
                 if (other, subject) in present]
        out.append([branch.answer, *(e for e in found if e not in starts and e != branch.answer)])
    return out


def compare_dated(question: Question, decoys: list[Fact]) -> list[int]:
    """Every option of every chain once (chain order): the entities whose years a comparison puts in the context."""
    out: list[int] = []
    for options in compare_options(question, decoys):
        out += [e for e in options if e not in out]
    return out


def balance_compare(kb: KnowledgeBase, question: Question, decoys: list[Fact],
                    rng: StableRng) -> tuple[KnowledgeBase, dict]:
    """The knowledge base with the dated entities' years redrawn (see above), and the record of the draw: the
    answer's rank among the dated (0 = the asked extreme) and how many are dated."""
    join = question.join
    dated = compare_dated(question, decoys)
    ends = [branch.answer for branch in question.branches]
    low, high = YEAR_RANGES[BY_ID[join.relation].source]
    years = sorted(rng.sample(range(low, high + 1), len(dated)), reverse=join.direction == "latest")  # extreme first
    rank = rng.below(len(dated) - len(ends) + 1)  # the answer beats the other ends: every rank with room behind
    behind = sorted(rng.sample(range(rank + 1, len(dated)), len(ends) - 1))
    rest = rng.shuffled([k for k in range(len(dated)) if k != rank and k not in behind])
    losers = rng.shuffled([e for e in ends if e != join.answer])
    others = [e for e in dated if e not in ends]
    values = {(join.relation, join.answer): years[rank]}
    values.update({(join.relation, e): years[k] for e, k in zip(losers, behind, strict=True)})
    values.update({(join.relation, e): years[k] for e, k in zip(others, rest, strict=True)})
    return _with_values(kb, values), {"rank": rank, "dated": len(dated)}
