"""Real SmolLM2-135M-Instruct outputs and hand-written variants, each with the score a careful grader gives.

``tests/data/real_outputs.jsonl`` holds one output per line: ``source`` is ``real`` (collected with
scripts/collect_real_outputs.py; ``generation`` says how) or ``hand`` (a realistic variant written for a
format or an edge case); ``intended`` is ``{"score": 0|1}`` for Find the Origin and ``{"tp": .., "fp": ..}``
for graph reconstruction, labelled by reading the output, never by running the parser; ``note`` explains
non-obvious judgements. ``doc_id`` points into ``tests/data/real_docs.jsonl``, which stores the docs as
generated at collection time (prompt, question, gold items and, for graphs, the roster and task the scorer
reads), so the corpus does not depend on the generators staying the same. Every entry is scored through
its family and must agree with its intended score.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import lru_cache
from pathlib import Path

import pytest
from expected_scores import expected_graph_metrics

from lurch_tasks.core.registry import get_family

DATA = Path(__file__).parent / "data"


@lru_cache(maxsize=1)
def _docs() -> dict[str, dict]:
    with open(DATA / "real_docs.jsonl", encoding="utf-8") as lines:
        return {doc["doc_id"]: doc for doc in map(json.loads, lines)}


@lru_cache(maxsize=1)
def _entries() -> list[dict]:
    with open(DATA / "real_outputs.jsonl", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def _agrees(entry: dict) -> tuple[bool, dict, dict]:
    doc = _docs()[entry["doc_id"]]
    scores = get_family(doc["family"]).score(doc, entry["output"])
    intended = entry["intended"]
    if doc["family"] == "find_the_origin":
        expected = {"score": float(intended["score"])}
        return scores["score"] == expected["score"], scores, expected
    expected = expected_graph_metrics(intended["tp"], intended["fp"], len(doc["answer_items"]))
    return all(scores[k] == pytest.approx(v) for k, v in expected.items()), scores, expected


def test_corpus_is_well_formed_and_large_enough():
    entries, docs = _entries(), _docs()
    assert len({e["id"] for e in entries}) == len(entries)
    counts = Counter((e["family"], e["source"]) for e in entries)
    for family in ("find_the_origin", "graph_reconstruction"):
        assert counts[family, "real"] >= 15 and counts[family, "hand"] >= 30, counts
    for e in entries:
        doc = docs[e["doc_id"]]
        assert doc["family"] == e["family"] and e["source"] in ("real", "hand")
        assert (e["source"] == "real") == ("generation" in e)
        if e["family"] == "find_the_origin":
            assert e["intended"]["score"] in (0, 1)
        else:
            assert 0 <= e["intended"]["tp"] <= len(doc["answer_items"]) and e["intended"]["fp"] >= 0
    origin_scores = {e["intended"]["score"] for e in entries if e["family"] == "find_the_origin"}
    assert origin_scores == {0, 1}


def test_every_entry_agrees_with_its_intended_score(record_property):
    entries = _entries()
    disagreements = []
    for entry in entries:
        ok, scores, expected = _agrees(entry)
        if not ok:
            disagreements.append((entry["id"], entry["output"][:200], scores, expected))
    agreed = len(entries) - len(disagreements)
    counts = Counter(f"{e['family']}/{e['source']}" for e in entries)
    record_property("real_outputs_agreement", f"{agreed}/{len(entries)}")
    print(f"real-output corpus: {agreed}/{len(entries)} agree; {dict(sorted(counts.items()))}")
    assert not disagreements, disagreements


@pytest.mark.parametrize("entry", _entries(), ids=[e["id"] for e in _entries()])
def test_entry(entry):
    ok, scores, expected = _agrees(entry)
    assert ok, (entry["output"], entry.get("note"), scores, expected)
