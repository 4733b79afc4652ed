"""`lurch report`'s systems section (issue 31 item 4) on real lm-eval runs: lurch-rag with the solver and with
lurch-simulated inside (BM25 at two k, the built-in fact memory), a long-context lurch-simulated run with RECON's
Oracle (recon_oracle) beside it. The labels name each system; the hit & right / hit & wrong / miss counts equal
counts taken straight from the sample logs (the coverage and metrics lm-eval recorded at run time, not the report's
re-scoring); the Oracle gap is the difference of the two accuracies; a report without a lurch-rag run has no such
section."""

from __future__ import annotations

import csv
import json
import math
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from in_process import lurch_in_process
from lurch_evals_one_process import lurch_evals

from lurch_tasks.analysis.systems import MEMORY, ORACLE, RAG, rag_system

SIMULATED = "inner=lurch-simulated,inner_args=intercept=1"
RUNS = {  # folder: (model, model_args, tasks)
    "long": ("lurch-simulated", "intercept=1", "recon_all,find_the_origin,recon_oracle_all"),
    "solver_bm25_5": ("lurch-rag", "inner=lurch-solver,retriever=bm25,k=5", "recon_all,find_the_origin"),
    "sim_bm25_20": ("lurch-rag", f"{SIMULATED},retriever=bm25,k=20", "recon_all,find_the_origin"),
    "sim_facts_10": ("lurch-rag", f"{SIMULATED},memory=facts,k=10", "recon_all"),
    "sim_gold": ("lurch-rag", f"{SIMULATED},retriever=gold", "recon_all,find_the_origin"),
}
LABELS = {"long": "lurch-simulated", "solver_bm25_5": "RAG bm25 k=5 · lurch-solver",
          "sim_bm25_20": "RAG bm25 k=20 · lurch-simulated", "sim_facts_10": "Memory facts k=10 · lurch-simulated",
          "sim_gold": "Oracle retrieval · lurch-simulated"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("systems")
    lurch_evals([["--model", model, "--model_args", args, "--tasks", tasks, "--limit", "6", "--log_samples",
                  "--output_path", str(root / name)] for name, (model, args, tasks) in RUNS.items()], timeout=900)
    return root


@pytest.fixture(scope="module")
def report(runs, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report") / "r"
    done = lurch_in_process("report", *(str(runs / name) for name in RUNS), "--out", str(out), "--bootstrap", "50",
                            "--quiet")
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def _csv(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _samples(folder: Path) -> list[tuple[str, dict]]:
    """(task file, record) of every logged sample under ``folder``."""
    found = []
    for path in sorted(folder.rglob("samples_*.jsonl")):
        task = path.stem.removeprefix("samples_").rsplit("_", 1)[0]
        found += [(task, json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return found


def _category(task: str, doc: dict) -> str:
    return doc["difficulty"]["category"] if doc["family"] == "recon" else task


def _right(record: dict) -> bool:
    """Full credit, as lm-eval recorded it at run time (RECON records strict accuracy; the others score 0/1)."""
    return (record["accuracy"] if "accuracy" in record else record["score"]) >= 1.0


def test_labels_name_each_system(report):
    models = {row["model"] for row in _csv(report / "summary_models.csv")}
    assert models == set(LABELS.values())
    families = {row["system"]: row["system_family"] for row in _csv(report / "systems_score_tokens.csv")}
    assert families == {"lurch-simulated": "long-context", "RAG bm25 k=5 · lurch-solver": RAG,
                        "RAG bm25 k=20 · lurch-simulated": RAG, "Memory facts k=10 · lurch-simulated": MEMORY,
                        "Oracle (case) · lurch-simulated": ORACLE, "Oracle retrieval · lurch-simulated": ORACLE}


def test_rag_labels_from_settings():
    assert rag_system("inner=lurch-solver,retriever=hybrid,k=50,rerank=dense").label == \
        "RAG hybrid+rerank k=50 · lurch-solver"
    assert rag_system({"inner": "lurch-solver", "retriever": "bm25", "k": "all", "multi_query": "template"}).label == \
        "RAG bm25+mq k=all · lurch-solver"
    smol = rag_system('inner=hf,inner_args="pretrained=/tmp/fixed-smollm2,gguf_file=x.gguf",memory=facts,k=20')
    assert (smol.label, smol.family, smol.answering) == ("Memory facts k=20 · hf:fixed-smollm2", MEMORY,
                                                         "hf:fixed-smollm2")
    # keys and values a newer lurch-rag adds are read as written, not refused
    gold = rag_system({"inner": "lurch-simulated", "retriever": "gold", "k": 20})
    assert (gold.label, gold.family) == ("Oracle retrieval · lurch-simulated", ORACLE)
    assert rag_system({"inner": "lurch-solver", "memory": "facts", "k": 20, "memory_window": 8}).label == \
        "Memory facts k=20 (memory_window=8) · lurch-solver"
    assert rag_system("inner=lurch-solver,k=5,chunk_words=100").label == "RAG bm25 k=5 (chunk_words=100) · lurch-solver"


def test_decomposition_counts_equal_the_sample_logs(runs, report):
    table = {(r["system"], r["family"], r["category"]): r for r in _csv(report / "systems_decomposition.csv")}
    for name, label in LABELS.items():
        expected: dict[tuple[str, str, str], Counter] = defaultdict(Counter)
        for task, record in _samples(runs / name):
            doc = record["doc"]
            oracle = doc["difficulty"].get("variant") == "oracle"
            system = f"Oracle (case) · {label}" if oracle else label
            # lurch-rag logs full_coverage (None for a doc without gold evidence: nothing to find, a hit)
            hit = name == "long" or record.get("full_coverage") in (None, 1.0)
            outcome = "miss" if not hit else "hit_right" if _right(record) else "hit_wrong"
            expected[system, doc["family"], _category(task, doc)][outcome] += 1
        assert expected
        for key, counts in expected.items():
            row = table[key]
            assert {o: int(row[o]) for o in ("hit_right", "hit_wrong", "miss")} == \
                {o: counts[o] for o in ("hit_right", "hit_wrong", "miss")}, key
            assert int(row["n"]) == sum(counts.values())
            assert math.isclose(float(row["miss_share"]), counts["miss"] / sum(counts.values()))
    solver = [r for r in table.values() if r["system"] == LABELS["solver_bm25_5"]]
    # the solver is right whenever it has all its evidence on exact-match items: no hit is wrong there
    assert sum(int(r["miss"]) for r in solver) > 0
    assert all(int(r["hit_wrong"]) == 0 for r in solver if r["family"] == "find_the_origin")


def test_oracle_gap_is_the_difference_of_accuracies(runs, report):
    oracle: dict[str, list[float]] = defaultdict(list)
    for _task, record in _samples(runs / "long"):
        if record["doc"]["difficulty"].get("variant") == "oracle":
            oracle[record["doc"]["difficulty"]["category"]].append(record["accuracy"])
    gold: dict[tuple[str, str], list[float]] = defaultdict(list)
    for task, record in _samples(runs / "sim_gold"):
        doc = record["doc"]
        gold[doc["family"], _category(task, doc)].append(record["accuracy"] if "accuracy" in record else
                                                         record["score"])
    gaps = _csv(report / "systems_oracle_gap.csv")
    checked = 0
    for row in gaps:
        if row["family"] == "recon" and row["system"].endswith("lurch-simulated"):
            want = sum(oracle[row["category"]]) / len(oracle[row["category"]])
            assert math.isclose(float(row["oracle_case_accuracy"]), want)
            assert math.isclose(float(row["gap_case"]), want - float(row["accuracy"]))
            checked += 1
        else:  # no Oracle of that answering model (the solver; Find the Origin has no structured case)
            assert row["oracle_case_accuracy"] == "" and row["gap_case"] == ""
        if row["system"].endswith("lurch-simulated"):  # the retriever=gold run of the same answering model
            want = sum(gold[row["family"], row["category"]]) / len(gold[row["family"], row["category"]])
            assert math.isclose(float(row["oracle_retrieval_accuracy"]), want)
            assert math.isclose(float(row["gap_retrieval"]), want - float(row["accuracy"]))
            checked += 1
        else:
            assert row["oracle_retrieval_accuracy"] == ""  # no retriever=gold run of the solver here
    assert checked >= 6
    html = (report / "report.html").read_text(encoding="utf-8")
    section = html.split('<section id="systems">', 1)[1].split("</section>", 1)[0]
    assert 'class="empty"' in section and "no Oracle run of that answering model" in section
    for figure in ("systems_decomposition_RAG", "systems_decomposition_memory", "systems_decomposition_Oracle",
                   "systems_score_tokens"):
        assert (report / "figures" / f"{figure}.png").stat().st_size > 1000


def test_score_tokens_and_wins(report):
    costs = {(r["system"], r["family"]): r for r in _csv(report / "systems_score_tokens.csv")}
    long_recon, rag_recon = costs["lurch-simulated", "recon"], costs["RAG bm25 k=5 · lurch-solver", "recon"]
    assert long_recon["tokens_source"] == "doc prompt" and rag_recon["tokens_source"] == "recorded"
    assert float(rag_recon["tokens_per_question"]) < float(long_recon["tokens_per_question"])
    assert rag_recon["abstention"] != "" and costs["lurch-simulated", "find_the_origin"]["abstention"] == ""
    wins = _csv(report / "systems_wins.csv")
    assert {r["family"] for r in wins} == {"recon", "find_the_origin"}
    assert all(r["winner"] != ORACLE for r in wins)
    compared = [row for row in wins if row["runner_up"]]
    assert compared  # lurch-simulated answers as long-context, RAG and memory systems
    for row in wins:  # systems compete only with the same answering model
        assert row["best_system"].endswith(row["answering_model"])
    for row in compared:
        assert math.isclose(float(row["margin"]), float(row["score"]) - float(row["runner_up_score"]))
    assert all(row["margin"] == "" for row in wins if not row["runner_up"])
    summary = (report / "summary.md").read_text(encoding="utf-8")
    assert "## Systems: long-context, RAG, memory and the Oracle" in summary


def test_a_report_without_lurch_rag_has_no_systems_section(runs, tmp_path):
    out = tmp_path / "plain"
    done = lurch_in_process("report", str(runs / "long"), "--out", str(out), "--bootstrap", "50", "--quiet")
    assert done.returncode == 0, done.stderr[-3000:]
    assert '<section id="systems">' not in (out / "report.html").read_text(encoding="utf-8")
    assert not list(out.glob("systems_*")) and not list((out / "figures").glob("systems_*"))
    from lurch_tasks.analysis.frame import load_runs
    from lurch_tasks.analysis.runs import find_runs

    found = find_runs([runs / "long"])
    assert [(run.model, run.system_family, run.answering) for run in found] == [("lurch-simulated", "long-context", "")]
    frame = load_runs(found).frame  # the frame a report without lurch-rag builds has no system columns
    assert not [c for c in frame.columns if c.startswith("sys_") or c in ("system_family", "answering_model")]
