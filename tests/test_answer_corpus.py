"""Realistic model answers with their intended scores, scored through the families (lurch_tasks.scoring).

Find the Origin: gold is one word, score 1 or 0. Graph reconstruction: every output states the intended
true and false positives (TP, FP) against the gold edges of a real generated row; FN = P - TP and the
expected metrics follow from the paper's formula, memory drift = 1 - max(0, (2·TP - 0.5·FP - FN) / (2·P)).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import pytest
from expected_scores import expected_graph_metrics
from hypothesis import given, settings
from hypothesis import strategies as st
from steps import assert_linear, assert_per_char_bound

from lurch_tasks.core.generation import generate_row, resolve_task
from lurch_tasks.core.registry import get_family
from lurch_tasks.families.find_origin.prompt import context_lines, parse_line, parse_question
from lurch_tasks.scoring import parse_final_answer
from lurch_tasks.scoring.pairs import edge_item, parse_edges

FIND_ORIGIN = get_family("find_the_origin")
GRAPH = get_family("graph_reconstruction")

# --- Find the Origin: the probes (gold word "misfired") --------------------------------------

PROBE_DOC = {"answer_items": ["misfired"]}  # Find the Origin scoring reads only the gold items


def _origin_score(output: object) -> float:
    return FIND_ORIGIN.score(PROBE_DOC, output)["score"]


def test_probe_later_prose_final_answer_does_not_override():
    output = "FINAL ANSWER: misfired\n\nI am confident in this final answer."
    assert parse_final_answer(output) == "misfired" and _origin_score(output) == 1.0


def test_probe_the_final_answer_is_x():
    output = "The final answer is misfired."
    assert parse_final_answer(output) == "misfired" and _origin_score(output) == 1.0


def test_probe_trailing_parentheses_are_dropped():
    output = "FINAL ANSWER: misfired (it has no predecessor)"
    assert parse_final_answer(output) == "misfired" and _origin_score(output) == 1.0


def test_probe_the_origin_is_x_after_the_marker():
    output = "FINAL ANSWER: The origin is misfired."
    assert parse_final_answer(output) == "misfired" and _origin_score(output) == 1.0


def test_probe_the_origin_is_x_without_a_marker():
    assert parse_final_answer("The origin is misfired.") == "misfired"
    assert parse_final_answer('the origin of "gloomy" is misfired') == "misfired"
    assert _origin_score("The origin is misfired.") == 1.0


def test_probe_trailing_sentences_on_the_answer_line():
    output = "FINAL ANSWER: misfired. This word starts the chain."
    assert parse_final_answer(output) == "misfired" and _origin_score(output) == 1.0


def test_the_first_marker_with_a_candidate_wins_over_a_later_revision():
    # Documented rule: the first committed answer counts, a later "FINAL ANSWER" does not replace it.
    assert parse_final_answer("FINAL ANSWER: bluebell\nWait, no.\nFINAL ANSWER: misfired") == "bluebell"
    # A marker without a candidate word is skipped, so prose before the real answer is harmless.
    assert parse_final_answer("I will give my final answer after checking.\nFINAL ANSWER: misfired") == "misfired"
    assert parse_final_answer("Final answer: I think it is misfired") == "misfired"
    assert parse_final_answer("FINAL ANSWER: misfired or bluebell\nFINAL ANSWER: misfired") == "misfired"


def test_find_origin_parser_keeps_accepting_markdown_quotes_case_and_punctuation():
    for output in ["**FINAL ANSWER:** Misfired.", 'Final Answer: "MISFIRED"!', "final answer - `misfired`;",
                   "FINAL ANSWER: “misfired”", "**Final Answer**\n\n**misfired**"]:
        assert _origin_score(output) == 1.0, output


@pytest.mark.parametrize(
    "output",
    [None, "", 0, b"\xff\xfe FINAL ANSWER: x", "FINAL ANSWER" * 50_000, "final answer: " * 20_000,
     "origin is " * 20_000, "The origin of " * 20_000, "FINAL ANSWER:\n" * 20_000, "(" * 100_000,
     "'" * 100_000, " " * 200_000, "FINAL ANSWER: " + "a-" * 100_000 + "!", "\\boxed{" * 20_000, "\ud800"],
)  # fmt: skip
def test_find_origin_parser_never_raises_on_odd_inputs(output):
    result = parse_final_answer(output)
    assert result is None or isinstance(result, str)
    if isinstance(output, str):
        assert_per_char_bound(parse_final_answer, output)


def _assert_linear(function, unit: str) -> None:
    """8x the text must cost under 12x the steps (tests/steps.py: lines run and characters scanned, counted)."""
    assert_linear(function, unit)


@pytest.mark.parametrize(
    "unit",
    ["final answer: the ", "FINAL ANSWER:\n\n", "**Final Answer**\n", "The origin of \"x\" is not ",
     "answer: maybe, ", "I think it is x or y. ", "final  answer   is    "],
)  # fmt: skip
def test_find_origin_parser_cost_is_linear_in_the_output_length(unit):
    _assert_linear(parse_final_answer, unit)


# --- Find the Origin: the destination word and other real-model formats ------------------------------


@pytest.mark.parametrize(
    "output",
    [
        'FINAL ANSWER: The origin of "cellos" is "misfired".',
        'So the final answer is misfired.',
        'The final answer is: **misfired**',
        'FINAL ANSWER: \\boxed{misfired}',
        'FINAL ANSWER: misfired is the origin of cellos',
        'The final answer is $\\boxed{\\text{misfired}}$.',
        'FINAL ANSWER: misfired.</s>',
        'FINAL ANSWER: <misfired><|im_end|>',
        'FINAL ANSWER: "misfired", the origin of "cellos"',
        'FINAL ANSWER: misfired, the origin of cellos',
        'The origin of "cellos" is "misfired" and "tavern" is linked to "cellos".',
        'The origin of "cellos" is "misfired" in the sentence "a word is a word, which is"',
    ],
)  # fmt: skip
def test_real_model_formats(output):
    assert parse_final_answer(output) == parse_final_answer(output, "cellos") == "misfired", output


@pytest.mark.parametrize(
    "output",
    ['FINAL ANSWER: "cellos" comes from "misfired"', "FINAL ANSWER: cellos traces back to misfired.",
     "FINAL ANSWER: misfired -> tavern -> cellos", 'FINAL ANSWER: "cellos" ← "tavern" ← "misfired"',
     'FINAL ANSWER: "misfired" for "cellos"'],
)  # fmt: skip
def test_the_destination_reads_answers_that_restate_it(output):
    assert parse_final_answer(output, "cellos") == "misfired", output
    assert FIND_ORIGIN.score({"answer_items": ["misfired"], "question": 'What is the origin of "cellos"? ...'},
                             output)["score"] == 1.0
    assert parse_final_answer(output) != "misfired"  # without the destination these are not read


@pytest.mark.parametrize(
    "output",
    [
        'FINAL ANSWER: "cellos" or "misfired"',
        'FINAL ANSWER: "misfired" or "cellos"',
        'FINAL ANSWER: "cellos", "misfired"',
        'FINAL ANSWER: "misfired" and "cellos"',
        'FINAL ANSWER: cellos',
        'FINAL ANSWER: The origin of "cellos" is "cellos".',
        'The origin of "cellos" is "misfired" and "cellos" is the answer.',
        'FINAL ANSWER: misfired -> tavern',
        'FINAL ANSWER: tavern -> misfired -> cellos',
        'FINAL ANSWER: tavern comes from misfired',
        'FINAL ANSWER: "misfired" is not the origin of "cellos"',
        'FINAL ANSWER: misfired and tavern are both possible',
    ],
)  # fmt: skip
def test_the_destination_never_makes_a_wrong_answer_right(output):
    doc = {"answer_items": ["misfired"], "question": 'What is the origin of "cellos"? Reason step by step.'}
    assert FIND_ORIGIN.score(doc, output)["score"] == 0.0, (output, parse_final_answer(output, "cellos"))


@settings(max_examples=300, deadline=None)
@given(st.text(), st.one_of(st.none(), st.text(max_size=20)))
def test_find_origin_parser_never_raises_with_a_destination(text, destination):
    result = parse_final_answer(text, destination)
    assert result is None or isinstance(result, str)


@pytest.mark.parametrize(
    "unit",
    ["cellos -> ", "FINAL ANSWER: a -> b -> ", 'and "x" is ', "final answer: x and y is the ", "comes from ",
     '"a", the origin of "cellos" ', '"x" in the sentence "y is ', "\\boxed{\\text{", "</s><|im_end|>"],
)  # fmt: skip
def test_find_origin_parser_cost_is_linear_with_a_destination(unit):
    _assert_linear(lambda text: parse_final_answer(text, "cellos"), unit)


# --- Find the Origin: a corpus against a real row ---------------------------------------------------


@lru_cache(maxsize=1)
def _origin_row() -> dict:
    return generate_row(resolve_task("find_the_origin", {"context_tokens": [512], "num_samples": 1}), 0)


def _origin_words() -> dict[str, str]:
    row = _origin_row()
    gold, destination = row["answer_text"], parse_question(row["prompt"])
    words = [w for line in context_lines(row["prompt"]) for w in parse_line(line) or ()]
    others = [w for w in words if w not in (gold, destination)]
    return {"G": gold, "D": destination, "W": others[0], "V": others[1], "GU": gold.upper(), "GT": gold.title()}


# (template, intended score); {G} gold, {D} the destination, {W}/{V} other words of the list.
ORIGIN_CORPUS = [
    # plain and markdown answers
    ("FINAL ANSWER: {G}", 1),
    ("**FINAL ANSWER:** {G}", 1),
    ("FINAL ANSWER: **{G}**", 1),
    ('Final Answer: "{G}"', 1),
    ("final answer: {G}.", 1),
    ("FINAL ANSWER: {GU}", 1),
    ("Final Answer - {GT}", 1),
    ("FINAL ANSWER = {G}", 1),
    ("> **FINAL ANSWER:** {G}", 1),
    ("FINAL ANSWER: `{G}`", 1),
    ("FINAL ANSWER: '{G}'", 1),
    ("FINAL ANSWER: “{G}”", 1),
    ("FINAL ANSWER: \\boxed{{G}}", 1),
    ("FINAL ANSWER: {G}!", 1),
    ("## Final Answer\n\n{G}", 1),
    ("**Final Answer**\n**{G}**", 1),
    ("FINAL ANSWER:\n- {G}", 1),
    ("```json\n{\"answer\": \"{G}\"}\n```", 1),
    ("{G}", 1),
    ("**{GT}**", 1),
    # chatty and step-by-step answers
    ('Step 1: "{D}" is linked from "{W}".\nStep 2: "{W}" is linked from "{G}".\nStep 3: nothing links to '
     '"{G}".\n\nFINAL ANSWER: {G}', 1),
    ('I need to find the origin of "{D}".\nWorking backwards through the list, I reach "{G}".\n\n'
     "FINAL ANSWER: {G}", 1),
    ("Let me trace the chain.\n\n1. Start at {D}.\n2. Go back to {W}.\n3. Go back to {G}.\n\n**Final answer:** {G}", 1),
    ("| Step | Word |\n|---|---|\n| 1 | {D} |\n| 2 | {G} |\n\nFINAL ANSWER: {G}", 1),
    ('Sure! Tracing the links backwards, the origin of "{D}" is "{G}".', 1),
    ("Tracing back from {D} through {W}, I reach a word no line links to. Therefore, the origin is {G}.", 1),
    ("The origin word is {G}.", 1),
    ('The answer is "{G}".', 1),
    ("**Answer:** {G}", 1),
    ("The final answer is {G}.", 1),
    ("The final answer is: **{G}**", 1),
    ("My final answer is {G} because nothing links to it.", 1),
    ("Let me give the final answer after checking the list once more.\n...\nFINAL ANSWER: {G}", 1),
    ("FINAL ANSWER: {G}\n\n**Explanation:** following the links back from \"{D}\" ends at \"{G}\".", 1),
    ("FINAL ANSWER: {G}\nFINAL ANSWER: {G}", 1),
    ("FINAL ANSWER: {G}\nActually, let me double-check... yes, my final answer stands.", 1),
    # trailing remarks on the answer line
    ("FINAL ANSWER: {G} (it has no predecessor)", 1),
    ("FINAL ANSWER: The origin is {G}.", 1),
    ('FINAL ANSWER: The origin of "{D}" is "{G}".', 1),
    ("FINAL ANSWER: {G}. This word starts the chain.", 1),
    ("FINAL ANSWER: {G}\n\nI am confident in this final answer.", 1),
    ("FINAL ANSWER: {G} — nothing links to it.", 1),
    ("FINAL ANSWER: {G}, because no line links to it.", 1),
    ("FINAL ANSWER: {G}: no line links to it", 1),
    ("Final answer: I think it is {G}.", 1),
    ('FINAL ANSWER: "{G}" is the origin.', 1),
    ("FINAL ANSWER: the word {G}", 1),
    # wrong answers, refusals, hedges, revisions
    ("FINAL ANSWER: {W}", 0),
    ("FINAL ANSWER: {D}", 0),
    ("The origin is {W}.", 0),
    ("I cannot determine the origin from the list.", 0),
    ("FINAL ANSWER: I cannot determine the origin.", 0),
    ("I'm unable to give a final answer because the chain seems broken.", 0),
    ("FINAL ANSWER: unknown", 0),
    ("FINAL ANSWER: {G} or {W}", 0),
    ('FINAL ANSWER: "{G}" or "{W}"', 0),
    ("FINAL ANSWER: probably {G}", 0),  # a qualifier makes it more than the one word the format asks for
    ("It could be {G} or {W}; I am not sure.", 0),
    ("FINAL ANSWER: {W}\nWait, that is wrong: {W} is linked from {G}.\nFINAL ANSWER: {G}", 0),  # first counts
    ("FINAL ANSWER:", 0),
    ("", 0),
    ("{G} {W} {V}", 0),
]


def _fill(template: str, words: dict[str, str]) -> str:
    for key in sorted(words, key=len, reverse=True):  # GU before G
        template = template.replace("{" + key + "}", words[key])
    return template


def test_origin_corpus_is_large_enough():
    assert len(ORIGIN_CORPUS) >= 50
    assert {score for _, score in ORIGIN_CORPUS} == {0, 1}


@pytest.mark.parametrize("template, intended", ORIGIN_CORPUS, ids=[f"fo{i:02d}" for i in range(len(ORIGIN_CORPUS))])
def test_origin_corpus(template, intended):
    row = _origin_row()
    output = _fill(template, _origin_words())
    scores = FIND_ORIGIN.score(row, output)
    assert scores["score"] == intended, (output, parse_final_answer(output), row["answer_text"])
    if intended:
        assert scores["memory_drift"] == 0.0 and scores["f1"] == 1.0


# --- graph: the probes ---------------------------------------------------------------------


@lru_cache(maxsize=1)
def _graph_row() -> dict:
    task = resolve_task("memory_drift_edge", {"context_tokens": [2048], "connections": [3], "num_samples": 1})
    return generate_row(task, 0)


def _graph_names() -> tuple[list[tuple[str, str]], list[str]]:
    """(gold pairs, people in no gold pair) of the row."""
    row = _graph_row()
    gold = [tuple(pair) for pair in json.loads(row["answer"])]
    linked = {name for pair in gold for name in pair}
    others = [name for name in json.loads(row["params"])["people"] if name not in linked]
    return gold, others


def _assert_graph_score(output: str, tp: int, fp: int) -> None:
    row = _graph_row()
    scores = GRAPH.score(row, output)
    expected = expected_graph_metrics(tp, fp, len(row["answer_items"]))
    assert {k: scores[k] for k in expected} == pytest.approx(expected), (output, _predicted(output))
    assert scores["truncated"] == float(not output.strip()), (output, scores)  # an empty output: a null content
    assert scores["unparsed"] == 0.0 or tp + fp == 0, (output, scores)


def _predicted(output: str) -> list[str]:
    return parse_edges(output, json.loads(_graph_row()["params"])["people"])


def _gold_lines() -> str:
    gold, _ = _graph_names()
    return "\n".join(f"{a} -- {b}" for a, b in gold)


def test_probe_a_later_connections_prose_line_keeps_the_list_above():
    _assert_graph_score(_gold_lines() + "\nConnections: that is all", 3, 0)
    _assert_graph_score("CONNECTIONS:\n" + _gold_lines() + "\n\nConnections: that is all", 3, 0)


def test_probe_reasoning_before_the_marker_does_not_count():
    gold, others = _graph_names()
    reasoning = f"{others[0]} -- {others[1]} share a city, which might matter.\n{gold[0][0]} -- {others[2]}?\n"
    _assert_graph_score(reasoning + "CONNECTIONS:\n" + _gold_lines(), 3, 0)
    _assert_graph_score(reasoning + "CONNECTIONS: none", 0, 0)
    _assert_graph_score(reasoning + "CONNECTIONS:\nI could not find any exact match.", 0, 0)


def test_probe_the_last_marker_followed_by_a_pair_is_the_answer():
    gold, others = _graph_names()
    draft = f"CONNECTIONS:\n{others[0]} -- {others[1]}\nWait, that is a near miss. Let me redo this.\n"
    _assert_graph_score(draft + "CONNECTIONS:\n" + _gold_lines(), 3, 0)


@pytest.mark.parametrize(
    "negated",
    ["No connection: {a} -- {b}", "{a} -- {b} (not connected)", "{a} -- {b}: not linked", "{a} and {b} are unrelated",
     "{a} -- {b} — no link"],
)  # fmt: skip
def test_probe_explicitly_negated_pairs_are_not_predictions(negated):
    gold, others = _graph_names()
    line = negated.format(a=others[0], b=others[1])
    assert _predicted(line) == []
    _assert_graph_score(_gold_lines() + "\n" + line, 3, 0)
    # A negated gold pair is no prediction either: it is missed.
    _assert_graph_score("\n".join(f"{a} -- {b}" for a, b in gold[1:]) + "\n" + negated.format(a=gold[0][0],
                                                                                            b=gold[0][1]), 2, 0)


def test_names_that_contain_cue_letters_are_not_negations():
    roster = ["Nolan Link", "Una Noel", "Nora Vance", "Tom Baker"]
    text = "Nolan Link -- Tom Baker\nUna Noel -- Nora Vance\nNolan Link and Nora Vance"
    assert parse_edges(text, roster) == [edge_item("Nolan Link", "Tom Baker"), edge_item("Una Noel", "Nora Vance"),
                                         edge_item("Nolan Link", "Nora Vance")]
    # A cue made only of name words is part of a name ("Related" as a surname), not a negation.
    assert parse_edges("Una Unrelated -- Tom Baker", ["Una Unrelated", "Tom Baker"]) == [
        edge_item("Una Unrelated", "Tom Baker")]


def test_graph_marker_and_negation_cost_is_linear():
    gold, others = _graph_names()
    people = json.loads(_graph_row()["params"])["people"]
    block = ("Connections: that is all\n" + f"{others[0]} -- {others[1]} (not connected)\n"
             + "**Not connected:**\n" + f"- {others[2]} -- {others[3]}\n\n" + "CONNECTIONS:\n" + _gold_lines() + "\n"
             + f"{gold[0][0]} and {gold[0][1]} are unrelated; no link, near miss\n")
    for unit in (block, "CONNECTIONS:\n", "Connections: none\n", "No connection: no link, not linked " * 20 + "\n"):
        _assert_linear(lambda text: parse_edges(text, people), unit)


# --- graph: a corpus against a real row --------------------------------------------------------------


def _graph_corpus() -> list[tuple[str, str, int, int]]:
    """(id, output, intended TP, intended FP) for the edge row with three gold pairs."""
    gold, o = _graph_names()
    (a1, b1), (a2, b2), (a3, b3) = gold
    pairs = [(a1, b1), (a2, b2), (a3, b3)]

    def lines(form: str, items=pairs) -> str:
        return "\n".join(form.format(a=a, b=b, i=i, af=a.split()[0], al=a.split()[-1], bf=b.split()[0],
                                     bl=b.split()[-1]) for i, (a, b) in enumerate(items, 1))

    plain = lines("{a} -- {b}")
    wrong = f"{o[0]} -- {o[1]}"
    people = json.loads(_graph_row()["params"])["people"]
    shared = {s for s in (n.split()[-1] for n in people) if [n.split()[-1] for n in people].count(s) > 1}
    # A surname maps to its one holder; a pair with a surname two people share is a false positive.
    unique = sum(a.split()[-1] not in shared and b.split()[-1] not in shared for a, b in pairs)
    return [
        ("plain", plain, 3, 0),
        ("reversed", lines("{b} -- {a}"), 3, 0),
        ("numbered", lines("{i}. {a} -- {b}"), 3, 0),
        ("bold-bullets", lines("- **{a}** -- **{b}**"), 3, 0),
        ("chatty", "Here are the connections I found:\n\n" + plain + "\n\nLet me know if you need more detail!", 3, 0),
        ("paren-reasons", lines("{a} -- {b} (shared phone number)"), 3, 0),
        ("colon-reasons", lines("{a} -- {b}: same flight on the same date"), 3, 0),
        ("em-dash-reason", lines("{i}) {a} -- {b} — same bank account"), 3, 0),
        ("table", "| Person A | Person B | Shared detail |\n|---|---|---|\n" + lines("| {a} | {b} | phone |"), 3, 0),
        ("table-connected-column", "| A | B | Connected? |\n|---|---|---|\n" + lines("| {a} | {b} | Yes |")
         + f"\n| {o[0]} | {o[1]} | No |", 3, 0),
        ("json-fenced", "```json\n" + json.dumps([[a, b] for a, b in pairs], indent=2) + "\n```", 3, 0),
        ("json-objects", json.dumps([{"source": a, "target": b} for a, b in pairs]), 3, 0),
        ("json-connections", "Sure:\n" + json.dumps({"connections": [[a, b] for a, b in pairs]}), 3, 0),
        ("json-adjacency", json.dumps({a: [b] for a, b in pairs}), 3, 0),
        ("json-connected-false", json.dumps([{"a": a, "b": b} for a, b in pairs]
                                            + [{"a": o[0], "b": o[1], "connected": False}]), 3, 0),
        ("cot", f"Comparing profiles: {o[0]} -- {o[1]} share a city (does that count?).\n"
                f"{a1} -- {o[2]} maybe.\n\nCONNECTIONS:\n" + plain, 3, 0),
        ("cot-expanded", f"### Step 1\n{a1}: phone +1 555 0100.\n### Step 2\n{a1} -- {b1}: same phone.\n"
                         f"{o[0]} -- {o[1]}: a flight on another date.\n### Step 3\nAll checked.\n\n"
                         "**CONNECTIONS:**\n" + lines("- {a} -- {b}"), 3, 0),
        ("cot-draft-then-final", f"CONNECTIONS:\n{a1} -- {b1}\n{o[0]} -- {o[1]}\n\nWait, the second one is wrong.\n\n"
                                 "CONNECTIONS:\n" + plain, 3, 0),
        ("cot-final-connections", f"{o[0]} -- {o[1]}?\nFinal connections:\n" + plain, 3, 0),
        ("cot-heading-marker", f"Thinking: {o[2]} -- {o[3]}.\n\n## Connections\n" + lines("* {a} -- {b}"), 3, 0),
        ("cot-none", f"{a1} -- {o[0]} share an employer, which does not count.\nCONNECTIONS: none", 0, 0),
        ("cot-partial", f"Reasoning about {o[0]} -- {o[1]}.\nCONNECTIONS:\n{a1} -- {b1}\n{a2} -- {b2}", 2, 0),
        ("trailing-connections-prose", plain + "\nConnections: that is all", 3, 0),
        ("trailing-connections-count", plain + "\n\nConnections: 3 in total.", 3, 0),
        ("refusal", "I cannot determine any connections from these profiles.", 0, 0),
        ("refusal-privacy", "I'm sorry, but I can't help with identifying links between people.", 0, 0),
        ("empty", "", 0, 0),
        ("prose-no-pairs", "Several people attended events in Lyon. Nobody else matched exactly.", 0, 0),
        ("partial-two", lines("{a} -- {b}", pairs[:2]), 2, 0),
        ("partial-one", f"{a3} -- {b3}", 1, 0),
        ("one-extra", plain + f"\n{wrong}", 3, 1),
        ("two-extra", plain + f"\n{wrong}\n{o[2]} -- {o[3]}", 3, 2),
        ("all-wrong", f"{o[0]} -- {o[1]}\n{o[2]} -- {o[3]}\n{o[4]} -- {o[5]}", 0, 3),
        ("swapped-partners", f"{a1} -- {a2}\n{b1} -- {b2}\n{a3} -- {b3}", 1, 2),
        ("unknown-person", plain + f"\nZelda Nobodyhere -- {a1}", 3, 1),
        ("first-names-only", lines("{af} -- {bf}"), 0, 3),
        ("surnames-only", lines("{al} -- {bl}"), unique, 3 - unique),
        ("duplicates", plain + "\n" + lines("{b} -- {a}") + "\n" + plain, 3, 0),
        ("self-pair", plain + f"\n{a1} -- {a1}", 3, 1),
        ("negated-paren", plain + f"\n{wrong} (not connected)", 3, 0),
        ("negated-label", f"No connection: {wrong}\n" + plain, 3, 0),
        ("negated-unrelated", plain + f"\n{o[0]} and {o[1]} are unrelated", 3, 0),
        ("negated-no-link", plain + f"\n{wrong} — no link", 3, 0),
        ("negated-not-linked", plain + f"\n{wrong}: not linked", 3, 0),
        ("negated-near-miss", plain + f"\n{wrong} (near miss: the plate differs by one digit)", 3, 0),
        ("negated-section", "**Connected:**\n" + lines("- {a} -- {b}") + "\n\n**Not connected (near misses):**\n"
                            f"- {wrong}\n- {o[2]} -- {o[3]}\n", 3, 0),
        ("negated-heading-first", f"### Rejected (not connected)\n- {wrong}\n\n### Connected\n" + lines("- {a} -- {b}"),
         3, 0),
        ("negated-note", plain + f"\nNote: {o[0]} and {a1} share a surname, which does not count.", 3, 0),
        ("hedge-extra", plain + f"\nPossibly also {wrong}, but I'm not sure.", 3, 1),
        ("and-separator", lines("{a} and {b}"), 3, 0),
        ("comma-separator", lines("{a}, {b}"), 3, 0),
        ("arrows", lines("{a} <-> {b}"), 3, 0),
        ("titles-and-case", lines("Dr. {a} -- ms. {b}").upper(), 3, 0),
        ("last-first", lines("{al}, {af} -- {bl}, {bf}"), 3, 0),
        ("one-line-semicolons", "; ".join(f"{a} -- {b}" for a, b in pairs), 3, 0),
        ("tuples", ", ".join(f"({a}, {b})" for a, b in pairs), 3, 0),
        ("python-list", repr(pairs), 3, 0),
        ("code-fence-text", "```text\n" + plain + "\n```", 3, 0),
        ("pair-labels", lines("Pair {i}: {a} -- {b}"), 3, 0),
        ("prose-sentences", lines("{a} and {b} share the same phone number."), 3, 0),
        ("star-lists", lines("{a}:\n- {b}"), 3, 0),
        ("chain-without-groups", f"{a1} -- {b1} -- {o[0]}\n{a2} -- {b2}\n{a3} -- {b3}", 3, 1),
        ("reasoning-without-marker", f"First I compared {o[0]} -- {o[1]} by phone.\n" + plain, 3, 1),
    ]


GRAPH_CORPUS = _graph_corpus()


def test_graph_corpus_is_large_enough():
    assert len(GRAPH_CORPUS) >= 50
    assert len({case_id for case_id, *_ in GRAPH_CORPUS}) == len(GRAPH_CORPUS)


@pytest.mark.parametrize("case_id, output, tp, fp", GRAPH_CORPUS, ids=[c[0] for c in GRAPH_CORPUS])
def test_graph_corpus(case_id, output, tp, fp):
    _assert_graph_score(output, tp, fp)


# --- Reasoning-model outputs (issue 28; tests/data/reasoning_outputs.jsonl, written by scripts/reasoning_corpus.py)

REASONING_CORPUS = Path(__file__).parent / "data" / "reasoning_outputs.jsonl"


@lru_cache(maxsize=1)
def _reasoning_entries() -> tuple[dict, ...]:
    lines = REASONING_CORPUS.read_text(encoding="utf-8").splitlines()
    return tuple(json.loads(line) for line in lines if line.strip())


@lru_cache(maxsize=64)
def _reasoning_row(task: str, overrides: str, seed: int, index: int) -> dict:
    return generate_row(resolve_task(task, json.loads(overrides), seed), index, "test")


def _api_output(response: dict) -> str:
    """The text lm-eval's chat-completions client hands a task for ``response``: its own parser (``content`` only;
    ``reasoning_content`` is dropped) and its placeholder for a null content."""
    from types import SimpleNamespace

    from lm_eval.models.api_models import LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER
    from lm_eval.models.openai_completions import LocalChatCompletion

    (text,) = LocalChatCompletion.parse_generations(SimpleNamespace(think_end_token=None), response)
    return LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER if text is None else text


def test_reasoning_corpus_has_40_outputs_per_family_of_every_kind():
    entries = _reasoning_entries()
    per_family: dict[str, int] = {}
    for entry in entries:
        per_family[entry["family"]] = per_family.get(entry["family"], 0) + 1
    assert set(per_family) == {"find_the_origin", "graph_reconstruction", "implicit_hop", "recon"}
    assert min(per_family.values()) >= 40, per_family
    kinds = {entry["kind"] for entry in entries}
    assert {"think_wrong_then_right", "truncated_with_wrong", "api_reasoning_field", "api_null_content",
            "nested_tags", "close_only", "think_end_token_custom"} <= kinds
    assert {e["answer_format"] for e in entries if e["family"] == "recon"} == {
        "mcq_single", "mcq_multi", "integer", "ordering", "free_form"}


@pytest.mark.parametrize("number", range(len(_reasoning_entries())))
def test_reasoning_corpus(number):
    entry = _reasoning_entries()[number]
    row = _reasoning_row(entry["task"], json.dumps(entry["overrides"], sort_keys=True), entry["seed"], entry["index"])
    doc = {**row, **entry["doc_extra"]}
    output = _api_output(entry["api_response"]) if "api_response" in entry else entry["output"]
    scores = get_family(entry["family"]).score(doc, output)
    got = {name: scores[name] for name in entry["intended"]}
    assert got == pytest.approx(entry["intended"]), (entry["kind"], entry["answer_format"], output)
