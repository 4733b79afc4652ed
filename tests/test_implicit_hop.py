"""ImplicitHop: the knowledge base, the dispersion layout, every axis on the instance, the joins, scoring, goldens."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from lurch_tasks.core.generation import iter_rows, resolve_task
from lurch_tasks.core.instance import content_hash
from lurch_tasks.core.registry import all_tasks, get_family
from lurch_tasks.core.rng import StableRng
from lurch_tasks.families.implicit_hop.audit import audit
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


@pytest.mark.parametrize("join, depths", [("list", (1, 4, 8)), ("compare", (3, 5, 7)), ("count", (2, 4, 8))])
@pytest.mark.parametrize("style", ["nested", "stepwise"])
def test_every_axis_is_met_on_the_instance_and_the_solver_answers(style, join, depths):
    config = ImplicitHopConfig(depths=depths, dispersions=(0.0, 0.5, 1.0), context_tokens=(2048,),
                               num_samples=1, question_style=style, join=join)
    for index in range(config.size()):
        row = generate(config, 0, "test", index, "implicit_hop_test")
        difficulty = row.difficulty
        assert difficulty["reasoning_depth"] == difficulty["depth"]
        assert abs(difficulty["evidence_dispersion"] - difficulty["dispersion_target"]) <= 0.02
        assert 2048 - max(2048 // 100, 16) <= difficulty["prompt_tokens"] <= 2048
        assert solve(row.prompt) == "FINAL ANSWER: " + "; ".join(row.answer_items)
        for branch in json.loads(row.params)["branches"]:
            assert not any(bridge in row.question for bridge in branch["bridges"])  # bridges are never named
        assert len(row.evidence) == difficulty["facts"]
        assert audit(row.to_row()) == []


@pytest.mark.parametrize("join, fmt", [("compare", "entity"), ("count", "integer")])
def test_joined_questions_take_one_more_step_and_keep_the_facts(join, fmt):
    """A comparison or a count adds one step after the longest branch, and its own lookup (a year, a city) is
    one of the required facts: depth and facts stay exactly as requested."""
    config = ImplicitHopConfig(depths=(3, 4), context_tokens=(2048,), num_samples=4, join=join)
    counts = Counter()
    for index in range(config.size()):
        row = generate(config, 0, "test", index, "t")
        params = json.loads(row.params)
        assert row.answer_format == fmt and params["join"]["kind"] == join
        lengths = [len(b["relations"]) for b in params["branches"]]
        assert sum(lengths) == row.difficulty["facts"] == 8 and max(lengths) + 1 == row.difficulty["depth"]
        assert row.difficulty["reasoning_depth"] == row.difficulty["depth"]
        if join == "compare":
            years = [b["value"] for b in params["branches"]]
            assert len(set(years)) == len(years)  # a comparison has one winner
            pick = min if params["join"]["direction"] == "earliest" else max
            winner = params["branches"][years.index(pick(years))]["bridges"][-1]
            assert json.loads(row.answer) == winner == params["join"]["answer"]
        else:
            target = params["join"]["target"]
            assert json.loads(row.answer) == sum(b["value"] == target for b in params["branches"])
            assert target in row.question
            counts[json.loads(row.answer)] += 1
    if join == "count":
        assert len(counts) >= 3  # counts come round: 0, 1, 2, ... (no modal answer)


def test_scoring_reads_names_counts_and_gives_partial_credit_for_part_of_a_name():
    from lurch_tasks.families.implicit_hop import score

    entity = {"answer_format": "entity", "answer_items": ["Gukrapir Foundation"]}
    assert score(entity, "... so FINAL ANSWER: **The Gukrapir Foundation**")["score"] == 1.0
    partial = score(entity, "FINAL ANSWER: Gukrapir")
    assert partial["score"] == 0.0 and partial["recall"] == 0.5 and partial["precision"] == 1.0
    assert score(entity, "FINAL ANSWER: Gukrapir Foundation; Ostrin Works")["score"] == 0.0  # a hedge is wrong
    count = {"answer_format": "integer", "answer_items": ["3"]}
    for output in ("FINAL ANSWER: 3", "FINAL ANSWER: three", "Final answer: **3** people", "The answer is 3."):
        assert score(count, output)["score"] == 1.0, output
    for output in ("FINAL ANSWER: 2", "FINAL ANSWER: 3.5", "", None, "FINAL ANSWER: none"):
        assert score(count, output)["score"] == 0.0, output
    assert score({"answer_format": "integer", "answer_items": ["0"]}, "FINAL ANSWER: none of them")["score"] == 1.0
    listed = {"answer_format": "entity_set", "answer_items": ["Ann Lee", "Bo Chen"]}
    assert score(listed, "FINAL ANSWER: Bo Chen; Ann Lee")["score"] == 1.0
    assert score(listed, "FINAL ANSWER: Bo Chen")["memory_drift"] == 0.75  # 1 - (2·1 - 1) / (2·2)


def test_a_bad_join_fails_fast_naming_the_field():
    from lurch_tasks.core.config import ConfigError

    with pytest.raises(ConfigError, match="^join: 'pairs'"):
        ImplicitHopConfig(join="pairs")
    with pytest.raises(ConfigError, match="^join: 'compare'"):
        ImplicitHopConfig(join="compare", distractors="near_miss")
    with pytest.raises(ConfigError, match="^depths: .*join 'compare'"):
        ImplicitHopConfig(join="compare", depths=(1, 2))


def test_generation_is_deterministic():
    config = ImplicitHopConfig(depths=(3,), context_tokens=(2048,), num_samples=2)
    first = [generate(config, 0, "test", i, "t").to_row() for i in range(config.size())]
    again = [generate(config, 0, "test", i, "t").to_row() for i in range(config.size())]
    assert first == again


GOLDEN = Path(__file__).parent / "golden" / "implicit_hop.json"
TASKS = [t.name for t in all_tasks() if t.family == "implicit_hop"]


def golden_fingerprints() -> dict:
    """SHA-256 of the first three instances of every registered ImplicitHop config."""
    return {
        "family_version": get_family("implicit_hop").version,
        "configs": {name: [content_hash(r) for r in iter_rows(task, range(min(3, task.config.size())))]
                    for name in TASKS if (task := resolve_task(name))},
    }


def test_golden_fingerprints():
    expected = json.loads(GOLDEN.read_text())
    assert golden_fingerprints() == expected, (
        "generated bytes changed: bump VERSION in lurch_tasks/families/implicit_hop/generate.py and regenerate "
        "with `python scripts/update_golden.py`")


def test_materialized_folder_loads_and_validates(tmp_path):
    """The builder, load_dataset on the Parquet folder (offline) and `lurch validate`'s row audit."""
    import datasets

    from lurch_tasks.dataset_builders._builder import builder_class
    from lurch_tasks.hub import materialize, validate_folder

    assert sorted(c.name for c in builder_class("implicit_hop").BUILDER_CONFIGS) == sorted(TASKS)
    overrides = {"context_tokens": [1024], "num_samples": 2, "depths": [1, 3, 8]}
    folder = materialize(["implicit_hop_depth"], tmp_path / "out", overrides=overrides, progress=False)
    loaded = datasets.load_dataset(str(folder), "implicit_hop_depth", split="test")
    task = resolve_task("implicit_hop_depth", overrides)
    assert [content_hash(dict(row)) for row in loaded] == [content_hash(r) for r in iter_rows(task, range(6))]
    assert validate_folder(folder, progress=False) == {
        "implicit_hop_depth": {"rows": 6, "problems": [], "problem_count": 0}}


