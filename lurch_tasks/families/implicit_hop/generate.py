"""ImplicitHop generator: a knowledge base sized to the budget, a question of parallel chains, and the
required facts laid out at a target dispersion among the other facts."""

from __future__ import annotations

import json
import math
from collections.abc import Callable

import numpy as np

from ...core.budget import (
    CostsOnDemand,
    Fitted,
    LineSum,
    joined_costs,
    line_tokens,
    prompt_meter,
    settle_to_budget,
    sums_over_lines,
)
from ...core.cells import setup_instance
from ...core.config import config_to_dict
from ...core.context import (
    evidence_measures,
    line_char_spans,
    line_token_ranges,
    lurch_difficulty,
    measure_evidence,
)
from ...core.difficulty import reasoning_depth
from ...core.instance import Instance, instance_id
from ...core.memory import cycles_uncollected
from ...core.names import one_edit
from ...core.pieces import PieceCounter, PieceLines, ReferenceOnDemand
from ...core.rng import StableRng, canonical_json, derive_seed
from ...core.tokens import CutsEncoded, StartsEncoded, reference_counter
from ...scoring.not_found import NOT_FOUND
from .balance import balance_compare, balance_count, compare_dated
from .competitors import (
    competitor_counts,
    competitor_keys,
    decoy_facts,
    hops,
    neighbour_keys,
    paths,
    same_signature,
)
from .config import FACT_TOKENS_ESTIMATE, Cell, ImplicitHopConfig, shape
from .costing import fact_line_costs
from .filler import filler_lines
from .kb import Fact, KnowledgeBase, build_kb, facts_per_person, render_fact, render_facts
from .layout import Layout, disperse
from .prompt import ask, item_phrase, prompt_head, render_joined, render_prompt, render_question
from .questions import (
    LIST,
    Branch,
    Join,
    Question,
    nested_phrase,
    sample_branches,
    sample_compare,
    sample_count,
    stepwise_phrase,
)
from .schema import BY_ID, COMPARE_RELATIONS, COUNT_RELATIONS, PLURALS, YEAR

FAMILY = "implicit_hop"
VERSION = "0.7.0"  # 0.7.0: difficulty records reasoning_width and step_count
VOCABULARY = ("english_words.txt", "last_names.txt", "first_names.txt", "cities.txt")  # names avoid these
COMPARED_KNOBS = ("evidence_order", "question_style")
LINE_SEPARATOR = "\n"
KB_SLACK = 1.05  # the knowledge base holds this much more than the budget, so distractors never run out
DISPERSION_TOLERANCE = 0.02


CHAIN_ROOM = 3  # people per entity the chains pass through: disjoint long chains need room to walk


def people_for(context_tokens: int, chain_entities: int = 0, years: bool = False) -> int:
    """People of the knowledge base: enough facts (of the relations the context holds) to fill the budget
    with little left over, and room for the question's chains. Every fact left out is one a question never
    needs, so a small slack keeps chain entities from being mentioned more often than their peers. (A 4k
    prompt's knowledge base is about twice the prompt: the chains' room decides it. Sizing it to the budget
    instead (five entities of any type per chain entity) cut a 4k instance's cost by a third but raised the
    broken-chain control's ``nearest_last_relation`` to chance + 0.10 and the grid's learned probe to
    chance + 0.07, so the room stays.)"""
    fill = int(context_tokens / (facts_per_person(years) * FACT_TOKENS_ESTIMATE) * KB_SLACK) + 1
    return max(fill, CHAIN_ROOM * chain_entities)


def required_facts(kb: KnowledgeBase, question: Question, order: str, rng: StableRng) -> list[Fact]:
    """The facts the answer needs, in context order: chain order (branch by branch, each with its join
    fact), reversed, or seeded."""
    joined = dict(zip((b.answer for b in question.branches), question.final_keys(), strict=False))
    facts = []
    for b in question.branches:
        facts += [kb.by_key[(relation, entity)] for relation, entity in zip(b.relations, b.entities, strict=False)]
        if b.answer in joined:
            facts.append(kb.by_key[joined[b.answer]])
    if order == "reverse":
        return facts[::-1]
    if order == "forward":
        return facts
    telling = telling_facts(question)
    return _ends_without_answers(rng.shuffled(facts), answer_facts(kb, question), telling, rng if telling else None)


def answer_facts(kb: KnowledgeBase, question: Question) -> set[tuple[str, int]]:
    """Keys of the required facts that name an answer: a list's final hops; a comparison's last hop into the
    winner and the winner's year (a count's answer is a number no fact names)."""
    join = question.join
    if join.kind == "list":
        return {(b.relations[-1], b.entities[-2]) for b in question.branches}
    if join.kind == "compare":
        winner = next(b for b in question.branches if b.answer == join.answer)
        return {(winner.relations[-1], winner.entities[-2]), (join.relation, join.answer)}
    return set()


def telling_facts(question: Question) -> set[tuple[str, int]]:
    """Keys of the required facts a comparison would rather not open or close its evidence with: every chain's
    last hop (into an end) and every end's year. The window's first and last lines are the first and last of
    their groups (the hop's competitors, the dated years), so either one there marked its entity as an end; a
    hop earlier in a chain marks a bridge, which the last hop's competitors still hide. None for the other
    joins."""
    if question.join.kind != "compare":
        return set()
    return {key for b in question.branches for key in ((b.relations[-1], b.entities[-2]),
                                                         (question.join.relation, b.answer))}


def _ends_without_answers(facts: list[Fact], answering: set[tuple[str, int]],
                          telling: set[tuple[str, int]] = frozenset(), rng: StableRng | None = None) -> list[Fact]:
    """The shuffled facts with a fact that names no answer first and last where there is one: at dispersion
    1 the first and last evidence lines open and close the context, and an answer there would be at a
    position anyone can read off. Where it can, neither is a ``telling`` fact (``telling_facts``) either.
    The fact moved off an end trades places with the first other fact, or with a seeded one given ``rng``
    (a comparison: with the first, the answer's hop stood second in the evidence, before most of its
    competitor lines, and a walk taking a start's first link found the answer 0.38 of the time, not 0.25)."""
    for end in (0, len(facts) - 1):
        for avoid in (telling | answering, answering):
            if facts[end].key() in avoid:
                inner = [k for k in range(1, len(facts) - 1) if facts[k].key() not in avoid]
                swap = (rng.choice(inner) if rng else inner[0]) if inner else None
                if swap is not None:
                    facts[end], facts[swap] = facts[swap], facts[end]
                    break
    return facts


