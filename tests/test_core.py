"""Unit tests of the shared machinery: rng, LURCH properties, scoring, parsing, schema, registry."""

import hashlib
import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lurch_tasks.core.config import ConfigError, config_from_mapping
from lurch_tasks.core.difficulty import (
    evidence_dispersion,
    evidence_scope,
    length_bin,
    merge_spans,
    reasoning_depth,
)
from lurch_tasks.core.generation import generate_row, resolve_task
from lurch_tasks.core.instance import schema_errors, validate
from lurch_tasks.core.registry import Family, Task, get_family, register_family, register_task
from lurch_tasks.core.rng import LazyPermutation, StableRng, derive_seed
from lurch_tasks.core.tokens import reference_counter, token_spans, within_budget_tolerance
from lurch_tasks.families.find_origin.config import FindOriginConfig
from lurch_tasks.scoring import parse_final_answer, score_items

# --- rng -------------------------------------------------------------------------------------


def test_derive_seed_is_stable_and_sensitive():
    # Pinned value: blake2b of the canonical JSON; must never change across versions or processes.
    assert derive_seed("find_the_origin", "abc", 0, "test", 7) == derive_seed("find_the_origin", "abc", 0, "test", 7)
    # Independent derivation: blake2b-64 (big-endian) of the canonical JSON of the parts.
    assert derive_seed("a", 1) == 2451243937432073812 == int.from_bytes(
        hashlib.blake2b(b'["a",1]', digest_size=8).digest(), "big"
    )
    assert derive_seed("a", 1) != derive_seed("a", 2) != derive_seed("b", 1)


def test_stable_rng_streams_are_pinned():
    rng = StableRng(42)
    assert [rng.below(10) for _ in range(8)] == [1, 0, 4, 3, 3, 2, 1, 8]
    assert StableRng(1).shuffled(list(range(6))) == StableRng(1).shuffled(list(range(6)))


def test_rng_does_not_touch_global_state():
    random.seed(123)  # noqa: TID251 - this test checks that we leave the global RNG alone
    expected = random.random()  # noqa: TID251
    random.seed(123)  # noqa: TID251
    StableRng(5).shuffled(list(range(100)))
    assert random.random() == expected  # noqa: TID251


@given(st.integers(1, 200), st.integers(0, 2**63))
def test_lazy_permutation_is_a_permutation(n, seed):
    draw = LazyPermutation(n, StableRng(seed))
    values = [draw.next() for _ in range(n)]
    assert sorted(values) == list(range(n))
    with pytest.raises(IndexError):
        draw.next()


@given(st.integers(1, 50), st.integers(0, 2**32))
def test_sample_is_distinct_and_in_range(n, seed):
    k = StableRng(seed).below(n + 1)
    picked = StableRng(seed).sample(list(range(n)), k)
    assert len(set(picked)) == k and all(0 <= v < n for v in picked)


@given(st.lists(st.integers(1, 300), max_size=40), st.integers(0, 2**63))
def test_below_each_and_choice_draw_as_below(sizes, seed):
    one, many = StableRng(seed), StableRng(seed)
    assert many.below_each(sizes) == [one.below(n) for n in sizes]
    assert [many.choice(range(n)) for n in sizes] == [one.below(n) for n in sizes]


# --- budget: prompts laid out from the parts' tokens ---------------------------------------


_LINES = ("Velmaro Drusk works for Ostrin Works.", "Ostrin Works was founded in 1923.",
          "Kraeth Zunell's mentor: Tharin.", "Brin Holdings employs Sheila O'Neil.", "Pay 1,000,000 now!!",
          "A line ending in spaces   ",
          "(Quoted) \"text\" here...", "Naïve café — déjà vu.", "x", "12345", "Über-long-hyphenated-Name Co.")


