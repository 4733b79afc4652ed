"""RECON's order- and time-aware shortcut strategies and its learned surface probe (issue 27 item 3): each
strategy solves a hand-built prompt in which its leak is planted (so it is known to work: the audit would see the
hole), stays off a prompt without the leak, and reads every RECON format and variant without crashing; the probe
reads every slot into well-formed candidates whose gold decodes to full marks, and finds planted leaks."""

from __future__ import annotations

import json
import math

import pytest

from lurch_tasks.core.generation import generate_row, resolve_task
from lurch_tasks.core.registry import get_family
from lurch_tasks.core.rng import StableRng, derive_seed
from lurch_tasks.core.shortcuts import FAIL, OK, StreamingAudit
from lurch_tasks.families.recon import shortcuts as sc
from lurch_tasks.families.recon.learned import LEARNED_PROBE
from lurch_tasks.families.recon.prompt import ORDER_LETTERS, render_prompt, render_question
from lurch_tasks.families.recon.questions import ARROW
from lurch_tasks.families.recon.surface import question_times, rank, read_case

SHORTCUTS = {s.name: s for s in sc.SHORTCUTS}
ITEMS = ["the torn glove from Kesteil Wharf", "the bent key from Nounerk Lane", "the muddy scarf from Gidreix Quay",
         "the faded receipt from Poufia Court", "the chipped badge from Droudro Terrace"]
PEOPLE = ["Ana Bell", "Bo Chant", "Cy Dorn", "Di Evers", "Ed Fane", "Flo Gage"]


def entry(minute: int, text: str, kind: str = "DETECTIVE NOTES") -> str:
    day, rest = divmod(minute, 1440)
    return f"[Day {day + 1}, {rest // 60:02d}:{rest % 60:02d}] [{kind}] [Inspector Hal Iver] {text}"


def prompt(lines: list[str], question: str, options: tuple[str, ...] = (), answer_format: str = "mcq_single") -> str:
    return render_prompt("narrative", "criminal", "\n".join(lines), render_question(question, options, answer_format))


def answer(name: str, text: str, variant: object) -> str:
    return SHORTCUTS[name].answer(text, variant)


def review(minute: int, item: str) -> str:
    return entry(minute, f"A routine review covered {item}.")


# --- mention ranks -------------------------------------------------------------------------------------------

def ordering_prompt(second_in_gold_order: bool) -> tuple[str, list[str]]:
    """Items listed shuffled; every item first named in a scrambled order (as padding would), then again in gold
    order (or in reverse)."""
    options = [ITEMS[k] for k in (3, 0, 4, 2, 1)]
    gold = "ANSWER: " + ", ".join(ORDER_LETTERS[options.index(item)] for item in ITEMS)
    lines = [review(60 * k, ITEMS[j]) for k, j in enumerate((2, 0, 4, 1, 3))]
    again = ITEMS if second_in_gold_order else ITEMS[::-1]
    filler = "Staff attended Kriagom Wharf for a routine check."  # spreads the later rounds: they weigh in the mean
    for start in (600, 1800):
        lines += [line for k, item in enumerate(again)
                  for line in (review(start + 60 * k, item), *(entry(start + 60 * k + j, filler) for j in range(4)))]
    question = "The finding that Ana Bell is implicated in the break-in at Cuvia Arcade rests on a trail. Put the " \
               "findings below in the order that trail passed through them."
    return prompt(lines, question, tuple(options), "ordering"), gold


@pytest.mark.parametrize("which", ["second", "median", "mean"])
def test_ordering_by_a_later_mention_rank_reads_a_planted_chronology(which):
    leaky, gold = ordering_prompt(second_in_gold_order=True)
    assert answer(f"order_by_{which}_mention", leaky, "min") == gold
    for variant in ("min", "max"):  # the padding hides the first mention
        assert answer("order_by_first_mention", leaky, variant) != gold
    clean, gold = ordering_prompt(second_in_gold_order=False)
    assert answer(f"order_by_{which}_mention", clean, "min") != gold