REQUIRED_FACT_TOKENS = 15.8  # mean reference tokens of a fact line (names included): the evidence target
EVEN_TOLERANCE = 0.03  # the required facts' tokens land within 3% of facts x REQUIRED_FACT_TOKENS when a draw allows
CHAIN_DRAWS = 12  # seeded question draws tried for evidence of about the target size
# A comparison's relation is fixed before the draws and year lines are short, so its draws vary less: it
# tries more of them.
COMPARE_DRAWS = 36


def draw_question(kb: KnowledgeBase, join: str, lengths: tuple[int, ...], rng: StableRng, wanted: int,
                  rng_seed: int) -> Question:
    """One seeded question of the join's kind (``wanted``: the count a count question aims at)."""
    if join == "compare":
        # The compared relation and direction are drawn once per instance, outside the draws that even out
        # the evidence size: choosing among draws would otherwise favour whichever relation's facts are longer.
        pick = StableRng(derive_seed(rng_seed, "compare"))
        relation, direction = pick.choice(sorted(COMPARE_RELATIONS)), pick.choice(("earliest", "latest"))
        return sample_compare(kb, lengths, rng, relation, direction)
    if join == "count":
        return sample_count(kb, lengths, rng, wanted)
    return Question(tuple(sample_branches(kb, lengths, rng)), LIST)


def closest_question(kb: KnowledgeBase, join: str, lengths: tuple[int, ...], facts: int, order: str,
                     rng_seed: int, wanted: int) -> tuple[Question, list[Fact]]:
    """The question (and its required facts in context order) whose facts' reference tokens come
    closest to ``facts x REQUIRED_FACT_TOKENS``, among seeded draws (the first within ``EVEN_TOLERANCE``):
    invented names make a fact 9-26 tokens long, and eight facts would otherwise spread the evidence scope of
    a slice that holds the facts fixed by about 12% either way. Phrasings stay as the knowledge base drew
    them, so no template is more common among required facts than among the rest."""
    counter, target, best = reference_counter(), facts * REQUIRED_FACT_TOKENS, None
    for draw in range(COMPARE_DRAWS if join == "compare" else CHAIN_DRAWS):
        question = draw_question(kb, join, lengths, StableRng(derive_seed(rng_seed, "chains", draw)), wanted, rng_seed)
        required = required_facts(kb, question, order, StableRng(derive_seed(rng_seed, "order", draw)))
        tokens = _lines_tokens(counter, [render_fact(kb, fact) for fact in required])
        gap = abs(tokens - target)
        if best is None or gap < best[0]:
            best = (gap, question, required)
        if gap <= EVEN_TOLERANCE * target:
            break
    return best[1], best[2]


def _lines_tokens(counter, lines: list[str]) -> int:
    """The lines' tokens, each with its newline, summed: one pass over them joined where the counter
    ``sums_over_lines`` over them (the sum is then the joined text's count), a pass per line elsewhere."""
    if lines and sums_over_lines(counter, LINE_SEPARATOR, lines):
        return counter.count(LINE_SEPARATOR.join(lines) + LINE_SEPARATOR)
    return sum(counter.count_many([line + LINE_SEPARATOR for line in lines]))


def mentions(fact: Fact, entity: int) -> bool:
    """Whether a fact names the entity (a year fact's value is a year, not an entity id)."""
    return fact.source == entity or (BY_ID[fact.relation].target != YEAR and fact.target == entity)


def _lines_mentioning(entities: set[int], ids: list[int], facts: list[Fact]) -> dict[int, list[int]]:
    """For each entity, the ``ids`` (in their order) of the facts that mention it (``mentions``), in one pass."""
    found: dict[int, list[int]] = {entity: [] for entity in entities}
    dated = {relation.id for relation in BY_ID.values() if relation.target == YEAR}
    for i in ids:
        if i >= len(facts):
            continue
        fact = facts[i]
        if fact.source in found:
            found[fact.source].append(i)
        if fact.target in found and fact.target != fact.source and fact.relation not in dated:
            found[fact.target].append(i)
    return found


def starts_first(order: list[int], evidence: int, start_lines: list[list[int]], rng: StableRng) -> list[int]:
    """The line order with every start entity mentioned before the first required fact where its facts
    allow: a start first mentioned inside the evidence would put its answer next to that mention at low
    dispersion, readable without following the chain. One of the start's other facts moves from after the
    last required fact to a seeded place before the first, so the evidence span and the dispersion stay as
    they were. Lines ``0 .. evidence - 1`` are the required facts."""
    order = list(order)
    # positions of the evidence and the starts' lines only (a context holds thousands), kept up to date by hand
    tracked = set().union(*start_lines)
    position = {line: k for k, line in enumerate(order) if line < evidence or line in tracked}
    for lines in start_lines:
        evidence_at = [position[line] for line in range(evidence)]
        first, last = min(evidence_at), max(evidence_at)
        seen_at = [position[line] for line in lines if line in position]
        if any(k < first for k in seen_at):
            continue
        later = sorted(k for k in seen_at if k > last)
        if not later:
            continue
        taken = later[rng.below(len(later))]
        line = order.pop(taken)
        place = rng.below(first + 1)
        order.insert(place, line)
        for other, k in position.items():  # the lines from its new place to its old one move one on
            if place <= k < taken:
                position[other] = k + 1
        position[line] = place
    return order


def required_keys(question: Question) -> list[tuple[str, int]]:
    """(relation, subject) of every required fact, the joins' own lookups included."""
    return [key for relations, subjects in paths(question) for key in zip(relations, subjects, strict=True)]


def evidence_window(order: list[int], evidence: int) -> tuple[int, int]:
    """Positions of the first and the last evidence line (lines ``0 .. evidence - 1``), each found from its end."""
    first = next(k for k, line in enumerate(order) if line < evidence)
    last = len(order) - 1 - next(k for k, line in enumerate(reversed(order)) if line < evidence)
    return first, last