@settings(deadline=None)  # the first example loads the tokenizer's byte-length table
@given(st.lists(st.sampled_from(range(len(_LINES))), min_size=1, max_size=30))
def test_newline_joined_prompt_is_its_parts(rows):
    """A prompt head + lines + tail counts and starts exactly as its parts (``sums_over_lines``): the reference
    tokenizer never merges across a newline followed by a non-space character."""
    from lurch_tasks.core.budget import joined_tokens, sums_over_lines

    counter = reference_counter()
    head, tail = "Instructions here.\n\nFacts:\n", "\n\nQuestion: who?\nFINAL ANSWER: <name>"
    lines = list(_LINES)
    assert sums_over_lines(counter, head, lines)
    joined = joined_tokens(lines, counter, "\n")
    prompt = head + "\n".join(lines[i] for i in rows) + tail
    last = lines[rows[-1]] + tail
    starts = np.concatenate([counter.token_starts(head), joined.laid_out(rows[:-1], len(head)),
                             counter.token_starts(last) + len(prompt) - len(last)])
    assert starts.tolist() == counter.token_starts(prompt).tolist()
    assert len(starts) == counter.count(head) + sum(joined.costs()[i] for i in rows[:-1]) + counter.count(last)


def test_sums_over_lines_refuses_what_it_cannot_prove():
    from lurch_tasks.core.budget import sums_over_lines

    counter = reference_counter()
    assert sums_over_lines(counter, "Facts:\n", ["A fact.", "Another (one)!"])
    assert not sums_over_lines(counter, "Facts:", ["A fact."])  # the head must end with a newline
    assert not sums_over_lines(counter, "Facts:\n", ["A fact.", " indented"])  # whitespace would join the newline
    assert not sums_over_lines(counter, "Facts:\n", ["A fact.", ""])  # an empty line makes a double newline
    assert sums_over_lines(counter, "Facts:\n", ["A fact. ", "B."])  # " \n" is one cl100k piece either way


# --- LURCH properties (DESIGN 3.4 worked examples) -------------------------------------------


def test_scope_and_dispersion_single_span():
    assert evidence_scope([(100, 150)], 1000) == pytest.approx(0.05)
    assert evidence_dispersion([(100, 150)], 1000) == 0.0


def test_scope_and_dispersion_two_spans():
    spans = [(100, 150), (800, 850)]
    assert evidence_scope(spans, 1000) == pytest.approx(0.1)
    assert evidence_dispersion(spans, 1000) == pytest.approx(650 / 900)


def test_dispersion_edge_cases():
    assert evidence_dispersion([(0, 10), (990, 1000)], 1000) == pytest.approx(1.0)
    assert evidence_dispersion([(0, 1000)], 1000) == 0.0  # no non-evidence text
    assert evidence_dispersion([], 1000) == 0.0
    # Overlapping and touching spans count once.
    assert merge_spans([(5, 10), (0, 6), (10, 12), (20, 21)]) == [(0, 12), (20, 21)]
    assert evidence_scope([(0, 6), (5, 10)], 20) == pytest.approx(0.5)


def _graph(*edges):
    names = sorted({n for e in edges for n in e})
    kind = {"e": "evidence", "s": "step", "a": "answer"}
    return [{"id": n, "kind": kind[n[0]], "text": ""} for n in names], [list(e) for e in edges]


def test_reasoning_depth_hand_cases():
    # Reading the answer from one piece of evidence: depth 1.
    assert reasoning_depth(*_graph(("e1", "s1"), ("s1", "a"))) == 1
    # Two parallel lookups then a comparison: depth 2.
    assert reasoning_depth(*_graph(("e1", "s1"), ("e2", "s2"), ("s1", "s3"), ("s2", "s3"), ("s3", "a"))) == 2
    # A chain of three dependent lookups: depth 3.
    chain = (("e1", "s1"), ("s1", "s2"), ("e2", "s2"), ("s2", "s3"), ("e3", "s3"), ("s3", "a"))
    assert reasoning_depth(*_graph(*chain)) == 3
    with pytest.raises(ValueError):
        reasoning_depth(*_graph(("s1", "s2"), ("s2", "s1")))


def test_length_bin():
    assert length_bin(4096, 4090) == 4096
    assert length_bin(0, 3000) == 4096 and length_bin(0, 4096) == 4096 and length_bin(0, 4097) == 8192


