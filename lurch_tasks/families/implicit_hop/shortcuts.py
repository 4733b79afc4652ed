"""Shortcut strategies for ImplicitHop: answer each question without following its chain.

Every strategy reads only the prompt: the fact lines (parsed with the generator's templates, so an attacker
knows every entity's type) and the questions (start entity and relation path). For each question it picks a
candidate of the answer's type: by position (first or last mentioned), by frequency, by name length, by
closeness to the start entity's first mention, or by the one-hop answer (only the last relation, applied to
the start entity).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from ...core.probe import (
    Candidate,
    LearnedProbe,
    ProbeItem,
    mention_positions,
    nearest_distance,
    rank_features,
    top_answer,
    word_overlap,
)
from ...core.rng import StableRng, derive_seed
from ...core.shortcuts import Probe, Shortcut
from ...scoring.not_found import NOT_FOUND
from .baselines import Asked, asked, fact_patterns, facts_in_order, follow, join_answer, match_fact
from .competitors import same_signature
from .schema import BY_ID, YEAR


@dataclass(frozen=True)
class View:
    mentions: tuple[tuple[str, str], ...]  # (name, type) in context order, two per fact line (one for a year)
    lines: tuple[int, ...]  # the fact line of every mention
    facts: dict[tuple[str, str], str]  # (relation, source) -> value
    asked: Asked | None
    ordered: tuple[tuple[str, str, str], ...]  # (relation, source, value) of every fact line, in context order
    types: dict[str, str]  # name -> entity type (a name's look tells it: "... Holdings", "... Province")
    out: dict[str, tuple[tuple[int, str], ...]]  # name -> (fact line, entity) of the lines it is the subject of


@lru_cache(maxsize=8)
def view(prompt: str) -> View:
    mentions: list[tuple[str, str]] = []
    lines: list[int] = []
    facts = {}
    ordered = tuple(facts_in_order(prompt))
    for k, (relation, source, value) in enumerate(ordered):
        spec = BY_ID[relation]
        mentions.append((source, spec.source))
        lines.append(k)
        if spec.target != YEAR:
            mentions.append((value, spec.target))
            lines.append(k)
        facts[(relation, source)] = value
    types = {name: kind for name, kind in mentions}
    out: dict[str, list[tuple[int, str]]] = {}
    for k, (relation, source, value) in enumerate(ordered):
        if BY_ID[relation].target != YEAR:
            out.setdefault(source, []).append((k, value))
    return View(tuple(mentions), tuple(lines), facts, asked(prompt), ordered, types,
                {name: tuple(links) for name, links in out.items()})


@dataclass(frozen=True)
class Target:
    """What one pick must name: an entity of ``kind``, near the ``starts`` (never one of them)."""

    kind: str
    starts: tuple[str, ...]


def _targets(v: View) -> list[Target | None]:
    """A target per answer: one per list question, one for a whole comparison, none for a count."""
    if v.asked is None:
        return []
    if v.asked.join[0] == "list":
        return [Target(BY_ID[c[1][-1]].target, (c[0],)) if c and c[1] else None for c in v.asked.chains]
    if v.asked.join[0] == "compare":
        starts = tuple(c[0] for c in v.asked.chains if c)
        return [Target(BY_ID[v.asked.join[1]].source, starts)]
    return []


def _per_target(pick):
    """A strategy from ``pick(view, target) -> name or None``, naming an entity for every answer."""
    def answer(prompt: str, _: object) -> str:
        v = view(prompt)
        return "FINAL ANSWER: " + "; ".join((pick(v, t) or "") if t else "" for t in _targets(v))
    return answer


def _candidates(v: View, target: Target) -> list[tuple[int, str]]:
    """(mention position, name) of every mention of an entity of the target's type, other than a start."""
    return [(i, name) for i, (name, kind) in enumerate(v.mentions) if kind == target.kind and name not in target.starts]


def _first(v: View, target: Target) -> str | None:
    found = _candidates(v, target)
    return found[0][1] if found else None