def gold_like(order: list[int], evidence: int, decoys: set[int], costs: list[int], reference: list[int],
              rng: StableRng, primary: frozenset[int] = frozenset(),
              closest: frozenset[int] = frozenset()) -> list[int]:
    """The line order with the ``decoys`` (competitor lines, and lines of the question's relations about other
    subjects) where the evidence lines are: each one outside the evidence window trades places with a seeded
    other distractor inside it of the same token costs (so the dispersion and the prompt's tokens stay as
    they were); where none is left (a narrow window, dispersion 0), it moves next to the window, on the side
    it stood. A walk that takes the candidate nearest the chain's previous line then meets a
    competitor as near as the gold fact. The ``primary`` lines take the window's slots first; of the lines left
    over, the ``closest`` go nearest the window. Lines ``0 .. evidence - 1`` are the evidence."""
    order = list(order)
    first, last = evidence_window(order, evidence)
    inside: dict[tuple[int, int], list[int]] = {}
    for k in range(first + 1, last):
        if order[k] >= evidence and order[k] not in decoys:
            inside.setdefault((costs[order[k]], reference[order[k]]), []).append(k)
    # the competitors take the window's free slots first, the other lines of the question's relations after them
    outside = [k for k, line in enumerate(order) if line in decoys and not first < k < last]
    outside = (rng.shuffled([k for k in outside if order[k] in primary])
               + rng.shuffled([k for k in outside if order[k] not in primary]))
    unplaced = []  # (line, whether it stood before the window)
    for k in outside:
        slots = inside.get((costs[order[k]], reference[order[k]]))
        if slots:
            slot = slots.pop(rng.below(len(slots)))
            order[k], order[slot] = order[slot], order[k]
        else:
            unplaced.append((order[k], k < first))
    unplaced = ([item for item in unplaced if item[0] not in closest]
                + [item for item in unplaced if item[0] in closest])
    # Next to the window, on the side each line came from: outside it, so the tokens inside do not change (the
    # last nearest), and the window keeps its place (lines moved across it would push it to the middle). Moved
    # one at a time, each right before the first evidence line (after the last), they stand in turn before it
    # (in reverse turn after it): placed so at once.
    if not unplaced:
        return order
    moved = {line for line, _ in unplaced}
    kept = [line for line in order if line not in moved]
    first, last = evidence_window(kept, evidence)
    before = [line for line, side in unplaced if side]
    after = [line for line, side in reversed(unplaced) if not side]
    return kept[:first] + before + kept[first:last + 1] + after + kept[last + 1:]


def toward_ends(order: list[int], evidence: int, alike: set[int], costs: list[int], reference: list[int],
                rng: StableRng) -> list[int]:
    """The line order with the ``alike`` lines (a comparison's competitor lines and dated years) inside the
    evidence window placed as the layout places the inner evidence lines (arcsine: more often near the window's
    ends, ``layout._toward_ends``), not uniformly: a chain's hop line, nearer the window's ends than its
    competitor lines, was otherwise more often the first or the last of them. Each alike line takes the free slot
    of its token costs nearest a seeded arcsine place; the other lines keep their order in the slots left, so
    every slot holds a line of the same costs as before (the tokens and the dispersion do not move). Lines
    ``0 .. evidence - 1`` are the evidence."""
    order = list(order)
    first, last = evidence_window(order, evidence)
    slots: dict[tuple[int, int], list[int]] = {}
    for k in range(first + 1, last):
        if order[k] >= evidence:
            slots.setdefault((costs[order[k]], reference[order[k]]), []).append(k)
    for positions in slots.values():
        lines = [order[k] for k in positions]
        placed = rng.shuffled([line for line in lines if line in alike])
        free, taken = list(positions), {}
        for line in placed:
            place = first + (last - first) * (1 - math.cos(math.pi * rng.uniform())) / 2
            slot = min(free, key=lambda k: (abs(k - place), k))
            free.remove(slot)
            taken[slot] = line
        rest = iter(line for line in lines if line not in alike)
        for k in positions:
            order[k] = taken[k] if k in taken else next(rest)
    return order


def boundary_mates(order: list[int], evidence: int, mates: dict[int, list[int]], costs: list[int],
                   reference: list[int], blocked: set[int], rng: StableRng) -> list[int]:
    """The line order with the window's first and last lines no longer the outermost of their groups: the
    evidence window opens and closes on evidence lines, and ``gold_like`` puts the lines alike to them inside it,
    so an evidence line at either end stood before (after) every line of its group (a chain's last hop before
    its competitors: the blind walk's first / last link was the end one time in three, not four). A seeded
    share of the boundary line's ``mates`` (uniform: its rank among its group is then uniform) trade places with
    the distractors of the same token costs nearest the window outside it on that side, so the window's tokens
    and the dispersion stay as they were. ``blocked`` lines never move out. Lines ``0 .. evidence - 1`` are
    the evidence."""
    order = list(order)
    first, last = evidence_window(order, evidence)
    for edge, step in ((first, -1), (last, 1)):
        group = [k for k, line in enumerate(order) if line in mates.get(order[edge], ()) and first < k < last]
        moved = rng.sample(group, rng.below(len(group) + 1))
        outside = range(edge + step, -1 if step < 0 else len(order), step)  # nearest the window first
        free = [q for q in outside if order[q] >= evidence and order[q] not in blocked]
        for k in sorted(moved):
            slot = next((q for q in free if (costs[order[q]], reference[order[q]]) ==
                         (costs[order[k]], reference[order[k]])), None)
            if slot is not None:
                free.remove(slot)
                order[k], order[slot] = order[slot], order[k]
    return order


ZERO_SPREAD = 0.7 * DISPERSION_TOLERANCE  # distractor share inside the evidence block at dispersion 0
ZERO_SPREAD_MAX = 0.85 * DISPERSION_TOLERANCE  # a layout whose lines overshoot this keeps the block closed


def zero_spread_layout(costs: list[int], evidence: int, target: float, seed: int,
                       stratum: tuple[int, int]) -> Layout:
    """The layout for ``target``; at 0, one that opens the evidence block by ``ZERO_SPREAD`` of the distractor
    tokens (within the tolerance) where whole lines allow, so a few lines of the chains' relations about other
    subjects can sit among the evidence (``gold_like``); a closed block where they would overshoot."""
    if target != 0 or evidence < 2:
        return disperse(costs, evidence, target, StableRng(seed), stratum)
    opened = disperse(costs, evidence, ZERO_SPREAD, StableRng(seed), stratum)
    if not 0 < opened.dispersion <= ZERO_SPREAD_MAX:
        return disperse(costs, evidence, 0.0, StableRng(seed), stratum)
    # each of the few lines in a seeded gap, uniformly: as far from a chain's first line as its other lines are
    spread = StableRng(derive_seed(seed, "zero-spread"))
    gaps = [0] * (evidence - 1)
    for _ in range(sum(opened.gaps)):
        gaps[spread.below(evidence - 1)] += 1
    return Layout(opened.before, tuple(gaps), opened.inside_tokens, opened.distractor_tokens)


