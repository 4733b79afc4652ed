"""Row audits for the discovery family: the hidden material is where params say, and decodes to the answer."""

from __future__ import annotations

import json

from .baselines import cipher_line, solve
from .cipher import Key, decrypt_word, read_clue
from .code import EFFICIENT_MAX_RATIO, VERSION, CodeModule, build_module, measure, verified_gold
from .directive import quoted, read_directive
from .prompt import code_context, render_prompt
from .scoring import score


def rebuilt_module(row: dict) -> CodeModule | None:
    """A code row's module rebuilt from the seed its params record, or None when it is not byte for byte the
    row's (or was built by another code version): only a rebuilt module is ever run, never a row's text."""
    from ...core.tokens import get_token_counter

    params = json.loads(row["params"])
    if params.get("code_version") != VERSION:
        return None
    module = build_module(params["code_seed"], params["cell"]["planted"], params["module_tokens"],
                          get_token_counter(params["tokenizer"]))
    return module if code_context(module.source) == row["context"] else None


def code_problems(row: dict) -> list[str]:
    """The module is the one its seed builds, and running it confirms the gold: the planted functions' operation
    counts grow at least PLANTED_MIN_RATIO-fold at 4x the input, every other function's at most
    EFFICIENT_MAX_RATIO-fold."""
    module = rebuilt_module(row)
    if module is None:
        return [f"the module is not the one its seed builds with code version {VERSION}"]
    problems = []
    growth = measure(module)
    if verified_gold(module) != tuple(row["answer_items"]):
        problems.append("running the module does not confirm the gold")
    planted = set(module.gold)
    if any(growth[name] > EFFICIENT_MAX_RATIO for name in growth if name not in planted):
        problems.append("a function outside the gold grows faster than linear-log")
    return problems


def audit(row: dict) -> list[str]:
    problems: list[str] = []
    params = json.loads(row["params"])
    context = row["context"]
    kind = row["difficulty"]["kind"]
    if row["prompt"] != render_prompt(context, row["question"], kind):
        problems.append("prompt is not the rendered context + question")
    if kind == "code":
        problems += code_problems(row)
    elif kind == "cipher":
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
