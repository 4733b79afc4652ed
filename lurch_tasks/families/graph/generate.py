"""Graph reconstruction generator: sampled units + independent distractors, dispersed, fit to a budget."""

from __future__ import annotations

import json
from functools import lru_cache
from itertools import islice

import numpy as np

from ...core.budget import PromptMeter, prompt_meter, settle_to_budget
from ...core.cells import setup_instance
from ...core.config import config_to_dict
from ...core.context import laid_end_to_end, lurch_difficulty, measure_evidence
from ...core.instance import Instance, instance_id
from ...core.rng import StableRng, canonical_json, derive_seed
from ...core.tokens import get_token_counter, reference_counter, within_budget_tolerance
from ...scoring.names import edge_item
from .config import DEFAULT_PROMPT_STYLE, Cell, GraphConfig
from .counting import PromptSums, frame_parts, prompt_sums, sums_exactly
from .placement import PlacementKnobs, place
from .prompt import PROFILE_SEPARATOR, prompt_head, render_prompt, render_question
from .sampling import Unit, independent_distractors, induced_edges, sample_units
from .tables import ProfileTokens, profile_cost_table, profile_starts_table, profile_token_table, stored_units
from .world import (
    VOCABULARY,
    Profile,
    World,
    WorldSpec,
    _build_world,
    decoy_parts,
    decoy_slot,
    fill_sentence,
    has_solo,
    with_decoy,
    world_spec,
)

FAMILY = "graph_reconstruction"
NO_CONNECTIONS = "none"  # answer_text of a zero-gold control; the scorer accepts any way of saying none
VERSION = "2.5.0"  # 2.5.0: difficulty records reasoning_width and step_count
# Knobs that studies compare: left out of the instance seed, so the world, the sampled units and the
# distractors stay the same when only one of them changes (matched pairs).
# zero_gold only appends control docs: its grid docs are those of the config without it.
COMPARED_KNOBS = ("placement", "spread_start", "spread_end", "separation", "separation_jitter", "decoys",
                  "prompt_style", "zero_gold")


def unit_parameter(config: GraphConfig) -> int:
    return {"edge": 0, "subgraph": config.star_degree, "clique": config.clique_size}[config.task]


def placement_knobs(config: GraphConfig) -> PlacementKnobs:
    return PlacementKnobs(config.placement, config.spread_start, config.spread_end, config.separation,
                          config.separation_jitter)


def world_units(config: GraphConfig, seed: int) -> tuple[World, tuple[Unit, ...]]:
    """The world of (config, seed) and its Algorithm 1 units, computed once per process and world."""
    return _world_units(world_spec(config), unit_parameter(config), seed)


@lru_cache(maxsize=8)
def _world_units(spec: WorldSpec, parameter: int, seed: int) -> tuple[World, tuple[Unit, ...]]:
    world = _build_world(spec, seed)
    return world, stored_units(spec, parameter, seed, lambda: sample_units(world.graph, spec.task, parameter))


def profile_costs(config: GraphConfig, seed: int) -> tuple[tuple[int, ...], ProfileTokens | None]:
    return _profile_costs(world_spec(config), config.tokenizer, seed)


@lru_cache(maxsize=8)
def _profile_costs(spec: WorldSpec, tokenizer: str, seed: int) -> tuple[tuple[int, ...], ProfileTokens | None]:
    """In-prompt tokens of every profile, counted once per world and tokenizer: the fit's estimates and, where
    prompts can be counted from them (``counting.sums_exactly``), each profile's exact tokens anywhere in a prompt."""
    world = _build_world(spec, seed)
    texts = [p.text for p in world.profiles]
    counter = get_token_counter(tokenizer)
    if texts and sums_exactly(counter, texts):
        return profile_token_table(texts, counter)
    return profile_cost_table(texts, counter), None


@lru_cache(maxsize=8)
def _reference_profile_starts(spec: WorldSpec, seed: int) -> tuple[np.ndarray, ...]:
    """Reference-token starts of every profile, relative to it, from one pass over the joined world."""
    world = _build_world(spec, seed)
    return profile_starts_table([p.text for p in world.profiles], reference_counter())