def test_token_spans_map_char_spans():
    starts = np.array([0, 3, 7, 12])
    assert token_spans(starts, [(3, 7), (4, 13), (0, 1)]) == [(1, 2), (1, 4), (0, 1)]


def test_token_starts_are_exact_for_any_text():
    """The byte-length table gives the same offsets as tiktoken's own decoder, also for multi-byte text."""
    counter = reference_counter()
    for text in ["hello world", "naïve café — 東京 🚀 done", "", "\n\n\"a\" is linked to \"b\""]:
        tokens = counter._enc.encode_ordinary(text)
        expected = counter._enc.decode_with_offsets(tokens)[1] if tokens else []
        assert counter.token_starts(text).tolist() == expected


def test_budget_tolerance():
    assert within_budget_tolerance(1024, 1024) and within_budget_tolerance(1008, 1024)
    assert not within_budget_tolerance(1007, 1024) and not within_budget_tolerance(1025, 1024)
    assert within_budget_tolerance(131072 - 1310, 131072) and not within_budget_tolerance(131072 - 1311, 131072)


def test_reference_tokenizer_is_offline_cl100k():
    counter = reference_counter()
    assert counter.name == "cl100k_base"
    assert counter.count("hello world") == 2  # cl100k: "hello", " world"
    assert counter.token_starts("hello world").tolist() == [0, 5]


# --- scoring ----------------------------------------------------------------------------------


def test_score_items_hand_computed():
    s = score_items(["a", "b", "c", "d"], ["a", "b", "x"])
    assert (s.tp, s.fp, s.fn) == (2, 1, 2)
    assert s.memory_drift == pytest.approx(1 - (4 - 0.5 - 2) / 8)
    assert s.precision == pytest.approx(2 / 3) and s.recall == pytest.approx(0.5)
    assert s.f1 == pytest.approx(4 / 7)


def test_score_items_extremes():
    perfect = score_items(["a", "b"], ["b", "a", "a"])  # duplicates count once
    assert (perfect.memory_drift, perfect.precision, perfect.recall, perfect.f1) == (0.0, 1.0, 1.0, 1.0)
    empty = score_items(["a"], [])
    assert (empty.memory_drift, empty.precision, empty.recall, empty.f1) == (1.0, 0.0, 0.0, 0.0)
    wrong = score_items(["a"], ["b"])
    assert wrong.memory_drift == 1.0  # clamped at 0 inside
    half = score_items(["a", "b"], ["a"])
    assert half.memory_drift == pytest.approx(1 - (2 - 1) / 4)


@given(st.lists(st.sampled_from("abcdefg"), max_size=7), st.lists(st.sampled_from("abcdefgxyz"), max_size=12))
def test_score_items_ranges(gold, predicted):
    s = score_items(gold, predicted)
    for value in (s.memory_drift, s.precision, s.recall, s.f1):
        assert 0.0 <= value <= 1.0 and not math.isnan(value)


@pytest.mark.parametrize(
    "output, expected",
    [
        ("FINAL ANSWER: workbench", "workbench"),
        ("**FINAL ANSWER:** Workbench.", "workbench"),
        ('Final answer: "workbench"!', "workbench"),
        ("final answer - **workbench**", "workbench"),
        ("FINAL ANSWER: dad\n...then I rethought.\nFINAL ANSWER: workbench", "dad"),  # the first answer counts
        ("**Final Answer**: `workbench`", "workbench"),
        ('FINAL ANSWER: The origin is "workbench".', "workbench"),
        ("FINAL ANSWER:\n\nworkbench", "workbench"),
        ("no marker here", None),
        ("", None),
        ("FINAL ANSWER:", None),
    ],
)
def test_parse_final_answer(output, expected):
    assert parse_final_answer(output) == expected


@given(st.text(max_size=2000))
def test_parse_final_answer_never_raises(text):
    result = parse_final_answer(text)
    assert result is None or isinstance(result, str)


