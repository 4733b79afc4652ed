"""Edge parsing for graph reconstruction (lurch_tasks.scoring.pairs): syntaxes, normalization, robustness."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from steps import assert_linear, assert_per_char_bound, count_steps

from lurch_tasks.scoring import score_items
from lurch_tasks.scoring.pairs import (
    MAX_GROUP,
    TITLES,
    _parse_unguarded,
    edge_item,
    normalize_name,
    parse_edges,
)

ROSTER = [
    "Lena Morrow",
    "Tomasz Adeyemi-Kovac",
    "Aoife O'Neill",
    "Tom Baker",
    "Sam Hill",
    "Priya Nair",
    "Jonas Weller",
    "Mara Quint",
]
LM, TAK, AO, TB, SH, PN, JW, MQ = ROSTER


def e(a: str, b: str) -> str:
    return edge_item(a, b)


def parse(text: object, groups: bool = False) -> list[str]:
    return parse_edges(text, ROSTER, groups=groups)


# --- normalization --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "variant",
    ["Lena Morrow", "lena morrow", "LENA MORROW", "  Lena   Morrow ", "**Lena Morrow**", "_Lena Morrow_",
     "`Lena Morrow`", '"Lena Morrow"', "“Lena Morrow”", "'Lena Morrow'", "[Lena Morrow]", "(Lena Morrow)",
     "Dr. Lena Morrow", "Dr Lena Morrow", "dr.lena morrow", "Prof. Dr. Lena Morrow", "Ms Lena Morrow.",
     "MRS. Lena Morrow,", "Sir Lena Morrow!", "Mx. Lena Morrow?", "Madam Lena Morrow"],
)  # fmt: skip
def test_normalize_name_variants(variant):
    assert normalize_name(variant) == "lena morrow"


def test_normalize_name_hyphens_and_apostrophes():
    assert normalize_name("Aoife O'Neill") == normalize_name("Aoife O’Neill") == normalize_name("aoife oneill")
    assert normalize_name("Aoife O'Neill") == "aoife oneill"
    assert normalize_name("Tomasz Adeyemi-Kovac") == normalize_name("Tomasz Adeyemi Kovac")
    assert normalize_name("Tomasz Adeyemi-Kovac") == normalize_name("tomasz adeyemi–kovac") == "tomasz adeyemi kovac"


def test_normalize_name_keeps_a_lone_title_and_empty_input():
    assert normalize_name("Dr.") == "dr"
    assert normalize_name("") == normalize_name("  ** ") == ""
    assert {"dr", "mr", "mrs", "ms", "miss", "mx", "prof", "professor", "sir", "dame", "madam", "mister"} <= TITLES


@given(st.text())
def test_normalize_name_is_idempotent(text):
    once = normalize_name(text)
    assert normalize_name(once) == once
    assert "|" not in once and "  " not in once and once == once.strip()


def test_edge_item_is_canonical_and_undirected():
    assert edge_item("Tomasz Adeyemi-Kovac", "Lena Morrow") == "lena morrow|tomasz adeyemi kovac"
    assert edge_item("Lena Morrow", "Dr. TOMASZ Adeyemi Kovac") == "lena morrow|tomasz adeyemi kovac"
    assert edge_item(LM, LM) == "lena morrow|lena morrow"


# --- line syntaxes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    ["Lena Morrow -- Tom Baker", "Lena Morrow --- Tom Baker", "Lena Morrow--Tom Baker", "Lena Morrow — Tom Baker",
     "Lena Morrow – Tom Baker", "Lena Morrow - Tom Baker", "Lena Morrow <-> Tom Baker", "Lena Morrow <--> Tom Baker",
     "Lena Morrow -> Tom Baker", "Tom Baker <- Lena Morrow", "Lena Morrow => Tom Baker", "Lena Morrow ↔ Tom Baker",
     "Lena Morrow → Tom Baker", "Lena Morrow and Tom Baker", "Lena Morrow AND Tom Baker", "Lena Morrow & Tom Baker",
     "(Lena Morrow, Tom Baker)", "[Lena Morrow, Tom Baker]", "('Lena Morrow', 'Tom Baker')", "Lena Morrow, Tom Baker",
     "Lena Morrow; Tom Baker", "1. Lena Morrow -- Tom Baker", "12) Lena Morrow -- Tom Baker",
     "(3) Lena Morrow -- Tom Baker", "- Lena Morrow -- Tom Baker", "* Lena Morrow -- Tom Baker",
     "• Lena Morrow -- Tom Baker", "1.Lena Morrow -- Tom Baker",
     "- **Lena Morrow** -- **Tom Baker**", "**Lena Morrow -- Tom Baker**", '"Lena Morrow" -- "Tom Baker"',
     "Lena Morrow -- Tom Baker.", "Lena Morrow -- Tom Baker;", "Lena Morrow -- Tom Baker (shared phone number)",
     "Lena Morrow -- Tom Baker: same flight", "Lena Morrow -- Tom Baker: same flight, on 3 May, at 10:30",
     "Pair 1: Lena Morrow -- Tom Baker", "Dr. Lena Morrow (planner) -- Mr. Tom Baker (driver)",
     "Lena Morrow -- Tom Baker, who share a phone", "Lena Morrow and Tom Baker, both of whom flew to Oslo",
     "Morrow, Lena -- Baker, Tom", "> Lena Morrow -- Tom Baker", "### Lena Morrow -- Tom Baker",
     "    Lena Morrow    --    Tom Baker   ", "LENA MORROW -- tom baker", "Lena Morrow's -- Tom Baker",
     "| Lena Morrow | Tom Baker | same phone |", "| 1 | Lena Morrow | Tom Baker |", "(Lena Morrow) -- (Tom Baker)"],
)  # fmt: skip
def test_pair_syntaxes(line):
    for groups in (False, True):
        assert parse(line, groups) == [e(LM, TB)], (line, groups)


def test_names_with_hyphens_and_apostrophes_resolve():
    text = "Aoife O’Neill -- Tomasz Adeyemi Kovac\naoife oneill - tomasz adeyemi-kovac\nAoife O'Neill, Lena Morrow"
    assert parse(text) == [e(AO, TAK), e(AO, LM)]


def test_hyphen_inside_a_name_is_not_a_separator():
    assert parse("Tomasz Adeyemi-Kovac") == []
    assert parse("Tomasz Adeyemi-Kovac -- Lena Morrow") == [e(TAK, LM)]


def test_preamble_prose_and_lines_without_separators_are_ignored():
    text = (
        "Here are the connections:\n"
        "Based on the profiles, the following people are connected:\n"
        "Lena Morrow\n"
        "\n"
        "1. Lena Morrow -- Tom Baker\n"
        "However, Tom Baker had a second phone.\n"
        "The planner -- the driver\n"
        "I hope this helps, let me know!\n"
    )
    assert parse(text) == [e(LM, TB)]


def test_one_sided_prose_follows_the_separator_strength():
    # Strong separator: one name-like side is enough, the other side becomes an unknown item.
    assert parse("Lena Morrow -- the planner") == [edge_item(LM, "the planner")]
    # Weak separators need two names: prose with a comma or "and" is not a pair.
    assert parse("Lena Morrow and her colleague") == []
    assert parse("Yes, Lena Morrow") == []
    assert parse("Lena, Tom") == []


def test_trailing_explanation_after_colon_or_parenthesis_even_when_unbalanced():
    text = "Lena Morrow -- Tom Baker (shared phone\nSam Hill -- Priya Nair: same flight -- per the logs"
    assert parse(text) == [e(LM, TB), e(SH, PN)]


def test_several_pairs_on_one_line():
    assert parse("Lena Morrow -- Tom Baker; Sam Hill -- Priya Nair") == [e(LM, TB), e(SH, PN)]
    assert parse("(Lena Morrow, Tom Baker), (Sam Hill, Priya Nair)") == [e(LM, TB), e(SH, PN)]
    assert parse("[('Lena Morrow', 'Tom Baker'), ('Sam Hill', 'Priya Nair')]") == [e(LM, TB), e(SH, PN)]


def test_star_lists():
    text = (
        "Lena Morrow:\n- Tom Baker\n- Sam Hill (phone)\n\n- Priya Nair: same flight\nJonas Weller: Mara Quint, Sam Hill"
    )
    assert parse(text) == [e(LM, TB), e(LM, SH), e(LM, PN), e(JW, MQ), e(JW, SH)]
    # The list ends at a line without a bullet; a header needs a roster name.
    assert parse("Lena Morrow:\nTom Baker\n- Sam Hill") == []
    assert parse("Connections:\n- Tom Baker\n- Sam Hill") == []


def test_tables_need_two_roster_names():
    text = (
        "| Person A | Person B | Cue |\n|---|---|---|\n| Lena Morrow | Tom Baker | phone |\n| Lena Morrow | Ghost | x |"
    )
    assert parse(text) == [e(LM, TB)]


# --- unknown names, self pairs, duplicates ----------------------------------------------------------


def test_unknown_names_and_self_pairs_are_false_positives():
    gold = [e(LM, TB)]
    predicted = parse(
        "Lena Morrow -- Tom Baker\nLena Morrow -- Tom Bakr\nSam Hill -- Sam Hill\nMr. Nobody -- Priya Nair"
    )
    assert predicted == [e(LM, TB), edge_item(LM, "Tom Bakr"), e(SH, SH), edge_item("Nobody", PN)]
    assert not set(predicted[1:]) & set(gold)
    scores = score_items(gold, predicted)
    assert (scores.tp, scores.fp, scores.fn) == (1, 3, 0)


def test_first_name_only_is_an_unknown_name():
    assert parse("Lena -- Tom") == [edge_item("Lena", "Tom")]


def test_substring_resolution_needs_exactly_one_roster_name():
    assert parse("Dr. Lena Morrow (the planner) -- the driver Tom Baker") == [e(LM, TB)]
    assert parse("Lena Morrow -- Tom Baker Sam Hill") == [edge_item(LM, "tom baker sam hill")]
    assert parse("Lena Morrow -- Tom Baker who met Tom Baker") == [e(LM, TB)]


def test_duplicates_count_once():
    text = "Lena Morrow -- Tom Baker\nTom Baker -- Lena Morrow\nlena morrow and TOM BAKER\n" * 50
    predicted = parse(text)
    assert predicted == [e(LM, TB)]
    scores = score_items([e(LM, TB), e(SH, PN)], predicted + predicted)
    assert (scores.tp, scores.fp, scores.fn) == (1, 0, 1)


def test_first_seen_order():
    assert parse("Sam Hill -- Priya Nair\nLena Morrow -- Tom Baker\nSam Hill -- Priya Nair") == [e(SH, PN), e(LM, TB)]


# --- three or more names ------------------------------------------------------------------------


def test_groups_expand_to_all_pairs():
    clique = sorted(e(a, b) for a, b in itertools.combinations([LM, TB, SH], 2))
    for line in [
        "Lena Morrow, Tom Baker, Sam Hill",
        "Lena Morrow, Tom Baker and Sam Hill",
        "Lena Morrow, Tom Baker, and Sam Hill",
        "Lena Morrow; Tom Baker; Sam Hill",
        "Lena Morrow & Tom Baker & Sam Hill",
        "Lena Morrow -- Tom Baker -- Sam Hill",
        "Lena Morrow -- Tom Baker, Sam Hill",
        "Group 1: Lena Morrow, Tom Baker, Sam Hill",
        "(Lena Morrow, Tom Baker, Sam Hill)",
        "- Lena Morrow, Tom Baker and Sam Hill (same book club)",
        "Morrow, Lena -- Baker, Tom -- Hill, Sam",
        '["Lena Morrow", "Tom Baker", "Sam Hill"]',
        '{"groups": [["Lena Morrow", "Tom Baker", "Sam Hill"]]}',
    ]:
        assert sorted(parse(line, groups=True)) == clique, line


def test_two_groups_on_two_lines():
    text = "Lena Morrow, Tom Baker, Sam Hill\nPriya Nair, Jonas Weller, Mara Quint, Aoife O'Neill"
    assert len(parse(text, groups=True)) == 3 + 6


def test_groups_larger_than_the_cap_are_ignored():
    names = [f"Person{chr(65 + i // 26)}{chr(65 + i % 26)} Smith" for i in range(MAX_GROUP + 1)]
    assert parse(", ".join(names), groups=True) == []
    assert len(parse(", ".join(names[:MAX_GROUP]), groups=True)) == MAX_GROUP * (MAX_GROUP - 1) // 2


def test_without_groups_strong_chains_link_consecutive_names():
    assert parse("Lena Morrow -- Tom Baker -- Sam Hill") == [e(LM, TB), e(TB, SH)]
    assert parse("Lena Morrow -> Tom Baker -> Sam Hill -> Priya Nair") == [e(LM, TB), e(TB, SH), e(SH, PN)]


def test_without_groups_lists_of_three_names_are_ignored():
    for text in [
        "Lena Morrow, Tom Baker, Sam Hill",
        "Lena Morrow, Tom Baker and Sam Hill",
        "(Lena Morrow, Tom Baker, Sam Hill)",
        '["Lena Morrow", "Tom Baker", "Sam Hill"]',
    ]:
        assert parse(text) == [], text


# --- CONNECTIONS: marker ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "marker",
    ["CONNECTIONS:", "**CONNECTIONS:**", "**Connections**:", "connections:", "### Connections", "Final connections:",
     "So my answer is CONNECTIONS: "],
)  # fmt: skip
def test_only_the_text_after_the_last_marker_counts(marker):
    text = (
        "Step 1: Lena Morrow -- Sam Hill share a plate? No.\n"
        "CONNECTIONS:\nPriya Nair -- Jonas Weller\n"
        "Wait, let me reconsider.\n"
        f"{marker}\n- Lena Morrow -- Tom Baker\n- Aoife O'Neill -- Mara Quint\n"
    )
    assert parse(text) == [e(LM, TB), e(AO, MQ)]


def test_marker_on_the_same_line_and_empty_answer():
    assert parse("reasoning...\nCONNECTIONS: Lena Morrow -- Tom Baker") == [e(LM, TB)]
    assert parse("Lena Morrow -- Tom Baker\nCONNECTIONS: none") == []
    assert parse("Lena Morrow -- Tom Baker\nCONNECTIONS:") == []


def test_connections_in_a_sentence_is_not_a_marker():
    assert parse("Lena Morrow -- Tom Baker\nThese are all the connections: I found one.") == [e(LM, TB)]


# --- JSON ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ['[["Lena Morrow", "Tom Baker"], ["Sam Hill", "Priya Nair"]]',
     '```json\n[["Lena Morrow", "Tom Baker"],\n ["Sam Hill", "Priya Nair"]]\n```',
     'Sure! Here is the list:\n```\n[["Lena Morrow","Tom Baker"],["Sam Hill","Priya Nair"]]\n```\nDone.',
     '[{"source": "Lena Morrow", "target": "Tom Baker"}, {"source": "Sam Hill", "target": "Priya Nair"}]',
     '[{"from": "Lena Morrow", "to": "Tom Baker", "reason": "phone"},'
     ' {"person1": "Sam Hill", "person2": "Priya Nair"}]',
     '[{"x": "Lena Morrow", "y": "Tom Baker"}, {"p": "Sam Hill", "q": "Priya Nair", "why": "flight"}]',
     '{"connections": [["Lena Morrow", "Tom Baker"], ["Sam Hill", "Priya Nair"]]}',
     '{"answer": {"edges": [{"a": "Lena Morrow", "b": "Tom Baker"}, {"a": "Sam Hill", "b": "Priya Nair"}]}}',
     '{"connections": ["Lena Morrow -- Tom Baker", "Sam Hill -- Priya Nair"]}',
     '[{"pair": ["Lena Morrow", "Tom Baker"], "cue": "phone"}, {"pair": ["Sam Hill", "Priya Nair"]}]',
     '{"Lena Morrow": ["Tom Baker"], "Sam Hill": "Priya Nair"}',
     # Invalid JSON as a whole (trailing comma): the inner pairs still decode.
     '[["Lena Morrow", "Tom Baker"], ["Sam Hill", "Priya Nair"],]',
     '```json\n{"connections": [\n  ["Lena Morrow", "Tom Baker"],\n  ["Sam Hill", "Priya Nair"]\n]}\n```'],
)  # fmt: skip
def test_json_variants(text):
    assert parse(text) == [e(LM, TB), e(SH, PN)]


def test_json_and_lines_mix_in_text_order():
    text = 'Jonas Weller -- Mara Quint\n[["Lena Morrow", "Tom Baker"]]\nSam Hill -- Priya Nair'
    assert parse(text) == [e(JW, MQ), e(LM, TB), e(SH, PN)]


def test_json_that_is_not_about_pairs_is_ignored():
    assert parse('{"reasoning": "no links", "confidence": 0.3}\n[1, 2, 3]\n["just one"]') == []


# --- robustness ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "output",
    [None, "", 0, 3.5, b"\xff\xfe", ["Lena Morrow", "Tom Baker"], {"a": 1}, object(), "\x00\x01\x02", "\n" * 1000,
     "[" * 5000, "]" * 5000, "(" * 5000, "{" * 5000, '{"' * 5000, '["a", ' * 5000, "-" * 50000, "=" * 50000,
     " " * 50000, ":" * 5000, "|" * 5000, "connections" * 2000, "CONNECTIONS:" * 2000, "and " * 10000,
     "Lena Morrow -- " * 3000, ", ".join([LM] * 3000), "```json\n" * 1000, "\ud800 -- \udfff"],
)  # fmt: skip
def test_never_raises_on_odd_inputs(output):
    for groups in (False, True):
        result = _parse_unguarded(output, ROSTER, groups=groups)
        assert isinstance(result, list) and all(isinstance(item, str) for item in result)
        assert parse_edges(output, ROSTER, groups=groups) == result
    if isinstance(output, str):
        assert_per_char_bound(lambda text: parse_edges(text, ROSTER), output)


def test_odd_rosters():
    assert parse_edges("Lena Morrow -- Tom Baker", []) == [e(LM, TB)]
    assert parse_edges("Lena Morrow -- Tom Baker", None) == [e(LM, TB)]  # type: ignore[arg-type]
    assert parse_edges("Lena Morrow -- Tom Baker", ["", "**", 5, None, LM]) == [e(LM, TB)]  # type: ignore[list-item]
    assert parse_edges("Lena Morrow -- Tom Baker", LM) == [e(LM, TB)]  # type: ignore[arg-type]


def test_a_ten_thousand_character_line_still_parses():
    remark = "shared " * 1500
    assert len(remark) > 10_000
    assert parse(f"Lena Morrow -- Tom Baker ({remark})") == [e(LM, TB)]
    assert parse(f"Lena Morrow -- Tom Baker: {remark}") == [e(LM, TB)]
    assert parse(f"Lena Morrow -- Tom Baker {remark}") == [e(LM, TB)]
    pairs = "; ".join(f"{a} -- {b}" for a, b in itertools.combinations(ROSTER, 2))
    assert len(parse((pairs + "; ") * 50)) == 28


_FRAGMENTS = [
    LM, TB, SH, "Aoife O’Neill", "Tomasz Adeyemi-Kovac", "Dr.", " -- ", " - ", " — ", " <-> ", " -> ", " and ", ", ",
    "; ", " & ", "(", ")", "[", "]", "{", "}", '"', "'", ":", "\n", "\n- ", "\n1. ", "**", "`", "```json\n", "```",
    "CONNECTIONS:", "connections", '{"source": ', '"target": ', '["', '", "', '"]', "|", "Group 1", "the", "\x00",
    "Lena", "Morrow", "  ", "\t", "\r\n", "é", "→", "=>", "1,000", "10:30",
]  # fmt: skip
_GOLD = [e(LM, TB), e(SH, PN), e(AO, TAK)]


def _check_scores(text: str) -> None:
    for groups in (False, True):
        items = _parse_unguarded(text, ROSTER, groups=groups)
        assert len(items) == len(set(items))
        assert parse_edges(text, ROSTER, groups=groups) == items
        scores = score_items(_GOLD, items)
        for metric in ("memory_drift", "precision", "recall", "f1"):
            assert 0.0 <= getattr(scores, metric) <= 1.0


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_text_scores_within_bounds(text):
    _check_scores(text)


@settings(max_examples=200, deadline=None)
@given(st.binary())
def test_any_bytes_score_within_bounds(data):
    _check_scores(data.decode("utf-8", errors="replace"))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=40).map("".join))
def test_answer_like_noise_scores_within_bounds(text):
    _check_scores(text)


# --- a correct answer in any dress scores perfectly ------------------------------------------------

_SEPARATORS = [" -- ", "--", " — ", " – ", " - ", " <-> ", " <--> ", " -> ", " and ", " & ", ", ", "; "]
_BULLETS = ["", "- ", "* ", "• ", "1. ", "2) ", "  "]
_SUFFIXES = ["", ".", ";", " (shared phone number)", ": same flight", "**"]


@st.composite
def _dressed_name(draw, name: str) -> str:
    name = draw(st.sampled_from([name, name.replace("-", " "), name.replace("'", "’"), name.replace("'", "")]))
    case = draw(st.sampled_from(["same", "lower", "upper", "title", "random"]))
    if case == "lower":
        name = name.lower()
    elif case == "upper":
        name = name.upper()
    elif case == "title":
        name = name.title()
    elif case == "random":
        flips = draw(st.lists(st.booleans(), min_size=len(name), max_size=len(name)))
        name = "".join(c.swapcase() if flip else c for c, flip in zip(name, flips, strict=True))
    name = draw(st.sampled_from(["", "  "])) + name.replace(" ", draw(st.sampled_from([" ", "  ", " \t "])))
    title = draw(st.sampled_from(["", "Dr. ", "dr ", "Mr. ", "MS ", "Prof. ", "Sir ", "Dame ", "Mx "]))
    markup = draw(st.sampled_from(["", "**", '"', "_", "`"]))
    return f"{markup}{title}{name}{markup}"


@st.composite
def _dressed_answer(draw) -> tuple[list[str], str]:
    all_pairs = list(itertools.combinations(ROSTER, 2))
    edges = draw(st.lists(st.sampled_from(all_pairs), min_size=1, max_size=12, unique=True))
    edges = draw(st.permutations(edges))
    lines = []
    for a, b in edges:
        if draw(st.booleans()):
            a, b = b, a
        first, second = draw(_dressed_name(a)), draw(_dressed_name(b))
        form = draw(st.sampled_from(["line", "line", "tuple"]))
        if form == "tuple":
            body = f"({first}, {second})"
        else:
            body = f"{first}{draw(st.sampled_from(_SEPARATORS))}{second}"
        lines.append(f"{draw(st.sampled_from(_BULLETS))}{body}{draw(st.sampled_from(_SUFFIXES))}")
        if draw(st.integers(0, 5)) == 0:
            lines.append(lines[-1])  # repeated line
    preamble = draw(st.sampled_from(["", "Here are the connections:\n", "Lena Morrow -- Sam Hill?\nCONNECTIONS:\n"]))
    return [edge_item(a, b) for a, b in edges], preamble + "\n".join(lines)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_dressed_answer())
def test_a_dressed_correct_answer_scores_perfectly(case):
    gold, text = case
    for groups in (False, True):
        scores = score_items(gold, parse_edges(text, ROSTER, groups=groups))
        assert scores.memory_drift == 0.0 and scores.f1 == 1.0, text


@settings(max_examples=50, deadline=None)
@given(_dressed_answer())
def test_a_dressed_correct_json_answer_scores_perfectly(case):
    gold, _ = case
    pairs = [item.split("|") for item in gold]
    text = "```json\n" + json.dumps({"connections": [[b.upper(), "Dr. " + a] for a, b in pairs]}, indent=2) + "\n```"
    assert score_items(gold, parse_edges(text, ROSTER)).f1 == 1.0


# --- linear cost --------------------------------------------------------------------------------


def test_cost_is_linear_in_the_output_length():
    roster = [f"{first} {last}" for first in ("Ana", "Ben", "Cleo", "Dev", "Eli") for last in map(str.title, TITLES)]
    roster = [f"{name}-{suffix}" for name in roster for suffix in ("Ro", "Sa", "Ti", "Um")]  # ~1000 names
    pairs = list(itertools.islice(itertools.combinations(roster, 2), 0, None, 7))
    styles = ["{a} -- {b}", "- **{a}** and {b} (shared phone)", "{i}. Dr. {a} — {b}: same flight", "({a}, {b})",
              "Prose about {a}, who met someone, then more words follow here.", "{a} -- unknown person"]  # fmt: skip
    lines = [styles[i % len(styles)].format(a=a, b=b, i=i) for i, (a, b) in enumerate(pairs[:20_000])]
    small, large = "\n".join(lines[:300]), "\n".join(lines[:2_400])
    assert len(parse_edges(small, roster)) > 150  # also warms the roster's caches
    steps = count_steps(lambda: parse_edges(small, roster)), count_steps(lambda: parse_edges(large, roster))
    assert steps[1].total < 12 * steps[0].total, steps  # 8x the lines: ~8x the steps when linear, ~64x quadratic


def test_cost_is_linear_for_repeated_lines():
    line = "1. **Dr. Lena Morrow** -- Tom Baker (shared phone number)\n"
    assert_linear(lambda text: parse_edges(text, ROSTER), line, chars=20_000)


# --- natural phrasings, surnames and self pairs ------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        'Lena Morrow is connected to Tom Baker',
        'Lena Morrow and Tom Baker are connected.',
        'Lena Morrow is linked to Tom Baker.',
        'Lena Morrow shares a phone with Tom Baker.',
        'Lena Morrow is linked with Tom Baker through a shared plate.',
        'Lena Morrow has a direct connection with Tom Baker',
        'Lena Morrow shares the same flight (XO 140 on 11 May) with Tom Baker.',
        'So, Lena Morrow is related to Tom Baker.',
        '- **Lena Morrow** is connected to **Tom Baker**',
        'Lena Morrow and Tom Baker share the same bank account.',
    ],
)  # fmt: skip
def test_natural_phrasings(line):
    for groups in (False, True):
        assert parse(line, groups) == [e(LM, TB)], (line, groups)


def test_a_relation_links_every_subject_with_every_object():
    assert parse("Lena Morrow is connected to Tom Baker and Sam Hill.") == [e(LM, TB), e(LM, SH)]
    assert parse("Lena Morrow is linked to Zelda Quimby.") == [edge_item(LM, "Zelda Quimby")]  # an unknown person
    assert parse("Tom Baker is connected to the Olsen Coffee League.") == []  # not a person
    assert parse("Born in 1966 in Cork, one of two people connected to the other.") == []


def test_a_group_statement_is_a_group_even_without_groups():
    clique = sorted(e(a, b) for a, b in itertools.combinations([LM, TB, SH], 2))
    for line in ["Lena Morrow, Tom Baker and Sam Hill are all connected.",
                 "Lena Morrow, Tom Baker, and Sam Hill are connected through a blue coupe, plate EW-220-MD.",
                 "Lena Morrow, Tom Baker and Sam Hill share a plate."]:
        for groups in (False, True):
            assert sorted(parse(line, groups)) == clique, (line, groups)


@pytest.mark.parametrize(
    "line",
    ["Lena Morrow is not connected to Tom Baker", "Lena Morrow isn't linked to Tom Baker.",
     "Lena Morrow shares no details with Tom Baker", "Lena Morrow and Tom Baker share nothing.",
     "Lena Morrow and Tom Baker are not connected.", "Lena Morrow has no connection with Tom Baker"],
)  # fmt: skip
def test_negated_phrasings_give_nothing(line):
    assert parse(line) == []


@pytest.mark.parametrize(
    "line, expected",
    [("Morrow -- Baker", [e(LM, TB)]), ("Ms. Morrow and Mr. Baker share a flight.", [e(LM, TB)]),
     ("Kovac -- Hill", [e(TAK, SH)]), ("Adeyemi-Kovac -- Hill", [e(TAK, SH)]), ("O’Neill -- Nair", [e(AO, PN)]),
     ("Morrow is connected to Baker and Hill.", [e(LM, TB), e(LM, SH)]), ("| Morrow | Baker |", [e(LM, TB)]),
     ("Morrow: Baker, Hill", [e(LM, TB), e(LM, SH)]), ("Morrow's -- Baker", [e(LM, TB)]),
     ("Lena -- Tom", [edge_item("Lena", "Tom")])],
)  # fmt: skip
def test_an_unambiguous_surname_is_its_holder(line, expected):
    assert parse(line) == expected


def test_an_ambiguous_surname_is_a_false_positive():
    roster = ["Oskar Calloway", "Soren Calloway", "Nadia Cho", "Henrik Adeyemi"]
    gold = [edge_item("Soren Calloway", "Nadia Cho"), edge_item("Henrik Adeyemi", "Nadia Cho")]
    for text in ["Calloway -- Cho", "Calloway and Cho share a phone.", "Calloway is linked to Cho",
                 "Cho: Calloway", "(Calloway, Cho)"]:
        predicted = parse_edges(text, roster)
        assert predicted == [edge_item("Calloway", "Nadia Cho")], text
        scores = score_items(gold, predicted)
        assert (scores.tp, scores.fp) == (0, 1), text
    assert parse_edges("Soren Calloway -- Cho", roster) == [gold[0]]
    group = parse_edges("Adeyemi, Calloway, Cho", roster, groups=True)
    scores = score_items(gold, group)
    assert len(group) == 3 and (scores.tp, scores.fp) == (1, 2)
    # A surname that is also someone's given name is ambiguous too; a given name never resolves.
    roster = ["Noor Calloway", "Calloway Smith", "Kiran Vasquez", "Noor Kowalczyk"]
    assert parse_edges("Calloway -- Vasquez", roster) == [edge_item("Calloway", "Kiran Vasquez")]
    assert parse_edges("Kowalczyk -- Vasquez", roster) == [edge_item("Noor Kowalczyk", "Kiran Vasquez")]
    assert parse_edges("Noor -- Vasquez", roster) == [edge_item("Noor", "Kiran Vasquez")]


def test_self_pairs_only_from_an_explicit_pair():
    assert parse("Lena Morrow -- Lena Morrow") == [e(LM, LM)]
    assert parse("| Lena Morrow | Lena Morrow |") == [e(LM, LM)]
    for text in ["Lena Morrow: Lena Morrow", "Lena Morrow, Lena Morrow", "Lena Morrow and Lena Morrow are connected",
                 "Born in Graz, Lena Morrow holds Austrian citizenship and Lena Morrow lives in Durban.",
                 "Lena Morrow:\n- Lena Morrow"]:
        assert parse(text) == [], text


@pytest.mark.parametrize(
    "unit",
    ["Lena Morrow shares a phone and a plate with ", "Lena Morrow is connected to ", "Morrow, Baker and ",
     "Lena Morrow, Tom Baker and Sam Hill are all connected and ", "shares " * 7, "Calloway -- Cho\n",
     "Lena Morrow is linked to Tom Baker\n", "Lena Morrow and Tom Baker are connected through a plate.\n"],
)  # fmt: skip
def test_cost_is_linear_for_sentences(unit):
    roster = ROSTER + ["Oskar Calloway", "Soren Calloway", "Nadia Cho"]
    assert_linear(lambda text: parse_edges(text, roster), unit)
