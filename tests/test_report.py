"""`lurch report` on real lm-eval sample logs: RECON re-scored per category x domain and x format (the solver at
1.0 in every format, random at chance on MCQ), clear errors; the optional free-form judge against a real model
served on loopback through an OpenAI-compatible endpoint, and its verdict parser."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from lurch_evals_one_process import lurch_evals

from lurch_tasks.scoring.judge import judge_messages, parse_judge_spec, parse_verdict

LURCH = str(Path(sys.executable).parent / "lurch")
METADATA = json.dumps({"max_seq_lengths": [16384], "num_samples": 1, "domains": ["criminal", "medical"]})


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([LURCH, *args], capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("runs")
    # both runs in one process (lurch_evals_one_process): lm-eval is imported once
    lurch_evals([["--model", model, "--tasks", "recon_conflict,recon_chain", "--metadata", METADATA,
                  "--output_path", str(root / model), "--log_samples"] for model in ("lurch-solver", "lurch-random")],
                timeout=900)
    return root


def _csv(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.slow
def test_report_tabulates_recon_per_category_domain_and_format(runs, tmp_path):
    done = run("report", str(runs / "lurch-solver"), str(runs / "lurch-random"), "--out", str(tmp_path / "r"),
               "--quiet")
    assert done.returncode == 0, done.stderr
    by_domain = _csv(tmp_path / "r" / "recon_category_domain.csv")
    assert {(r["category"], r["domain"]) for r in by_domain} == {
        (c, d) for c in ("chain", "conflict") for d in ("criminal", "medical")}
    solver = [r for r in by_domain if "solver" in r["model"]]
    assert solver and all(float(r["score"]) == 1.0 and float(r["accuracy"]) == 1.0 for r in solver)
    assert all(float(r["prompt_tokens"]) > 15_000 for r in by_domain)
    formats = _csv(tmp_path / "r" / "recon_category_format.csv")
    assert {r["format"] for r in formats} == {"mcq_single", "integer", "ordering", "free_form"}
    assert all(int(r["n"]) == 2 for r in formats)  # one case per domain, one question per quota slot
    assert "### recon_category_domain" in (tmp_path / "r" / "summary.md").read_text()
    again = run("report", str(runs / "lurch-solver"), "--out", str(tmp_path / "r"))
    assert again.returncode == 2 and "is not empty" in again.stderr


def test_report_errors_are_one_line(tmp_path):
    (tmp_path / "empty").mkdir()
    for args, message in ((["missing"], "is not a folder"), ([str(tmp_path / "empty")], "--log_samples"),
                          ([str(tmp_path / "empty"), "--judge", "model=x"], "--judge: base_url is missing")):
        done = run("report", *args, "--out", str(tmp_path / "out"))
        assert done.returncode == 2 and message in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


def test_judge_spec_and_verdicts():
    spec = parse_judge_spec("base_url=http://127.0.0.1:9/v1/,model=judge,timeout=5")
    assert (spec.base_url, spec.model, spec.timeout) == ("http://127.0.0.1:9/v1", "judge", 5.0)
    with pytest.raises(ValueError, match="--judge: 'colour=red' is not allowed"):
        parse_judge_spec("base_url=http://x,model=m,colour=red")
    assert parse_verdict("CORRECT") == 1.0 and parse_verdict("Incorrect.") == 0.0
    assert parse_verdict("I think it's correct") == 1.0 and parse_verdict("maybe") is None
    assert parse_verdict(None) is None
    messages = judge_messages("Where?", "At the depot.", ["North Depot"], "North Depot")
    assert messages[0]["role"] == "system" and "North Depot" in messages[1]["content"]


@pytest.mark.slow
def test_the_judge_regrades_free_form_through_a_real_model_on_loopback(runs, tmp_path):
    from chat_server import ChatServer

    from lurch_tasks.analysis.frame import Loaded, score_sample
    from lurch_tasks.analysis.report import Options, write_report
    from lurch_tasks.analysis.runs import find_runs, iter_samples
    from lurch_tasks.scoring.judge import JudgeConfig

    samples = [s for s in iter_samples(find_runs([runs / "lurch-solver"])) if s.doc["answer_format"] == "free_form"]
    assert len(samples) == 2
    server = ChatServer()
    with server as url:
        rows = [score_sample(sample, JudgeConfig(url, "smollm2", timeout=120)) for sample in samples]
    assert len(server.requests) == 2 and server.requests[0]["model"] == "smollm2"
    assert len(server.replies) == 2 and all(isinstance(reply, str) for reply in server.replies)  # it answered
    assert [r["judge"] for r in rows] == [parse_verdict(reply) for reply in server.replies]
    assert all(r["score"] == 1.0 for r in rows)  # the deterministic key-fact grade is unchanged
    write_report(Loaded(pd.DataFrame(rows), ()), tmp_path / "judged", Options(reps=50))
    judged = _csv(tmp_path / "judged" / "free_form_judge.csv")
    assert judged[0]["key_fact_score"] == "1.0" and int(judged[0]["n"]) == 2
    assert "free_form_judge" in (tmp_path / "judged" / "summary.md").read_text()
    unreachable = score_sample(samples[0], JudgeConfig("http://127.0.0.1:9/v1", "x", timeout=2))
    assert unreachable["judge"] is None  # a dead endpoint is no verdict, not an error