def test_near_misses_are_in_the_prompt_and_one_letter_off():
    task = resolve_task("implicit_hop_near_miss", {"num_samples": 1})
    for row in iter_rows(task, range(task.config.size())):
        near = json.loads(row["params"])["near_misses"]
        assert near and all(n["near_miss"] in row["context"] and n["near_miss"] not in row["question"] for n in near)
        for n in near:
            assert len(n["near_miss"]) == len(n["bridge"]) and sum(
                a != b for a, b in zip(n["near_miss"], n["bridge"], strict=True)) == 1
        assert solve(row["prompt"]) == "FINAL ANSWER: " + "; ".join(row["answer_items"])


def test_neutral_filler_takes_its_share_and_changes_no_answer():
    from lurch_tasks.families.implicit_hop.filler import SENTENCES

    assert not [sentence for sentence in SENTENCES if parse_fact(sentence)]  # no fact template reads a filler line
    for join, depths in (("list", (3,)), ("compare", (4,)), ("count", (3,))):
        config = ImplicitHopConfig(depths=depths, dispersions=(0.0, 0.5, 1.0), join=join, filler=0.5, num_samples=1)
        for index in range(config.size()):
            row = generate(config, 0, "test", index, "t").to_row()
            lines = row["context"].split("\n")
            others = len(lines) - len(row["evidence"]) - row["difficulty"]["competitor_lines"]  # competitors are facts
            assert 0.4 <= sum(line in SENTENCES for line in lines) / others <= 0.6
            assert audit(row) == [] and 4096 - 40 <= row["difficulty"]["prompt_tokens"] <= 4096


def test_token_figures_are_a_real_pass():
    """In the reference tokenizer the fit sums line costs and the kept prompt's encoding is laid out from the one
    pass over its lines (``sums_over_lines``): every token figure of the row is what a pass over the prompt
    gives."""
    from lurch_tasks.core.context import measure_evidence
    from lurch_tasks.core.tokens import reference_counter
    from lurch_tasks.families.implicit_hop.prompt import prompt_head

    counter, head = reference_counter(), len(prompt_head())
    for name, overrides in (("implicit_hop_length", {"context_tokens": [1024, 8192], "num_samples": 2}),
                            ("implicit_hop_compare", {"num_samples": 1}), ("implicit_hop_depth", {"filler": 0.3}),
                            ("implicit_hop_near_miss", {"num_samples": 1}), ("implicit_hop_broken", {})):
        task = resolve_task(name, overrides)
        for row in iter_rows(task, range(0, task.config.size(), max(1, task.config.size() // 4))):
            starts = counter.token_starts(row["prompt"])
            evidence_chars = [(span["start"], span["end"]) for span in row["evidence"]]
            measured = measure_evidence(starts, head, len(row["context"]), evidence_chars)
            assert row["difficulty"]["prompt_tokens"] == len(starts)
            assert row["difficulty"]["context_tokens"] == measured.context_ref_tokens
            assert row["evidence"] == list(measured.spans)
            assert row["difficulty"]["evidence_dispersion"] == measured.dispersion


def test_render_facts_is_render_fact():
    from lurch_tasks.families.implicit_hop.kb import render_facts

    for seed in range(6):
        kb = build_kb(40 + 60 * seed, seed)
        assert render_facts(kb, list(kb.facts)) == [render_fact(kb, fact) for fact in kb.facts]
