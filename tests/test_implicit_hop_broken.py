"""ImplicitHop's broken chains (issue 28 item 3): a seeded, exact share of each cell's questions lose one required
fact (its competitors and everything else kept), the honest answer is NOT FOUND, and every check that guards the
intact questions (solver, row audit, competitors per hop, shortcut audit, scoring, lm-eval, report) knows it.

The checks read the prompt (facts parsed with the templates), not the generator's bookkeeping, where they can."""

from __future__ import annotations

import json
from collections import Counter

import pandas as pd
import pytest

from lurch_tasks.analysis.report import Options, not_found_table
from lurch_tasks.core.config import ConfigError
from lurch_tasks.core.generation import generate_row, iter_rows, resolve_task
from lurch_tasks.core.registry import get_family
from lurch_tasks.families.implicit_hop import score
from lurch_tasks.families.implicit_hop.audit import audit
from lurch_tasks.families.implicit_hop.baselines import facts_of, parse_fact, solve
from lurch_tasks.families.implicit_hop.competitors import same_signature
from lurch_tasks.families.implicit_hop.config import ImplicitHopConfig
from lurch_tasks.families.implicit_hop.schema import BY_ID
from lurch_tasks.families.implicit_hop.shortcuts import SHORTCUTS
from lurch_tasks.harness.tasks import process_results
from lurch_tasks.harness.yamls import group_yaml, task_yaml
from lurch_tasks.scoring.not_found import NOT_FOUND, says_not_found

# two cells (dispersion 0 and 0.5) of 8 samples at depth 3, a quarter broken: 2 per cell
SMALL = {"num_samples": 8, "broken": 0.25, "context_tokens": [1024], "dispersions": [0.0, 0.5], "depths": [3],
         "facts": [3]}


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    task = resolve_task("implicit_hop_broken", SMALL)
    return list(iter_rows(task, range(task.config.size())))


def _broken(row: dict) -> dict | None:
    return json.loads(row["params"]).get("broken")


def test_the_share_is_exact_in_every_cell_and_recorded(rows):
    per_cell = Counter(row["difficulty"]["dispersion_target"] for row in rows if row["difficulty"]["broken"])
    assert per_cell == {0.0: 2, 0.5: 2}  # the same at every level of the axis
    task = resolve_task("implicit_hop_broken")  # 16 of 128 at depth 5: the hops take turns (4, 3, 3, 3, 3)
    hops = Counter(_broken(generate_row(task, i))["hop"] for i in range(task.config.size())
                   if task.config.broken_samples() and generate_row(task, i)["difficulty"]["broken"])
    assert sum(hops.values()) == 16 and sorted(hops.values()) == [3, 3, 3, 3, 4]
    assert {row["difficulty"]["questions"] for row in rows} == {1}  # questions per prompt do not move
    for row in rows:
        broken = _broken(row)
        assert bool(broken) == row["difficulty"]["broken"]
        if broken:
            assert 0 <= broken["hop"] < row["difficulty"]["depth"]
            assert row["answer_items"] == [NOT_FOUND]
            assert len(row["evidence"]) == row["difficulty"]["facts"] - 1
    # the draw is a pure function of (config, seed, split, index)
    again = generate_row(resolve_task("implicit_hop_broken", SMALL), rows[5]["index"])
    assert again["prompt"] == rows[5]["prompt"] and again["params"] == rows[5]["params"]


def test_the_left_out_fact_is_absent_and_the_solver_says_not_found_exactly_there(rows):
    for row in rows:
        broken = _broken(row)
        facts = facts_of(row["prompt"])
        assert solve(row["prompt"]) == "FINAL ANSWER: " + "; ".join(row["answer_items"])
        assert audit(row) == []
        if broken:
            assert (broken["relation"], broken["subject"]) not in facts
            assert broken["value"] != broken["answer"] or broken["hop"] == row["difficulty"]["depth"] - 1


