"""The learned surface probe (DESIGN 3.5): held out by group, scored with the family scorer, catches a planted
leak that no single feature was written for, and stays at chance on features that carry nothing."""

from __future__ import annotations

import pytest

from lurch_tasks.core.probe import (
    Candidate,
    LearnedProbe,
    ProbeItem,
    held_out_probabilities,
    likely_answers,
    mention_positions,
    nearest_distance,
    order_from_pairs,
    rank_features,
    top_answer,
    word_overlap,
)
from lurch_tasks.core.rng import StableRng, derive_seed
from lurch_tasks.core.shortcuts import FAIL, OK, run_audit

OPTIONS = "ABCDEF"


def _rows(leak: float, cases: int = 60) -> list[dict]:
    """Six-option rows; feature 0 of the gold option is shifted by ``leak`` (0: pure noise); feature 1 is
    noise. Two rows per case share the case's gold letter, so a by-row split could learn the case."""
    rows = []
    for case in range(cases):
        rng = StableRng(derive_seed("probe-test", case))
        gold = rng.below(6)
        for repeat in range(2):
            features = [[rng.uniform() + (leak if k == gold else 0.0), rng.uniform()] for k in range(6)]
            rows.append({"prompt": f"case {case} row {repeat}", "answer": OPTIONS[gold], "case": case,
                         "features": features})
    return rows


def _read(row: dict) -> ProbeItem:
    candidates = tuple(Candidate(OPTIONS[k], OPTIONS[k] == row["answer"], tuple(f))
                       for k, f in enumerate(row["features"]))
    return ProbeItem(str(row["case"]), "mcq", "", candidates)


PROBE = LearnedProbe("feature vectors", _read, lambda item, p: top_answer(item, p))


def _score(row: dict, output: str) -> dict[str, float]:
    return {"score": float(output == row["answer"])}


def _guess(prompt: str, seed: int) -> str:
    return OPTIONS[derive_seed("probe-guess", prompt, seed) % 6]


def _audit(rows):
    return run_audit(rows, "config", False, [], [], _score, _guess, learned=PROBE)


def test_probe_catches_a_planted_leak():
    lines = _audit(_rows(leak=0.6))
    (line,) = lines
    assert line.strategy == "learned_probe" and line.kind == "learned"
    assert line.score > 0.6 and line.chance < 0.3 and line.status == FAIL
    assert "held out by case, 120 rows" in line.note


def test_probe_stays_at_chance_on_noise():
    (line,) = _audit(_rows(leak=0.0))
    assert line.status == OK and abs(line.score - line.chance) < 0.1  # a blind pick among six: about 1/6


def test_folds_never_split_a_group():
    """A row's probabilities come from a model that never saw its case: relabelling that case's candidates
    (which changes neither the fold sizes nor any other case) leaves its predictions exactly as they were."""
    rows = _rows(leak=0.6, cases=20)
    items = [_read(row) for row in rows]
    before = held_out_probabilities(items)
    flipped = [ProbeItem(i.group, i.model, i.report, tuple(Candidate(c.answer, not c.gold, c.features)
                                                           for c in i.candidates)) if i.group == "3" else i
               for i in items]
    after = held_out_probabilities(flipped)
    own = [k for k, item in enumerate(items) if item.group == "3"]
    others = [k for k in range(len(items)) if k not in own]
    assert own and all(before[k] == after[k] for k in own)
    assert any(before[k] != after[k] for k in others)  # the flip did reach the models that trained on it


def test_too_few_groups_is_reported_not_scored():
    rows = [row for row in _rows(0.6, cases=1)]
    (line,) = _audit(rows)
    assert line.status == OK and "not scored" in line.note


def test_report_keys_give_one_line_each():
    def read(row):
        item = _read(row)
        return ProbeItem(item.group, item.model, f"slot{row['case'] % 2}", item.candidates)

    probe = LearnedProbe("two slots", read, lambda item, p: top_answer(item, p))
    lines = run_audit(_rows(0.6), "config", False, [], [], _score, _guess, learned=probe)
    assert [line.strategy for line in lines] == ["learned_probe[slot0]", "learned_probe[slot1]"]


def test_mixed_feature_lengths_fail_loudly():
    rows = _rows(0.0, cases=4)
    rows[0]["features"][0] = [0.0]
    with pytest.raises(ValueError, match="feature lengths"):
        _audit(rows)


def test_generic_feature_helpers():
    text = "alpha beta alpha gamma alpha"
    positions = mention_positions(text, "alpha")
    assert positions == [0.0, 11 / len(text), 23 / len(text)]
    assert rank_features(positions) == (3.0, 0.0, 11 / len(text), 11 / len(text), 23 / len(text),
                                        pytest.approx(sum(positions) / 3))
    assert rank_features([]) == (0.0, 1.0, 1.0, 1.0, 1.0, 1.0)
    assert mention_positions(text, "delta") == [] and mention_positions("", "a") == []
    assert nearest_distance([0.1, 0.5], [0.45]) == pytest.approx(0.05) and nearest_distance([], [0.2]) == 1.0
    assert word_overlap("The Red House", "a red car and a house") == pytest.approx(2 / 3)


def test_decoders():
    item = ProbeItem("g", "m", "", (Candidate("A", True, (0.0,)), Candidate("B", False, (0.0,)),
                                    Candidate("C", True, (0.0,))))
    assert top_answer(item, [0.2, 0.9, 0.9]) == "B"  # the first on ties
    assert likely_answers(item, [0.6, 0.1, 0.7]) == ["A", "C"] and likely_answers(item, [0.1, 0.3, 0.2]) == ["B"]
    pairs = ProbeItem("g", "m", "", tuple(Candidate(f"{a}>{b}", False, (0.0,)) for a, b in
                                          [("x", "y"), ("y", "x"), ("x", "z"), ("z", "x"), ("y", "z"), ("z", "y")]))
    # P(x before y) high, P(z before everything) high
    assert order_from_pairs(pairs, [0.8, 0.2, 0.1, 0.9, 0.7, 0.3]) == ["z", "x", "y"]
