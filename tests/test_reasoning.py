"""Reasoning stripped before scoring (issue 28): the core helper, the harness's think_end_token, re-scoring."""

from __future__ import annotations

import pytest

from lurch_tasks.core.registry import get_family
from lurch_tasks.harness.metadata import parse_metadata
from lurch_tasks.harness.tasks import run_keys
from lurch_tasks.scoring.reasoning import Stripped, states_empty_answer, strip_doc_output, strip_reasoning


@pytest.mark.parametrize(("output", "answer", "truncated"), [
    ("FINAL ANSWER: x", "FINAL ANSWER: x", False),  # no reasoning: unchanged
    ("<think>FINAL ANSWER: y</think>\nFINAL ANSWER: x", "FINAL ANSWER: x", False),
    ("<Think>a</Think>b", "b", False),  # any case
    ("<thinking>a</thinking> <reasoning>b</reasoning> c", "c", False),
    ("<think>a <think>b</think> c</think> d", "d", False),  # nested
    ("a </think> d", "d", False),  # opening tag in the chat template
    ("a </think> b </think> d", "d", False),  # the last orphan closing tag ends the thinking
    ("<think>a FINAL ANSWER: y", "", True),  # cut off while thinking
    ("<think>a</think> b <reasoning>c", "b", True),  # an answer, then thinking again, cut off
    ("<think>a <think>b</think> c", "", True),  # nested, the outer block never closed
    ('<think kind="x">a</think >b', "b", False),  # attributes, a space before ">"
    ("", "", True),  # lm-eval's null-content placeholder (default ""): the budget went to reasoning
    ("   \n", "", True),
    (None, "", True),
    ("<|channel|>analysis<|message|>y<|end|><|start|>assistant<|channel|>final<|message|>x", "x", False),
    ("<|channel|>analysis<|message|>y", "", True),  # gpt-oss: never reached the final channel
    ("I think <thinking is hard> x", "I think <thinking is hard> x", False),  # not a tag: the word goes on
])
def test_strip_reasoning(output, answer, truncated):
    assert strip_reasoning(output) == Stripped(answer, truncated)


def test_think_end_token_keeps_the_text_after_its_last_occurrence_as_lm_eval_does():
    from lm_eval.models.utils import postprocess_generated_text

    output = "reasoning ◁/think▷ more ◁/think▷ FINAL ANSWER: x"
    assert strip_reasoning(output, "◁/think▷").answer == postprocess_generated_text(output, None, "◁/think▷")
    # a model that did not think (or lm-eval already stripped it): the whole output is the answer
    assert strip_reasoning("FINAL ANSWER: x", "</think>") == Stripped("FINAL ANSWER: x", False)
    assert strip_doc_output({"think_end_token": "###"}, "y ### x").answer == "x"
    assert strip_doc_output({}, "y ### x").answer == "y ### x"


def test_placeholder_is_read_from_lm_evals_variable(monkeypatch):
    monkeypatch.setenv("LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER", "<null>")
    assert strip_reasoning("<null>") == Stripped("", True)
    assert strip_reasoning("") == Stripped("", True)


def test_stripping_is_linear_on_many_tags():
    output = "<think>" * 50_000 + "x" + "</think>" * 50_000 + "FINAL ANSWER: x"
    assert strip_reasoning(output) == Stripped("FINAL ANSWER: x", False)


def test_empty_list_answers_are_read_not_unparsed():
    assert states_empty_answer("CONNECTIONS: none") and states_empty_answer("FINAL ANSWER: NOT FOUND")
    assert states_empty_answer("[]") and not states_empty_answer("Could not work this out.")
    # the graph solver's answer on a zero-gold control: the answer line, left empty
    assert states_empty_answer("CONNECTIONS:\n") and not states_empty_answer("CONNECTIONS: maybe later, let me see")


def test_harness_stamps_the_think_end_token_on_docs():
    assert run_keys("</think>", False, 512) == {"gen_budget": 512, "think_end_token": "</think>"}
    assert run_keys(None, False, 512) == run_keys("151668", False, 512) == {"gen_budget": 512}  # a token id
    assert run_keys(None, True, 256) == {"gen_budget": 256, "bins": True}
    from lurch_tasks.families.find_origin.config import FindOriginConfig
    from lurch_tasks.harness.metadata import MODEL_KEY

    # ours too, for a model without the argument (lurch eval names its model: only that model's arguments pass)
    request = parse_metadata(FindOriginConfig, {"think_end_token": "</think>", MODEL_KEY: "dummy"})
    assert request.overrides == {}


def test_report_rescoring_strips_with_the_logged_docs_token():
    """`lurch report` re-scores logged samples through family.score: the doc it logged carries the token."""
    from lurch_tasks.analysis.frame import score_sample
    from lurch_tasks.analysis.runs import Sample
    from lurch_tasks.core.generation import generate_row, resolve_task

    row = generate_row(resolve_task("find_the_origin", {"context_tokens": [1024]}, 0), 0, "test")
    right = get_family("find_the_origin").solve(row["prompt"])
    doc = {**row, "think_end_token": "◁/think▷"}
    fields = {f: None for f in Sample.__dataclass_fields__}
    fields.update(model="m", task="find_the_origin", doc=doc, output=f"FINAL ANSWER: wrong ◁/think▷ {right}")
    scored = score_sample(Sample(**fields))
    assert (scored["score"], scored["truncated"], scored["unparsed"]) == (1.0, 0.0, 0.0)
    fields.update(doc=row, output="<think>FINAL ANSWER: " + row["answer_items"][0])
    scored = score_sample(Sample(**fields))
    assert (scored["score"], scored["truncated"], scored["unparsed"]) == (0.0, 1.0, 1.0)