def context_reference_starts(spec: WorldSpec, seed: int, world: World, profiles: list[Profile],
                             order: list[int]) -> np.ndarray:
    """Reference-token starts of the context, for a prompt the model reads in another tokenizer, without a
    second pass over it: each profile's own starts, laid end to end. cl100k splits text into words before
    merging, and a profile starts with a capitalised name right after a newline and ends with a full stop
    before one, so no token crosses from one profile into the next: its tokens are the same wherever it
    stands (tests compare this with a pass over the prompt). A decoy holder's rewritten profile is
    tokenized on its own."""
    cached = _reference_profile_starts(spec, seed)
    starts, lengths = [], []
    for person in order:
        profile = profiles[person]
        if profile is world.profiles[person]:
            starts.append(cached[person])
        else:
            starts.append(reference_counter().token_starts(profile.text + PROFILE_SEPARATOR))
        lengths.append(len(profile.text) + len(PROFILE_SEPARATOR))
    return laid_end_to_end(starts, lengths)


def generate(config: GraphConfig, seed: int, split: str, index: int, config_name: str) -> Instance:
    """Instance ``index`` of ``split``: a pure function of (family, config, seed, split, index)."""
    setup = setup_instance(FAMILY, config, VOCABULARY, seed, split, index, COMPARED_KNOBS)
    cell: Cell = setup.cell
    cfg_hash, src_hash, rng_seed = setup.config_hash, setup.source_hash, setup.rng_seed
    control = cell.connections == 0
    matched = config.matched_index(index) if control else index
    if control:  # a negative control draws what its matched grid doc draws: same world, units and distractor pool
        rng_seed = setup_instance(FAMILY, config, VOCABULARY, seed, split, matched, COMPARED_KNOBS).rng_seed
    rng = StableRng(rng_seed)
    # One world per (seed, split): train and test never share people or gold units.
    world_seed = derive_seed("graph-world", seed, split)
    world, units = world_units(config, world_seed)
    drawn = config.matched_density(cell.context_tokens) if control else cell.connections
    if len(units) < drawn:
        raise ValueError(f"world_size: the world holds only {len(units)} {config.task} units, fewer than "
                         f"connections={drawn}; allowed: a larger world_size")
    chosen = [tuple(rng.shuffled(unit)) for unit in rng.sample(list(units), drawn)]
    # The cues decoys imitate: a grid doc's gold cues; a control's, those of its matched units that a kept member
    # still holds (near misses of a partner-less cue: a pair that looks linked and is not).
    imitated = _unit_cues(world, chosen)
    selected = [person for unit in chosen for person in unit]
    selected_set = set(selected)
    candidates = rng.shuffled([p for p in range(len(world.people)) if p not in selected_set])
    # A control's pool is its matched doc's (drawn before the partners go): the same distractors in the same order.
    pool = independent_distractors(world.neighbours, selected, candidates)
    if control:
        chosen = _unlinked_members(chosen, world.neighbours)
        selected = [person for unit in chosen for person in unit]
        imitated = [c for c in imitated if set(selected).intersection(world.cues[c].members)]
    # Decoys are drawn whatever the mode and only rendered under near_miss; the fit counts a holder's
    # longer version, so both modes keep the same people (matched pairs).
    meter = prompt_meter(config.tokenizer, config.chat_template)
    planned = _plan_decoys(world, imitated, pool, StableRng(derive_seed(rng_seed, "decoys")))
    profiles = list(world.profiles)  # as rendered: near_miss holders get their decoy version below
    estimates, exact = profile_costs(config, world_seed)
    costs = list(estimates)
    fit_costs = list(costs)
    over_count: dict[int, tuple[int, int]] = {}  # holder -> tokens the fit over-counts (plain, near_miss)
    # A decoy replaced one sentence inside the holder's profile: its cost moves as much (one batch of counts).
    sentence_tokens = meter.counter.count_many([" " + entry[key] for entry in planned
                                                for key in ("sentence", "replaced")])
    for k, entry in enumerate(planned):
        holder = entry["person"]
        decoy_cost = costs[holder] + sentence_tokens[2 * k] - sentence_tokens[2 * k + 1]
        fit_costs[holder] = max(costs[holder], decoy_cost)
        over_count[holder] = (fit_costs[holder] - costs[holder], fit_costs[holder] - decoy_cost)
        if config.decoys == "near_miss":
            profiles[holder] = entry["profile"]
    texts = [profile.text for profile in profiles]
    sums = None if exact is None else prompt_sums(
        meter, world.profiles[0].text, exact,
        {entry["person"]: texts[entry["person"]] for entry in planned} if config.decoys == "near_miss" else {})
    # The context is fit to the prompt of the default style, so the prompt styles of a matched pair share it
    # (prompt_style is a compared knob); another style's request is longer by a few dozen tokens (prompt_tokens).
    fit_question = render_question(config.task, DEFAULT_PROMPT_STYLE)
    # The frame is measured around one profile (costs are in-prompt costs): the world's first, as written.
    frame = frame_tokens(meter.counter.name, meter.chat_template, len(selected), fit_question,
                         world.profiles[0].text, costs[0])
    # Controls: the kept members go anywhere (``random``): a lone member under ``scatter`` would lean to the front.
    knobs = PlacementKnobs("random") if control else placement_knobs(config)
    order, distractor_count = _fit(config, texts, chosen, pool, fit_costs, cell.context_tokens,
                                   derive_seed(rng_seed, "placement"), over_count, meter, fit_question, frame, knobs,
                                   sums)
    in_prompt = set(order)
    decoys = [{k: v for k, v in d.items() if k not in ("person", "profile", "sentence", "replaced")} for d in planned
              if d["person"] in in_prompt] if config.decoys == "near_miss" else []
    return _instance(config, config_name, seed, world_seed, split, index, cell, world, profiles, chosen, order,
                     meter, distractor_count, decoys, rng_seed, cfg_hash, src_hash, setup.pair_key,
                     matched if control else None, sums)


