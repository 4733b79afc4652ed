"""lm-eval integration through the real TaskManager and CLI, with our registered baseline models."""

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lurch_evals_one_process import lurch_evals

from lurch_tasks.core.config import ConfigError
from lurch_tasks.core.generation import generate_row, resolve_task
from lurch_tasks.core.instance import content_hash, instance_part
from lurch_tasks.core.registry import all_tasks, get_family
from lurch_tasks.harness.metadata import model_argument_names, parse_metadata
from lurch_tasks.harness.tasks import bin_mean, build_docs, process_results
from lurch_tasks.harness.yamls import render_all, yaml_dir

BIN = Path(sys.executable).parent
LURCH = str(BIN / "lurch")
REPO_YAMLS = Path(__file__).resolve().parents[1] / "yaml_tasks"


def test_committed_yamls_match_the_registry():
    expected = render_all()
    on_disk = {p.name: p.read_text(encoding="utf-8") for p in REPO_YAMLS.glob("*.yaml")}
    assert on_disk == expected, "yaml_tasks/ drifted from the registry: run `python scripts/generate_yamls.py`"


def test_task_manager_loads_every_task_and_group():
    from lm_eval.tasks import TaskManager

    manager = TaskManager(include_path=str(yaml_dir()), metadata={"max_seq_lengths": [2048], "num_samples": 1})
    names = [t.name for t in all_tasks()] + ["find_the_origin_suite", "memory_drift_graph", "memory_drift"]
    for name in names:
        assert name in manager.all_subtasks + manager.all_groups, name
    # find_the_origin_depth's widest shapes need ~2.4k tokens: its registered floor raises 2048 to 3072 (one warning)
    loaded = manager.load([t.name for t in all_tasks()])["tasks"]
    assert len(loaded) == len(all_tasks())
    for name, task in loaded.items():
        docs = list(task.test_docs())
        assert docs and all(doc["prompt"] for doc in docs), name


def test_lm_eval_docs_are_the_generated_instances():
    metadata = {"max_seq_lengths": [384, 512], "num_samples": 2, "version": "1.0.0", "dtype": "float32"}
    docs = build_docs("find_the_origin", **metadata)["test"]
    task = resolve_task("find_the_origin", {"context_tokens": (384, 512), "num_samples": 2})
    assert len(docs) == task.config.size()
    for index in (0, 5, len(docs) - 1):
        assert content_hash(instance_part(dict(docs[index]))) == content_hash(generate_row(task, index))
        assert docs[index]["gen_budget"] == get_family("find_the_origin").max_gen_toks(task.config)  # the run's


def test_metadata_is_typed_and_strict():
    config_type = type(resolve_task("find_the_origin").config)
    request = parse_metadata(config_type, {"max_seq_lengths": [4096], "seed": "3", "pretrained": "gpt2",
                                           "dtype": "float32", "version": 1.0, "config_source": "x.yaml"})
    assert request.overrides == {"context_tokens": (4096,), "num_lines": (), "line_growth": ()}
    assert request.seed == 3
    with pytest.raises(ConfigError, match="max_seq_length: unknown metadata key"):
        parse_metadata(config_type, {"max_seq_length": [4096]})
    assert {"pretrained", "dtype", "base_url", "batch_size"} <= model_argument_names()
    with pytest.raises(ConfigError, match="d_values"):
        build_docs("find_the_origin", d_values=[0])


def test_process_results_bins_only_their_own_doc():
    doc = generate_row(resolve_task("find_the_origin", {"context_tokens": [512], "num_samples": 1}), 0)
    answer = f"FINAL ANSWER: {doc['answer_text']}"
    # by default: the short list lm-eval prints (issue 28: FtO printed 71 rows per task), headline first
    plain = process_results(doc, [answer])
    assert list(plain) == ["headline", "score", "memory_drift", "f1", "truncated", "unparsed"]
    assert plain["headline"] == ["find_the_origin", 1.0] and plain["truncated"] == plain["unparsed"] == 0.0
    right = process_results({**doc, "bins": True}, [answer])  # the bins switch (--metadata '{"bins": true}')
    assert right["score"] == 1.0 and right["memory_drift"] == 0.0 and right["f1"] == 1.0
    assert right["precision"] == right["recall"] == 1.0
    assert right["score@512"] == 1.0 and f"score@d={doc['difficulty']['d']}" in right
    assert not any(key.startswith("score@1024") for key in right)
    # Every bin of the config is reported (one count per metric); bins the doc is not in carry None.
    other_d = next(d for d in resolve_task("find_the_origin").config.d_values if d != doc["difficulty"]["d"])
    assert right[f"score@d={other_d}"] is None and right[f"memory_drift@d={other_d}"] is None
    for junk in ["", "\x00" * 10, "FINAL ANSWER: " * 1000, '```json\n{"a": 1}\n```']:
        scored = process_results({**doc, "bins": True}, [junk])
        key, normalized = scored.pop("headline")
        assert key == "find_the_origin" and normalized <= 0.0
        assert all(v is None or 0.0 <= v <= 1.0 for v in scored.values())


