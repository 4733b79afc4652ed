"""Write tests/data/reasoning_outputs.jsonl: reasoning-model outputs for the parser corpus (issue 28).

Each record names a real generated row (task, overrides, seed, index) and an output built from that row's own
right answer (the family's solver) and a wrong one, wrapped the ways reasoning models write them: think blocks
with a wrong answer inside and the right one after, thinking cut off, a separate reasoning field handed over
as lm-eval's chat-completions client hands it (``api_response``: the test runs lm-eval's own parser on it), odd
or nested tags, gpt-oss channels, a ``think_end_token`` on the doc. The intended values follow from the kind
alone (``KINDS``), never from running a scorer; tests/test_answer_corpus.py checks every record.
The filler sentences are chosen with a seeded StableRng per record, so the file is the same on every run.

    .venv/bin/python scripts/reasoning_corpus.py            # rewrites the data file
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from lurch_tasks.core.generation import generate_row, resolve_task
from lurch_tasks.core.registry import get_family
from lurch_tasks.core.rng import StableRng, derive_seed
from lurch_tasks.families.find_origin.prompt import parse_question
from lurch_tasks.families.recon.prompt import letters_for

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "reasoning_outputs.jsonl"
SEED = 0
# (task, overrides, indices): small real rows of every family and answer format
ROWS = (
    ("find_the_origin", {"context_tokens": [1024]}, (0, 1, 2, 3)),
    ("memory_drift_edge", {"context_tokens": [1024, 2048]}, (0, 1, 2, 3)),
    ("implicit_hop_count", {"context_tokens": [1024]}, (0, 1)),
    ("implicit_hop_depth", {"context_tokens": [1024]}, (0, 3)),  # a list and a one-entity question
    ("recon_all", {}, (0, 1, 2, 4, 7)),  # one question of each of the five formats
)
FILLER = (
    "Let me read the question again.", "I need to check every line that mentions these names.",
    "Hmm, wait.", "Let me trace it step by step.", "Actually, I should double-check that.",
    "So far this looks consistent.", "Maybe I misread one entry; going back over it.",
)
UNREADABLE = "Could not work this out."  # no lone letter: "I" would be an ordering's item I
# kind -> (output template, doc extras, intended score is the right answer's?, truncated, unparsed)
KINDS: dict[str, tuple[str, dict, bool, bool, bool]] = {
    "think_wrong_then_right": ("<think>\n{f1}\n{wrong}\n{f2} That is not right.\n</think>\n\n{right}", {}, True, False,
                               False),
    "thinking_tag_upper": ("<THINKING>{f1}\n{wrong}\n</THINKING>\n{right}", {}, True, False, False),
    "reasoning_tag": ("<reasoning>\n{f1} {f2}\n{wrong}\n</reasoning>\n{right}", {}, True, False, False),
    "close_only": ("{f1}\n{wrong}\n{f2}\n</think>\n\n{right}", {}, True, False, False),  # <think> in the template
    "nested_tags": ("<think>{f1} <think>{wrong}</think> {f2}\n{wrong}</think>\n{right}", {}, True, False, False),
    "mixed_tags": ("<reasoning>{f1}\n{wrong}</reasoning>\n<think>{f2}\n{wrong}</think>\n{right}", {}, True, False,
                   False),
    "tag_with_attribute": ('<think type="internal">\n{wrong}\n</think >\n{right}', {}, True, False, False),
    "harmony_channels": ("<|channel|>analysis<|message|>{f1}\n{wrong}<|end|><|start|>assistant<|channel|>final"
                         "<|message|>{right}", {}, True, False, False),
    "think_end_token_custom": ("{f1}\n{wrong}\n◁/think▷\n{right}", {"think_end_token": "◁/think▷"}, True, False,
                               False),
    "think_end_token_already_stripped": ("{right}", {"think_end_token": "</think>"}, True, False, False),
    "truncated_with_wrong": ("<think>\n{f1}\n{wrong}\n{f2} Now let me verify the", {}, False, True, True),
    "truncated_no_answer": ("<reasoning>{f1} {f2} The next step is", {}, False, True, True),
    "api_reasoning_field": ("", {}, True, False, False),  # api_response: content = right, reasoning_content = wrong
    "api_null_content": ("", {}, False, True, True),  # api_response: content null, all in reasoning_content
    "think_then_unreadable": ("<think>{f1}\n{wrong}\n</think>\n" + UNREADABLE, {}, False, False, True),
}


def right_answer(family: str, row: dict) -> str:
    return get_family(family).solve(row["prompt"])


def wrong_answer(family: str, row: dict) -> str:
    """An answer in the family's own format that scores 0 or less: read before stripping, it would count."""
    if family == "find_the_origin":
        return f"FINAL ANSWER: {parse_question(row['question'])}"  # the question's own word is never the origin
    if family == "graph_reconstruction":
        people = json.loads(row["params"])["people"]
        linked = {name for pair in json.loads(row["answer"]) for name in pair}
        others = [name for name in people if name not in linked]
        gold = json.loads(row["answer"])[0]
        return f"CONNECTIONS:\n{gold[0]} -- {gold[1]}\n{others[0]} -- {others[1]}"  # partial credit when read
    if family == "implicit_hop":
        if row["answer_format"] == "integer":
            return f"FINAL ANSWER: {int(row['answer_items'][0]) + 3}"
        return "FINAL ANSWER: Quillon Marsh"
    kind = row["answer_format"]
    letters = letters_for(kind)[: len(row["options"])]
    if kind == "mcq_single":
        return f"ANSWER: {next(letter for letter in letters if letter != row['answer'])}"
    if kind == "mcq_multi":
        gold = json.loads(row["answer"])
        return "ANSWER: " + ", ".join(letter for letter in letters if letter not in gold)
    if kind == "ordering":
        return "ANSWER: " + ", ".join(reversed(json.loads(row["answer"])))
    if kind == "integer":
        return f"ANSWER: {int(row['answer']) + 3}"
    return "ANSWER: " + (json.loads(row["answer"])["contradicting"] or ["nobody was there"])[0]