def _last(v: View, target: Target) -> str | None:
    found = _candidates(v, target)
    return found[-1][1] if found else None


def _most_frequent(v: View, target: Target) -> str | None:
    counts = Counter(name for _, name in _candidates(v, target))
    return max(sorted(counts), key=lambda name: counts[name]) if counts else None


def _by_length(longest: bool):
    def pick(v: View, target: Target) -> str | None:
        names = sorted({name for _, name in _candidates(v, target)})
        return (max if longest else min)(names, key=len) if names else None
    return pick


def _nearest_start(v: View, target: Target) -> str | None:
    """The candidate mentioned closest to a start entity's first mention (ties: the earlier)."""
    firsts = [next((i for i, (name, _) in enumerate(v.mentions) if name == start), None) for start in target.starts]
    firsts = [i for i in firsts if i is not None]
    found = _candidates(v, target)
    if not firsts or not found:
        return None
    return min(found, key=lambda item: (min(abs(item[0] - k) for k in firsts), item[0]))[1]


def _nearest_any_mention(v: View, target: Target) -> str | None:
    """The candidate mentioned closest to any mention of a start entity, outside the starts' own fact lines
    (reading a line that names the start is a lookup, the reasoning itself on a one-step chain)."""
    starts = [i for i, (name, _) in enumerate(v.mentions) if name in target.starts]
    own_lines = {v.lines[i] for i in starts}
    found = [(i, name) for i, name in _candidates(v, target) if v.lines[i] not in own_lines]
    if not starts or not found:
        return None
    return min(found, key=lambda item: (min(abs(item[0] - k) for k in starts), item[0]))[1]


def _one_hop(prompt: str, _: object) -> str:
    """Only the last relation of every chain, applied straight to its start (a chain read as if it had one
    step), then the join. A chain of one step is the reasoning itself: a list question abstains on it, a
    joined question abstains as a whole."""
    v = view(prompt)
    if v.asked is None:
        return ""
    shortened = [(c[0], c[1][-1:]) if c and len(c[1]) > 1 else None for c in v.asked.chains]
    if v.asked.join[0] == "list":
        return "FINAL ANSWER: " + "; ".join(follow(v.facts, c) or "" for c in shortened)
    answer = join_answer(v.facts, [follow(v.facts, c) for c in shortened], v.asked.join)
    return "" if answer is None else f"FINAL ANSWER: {answer}"


def _extreme_year(prompt: str, _: object) -> str:
    """A comparison answered by the earliest / latest year of the compared kind anywhere in the context."""
    v = view(prompt)
    if v.asked is None or v.asked.join[0] != "compare":
        return ""
    _, relation, direction = v.asked.join
    dated = sorted((int(value), source) for (r, source), value in v.facts.items() if r == relation)
    if not dated:
        return ""
    return f"FINAL ANSWER: {(dated[0] if direction == 'earliest' else dated[-1])[1]}"


def _constant_count(prompt: str, count: int) -> str:
    """A count answered by one fixed number, whatever the question."""
    v = view(prompt)
    return f"FINAL ANSWER: {count}" if v.asked is not None and v.asked.join[0] == "count" else ""


def _city_share(prompt: str, share: float) -> str:
    """A count read off how many people in the whole context the city relation leads to the named city, as
    a share of the chains (the city's population, not the chains' ends)."""
    v = view(prompt)
    if v.asked is None or v.asked.join[0] != "count":
        return ""
    _, relation, city = v.asked.join
    natives = sum(1 for (r, _), value in v.facts.items() if r == relation and value == city)
    return f"FINAL ANSWER: {min(len(v.asked.chains), round(natives * share))}"


# Relation-blind walks (issue 27): the question's relations are read only for the entity TYPE each hop arrives
# at ("the birthplace of" -> a city); the fact lines only for which entities they link, never for which
# relation a line states. A hop with no other fact of its (source type -> target type) signature from the
# bridge is then answered without reading the relation, and a walk that lands on the answer says so.
WALK_CHOICES = ("first", "last", "random", "most_mentioned", "nearest_previous", "most_paths")


