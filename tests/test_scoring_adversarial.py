"""Scoring on adversarial and huge outputs: every family's score never raises and keeps its defined result.

Speed is measured by scripts/bench_scoring.py, not here: these tests only check results (no timing asserts).
The quick corpus of that script (100 KB outputs) runs through every family's real ``score``, and a few 1 MB
outputs with a defined result are checked directly.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest

from lurch_tasks.scoring import parse_edges, parse_final_answer
from lurch_tasks.scoring.bounds import ELISION, WINDOW_CHARS, WINDOW_LINES, bounded_output

_SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench_scoring.py"
_spec = importlib.util.spec_from_file_location("bench_scoring", _SCRIPT)
bench = importlib.util.module_from_spec(_spec)
sys.modules["bench_scoring"] = bench  # dataclasses resolve the module by name
_spec.loader.exec_module(bench)

MB = 1_000_000


def _check(info, case) -> None:
    scores = bench.score(info, case.text)
    assert all(isinstance(v, float) and not math.isnan(v) and 0.0 <= v <= 1.0 for v in scores.values()), scores
    assert bench.check(info, case, scores) is None


@pytest.mark.parametrize("label", [label for label, _, _ in bench.DOCS])
def test_quick_corpus_scores_without_raising_and_as_defined(label):
    corpus = bench.build_corpus(bench.QUICK_SIZE, (label,))
    assert len(corpus) > 60 and any(case.typical for _, case in corpus)
    assert any(case.expected for _, case in corpus if not case.typical)
    for info, case in corpus:
        _check(info, case)


def test_the_corpus_is_deterministic():
    info = bench.load_doc("graph-16k")
    first = [(c.name, c.text) for c in bench.adversarial(info, 20_000)]
    assert first == [(c.name, c.text) for c in bench.adversarial(info, 20_000)]
    assert all(len(text) >= 10_000 for _, text in first)  # about the size asked for


# --- 1 MB outputs with a defined result ---------------------------------------------------------------


def _origin():
    info = bench.load_doc("origin")
    return info, lambda text: bench.score(info, text)["score"]


def test_a_correct_final_answer_after_a_megabyte_of_junk_still_scores_one():
    info, score = _origin()
    junk = "\n".join(f"line {i}: the word {i % 97} might link to another word here." for i in range(20_000))
    assert len(junk) > MB
    assert score(f"{junk}\nFINAL ANSWER: {info.origin}") == 1.0
    assert score("FINAL ANSWER: " * (MB // 14) + info.origin) == 1.0
    assert score("FINAL ANSWER:\n" * (MB // 14) + f"FINAL ANSWER: {info.origin}") == 1.0
    assert score("final answer: maybe, or not\n" * (MB // 28) + f"FINAL ANSWER: {info.origin}") == 1.0
    assert score(f"FINAL ANSWER: {info.origin}\n{junk}") == 1.0  # the first committed answer
    assert score(junk) == 0.0 and score("FINAL ANSWER: " * (MB // 14)) == 0.0


def test_find_origin_reads_the_first_and_last_markers_of_a_long_run():
    # More markers than are read from each end: the answer is still found at either end.
    hedges = "FINAL ANSWER: x or y\n" * 500
    assert parse_final_answer(hedges + "FINAL ANSWER: tufted") == "tufted"
    assert parse_final_answer("FINAL ANSWER: tufted\n" + hedges) == "tufted"
    assert parse_final_answer(hedges) is None


def _graph(label: str):
    info = bench.load_doc(label)
    return info, lambda text: bench.score(info, text)


@pytest.mark.parametrize("label", ["graph-16k", "clique-16k", "graph-128k"])
def test_a_megabyte_of_repeated_gold_pairs_scores_perfectly(label):
    info, score = _graph(label)
    lines = [" -- ".join(info.gold[i % len(info.gold)]) for i in range(55_000)]
    assert len("\n".join(lines)) > MB
    assert score("\n".join(lines))["f1"] == 1.0
    assert score(", ".join(lines))["f1"] == 1.0  # one huge line: the windows cut it between pairs
    assert score(json.dumps([list(info.gold[i % len(info.gold)]) for i in range(40_000)]))["f1"] == 1.0
    prose = "Reasoning about who shares what, line after line, without any names at all.\n" * 14_000
    answer = "\n".join(" -- ".join(pair) for pair in info.gold)
    assert score(f"{prose}\nCONNECTIONS:\n{answer}")["f1"] == 1.0
    assert score(f"CONNECTIONS:\n{answer}\n\n{prose}")["f1"] == 1.0


@pytest.mark.parametrize("label", ["graph-16k", "graph-128k"])
def test_a_megabyte_of_junk_scores_zero(label):
    info, score = _graph(label)
    near = bench._near_names(info, bench.StableRng(1))
    junk = "\n".join(f"- {near[i % len(near)]} -- {near[(i * 5 + 1) % len(near)]}" for i in range(55_000))
    assert len(junk) > MB
    for text in (junk, "[" * MB, '[["a", ' * (MB // 7), '{"a": ' * (MB // 6), "(" * MB, "-- " * (MB // 3),
                 "CONNECTIONS:\n" * (MB // 13), "\n" * MB, bench._unicode(bench.StableRng(2), MB)):
        assert score(text)["score"] == 0.0


def test_many_markers_still_pick_the_last_answer_block():
    roster = ["Lena Morrow", "Tom Baker", "Sam Hill", "Priya Nair"]
    drafts = "CONNECTIONS:\nLena Morrow -- Sam Hill\n" * 2_000
    final = "CONNECTIONS:\nTom Baker -- Priya Nair"
    assert parse_edges(drafts + final, roster) == ["priya nair|tom baker"]
    assert parse_edges("CONNECTIONS:\n" * 50_000 + "Lena Morrow -- Tom Baker", roster) == ["lena morrow|tom baker"]
    assert parse_edges("Lena Morrow -- Tom Baker\n" + "CONNECTIONS:\n" * 50_000, roster) == []


# --- the pieces the bounds are made of ----------------------------------------------------------------


def test_bounded_output_keeps_short_outputs_whole():
    for text in ("", "FINAL ANSWER: x", "a\n" * WINDOW_LINES, "b" * (2 * WINDOW_CHARS)):
        assert bounded_output(text) is text


def test_bounded_output_keeps_head_and_tail_windows_at_line_ends():
    lines = [f"line {i}" for i in range(50_000)]
    text = "\n".join(lines)
    view = bounded_output(text)
    head, tail = view.split(ELISION)
    assert head.splitlines() == lines[:WINDOW_LINES] and tail.splitlines() == lines[-WINDOW_LINES:]
    long_lines = "\n".join("x" * 100 + str(i) for i in range(5_000))
    head, tail = bounded_output(long_lines).split(ELISION)
    assert len(head) <= WINDOW_CHARS and len(tail) <= WINDOW_CHARS
    assert head.endswith("\n") and all(line.startswith("x" * 100) for line in tail.splitlines())


def test_bounded_output_cuts_inside_one_huge_line_after_a_separator():
    text = "Lena Morrow -- Tom Baker, " * 40_000
    head, tail = bounded_output(text).split(ELISION)
    assert head.endswith("Lena Morrow -- Tom Baker,") and tail.startswith(" Lena Morrow -- Tom Baker,")
    words = "word " * 100_000
    head, tail = bounded_output(words).split(ELISION)
    assert head.endswith(" word ") and tail.startswith("word ")


def test_a_cut_line_never_reads_as_a_complete_answer():
    # The head window ends inside the one huge line: what the cut leaves is not a complete candidate.
    text = "FINAL ANSWER: " + "tufted" * 20_000
    assert parse_final_answer(text) is None


def test_fast_paths_agree_with_the_full_rules():
    roster = ["Near Miss", "Un Linked", "Lena Morrow", "Tom Baker", "Oskar Calloway", "Soren Calloway"]
    assert parse_edges("Near Miss -- Un Linked", roster) == ["near miss|un linked"]  # cue made of name words
    assert parse_edges("1. **Lena Morrow** — Tom Baker", roster) == ["lena morrow|tom baker"]
    assert parse_edges("Lena Morrow -- Tom Baker (not connected)", roster) == []
    assert parse_edges("Lena Morrow -- Tom Baker -- Near Miss", roster) == ["lena morrow|tom baker",
                                                                            "near miss|tom baker"]
    assert parse_edges('[["Lena Morrow", "Tom Baker"], ["Calloway", "Tom Baker"]]', roster) == [
        "lena morrow|tom baker", "calloway|tom baker"]
    assert parse_edges("Not connected:\nLena Morrow -- Tom Baker", roster) == []
