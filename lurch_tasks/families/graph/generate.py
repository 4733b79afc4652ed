"""Graph reconstruction generator: sampled units + independent distractors, dispersed, fit to a budget."""

from __future__ import annotations

import json
from functools import lru_cache

from ...core.budget import settle_to_budget
from ...core.cells import setup_instance
from ...core.config import config_to_dict
from ...core.context import measure_evidence
from ...core.difficulty import reasoning_depth
from ...core.instance import Instance, instance_id
from ...core.rng import StableRng, canonical_json, derive_seed
from ...core.tokens import get_token_counter, reference_counter, within_budget_tolerance
from ...scoring.pairs import edge_item
from .config import Cell, GraphConfig
from .placement import place
from .prompt import PROFILE_SEPARATOR, render_prompt, render_question
from .sampling import Unit, independent_distractors, induced_edges, sample_units
from .world import VOCABULARY, World, build_world, decoy_sentence

FAMILY = "graph_reconstruction"
VERSION = "1.0.0"


def unit_parameter(config: GraphConfig) -> int:
    return {"edge": 0, "subgraph": config.star_degree, "clique": config.clique_size}[config.task]


@lru_cache(maxsize=8)
def world_units(config: GraphConfig, seed: int) -> tuple[World, tuple[Unit, ...]]:
    """The world of (config, seed) and its Algorithm 1 units, computed once per process."""
    world = build_world(config, seed)
    return world, tuple(sample_units(world.graph, config.task, unit_parameter(config)))


@lru_cache(maxsize=8)
def profile_costs(config: GraphConfig, seed: int) -> tuple[int, ...]:
    """Tokens of every profile with its separator, counted once per world and tokenizer."""
    world, _ = world_units(config, seed)
    counter = get_token_counter(config.tokenizer)
    return tuple(counter.count_many([p.text + PROFILE_SEPARATOR for p in world.profiles]))


def generate(config: GraphConfig, seed: int, split: str, index: int, config_name: str) -> Instance:
    """Instance ``index`` of ``split``: a pure function of (family, config, seed, split, index)."""
    setup = setup_instance(FAMILY, config, VOCABULARY, seed, split, index)
    cell: Cell = setup.cell
    cfg_hash, src_hash, rng_seed = setup.config_hash, setup.source_hash, setup.rng_seed
    rng = StableRng(rng_seed)
    world, units = world_units(config, seed)
    if len(units) < cell.connections:
        raise ValueError(f"world_size: the world holds only {len(units)} {config.task} units, fewer than "
                         f"connections={cell.connections}; allowed: a larger world_size")
    chosen = [tuple(rng.shuffled(unit)) for unit in rng.sample(list(units), cell.connections)]
    selected = [person for unit in chosen for person in unit]
    selected_set = set(selected)
    candidates = rng.shuffled([p for p in range(len(world.people)) if p not in selected_set])
    pool = independent_distractors(world.graph, selected, candidates)
    texts = {p: world.profiles[p].text for p in range(len(world.people))}
    decoys = _plant_decoys(config, world, selected, pool, rng, texts) if config.decoys == "near_miss" else []
    costs = list(profile_costs(config, seed))
    counter = get_token_counter(config.tokenizer)
    for entry in decoys:  # a decoy holder's profile grew: count it again, once
        costs[entry["person"]] = counter.count(texts[entry["person"]] + PROFILE_SEPARATOR)
    order, context_tokens, distractor_count = _fit(config, texts, chosen, pool, costs, cell.context_tokens, rng)
    in_prompt = set(order)
    decoys = [{k: v for k, v in d.items() if k != "person"} for d in decoys if d["person"] in in_prompt]
    return _instance(config, config_name, seed, split, index, cell, world, texts, chosen, order, context_tokens,
                     distractor_count, decoys, rng_seed, cfg_hash, src_hash)