def enders_inside(chosen: list[int], layout: Layout, enders: frozenset[int], reference: list[int],
                  rng: StableRng) -> tuple[list[int], Layout]:
    """The distractor order with the lines of the opened block (dispersion 0) traded for seeded ``enders`` from
    outside it, each trade kept only while the block's tokens stay within ``ZERO_SPREAD_MAX``: every slot the
    tolerance allows holds a line of a chain's last relation, not only those of a matching token cost."""
    chosen = list(chosen)
    run = range(layout.before, layout.before + sum(layout.gaps))
    limit, inside = ZERO_SPREAD_MAX * layout.distractor_tokens, layout.inside_tokens
    outside = rng.shuffled([q for q, line in enumerate(chosen) if line in enders and q not in run])
    for p in run:
        if chosen[p] in enders:
            continue
        for k, q in enumerate(outside):
            if inside - reference[chosen[p]] + reference[chosen[q]] <= limit:
                inside += reference[chosen[q]] - reference[chosen[p]]
                chosen[p], chosen[q] = chosen[q], chosen[p]
                outside.pop(k)
                break
    return chosen, Layout(layout.before, layout.gaps, inside, layout.distractor_tokens)


def with_near_misses(kb: KnowledgeBase, branches: list[Branch],
                     rng: StableRng) -> tuple[KnowledgeBase, list[Fact], list[dict]]:
    """The knowledge base with a near miss of every bridge: an entity of the same type named one letter away,
    whose fact for the chain's next relation leads elsewhere (a one-hop-off answer for a careless reader)."""
    names, types, facts = list(kb.names), list(kb.types), list(kb.facts)
    taken, added, records = set(names), [], []
    for branch in branches:
        for hop in range(1, branch.hops):
            bridge, relation = branch.entities[hop], branch.relations[hop]
            name = one_edit(kb.names[bridge], taken, rng)
            if name is None:
                continue
            true_value = kb.value(relation, bridge)
            others = [e for e, t in enumerate(types) if t == BY_ID[relation].target and e != true_value]
            value = rng.choice(others)
            names.append(name)
            types.append(kb.types[bridge])
            taken.add(name)
            fact = Fact(relation, len(names) - 1, value, rng.below(len(BY_ID[relation].facts)))
            added.append(fact)
            records.append({"bridge": kb.names[bridge], "near_miss": name, "relation": relation,
                            "leads_to": names[value]})
    extended = KnowledgeBase(tuple(names), tuple(types), tuple(facts + added))
    return extended, added, records


def distractor_pool(kb: KnowledgeBase, required: list[Fact], question: Question, mode: str,
                    left_out: set[tuple[str, int]]) -> list[Fact]:
    """Every other fact of the knowledge base (in its seeded order) but the ``left_out`` keys; ``unrelated``
    keeps only relation types the question does not use."""
    needed = {fact.key() for fact in required} | left_out
    used = {relation for branch in question.branches for relation in branch.relations} | {question.join.relation}
    # Years are in the context only where a comparison asks for them: elsewhere they would be lines no
    # required fact ever looks like.
    years = question.join.kind == "compare"
    dated = set() if years else {r.id for r in BY_ID.values() if r.target == YEAR}
    unused = set(BY_ID) - used if mode == "unrelated" else set(BY_ID)
    allowed = unused - dated
    return [f for f in kb.facts if f[0] in allowed and f[:2] not in needed]  # (relation, source) not needed


def broken_hop(config: ImplicitHopConfig, seed: int, split: str, cell: Cell, sample: int) -> int | None:
    """The hop whose fact this sample leaves out, or None for an intact chain. The broken samples are a seeded
    set of exactly ``broken_samples()`` of the cell's samples (so the share is the same in every cell, hence at
    every level of every axis); their hops take turns over the chain's, the first (the start's own fact) and the
    last (the fact naming the answer) included."""
    count = config.broken_samples()
    if not count:
        return None
    draw = StableRng(derive_seed("implicit-hop-broken", seed, split, *cell)).shuffled(list(range(config.num_samples)))
    if sample not in draw[:count]:
        return None
    # the broken samples take the hops in turn from a seeded first one: every hop about as often (16 rows over 5
    # hops: 4, 3, 3, 3, 3), where a draw per row could leave one hop with half of them
    first = StableRng(derive_seed("implicit-hop-broken-hop", seed, split, *cell)).below(cell.depth)
    return (first + draw.index(sample)) % cell.depth


def expected_competitors(question: Question, level: int, missing: Fact | None) -> list[int]:
    """Same-signature competitors per hop (``competitors.hops`` order): the level, one more on a broken hop (the
    left-out fact's place, so its subject shows as many lines of the signature as any other hop's)."""
    broken = None if missing is None else missing.key()
    return [level + (key == broken) for key in hops(question)]


def generate(config: ImplicitHopConfig, seed: int, split: str, index: int, config_name: str) -> Instance:
    """Instance ``index`` of ``split``: a pure function of (family, config, seed, split, index)."""
    with cycles_uncollected():
        return _generate(config, seed, split, index, config_name)


