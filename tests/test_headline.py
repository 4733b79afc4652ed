"""The headline (issue 28): chance-normalised per-doc scores, equal weight per task / category inside a family and per
family in the umbrella, the family tasks that make lm-eval weigh families equally, and the reasoning profile."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from lurch_evals_one_process import lurch_evals

from lurch_tasks.core.generation import generate_row, resolve_task
from lurch_tasks.core.registry import all_tasks, get_family
from lurch_tasks.harness.family_tasks import (
    build_family_docs,
    family_of,
    family_task_name,
    family_tasks,
    interleave,
    member_task,
    members,
)
from lurch_tasks.harness.lm_eval_cli import lm_eval_argv
from lurch_tasks.harness.metadata import GEN_PROFILES, parse_metadata
from lurch_tasks.harness.tasks import build_docs, process_results
from lurch_tasks.harness.yamls import render_all
from lurch_tasks.scoring import headline
from lurch_tasks.scoring.reasoning import strip_doc_output

ROOT = Path(__file__).resolve().parents[1]
LURCH = str(Path(sys.executable).with_name("lurch"))


def _chance_script():
    spec = importlib.util.spec_from_file_location("chance_table", ROOT / "scripts" / "chance_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_balanced_mean_weighs_every_key_equally():
    items = [["a", 1.0], ["a", 1.0], ["a", 1.0], ["b", 0.0], None, ["c", math.nan]]
    assert headline.balanced_mean(items) == pytest.approx(0.5)  # not 3/4: key a has three docs, b one
    assert math.isnan(headline.balanced_mean([None, None]))


def test_normalized_score_is_zero_at_chance_and_one_when_perfect():
    hop = generate_row(resolve_task("implicit_hop_count"), 3)
    level = headline.chance(hop)
    assert 0.0 < level < 1.0  # a count question can be guessed: the random baseline's measured rate
    assert headline.normalized(hop, level) == pytest.approx(0.0) and headline.normalized(hop, 1.0) == 1.0
    assert headline.normalized(hop, 0.0) == pytest.approx(-level / (1 - level))
    recon = next(generate_row(resolve_task("recon_conflict"), i) for i in range(40)
                 if generate_row(resolve_task("recon_conflict"), i)["answer_format"] == "mcq_single")
    # RECON's penalised MCQ: a uniform pick scores 0 exactly, so the score is already chance-normalised (and a
    # wrong answer stays below chance)
    assert headline.chance(recon) == 0.0 and headline.normalized(recon, -0.2) == -0.2
    assert headline.balance_key(recon) == "conflict" and headline.balance_key(hop) == "implicit_hop_count"


def test_chance_table_covers_the_suite_at_the_current_versions():
    table = headline.chance_table()
    assert table["versions"] == {f.name: f.version for f in family_tasks()}, "rerun scripts/chance_table.py"
    script = _chance_script()
    assert set(table["tasks"]) == set(script.table_tasks())
    # every in-suite doc gets a chance level (an exact one, or the table's for its task and slot)
    for task in all_tasks():
        if task.in_suite:
            for index in (0, 7):
                assert 0.0 <= headline.chance(generate_row(resolve_task(task.name), index)) < 1.0, task.name


def test_chance_table_values_are_the_random_baselines_mean():
    """A slice recomputed here lands near the committed (full-grid) value: the table is what the script measures."""
    script = _chance_script()
    committed = headline.chance_table()["tasks"]["implicit_hop_count"]
    sliced = script.task_chance("implicit_hop_count", rows=96, seeds=2)
    assert sliced.keys() == committed.keys()
    for slot, value in sliced.items():
        assert abs(value - committed[slot]) < 0.12, slot


def test_family_tasks_hold_every_member_doc_interleaved():
    assert interleave([[1, 2, 3], ["a"], [True, False]]) == [1, "a", True, 2, False, 3]
    family = get_family("graph_reconstruction")
    name = family_task_name(family)
    assert family_of(name) is family and family_of("memory_drift_edge") is None
    metadata = {"max_seq_lengths": [2048], "num_samples": 1}
    docs = build_family_docs(name, **metadata)["test"].to_list()
    separate = {task: build_docs(task, **metadata)["test"].to_list() for task in members(family)}
    assert sorted(d["id"] for d in docs) == sorted(d["id"] for rows in separate.values() for d in rows)
    assert [d["task"] for d in docs[:3]] == members(family)  # round robin: any prefix is balanced
    assert all(member_task(name, d) == d["task"] for d in docs)
    assert member_task(name, {**docs[0], "task": "find_the_origin"}) is None
    # --limit N (max_docs): each member generates its share only
    limited = build_family_docs(name, **metadata, max_docs=3)["test"].to_list()
    assert [d["id"] for d in limited] == [d["id"] for d in docs[:3]]


def test_the_umbrella_averages_the_five_family_tasks_without_size_weights():
    import yaml

    files = render_all()
    umbrella = yaml.safe_load(files["_memory_drift.yaml"])
    assert umbrella["task"] == [family_task_name(f) for f in family_tasks()] and len(umbrella["task"]) == 5
    weights = {m["metric"]: m["weight_by_size"] for m in umbrella["aggregate_metric_list"]}
    assert weights["headline"] is False and weights["score"] is False
    assert "memory_drift" not in {m["metric"] for m in umbrella["aggregate_metric_list"] if m["metric"] == "headline"}
    for family in family_tasks():  # family groups: equal weight per member task
        group = yaml.safe_load(files[f"_{family.group}.yaml"])
        assert {m["metric"]: m["weight_by_size"] for m in group["aggregate_metric_list"]}["headline"] is False
    # a task's YAML declares headline with the balanced aggregation, and lists at most 8 plain (unbinned) metrics
    # besides the detail ones the bins switch turns on
    task = yaml.safe_load(files["find_the_origin.yaml"].replace("!function ", ""))
    listed = [m["metric"] for m in task["metric_list"]]
    assert listed[0] == "headline" and task["metric_list"][0]["aggregation"].endswith("balanced_mean")


def test_process_results_of_a_family_task_reports_every_control_metric():
    from lurch_tasks.harness import tasks as glue

    family = get_family("graph_reconstruction")
    scorer = getattr(glue, f"process_results_{family_task_name(family)}")
    doc = generate_row(resolve_task("memory_drift_edge", {"context_tokens": [2048], "num_samples": 1}), 0)
    out = scorer(doc, ["CONNECTIONS: none"])
    assert out["false_positive_rate"] is None and not any("@" in key for key in out)  # a grid doc: no FPR, no bins


def test_reasoning_profile_raises_the_budget_and_keeps_the_window_guard():
    config_type = type(resolve_task("find_the_origin").config)
    assert parse_metadata(config_type, {"gen_profile": "reasoning"}).max_gen_toks == GEN_PROFILES["reasoning"]
    assert parse_metadata(config_type, {"gen_profile": "reasoning", "max_gen_toks": 4000}).max_gen_toks == 4000
    with pytest.raises(ValueError, match="gen_profile: 'thinking' is not allowed; allowed: default, reasoning"):
        parse_metadata(config_type, {"gen_profile": "thinking"})
    # 16k of thinking does not fit beside an 8k prompt in a 20k window: that length is skipped, 4k is kept
    docs = build_docs("find_the_origin", max_seq_lengths=[4096, 8192], num_samples=1, gen_profile="reasoning",
                      max_model_len=20480)["test"]
    assert {d["difficulty"]["target_tokens"] for d in docs} == {4096}
    assert {d["gen_budget"] for d in docs} == {GEN_PROFILES["reasoning"]}
    argv = lm_eval_argv(["--model", "lurch-solver", "--tasks", "memory_drift", "--reasoning"])
    assert argv[argv.index("--gen_kwargs") + 1] == "max_gen_toks=16384"
    assert json.loads(argv[argv.index("--metadata") + 1])["gen_profile"] == "reasoning"
    kept = lm_eval_argv(["--tasks", "x", "--reasoning", "--gen_kwargs", "temperature=0,max_gen_toks=999"])
    assert kept[kept.index("--gen_kwargs") + 1] == "temperature=0,max_gen_toks=999"  # the user's budget wins
    merged = lm_eval_argv(["--tasks", "x", "--reasoning", "--gen_kwargs", "temperature=0"])
    assert merged[merged.index("--gen_kwargs") + 1] == "temperature=0,max_gen_toks=16384"


def test_an_unreadable_output_that_fills_the_budget_is_truncated():
    graph = get_family("graph_reconstruction")
    doc = {**generate_row(resolve_task("memory_drift_edge"), 0), "gen_budget": 64}
    rambling = "Let me think about who knows whom. " * 40  # far more than 64 tokens, no pair listed
    assert strip_doc_output(doc, rambling).at_budget
    scored = graph.score(doc, rambling)
    assert scored["truncated"] == 1.0 and scored["unparsed"] == 1.0
    short = graph.score(doc, "I am not sure.")
    assert short["truncated"] == 0.0 and short["unparsed"] == 1.0  # unreadable, but it stopped on its own
    answered = graph.score(doc, rambling + "\n" + graph.solve(doc["prompt"]))
    assert answered["truncated"] == 0.0 and answered["score"] == 1.0  # a long output that answered was not cut off
    assert process_results(doc, [rambling])["truncated"] == 1.0
    assert graph.score({**doc, "gen_budget": 4096}, rambling)["truncated"] == 0.0  # well short of this budget


@pytest.mark.slow
def test_lurch_eval_memory_drift_headline_is_the_mean_of_the_five_families(tmp_path):
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    expectations = (("lurch-solver", 1.0), ("lurch-random", None))
    # both runs in one process (lurch_evals_one_process): lm-eval is imported once
    lurch_evals([["--model", model, "--tasks", "memory_drift", "--limit", "48", "--output_path", str(tmp_path / model)]
                 for model, _ in expectations], env=env, timeout=900)
    for model, expected in expectations:
        out = tmp_path / model
        results = json.loads(sorted(out.rglob("results_*.json"))[-1].read_text())["results"]
        families = [results[family_task_name(f)]["headline,none"] for f in family_tasks()]
        assert len(families) == 5
        assert results["memory_drift"]["headline,none"] == pytest.approx(sum(families) / 5)
        if expected is not None:
            assert families == [expected] * 5
        else:  # at chance on the normalised scale (48 docs per family: a loose bound)
            assert abs(results["memory_drift"]["headline,none"]) < 0.1, families


@pytest.mark.slow
def test_an_umbrella_run_logged_under_family_tasks_validates_and_reports_member_tasks(tmp_path):
    """`lurch eval --tasks memory_drift` logs its samples under the five family tasks: the board validates them
    (coverage and claims per family task, docs per member) and `lurch report` rows name the member tasks."""
    from lurch_tasks import __version__
    from lurch_tasks.analysis.frame import load_runs
    from lurch_tasks.analysis.runs import find_runs
    from lurch_tasks.leaderboard.validate import validate

    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    out = tmp_path / "solver"
    run = subprocess.run([LURCH, "eval", "--model", "lurch-solver", "--tasks", "memory_drift", "--limit", "9",
                          "--log_samples", "--output_path", str(out)], capture_output=True, text=True, env=env,
                         timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    assert sorted(p.name.split("_2026")[0].split("_20")[0] for p in out.rglob("samples_*.jsonl")) == sorted(
        f"samples_{family_task_name(f)}" for f in family_tasks())
    submission = {"schema_version": 1, "model": {"name": "lurch-solver", "revision": __version__},
                  "run": {"lm_eval_model": "lurch-solver", "model_args": "", "chat_template": False,
                          "generation": {}},
                  "date": "2026-12-03", "lurch_tasks_version": __version__, "tasks": ["memory_drift"], "seed": 0,
                  "subset": True, "contact": "maintainers@example.org"}
    (out / "submission.json").write_text(json.dumps(submission))
    verdict = validate(out)
    assert verdict.ok, verdict.problems
    frame = load_runs(find_runs([out])).frame
    assert set(frame["task"]) <= {t.name for t in all_tasks() if t.in_suite} and len(frame) == 45  # 9 per family
    assert (frame["normalized_score"] == 1.0).all()
    results = next(out.rglob("results_*.json"))  # a claim that differs from the logged outputs is caught
    document = json.loads(results.read_text())
    document["results"]["family_recon"]["score,none"] = 0.5
    results.write_text(json.dumps(document))
    assert any(p.startswith("family_recon: results claim score = 0.5") for p in validate(out).problems)
