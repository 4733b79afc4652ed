"""Row audits for Find the Origin: the answer is unique and reachable, and d holds as configured."""

from __future__ import annotations

import json

from .prompt import context_lines, parse_line, parse_question, render_prompt


def audit(row: dict) -> list[str]:
    """Problems found in one row (empty when it is sound)."""
    problems: list[str] = []
    params = json.loads(row["params"])
    d = params["cell"]["d"]
    lines = row["context"].split("\n")
    if row["prompt"] != render_prompt(row["context"], row["question"]):
        problems.append("prompt is not the rendered context + question")
    pairs = [parse_line(line) for line in lines]
    if any(pair is None for pair in pairs):
        problems.append("a context line does not match the line template")
        return problems
    sources = [a for a, _ in pairs]
    targets = [b for _, b in pairs]
    if len(set(targets)) != len(targets) or len(set(sources)) != len(sources):
        problems.append("a word is linked twice: chains must not share words")
    destination = parse_question(row["question"])
    chain_rows = params["target_rows"]
    chain = [pairs[r] for r in chain_rows]
    if destination != chain[-1][1]:
        problems.append("the question does not ask for the target chain's last word")
    if any(chain[k][1] != chain[k + 1][0] for k in range(len(chain) - 1)):
        problems.append("the target rows do not form a chain")
    if chain[0][0] in set(targets):
        problems.append("the origin has a predecessor")
    if json.loads(row["answer"]) != chain[0][0]:
        problems.append("the answer is not the chain's origin")
    for k in range(len(chain_rows) - 1):
        if chain_rows[k + 1] - chain_rows[k] != d:
            gap = chain_rows[k + 1] - chain_rows[k]
            problems.append(f"target links {k} and {k + 1} are {gap} lines apart, not d={d}")
    if params["arrangement"] == "structured":
        problems.extend(_structured_problems(pairs, d))
    evidence_lines = {row["context"][span["start"] : span["end"]] for span in row["evidence"]}
    if evidence_lines != {lines[r] for r in chain_rows}:
        problems.append("evidence spans are not the target chain's lines")
    if context_lines(row["prompt"]) != lines:
        problems.append("the prompt's list differs from the context")
    return problems


def _structured_problems(pairs: list[tuple[str, str] | None], d: int) -> list[str]:
    """Every link whose continuation is in the window must sit exactly d lines away."""
    row_of_source = {pair[0]: i for i, pair in enumerate(pairs) if pair}
    for i, pair in enumerate(pairs):
        if pair and pair[1] in row_of_source and row_of_source[pair[1]] - i != d:
            return [f"line {i}: next link is {row_of_source[pair[1]] - i} lines away, not d={d}"]
    return []