def _links(v: View, current: str, kind: str) -> list[tuple[int, str]]:
    """(fact line, entity) of every line whose subject is ``current`` and whose other entity is of type
    ``kind``: the sentence's direction as a parser of the templates sees it, never its relation. (Links
    taken either way round were measured weaker, so the audit leaves them out.)"""
    return [(k, value) for k, value in v.out.get(current, ()) if v.types.get(value) == kind]


def _choose(v: View, links: list[tuple[int, str]], choice: str, previous: int, rng: StableRng) -> tuple[int, str]:
    if choice == "first":
        return links[0]
    if choice == "last":
        return links[-1]
    if choice == "random":
        return links[rng.below(len(links))]
    if choice == "nearest_previous":  # the line nearest the previous hop's (ties: the earlier)
        return min(links, key=lambda link: (abs(link[0] - previous), link[0]))
    counts = Counter(name for name, _ in v.mentions)
    return max(links, key=lambda link: (counts[link[1]], -link[0]))  # most mentioned; ties: the earlier line


def blind_walk(v: View, chain, choice: str, seed: int) -> str | None:
    """Where a chain lands when every hop takes a fact from the current entity to an entity of the hop's
    target type, whatever relation the fact states: among several, ``choice`` picks one (those that lead on
    to the next hop's type first; never back to an entity the walk has passed). None where no fact goes on."""
    if chain is None:
        return None
    current, relations = chain
    if choice == "most_paths":
        return _most_paths(v, current, relations)
    kinds = [BY_ID[relation].target for relation in relations]
    passed, previous = {current}, next((v.lines[i] for i, (name, _) in enumerate(v.mentions) if name == current), 0)
    for hop, kind in enumerate(kinds):
        links = [link for link in _links(v, current, kind) if link[1] not in passed]
        going_on = [link for link in links if hop + 1 == len(kinds) or _links(v, link[1], kinds[hop + 1])]
        links = going_on or links
        if not links:
            return None
        previous, current = _choose(v, links, choice, previous, StableRng(derive_seed("implicit-hop-walk", seed, hop)))
        passed.add(current)
    return current


def walk_counts(v: View, start: str, relations) -> dict[str, int]:
    """How many type-consistent walks from the start arrive at each entity after the chain's hops (each hop
    any link to the hop's target type, whatever its relation; never back to the start): the relation-blind
    reading of a chain, as a distribution. Dead ends drop out on their own."""
    ways = {start: 1}
    for relation in relations:
        arrived: dict[str, int] = {}
        for entity, count in ways.items():
            for _, name in _links(v, entity, BY_ID[relation].target):
                if name != start:
                    arrived[name] = arrived.get(name, 0) + count
        ways = arrived
    return ways


def _most_paths(v: View, start: str, relations) -> str | None:
    """The entity the most type-consistent walks from the start arrive at (ties: the earliest mentioned)."""
    ways = walk_counts(v, start, relations)
    if not ways:
        return None
    first = {name: i for i, (name, _) in reversed(list(enumerate(v.mentions)))}
    return max(sorted(ways), key=lambda name: (ways[name], -first.get(name, 0)))


def _prompt_seed(prompt: str) -> int:
    return derive_seed("implicit-hop-shortcut", prompt[-200:])


