"""Row audits for graph reconstruction: the induced-subgraph audit and answerability from the text."""

from __future__ import annotations

import json

from ...core.config import config_from_mapping
from .baselines import recover_edges
from .config import GraphConfig
from .prompt import profile_name, render_prompt, split_prompt
from .sampling import induced_edges
from .world import build_world


def star_problems(units: list[list[str]], gold: list[list[str]], degree: int) -> list[str]:
    """The prompt promises star-shaped clusters: each unit induces exactly a star of ``degree`` (a centre
    linked to every leaf, no two leaves linked) and the gold graph holds nothing else."""
    edges = {frozenset(pair) for pair in gold}
    problems = []
    for unit in units:
        degrees = sorted(sum(frozenset((a, b)) in edges for b in unit if b != a) for a in unit)
        if degrees != [1] * degree + [degree]:
            problems.append(f"unit {unit} is not a star of degree {degree} in the gold graph (degrees {degrees})")
    if len(edges) != degree * len(units):
        problems.append(f"the gold graph has {len(edges)} edges, not {degree} per star")
    return problems


def audit(row: dict) -> list[str]:
    """Problems in one row (empty when sound)."""
    problems: list[str] = []
    params = json.loads(row["params"])
    config = config_from_mapping(GraphConfig, params["config"])
    world = build_world(config, params["world_seed"])
    order = params["person_ids"]
    names = [world.people[p].name for p in order]
    if names != params["people"]:
        problems.append("the prompt's people are not the world's people at the recorded ids")
        return problems
    gold = sorted(sorted(pair) for pair in json.loads(row["answer"]))
    people = world.people
    induced = sorted(sorted((people[u].name, people[v].name)) for u, v in induced_edges(world.neighbours, order))
    if induced != gold:
        problems.append(f"induced subgraph has {len(induced)} edges but the gold graph has {len(gold)}")
    if config.task == "subgraph":
        problems += star_problems(params["units"], gold, config.star_degree)
    if row["prompt"] != render_prompt(row["context"], len(order), row["question"]):
        problems.append("prompt is not the rendered context + question")
    paragraphs = split_prompt(row["prompt"])
    if [profile_name(p) for p in paragraphs] != names:
        problems.append("profile paragraphs do not match the recorded people")
    if sorted(list(p) for p in recover_edges(row["prompt"])) != gold:
        problems.append("the edges recoverable from shared identifiers differ from the gold graph")
    gold_names = {name for pair in gold for name in pair}
    headers = set()
    for span in row["evidence"]:
        text = row["context"][span["start"]: span["end"]]
        if text in gold_names and row["context"].startswith(": ", span["end"]):
            headers.add(text)
        elif not text.endswith("."):
            problems.append(f"evidence span {span['start']}..{span['end']} is neither a sentence nor a name header")
            break
    if headers != gold_names:
        problems.append("evidence name headers are not exactly the gold people's names")
    return problems
