"""Row audits for ImplicitHop (``lurch validate``): the solver's answer is the gold, every axis is met on the
instance, no bridge is named in the question, every evidence span is exactly one required fact, and every hop has
exactly ``competitors_per_hop`` same-signature competitors in the context (a broken hop one more, in its left-out
fact's place). A broken chain's
left-out fact is really absent: no line states it in any phrasing, no line names its subject beside its value, and
no other path leads on from its subject (``broken_problems``)."""

from __future__ import annotations

import json

from .baselines import facts_of, parse_fact, solve
from .baselines import follow as follow_chain
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
    hops = {(relation, entity) for branch in params["branches"]
            for relation, entity in zip(branch["relations"], [branch["start"], *branch["bridges"]], strict=True)}
    broken = params.get("broken")
    if bool(broken) != bool(difficulty.get("broken", False)):
        problems.append("difficulty.broken and params.broken disagree")
    missing = (broken["relation"], broken["subject"]) if broken else None
    required = hops - {missing}
    if broken:
        problems += broken_problems(row, params, broken)
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
    for relation, subject in sorted(hops):  # the broken hop keeps its competitors: the gap is not visible
        if same_signature(relation):
            found = sum((other, subject) in present for other in same_signature(relation))
            if found != level + ((relation, subject) == missing):  # a broken hop: one more, in the gold's place
                problems.append(f"the hop {relation} of {subject!r} has {found} same-signature competitors in the "
                                f"context, not {level}")
                break
    if len(row["evidence"]) != len(required):
        problems.append(f"{len(row['evidence'])} evidence spans for {len(required)} required facts")
    return problems


def broken_problems(row: dict, params: dict, broken: dict) -> list[str]:
    """Why a broken chain may not really be broken: its left-out fact stated by a line (any phrasing, its mirror
    for a person-to-person relation, or an unparsed line naming its subject and value), a chain the prompt's facts
    can still follow to an end, or a gold answer that is not NOT FOUND."""
    problems = []
    relation, subject, value = broken["relation"], broken["subject"], broken["value"]
    present = facts_of(row["prompt"])
    if (relation, subject) in present:
        problems.append(f"the left-out fact ({relation} of {subject!r}) is stated in the context")
    for line in row["context"].split("\n"):
        parsed = parse_fact(line)
        # the same relation either way round (friend, rival: the mirror states it), or a line no template wrote
        if (parsed is not None and parsed[0] == relation and {parsed[1], parsed[2]} == {subject, value}) or (
                parsed is None and subject.lower() in line.lower() and value.lower() in line.lower()):
            problems.append(f"a line states the broken hop's {relation} between {subject!r} and {value!r}: {line!r}")
            break
    for branch in params["branches"]:
        end = follow_chain(present, (branch["start"], tuple(branch["relations"])))
        if end is not None:
            problems.append(f"the broken chain from {branch['start']!r} still reaches {end!r} through the context")
    if row["answer_items"] != ["NOT FOUND"]:
        problems.append(f"a broken chain's gold is {row['answer_items']!r}, not NOT FOUND")
    return problems