def test_rank_statistics_and_missing_ranks():
    assert rank([0.1, 0.4, 0.5], "first") == 0.1 and rank([0.1, 0.4, 0.5], "second") == 0.4
    assert rank([0.1, 0.4, 0.5], "median") == 0.4 and rank([0.1, 0.4, 0.5], "last") == 0.5
    assert rank([0.1, 0.4, 0.7], "mean") == pytest.approx(0.4)
    assert rank([0.3], "second") == 1.0 and rank([], "first") == 1.0


def test_options_in_mention_order_takes_the_longest_in_order_option():
    gold = ITEMS[:4]
    options = (ARROW.join(gold[:3]),  # in order, but shorter (a dropped step)
               ARROW.join([gold[1], gold[0], *gold[2:]]),  # a swap
               ARROW.join(gold),
               ARROW.join([gold[0], ITEMS[4], *gold[1:]]),  # an inserted finding named late: out of order
               ARROW.join([*gold[:2], gold[3], gold[2]]),
               ARROW.join([gold[0], gold[2], gold[1], gold[3]]))
    lines = [review(60 * k, item) for k, item in enumerate(ITEMS)]
    question = "The finding that Ana Bell is implicated in the break-in at Cuvia Arcade rests on a trail of findings."
    text = prompt(lines, question, options)
    assert answer("options_in_mention_order", text, "first") == "ANSWER: C"
    # mentioned in another order: the option that fits it is taken instead, whatever the gold
    other = prompt([review(60 * k, ITEMS[j]) for k, j in enumerate((0, 2, 1, 3, 4))], question, options)
    assert answer("options_in_mention_order", other, "first") == "ANSWER: F"


# --- the question's times ------------------------------------------------------------------------------------

ACTIONS = ("the search of Bezewial Court", "the arrest warrant for Bo Chant", "the phone seizure from Cy Dorn",
           "the stake-out at Gidreix Quay", "the second interview of Di Evers", "the phone seizure from Ed Fane")


def counterfactual_prompt(inside: tuple[int, ...], answer_format: str) -> str:
    """The result came in on Day 3 and is moved to Day 6: the actions at ``inside`` went ahead in between."""
    lines = [entry(2 * 1440 + 600, "The result on the torn glove from Kesteil Wharf came in and was filed.")]
    for k, action in enumerate(ACTIONS):
        day = 3 if k in inside else (8 if k % 2 else 1)
        lines.append(entry(day * 1440 + 60 * k, f"On the strength of the result on the torn glove from Kesteil "
                                                  f"Wharf, {action} went ahead."))
    question = ("Suppose the result on the torn glove from Kesteil Wharf had come in only on Day 6, 09:00 instead "
                "of Day 3, 10:00. Which of these actions would not have gone ahead when it did?")
    return prompt(sorted(lines), question, ACTIONS, answer_format)


def test_question_times_reads_every_form():
    assert question_times("had come in only on Day 6, 09:00 instead of Day 3, 10:00") == [7740, 3480]
    assert question_times("on Day 1 between 18:59 and 20:47, which") == [1139, 1247]
    assert question_times("where Ana Bell was on Day 2 at about 14:15.") == [2295]


def test_mentioned_in_time_window_picks_the_options_between_the_two_times():
    assert answer("mentioned_in_time_window", counterfactual_prompt((4,), "mcq_single"), "between") == "ANSWER: E"
    multi = counterfactual_prompt((0, 2, 3), "mcq_multi")
    assert answer("mentioned_in_time_window", multi, "between") == "ANSWER: A, C, D"
    assert answer("mentioned_in_time_window", multi, "outside") == "ANSWER: B, E, F"