def _relation_blind_walk(prompt: str, choice: str) -> str:
    """Every chain walked blind to its relations; a list names the ends; a comparison or a count then takes
    its final step over the ends it reached (the year of each, the city of each), ends it could not reach
    left out. A joined question whose items are all named (a count at depth 2) abstains: with no hop to walk,
    reading the join's relation is the task itself."""
    v = view(prompt)
    if v.asked is None:
        return ""
    seed = _prompt_seed(prompt)
    ends = [blind_walk(v, chain, choice, derive_seed(seed, k)) for k, chain in enumerate(v.asked.chains)]
    if v.asked.join[0] == "list":
        return "FINAL ANSWER: " + "; ".join(end or "" for end in ends)
    if not any(chain and chain[1] for chain in v.asked.chains):
        return ""  # every item is named: no hop to walk blind, the join's lookup is the reasoning itself
    reached = [end for end in ends if end is not None]
    answer = join_answer(v.facts, reached, v.asked.join) if reached else None
    return "" if answer is None else f"FINAL ANSWER: {answer}"


def _always_not_found(prompt: str, _: object) -> str:
    """NOT FOUND for every question: a model that never commits to an answer."""
    v = view(prompt)
    questions = len(v.asked.chains) if v.asked is not None and v.asked.join[0] == "list" else 1
    return "FINAL ANSWER: " + "; ".join([NOT_FOUND] * questions)


def _thin_start(prompt: str, level: int) -> str:
    """NOT FOUND for a chain whose start has fewer lines of its first hop's signature than a hop's gold fact and
    ``level`` competitors make (a broken first hop would, were the left-out fact's place left empty); else the
    first-link relation-blind walk's end. The attacker knows the generator, so the level is a variant."""
    v = view(prompt)
    if v.asked is None or v.asked.join[0] != "list":
        return ""
    seed, answers = _prompt_seed(prompt), []
    for k, chain in enumerate(v.asked.chains):
        if not chain or not chain[1]:
            answers.append("")
            continue
        signature = {chain[1][0], *same_signature(chain[1][0])}
        lines = sum(1 for relation, source in v.facts if source == chain[0] and relation in signature)
        answers.append(NOT_FOUND if lines < level + 1 else blind_walk(v, chain, "first", derive_seed(seed, k)) or "")
    return "FINAL ANSWER: " + "; ".join(answers)


def linked_to(v: View, entity: str | None, city: str) -> bool:
    """Whether any fact line from the entity names the city, whatever its relation (a blind join)."""
    return entity is not None and any(value == city for _, value in v.out.get(entity, ()))


def _relation_blind_count(prompt: str, choice: str) -> str:
    """A count read blind to every relation, the join's own too: each chain walked by entity type (an item
    the question names is its own end), then how many ends any line links to the named city."""
    v = view(prompt)
    if v.asked is None or v.asked.join[0] != "count":
        return ""
    seed, city = _prompt_seed(prompt), v.asked.join[2]
    ends = [(blind_walk(v, chain, choice, derive_seed(seed, k)) if chain[1] else chain[0]) if chain else None
            for k, chain in enumerate(v.asked.chains)]
    return f"FINAL ANSWER: {sum(linked_to(v, end, city) for end in ends)}"


def _reachable_extreme_year(prompt: str, _: object) -> str:
    """A comparison answered by the earliest / latest year among every entity a type-consistent walk reaches
    from any start (the union of the relation-blind walks' ends, no choice among competitors): the extreme year
    narrowed by reach alone."""
    v = view(prompt)
    if v.asked is None or v.asked.join[0] != "compare":
        return ""
    _, relation, direction = v.asked.join
    reached = {end for chain in v.asked.chains if chain is not None for end in walk_counts(v, *chain)}
    dated = sorted((int(v.facts[(relation, end)]), end) for end in reached if (relation, end) in v.facts)
    if not dated:
        return ""
    return f"FINAL ANSWER: {(dated[0] if direction == 'earliest' else dated[-1])[1]}"


def nearest_last_relation(v: View, chain) -> str | None:
    """Dispersion's tell: the value of the line stating the chain's last relation that stands nearest the line
    of the start's first hop (other than the start's own lines; ties: the earlier line). A chain of one hop
    is the lookup itself: None."""
    if chain is None or len(chain[1]) < 2:
        return None
    start, relations = chain
    anchor = next((k for k, (r, source, _) in enumerate(v.ordered) if r == relations[0] and source == start), None)
    found = [(k, value) for k, (r, source, value) in enumerate(v.ordered) if r == relations[-1] and source != start]
    if anchor is None or not found:
        return None
    return min(found, key=lambda item: (abs(item[0] - anchor), item[0]))[1]