def test_bin_mean_averages_each_bin_over_its_own_docs():
    assert bin_mean([1.0, None, 0.0, None, 1.0]) == pytest.approx(2 / 3)
    assert math.isnan(bin_mean([None, None]))


def _run(args, tmp_path, env_extra=None):
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", **(env_extra or {}))
    return subprocess.run(args, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)


def _evals(runs: list[list[str]], tmp_path: Path) -> None:
    """`lurch eval` runs (arguments after ``eval``) in one process (lurch_evals_one_process: lm-eval is imported
    once), each of which must succeed."""
    lurch_evals(runs, env={"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}, timeout=600, cwd=tmp_path)


def _results(out_dir: Path) -> dict:
    files = sorted(out_dir.rglob("results_*.json"))
    assert files, f"no results under {out_dir}"
    return json.loads(files[-1].read_text())["results"]


@pytest.mark.slow
def test_lurch_eval_solver_is_perfect_and_random_is_at_chance(tmp_path):
    _evals([["--model", "lurch-solver", "--tasks", "find_the_origin", "--limit", "40",
             "--metadata", json.dumps({"bins": True}), "--output_path", str(tmp_path / "solver"), "--log_samples"],
            ["--model", "lurch-random", "--tasks", "find_the_origin", "--limit", "160",
             "--output_path", str(tmp_path / "random")]], tmp_path)
    result = _results(tmp_path / "solver")["find_the_origin"]
    assert result["score,none"] == 1.0 and result["memory_drift,none"] == 0.0 and result["f1,none"] == 1.0
    assert result["headline,none"] == 1.0
    assert result["score@8192,none"] == 1.0 and result["score@d=-15,none"] == 1.0

    result = _results(tmp_path / "random")["find_the_origin"]
    # Chance is one in the number of words in the list (hundreds to thousands): 160 docs give ~0-2 hits.
    assert result["score,none"] <= 0.03 and result["memory_drift,none"] >= 0.97
    assert abs(result["headline,none"]) <= 0.03 and "score@8192,none" not in result  # no bins by default


@pytest.mark.slow
def test_graph_group_solver_perfect_random_drifts(tmp_path):
    _evals([["--model", "lurch-solver", "--tasks", "memory_drift_graph", "--limit", "60",
             "--metadata", json.dumps({"bins": True}), "--output_path", str(tmp_path / "solver")],
            ["--model", "lurch-random", "--tasks", "memory_drift_graph", "--limit", "60",
             "--output_path", str(tmp_path / "random")]], tmp_path)
    results = _results(tmp_path / "solver")
    for task in ("memory_drift_edge", "memory_drift_subgraph", "memory_drift_clique"):
        assert results[task]["memory_drift,none"] == 0.0 and results[task]["f1,none"] == 1.0, task
        assert results[task]["memory_drift@16384,none"] == 0.0 and results[task]["memory_drift@k=1,none"] == 0.0

    results = _results(tmp_path / "random")
    for task in ("memory_drift_edge", "memory_drift_subgraph", "memory_drift_clique"):
        assert results[task]["memory_drift,none"] > 0.5, task


@pytest.mark.slow
def test_umbrella_group_and_plain_lm_eval_with_dummy(tmp_path):
    umbrella = _run([LURCH, "eval", "--model", "lurch-solver", "--tasks", "memory_drift", "--limit", "20",
                     "--metadata", json.dumps({"max_seq_lengths": [1024, 2048], "num_samples": 2}),
                     "--output_path", str(tmp_path / "umbrella")], tmp_path)
    assert umbrella.returncode == 0, umbrella.stderr[-3000:]
    results = _results(tmp_path / "umbrella")
    assert results["memory_drift"]["memory_drift,none"] == 0.0 and results["memory_drift"]["score,none"] == 1.0
    assert results["memory_drift"]["headline,none"] == 1.0
    for family_task in ("family_find_the_origin", "family_graph_reconstruction", "family_implicit_hop",
                        "family_recon"):  # the umbrella's leaves: one task per family
        assert results[family_task]["headline,none"] == 1.0, family_task
    assert umbrella.stderr.count("Custom kwargs can be passed") == 1  # lm-eval's per-task note, folded to one

    tasks_path = _run([LURCH, "tasks-path"], tmp_path).stdout.strip()
    assert Path(tasks_path, "find_the_origin.yaml").is_file()
    lm_eval = shutil.which("lm_eval", path=str(BIN)) or shutil.which("lm-eval", path=str(BIN))
    plain = _run([lm_eval, "--model", "dummy", "--tasks", "find_the_origin", "--include_path", tasks_path,
                  "--limit", "8", "--output_path", str(tmp_path / "dummy")], tmp_path)
    assert plain.returncode == 0, plain.stderr[-3000:]
    assert _results(tmp_path / "dummy")["find_the_origin"]["score,none"] == 0.0  # dummy answers "lol"


def test_lurch_eval_bad_metadata_is_one_line(tmp_path):
    bad = _run([LURCH, "eval", "--model", "lurch-solver", "--tasks", "find_the_origin", "--limit", "1",
                "--metadata", json.dumps({"max_seq_length": [512]})], tmp_path)
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr
    assert "max_seq_length: unknown metadata key" in bad.stderr.strip().splitlines()[-1]


@pytest.mark.slow
def test_group_scores_weigh_tasks_equally_and_rates_by_doc(tmp_path):
    """Tasks of unequal size (3, 2 and 2 docs): the group's headline and score are the mean over its tasks (equal
    weight per task, issue 28), its rates (memory drift, F1, truncated) the mean over every doc, and no metric is
    scored on fewer docs than its task (lm-eval's group weighting uses one count)."""
    run = _run([LURCH, "eval", "--model", "lurch-random", "--tasks", "memory_drift_graph", "--log_samples",
                "--metadata", json.dumps({"max_seq_lengths": [2048], "num_samples": 1, "bins": True}),
                "--output_path", str(tmp_path / "out")], tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "over-weighted" not in run.stderr and "not scored on the same number" not in run.stderr
    results = _results(tmp_path / "out")
    samples = [json.loads(line) for path in sorted((tmp_path / "out").rglob("samples_*.jsonl"))
               for line in path.read_text().splitlines() if line.strip()]
    tasks = ("memory_drift_edge", "memory_drift_subgraph", "memory_drift_clique")
    sizes = {task: sum(s["doc"]["task"] == task for s in samples) for task in tasks}
    assert sorted(sizes.values()) == [2, 2, 3], sizes  # grid docs 1, 1, 2, and a zero-gold control each
    for task in sizes:  # reported by the control only (None elsewhere): the random baseline lists pairs there
        assert results[task]["false_positive_rate,none"] == 1.0
        assert results[task]["false_positive_rate@2048,none"] == 1.0
    for metric in ("f1", "memory_drift", "truncated", "unparsed"):
        expected = sum(s[metric] for s in samples) / len(samples)
        assert results["memory_drift_graph"][f"{metric},none"] == pytest.approx(expected), metric
    for metric in ("score", "headline"):
        per_task = [results[task][f"{metric},none"] for task in tasks]
        assert results["memory_drift_graph"][f"{metric},none"] == pytest.approx(sum(per_task) / 3), metric
    for task in tasks:  # a task's headline: the mean chance-normalised score of its docs (one key per task)
        own = [s["headline"] for s in samples if s["doc"]["task"] == task]
        assert {key for key, _ in own} == {task}
        assert results[task]["headline,none"] == pytest.approx(sum(v for _, v in own) / len(own))
    edge_docs = [s for s in samples if s["doc"]["task"] == "memory_drift_edge"]
    for k in {s["doc"]["difficulty"]["connections"] for s in edge_docs}:
        own = [s["f1"] for s in edge_docs if s["doc"]["difficulty"]["connections"] == k]
        assert results["memory_drift_edge"][f"score@k={k},none"] == pytest.approx(
            sum(s["score"] for s in edge_docs if s["doc"]["difficulty"]["connections"] == k) / len(own))


def test_max_docs_builds_the_same_first_docs_as_a_full_build():
    metadata = {"max_seq_lengths": [2048, 4096], "num_samples": 1}
    full = build_docs("memory_drift_edge", **metadata)["test"]
    first = build_docs("memory_drift_edge", **metadata, max_docs=3)["test"]
    assert len(first) == 3 < len(full)
    assert [content_hash(dict(first[i])) for i in range(3)] == [content_hash(dict(full[i])) for i in range(3)]


def test_lurch_eval_limits_generation_and_indexes_only_our_tasks_when_it_can():
    from lurch_tasks.harness.lm_eval_cli import lm_eval_argv, only_our_tasks

    argv = lm_eval_argv(["--model", "lurch-solver", "--tasks", "memory_drift,find_the_origin", "--limit", "20"])
    assert json.loads(argv[argv.index("--metadata") + 1])["max_docs"] == 20
    assert only_our_tasks(argv)
    fraction = lm_eval_argv(["--model", "lurch-solver", "--tasks", "find_the_origin", "--limit", "0.5"])
    assert "max_docs" not in json.loads(fraction[fraction.index("--metadata") + 1])
    assert not only_our_tasks(lm_eval_argv(["--model", "hf", "--tasks", "find_the_origin,hellaswag"]))
    assert only_our_tasks(lm_eval_argv(["--model", "hf", "--tasks", "lurch,find_the_origin__0123456789ab"]))


def test_only_metrics_with_a_direction_get_an_arrow():
    from lurch_tasks.harness.yamls import _metric

    assert _metric("score")["higher_is_better"] is True and _metric("memory_drift")["higher_is_better"] is False
    for descriptive in ("prompt_tokens", "abstain_rate", "prompt_tokens@4096"):  # lm-eval prints no arrow for None
        assert _metric(descriptive)["higher_is_better"] is None, descriptive
