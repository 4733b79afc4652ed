"""Row audits for the discovery family: the hidden material is where params say, and decodes to the answer."""

from __future__ import annotations

import json

from .baselines import cipher_line, solve
from .cipher import Key, decrypt_word, read_clue
from .directive import quoted, read_directive
from .prompt import render_prompt
from .scoring import score


def audit(row: dict) -> list[str]:
    problems: list[str] = []
    params = json.loads(row["params"])
    context = row["context"]
    if row["prompt"] != render_prompt(context, row["question"]):
        problems.append("prompt is not the rendered context + question")
    if row["difficulty"]["kind"] == "cipher":
        key = read_clue(context)
        if key != Key(params["cipher"], shift=params["shift"], keyword=params["keyword"]):
            problems.append("the clue does not name the key in params")
        line = cipher_line(row["prompt"])
        if line != params["ciphertext"]:
            problems.append("the ciphertext paragraph is not the one in params")
        elif key is not None and [decrypt_word(w, key) for w in line.split()] != row["answer_items"]:
            problems.append("the ciphertext does not decode to the answer")
        if any(word in context.lower().split() for word in row["answer_items"]):
            problems.append("a message word appears in plain text")
    else:
        if read_directive(context) != row["answer_items"][0]:
            problems.append("the directive does not name the answer")
        if sorted(quoted(context)) != sorted([row["answer_items"][0], *params["decoy_statements"]]):
            problems.append("the quotes are not the statement and its decoys")
    spans = [(s["start"], s["end"]) for s in row["evidence"]]
    if spans != sorted(spans) or any(a[1] > b[0] for a, b in zip(spans, spans[1:], strict=False)):
        problems.append("evidence spans are not sorted and disjoint")
    output = solve(row["prompt"])
    if output is None or score(row, output)["score"] != 1.0:
        problems.append("the reference solver does not score 1")
    return problems
