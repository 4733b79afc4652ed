"""ImplicitHop (WIP, issue 9): the knowledge base, the dispersion layout, the generator's axes, the solver."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from lurch_tasks.core.rng import StableRng
from lurch_tasks.families.implicit_hop.baselines import parse_fact, solve
from lurch_tasks.families.implicit_hop.config import ImplicitHopConfig, branch_lengths
from lurch_tasks.families.implicit_hop.generate import generate
from lurch_tasks.families.implicit_hop.kb import build_kb, render_fact
from lurch_tasks.families.implicit_hop.layout import disperse
from lurch_tasks.families.implicit_hop.schema import BY_ID, RELATIONS, YEAR


def test_values_are_balanced_and_every_fact_parses_back():
    kb = build_kb(240, seed=3)
    for relation in RELATIONS:
        if relation.target == YEAR:
            continue
        uses = Counter(f.target for f in kb.facts if f.relation == relation.id)
        assert max(uses.values()) - min(uses.values()) <= 1, relation.id  # no target favoured by the draw
    for fact in kb.facts:
        value = str(fact.target) if BY_ID[fact.relation].target == YEAR else kb.names[fact.target]
        assert parse_fact(render_fact(kb, fact)) == (fact.relation, kb.names[fact.source], value)
    assert len(set(kb.names)) == len(kb.names)


@pytest.mark.parametrize("depth, shape", [(8, (8,)), (7, (7, 1)), (5, (5, 3)), (3, (3, 3, 2)), (1, (1,) * 8)])
def test_shapes_hold_the_facts_fixed(depth, shape):
    assert branch_lengths(depth, 8) == shape and sum(shape) == 8 and max(shape) == depth


@pytest.mark.parametrize("lines", [40, 300, 3000])
def test_layout_meets_any_dispersion_target(lines):
    rng = StableRng(1)
    for target in (0.0, 0.1, 0.5, 0.9, 1.0):
        costs = [10 + rng.below(12) for _ in range(lines)]
        layout = disperse(costs, 8, target, rng)
        assert abs(layout.dispersion - target) <= 0.01
        assert layout.before + sum(layout.gaps) <= lines


@pytest.mark.parametrize("style", ["nested", "stepwise"])
def test_every_axis_is_met_on_the_instance_and_the_solver_answers(style):
    config = ImplicitHopConfig(depths=(1, 4, 8), dispersions=(0.0, 0.5, 1.0), context_tokens=(2048,),
                               num_samples=1, question_style=style)
    for index in range(config.size()):
        row = generate(config, 0, "test", index, "implicit_hop_test")
        difficulty = row.difficulty
        assert difficulty["reasoning_depth"] == difficulty["depth"]
        assert abs(difficulty["evidence_dispersion"] - difficulty["dispersion_target"]) <= 0.02
        assert 2048 - max(2048 // 100, 16) <= difficulty["prompt_tokens"] <= 2048
        assert solve(row.prompt) == "FINAL ANSWER: " + "; ".join(row.answer_items)
        for branch in json.loads(row.params)["branches"]:
            assert not any(bridge in row.question for bridge in branch["bridges"])  # bridges are never named


def test_generation_is_deterministic():
    config = ImplicitHopConfig(depths=(3,), context_tokens=(2048,), num_samples=2)
    first = [generate(config, 0, "test", i, "t").to_row() for i in range(config.size())]
    again = [generate(config, 0, "test", i, "t").to_row() for i in range(config.size())]
    assert first == again