def _nearest_last_relation(prompt: str, _: object) -> str:
    """Every chain answered by :func:`nearest_last_relation`, then the join (a joined question abstains as a
    whole where a chain does)."""
    v = view(prompt)
    if v.asked is None:
        return ""
    ends = [nearest_last_relation(v, chain) for chain in v.asked.chains]
    if v.asked.join[0] == "list":
        return "FINAL ANSWER: " + "; ".join(end or "" for end in ends)
    answer = join_answer(v.facts, ends, v.asked.join)
    return "" if answer is None else f"FINAL ANSWER: {answer}"


SHORTCUTS = (
    # Answering NOT FOUND everywhere earns a config's share of broken rows: the share is kept below what a random
    # pick of an entity earns on the other rows (implicit_hop_broken: 1 in 8 against ~0.14), so it beats no chance.
    Shortcut("always_not_found", "frequency", "NOT FOUND for every question", _always_not_found),
    Shortcut("thin_start", "family", "NOT FOUND where a start has fewer lines of its first hop's signature than a "
             "gold fact and the level's competitors make (1-3), else the first-link relation-blind walk",
             _thin_start, variants=(1, 2, 3)),
    Shortcut("first_candidate", "position", "the first-mentioned entity of the answer's type",
             _per_target(_first)),
    Shortcut("last_candidate", "position", "the last-mentioned entity of the answer's type", _per_target(_last)),
    Shortcut("most_frequent", "frequency", "the most often mentioned entity of the answer's type",
             _per_target(_most_frequent)),
    Shortcut("longest_name", "length", "the entity of the answer's type with the longest name",
             _per_target(_by_length(True))),
    Shortcut("shortest_name", "length", "the entity of the answer's type with the shortest name",
             _per_target(_by_length(False))),
    Shortcut("nearest_start", "family", "the entity of the answer's type mentioned nearest a start entity",
             _per_target(_nearest_start)),
    Shortcut("nearest_any_mention", "family", "the entity of the answer's type mentioned nearest any mention of "
             "a start, outside the starts' own facts", _per_target(_nearest_any_mention)),
    Shortcut("one_hop", "family", "only the last relation of every chain, applied to its start", _one_hop),
    Shortcut("extreme_year", "family", "compare: the earliest / latest year of the compared kind in the whole "
             "context", _extreme_year),
    Shortcut("constant_count", "frequency", "count: one fixed number (the best of 0-8)", _constant_count,
             variants=tuple(range(9))),
    Shortcut("city_population", "family", "count: how many people in the context the relation leads to the city, "
             "times a share", _city_share, variants=(0.25, 0.5, 1.0)),
    Shortcut("relation_blind_walk", "family", "follow every chain by entity type only (each hop: a fact from the "
             "current entity to one of the hop's target type, whatever its relation; the first / last / a seeded / "
             "the most mentioned of several), then the join", _relation_blind_walk, variants=WALK_CHOICES),
    Shortcut("relation_blind_count", "family", "count: every chain walked by entity type, then how many ends any "
             "line links to the named city (the join's relation not read either)", _relation_blind_count,
             variants=WALK_CHOICES),
    Shortcut("reachable_extreme_year", "family", "compare: the earliest / latest year among every entity a "
             "relation-blind walk from a start reaches", _reachable_extreme_year),
    Shortcut("nearest_last_relation", "family", "the value of the last relation's line nearest the start's "
             "first-hop line (the chain's middle skipped), then the join", _nearest_last_relation,
             expected_in=lambda slot: slot == BLOCK_SLOT),
)


BLOCK_SLOT, SPREAD_SLOT = "dispersion=0", "dispersion>0"


