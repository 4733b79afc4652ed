"""ImplicitHop gives a reader who skips the reasoning nothing. A count (balance.py): every end it can reach has
one line to the named city, a chain's competitor ends are natives as often as its gold end, and a count whose
items are all named is no walk at all. Dispersion 0: lines of a chain's last relation about other subjects sit
in the evidence block too. The checks read the prompt (facts parsed with the templates) and the params."""

from __future__ import annotations

import json

from lurch_tasks.core.generation import generate_row, resolve_task
from lurch_tasks.families.implicit_hop import score
from lurch_tasks.families.implicit_hop.baselines import facts_of
from lurch_tasks.families.implicit_hop.schema import RELATIONS, YEAR
from lurch_tasks.families.implicit_hop.shortcuts import SHORTCUTS

SIGNATURE = {r.id: (r.source, r.target) for r in RELATIONS}
BY_NAME = {s.name: s for s in SHORTCUTS}


def _rows(name: str, overrides: dict) -> list[dict]:
    task = resolve_task(name, overrides)
    return [generate_row(task, i) for i in range(task.config.size())]


def _last_hop_options(row: dict) -> list[tuple[str, list[str]]]:
    """Per chain with an entity hop: (gold end, the values of the last bridge's same-signature facts in the
    context), read off the prompt."""
    facts, out = facts_of(row["prompt"]), []
    for branch in json.loads(row["params"])["branches"]:
        hops = branch["relations"][:-1]  # the join's lookup is stored last
        if not hops:
            continue
        subject = ([branch["start"], *branch["bridges"]])[len(hops) - 1]
        relation = hops[-1]
        competitors = [facts[(r, subject)] for r in SIGNATURE if r != relation and SIGNATURE[r] == SIGNATURE[relation]
                       and SIGNATURE[r][1] != YEAR and (r, subject) in facts]
        out.append((facts[(relation, subject)], competitors))
    return out


def test_a_counts_competitor_ends_are_natives_as_often_as_its_gold_ends():
    natives = options = 0
    for row in _rows("implicit_hop_count", {"depths": [3, 4], "num_samples": 8}):
        facts = facts_of(row["prompt"])
        join = json.loads(row["params"])["join"]
        for _, competitors in _last_hop_options(row):
            for end in competitors:
                options += 1
                natives += facts.get((join["relation"], end)) == join["target"]
    # a native in about half the competitor ends (0.2.0: about one in thirty, so a walk that lands on one counted 0)
    assert options and 0.3 <= natives / options <= 0.7, (natives, options)


def test_a_count_of_named_items_is_no_relation_blind_walk():
    rows = _rows("implicit_hop_count", {"depths": [2], "num_samples": 3})
    walk = BY_NAME["relation_blind_walk"].answer
    assert all(walk(row["prompt"], "first") == "" for row in rows)  # it abstains (it was the solver: 1.00)


def _city_lines(row: dict, entity: str) -> int:
    """Lines from the entity that name the count's city, whatever their relation."""
    city = json.loads(row["params"])["join"]["target"]
    return sum(1 for (r, source), value in facts_of(row["prompt"]).items()
               if source == entity and value == city and SIGNATURE[r][1] == "city")


def test_every_end_a_count_reaches_has_one_line_to_the_city():
    linked = ends = 0
    for row in _rows("implicit_hop_count", {"depths": [2, 4], "num_samples": 6}):
        for branch in json.loads(row["params"])["branches"]:
            ends += 1
            linked += _city_lines(row, branch["bridges"][-1] if branch["bridges"] else branch["start"]) == 1
        for _, competitors in _last_hop_options(row):
            ends += len(competitors)
            linked += sum(_city_lines(row, end) == 1 for end in competitors)
    # 0.2.0: only the ends counted (and a few by chance), so "linked to the city by any line" read the count
    assert linked / ends >= 0.95, (linked, ends)


def test_a_blind_count_of_named_items_says_nothing_about_the_answer():
    rows = _rows("implicit_hop_count", {"depths": [2], "num_samples": 8})
    blind = BY_NAME["relation_blind_count"].answer
    # every item has one line to the city: the blind count is the number of items, whatever the answer (0.2.0:
    # the answer plus the few items that named the city by another relation, 2-5 on an answer of 1-3)
    items = {f"FINAL ANSWER: {len(json.loads(row['params'])['branches'])}" for row in rows}
    assert {blind(row["prompt"], "first") for row in rows} == items


def test_at_dispersion_zero_the_last_relation_nearest_the_start_is_seldom_the_answer():
    rows = _rows("implicit_hop_dispersion", {"dispersions": [0.0], "num_samples": 24})
    nearest = BY_NAME["nearest_last_relation"].answer
    found = sum(score(row, nearest(row["prompt"], None))["score"] for row in rows) / len(rows)
    # 0.2.0: 0.65 on these rows (the evidence one closed block, every other line of the relation outside it);
    # the block now holds a few of them, within the dispersion tolerance
    assert found <= 0.45, found  # 0.22
    assert all(0 <= row["difficulty"]["evidence_dispersion"] <= 0.85 * 0.02 for row in rows)
