"""ImplicitHop's issue-27 attacks: the relation-blind walk, the nearest last-relation line, and the learned
surface probe. Correctness is asserted on hand-built prompts (the generator is being changed to close these
holes, so no test here depends on how well an attack does on generated rows); generated rows are only read
for robustness (every answer format, every config)."""

from __future__ import annotations

import math

import pytest

from lurch_tasks.core.generation import generate_row, resolve_task
from lurch_tasks.core.registry import all_tasks, get_family
from lurch_tasks.core.rng import StableRng, derive_seed
from lurch_tasks.core.shortcuts import FAIL, run_audit
from lurch_tasks.families.implicit_hop import score
from lurch_tasks.families.implicit_hop.baselines import solve
from lurch_tasks.families.implicit_hop.prompt import ask, render_joined, render_prompt, render_question
from lurch_tasks.families.implicit_hop.shortcuts import (
    LEARNED_PROBE,
    SHORTCUTS,
    WALK_CHOICES,
    blind_walk,
    nearest_last_relation,
    probe_decode,
    probe_read,
    view,
)

FAMILY = get_family("implicit_hop")
TASKS = sorted(t.name for t in all_tasks() if t.family == "implicit_hop")
NEW = {s.name: s for s in SHORTCUTS if s.name in ("relation_blind_walk", "nearest_last_relation",
                                                   "reachable_extreme_year")}

# One chain, employer -> founder -> birthplace, with a same-signature competitor at every hop: the former
# employer (person -> organisation), the chair (organisation -> person), the home city (person -> city).
DECOY_FIRST = [
    "Mara Quint used to work for Kelvar Holdings.",
    "Kelvar Holdings is chaired by Tomas Brin.",
    "Tomas Brin was born in Vaskor.",
    "Mara Quint works for Ostrin Works.",
    "Ostrin Works was founded by Pell Adder.",
    "Pell Adder lives in Zarnel.",
    "Pell Adder was born in Dunmor.",
]
CHAIN = "What is the birthplace of the founder of the employer of Mara Quint?"


def _prompt(lines: list[str], question: str = CHAIN) -> str:
    return render_prompt("\n".join(lines), render_question([question]))


def _answer(output: str) -> str:
    return output.removeprefix("FINAL ANSWER: ")


# --- the strategies on hand-built prompts -------------------------------------------------------------------


def test_fixture_parses_and_the_solver_reads_the_relations():
    assert solve(_prompt(DECOY_FIRST)) == "FINAL ANSWER: Dunmor"
    v = view(_prompt(DECOY_FIRST))
    assert v.asked.chains == (("Mara Quint", ("employer", "founder", "birthplace")),)
    assert v.types["Kelvar Holdings"] == "organisation" and v.types["Vaskor"] == "city"


def test_blind_walk_follows_types_and_picks_among_competitors_by_its_choice():
    v = view(_prompt(DECOY_FIRST))
    chain = v.asked.chains[0]
    assert blind_walk(v, chain, "first", 0) == "Vaskor"  # the competitors come first: a wrong walk
    assert blind_walk(v, chain, "last", 0) == "Dunmor"
    assert blind_walk(v, chain, "nearest_previous", 0) == "Vaskor"  # each hop the line nearest the last one
    # a hop whose only same-signature fact is the asked one needs no relation read: without competitors every
    # choice lands on the answer
    lone = [line for line in DECOY_FIRST if "Kelvar" not in line and "Zarnel" not in line]
    lone_view = view(_prompt(lone))
    for choice in WALK_CHOICES:
        assert blind_walk(lone_view, lone_view.asked.chains[0], choice, 7) == "Dunmor", choice


def test_blind_walk_never_reads_which_relation_a_line_states():
    swapped = list(DECOY_FIRST)  # the relations of the chain and of its competitors trade places: the answer moves
    swapped[0], swapped[3] = "Mara Quint works for Kelvar Holdings.", "Mara Quint used to work for Ostrin Works."
    swapped[1], swapped[4] = "Kelvar Holdings was founded by Tomas Brin.", "Ostrin Works is chaired by Pell Adder."
    assert solve(_prompt(swapped)) == "FINAL ANSWER: Vaskor"
    before, after = view(_prompt(DECOY_FIRST)), view(_prompt(swapped))
    for choice in WALK_CHOICES:
        for seed in range(3):
            assert (blind_walk(before, before.asked.chains[0], choice, seed)
                    == blind_walk(after, after.asked.chains[0], choice, seed)), choice


def test_blind_walk_prefers_links_that_go_on_and_never_walks_back():
    # Kelvar Holdings has no founder/chair line: a walk through it is a dead end, so every choice avoids it
    dead_end = [line for line in DECOY_FIRST if "Tomas" not in line and "Zarnel" not in line]
    v = view(_prompt(dead_end))
    for choice in ("first", "last", "most_paths"):
        assert blind_walk(v, v.asked.chains[0], choice, 0) == "Dunmor", choice
    rivals = view(_prompt(["Ada Voss has a long rivalry with Bo Lark.", "Bo Lark competes with Ada Voss.",
                           "Bo Lark competes with Cy Marn."], "What is the rival of the rival of Ada Voss?"))
    assert blind_walk(rivals, rivals.asked.chains[0], "first", 0) == "Cy Marn"  # not back to the start