def audit_slot(row: dict) -> str:
    """Rows at dispersion 0 are audited apart: their evidence is one block by definition, so reading the
    lines next to a start's line is the regularity they study (``nearest_last_relation``), as reading d is in
    Find the Origin's structured arrangement. Every other strategy must stay at chance on both slots."""
    difficulty = row["difficulty"]
    if isinstance(difficulty, str):
        difficulty = json.loads(difficulty)
    return BLOCK_SLOT if difficulty["dispersion_target"] == 0 else SPREAD_SLOT

def _per_line(feature):
    """A probe over the context's fact lines; gold = a required fact (an evidence span)."""
    def features(row: dict) -> list[tuple[object, bool]]:
        gold = {span["start"] for span in row["evidence"]}
        lines, out, offset = row["context"].split("\n"), [], 0
        for k, line in enumerate(lines):
            out.append((feature(line, k, len(lines)), offset in gold))
            offset += len(line) + 1
        return out
    return features


@lru_cache(maxsize=4096)  # the two template probes read the same lines of a row one after the other
def _template_of(line: str) -> tuple[str, int] | None:
    """(relation, phrasing index) of the template that wrote a fact line."""
    found = match_fact(line)
    if found is None:
        return None
    _, relation, phrasing = fact_patterns()[found[0]]
    return relation, phrasing


def _always(_config) -> bool:
    return True


PROBES = (
    Probe("fact_length", "length", "characters of a fact line; gold = a required fact",
          _per_line(lambda line, k, n: float(len(line)))),
    Probe("fact_position", "position", "position of a fact line in the context",
          _per_line(lambda line, k, n: k / max(n - 1, 1))),
    Probe("fact_centrality", "position", "closeness of a fact line to the middle of the context",
          _per_line(lambda line, k, n: -abs(k / max(n - 1, 1) - 0.5))),
    Probe("fact_template", "template", "which of its relation's phrasings wrote a fact line (the wording, "
          "whatever the relation); gold = a required fact",
          _per_line(lambda line, k, n: (_template_of(line) or ("", -1))[1]), categorical=True),
    # Every required fact states a relation its question names ("the founder of ..."), and questions name
    # some relations more often than the knowledge base holds them: the relation alone ranks gold lines
    # higher by construction, as the question's own words do. Reported, never counted.
    Probe("fact_relation", "template", "which relation (and phrasing) a fact line states",
          _per_line(lambda line, k, n: _template_of(line)), categorical=True, expected_when=_always),
)


# --- the learned surface probe (issue 27 item 3b) --------------------------------------------------------------
# Every candidate an answer could name gets generic, reasoning-free features: where and how often it is
# mentioned, how near the question's start entity, its name's length and overlap with the question, and how
# the fact lines' graph reaches it from the start when relations are ignored (the relation-blind walk as a
# feature: a surface graph statistic, no relation read). A list question has one candidate per (question,
# entity of its answer's type); a comparison one per entity of the compared type; a count one per number
# 0..branches, featured by its distance to surface counts.
UNREACHED = 12.0  # the link depth given to an entity the start's links never reach
ENTITY_FEATURES = 20
PROBE_WALKS = ("first", "last", "nearest_previous", "most_paths")  # the blind walks whose ends are features
NEAREST_IS_BEST = (6, 7, 12, 13)  # entity features where a chain's smaller value is the favourable one


@dataclass(frozen=True)
class Surface:
    """What every candidate's features are measured against: the context, its fact lines per name."""

    context: str
    question: str
    lines_of: dict[str, tuple[int, ...]]  # name -> fact lines that name it
    total_lines: int
    found: dict[str, list[float]]  # name -> its mention positions, filled as names are asked for

    def positions(self, name: str) -> list[float]:
        if name not in self.found:
            self.found[name] = mention_positions(self.context, name)
        return self.found[name]