def test_a_broken_hop_shows_as_many_lines_of_its_signature_as_every_other_hop(rows):
    """The spare competitor in the left-out fact's place: a reader counting a subject's lines of the hop's signature
    (gold + level competitors = 3) cannot tell the broken hop."""
    for row in rows:
        facts = facts_of(row["prompt"])
        branch = json.loads(row["params"])["branches"][0]
        counts = [sum((r, subject) in facts for r in (relation, *same_signature(relation)))
                  for relation, subject in zip(branch["relations"], [branch["start"], *branch["bridges"]],
                                               strict=True)]
        assert counts == [3] * len(counts), (row["index"], counts)


def _restore(row: dict, line: str) -> dict:
    context = row["context"] + "\n" + line
    return dict(row, context=context, prompt=row["prompt"].replace(row["context"], context))


def test_the_audit_catches_a_fact_that_is_not_really_missing(rows):
    row = next(r for r in rows if _broken(r))
    broken = _broken(row)
    stated = BY_ID[broken["relation"]].facts[0].format(s=broken["subject"], t=broken["value"])
    assert parse_fact(stated)[:2] == (broken["relation"], broken["subject"])
    problems = audit(_restore(row, stated))
    assert any("left-out fact" in p for p in problems)
    assert any("still reaches" in p for p in problems) or broken["hop"] < row["difficulty"]["depth"] - 1
    # an unparsed sentence naming the subject beside its value is an alias of the fact too
    alias = f"Records link {broken['subject']} with {broken['value']}."
    assert any("states the broken hop" in p for p in audit(_restore(row, alias)))


def test_the_audit_catches_a_missing_spare_competitor(rows):
    row = next(r for r in rows if _broken(r))
    broken = _broken(row)
    lines = row["context"].split("\n")
    spare = next(k for k, line in enumerate(lines) if (parsed := parse_fact(line))
                 and parsed[1] == broken["subject"] and parsed[0] in same_signature(broken["relation"]))
    context = "\n".join(lines[:spare] + lines[spare + 1:])
    thinned = dict(row, context=context, prompt=row["prompt"].replace(row["context"], context))
    assert any("same-signature competitors" in p for p in audit(thinned))


@pytest.mark.parametrize("output", ["FINAL ANSWER: NOT FOUND", "FINAL ANSWER: NOT_FOUND", "final answer: not found.",
                                    "FINAL ANSWER: Cannot be determined", "FINAL ANSWER: No answer",
                                    "FINAL ANSWER: unknown", "FINAL ANSWER: **Not found**",
                                    "Thinking...\nThe chain breaks at the second hop.\nFINAL ANSWER: not stated",
                                    "FINAL ANSWER: The answer is not found in the context"])
def test_not_found_in_any_reasonable_wording_scores_1_on_a_broken_question_only(rows, output):
    broken = next(r for r in rows if _broken(r))
    intact = next(r for r in rows if not _broken(r))
    assert says_not_found(output)
    assert score(broken, output)["score"] == 1.0 and score(broken, output)["not_found_accuracy"] == 1.0
    assert score(intact, output)["score"] == 0.0 and score(intact, output)["not_found_accuracy"] is None


def test_any_entity_scores_0_on_a_broken_question(rows):
    broken = next(r for r in rows if _broken(r))
    would_be = _broken(broken)["answer"]
    for output in (f"FINAL ANSWER: {would_be}", "not found yet... FINAL ANSWER: " + would_be, ""):
        assert not says_not_found(output)
        assert score(broken, output) == {"score": 0.0, "memory_drift": 1.0, "precision": 0.0, "recall": 0.0,
                                         "f1": 0.0, "not_found_accuracy": 0.0, "truncated": float(output == ""),
                                         "unparsed": float(output == "")}


def test_lm_eval_reports_not_found_accuracy_over_the_broken_docs_only(rows):
    broken = next(r for r in rows if _broken(r))
    intact = next(r for r in rows if not _broken(r))
    assert process_results(broken, ["FINAL ANSWER: NOT FOUND"], "implicit_hop_broken")["not_found_accuracy"] == 1.0
    assert process_results(intact, [solve(intact["prompt"])], "implicit_hop_broken")["not_found_accuracy"] is None
    metrics = {m["metric"]: m for m in task_yaml(resolve_task("implicit_hop_broken"))["metric_list"]}
    assert metrics["not_found_accuracy"]["aggregation"].endswith("bin_mean")
    assert metrics["not_found_accuracy"]["higher_is_better"] is True
    family = get_family("implicit_hop")
    group = group_yaml("implicit_hop", ["implicit_hop_depth"], family.version)
    assert "not_found_accuracy" not in {m["metric"] for m in group["aggregate_metric_list"]}  # NaN elsewhere