def test_nearest_last_relation_reads_position_not_the_chain():
    v = view(_prompt(DECOY_FIRST))
    # the employer line (3) is the anchor; birthplace lines of others: Vaskor at 1 line, Dunmor at 3 lines
    assert nearest_last_relation(v, v.asked.chains[0]) == "Vaskor"
    moved = view(_prompt(DECOY_FIRST[3:] + DECOY_FIRST[:3]))  # the chain's lines first: Dunmor now nearest
    assert nearest_last_relation(moved, moved.asked.chains[0]) == "Dunmor"
    one_hop = view(_prompt(DECOY_FIRST, "What is the employer of Mara Quint?"))
    assert nearest_last_relation(one_hop, one_hop.asked.chains[0]) is None  # one hop is the lookup itself


def test_a_short_context_states_each_chain_s_last_relation_about_many_other_subjects():
    """2k tokens, two chains of 8 hops: the lines of each chain's last relation about other subjects fit in right
    after the competitors' next relations, so the one nearest the start's first line is rarely the gold (0.3.0:
    4.7 of them per chain on these rows, and `nearest_last_relation` failed implicit_hop_grid at dispersion 0.5)."""
    task = resolve_task("implicit_hop_grid", {"depths": [8], "facts": [16], "dispersions": [0.5],
                                              "context_tokens": [2048], "num_samples": 3})
    per_chain = []
    for index in range(3):
        v = view(generate_row(task, index, "test")["prompt"])
        per_chain += [sum(r == relations[-1] and source != start for r, source, _ in v.ordered)
                      for start, relations in v.asked.chains]
    assert len(per_chain) == 6 and sum(per_chain) / len(per_chain) >= 8, per_chain


def test_joined_questions_take_their_final_step_over_the_walked_ends():
    people = DECOY_FIRST + ["Pell Adder was born in the year 1950.", "Tomas Brin was born in the year 1930.",
                            "Sura Penn founded Linden Guild.", "Linden Guild has its head office in Dunmor.",
                            "Sura Penn was born in the year 1940.", "Sura Penn lives in Dunmor.",
                            "Sura Penn was born in Quell."]
    compare = render_prompt("\n".join(people), render_joined(
        ["the founder of the employer of Mara Quint", "the founder of Linden Guild"], "people",
        "Which of them was born earliest?", number=False))
    assert solve(compare) == "FINAL ANSWER: Sura Penn"
    walk = NEW["relation_blind_walk"].answer
    assert _answer(walk(compare, "last")) == "Sura Penn"  # ends Pell Adder (1950) and Sura Penn (1940)
    assert _answer(walk(compare, "first")) == "Tomas Brin"  # ends Tomas Brin (1930) and Sura Penn
    reach = NEW["reachable_extreme_year"].answer  # every reachable end: Tomas Brin, Pell Adder, Sura Penn
    assert _answer(reach(compare, None)) == "Tomas Brin"
    assert _answer(reach(compare.replace("born earliest", "born latest"), None)) == "Pell Adder"
    count = render_prompt("\n".join(people), render_joined(
        ["the founder of the employer of Mara Quint", "the founder of Linden Guild"], "people",
        "How many of them were born in Dunmor?", number=True))
    assert solve(count) == "FINAL ANSWER: 1"
    assert _answer(walk(count, "last")) == "1" and _answer(walk(count, "first")) == "0"


# --- robustness on generated rows: every answer format ------------------------------------------------------


FORMATS = {  # (config, overrides) -> the answer format its rows have
    "entity (one question)": ("implicit_hop_depth", {"depths": [8], "context_tokens": [1024]}),
    "entity_set": ("implicit_hop_depth", {"depths": [3], "context_tokens": [1024]}),
    "stepwise": ("implicit_hop_depth", {"depths": [2], "context_tokens": [1024], "question_style": "stepwise"}),
    "compare": ("implicit_hop_compare", {"depths": [4], "context_tokens": [2048], "num_samples": 2}),
    "count": ("implicit_hop_count", {"depths": [3], "context_tokens": [1024], "num_samples": 2}),
}


@pytest.mark.parametrize("case", sorted(FORMATS))
def test_new_strategies_read_every_answer_format(case):
    name, overrides = FORMATS[case]
    task = resolve_task(name, overrides)
    for index in range(2):
        row = generate_row(task, index, "test")
        for shortcut in NEW.values():
            for variant in shortcut.variants:
                output = shortcut.answer(row["prompt"], variant)
                assert output == "" or output.startswith("FINAL ANSWER: "), (shortcut.name, variant, output)
                assert 0.0 <= score(row, output)["score"] <= 1.0


# --- the learned probe ---------------------------------------------------------------------------------------


def _questions(item) -> int:
    return len({c.answer.partition("\t")[0] for c in item.candidates})


