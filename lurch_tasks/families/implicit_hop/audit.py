"""Row audits for ImplicitHop (``lurch validate``): the solver's answer is the gold, every axis is met on the
instance, no bridge is named in the question, every evidence span is exactly one required fact, and every hop has
exactly ``competitors_per_hop`` same-signature competitors in the context."""

from __future__ import annotations

import json

from .baselines import facts_of, parse_fact, solve
from .competitors import same_signature
from .generate import DISPERSION_TOLERANCE
from .prompt import render_prompt


def audit(row: dict) -> list[str]:
    """Problems found in one row (empty when it is sound)."""
    problems: list[str] = []
    params = json.loads(row["params"])
    difficulty = row["difficulty"]
    if row["prompt"] != render_prompt(row["context"], row["question"]):
        problems.append("prompt is not the rendered context + question")
    if solve(row["prompt"]) != "FINAL ANSWER: " + "; ".join(row["answer_items"]):
        problems.append("the solver's answer (from the prompt alone) is not the gold answer")
    if difficulty["reasoning_depth"] != difficulty["depth"]:
        problems.append(f"reasoning depth {difficulty['reasoning_depth']} is not the requested {difficulty['depth']}")
    if abs(difficulty["evidence_dispersion"] - difficulty["dispersion_target"]) > DISPERSION_TOLERANCE:
        problems.append(f"dispersion {difficulty['evidence_dispersion']:.4f} misses its target "
                        f"{difficulty['dispersion_target']} by more than {DISPERSION_TOLERANCE}")
    for branch in params["branches"]:
        unnamed = branch["bridges"] + ([branch["answer"]] if "answer" in branch else [])  # a list's end is a bridge too
        named = [bridge for bridge in unnamed if bridge in row["question"]]
        if named:
            problems.append(f"the question names {named[0]!r}, which it should reach, not name")
    required = {(relation, entity) for branch in params["branches"]
                for relation, entity in zip(branch["relations"], [branch["start"], *branch["bridges"]], strict=True)}
    seen = set()
    for span in row["evidence"]:
        parsed = parse_fact(row["context"][span["start"]:span["end"]])
        if parsed is None or (parsed[0], parsed[1]) not in required:
            problems.append(f"evidence span {span['start']}-{span['end']} is not one required fact")
        else:
            seen.add((parsed[0], parsed[1]))
    if seen != required:
        problems.append(f"{len(required - seen)} required facts have no evidence span")
    level = params["config"].get("competitors_per_hop", 0)
    present = facts_of(row["prompt"])
    for relation, subject in sorted(required):
        if same_signature(relation):
            found = sum((other, subject) in present for other in same_signature(relation))
            if found != level:
                problems.append(f"the hop {relation} of {subject!r} has {found} same-signature competitors in the "
                                f"context, not {level}")
                break
    if len(row["evidence"]) != difficulty["facts"]:
        problems.append(f"{len(row['evidence'])} evidence spans for {difficulty['facts']} required facts")
    return problems