def _unlinked_members(units: list[Unit], neighbours) -> list[Unit]:
    """Members of the matched doc's units, in order, kept while no kept person is linked to them: a pair keeps
    one person, a clique one, a star its centre or its leaves. Their cue sentences stay, their partners go, as
    with the distractors' own links to people outside the prompt."""
    kept: list[int] = []
    for unit in units:
        for person in unit:
            if not any(other in neighbours[person] for other in kept):
                kept.append(person)
    return [(person,) for person in kept]


DECOY_HOLDER_CHOICES = 6  # unused distractors tried per decoy, for the one whose length changes least


def _unit_cues(world: World, units: list[Unit]) -> list[int]:
    """Ids of the cues linking members of the units (a grid doc's gold cues), sorted."""
    selected = [person for unit in units for person in unit]
    return sorted({world.cue_of(u, v) for u, v in induced_edges(world.neighbours, selected)})


def _plan_decoys(world: World, cue_ids: list[int], pool: list[int], rng: StableRng) -> list[dict]:
    """Near misses of the given cues (a grid doc: its gold cues; one digit off, another year, another kind of group),
    each written with the cue kind's own templates in place of a solo detail of one of the first
    distractors, so the trap sits in the same prompt and looks like any other detail. Among the next few
    distractors, the holder is the one whose profile length changes least: the decoy replaces the detail
    closest to it in characters, and the holder with the smallest such gap wins (ties: pool order)."""
    taken = set(world.identifiers)
    planted: list[dict] = []
    # Each cue looks at the first few holders left and takes one: no more than this many are ever looked at.
    solo_holders = (p for p in pool if has_solo(world.profiles[p]))
    holders = list(islice(solo_holders, DECOY_HOLDER_CHOICES + len(cue_ids)))
    for cue_id in cue_ids:
        parts = decoy_parts(world.cues[cue_id], rng, taken)
        if parts is None:
            continue
        template, values, key = parts
        slot_seed = rng.below(2**62)  # one draw per cue, so the slot of a holder does not depend on the others
        best = None
        for holder in holders[:DECOY_HOLDER_CHOICES]:
            sentence = fill_sentence(template, world.people[holder], values)
            slot, change = decoy_slot(world.profiles[holder], sentence, StableRng(derive_seed(slot_seed, holder)))
            if best is None or change < best[0]:
                best = (change, holder, sentence, slot)
            if change == 0:
                break
        if best is None:
            break
        _, holder, sentence, slot = best
        profile = with_decoy(world.profiles[holder], sentence, slot)
        holders.remove(holder)
        planted.append({"person": holder, "profile": profile, "sentence": sentence,
                        "replaced": world.profiles[holder].sentences[slot][1], "holder": world.people[holder].name,
                        "near_miss": key, "imitates": world.cues[cue_id].key, "kind": world.cues[cue_id].kind})
    return planted


def frame_tokens(tokenizer: str, chat_template: bool, num_people: int, question: str, probe: str,
                 probe_cost: int) -> int:
    """Tokens of a prompt beyond its profiles (instructions, question, chat template, merges at the list's
    ends), measured on a prompt of one profile whose in-prompt cost is ``probe_cost``; once per world and
    question, not per instance (in cl100k exactly what it is in every prompt: a profile starts and ends
    where the tokenizer splits anyway)."""
    return frame_parts(tokenizer, chat_template, num_people, question, probe, probe_cost)[0]