def withdrawals_prompt(before: int, after: int) -> str:
    lines = [entry(1440 * (1 + k), f"The finding that {ITEMS[k % 5]} led to {ITEMS[(k + 1) % 5]} is withdrawn: "
                                   "the sample was contaminated.") for k in range(before)]
    lines += [entry(1440 * 20 + 60 * k, f"Withdrawn: the step from {ITEMS[k % 5]} to {ITEMS[(k + 2) % 5]}, because "
                                        "the witness retracted.") for k in range(after)]
    lines += [entry(1440 * 2 + 7, f"On the strength of {ITEMS[k]}, {person} is implicated in the break-in at Cuvia "
                                  "Arcade.") for k, person in enumerate(PEOPLE[:4])]
    question = ("Consider every person X for whom the case had reached the finding that X is implicated in the "
                "break-in at Cuvia Arcade by Day 12, 08:23. For how many of them had every such finding lost all "
                "of its support by then?")
    return prompt(sorted(lines), question, (), "integer")


def test_surface_count_counts_withdrawals_before_the_moment():
    text = withdrawals_prompt(before=5, after=3)
    assert answer("surface_count", text, ("withdrawals", -1)) == "ANSWER: 4"
    assert answer("surface_count", text, ("withdrawals", 1)) == "ANSWER: 6"
    assert answer("surface_count", text, ("withdrawals_all", 0)) == "ANSWER: 8"
    assert answer("surface_count", text, ("conclusions", 0)) == "ANSWER: 4"
    assert answer("surface_count", text, ("people", -1)) == "ANSWER: 3"


def test_follows_withdrawn_link_picks_the_conclusion_entry_right_after_the_link():
    options = tuple(f"{person} is implicated in the break-in at Cuvia Arcade" for person in PEOPLE)
    order = (3, 0, 5, 1, 4, 2)  # conclusions stated in this order; the link's entry sits before PEOPLE[1]'s
    lines = []
    for k, person in enumerate(order):
        if person == 1:
            lines.append(entry(1440 + 60 * k - 30, f"Examination of {ITEMS[0]} led to {ITEMS[1]}."))
        lines.append(entry(1440 + 60 * k, f"On the strength of {ITEMS[2]}, {options[person]}."))
    question = (f"On Day 9, 07:26, the finding that {ITEMS[0]} led to {ITEMS[1]} was withdrawn. Which of these "
                "findings lost all of its support as a result?")
    assert answer("follows_withdrawn_link", prompt(lines, question, options), "after") == "ANSWER: B"


def test_latest_before_time_reads_the_place_named_last_before_the_asked_moment():
    places = ("Kriagom Wharf", "Cuvia Arcade", "Noduzon Arcade", "Gritux Wharf", "Stepos Court", "Maeth Court")
    lines = [entry(1440 * (2 + 3 * k), f"Custody log: the torn glove was moved to {place}.")
             for k, place in enumerate(places[:4])]  # Days 3, 6, 9 and 12
    lines += [entry(1440 * 20 + 60 * k, f"Staff attended {place} for a routine check.")
              for k, place in enumerate(places)]
    asked = "Where was the torn glove held on Day 8, 03:47"
    free = prompt(lines, f"{asked}, and since when had it been there?", (), "free_form")
    said = "ANSWER: the torn glove was at {}, from Day {}, 00:00."
    assert answer("latest_before_time", free, "before") == said.format("Cuvia Arcade", 6)
    assert answer("latest_before_time", free, "after") == said.format("Noduzon Arcade", 9)
    assert answer("latest_before_time", prompt(lines, f"{asked}?", places), "before") == "ANSWER: B"


def conflict_lines(places: tuple[str, str]) -> list[str]:
    return [entry(1440 * 4, "Staff attended Kriagom Wharf for a routine check."),
            entry(1440 * 5 + 30, f"The account given states that Ana Bell was at {places[0]} on Day 4 at about 14:15."),
            entry(1440 * 6, "The log places Ana Bell at Cuvia Arcade on Day 4 from 13:10 to 15:05."),
            entry(1440 * 7, f"According to the account given, Ana Bell was seen at {places[1]} on Day 4 around 14:15.")]