def _surface(row: dict, v: View) -> Surface:
    lines_of: dict[str, list[int]] = {}
    for name, line in zip((name for name, _ in v.mentions), v.lines, strict=True):
        lines_of.setdefault(name, []).append(line)
    return Surface(row["context"], row["question"], {k: tuple(x) for k, x in lines_of.items()}, len(v.ordered),
                   {})


def link_depths(v: View, start: str) -> dict[str, int]:
    """Breadth-first link distance from the start over the fact lines' subject -> other entity links, any
    relation, any type."""
    depth, frontier = {start: 0}, [start]
    while frontier:
        following = []
        for entity in frontier:
            for _, name in v.out.get(entity, ()):
                if name not in depth:
                    depth[name] = depth[entity] + 1
                    following.append(name)
        frontier = following
    return depth


@dataclass(frozen=True)
class ChainGraph:
    """One chain's relation-blind reach: link depths from its start and type-consistent walk arrivals."""

    start: str
    hops: int
    depths: dict[str, int]
    ways: dict[str, int]
    total: int
    walked: tuple[str | None, ...]  # where each of ``PROBE_WALKS`` lands


def _chain_graph(v: View, chain) -> ChainGraph:
    start, relations = chain
    ways = walk_counts(v, start, relations)
    walked = tuple(blind_walk(v, chain, choice, 0) for choice in PROBE_WALKS)
    return ChainGraph(start, len(relations), link_depths(v, start), ways, sum(ways.values()), walked)


def _entity_features(s: Surface, graph: ChainGraph, name: str) -> tuple[float, ...]:
    """Mention ranks (6), distance to the start in characters and lines, co-occurrence with the start on a line,
    name length and words, overlap with the question, link depth (and its gap to the chain's hops), whether a
    type-consistent walk of the chain's length arrives, the share of such walks that do, and whether each of
    the deterministic blind walks (first / last / nearest line / most walks) lands on it."""
    positions, start_positions = s.positions(name), s.positions(graph.start)
    own, start_lines = s.lines_of.get(name, ()), s.lines_of.get(graph.start, ())
    line_gap = min((abs(a - b) for a in own for b in start_lines), default=s.total_lines)
    depth = float(graph.depths.get(name, UNREACHED))
    arrivals = graph.ways.get(name, 0)
    return (*rank_features(positions), nearest_distance(positions, start_positions),
            line_gap / max(s.total_lines, 1), float(bool(set(own) & set(start_lines))), float(len(name)),
            float(len(name.split())), word_overlap(name, s.question), depth, abs(depth - graph.hops),
            float(arrivals > 0), arrivals / graph.total if graph.total else 0.0,
            *(float(end == name) for end in graph.walked))


def _named(v: View, kind: str, starts: set[str]) -> list[str]:
    """Every entity of ``kind`` the facts name, in first-mention order, the question's starts left out."""
    seen: dict[str, None] = {}
    for name, k in v.mentions:
        if k == kind and name not in starts:
            seen.setdefault(name)
    return list(seen)


def _list_candidates(v: View, s: Surface, gold: list[str]) -> list[Candidate]:
    out = []
    for q, chain in enumerate(v.asked.chains):
        if chain is None or not chain[1]:
            continue
        graph = _chain_graph(v, chain)
        answer = gold[q] if q < len(gold) else None
        out += [Candidate(f"{q}\t{name}", name == answer, _entity_features(s, graph, name))
                for name in _named(v, BY_ID[chain[1][-1]].target, {chain[0]})]
    return out


