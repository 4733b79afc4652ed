"""`lurch diagnose`: retrieval coverage of RECON questions with the real BM25 (bm25s) and the real offline dense
retriever (all-MiniLM-L6-v2 from its package), from the CLI and from Python; hand-built coverage; clear errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from lurch_tasks.analysis.retrieval import diagnose_rows, evidence_lines, line_starts, query_of
from lurch_tasks.core.generation import iter_rows, resolve_task

ONE_CASE = ["--set", "context_tokens=[16384]", "--set", "domains=[\"medical\"]", "--set", "num_samples=1"]


def lurch(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lurch_tasks.cli", *args], capture_output=True, text=True)


def test_evidence_spans_map_to_their_lines_and_queries_drop_the_answer_line():
    context = "first line\nsecond line\nthird"
    starts = line_starts(context)
    assert starts == [0, 11, 23]
    assert evidence_lines(starts, [{"start": 11, "end": 22}]) == [1]
    assert evidence_lines(starts, [{"start": 0, "end": 10}, {"start": 23, "end": 28}]) == [0, 2]
    question = "Question: where?\nOptions:\nA) x\nFinish with ANSWER: <letter>."
    assert query_of(question) == "Question: where?\nOptions:\nA) x"


def test_coverage_of_a_hand_built_case_with_a_ranker_that_knows_the_answer(monkeypatch):
    from lurch_tasks.analysis import retrieval

    rows = [{"context": "a\nb\nc\nd", "question": "Q\nanswer line", "config_name": "t",
             "evidence": [{"start": 2, "end": 3}, {"start": 6, "end": 7}], "difficulty": {"category": "x"}}]
    monkeypatch.setitem(retrieval.RANKERS, "bm25", lambda chunks, queries, k: [[1, 0, 3, 2]])
    table = diagnose_rows(rows, ["bm25"], (1, 2, 3)).table(["bm25"])
    assert table[0]["recall@1"] == 0.5 and table[0]["full@1"] == 0.0  # gold lines 1 and 3: only 1 in the top 1
    assert table[0]["recall@2"] == 0.5 and table[0]["recall@3"] == 1.0 and table[0]["full@3"] == 1.0


@pytest.mark.slow
def test_diagnose_from_python_with_both_real_retrievers():
    task = resolve_task("recon_all", {"context_tokens": [16_384], "domains": ["financial"], "num_samples": 1})
    coverage = diagnose_rows(iter_rows(task, range(task.config.size())), ("bm25", "dense"), (5, 10, 20, 50))
    table = coverage.table(["bm25", "dense"])
    groups = {row["group"] for row in table}
    assert groups == {"chain", "cascade", "conflict", "counterfactual", "temporal", "retrieval", "all"}
    for row in table:
        recalls = [row[f"recall@{k}"] for k in (5, 10, 20, 50)]
        fulls = [row[f"full@{k}"] for k in (5, 10, 20, 50)]
        assert recalls == sorted(recalls) and fulls == sorted(fulls)  # more retrieved, more covered
        assert all(0.0 <= f <= r <= 1.0 for f, r in zip(fulls, recalls, strict=True))
        assert 0.0 <= row["header_anchor_uniqueness"] <= 1.0
    assert next(r for r in table if r["group"] == "all" and r["retriever"] == "bm25")["questions"] == 16
    assert coverage.seconds["dense"] > 0 and coverage.seconds["bm25"] > 0


@pytest.mark.slow
def test_diagnose_cli_prints_the_table_and_writes_json(tmp_path):
    out = tmp_path / "coverage.json"
    result = lurch("diagnose", "--config", "recon_retrieval", *ONE_CASE, "--retrievers", "bm25", "--quiet",
                   "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "| retrieval | bm25 | 3 |" in result.stdout and "took " in result.stdout
    written = json.loads(out.read_text())
    assert written["config"] == "recon_retrieval" and written["ks"] == [5, 10, 20, 50]
    again = lurch("diagnose", "--config", "recon_retrieval", *ONE_CASE, "--retrievers", "bm25", "--quiet",
                  "--out", str(out))
    assert again.returncode == 2 and "already exists" in again.stderr


@pytest.mark.parametrize("args, message", [
    (["--retrievers", "tfidf"], "--retrievers: 'tfidf' is not a retriever; allowed: bm25, dense"),
    (["--k", "5,x"], "--k: '5,x' is not a list of positive integers"),
    (["--config", "recon_closedbook_all"], "rows have no context (closed book)"),
])
def test_diagnose_errors_are_one_line(args, message):
    base = ["diagnose", "--config", "recon_all", *ONE_CASE, "--quiet", "--n", "2"]
    result = lurch(*base, *args)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