def _generate(config: ImplicitHopConfig, seed: int, split: str, index: int, config_name: str) -> Instance:
    setup = setup_instance(FAMILY, config, VOCABULARY, seed, split, index, COMPARED_KNOBS)
    cell: Cell = setup.cell
    rng_seed = setup.rng_seed
    lengths = shape(config.join, cell.depth, cell.facts)
    people = people_for(cell.context_tokens, cell.facts + len(lengths), years=config.join == "compare")
    kb = build_kb(people, derive_seed(rng_seed, "kb"))
    question_drawn, required = closest_question(kb, config.join, lengths, cell.facts, config.evidence_order,
                                                rng_seed, setup.sample)
    branches = list(question_drawn.branches)
    # A broken chain: the hop's fact leaves the required facts and stays out of the pool; its competitors, the
    # facts after it and everything else go in as they would, so nothing on the surface shows the gap.
    hop = broken_hop(config, seed, split, cell, setup.sample)
    missing = None if hop is None else kb.by_key[(branches[0].relations[hop], branches[0].entities[hop])]
    if missing is not None:
        required = [fact for fact in required if fact.key() != missing.key()]
    near_misses: list[dict] = []
    if config.distractors == "near_miss":
        kb, near_facts, near_misses = with_near_misses(kb, branches, StableRng(derive_seed(rng_seed, "near")))
    # The drawn competitors of every hop go in whole; the level is exact, so the others may not come in with
    # the rest of the pool.
    decoys = decoy_facts(kb, question_drawn, config.competitors_per_hop, StableRng(derive_seed(rng_seed, "decoys")))
    if missing is not None:  # the broken hop's subject keeps as many lines of the hop's signature as every other
        # hop's (its gold and level competitors): one more competitor takes the left-out fact's place
        drawn = {fact.key() for fact in decoys}
        spare = [kb.by_key[(other, missing.source)] for other in same_signature(missing.relation)
                 if (other, missing.source) not in drawn]
        decoys.append(StableRng(derive_seed(rng_seed, "broken-spare")).choice(spare))
    balanced: dict = {}
    if question_drawn.join.kind == "count":  # cities that tell a relation-blind reading nothing (balance.py)
        kb, balanced = balance_count(kb, question_drawn, decoys, StableRng(derive_seed(rng_seed, "balance")))
        decoys = [kb.by_key[fact.key()] for fact in decoys]  # a join competitor may now name the city
    dated: set[tuple[str, int]] = set()
    undated: set[tuple[str, int]] = set()
    if question_drawn.join.kind == "compare":  # the years a relation-blind reader would read, and only those
        kb, balanced = balance_compare(kb, question_drawn, decoys, StableRng(derive_seed(rng_seed, "balance")))
        required = [kb.by_key[fact.key()] for fact in required]  # the ends' years are redrawn
        relation = question_drawn.join.relation
        dated = {(relation, e) for e in compare_dated(question_drawn, decoys)}
        undated = {(relation, e) for e in kb.of_type(BY_ID[relation].source)} - dated
    left_out = {f.key() for f in decoys} | competitor_keys(question_drawn) | undated  # the competitors not drawn
    if missing is not None:  # and its mirror (a friend's, a rival's line about the subject would state it)
        left_out.add(missing.key())
        if kb.by_key.get((missing.relation, missing.target), missing).target == missing.source:
            left_out.add((missing.relation, missing.target))
    # stay out, and so do the years of a comparison's kind no reader would weigh
    pool = distractor_pool(kb, required, question_drawn, config.distractors, left_out)
    neighbours = neighbour_keys(kb, question_drawn, decoys)
    join = question_drawn.join
    if join.kind == "count":  # every native of the named city (by any city relation) fits first: how many the
        # context holds then says nothing about how many of the ends are
        neighbours.update({(r, x): 0 for r in (join.relation, *same_signature(join.relation))
                           for x in kb.sources(r, join.target)})
    # Lines of a chain's last relation about other subjects fit right after the next relations' (rank 0): in a
    # short context they would otherwise be few, and the one nearest the start's first line the gold.
    last_relations = {b.relations[-1] for b in branches if b.relations}
    near = {source for _, source in neighbours}  # a fact about none of them, of no last relation, ranks 2
    ranks = [min(neighbours.get((f.relation, f.source), 2), 0.5 if f.relation in last_relations else 2)
             if f.source in near or f.relation in last_relations else 2 for f in pool]
    pool = [pool[k] for k in sorted(range(len(pool)), key=ranks.__getitem__)]  # stable, as sorting the facts
    facts = required + decoys + pool
    lines = render_facts(kb, facts)
    distractor_ids = list(range(len(required), len(lines)))
    if config.filler:  # neutral sentences take their share of the distractor lines, spread by a seeded shuffle
        filler_rng = StableRng(derive_seed(rng_seed, "filler"))
        extra = round(len(pool) * config.filler / (1 - config.filler))
        lines += filler_lines(extra, filler_rng)
        distractor_ids = filler_rng.shuffled(list(range(len(required), len(lines))))
    meter = prompt_meter(config.tokenizer, config.chat_template)
    evidence_ids = list(range(len(required)))
    # Fact lines in a GPT-2-style tokenizer: both tokenizers' costs summed from templates and names (``costing``),
    # every line costed at once; elsewhere the lines are split (or tokenized) and the reference costs come on demand.
    summed = None if meter.reads_reference or not sums_over_lines(reference_counter(), LINE_SEPARATOR, lines) \
        else fact_line_costs(kb, facts, lines, meter.counter, reference_counter())
    joined = None if summed is not None else line_tokens(lines, meter.counter, LINE_SEPARATOR)
    by_pieces = summed is not None or isinstance(joined, PieceLines)
    costs = summed[0] if summed is not None else joined.costs()
    # Reference costs (the layout's and the dispersion's unit) of the lines a prompt holds, counted as the fit
    # tries them: a line costs the same wherever it stands (``sums_over_lines``), so the rest are never counted.
    # The evidence lines are counted with the first distractors laid out (one pass, not two): nothing reads their
    # reference costs before (the frame's layout of no distractors never does).
    need_reference: Callable[[list[int]], object] = lambda rows: None  # noqa: E731
    if summed is not None:
        reference = summed[1]
    elif meter.reads_reference:
        reference = costs
    elif isinstance(joined, PieceLines) and sums_over_lines(reference_counter(), LINE_SEPARATOR, lines):
        on_demand_reference = ReferenceOnDemand(joined, lines, reference_counter())
        reference, need_reference = on_demand_reference.need([]), on_demand_reference.need
    elif sums_over_lines(reference_counter(), LINE_SEPARATOR, lines):
        on_demand = CostsOnDemand(lines, reference_counter(), LINE_SEPARATOR)
        reference, need_reference = on_demand.need([]), on_demand.need
    else:
        reference = joined_costs(lines, reference_counter(), LINE_SEPARATOR)
    decoy_ids = list(range(len(required), len(required) + len(decoys)))
    # Lines stating one of the question's relations about other subjects go where the evidence is too: the
    # line of the chain's last relation nearest its first is then as often another one as the gold one.
    asked_relations = {relation for key in required_keys(question_drawn) for relation in key[:1]}
    alike = set(decoy_ids) | {i for i in range(len(required), len(facts)) if facts[i].relation in asked_relations}
    question = question_text(kb, question_drawn, config.question_style)
    layout_seed = derive_seed(rng_seed, "layout")
    # The cell's samples take the strata of the evidence window's start in a seeded rotation, so a cell's
    # first samples (all a --limit run may read) do not all sit in one part of the context.
    rotation = StableRng(derive_seed("implicit-hop-strata", seed, split, *cell)).below(config.num_samples)
    stratum = ((setup.sample + rotation) % config.num_samples, config.num_samples)

    start_lines = _lines_mentioning({b.start for b in branches}, distractor_ids, facts)

    # Lines of a chain's last relation about other subjects: at dispersion 0 the evidence is one block, and the
    # line of the last relation nearest the start's first line was the answer; these lines take the block's few
    # slots (ZERO_SPREAD, ``enders_inside``) and stand nearest it.
    enders = frozenset(i for i in alike if facts[i].relation in last_relations)
    primary, closest = (enders, enders) if cell.dispersion == 0 else (frozenset(decoy_ids), frozenset())

    # A comparison's window edges: a chain's last hop shares its group with its competitor lines, an end's year
    # with the other dated years (``boundary_mates``).
    mates: dict[int, list[int]] = {}
    if join.kind == "compare":
        line_of = {facts[i].key(): i for i in range(len(facts))}
        years = [line_of[key] for key in sorted(dated)]
        for b in branches:
            last_hop = line_of[(b.relations[-1], b.entities[-2])]
            mates[last_hop] = [line_of[(r, b.entities[-2])] for r in same_signature(b.relations[-1])
                               if (r, b.entities[-2]) in line_of and line_of[(r, b.entities[-2])] in decoy_ids]
            mates[line_of[(join.relation, b.answer)]] = [i for i in years if i >= len(evidence_ids)]
    grouped = {i for lines in mates.values() for i in lines}

    arrangements: dict[tuple[int, ...], tuple[Layout, list[int]]] = {}

    def arranged(chosen: list[int]) -> tuple[Layout, list[int]]:
        # the fit lays out the prompt it keeps, and the instance needs that layout again: laid out once
        key = tuple(chosen)
        if key not in arrangements:
            arrangements[key] = _arranged(chosen)
        return arrangements[key]

    def _arranged(chosen: list[int]) -> tuple[Layout, list[int]]:
        # The pool's rank decides which lines fit, not where they stand: in rank order the lines of the next and
        # last relations would crowd the context's start, and the one nearest a late start line would be gold.
        need_reference([*evidence_ids, *chosen] if chosen else [])
        chosen = StableRng(derive_seed(layout_seed, "places")).shuffled(chosen)
        layout = zero_spread_layout([reference[i] for i in chosen], len(evidence_ids), cell.dispersion, layout_seed,
                                    stratum)
        if cell.dispersion == 0 and sum(layout.gaps):
            chosen, layout = enders_inside(chosen, layout, enders, reference,
                                           StableRng(derive_seed(layout_seed, "enders")))
        order = gold_like(layout.order(evidence_ids, chosen), len(evidence_ids), alike, costs, reference,
                          StableRng(derive_seed(layout_seed, "decoys")), primary, closest)
        if mates:
            order = toward_ends(order, len(evidence_ids), grouped, costs, reference,
                                StableRng(derive_seed(layout_seed, "toward-ends")))
            order = boundary_mates(order, len(evidence_ids), mates, costs, reference, alike,
                                   StableRng(derive_seed(layout_seed, "boundary")))
        return layout, starts_first(order, len(evidence_ids), [start_lines[b.start] for b in branches],
                                    StableRng(derive_seed(layout_seed, "starts")))

    def render(chosen: list[int]) -> str:
        return rendered(arranged(chosen)[1])

    def rendered(order: list[int]) -> str:
        text = render_prompt(LINE_SEPARATOR.join([lines[i] for i in order]), question)
        if additive and order:
            predicted[text] = predicted_tokens(order)
        return text

    # Where a prompt's count is the sum of its lines' costs (``sums_over_lines``) the fit sums them, and only the
    # prompt it keeps is tokenized.
    head, tail = prompt_head(), render_prompt("", question)[len(prompt_head()):]
    additive = (sums_over_lines(meter.counter, head, lines) and not meter.chat_template
                and render_prompt("x", question) == head + "x" + tail)
    predicted: dict[str, int] = {}
    # the prompt's other parts from the same pieces as its lines (``PieceCounter``), when they are pieces
    line_sum = _line_sum(meter.counter, head, by_pieces) if additive else None
    parts = line_sum.parts if line_sum else meter.counter

    def predicted_tokens(order: list[int]) -> int:
        return line_sum.prompt([lines[i] for i in order], [costs[i] for i in order], tail).tokens

    def predicted_count(text: str) -> int:
        return predicted[text] if text in predicted else meter.count(text)

    # The frame holds no distractor line, and every step of an arrangement moves distractor lines only (with none,
    # the layout is the evidence in its own order): it is rendered so, not laid out, and its count summed as every
    # prompt's is (``predicted_count``).
    frame = (predicted_count if additive else meter.count)(rendered(evidence_ids)) - sum(costs[i] for i in evidence_ids)
    room = cell.context_tokens - frame - sum(costs[i] for i in evidence_ids)
    fitting, rest = _first_fit(distractor_ids, costs, room)
    _close_the_gap(fitting, rest, costs, room - sum(costs[i] for i in fitting),
                   max(cell.context_tokens // 100, 16) // 2)
    # Every near miss, every competitor line and every year a comparison dates is in the prompt, each at a seeded
    # place among the other distractors (``gold_like`` then moves the competitor lines where the evidence lines are).
    near_keys = {f.key() for f in near_facts} if near_misses else set()
    special = near_keys | dated
    low, high = len(required), len(required) + len(decoys)  # the competitor lines
    forced = [i for i in distractor_ids if i < len(facts)
              and (low <= i < high or (special and (facts[i].relation, facts[i].source) in special))]
    if forced:
        # a forced fact line takes the place of another fact, not of a filler line: the filler keeps its share
        fitting, rest = _with_lines(fitting, rest, forced, costs, room, StableRng(derive_seed(rng_seed, "near-places")),
                                    kept=set(range(len(facts), len(lines))))
    distractor_ids[:] = fitting + rest
    # Settling the budget drops or adds optional lines only: a forced line stays wherever the cut falls, or a
    # tight budget in a fine-grained tokenizer would take a competitor out and miss the level.
    must = frozenset(forced)
    optional = [i for i in distractor_ids if i not in must]

    # every forced line is fitted: from the fitted lines on, the first n optional ones are the fitted lines and the
    # first of the rest (the fit's first count, and every line it adds, without a pass over the distractors)
    fitted_optional = len(fitting) - len(must) if must <= frozenset(fitting) else None

    def chosen(n: int) -> list[int]:  # every forced line and the first n optional ones, in distractor order
        if fitted_optional is not None and n >= fitted_optional:
            return fitting + rest[:n - fitted_optional]
        keep = must | frozenset(optional[:n])
        return [i for i in distractor_ids if i in keep]

    def settle(count: Callable[[str], int]) -> Fitted:
        return settle_to_budget(lambda n: render(chosen(n)), count, len(fitting) - len(must), cell.context_tokens, 0,
                                len(optional))

    fitted = settle(predicted_count if additive else meter.count)
    layout, order = arranged(chosen(fitted.blocks))
    if additive and order:  # the kept prompt's tokens from its parts' (the lines' from the one pass over them)
        last = lines[order[-1]] + tail
        context_before = len(fitted.text) - len(head) - len(last)
        if meter.reads_reference:  # the evidence offsets are read off every token's start
            starts = np.concatenate([parts.token_starts(head), joined.laid_out(order[:-1], len(head)),
                                     parts.token_starts(last) + len(head) + context_before])
            meter.remember(fitted.text, StartsEncoded(starts))
        else:  # the instance records the prompt's and the context's tokens only: two cuts, summed
            summed = line_sum.prompt([lines[i] for i in order], [costs[i] for i in order], tail)
            head_tokens = line_sum.head_tokens
            meter.remember(fitted.text, CutsEncoded(summed.tokens, ((len(head), head_tokens),
                                                                    (summed.context_span[1],
                                                                     head_tokens + summed.context_tokens))))
    need_reference(evidence_ids)  # counted already, unless the prompt holds no distractor
    return _instance(config, config_name, seed, split, index, cell, kb, question_drawn, required, lines, order,
                     layout, meter, fitted.text, question, setup, near_misses, reference, facts, len(decoys), balanced,
                     (hop, missing))


_LINE_SUMS: dict[tuple[int, str, bool], tuple[object, LineSum]] = {}


def _line_sum(counter, head: str, pieces: bool) -> LineSum:
    """The ``LineSum`` of a tokenizer and a head, built once per process: counting the head is a tokenizer
    pass that every instance of a short prompt would otherwise pay again. ``pieces``: its other parts counted
    from the piece table (``PieceCounter``). Held with the counter, so a counter built again gets its own."""
    key = (id(counter), head, pieces)
    held = _LINE_SUMS.get(key)
    if held is None or held[0] is not counter:
        held = _LINE_SUMS[key] = (counter, LineSum(counter, head, PieceCounter(counter) if pieces else counter))
    return held[1]


def _first_fit(lines: list[int], costs: list[int], room: int) -> tuple[list[int], list[int]]:
    """(fitting, rest) in pool order: a line too long for what is left is skipped and a later, shorter one
    may still fit, so the prompt lands within the tolerance even where a line costs more than it."""
    fitting, rest = [], []
    for line in lines:
        cost = costs[line]
        if room >= cost:
            fitting.append(line)
            room -= cost
        else:
            rest.append(line)
    return fitting, rest


def _with_lines(fitting: list[int], rest: list[int], wanted: list[int], costs: list[int], room: int,
                rng: StableRng, kept: set[int] = frozenset()) -> tuple[list[int], list[int]]:
    """``wanted`` lines all fitted, each at a seeded place, with the last other fitted lines (those not in
    ``kept`` first) moved to the rest until the costs fit ``room`` again."""
    moved = set(wanted)
    fitting = [i for i in fitting if i not in moved]
    rest = [i for i in rest if i not in moved]
    total = sum(costs[i] for i in fitting) + sum(costs[i] for i in wanted)
    while wanted and fitting and total > room:
        last = next((k for k in range(len(fitting) - 1, -1, -1) if fitting[k] not in kept), len(fitting) - 1)
        total -= costs[fitting[last]]
        rest.insert(0, fitting.pop(last))
    for line in wanted:
        fitting.insert(rng.below(len(fitting) + 1), line)
    return fitting, rest


def reference_line_tokens(order: list[int], reference: list[int], evidence: int) -> tuple[list[tuple[int, int]], int]:
    """Reference-token ranges of the evidence lines (in context order) and the context's reference tokens,
    for a prompt the model reads in another tokenizer, without a second pass: from the reference line costs.
    cl100k splits text into words before merging; every line starts with a capitalised word after a
    newline and ends with a full stop that takes the newline into its token, so a line's tokens are the same
    wherever it stands (tests compare this with a pass over the prompt)."""
    return line_token_ranges([reference[line] for line in order],
                             [k for k, line in enumerate(order) if line < evidence])


SWAP_WINDOW = 64  # fitted lines (from the last) tried for a swap


def _close_the_gap(fitting: list[int], rest: list[int], costs: list[int], room: int, slack: int) -> None:
    """Where no line is short enough for the room first fit left (a line costs more than the budget's
    tolerance in a tokenizer that splits names finely), one fitted line trades places with a longer line of
    the rest, the pair that fills the room best (the first such pair in pool order); in place."""
    if room <= slack:
        return
    best = None  # (tokens gained, position in fitting, position in rest)
    for k in range(len(fitting) - 1, max(len(fitting) - SWAP_WINDOW, 0) - 1, -1):
        for j, other in enumerate(rest):
            gain = costs[other] - costs[fitting[k]]
            if 0 < gain <= room and (best is None or gain > best[0]):
                best = (gain, k, j)
    if best is not None:
        _, k, j = best
        fitting[k], rest[j] = rest[j], fitting[k]


def question_text(kb: KnowledgeBase, question: Question, style: str) -> str:
    """The question as the prompt asks it: one question per branch (a list), or the branches as items of
    one joined question."""
    phrase = nested_phrase if style == "nested" else stepwise_phrase
    join = question.join
    if join.kind == "list":
        return render_question([ask(phrase(kb, branch), style) for branch in question.branches])
    items = [item_phrase(phrase(kb, branch), style) for branch in question.branches]
    plural = PLURALS[BY_ID[join.relation].source]
    if join.kind == "compare":
        closing = f"Which of them {COMPARE_RELATIONS[join.relation][join.direction]}?"
    else:
        closing = f"How many of them {COUNT_RELATIONS[join.relation].format(c=kb.names[join.target])}?"
    return render_joined(items, plural, closing, number=join.kind == "count")


def answer_of(kb: KnowledgeBase, question: Question, broken: bool = False) -> tuple[str, str, list[str]]:
    """(answer_format, answer JSON, answer items) of the question; NOT FOUND where its chain is broken."""
    join = question.join
    if broken:
        return "entity", json.dumps(NOT_FOUND), [NOT_FOUND]
    if join.kind == "compare":
        name = kb.names[join.answer]
        return "entity", json.dumps(name), [name]
    if join.kind == "count":
        return "integer", json.dumps(join.answer), [str(join.answer)]
    names = [kb.names[b.answer] for b in question.branches]
    if len(names) == 1:
        return "entity", json.dumps(names[0]), names
    return "entity_set", json.dumps(names), names


def _instance(config, config_name, seed, split, index, cell, kb, question_drawn, required, lines, order, layout,
              meter, prompt, question, setup, near_misses, reference, facts, decoys, balanced,
              broken=(None, None)) -> Instance:
    hop, missing = broken
    branches = question_drawn.branches
    subjects = {subject for _, subject in hops(question_drawn)}  # competitor_counts reads only their keys
    laid_out = set(order)
    present = {(facts[i].relation, facts[i].source) for i in order if i < len(facts) and facts[i].source in subjects}
    competitors = competitor_counts(question_drawn, present)
    if competitors != expected_competitors(question_drawn, config.competitors_per_hop, missing):
        raise RuntimeError(f"competitors per hop {competitors} miss the level {config.competitors_per_hop}; this is a "
                           "bug, please report it")
    join = question_drawn.join
    laid = [lines[i] for i in order]
    context = LINE_SEPARATOR.join(laid)
    position = {line: k for k, line in enumerate(order) if line < len(required)}
    evidence_chars = sorted(line_char_spans(laid, [position[i] for i in range(len(required))], LINE_SEPARATOR))
    encoding = meter.encode(prompt)
    context_start = len(prompt_head())
    if meter.reads_reference:
        evidence = measure_evidence(meter.reference_starts(prompt), context_start, len(context), evidence_chars)
    else:
        evidence = evidence_measures(*reference_line_tokens(order, reference, len(required)), len(context),
                                     evidence_chars)
    if abs(evidence.dispersion - cell.dispersion) > DISPERSION_TOLERANCE:
        raise RuntimeError(f"dispersion {evidence.dispersion:.4f} misses its target {cell.dispersion} by more than "
                           f"{DISPERSION_TOLERANCE}; this is a bug, please report it")
    nodes, edges = _reasoning_graph(kb, question_drawn, required, lines, None if missing is None else missing.key())
    answer_format, answer, answers = answer_of(kb, question_drawn, missing is not None)
    difficulty = {
        **lurch_difficulty(encoding, context_start, context, cell.context_tokens, evidence,
                           reasoning_depth(nodes, edges), (nodes, edges)),
        "depth": cell.depth,
        "facts": cell.facts,
        "dispersion_target": cell.dispersion,
        "branches": len(branches),
        "questions": len(branches) if join.kind == "list" else 1,
        "competitors_per_hop": config.competitors_per_hop,
        "competitor_lines": sum(1 for i in range(len(required), len(required) + decoys) if i in laid_out),
        "num_facts": len(order),
        "broken": missing is not None,
    }
    params = {
        "rng_seed": setup.rng_seed,
        "cell": cell._asdict(),
        "sample": setup.sample,
        "branches": [_branch_record(kb, b, join) for b in branches],
        "join": _join_record(kb, join),
        "layout": {"before": layout.before, "gaps": list(layout.gaps)},
        "near_misses": near_misses,
        **({"balanced": balanced} if balanced else {}),  # a count's balanced cities, a comparison's years (balance.py)
        **({"broken": _broken_record(kb, question_drawn, hop, missing)} if missing is not None else {}),
        "tokenizer": config.tokenizer,
        "chat_template": config.chat_template,
        "config": _config_dict(config),
    }
    return Instance(
        id=instance_id(config_name, split, index, FAMILY), family=FAMILY, task=config_name,
        config_name=config_name, split=split, index=index, seed=seed, family_version=VERSION,
        config_hash=setup.config_hash, source_hash=setup.source_hash, context=context, question=question,
        prompt=prompt, answer_format=answer_format, answer=answer, answer_text="; ".join(answers),
        options=[], answer_items=answers, evidence=list(evidence.spans),
        reasoning_graph={"nodes": nodes, "edges": edges}, difficulty=difficulty, params=canonical_json(params),
        pair_key=setup.pair_key,
    )


_CONFIG_DICTS: dict[int, tuple[ImplicitHopConfig, dict]] = {}


def _config_dict(config: ImplicitHopConfig) -> dict:
    """``config_to_dict`` of a config, once per config object (a run's instances share one; ``dataclasses.asdict``
    copies every field each time). Held with the config, so an id reused by another config gets its own; the
    instance only serialises it."""
    held = _CONFIG_DICTS.get(id(config))
    if held is None or held[0] is not config:
        if len(_CONFIG_DICTS) >= 16:  # configs of a long-lived process: not kept alive here
            _CONFIG_DICTS.clear()
        held = _CONFIG_DICTS[id(config)] = (config, config_to_dict(config))
    return held[1]


def _branch_record(kb: KnowledgeBase, branch: Branch, join: Join) -> dict:
    """A branch as stored: its relations (the join's lookup last, when there is one), the bridges (never named
    in the question) and, for a list, its answer."""
    if join.kind == "list":
        return {"start": kb.names[branch.start], "relations": list(branch.relations),
                "bridges": [kb.names[e] for e in branch.entities[1:-1]], "answer": kb.names[branch.answer]}
    value = kb.value(join.relation, branch.answer)
    return {"start": kb.names[branch.start], "relations": [*branch.relations, join.relation],
            "bridges": [kb.names[e] for e in branch.entities[1:]],
            "value": value if BY_ID[join.relation].target == YEAR else kb.names[value]}


def _broken_record(kb: KnowledgeBase, question: Question, hop: int, missing: Fact) -> dict:
    """Which hop breaks (0 = the start's own fact), the fact left out, and the answer the chain would have had."""
    return {"hop": hop, "relation": missing.relation, "subject": kb.names[missing.source],
            "value": kb.names[missing.target], "answer": kb.names[question.branches[0].answer]}


def _join_record(kb: KnowledgeBase, join: Join) -> dict:
    record: dict = {"kind": join.kind}
    if join.kind == "compare":
        record.update(relation=join.relation, direction=join.direction, answer=kb.names[join.answer])
    elif join.kind == "count":
        record.update(relation=join.relation, target=kb.names[join.target], answer=join.answer)
    return record


def _reasoning_graph(kb: KnowledgeBase, question: Question, required: list[Fact], lines: list[str],
                     missing: tuple[str, int] | None = None) -> tuple[list[dict], list[list[str]]]:
    """Evidence node per required fact, a lookup step per hop (each needs the previous hop's result), and
    the answer. A list's branches add no depth (it collects their ends); a comparison or a count looks up
    every end's year or city and then takes one more step over them all."""
    line_of = {fact.key(): k for k, fact in enumerate(required)}
    nodes = [{"id": f"e{k}", "kind": "evidence", "text": lines[k]} for k in range(len(required))]
    edges: list[list[str]] = []
    join = question.join
    last = "answer" if join.kind == "list" else "join"
    for b, branch in enumerate(question.branches):
        hops = list(zip(branch.relations, branch.entities, strict=False))
        if join.kind != "list":
            hops.append((join.relation, branch.answer))
        for hop, (relation, entity) in enumerate(hops):
            step = f"b{b}s{hop + 1}"
            nodes.append({"id": step, "kind": "step", "text": f"{relation} of branch {b} entity {hop}"})
            if (relation, entity) != missing:  # a broken hop's step has no evidence: the chain stops there
                edges.append([f"e{line_of[(relation, entity)]}", step])
            if hop:
                edges.append([f"b{b}s{hop}", step])
        if hops:
            edges.append([f"b{b}s{len(hops)}", last])
    if join.kind != "list":
        nodes.append({"id": "join", "kind": "step", "text": f"{join.kind} over the branches"})
        edges.append(["join", "answer"])
    nodes.append({"id": "answer", "kind": "answer", "text": "; ".join(answer_of(kb, question, missing is not None)[2])})
    return nodes, edges