MAX_FIT_ROUNDS = 4  # refits with the measured frame; one usually suffices (the frame moves by a token or two)


def _fit(config: GraphConfig, texts: list[str], units: list[Unit], pool: list[int], costs: list[int],
         budget: int, placement_seed: int, over_count: dict[int, tuple[int, int]], meter: PromptMeter,
         question: str, frame: int, knobs: PlacementKnobs, sums: PromptSums | None) -> tuple[list[int], int]:
    """The prompt's people in order, with the most distractors (in pool order) that keep the whole prompt
    within ``budget`` tokens, and how many distractors that is.

    ``costs`` are in-prompt profile costs; everything else in the prompt (instructions, question, chat
    template, merges at the list's ends) is the *frame*, estimated by ``frame`` (see ``frame_tokens``),
    then measured from the rendered prompt and refit until it stops moving. ``over_count``: per decoy
    holder, tokens by which ``costs`` over-count its rendered profile in either decoy mode; the gap is
    closed that much tighter, so both modes land within the tolerance. ``sums``: count prompts from the
    profiles' tokens (``counting``) instead of rendering and tokenizing them; the same counts."""
    members = [p for unit in units for p in unit]
    fixed = sum(costs[p] for p in members)

    def count(taken: list[int], n: int) -> int:
        """Tokens of the prompt of the units and the first ``n`` distractors taken."""
        if sums is not None:
            return sums.count([*members, *taken[:n]], len(members) + n, question)
        order = place(units, taken[:n], knobs, StableRng(placement_seed))
        return meter.count(render_prompt(PROFILE_SEPARATOR.join(texts[p] for p in order), len(order), question))

    if fixed + frame > budget:
        raise ValueError(f"context_tokens: {budget} is too small for {len(units)} {config.task} units "
                         f"({fixed + frame} tokens with the instructions); allowed: a larger target or fewer "
                         "connections")
    tolerance = max(budget // 100, 16)
    taken: list[int] = []
    for _ in range(MAX_FIT_ROUNDS):
        taken = _select(pool, costs, budget - fixed - frame, tolerance, over_count)
        tokens = count(taken, len(taken))
        measured = tokens - fixed - sum(costs[p] for p in taken)
        if within_budget_tolerance(tokens, budget) or measured == frame:
            break
        frame = measured
    fitted = settle_to_budget(lambda n: n, lambda n: count(taken, n), len(taken), budget, 0, len(taken))
    if not within_budget_tolerance(fitted.tokens, budget):
        room = budget - fixed - frame
        if room < min((costs[p] for p in pool), default=0):
            raise ValueError(f"context_tokens: the {len(units)} {config.task} units and instructions take "
                             f"{fixed + frame} of {budget} tokens in {meter.counter.name}, leaving less room than "
                             "any distractor profile needs; allowed: a larger target or fewer connections")
        if len(taken) == len(pool):
            raise ValueError(f"world_size: the world ran out of distractors at {fitted.tokens} of {budget} tokens; "
                             "allowed: a larger world_size (0 sizes it automatically)")
        raise RuntimeError(f"the prompt fit ended at {fitted.tokens} of {budget} tokens (tolerance {tolerance}) "
                           f"with {meter.counter.name}; this is a bug, please report it")
    return place(units, taken[:fitted.blocks], knobs, StableRng(placement_seed)), fitted.blocks


def _select(pool: list[int], costs: list[int], room: int, tolerance: int,
            over_count: dict[int, tuple[int, int]]) -> list[int]:
    """Distractors whose costs sum to at most ``room`` and, when the pool allows, within ``tolerance`` of it.

    First fit in pool order: a profile too long for the remaining room is skipped, a shorter one may still fit.
    Costs are cached, so this is arithmetic only."""
    total, taken = 0, []
    smallest = min((costs[p] for p in pool), default=0)
    for person in pool:
        if room - total < smallest:
            break
        if total + costs[person] <= room:
            total += costs[person]
            taken.append(person)
    for _ in range(3):  # a replacement may bring in a decoy holder, whose slack tightens the tolerance
        held = [over_count[p] for p in taken if p in over_count]  # the few decoy holders taken
        slack = max(sum(h[0] for h in held), sum(h[1] for h in held))
        left = room - sum(costs[p] for p in taken)
        if left <= max(tolerance - slack, 0):
            break
        swapped = _close_gap(taken, pool, costs, left, max(tolerance - slack, 0))
        if swapped == taken:
            break
        taken = swapped
    return taken


def _close_gap(taken: list[int], pool: list[int], costs: list[int], room: int, tolerance: int) -> list[int]:
    """Profiles come in ~100-250 token blocks, coarser than the tolerance: when the leftover ``room`` exceeds
    it, replace none or one taken distractor (the latest first) by one or two unused ones so that the added
    tokens land in [room - tolerance, room]. Deterministic: pool order breaks every tie."""
    if room <= tolerance or not taken:
        return taken
    used = set(taken)
    by_cost: dict[int, list[int]] = {}
    for person in pool:  # the first two unused profiles of every cost, in pool order
        if person not in used and len(by_cost.setdefault(costs[person], [])) < 2:
            by_cost[costs[person]].append(person)
    distinct = sorted(by_cost)

    def fill(low: int, high: int) -> list[int] | None:
        """One or two unused profiles whose costs sum into [low, high]."""
        for total in range(high, low - 1, -1):
            if total in by_cost:
                return [by_cost[total][0]]
        for first in distinct:
            if first > high:
                break
            for total in range(high, max(low, first) - 1, -1):
                second = total - first
                if second < first:
                    break
                if second in by_cost and (second != first or len(by_cost[first]) > 1):
                    return [by_cost[first][0], by_cost[second][-1 if second == first else 0]]
        return None

    added = fill(room - tolerance, room)
    if added:
        return taken + added
    for i in range(len(taken) - 1, -1, -1):
        freed = room + costs[taken[i]]
        added = fill(freed - tolerance, freed)
        if added:
            return taken[:i] + taken[i + 1:] + added
    return taken


def _instance(config: GraphConfig, config_name: str, seed: int, world_seed: int, split: str, index: int, cell: Cell,
              world: World,
              profiles: list[Profile], units: list[Unit], order: list[int], meter: PromptMeter,
              distractor_count: int, decoys: list[dict], rng_seed: int, cfg_hash: str, src_hash: str,
              pair_key: str, matched: int | None, sums: PromptSums | None) -> Instance:
    people = world.people
    texts = [profiles[p].text for p in order]
    context = PROFILE_SEPARATOR.join(texts)
    starts, offset = {}, 0
    for person, text in zip(order, texts, strict=True):
        starts[person] = offset
        offset += len(text) + len(PROFILE_SEPARATOR)
    gold = induced_edges(world.neighbours, order)
    cue_ids = sorted({world.cue_of(u, v) for u, v in gold})
    sentence_span = {}  # (person, cue id) -> char span in the context
    for person in order:
        for cue_id, start, end in profiles[person].cue_spans:
            sentence_span[(person, cue_id)] = (starts[person] + start, starts[person] + end)
    # Evidence: the gold cue sentences and the name header of every gold person (answers need full names,
    # and surnames repeat across the prompt).
    gold_people = sorted({p for edge in gold for p in edge})
    name_spans = {(starts[p], starts[p] + len(people[p].name)) for p in gold_people}
    evidence_chars = sorted({sentence_span[(m, c)] for c in cue_ids for m in world.cues[c].members
                             if (m, c) in sentence_span} | name_spans)
    question = render_question(config.task, config.prompt_style)
    prompt = render_prompt(context, len(order), question)
    context_start = len(prompt_head(len(order)))
    if sums is not None:  # the prompt's and its context's tokens summed, the evidence offsets laid end to end
        encoding = sums.encoding(prompt, order, question, len(context))
        reference = context_reference_starts(world_spec(config), world_seed, world, profiles, order)
        evidence = measure_evidence(reference, 0, len(context), evidence_chars)
    # One encoding of the prompt (the fit's own, for the default style) gives its exact length, the
    # context's tokens and the evidence offsets.
    elif meter.reads_reference:
        encoding = meter.encode(prompt)
        evidence = measure_evidence(meter.reference_starts(prompt), context_start, len(context), evidence_chars)
    else:
        encoding = meter.encode(prompt)
        reference = context_reference_starts(world_spec(config), world_seed, world, profiles, order)
        evidence = measure_evidence(reference, 0, len(context), evidence_chars)
    token_start = {(s["start"], s["end"]): s["token_start"] for s in evidence.spans}
    separations = [abs(token_start[sentence_span[(v, world.cue_of(u, v))]]
                       - token_start[sentence_span[(u, world.cue_of(u, v))]]) for u, v in gold]
    names = [people[p].name for p in order]
    gold_names = sorted(tuple(sorted((people[u].name, people[v].name))) for u, v in gold)
    nodes, edges = _reasoning_graph(gold, world, sentence_span)
    difficulty = {
        **lurch_difficulty(encoding, context_start, context, cell.context_tokens, evidence,
                           reasoning_graph_depth(gold), (nodes, edges)),
        "connections": cell.connections,
        "gold_edges": len(gold),
        "num_people": len(order),
        "unit_size": config.unit_size,
        "separation_tokens": sum(separations) / len(separations) if separations else 0.0,
        "min_separation_tokens": min(separations, default=0),
        "max_separation_tokens": max(separations, default=0),
    }
    params = {
        "rng_seed": rng_seed,
        "cell": cell._asdict(),
        "sample": config.sample_of(index),
        "task": config.task,
        "placement": config.placement if matched is None else "random",
        "placement_seed": derive_seed(rng_seed, "placement"),
        "decoy_mode": config.decoys,
        "world_seed": world_seed,
        "world_size": len(people),
        "units": [[people[p].name for p in unit] for unit in units] if matched is None else [],
        "people": names,
        "person_ids": order,
        "distractors": distractor_count,
        "gold_edges": [list(pair) for pair in gold_names],
        "edge_cues": [world.cues[world.cue_of(u, v)].kind for u, v in gold],
        "edge_separation_tokens": separations,
        "decoys": decoys,
        "tokenizer": config.tokenizer,
        "chat_template": config.chat_template,
        "config": config_fields(config),
    }
    if matched is not None:  # a negative control: whom it shares people with, and the partner-less members kept
        params["matched_index"] = matched
        params["kept_members"] = [people[p].name for unit in units for p in unit]
    items = sorted(edge_item(a, b) for a, b in gold_names)
    return Instance(
        id=instance_id(config_name, split, index, FAMILY),
        family=FAMILY, task=config_name, config_name=config_name, split=split, index=index, seed=seed,
        family_version=VERSION, config_hash=cfg_hash, source_hash=src_hash,
        context=context, question=question, prompt=prompt, answer_format="edge_set",
        answer=json.dumps([list(pair) for pair in gold_names]),
        answer_text="\n".join(f"{a} -- {b}" for a, b in gold_names) or NO_CONNECTIONS,
        options=[], answer_items=items, evidence=list(evidence.spans),
        reasoning_graph={"nodes": nodes, "edges": edges}, difficulty=difficulty, params=canonical_json(params),
        pair_key=pair_key,
    )


@lru_cache(maxsize=32)
def config_fields(config: GraphConfig) -> dict:
    """``config_to_dict``, once per config rather than per instance (params only serialize it)."""
    return config_to_dict(config)


def reasoning_graph_depth(gold: list[tuple[int, int]]) -> int:
    """``core.difficulty.reasoning_depth`` of ``_reasoning_graph(gold, ...)``, without a topological sort per
    instance: every gold edge is evidence -> look-up step -> match step -> answer, two steps deep; no gold edge
    leaves the answer node alone (tests compare the two)."""
    return 2 if gold else 0


def _reasoning_graph(gold: list[tuple[int, int]], world: World,
                     sentence_span: dict[tuple[int, int], tuple[int, int]]) -> tuple[list[dict], list[list[str]]]:
    """Per gold edge: read both cue sentences (parallel lookups), then match them (depth 2)."""
    nodes = [{"id": "answer", "kind": "answer", "text": f"{len(gold)} connections"}]
    edges: list[list[str]] = []
    seen: set[str] = set()
    for i, (u, v) in enumerate(gold):
        cue = world.cues[world.cue_of(u, v)]
        for person in (u, v):
            evidence_id = f"e{person}c{cue.id}"
            if evidence_id not in seen:
                seen.add(evidence_id)
                nodes.append({"id": evidence_id, "kind": "evidence", "text": f"{cue.kind} cue of person {person}"})
            nodes.append({"id": f"l{i}p{person}", "kind": "step", "text": f"look up the {cue.kind} detail"})
            edges.append([evidence_id, f"l{i}p{person}"])
            edges.append([f"l{i}p{person}", f"m{i}"])
        nodes.append({"id": f"m{i}", "kind": "step", "text": f"match on {cue.key}"})
        edges.append([f"m{i}", "answer"])
    return nodes, edges
