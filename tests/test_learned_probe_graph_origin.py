"""The learned surface probes of graph reconstruction and Find the Origin (issue 27): what ``read`` sees of a row,
that a decoded perfect guess scores 1, and that a leak nobody wrote a strategy for fails the audit."""

from __future__ import annotations

import dataclasses
import importlib
import json
from functools import lru_cache
from itertools import combinations

import numpy as np
import pytest

from lurch_tasks.core.generation import iter_rows, resolve_task
from lurch_tasks.core.probe import Candidate, CandidateTable, held_out_probabilities
from lurch_tasks.core.registry import get_family
from lurch_tasks.core.shortcuts import FAIL, OK, AuditEntry, run_audit
from lurch_tasks.families.find_origin.shortcuts import view as origin_view
from lurch_tasks.families.graph.shortcuts import view as graph_view

GRAPH = get_family("graph_reconstruction")
WORLD_MODULE = importlib.import_module("lurch_tasks.families.graph.world")
GENERATE_MODULE = importlib.import_module("lurch_tasks.families.graph.generate")
SHORTCUTS_MODULE = importlib.import_module("lurch_tasks.families.graph.shortcuts")
PROMPT_MODULE = importlib.import_module("lurch_tasks.families.graph.prompt")
ORIGIN = get_family("find_the_origin")


@lru_cache(maxsize=8)
def _rows(name: str, overrides: str, count: int) -> tuple[dict, ...]:
    task = resolve_task(name, json.loads(overrides))
    return tuple(iter_rows(task, range(min(count, task.config.size()))))


def _one_hot(item) -> list[float]:
    return [1.0 if c.gold else 0.0 for c in item.candidates]


def _learned_line(rows, family, paper_faithful=False):
    lines = run_audit(rows, None, paper_faithful, [], [], family.score, family.guess, learned=family.learned_probe)
    (line,) = [line for line in lines if line.strategy.startswith("learned_probe")]
    return line


# --- graph --------------------------------------------------------------------------------------------------


def test_graph_read_is_every_pair_of_the_prompts_people():
    for row in _rows("memory_drift_subgraph", json.dumps({"context_tokens": [2048, 4096], "num_samples": 1}), 4):
        item = GRAPH.learned_probe.read(row)
        if not row["answer_items"]:  # a zero-gold control: nothing to learn, "none" is right there
            assert item is None
            continue
        names = [p.name for p in graph_view(row["prompt"]).profiles]
        assert names == json.loads(row["params"])["people"]
        assert len(item.candidates) == len(names) * (len(names) - 1) // 2
        assert {c.answer for c in item.candidates} == {" -- ".join(sorted(p)) for p in combinations(names, 2)}
        gold = {" -- ".join(sorted(pair)) for pair in json.loads(row["answer"])}
        assert {c.answer for c in item.candidates if c.gold} == gold
        assert len({len(c.features) for c in item.candidates}) == 1
        assert item.group == row["pair_key"] and item.model == "pairs"
        # Decoding the truth gives a perfect answer; decoding nothing still names one pair (the top one).
        assert GRAPH.score(row, GRAPH.learned_probe.decode(item, _one_hot(item)))["score"] == 1.0
        assert GRAPH.learned_probe.decode(item, [0.0] * len(item.candidates)).count(" -- ") == 1


def test_graph_pair_features_are_symmetric_and_never_read_identifiers():
    row = _rows("memory_drift_edge", json.dumps({"context_tokens": [2048], "num_samples": 1}), 1)[0]
    item = GRAPH.learned_probe.read(row)
    # Rewriting every identifier (digits) leaves the features unchanged: they read templates, not values.
    scrambled = {**row, "prompt": row["prompt"].translate(str.maketrans("0123456789", "5678901234")),
                 "context": row["context"].translate(str.maketrans("0123456789", "5678901234"))}
    assert [c.features for c in GRAPH.learned_probe.read(scrambled).candidates] == [c.features for c in item.candidates]


def _scalar_pairs(row):
    """The pairs as the probe computed them before they were packed: one pair_features call per pair."""
    v = graph_view(row["prompt"])
    gold = {frozenset(pair) for pair in json.loads(row["answer"])}
    people = SHORTCUTS_MODULE._person_features(row["context"], v)
    paragraphs = row["context"].split(PROMPT_MODULE.PROFILE_SEPARATOR)
    holders = {p.surname: {k for k, text in enumerate(paragraphs) if p.surname in text} for p in people}
    return [Candidate(" -- ".join(sorted((a.name, b.name))), frozenset((a.name, b.name)) in gold,
                      SHORTCUTS_MODULE.pair_features(a, b, len(people), len(holders[a.surname] & holders[b.surname])))
            for a, b in combinations(people, 2)]