def _compare_candidates(v: View, s: Surface, gold: str) -> list[Candidate]:
    """Entities of the compared type: per-chain features folded to the most favourable chain (nearest, most
    reached), and the rank of the entity's stated year in the asked direction (the extreme year as a feature)."""
    _, relation, direction = v.asked.join
    chains = [c for c in v.asked.chains if c is not None]
    graphs = [_chain_graph(v, c) for c in chains]
    names = _named(v, BY_ID[relation].source, {c[0] for c in chains})
    years = sorted(int(value) for (r, _), value in v.facts.items() if r == relation)
    out = []
    for name in names:
        per_chain = [_entity_features(s, g, name) for g in graphs] or [(0.0,) * ENTITY_FEATURES]
        folded = tuple(min(f[k] for f in per_chain) if k in NEAREST_IS_BEST else max(f[k] for f in per_chain)
                       for k in range(len(per_chain[0])))
        year = v.facts.get((relation, name))
        if year is None or not years:
            extreme, dated = 0.5, 0.0
        else:
            below = sum(y < int(year) for y in years) / len(years)
            extreme, dated = (1.0 - below if direction == "earliest" else below), 1.0
        out.append(Candidate(name, name == gold, (*folded, extreme, dated)))
    return out


def _count_candidates(v: View, s: Surface, gold: str) -> list[Candidate]:
    """Numbers 0..branches, featured by their gap to surface counts: people linked to the named city (any
    relation / the asked one), the expected count of relation-blind walks' ends linked to it, the branches,
    the city's mentions, and the counts the first / last / most-walks blind walks reach (each end joined blind:
    any line to the city, whatever its relation)."""
    _, relation, city = v.asked.join
    chains = [c for c in v.asked.chains if c is not None]
    linked = sum(1 for _, source, value in v.ordered if value == city and v.types.get(source) == "person")
    natives = sum(1 for (r, _), value in v.facts.items() if r == relation and value == city)
    expected = 0.0
    for chain in chains:
        ways = walk_counts(v, *chain) if chain[1] else {chain[0]: 1}
        total = sum(ways.values())
        if total:
            expected += sum(n for end, n in ways.items()
                            if any(value == city for _, value in v.out.get(end, ()))) / total
    # the walks' ends joined blind too: any line to the city (reading the join's relation is the reasoning)
    walked = [sum(linked_to(v, blind_walk(v, chain, choice, 0) if chain[1] else chain[0], city) for chain in chains)
              for choice in ("first", "last", "most_paths")]
    surface = (linked, natives, expected, len(chains), len(s.positions(city)), *walked)
    branches = max(len(chains), 1)
    return [Candidate(str(n), str(n) == gold, (float(n), n / branches,
                                                 *(abs(n - c) for c in surface), *(n - c for c in surface)))
            for n in range(len(chains) + 1)]


def probe_read(row: dict) -> ProbeItem | None:
    """A generated row as the learned probe sees it (None when the prompt asks nothing it can parse). Group:
    the row's world (``pair_key``: every row builds its own knowledge base; matched configs share it)."""
    v = view(row["prompt"])
    if v.asked is None:
        return None
    s = _surface(row, v)
    kind = v.asked.join[0]
    if kind == "list":
        candidates = _list_candidates(v, s, list(row["answer_items"]))
    elif kind == "compare":
        candidates = _compare_candidates(v, s, row["answer_items"][0])
    else:
        candidates = _count_candidates(v, s, row["answer_items"][0])
    return ProbeItem(row["pair_key"], f"{kind}/{row['answer_format']}", "", tuple(candidates))


def probe_decode(item: ProbeItem, probabilities) -> str:
    """A list: the most likely entity per question, in question order; a comparison or a count: the most
    likely candidate."""
    if not item.model.startswith("list/"):
        return f"FINAL ANSWER: {top_answer(item, probabilities)}"
    best: dict[int, tuple[float, str]] = {}
    for candidate, p in zip(item.candidates, probabilities, strict=True):
        q, _, name = candidate.answer.partition("\t")
        if int(q) not in best or p > best[int(q)][0]:
            best[int(q)] = (p, name)
    answers = [best[q][1] if q in best else "" for q in range(max(best, default=-1) + 1)]
    return "FINAL ANSWER: " + "; ".join(answers)


LEARNED_PROBE = LearnedProbe(
    "a logistic model per answer format on every candidate's mention ranks, distance to the start entity, "
    "co-occurrence, name length, question overlap and relation-blind link depth / walk arrivals (held out by "
    "world)", probe_read, probe_decode)
