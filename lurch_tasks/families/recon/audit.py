"""Row audits for RECON (``lurch validate``): schema-level leaks, the provenance read back from the case text
(referential integrity, time order), the proof trace (acyclic, grounded, forward in time), options fit for the
format (six distinct with exactly the gold marked correct; an ordering's items a path of the DAG), the solver's
answer from the prompt alone scoring full marks, answers that survive renaming every person and shifting every
day; and across a config's rows, every case's questions exactly the quota matrix."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from .case import at
from .formats import CONTROLS
from .narrate import HEADER, Read
from .prompt import LETTERS, letters_for, render_prompt
from .questions import is_control_sample
from .solver import Parsed, answer, solve, split_prompt

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
    import networkx as nx  # audits only: generating a row need not pay its ~0.2 s import

    dag = nx.DiGraph()
    dag.add_nodes_from(ids)
    for u, v in graph["edges"]:
        if u not in texts or v not in texts:
            problems.append(f"proof trace: edge {u}->{v} names a node that does not exist")
            continue
        dag.add_edge(u, v)
        # a step reads the entry of its number (s12 reads e12): its time is that entry's
        tu, tv = (_stamp(texts.get(f"e{n[1:]}", texts[n]) if n.startswith("s") else texts[n]) for n in (u, v))
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


def _agrees(row: dict, prompt: str, answer_field: str) -> bool:
    """Whether the solver's answer to ``prompt`` scores full marks against ``answer_field``."""
    from . import score  # the family's scorer (imported here: the package imports this module)

    output = solve(prompt)
    return output is not None and score({**row, "answer": answer_field}, output)["accuracy"] == 1.0


def option_problems(row: dict, modes: list) -> list[str]:
    kind, options = row["answer_format"], row["options"]
    problems = []
    if kind in ("mcq_single", "mcq_multi") and (len(options) != len(LETTERS) or len(set(options)) != len(options)):
        problems.append("the options are not six distinct texts")
    if kind == "ordering" and not (2 <= len(options) <= len(letters_for(kind)) and len(set(options)) == len(options)):
        problems.append("the items to order are not 2-15 distinct texts")
    if kind in ("integer", "free_form") and options:
        problems.append(f"a {kind} question lists options")
    letters = letters_for(kind)
    if kind == "mcq_single":
        gold = [letters.index(row["answer"])] if row["answer"] in LETTERS else []
    elif kind == "mcq_multi":
        gold = [letters.index(x) for x in json.loads(row["answer"])]
        if not 0 < len(gold) < len(options):
            problems.append(f"{len(gold)} correct options of {len(options)}: allowed 1 to {len(options) - 1}")
    else:
        gold = []
    if kind.startswith("mcq") and [k for k, m in enumerate(modes) if m is None] != sorted(gold):
        problems.append("failure modes do not mark exactly the gold options as correct")
    return problems


def structure_problems(row: dict, parsed: Parsed) -> list[str]:
    """MCQ: the case makes exactly the gold options correct. Ordering: the gold is the one order of the items
    (a chain's items linked one to the next, a custody history at distinct times)."""
    kind = row["answer_format"]
    solved = answer(parsed)
    if row["difficulty"].get("control") == "abstain":  # a control: the case settles no option, no free-form answer
        if (isinstance(solved, list) and any(solved)) or isinstance(solved, str):
            return ["an abstention control that the case settles"]
        return []
    if kind == "mcq_single" and (not isinstance(solved, list) or sum(solved) != 1):
        return [f"the case makes {sum(solved) if isinstance(solved, list) else 'no'} options correct, not one"]
    if kind == "mcq_multi":
        gold = {letters_for(kind).index(x) for x in json.loads(row["answer"])}
        if not isinstance(solved, list) or {k for k, right in enumerate(solved) if right} != gold:
            return ["the case does not make exactly the gold subset correct"]
    if kind == "ordering":
        order = [row["options"][letters_for(kind).index(x)] for x in json.loads(row["answer"])]
        links = {(e.fact["from"], e.fact["to"]) for e in parsed.entries if e.fact["kind"] == "link"}
        moves = {e.fact["place"]: e.minute for e in parsed.entries if e.fact["kind"] == "custody"}
        chained = all((a, b) in links for a, b in zip(order, order[1:], strict=False))
        timed = all(a in moves and b in moves and moves[a] < moves[b] for a, b in zip(order, order[1:], strict=False))
        if not (chained or timed):
            return ["the gold order is not a path of the case's provenance (links or custody moves in time)"]
    return []


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
    problems += option_problems(row, params["failure_modes"])
    parsed = split_prompt(row["prompt"])
    if parsed is None or parsed.format != row["answer_format"]:
        return [*problems, "the prompt is not a RECON prompt of its answer format"]
    if variant != "closedbook":
        problems += structure_problems(row, parsed)
        if not _agrees(row, row["prompt"], row["answer"]):
            problems.append("the solver's answer (from the prompt alone) does not score full marks")
        if variant == "narrative":
            problems += provenance_problems(parsed.entries)
            variations = (("renaming every person", renamed(row["prompt"], parsed.entries), row["answer"]),
                          ("shifting every day", shifted(row["prompt"]), shifted(row["answer"])))
            for name, changed, gold in variations:
                if not _agrees(row, changed, gold):
                    problems.append(f"the answer changes under {name}")
    problems += proof_problems(row)
    return problems


def row_summary(row: dict) -> tuple[int, str, str, bool, bool]:
    """(case seed, category, format, whether the row is an abstention control, whether it should be one)."""
    difficulty = row["difficulty"]
    params = json.loads(row["params"])
    expected = is_control_sample(params["sample"]) and (difficulty["category"], difficulty["format"]) in CONTROLS
    control = difficulty.get("control") == "abstain"
    return params["case_seed"], difficulty["category"], difficulty["format"], control, expected


def audit_rows(config: Any, summaries: list[tuple], complete: bool) -> list[str]:
    """Every case asks exactly the quota matrix's questions (once each) for the config's categories and
    formats; with a --limit prefix the last case may be cut short. The abstention controls are exactly the
    control slots of the control cases (``questions.is_control_sample``): their share is fixed, not drawn."""
    expected = Counter(config.slots())
    cases: dict[int, Counter] = {}
    problems = []
    for seed, category, answer_format, control, should in summaries:
        cases.setdefault(seed, Counter())[category, answer_format] += 1
        if control != should:
            problems.append(f"case {seed}: {category}/{answer_format} is {'' if control else 'not '}an abstention "
                            f"control, and should {'' if should else 'not '}be")
    seeds = list(cases)
    checked = seeds if complete else seeds[:-1]
    for seed in checked:
        if cases[seed] != expected:
            missing = sorted((expected - cases[seed]).elements())
            extra = sorted((cases[seed] - expected).elements())
            problems.append(f"case {seed}: questions differ from the quota matrix (missing {missing}, extra {extra})")
    return problems[:20]