@pytest.mark.parametrize("variant", ["first", "last"])
def test_same_time_account_names_one_of_the_two_disagreeing_places(variant):
    places = ("Noduzon Arcade", "Cuvia Arcade")
    question = ("Two accounts disagree about where Ana Bell was on Day 4 at about 14:15. Where was Ana Bell at that "
                "time?")
    options = ("Gritux Wharf", "Noduzon Arcade", "Kriagom Wharf", "Cuvia Arcade", "Stepos Court", "Maeth Court")
    picked = places[0] if variant == "first" else places[1]
    text = prompt(conflict_lines(places), question, options)
    assert answer("same_time_account", text, variant) == f"ANSWER: {'ABCDEF'[options.index(picked)]}"
    free = prompt(conflict_lines(places), question + " What settles it?", (), "free_form")
    assert answer("same_time_account", free, variant) == f"ANSWER: Ana Bell was at {picked} at that time."


def oracle(day: int, time: str, fact: dict) -> str:
    return json.dumps({"author": "Inspector Hal Iver", "day": day, "fact": fact, "time": time, "type": "NOTES"},
                      sort_keys=True)


def test_the_text_strategies_read_oracle_entries_too():
    lines = [oracle(5, "10:00", {"day": 4, "kind": "statement", "person": "Ana Bell", "place": "Noduzon Arcade",
                                 "time": "14:15"}),
             oracle(6, "09:00", {"day": 4, "end": "15:05", "kind": "record", "person": "Ana Bell",
                                 "place": "Cuvia Arcade", "start": "13:10"}),
             oracle(7, "11:00", {"day": 4, "kind": "statement", "person": "Ana Bell", "place": "Cuvia Arcade",
                                 "time": "14:15"})]
    lines += [oracle(8 + k, "08:00", {"from": ITEMS[k], "kind": "withdraw", "reason": "a mix-up", "to": ITEMS[k + 1]})
              for k in range(3)]
    question = ("Two accounts disagree about where Ana Bell was on Day 4 at about 14:15. Where was Ana Bell at that "
                "time?")
    places = ("Gritux Wharf", "Noduzon Arcade", "Kriagom Wharf", "Cuvia Arcade", "Stepos Court", "Maeth Court")
    text = render_prompt("oracle", "criminal", "\n".join(lines), render_question(question, places))
    assert answer("same_time_account", text, "first") == "ANSWER: B"
    assert answer("same_time_account", text, "last") == "ANSWER: D"
    counting = ("Consider every person X for whom the case had reached the finding that X is implicated in the "
                "break-in at Cuvia Arcade by Day 9, 12:00. For how many of them had every such finding lost all of its "
                "support by then?")
    text = render_prompt("oracle", "criminal", "\n".join(lines), render_question(counting, (), "integer"))
    assert answer("surface_count", text, ("withdrawals", 0)) == "ANSWER: 2"


def test_read_case_maps_offsets_to_entry_times():
    text = prompt([review(60, ITEMS[0]), review(1500, ITEMS[1])], "Which?", ())
    case = read_case(text.rpartition("Question: ")[0])
    assert case.times(ITEMS[0]) == [60] and case.times(ITEMS[1]) == [1500]
    assert case.minute_at(0) is None  # the preamble is no entry


# --- every format and variant is read without crashing -------------------------------------------------------

@pytest.mark.parametrize("variant", ["narrative", "oracle", "closedbook"])
def test_every_strategy_answers_every_format_of_every_variant(variant):
    task = resolve_task("recon_all", {"num_samples": 1, "context_tokens": [16384], "domains": ["medical"],
                                      "variant": variant})
    family = get_family("recon")
    formats = set()
    for index in range(16):
        row = generate_row(task, index, "test")
        formats.add(row["answer_format"])
        for shortcut in family.shortcuts:
            for value in shortcut.variants:
                output = shortcut.answer(row["prompt"], value)
                assert isinstance(output, str)
                assert -1.0 <= family.score(row, output)["score"] <= 1.0
    assert formats == {"mcq_single", "mcq_multi", "integer", "ordering", "free_form"}


