"""Several answers per doc (``--metadata '{"repeats": N}'``, the LURCH paper's three sampled answers per question):
lm-eval keeps every answer, each is scored and the doc's metrics are their mean; `lurch report` and `lurch leaderboard
validate` read the same answers and average them the same way."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lurch_tasks import __version__
from lurch_tasks.analysis.frame import load_runs
from lurch_tasks.analysis.runs import find_runs
from lurch_tasks.leaderboard.validate import validate
from lurch_tasks.scoring.repeats import answers_of, mean_scores

LURCH = str(Path(sys.executable).parent / "lurch")


def test_answers_and_their_mean():
    assert answers_of(["a"]) == ["a"] and answers_of([["a", "b", "c"]]) == ["a", "b", "c"] and answers_of([]) == [""]
    mean = mean_scores([{"score": 1.0, "f1": 1.0, "rate": None, "kind": "x"},
                        {"score": 0.0, "f1": 0.5, "rate": None, "kind": "y"},
                        {"score": 0.5, "f1": 0.0, "rate": None, "kind": "z"}])
    assert mean == {"score": 0.5, "f1": 0.5, "rate": None, "kind": "x"}


def test_repeats_must_be_a_positive_whole_number():
    done = subprocess.run([LURCH, "eval", "--model", "lurch-solver", "--tasks", "implicit_hop_depth", "--limit", "1",
                           "--metadata", '{"repeats": 0}'], capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert "repeats: 0 is not allowed; allowed: a whole number of answers per doc, 1 or more" in done.stderr


@pytest.mark.slow
def test_three_answers_per_doc_through_lm_eval_the_report_and_the_board(tmp_path):
    out = tmp_path / "run"
    done = subprocess.run([LURCH, "eval", "--model", "lurch-simulated", "--model_args", "intercept=0.0",
                           "--tasks", "implicit_hop_depth", "--limit", "8", "--metadata", '{"repeats": 3}',
                           "--log_samples", "--output_path", str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    (samples,) = out.rglob("samples_*.jsonl")
    records = [json.loads(line) for line in samples.read_text().splitlines()]
    assert all(len(r["resps"][0]) == 3 for r in records)
    scores = [r["score"] for r in records]
    assert set(scores) <= {0.0, 1 / 3, 2 / 3, 1.0} and len(set(scores)) > 1  # the three draws differ per doc
    (results,) = out.rglob("results_*.json")
    claimed = json.loads(results.read_text())["results"]["implicit_hop_depth"]["score,none"]
    frame = load_runs(find_runs([out])).frame
    assert (frame["answers"] == 3).all() and len(frame) == 8
    assert frame["score"].mean() == pytest.approx(claimed, abs=1e-12)  # the report averages as lm-eval did
    assert sorted(frame["outcome"]) == sorted(scores)  # the GLM's outcome: the mean over the three answers
    submission = {"schema_version": 1, "model": {"name": "lurch-simulated", "revision": __version__},
                  "run": {"lm_eval_model": "lurch-simulated", "model_args": "intercept=0.0", "chat_template": False,
                          "generation": {}},
                  "date": "2026-12-05", "lurch_tasks_version": __version__, "tasks": ["implicit_hop_depth"],
                  "seed": 0, "subset": True, "contact": "x@example.org"}
    (out / "submission.json").write_text(json.dumps(submission))
    verdict = validate(out)
    assert verdict.ok, verdict.problems
