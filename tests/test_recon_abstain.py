"""RECON abstention controls (issue 28 item 3): questions the case does not settle, asked with the same templates,
items and options as answerable ones, on a fixed share of cases; ABSTAIN scores 1 on them, any answer 0."""

from __future__ import annotations

import json
from functools import lru_cache

import pytest

from lurch_tasks.core.generation import generate_row, resolve_task
from lurch_tasks.core.registry import get_family
from lurch_tasks.families.recon import is_control
from lurch_tasks.families.recon.formats import CONTROLS
from lurch_tasks.families.recon.questions import ABSTAIN_EVERY, is_control_sample
from lurch_tasks.families.recon.solver import question_patterns, split_prompt

FAMILY = get_family("recon")
# one domain and length: case sample s holds rows 16 s .. 16 s + 15 (case-major), so the last two cases of a run
# of ABSTAIN_EVERY are one answerable case and one control case
TASK = resolve_task("recon_all", {"num_samples": ABSTAIN_EVERY, "context_tokens": [16384], "domains": ["criminal"]})
PER_CASE = len(TASK.config.slots())


@lru_cache(maxsize=4)
def case_rows(sample: int) -> tuple[dict, ...]:
    return tuple(generate_row(TASK, k) for k in range(sample * PER_CASE, (sample + 1) * PER_CASE))


def control_rows() -> list[dict]:
    return [r for r in case_rows(ABSTAIN_EVERY - 1) if is_control(r)]


def slot(row: dict) -> tuple[str, str]:
    return row["difficulty"]["category"], row["answer_format"]


def test_the_share_is_fixed_and_recorded():
    assert [s for s in range(3 * ABSTAIN_EVERY) if is_control_sample(s)] == [23, 47, 71]
    controls = control_rows()
    assert sorted(slot(r) for r in controls) == sorted(CONTROLS) == [("conflict", "free_form"),
                                                                      ("conflict", "mcq_single"),
                                                                      ("retrieval", "free_form"),
                                                                      ("retrieval", "mcq_single")]
    assert all(r["difficulty"]["control"] == "abstain" for r in controls)
    assert not any(is_control(r) for r in case_rows(ABSTAIN_EVERY - 2))
    assert {r["difficulty"]["control"] for r in case_rows(ABSTAIN_EVERY - 2)} == {"none"}


def _template(row: dict) -> str:
    parsed = split_prompt(row["prompt"])
    return next(name for name, regex in question_patterns(parsed.domain) if regex.match(parsed.question))


def test_controls_look_like_ordinary_questions():
    """Same template (the solver's question pattern) and kind and number of options as the slot's answerable
    question; the options are the places the case names with the question's own item or subject."""
    # case 0 asks the state form of the rotating retrieval question (forms rotate over blocks of six cases)
    ordinary = [r for sample in (0, ABSTAIN_EVERY - 2) for r in case_rows(sample)]
    by_slot = {slot(r): r for r in control_rows()}
    for key, row in by_slot.items():
        twin = next(r for r in ordinary if slot(r) == key and _template(r) == _template(row))
        assert len(row["options"]) == len(twin["options"])
    state = by_slot["retrieval", "mcq_single"]
    parsed = split_prompt(state["prompt"])
    thing = state["question"].removeprefix("Question: Where was ").split(" held on ")[0]
    custody = [e.fact["place"] for e in parsed.entries if e.fact["kind"] == "custody" and e.fact["thing"] == thing]
    assert set(state["options"]) == set(custody)
    conflict = by_slot["conflict", "mcq_single"]
    parsed = split_prompt(conflict["prompt"])
    person = conflict["question"].split("about where ")[1].split(" was on ")[0]
    statements = [e for e in parsed.entries if e.fact["kind"] == "statement" and e.fact["person"] == person]
    assert len(statements) == 4 and len({e.fact["minute"] for e in statements}) == 2  # two disputed moments
    records = [e for e in parsed.entries if e.fact["kind"] == "record" and e.fact["person"] == person]
    assert set(conflict["options"]) == {e.fact["place"] for e in records}