# --- the learned surface probe -------------------------------------------------------------------------------

FAMILY = get_family("recon")


@pytest.fixture(scope="module")
def case_rows() -> list[dict]:
    """Two cases' sixteen questions (every category x format slot), narrative."""
    task = resolve_task("recon_all", {"num_samples": 1, "context_tokens": [16384],
                                      "domains": ["criminal", "financial"]})
    return [generate_row(task, index, "test") for index in range(32)]


def probe_lines(rows: list[dict]) -> list:
    """The audit's learned-probe lines on ``rows`` (MCQ and ordering: chance exactly 0)."""
    audit = StreamingAudit(FAMILY.config_type(), False, (), (), FAMILY.score, FAMILY.guess, 0.0, LEARNED_PROBE)
    for row in rows:
        audit.add(row)
    return audit.lines()


def perfect(item) -> list[float]:
    return [1.0 if c.gold else 0.0 for c in item.candidates]


def test_read_gives_well_formed_items_for_every_slot(case_rows):
    widths: dict[str, set[int]] = {}
    slots = set()
    for row in case_rows:
        item = LEARNED_PROBE.read(row)
        category, answer_format = row["difficulty"]["category"], row["answer_format"]
        slots.add((category, answer_format))
        assert item.group == str(json.loads(row["params"])["case_seed"])
        assert (item.model, item.report) == (f"{category}/{answer_format}",) * 2  # one model per slot
        assert item.candidates and all(all(math.isfinite(v) for v in c.features) for c in item.candidates)
        widths.setdefault(item.model, set()).update(len(c.features) for c in item.candidates)
        gold = sum(c.gold for c in item.candidates)
        items = len(row["options"])
        expected = {"mcq_single": 1, "integer": 1, "ordering": items * (items - 1) // 2,
                    "mcq_multi": len(json.loads(row["answer"])) if answer_format == "mcq_multi" else 0
                    }.get(answer_format)
        assert gold == expected if expected is not None else gold >= 1, (category, answer_format)
        # the decoder writes an answer the scorer accepts: the gold candidates decode to full marks
        assert FAMILY.score(row, LEARNED_PROBE.decode(item, perfect(item)))["score"] == 1.0, (category, answer_format)
    assert all(len(w) == 1 for w in widths.values()), widths  # one feature length per model key
    assert len(slots) == 16
    assert len({LEARNED_PROBE.read(row).group for row in case_rows}) == 2  # a case's rows share their group


def planted_row(case: int, leak: bool) -> dict:
    """A six-option question whose options are mentioned in a seeded order; with ``leak`` the gold is the first
    one mentioned, else a seeded option."""
    rng = StableRng(derive_seed("recon-planted", case))
    order = rng.shuffled(range(6))
    gold = order[0] if leak else rng.below(6)
    lines = [entry(600 * k + 60, f"Records show {PEOPLE[j]} at Kriagom Wharf on Day 1 between 09:00 and 10:00.")
             for k, j in enumerate(order)]
    lines += [entry(9000 + 60 * k, f"Staff attended Cuvia Arcade with {PEOPLE[j]} for a routine check.")
              for k, j in enumerate(rng.shuffled(range(6)))]
    question = ("The break-in at Cuvia Arcade took place on Day 1 between 09:00 and 10:00. Which of these people "
                "is not accounted for by the records for the whole of that time?")
    letter = "ABCDEF"[gold]
    return {"prompt": prompt(lines, question, tuple(PEOPLE)), "answer_format": "mcq_single", "answer": letter,
            "options": list(PEOPLE), "answer_items": [letter], "params": json.dumps({"case_seed": case}),
            "difficulty": {"category": "temporal", "prompt_tokens": 1000}}