@pytest.mark.parametrize("name", TASKS)
def test_probe_read_is_well_formed_on_every_config(name):
    task = resolve_task(name)
    assert FAMILY.learned_probe is LEARNED_PROBE
    widths: dict[str, set[int]] = {}
    for index in (0, 1):
        row = generate_row(task, index, "test")
        item = probe_read(row)
        assert item is not None and item.group == row["pair_key"] and item.report == ""
        join = task.config.join
        assert item.model == f"{join}/{row['answer_format']}"
        assert item.candidates
        widths.setdefault(item.model, set()).update(len(c.features) for c in item.candidates)
        assert all(math.isfinite(x) for c in item.candidates for x in c.features)
        if join == "list":  # one gold candidate per question, every question offered candidates
            per_question: dict[str, int] = {}
            for c in item.candidates:
                q = c.answer.partition("\t")[0]
                per_question[q] = per_question.get(q, 0) + c.gold
            if row["difficulty"].get("broken"):  # NOT FOUND is no entity: the probe offers none (always_not_found
                assert sorted(per_question.values()) == [0]  # is the strategy that says it)
                continue
            assert sorted(per_question.values()) == [1] * len(row["answer_items"])
        else:
            assert sum(c.gold for c in item.candidates) == 1
        if join == "count":
            assert [c.answer for c in item.candidates] == [str(n) for n in range(len(item.candidates))]
        # the decoder turns gold-only probabilities into a perfect answer, and the reverse into a wrong one
        assert score(row, probe_decode(item, [float(c.gold) for c in item.candidates]))["score"] == 1.0
        assert score(row, probe_decode(item, [1.0 - c.gold for c in item.candidates]))["score"] < 1.0
    assert all(len(w) == 1 for w in widths.values()), widths


PEOPLE = ("Ada Voss", "Bo Lark", "Cy Marn", "Dee Ruhl", "Eli Tamsk", "Fen Oduro", "Gil Parrat", "Hal Wenck")
CITIES = ("Vaskor", "Dunmor", "Zarnel", "Quell", "Ostry", "Brannock", "Silvet", "Harrow")
PERSON_LINKS = {"mentor": "{s} was trained by {t}.", "rival": "{s} has a long rivalry with {t}."}
CITY_LINKS = {"birthplace": "{s} was born in {t}.", "residence": "{s} lives in {t}."}


def _world(w: int) -> dict:
    """A hand-built row whose only regularity is the symmetry of its chain: the start links to two people (its
    mentor and its rival), each of them to two cities (birthplace, home), in a seeded line order, among
    other people's facts. Every surface statistic treats the four reachable cities alike: the probe can at best
    pick one of them (a quarter of the rows)."""
    rng = StableRng(derive_seed("implicit-hop-probe-fixture", w))
    start, *others = rng.shuffled(list(PEOPLE))
    hop1, hop2 = rng.choice(sorted(PERSON_LINKS)), rng.choice(sorted(CITY_LINKS))
    cities = rng.shuffled(list(CITIES))
    lines = [PERSON_LINKS["mentor"].format(s=start, t=others[0]), PERSON_LINKS["rival"].format(s=start, t=others[1])]
    ends = {}
    for k, person in enumerate(others[:2]):
        for j, relation in enumerate(sorted(CITY_LINKS)):
            ends[(k, relation)] = cities[2 * k + j]
            lines.append(CITY_LINKS[relation].format(s=person, t=cities[2 * k + j]))
    for person in others[2:]:  # the rest of the world: facts of people the chain never reaches
        lines += [CITY_LINKS[r].format(s=person, t=rng.choice(list(CITIES))) for r in sorted(CITY_LINKS)]
    gold = ends[(sorted(PERSON_LINKS).index(hop1), hop2)]
    context = "\n".join(rng.shuffled(lines))
    question = render_question([ask(f"the {'home city' if hop2 == 'residence' else hop2} of the {hop1} of {start}",
                                    "nested")])
    prompt = render_prompt(context, question)
    assert solve(prompt) == f"FINAL ANSWER: {gold}"
    return {"prompt": prompt, "context": context, "question": question, "answer_format": "entity",
            "answer_items": [gold], "pair_key": f"fixture/{w}"}


def _planted(row: dict, names: list[str]) -> dict:
    """The row with one more context line (not a fact) that names ``names``, closing the context."""
    context = row["context"] + "\nRecords also name " + ", ".join(names) + "."
    return {**row, "context": context, "prompt": row["prompt"].replace(row["context"], context, 1)}


def _probe_line(rows):
    lines = run_audit(rows, None, False, [], [], FAMILY.score, FAMILY.guess, learned=LEARNED_PROBE)
    return next(line for line in lines if line.strategy.startswith("learned_probe"))


def test_learned_probe_catches_a_planted_leak():
    rows = [_world(w) for w in range(60)]
    clean = _probe_line(rows)
    leaked = _probe_line([_planted(row, row["answer_items"]) for row in rows])
    assert clean.score <= 0.5, clean  # four reachable cities alike: about a quarter
    assert leaked.status == FAIL and leaked.score >= 0.9, leaked