def test_the_case_settles_no_control_and_the_solver_abstains_exactly_there():
    for row in [*case_rows(ABSTAIN_EVERY - 2), *case_rows(ABSTAIN_EVERY - 1)]:
        output = FAMILY.solve(row["prompt"])
        assert (output == "ANSWER: ABSTAIN") == is_control(row), slot(row)
        assert FAMILY.score(row, output)["score"] == 1.0
    for row in control_rows():
        assert FAMILY.audit(row) == []


def test_audit_catches_a_settled_question_marked_as_control():
    row = next(r for r in case_rows(ABSTAIN_EVERY - 2) if slot(r) == ("retrieval", "mcq_single"))
    marked = {**row, "answer": "ABSTAIN", "difficulty": {**row["difficulty"], "control": "abstain"},
              "params": json.dumps({**json.loads(row["params"]),
                                    "failure_modes": ["future_state"] * len(row["options"])})}
    assert "an abstention control that the case settles" in FAMILY.audit(marked)


def test_abstain_scores_one_and_any_answer_zero():
    for row in control_rows():
        abstained = FAMILY.score(row, "I checked the log.\nANSWER: ABSTAIN")
        assert (abstained["score"], abstained["abstain_correct"], abstained["false_answer_rate"]) == (1.0, 1.0, 0.0)
        assert abstained["memory_drift"] == 0.0
        if row["answer_format"] == "mcq_single":
            answers = [f"ANSWER: {letter}" for letter in "ABCDEF"]
        else:
            places = json.loads(row["answer"])["contradicting"]
            # naming a place, even beside a hedge, asserts it
            answers = [f"ANSWER: It was at {p}, though the exact time is unknown." for p in places]
        for output in answers:
            scored = FAMILY.score(row, output)
            assert (scored["score"], scored["abstain_correct"], scored["false_answer_rate"]) == (0.0, 0.0, 1.0)
            assert scored["memory_drift"] == 1.0
        unread = FAMILY.score(row, "")  # neither an abstention nor an answer
        assert (unread["score"], unread["false_answer_rate"]) == (0.0, 0.0)


def test_control_metrics_are_undefined_on_answerable_rows():
    row = case_rows(ABSTAIN_EVERY - 2)[0]
    scored = FAMILY.score(row, "ANSWER: ABSTAIN")
    assert scored["score"] == 0.0 and scored["abstain_correct"] is None and scored["false_answer_rate"] is None


def test_always_abstain_is_a_registered_shortcut_bounded_by_the_share():
    strategy = next(s for s in FAMILY.shortcuts if s.name == "always_abstain")
    rows = [*case_rows(ABSTAIN_EVERY - 2), *case_rows(ABSTAIN_EVERY - 1)]
    scores = [FAMILY.score(r, strategy.answer(r["prompt"], None))["score"] for r in rows]
    assert scores == [1.0 if is_control(r) else 0.0 for r in rows]
    # over a full run of cases it scores the controls' share of each control slot: 1/24, under the audit margin
    assert 1 / ABSTAIN_EVERY < 0.05


def test_audit_rows_checks_the_controls():
    rows = [*case_rows(ABSTAIN_EVERY - 2), *case_rows(ABSTAIN_EVERY - 1)]
    summaries = [FAMILY.row_summary(r) for r in rows]
    assert FAMILY.audit_rows(TASK.config, summaries, True) == []
    flipped = [(*s[:3], not s[3], s[4]) if k == 3 else s for k, s in enumerate(summaries)]
    assert any("abstention control" in p for p in FAMILY.audit_rows(TASK.config, flipped, True))
    dropped = [s for s in summaries if not s[3]]
    assert any("quota matrix" in p for p in FAMILY.audit_rows(TASK.config, dropped, True))


@pytest.mark.parametrize("index", [0, 5])
def test_answerable_rows_keep_their_gold(index):
    row = case_rows(ABSTAIN_EVERY - 2)[index]
    assert row["answer"] != "ABSTAIN" and not is_control(row)


def test_controls_are_deterministic():
    """A control row is a pure function of its index: rebuilt from scratch (case cache cleared), the same bytes."""
    from lurch_tasks.families.recon.generate import build_case

    first = control_rows()
    build_case.cache_clear()
    again = [generate_row(TASK, r["index"]) for r in first]
    assert [json.dumps(r, sort_keys=True) for r in again] == [json.dumps(r, sort_keys=True) for r in first]