@pytest.mark.parametrize("leak", [True, False])
def test_the_probe_finds_a_planted_first_mention_leak_and_nothing_without_it(leak):
    rows = [planted_row(case, leak) for case in range(60)]
    (line,) = probe_lines(rows)
    assert line.strategy == "learned_probe[temporal/mcq_single]"
    if leak:
        assert line.score > 0.8 and line.status == FAIL
    else:
        assert line.status == OK and line.score < 0.2


def planted_ordering(case: int) -> dict:
    """Items first named in a seeded order, then again in gold order: only the later mentions tell."""
    rng = StableRng(derive_seed("recon-planted-order", case))
    items = rng.sample(ITEMS, 4)
    options = rng.shuffled(items)
    lines = [review(60 * k, item) for k, item in enumerate(rng.shuffled(items))]
    lines += [review(1440 * 5 + 60 * k, item) for k, item in enumerate(items)]
    gold = [ORDER_LETTERS[options.index(item)] for item in items]
    question = "The finding that Ana Bell is implicated in the break-in at Cuvia Arcade rests on a trail. Put the " \
               "findings below in the order that trail passed through them."
    return {"prompt": prompt(lines, question, tuple(options), "ordering"), "answer_format": "ordering",
            "answer": json.dumps(gold), "options": options, "answer_items": [f"{a}>{b}" for a, b in
                                                                               zip(gold, gold[1:], strict=False)],
            "params": json.dumps({"case_seed": case}), "difficulty": {"category": "chain", "prompt_tokens": 1000}}


def test_the_probe_orders_items_by_a_planted_second_mention():
    rows = [planted_ordering(case) for case in range(30)]
    (line,) = probe_lines(rows)
    assert line.strategy == "learned_probe[chain/ordering]" and line.score > 0.8 and line.status == FAIL


# --- scripts/validity_report.py recon-slots: a printer over the audit's own lines ---------------------------

def _printed(text: str) -> dict[tuple[str, str], tuple[str, str, str]]:
    """(slot, strategy) -> (score, chance, status) of every table line ``recon-slots`` printed."""
    out = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 9 and "/" in cells[0]:
            out[cells[0], cells[2]] = (cells[4], cells[5], cells[7].strip("*"))
    return out


def test_recon_slots_prints_exactly_what_the_shortcut_audit_finds_per_slot(capsys):
    """Two whole cases of recon_all: every line the script prints is the line ``core.shortcuts.audit_rows`` (the
    ``lurch audit-shortcuts`` path) gives on that slot's rows, and with ``--no-shortcuts`` the learned probe's
    lines are the same. (The script used to re-implement the per-slot audit.)"""
    import importlib.util
    from pathlib import Path

    from lurch_tasks.core.shortcuts import audit_rows

    path = Path(__file__).resolve().parents[1] / "scripts" / "validity_report.py"
    spec = importlib.util.spec_from_file_location("validity_report", path)
    report = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(report)
    report.recon_slots("recon_all", 32, 100)
    printed = _printed(capsys.readouterr().out)
    task = resolve_task("recon_all")
    family = get_family("recon")
    cases = [0, 144]  # what spread_indices(288, 2) picks
    by_slot: dict[str, list[dict]] = {}
    for index in [case * 16 + k for case in cases for k in range(16)]:
        row = generate_row(task, index)
        by_slot.setdefault(family.audit_slot(row), []).append(row)
    expected = {}
    for slot, rows in by_slot.items():
        for line in audit_rows(task, rows).lines:
            if not line.strategy.endswith("(AUC)") or line.status == FAIL:  # probe AUCs: the failing ones
                expected[slot, line.strategy] = (f"{line.score:.3f}", f"{line.chance:.3f}", line.status)
    assert len(by_slot) == 16 and printed == expected
    report.recon_slots("recon_all", 32, 100, shortcuts=False)
    learned = _printed(capsys.readouterr().out)
    assert learned and learned == {k: v for k, v in expected.items() if k[1].startswith("learned_probe")}