def test_lurch_report_tables_not_found_accuracy():
    frame = pd.DataFrame({"model": ["m"] * 4, "task": ["implicit_hop_broken"] * 4, "score": [1.0, 0.0, 1.0, 0.0],
                          "broken": [True, True, False, False]})
    table = not_found_table(frame, Options(reps=20))
    assert table[["model", "task", "n", "not_found_accuracy"]].values.tolist() == [["m", "implicit_hop_broken", 2,
                                                                                   0.5]]
    assert not_found_table(frame.drop(columns="broken"), Options(reps=20)).empty


def test_always_not_found_never_beats_chance_and_scores_0_on_intact_configs(rows):
    always = next(s for s in SHORTCUTS if s.name == "always_not_found")
    assert score(rows[0], always.answer(rows[0]["prompt"], None))["score"] == float(bool(_broken(rows[0])))
    intact = generate_row(resolve_task("implicit_hop_depth", {"context_tokens": [1024], "num_samples": 1}), 0)
    assert score(intact, always.answer(intact["prompt"], None))["score"] == 0.0
    shares = [s for s in SHORTCUTS if s.name in ("always_not_found", "thin_start")]
    assert len(shares) == 2 and all(s.expected_when is None for s in shares)  # judged on every config


def test_thin_start_reads_a_start_that_lost_its_line(rows):
    """The attack the spare competitor defeats: with the left-out fact's place empty, a broken first hop leaves
    its start one line short, and ``thin_start`` answers NOT FOUND there; with the spare in place it walks on."""
    thin = next(s for s in SHORTCUTS if s.name == "thin_start")
    starts = [r for r in rows if _broken(r) and _broken(r)["hop"] == 0]
    assert starts  # the fixture's seeded draw breaks a first hop
    row, broken = starts[0], _broken(starts[0])
    assert thin.answer(row["prompt"], 2) != f"FINAL ANSWER: {NOT_FOUND}"
    lines = row["context"].split("\n")
    spare = next(k for k, line in enumerate(lines) if (p := parse_fact(line)) and p[1] == broken["subject"]
                 and p[0] in same_signature(broken["relation"]))
    thinned = row["prompt"].replace(row["context"], "\n".join(lines[:spare] + lines[spare + 1:]))
    assert thin.answer(thinned, 2) == f"FINAL ANSWER: {NOT_FOUND}"


@pytest.mark.parametrize("knobs", [{"join": "compare", "depths": (3,), "facts": (8,)},
                                   {"depths": (3,), "facts": (3,), "competitors_per_hop": 3},
                                   {"depths": (3,), "facts": (6,)}, {"depths": (2,), "facts": (2,)},
                                   {"depths": (3,), "facts": (3,), "competitors_per_hop": 2,
                                    "distractors": "near_miss"}])
def test_broken_chains_need_one_chain_of_three_facts_and_a_spare_competitor(knobs):
    with pytest.raises(ConfigError):
        ImplicitHopConfig(broken=0.25, **({"competitors_per_hop": 2} | knobs))
    assert ImplicitHopConfig(depths=(3,), facts=(3,), competitors_per_hop=2, broken=0.25).broken_samples() == 2


def test_the_broken_knob_at_0_leaves_every_existing_world_as_it_was():
    """``broken`` is out of the config hash at its default: implicit_hop_depth keeps 0.5.0's hash (pinned), so its
    rng seeds and worlds do not move; a broken config hashes apart."""
    from lurch_tasks.core.config import config_hash

    assert config_hash(resolve_task("implicit_hop_depth").config) == (
        "4d8dff44122bad44c92ad06f3ad5673b6dd35e3a3f2f89ffa8ced01f50cbd4fb")
    base = ImplicitHopConfig(depths=(3,), facts=(3,), competitors_per_hop=2)
    assert config_hash(base) != config_hash(ImplicitHopConfig(depths=(3,), facts=(3,), competitors_per_hop=2,
                                                              broken=0.125))
