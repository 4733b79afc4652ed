"""Row audits for RECON (``lurch validate``): schema-level leaks, the provenance read back from the case text
(referential integrity, time order), the proof trace (acyclic, grounded, forward in time), one correct and
distinct options, and answers that survive renaming every person and shifting every day."""

from __future__ import annotations

import json
import re

import networkx as nx

from .case import at
from .narrate import HEADER, Read
from .prompt import ABSTAIN, LETTERS, render_prompt
from .solver import answer, split_prompt

# Internal identifiers that must never reach a model: evidence / log ids, rule attributes, snake_case names
LEAKS = (
    re.compile(r"\b(?:EV|LOG|log|ev|ENT|RULE|rule|node|e)[-_]?\d{1,4}\b"),
    re.compile(r"\b(?:found|link|implicated|withdrawn|claim|seen|result|action|custody|incident):\S"),
    re.compile(r"\b[a-z]+_[a-z_]+\b"),
)
DAY = re.compile(r"Day (\d+)")
DAY_SHIFT = 3


def leaks(texts: list[str]) -> list[str]:
    found = []
    for text in texts:
        for pattern in LEAKS:
            match = pattern.search(text)
            if match:
                found.append(match.group(0))
    return found


def provenance_problems(entries: list[Read]) -> list[str]:
    """Every reference in the case points at something stated earlier: a link's source clue, a withdrawn link,
    a conclusion's clue, an action's result, a custody move's item history."""
    problems: list[str] = []
    established: dict[str, int] = {}
    links: dict[tuple[str, str], int] = {}
    results: dict[str, int] = {}
    last = -1
    for e in entries:
        if e.minute < last:
            problems.append(f"entry on line {e.line + 1} is dated before the entry above it")
        last = max(last, e.minute)
        fact = e.fact
        kind = fact["kind"]
        if kind == "lead":
            established.setdefault(fact["clue"], e.minute)
        elif kind == "link":
            if established.get(fact["from"], e.minute + 1) > e.minute:
                problems.append(f"line {e.line + 1}: a link from a finding not established before it")
            established.setdefault(fact["to"], e.minute)
            links[(fact["from"], fact["to"])] = e.minute
        elif kind in ("conclude", "close") and established.get(fact["clue"], e.minute + 1) > e.minute:
            problems.append(f"line {e.line + 1}: a conclusion resting on a finding not established before it")
        elif kind == "withdraw" and links.get((fact["from"], fact["to"]), e.minute + 1) > e.minute:
            problems.append(f"line {e.line + 1}: withdraws a link the case never stated before it")
        elif kind == "result":
            results.setdefault(fact["clue"], e.minute)
        elif kind == "action" and fact["done"] and results.get(fact["clue"], e.minute + 1) > e.minute:
            problems.append(f"line {e.line + 1}: an action went ahead before the result it needs")
    return problems


def _stamp(text: str) -> int | None:
    head = HEADER.match(text)
    if not head:
        return None
    day, hours, minutes = (int(head.group(k)) for k in (1, 2, 3))
    return at(day, hours, minutes)


def proof_problems(row: dict) -> list[str]:
    problems: list[str] = []
    graph = row["reasoning_graph"]
    ids = [node["id"] for node in graph["nodes"]]
    texts = {node["id"]: node["text"] for node in graph["nodes"]}
    if len(set(ids)) != len(ids):
        problems.append("proof trace: duplicate node ids")
    dag = nx.DiGraph()
    dag.add_nodes_from(ids)
    for u, v in graph["edges"]:
        if u not in texts or v not in texts:
            problems.append(f"proof trace: edge {u}->{v} names a node that does not exist")
            continue
        dag.add_edge(u, v)
        tu, tv = _stamp(texts[u]), _stamp(texts[v])
        if tu is not None and tv is not None and tv < tu:
            problems.append(f"proof trace: edge {u}->{v} runs backwards in time")
    if not nx.is_directed_acyclic_graph(dag):
        problems.append("proof trace: the graph has a cycle")
    lines = set(row["context"].split("\n")) if row["context"] else None
    for node in graph["nodes"]:
        if node["kind"] == "evidence" and lines is not None and node["text"] not in lines:
            problems.append(f"proof trace: node {node['id']} is not an entry of the case")
    return problems


def renamed(prompt: str, entries: list[Read]) -> str:
    """Every person (named in a fact or as an author) replaced by the next one in a fixed rotation."""
    people = {e.fact["person"] for e in entries if "person" in e.fact}
    people |= {" ".join(e.author.split(" ")[-2:]) for e in entries}
    names = sorted(people)
    if len(names) < 2:
        return prompt
    mapping = {name: names[(k + 1) % len(names)] for k, name in enumerate(names)}
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")\b")
    return pattern.sub(lambda m: mapping[m.group(0)], prompt)


def shifted(prompt: str) -> str:
    """Every day moved by DAY_SHIFT, as text and as JSON ("day": N)."""
    text = DAY.sub(lambda m: f"Day {int(m.group(1)) + DAY_SHIFT}", prompt)
    return re.sub(r'"day": (\d+)', lambda m: f'"day": {int(m.group(1)) + DAY_SHIFT}', text)


def _choice(prompt: str) -> str | None:
    parsed = split_prompt(prompt)
    if parsed is None:
        return None
    correct = answer(parsed) if parsed.variant != "closedbook" else []
    return LETTERS[correct.index(True)] if sum(correct) == 1 else ABSTAIN


def audit(row: dict) -> list[str]:
    """Problems found in one row (empty when it is sound)."""
    problems: list[str] = []
    params = json.loads(row["params"])
    difficulty = row["difficulty"]
    variant, domain_name = difficulty["variant"], difficulty["domain"]
    if row["prompt"] != render_prompt(variant, domain_name, row["context"], row["question"]):
        problems.append("prompt is not the rendered case + question")
    for leak in leaks([row["context"], row["question"], *row["options"]]):
        problems.append(f"internal identifier {leak!r} in the prompt")
    options = row["options"]
    if len(options) != len(LETTERS) or len(set(options)) != len(options):
        problems.append("the options are not six distinct texts")
    modes = params["failure_modes"]
    gold = LETTERS.index(row["answer"]) if row["answer"] in LETTERS else -1
    if gold < 0 or [k for k, m in enumerate(modes) if m is None] != [gold]:
        problems.append("failure modes do not mark exactly the gold option as correct")
    parsed = split_prompt(row["prompt"])
    if parsed is None:
        return [*problems, "the prompt is not a RECON prompt"]
    if variant != "closedbook":
        correct = answer(parsed)
        if sum(correct) != 1:
            problems.append(f"the case makes {sum(correct)} options correct, not one")
        elif LETTERS[correct.index(True)] != row["answer"]:
            problems.append("the solver's answer (from the prompt alone) is not the gold answer")
        if variant == "narrative":
            problems += provenance_problems(parsed.entries)
            for name, changed in (("renaming every person", renamed(row["prompt"], parsed.entries)),
                                  ("shifting every day", shifted(row["prompt"]))):
                if _choice(changed) != row["answer"]:
                    problems.append(f"the answer changes under {name}")
    problems += proof_problems(row)
    return problems
