"""ImplicitHop's fact lines costed from their templates' pieces and their names' (``implicit_hop.costing``): the
same costs as splitting the lines (``line_tokens``) and costing them in the reference tokenizer
(``PieceLines.reference_costs``); and the C-speed text scans behind the piece checks."""

from __future__ import annotations

import random
import re

import pytest
from offline_tokenizers import tokenizer_specs

from lurch_tasks.core.budget import line_tokens, space_before_newline
from lurch_tasks.core.pieces import PieceLines, printable
from lurch_tasks.core.rng import StableRng, derive_seed
from lurch_tasks.core.tokens import get_token_counter, reference_counter
from lurch_tasks.families.implicit_hop.costing import fact_line_costs, shapes
from lurch_tasks.families.implicit_hop.generate import with_near_misses
from lurch_tasks.families.implicit_hop.kb import build_kb, render_facts
from lurch_tasks.families.implicit_hop.questions import sample_branches


@pytest.fixture(scope="module")
def tokenizers(tmp_path_factory) -> dict[str, str]:
    return tokenizer_specs(tmp_path_factory.mktemp("tokenizers"))


def test_every_template_has_a_checked_shape():
    known = shapes()
    assert known is not None and all(shape.literals[2][-1] == "\n" for shape in known.values())


@pytest.mark.parametrize("name", ["smollm2", "byte_bpe"])
@pytest.mark.parametrize("people", [12, 15, 40])
def test_fact_line_costs_are_the_split_lines_costs(tokenizers, name, people):
    counter, reference = get_token_counter(tokenizers[name]), reference_counter()
    for seed in range(3):
        kb = build_kb(people, derive_seed("costing-test", people, seed))
        if seed == 2:  # near misses: names one letter away from a bridge's
            branches = sample_branches(kb, (3, 3), StableRng(seed))
            kb, _, _ = with_near_misses(kb, branches, StableRng(seed + 1))
        facts = list(kb.facts)  # year lines included: tokenized, not summed
        lines = render_facts(kb, facts)
        costs, references = fact_line_costs(kb, facts, lines, counter, reference)
        joined = line_tokens(lines, counter, "\n")
        assert isinstance(joined, PieceLines)
        assert costs == joined.costs()
        assert references == joined.reference_costs(lines, reference)


def test_fact_line_costs_leave_other_tokenizers_and_lines_to_the_general_path(tokenizers):
    kb = build_kb(12, 5)
    facts = list(kb.facts)
    lines = render_facts(kb, facts)
    assert fact_line_costs(kb, facts, lines, reference_counter(), reference_counter()) is None  # not GPT-2's split
    smollm2 = get_token_counter(tokenizers["smollm2"])
    assert fact_line_costs(kb, facts, [*lines, "A filler line."], smollm2, reference_counter()) is None


def test_ascii_scans_match_their_regexes():
    not_printable, space_newline = re.compile(r"[^\n -~]"), re.compile(r"\s\n")
    draw = random.Random(29)
    for _ in range(5000):
        text = "".join(chr(draw.choice([draw.randrange(128), 32, 10, 65])) for _ in range(draw.randrange(12)))
        assert printable(text) == (not_printable.search(text) is None), repr(text)
        text += draw.choice(["", "\u00a0\n", "\u2003", "\u00e9\n"])
        assert space_before_newline(text) == (space_newline.search(text) is not None), repr(text)