@lru_cache(maxsize=64)
def _row(task: str, overrides: str, index: int) -> tuple[str, dict]:
    resolved = resolve_task(task, json.loads(overrides), SEED)
    return resolved.family, generate_row(resolved, index, "test")


def record(task: str, overrides: dict, index: int, kind: str) -> dict:
    family, row = _row(task, json.dumps(overrides, sort_keys=True), index)
    template, extras, right, truncated, unparsed = KINDS[kind]
    rng = StableRng(derive_seed("reasoning-corpus", task, index, kind))
    f1, f2 = rng.sample(FILLER, 2)
    good, bad = right_answer(family, row), wrong_answer(family, row)
    if family in ("implicit_hop", "recon") and row["answer_format"] in ("free_form", "entity", "entity_set") \
            and kind == "think_then_unreadable":
        unparsed = False  # free form and name lists read any last line as the answer (graded 0): only no text is
        # unreadable there
    entry = {"task": task, "overrides": overrides, "seed": SEED, "index": index, "family": family,
             "answer_format": row["answer_format"], "kind": kind, "doc_extra": extras,
             "intended": {"score": 1.0 if right else 0.0, "truncated": float(truncated), "unparsed": float(unparsed)}}
    if kind == "api_reasoning_field":
        entry["api_response"] = {"choices": [{"index": 0, "message": {
            "role": "assistant", "content": good, "reasoning_content": f"{f1}\n{bad}\n{f2}"}}]}
    elif kind == "api_null_content":
        entry["api_response"] = {"choices": [{"index": 0, "finish_reason": "length", "message": {
            "role": "assistant", "content": None, "reasoning_content": f"{f1}\n{bad}\n{f2} Let me"}}]}
    else:
        entry["output"] = template.format(f1=f1, f2=f2, wrong=bad, right=good)
    return entry


def main() -> None:
    entries = [record(task, overrides, index, kind)
               for task, overrides, indices in ROWS for index in indices for kind in KINDS]
    OUT.write_text("".join(json.dumps(e, ensure_ascii=False, sort_keys=True) + "\n" for e in entries),
                   encoding="utf-8")
    counts: dict[str, int] = {}
    for entry in entries:
        counts[entry["family"]] = counts.get(entry["family"], 0) + 1
    print(f"{OUT}: {len(entries)} records; per family {counts}")


if __name__ == "__main__":
    main()