def _plant_decoys(config: GraphConfig, world: World, selected: list[int], pool: list[int], rng: StableRng,
                  texts: dict[int, str]) -> list[dict]:
    """Near misses of this prompt's own gold cues (one digit off, another year, another kind of group),
    each appended to the profile of one of the first distractors, so the trap sits in the same prompt."""
    cue_ids = sorted({world.graph.edges[u, v]["cue"] for u, v in induced_edges(world.graph, selected)})
    taken = set(world.identifiers)
    planted = []
    for cue_id, holder in zip(cue_ids, pool, strict=False):
        made = decoy_sentence(world.cues[cue_id], world.people[holder], rng, taken)
        if made is None:
            continue
        sentence, key = made
        texts[holder] = f"{texts[holder]} {sentence}"
        planted.append({"person": holder, "holder": world.people[holder].name, "near_miss": key,
                        "imitates": world.cues[cue_id].key, "kind": world.cues[cue_id].kind})
    return planted


def _fit(config: GraphConfig, texts: dict[int, str], units: list[Unit], pool: list[int], costs: list[int],
         budget: int, rng: StableRng) -> tuple[list[int], int, int]:
    """Most distractors (in pool order) that keep the context within ``budget`` tokens."""
    counter = get_token_counter(config.tokenizer)
    fixed = sum(costs[p] for unit in units for p in unit)
    if fixed > budget:
        raise ValueError(f"context_tokens: {budget} is too small for {len(units)} {config.task} units "
                         f"({fixed} tokens of profiles); allowed: a larger target or fewer connections")
    # First fit in pool order: a profile too long for the remaining room is skipped, a shorter one may
    # still fit, so the context lands close to the target. Costs are cached, so this is arithmetic only.
    total, taken = fixed, []
    smallest = min((costs[p] for p in pool), default=0)
    for person in pool:
        if budget - total < smallest:
            break
        if total + costs[person] <= budget:
            total += costs[person]
            taken.append(person)
    taken = _close_gap(taken, pool, costs, budget - total, max(budget // 100, 16))
    placement_seed = derive_seed(rng.below(2**62), "placement")

    def arrange(n: int) -> list[int]:
        return place(units, taken[:n], config.placement, config.spread_start, config.spread_end,
                     StableRng(placement_seed))

    def render(n: int) -> str:
        return PROFILE_SEPARATOR.join(texts[p] for p in arrange(n))

    fitted = settle_to_budget(render, counter, len(taken), budget, 0)
    if not within_budget_tolerance(fitted.tokens, budget):
        raise ValueError(f"world_size: the world ran out of distractors at {fitted.tokens} of {budget} tokens; "
                         "allowed: a larger world_size (0 sizes it automatically)")
    return arrange(fitted.blocks), fitted.tokens, fitted.blocks


def _close_gap(taken: list[int], pool: list[int], costs: list[int], room: int, tolerance: int) -> list[int]:
    """Profiles come in ~50-200 token blocks, coarser than the tolerance: when the leftover ``room`` exceeds
    it, swap one taken distractor for an unused one just long enough to end within the tolerance."""
    if room <= tolerance or not taken:
        return taken
    used = set(taken)
    by_cost: dict[int, int] = {}
    for person in pool:  # the first unused profile of every cost, in pool order
        if person not in used:
            by_cost.setdefault(costs[person], person)
    for i in range(len(taken) - 1, -1, -1):
        for grow in range(room, max(room - tolerance, 1) - 1, -1):
            replacement = by_cost.get(costs[taken[i]] + grow)
            if replacement is not None:
                return taken[:i] + taken[i + 1:] + [replacement]
    return taken


def _instance(config: GraphConfig, config_name: str, seed: int, split: str, index: int, cell: Cell, world: World,
              profile_texts: dict[int, str], units: list[Unit], order: list[int], context_tokens: int,
              distractor_count: int, decoys: list[dict], rng_seed: int, cfg_hash: str, src_hash: str) -> Instance:
    people = world.people
    texts = [profile_texts[p] for p in order]
    context = PROFILE_SEPARATOR.join(texts)
    starts, offset = {}, 0
    for person, text in zip(order, texts, strict=True):
        starts[person] = offset
        offset += len(text) + len(PROFILE_SEPARATOR)
    gold = induced_edges(world.graph, order)
    cue_ids = sorted({world.graph.edges[u, v]["cue"] for u, v in gold})
    sentence_span = {}  # (person, cue id) -> char span in the context
    for person in order:
        for cue_id, start, end in world.profiles[person].cue_spans:
            sentence_span[(person, cue_id)] = (starts[person] + start, starts[person] + end)
    evidence_chars = sorted({sentence_span[(m, c)] for c in cue_ids for m in world.cues[c].members
                             if (m, c) in sentence_span})
    evidence = measure_evidence(context, evidence_chars, reference_counter())
    token_start = {(s["start"], s["end"]): s["token_start"] for s in evidence.spans}
    separations = [abs(token_start[sentence_span[(v, world.graph.edges[u, v]["cue"])]]
                       - token_start[sentence_span[(u, world.graph.edges[u, v]["cue"])]]) for u, v in gold]
    names = [people[p].name for p in order]
    gold_names = sorted(tuple(sorted((people[u].name, people[v].name))) for u, v in gold)
    nodes, edges = _reasoning_graph(gold, world, sentence_span)
    question = render_question(config.task, config.prompt_style)
    prompt = render_prompt(context, len(order), question)
    counter = get_token_counter(config.tokenizer)
    difficulty = {
        "context_tokens": context_tokens,
        "context_chars": len(context),
        "target_tokens": cell.context_tokens,
        "prompt_tokens": counter.count(prompt),
        "evidence_scope": evidence.scope,
        "evidence_dispersion": evidence.dispersion,
        "evidence_scope_chars": evidence.scope_chars,
        "evidence_dispersion_chars": evidence.dispersion_chars,
        "reasoning_depth": reasoning_depth(nodes, edges),
        "connections": cell.connections,
        "gold_edges": len(gold),
        "num_people": len(order),
        "unit_size": config.unit_size,
        "separation_tokens": sum(separations) / len(separations) if separations else 0.0,
        "max_separation_tokens": max(separations, default=0),
    }
    params = {
        "rng_seed": rng_seed,
        "cell": cell._asdict(),
        "sample": index // len(config.cells()),
        "task": config.task,
        "placement": config.placement,
        "decoy_mode": config.decoys,
        "world_seed": seed,
        "world_size": len(people),
        "units": [[people[p].name for p in unit] for unit in units],
        "people": names,
        "person_ids": order,
        "distractors": distractor_count,
        "gold_edges": [list(pair) for pair in gold_names],
        "edge_cues": [world.cues[world.graph.edges[u, v]["cue"]].kind for u, v in gold],
        "edge_separation_tokens": separations,
        "decoys": decoys,
        "tokenizer": config.tokenizer,
        "config": config_to_dict(config),
    }
    items = sorted(edge_item(a, b) for a, b in gold_names)
    return Instance(
        id=instance_id(config_name, split, index, FAMILY),
        family=FAMILY, task=config_name, config_name=config_name, split=split, index=index, seed=seed,
        family_version=VERSION, config_hash=cfg_hash, source_hash=src_hash,
        context=context, question=question, prompt=prompt, answer_format="edge_set",
        answer=json.dumps([list(pair) for pair in gold_names]),
        answer_text="\n".join(f"{a} -- {b}" for a, b in gold_names),
        options=[], answer_items=items, evidence=list(evidence.spans),
        reasoning_graph={"nodes": nodes, "edges": edges}, difficulty=difficulty, params=canonical_json(params),
    )


def _reasoning_graph(gold: list[tuple[int, int]], world: World,
                     sentence_span: dict[tuple[int, int], tuple[int, int]]) -> tuple[list[dict], list[list[str]]]:
    """Per gold edge: read both cue sentences (parallel lookups), then match them (depth 2)."""
    nodes = [{"id": "answer", "kind": "answer", "text": f"{len(gold)} connections"}]
    edges: list[list[str]] = []
    seen: set[str] = set()
    for i, (u, v) in enumerate(gold):
        cue = world.cues[world.graph.edges[u, v]["cue"]]
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