def test_parse_final_answer_odd_inputs():
    assert parse_final_answer(None) is None
    assert parse_final_answer(b"\x00\xff FINAL ANSWER: x") == "x"  # non-str output: parsed from str(output)
    # a 200k-letter "word" is no vocabulary word: the bounded reader drops it (never raises, never hangs)
    assert parse_final_answer("FINAL ANSWER: " + "a" * 200_000) is None
    assert parse_final_answer("x " * 100_000 + "FINAL ANSWER: tube") == "tube"


# --- schema, registry, config -----------------------------------------------------------------


def test_generated_row_is_schema_valid_and_tampering_is_caught():
    row = generate_row(resolve_task("find_the_origin", {"context_tokens": [384], "num_samples": 1}), 0)
    assert schema_errors(row) == []
    validate(row)
    broken = dict(row, answer_format="haiku")
    assert schema_errors(broken)
    with pytest.raises(ValueError, match="answer_format"):
        validate(broken)
    assert schema_errors({k: v for k, v in row.items() if k != "evidence"})


def test_registry_rejects_duplicates():
    family = get_family("find_the_origin")
    with pytest.raises(ValueError, match="already registered"):
        register_family(family)
    with pytest.raises(ValueError, match="already registered"):
        register_task(Task("find_the_origin", "find_the_origin", FindOriginConfig(), "dup"))
    assert isinstance(family, Family)


@pytest.mark.parametrize(
    "values, field",
    [
        ({"d_values": (0,)}, "d_values"),
        ({"d_values": (30,)}, "d_values"),  # beyond MAX_WIDE_D (29)
        ({"chain_lengths": [9]}, "chain_lengths"),
        ({"chain_lengths": 3}, "chain_lengths"),
        ({"arrangement": "diagonal"}, "arrangement"),
        ({"target_position": 1.5}, "target_position"),
        ({"target_position": "middle"}, "target_position"),
        ({"target_position": True}, "target_position"),
        ({"num_samples": 0}, "num_samples"),
        ({"context_tokens": (10,)}, "context_tokens"),
        ({"num_lines": (100,)}, "length"),
        ({"bogus": 1}, "bogus"),
    ],
)
def test_config_errors_name_the_field(values, field):
    with pytest.raises(ConfigError) as err:
        config_from_mapping(FindOriginConfig, values)
    message = str(err.value)
    assert message.startswith(field) and "allowed" in message and "\n" not in message


@pytest.mark.parametrize(
    "gold, predicted, tp, fp, fn, precision, recall, drift",
    [  # Table II of the graph-reconstruction paper (seed 000), edges as "a|b" items.
        (["a|b", "b|c"], ["a|b", "b|c"], 2, 0, 0, 1.0, 1.0, 0.0),
        (["a|b", "b|c", "c|d"], ["a|b", "c|d"], 2, 0, 1, 1.0, 2 / 3, 0.5),
        (["a|b", "b|c", "c|d", "d|e"], ["a|b", "c|d"], 2, 0, 2, 1.0, 0.5, 0.75),
        (["a|b", "b|c"], ["a|b", "a|c"], 1, 1, 1, 0.5, 0.5, 0.875),
        (["a|b", "b|c"], [], 0, 0, 2, 0.0, 0.0, 1.0),
    ],
)
def test_memory_drift_reproduces_table_ii(gold, predicted, tp, fp, fn, precision, recall, drift):
    s = score_items(gold, predicted)
    assert (s.tp, s.fp, s.fn) == (tp, fp, fn)
    assert s.precision == pytest.approx(precision) and s.recall == pytest.approx(recall)
    assert s.memory_drift == pytest.approx(drift)


def test_every_family_vocabulary_has_a_licence_entry():
    from lurch_tasks.core.registry import all_families
    from lurch_tasks.core.vocab import VOCABULARIES, data_license

    for family in all_families():
        assert set(family.source_files) <= set(VOCABULARIES), family.name
    assert data_license(("english_words.txt",)) == "cc-by-sa-4.0"
    assert data_license(("first_names.txt", "cities.txt")) == "apache-2.0"