@pytest.mark.parametrize("name, tokens", [("memory_drift_edge", 8192), ("memory_drift_subgraph", 4096),
                                          ("memory_drift_clique", 2048), ("memory_drift_edge_decoys", 2048)])
def test_graph_packed_pairs_are_the_scalar_pairs_bit_for_bit(name, tokens):
    """A row keeps its people, not its pairs (issue 29: 2.4 MB per audited row); the pairs rebuilt from them
    are the scalar code's, float for float, and survive the audit record's JSON."""
    rows = _rows(name, json.dumps({"context_tokens": [tokens], "num_samples": 2}), 6)
    items = []
    for row in rows:
        item = GRAPH.learned_probe.read(row)
        if item is None:
            continue
        reference = _scalar_pairs(row)
        table = item.candidates
        assert isinstance(table, CandidateTable) and len(table) == len(reference)
        expected = np.array([c.features for c in reference], dtype=float)
        assert table.matrix().tobytes() == expected.tobytes()
        assert list(table.golds()) == [c.gold for c in reference]
        assert list(table) == reference and table[-1] == reference[-1]
        back = AuditEntry.from_json(json.loads(json.dumps(AuditEntry(0, item, None).to_json()))).measure
        assert back == item and back.candidates.matrix().tobytes() == expected.tobytes()
        items.append(item)
    assert items
    # the fit on packed tables is the fit on the Candidate objects
    expanded = [dataclasses.replace(item, candidates=tuple(item.candidates)) for item in items]
    assert held_out_probabilities(items) == held_out_probabilities(expanded)


def _clear_graph_caches():
    WORLD_MODULE._build_world.cache_clear()
    GENERATE_MODULE._world_units.cache_clear()
    GENERATE_MODULE._profile_costs.cache_clear()
    GENERATE_MODULE._reference_profile_starts.cache_clear()


def test_graph_probe_catches_a_planted_padding_leak(monkeypatch):
    """Without solo details only linked people carry cue-like sentences: no strategy reads the pair's two counts
    together, yet the fitted probe finds the gold pair and the audit fails."""
    monkeypatch.setattr(WORLD_MODULE, "DETAIL_SENTENCES", (0, 0))
    _clear_graph_caches()
    try:
        task = resolve_task("memory_drift_edge", {"connections": [1], "context_tokens": [2048], "num_samples": 24})
        line = _learned_line(list(iter_rows(task, range(24))), GRAPH)
    finally:
        _clear_graph_caches()
    assert line.status == FAIL and line.score > line.chance + 0.25, line


def test_graph_probe_at_chance_on_the_default_placement_slice():
    rows = _rows("memory_drift_edge", json.dumps({"connections": [1], "context_tokens": [2048],
                                                  "num_samples": 24}), 24)
    line = _learned_line(rows, GRAPH)
    assert line.status == OK, line


# --- Find the Origin --------------------------------------------------------------------------------------


def test_origin_read_is_every_chain_start_with_one_gold():
    for row in _rows("find_the_origin_random", json.dumps({"context_tokens": [1024]}), 6):
        item = ORIGIN.learned_probe.read(row)
        v = origin_view(row["prompt"])
        targets = {b for _, b in v.pairs}
        starts = {a for a, _ in v.pairs if a not in targets}
        assert {c.answer for c in item.candidates} == starts
        assert [c.answer for c in item.candidates if c.gold] == [json.loads(row["answer"])]
        assert len({len(c.features) for c in item.candidates}) == 1 and item.group == row["pair_key"]
        assert ORIGIN.score(row, ORIGIN.learned_probe.decode(item, _one_hot(item)))["score"] == 1.0


def _lengthen_origin(row: dict, suffix: str) -> dict:
    """A planted leak: the origin word (everywhere, answer included) is longer than any other word."""
    origin = json.loads(row["answer"])
    longer = origin + suffix
    swap = {key: row[key].replace(f'"{origin}"', f'"{longer}"') for key in ("prompt", "context")}
    return {**row, **swap, "answer": json.dumps(longer), "answer_items": [longer]}


def test_origin_probe_catches_a_planted_length_leak():
    rows = [_lengthen_origin(row, "zzzzzzzzzz")
            for row in _rows("find_the_origin_random", json.dumps({"context_tokens": [1024]}), 56)]
    line = _learned_line(rows, ORIGIN)
    assert line.status == FAIL and line.score > 0.5, line
    clean = _learned_line(_rows("find_the_origin_random", json.dumps({"context_tokens": [1024]}), 56), ORIGIN)
    assert clean.status == OK, clean

