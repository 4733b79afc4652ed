"""Find the Origin: d semantics, token budgets, audits, answerability, determinism, goldens."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lurch_tasks.core.cells import cell_at
from lurch_tasks.core.generation import generate_row, iter_rows, resolve_task
from lurch_tasks.core.instance import content_hash, schema_errors
from lurch_tasks.core.registry import all_tasks, get_family
from lurch_tasks.core.tokens import within_budget_tolerance
from lurch_tasks.families.find_origin.config import DEFAULT_D_VALUES
from lurch_tasks.families.find_origin.prompt import parse_line

FAMILY = get_family("find_the_origin")
GOLDEN = Path(__file__).parent / "golden" / "find_the_origin.json"
TASKS = [t.name for t in all_tasks() if t.family == "find_the_origin"]


def _small(**overrides):
    base = {"context_tokens": [512], "num_samples": 1}
    base.update(overrides)
    return resolve_task("find_the_origin", base)


def _pairs(row):
    return [parse_line(line) for line in row["context"].split("\n")]


# --- d semantics ------------------------------------------------------------------------------


@pytest.mark.parametrize("d", [-15, -7, -1, 1, 2, 15])
@pytest.mark.parametrize("chain_length", [2, 3])
def test_structured_every_link_is_d_lines_apart(d, chain_length):
    row = generate_row(_small(d_values=[d], chain_lengths=[chain_length], context_tokens=[1024]), 0)
    pairs = _pairs(row)
    row_of_source = {a: i for i, (a, _) in enumerate(pairs)}
    checked = 0
    for i, (_, b) in enumerate(pairs):
        if b in row_of_source:  # the next link of this chain is inside the window
            assert row_of_source[b] - i == d
            checked += 1
    # Every whole chain contributes L-1 checked links; only chains cut by the window edges (at most
    # |d|*L lines at each end) contribute fewer.
    assert checked * chain_length / (chain_length - 1) >= len(pairs) - 2 * abs(d) * chain_length
    params = json.loads(row["params"])
    rows = params["target_rows"]
    assert [b - a for a, b in zip(rows, rows[1:], strict=False)] == [d] * (chain_length - 1)
    assert FAMILY.audit(row) == []


@pytest.mark.parametrize("d", [-10, -1, 1, 10])
def test_random_only_the_target_chain_keeps_d(d):
    row = generate_row(_small(d_values=[d], arrangement="random", context_tokens=[2048]), 0)
    pairs = _pairs(row)
    rows = json.loads(row["params"])["target_rows"]
    assert rows[1] - rows[0] == d
    row_of_source = {a: i for i, (a, _) in enumerate(pairs)}
    gaps = [row_of_source[b] - i for i, (_, b) in enumerate(pairs) if b in row_of_source and i not in rows]
    assert len(gaps) > 20 and sum(g == d for g in gaps) < len(gaps) / 4  # distractors are shuffled
    assert FAMILY.audit(row) == []


def _starts(pairs):
    """Rows of chain starts: lines whose left word no line links to."""
    targets = {b for _, b in pairs}
    return {i for i, (a, _) in enumerate(pairs) if a not in targets}


def _random_rows(**overrides):
    task = resolve_task("find_the_origin_random", {"context_tokens": [1024], "num_samples": 2, **overrides})
    return list(iter_rows(task, range(task.config.size())))


def on_list_ds(ds, destination, links, n):
    return [d for d in ds if 0 <= destination - links * d < n]


@pytest.mark.parametrize("chain_length", [2, 3, 6])
def test_random_puts_chain_shaped_decoys_around_the_destination(chain_length):
    # The origin sits (chain_length - 1) * |d| lines from the destination; a plain shuffle left a chain start on
    # only 1/L of the lines where another d's origin would be, so "the start k lines away" beat chance (issue 27).
    # Every decoy d' has a start there and no start where its middle links would be, like the target chain.
    rows = _random_rows(chain_lengths=[chain_length], num_samples=1, context_tokens=[2048])
    links = chain_length - 1
    for row in rows:
        pairs, params = _pairs(row), json.loads(row["params"])
        destination, starts, ds = params["target_rows"][-1], _starts(pairs), params["decoy_d"]
        assert params["cell"]["d"] not in ds and len(ds) >= (27 if chain_length == 2 else 14), row["id"]
        on_list = [destination - links * d for d in ds if 0 <= destination - links * d < len(pairs)]
        assert set(on_list) <= starts, row["id"]
        middles = {destination - k * d for d in ds for k in range(1, links)}
        assert not middles & starts, row["id"]
        # to a reader of which lines start chains, the target is exactly one of the chain shapes drawn
        shaped = [d for d in DEFAULT_D_VALUES if destination - links * d in starts
                  and not any(destination - k * d in starts for k in range(1, links))]
        assert sorted(shaped) == sorted([*on_list_ds(ds, destination, links, len(pairs)), params["cell"]["d"]])


def test_random_line_distance_to_the_destination_says_no_more_than_chance():
    # Measured on generated rows: knowing the origin's exact line distance (chain_length - 1) * |d|, but not its
    # side, an attacker finds it only by guessing the side (1/2: jitter keeps both sides on the list); "the start k
    # lines away, above first" finds it only when it is above: 1/28 of the grid per k, as one signed offset does.
    # Plain shuffle and jitter: 0.71 and up to 0.071 (a start above half the time; list ends tell the side).
    rows = _random_rows(context_tokens=[1024, 2048])
    found, off_list = 0, 0
    attack, allowed = dict.fromkeys(range(2, 16), 0), dict.fromkeys(range(2, 16), 0)
    for row in rows:
        pairs, target_rows = _pairs(row), json.loads(row["params"])["target_rows"]
        starts, origin, destination = _starts(pairs), target_rows[0], target_rows[-1]
        k = abs(origin - destination)
        found += (destination - k if destination - k in starts else destination + k) == origin
        off_list += not 0 <= 2 * destination - origin < len(pairs)  # the line mirroring the origin
        for distance in attack:
            pick = next((r for r in (destination - distance, destination + distance) if r in starts), None)
            attack[distance] += pick == origin
            allowed[distance] += origin == destination - distance or (origin == destination + distance
                                                                      and destination - distance < 0)
    assert off_list == 0 and found / len(rows) <= 0.5
    assert attack == allowed
    assert max(attack.values()) / len(rows) <= 1 / len(DEFAULT_D_VALUES) + 0.01


def test_target_position_moves_the_chain():
    top = json.loads(generate_row(_small(d_values=[1], target_position=0.0), 0)["params"])["target_rows"][0]
    mid = json.loads(generate_row(_small(d_values=[1], target_position="centre"), 0)["params"])["target_rows"][0]
    end_row = generate_row(_small(d_values=[1], target_position=1.0), 0)
    end = json.loads(end_row["params"])["target_rows"][-1]
    n = end_row["difficulty"]["num_lines"]
    assert top == 0 and end == n - 1 and abs(mid - n / 2) <= 2


def test_default_jitter_spreads_the_target_and_records_it():
    task = _small(d_values=[5], num_samples=40)
    rows = list(iter_rows(task, range(40)))
    fractions = [row["difficulty"]["target_position"] for row in rows]
    assert len(set(fractions)) == 40 and min(fractions) < 0.15 and max(fractions) > 0.85
    for row in rows:
        params = json.loads(row["params"])
        assert params["target_position_mode"] == "jitter" and params["target_fraction"] == row["difficulty"][
            "target_position"]
        n, destination = row["difficulty"]["num_lines"], params["target_rows"][-1]
        # the recorded choice explains the row: the destination's depth among lines >= |d| = 5 from both ends
        assert params["target_margin"] == 5
        assert destination == 5 + int((n - 1 - 2 * 5) * params["target_fraction"] + 0.5)


def test_centred_origin_mirrors_the_destination_and_jitter_breaks_it():
    """The paper's centring: the origin's line is n-1-r or n-r (r = the destination's line)."""
    def mirrored(row):
        rows = json.loads(row["params"])["target_rows"]
        n = row["difficulty"]["num_lines"]
        return rows[0] in (n - 1 - rows[-1], n - rows[-1])

    centred = list(iter_rows(_small(target_position="centre", num_samples=8), range(0, 8 * 28, 7)))
    jittered = list(iter_rows(_small(num_samples=8), range(0, 8 * 28, 7)))
    assert all(mirrored(row) for row in centred)
    assert sum(mirrored(row) for row in jittered) <= 0.1 * len(jittered)


def test_chain_length_is_a_grid_axis_and_sets_depth():
    task = resolve_task("find_the_origin_depth")
    assert sorted({c.chain_length for c in task.config.cells()}) == [2, 3, 4, 5, 6, 7, 8]
    for index in (0, 1, 2, 3, 97):
        row = generate_row(task, index)
        cell = cell_at(task.config, index)
        assert row["difficulty"]["reasoning_depth"] == cell.chain_length == len(row["evidence"])
        assert FAMILY.audit(row) == []
        assert FAMILY.score(row, FAMILY.solve(row["prompt"]))["score"] == 1.0


def test_matched_pairs_share_chain_and_words_across_compared_knobs():
    """arrangement and target_position are compared knobs: instance i keeps its target chain, word stream
    and pair_key when only they change."""
    base = _small(num_samples=2)
    variants = [_small(num_samples=2, arrangement="random"), _small(num_samples=2, target_position="centre"),
                _small(num_samples=2, arrangement="random", target_position=0.3)]
    for index in (0, 9, 30):
        row = generate_row(base, index)
        chain = json.loads(row["params"])["target_chain"]
        for other_task in variants:
            other = generate_row(other_task, index)
            assert other["pair_key"] == row["pair_key"]
            assert json.loads(other["params"])["target_chain"] == chain
            assert other["answer"] == row["answer"] and other["question"] == row["question"]
            assert other["config_hash"] != row["config_hash"]
    # A knob that is not compared (a length) changes the pair key.
    assert generate_row(_small(context_tokens=[600]), 0)["pair_key"] != generate_row(base, 0)["pair_key"]


def test_paper_grid_grows_eight_lines_from_d_plus_one():
    task = resolve_task("find_the_origin_paper")
    cells = task.config.cells()
    assert task.paper_faithful and task.config.target_position == "centre"
    assert sorted({c.d for c in cells}) == [d for d in range(-15, 16) if d]  # all 30 values of the paper
    for d in (-15, 1, 15):
        lengths = [c.length for c in cells if c.d == d]
        assert lengths[0] == abs(d) + 1 and all(b - a == 8 for a, b in zip(lengths, lengths[1:], strict=False))
    longest = max(range(len(cells)), key=lambda i: (cell_at(task.config, i).length, i))
    last = generate_row(task, longest)
    assert 9000 <= last["difficulty"]["context_tokens"] <= 10500  # the paper's range ends near 10k tokens
    first = generate_row(task, 0)
    assert first["difficulty"]["num_lines"] == 16 and FAMILY.audit(first) == []


# --- length budgets -----------------------------------------------------------------------------


def _distinct_lengths(task):
    """One index per (length, arrangement extreme d) cell: the largest |d| is the hardest to fit."""
    seen, picks = set(), []
    for index in range(len(task.config.cells())):
        cell = cell_at(task.config, index)
        key = (cell.length, abs(cell.d) == max(abs(d) for d in task.config.d_values), cell.d > 0)
        if key not in seen:
            seen.add(key)
            picks.append(index)
    return picks


@pytest.mark.parametrize("name", ["find_the_origin", "find_the_origin_random", "find_the_origin_long"])
def test_prompt_tokens_within_tolerance_of_target(name):
    task = resolve_task(name)
    for row in iter_rows(task, _distinct_lengths(task)):
        difficulty = row["difficulty"]
        assert within_budget_tolerance(difficulty["prompt_tokens"], difficulty["target_tokens"]), difficulty
        assert difficulty["prompt_tokens"] == FAMILY_count(row["prompt"])
        assert difficulty["context_tokens"] == FAMILY_count(row["context"])


def FAMILY_count(text):
    from lurch_tasks.core.tokens import reference_counter

    return reference_counter().count(text)


# --- answerability, audits, difficulty ----------------------------------------------------------


def test_default_configs_audit_clean_and_solver_perfect():
    for name in ("find_the_origin", "find_the_origin_random"):
        task = resolve_task(name)
        for row in iter_rows(task, range(0, task.config.size(), 7)):
            assert schema_errors(row) == []
            assert FAMILY.audit(row) == []
            assert FAMILY.score(row, FAMILY.solve(row["prompt"]))["score"] == 1.0


def test_difficulty_properties_match_the_instance():
    row = generate_row(_small(d_values=[5], chain_lengths=[4], context_tokens=[2048]), 0)
    difficulty = row["difficulty"]
    assert difficulty["reasoning_depth"] == 4 == len(row["evidence"])
    assert 0 < difficulty["evidence_scope"] < 0.05
    # Four links 5 lines apart span 16 lines: roughly 15 lines of non-evidence out of ~180.
    assert 0.03 < difficulty["evidence_dispersion"] < 0.15
    for span in row["evidence"]:
        assert parse_line(row["context"][span["start"] : span["end"]]) is not None


def test_answers_vary_and_words_are_fresh():
    task = _small(num_samples=20, d_values=[1, -1])
    rows = list(iter_rows(task, range(40)))
    assert len({r["answer_text"] for r in rows}) == 40
    for row in rows[:5]:
        words = [w for pair in _pairs(row) for w in pair]
        sources, targets = [a for a, _ in _pairs(row)], [b for _, b in _pairs(row)]
        assert len(set(sources)) == len(sources) and len(set(targets)) == len(targets)
        assert len(set(words)) >= len(words) * 0.5


def test_scoring_accepts_formats_and_rejects_wrong():
    row = generate_row(_small(), 0)
    gold = row["answer_text"]
    for output in (f"FINAL ANSWER: {gold}", f"**FINAL ANSWER:** {gold.upper()}.", f'Final Answer: "{gold}"'):
        assert FAMILY.score(row, output)["score"] == 1.0
    wrong = FAMILY.score(row, "FINAL ANSWER: zzzz")
    assert wrong["score"] == 0.0 and wrong["memory_drift"] == 1.0
    assert FAMILY.score(row, "")["score"] == 0.0


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    d=st.integers(-15, 15).filter(lambda v: v != 0),
    chain_length=st.integers(2, 5),
    arrangement=st.sampled_from(["structured", "random"]),
    position=st.one_of(st.sampled_from(["jitter", "centre"]), st.floats(0, 1)),
    tokens=st.integers(1200, 3000),
    index=st.integers(0, 3),
)
def test_property_any_valid_config_is_sound(d, chain_length, arrangement, position, tokens, index):
    task = _small(d_values=[d], chain_lengths=[chain_length], arrangement=arrangement, target_position=position,
                  context_tokens=[tokens], num_samples=4)
    row = generate_row(task, index)
    assert FAMILY.audit(row) == []
    assert within_budget_tolerance(row["difficulty"]["prompt_tokens"], tokens)
    assert FAMILY.score(row, FAMILY.solve(row["prompt"]))["score"] == 1.0
    assert row["answer_text"] in row["context"]


# --- determinism --------------------------------------------------------------------------------


def test_instance_is_independent_of_order_and_count():
    task = resolve_task("find_the_origin")
    forward = {r["index"]: content_hash(r) for r in iter_rows(task, range(6))}
    backward = {r["index"]: content_hash(r) for r in iter_rows(task, [5, 3, 1, 4, 2, 0])}
    alone = content_hash(generate_row(task, 4))
    assert forward == backward and forward[4] == alone


def test_seed_and_split_change_the_instance():
    task = resolve_task("find_the_origin")
    base = content_hash(generate_row(task, 0))
    assert content_hash(generate_row(resolve_task("find_the_origin", seed=1), 0)) != base
    assert content_hash(generate_row(task, 0, "validation")) != base


def test_identical_across_processes_with_different_hash_seeds():
    code = (
        "from lurch_tasks.core.generation import resolve_task, iter_rows;"
        "from lurch_tasks.core.instance import content_hash;"
        "t = resolve_task('find_the_origin_random');"
        "print([content_hash(r) for r in iter_rows(t, range(4))])"
    )
    outputs = set()
    for hash_seed in ("0", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        outputs.add(subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True,
                                   text=True).stdout)
    assert len(outputs) == 1


def golden_fingerprints() -> dict:
    """SHA-256 of the first three instances of every registered Find the Origin config."""
    return {
        "family_version": FAMILY.version,
        "configs": {name: [content_hash(r) for r in iter_rows(resolve_task(name), range(3))] for name in TASKS},
    }


def test_golden_fingerprints():
    expected = json.loads(GOLDEN.read_text())
    actual = golden_fingerprints()
    assert actual == expected, (
        "generated bytes changed: bump family_version in lurch_tasks/families/find_origin/generate.py and "
        "regenerate with `python scripts/update_golden.py`"
    )


# --- the registered chain-length cheat (issue 27) ---------------------------------------------------------------


def _hand_prompt():
    """40 lines: the target chain o -> p -> q -> X on rows 16, 18, 20 (d = 2); the other lines are chains of three
    links (starts 0, 3, ..., 12, 15 (rows 15, 17, 19), 24, 27, ..., 36), a two-link chain on rows 22-23 and lone
    lines on rows 21 and 39."""
    from lurch_tasks.families.find_origin.prompt import render_line, render_prompt, render_question

    rows: dict[int, tuple[str, str]] = {16: ("o", "p"), 18: ("p", "q"), 20: ("q", "X")}
    starts = [0, 3, 6, 9, 12, 24, 27, 30, 33, 36]
    for start in starts:
        for k in range(3):
            rows[start + k] = (f"c{start}w{k}", f"c{start}w{k + 1}")
    for k, row in enumerate((15, 17, 19)):
        rows[row] = (f"sw{k}", f"sw{k + 1}")
    rows[21], rows[22], rows[23] = ("one", "only"), ("two", "links"), ("links", "end")
    rows[39] = ("lone", "alone")
    context = "\n".join(render_line(*rows[i]) for i in range(40))
    return render_prompt(context, render_question("X"))


def test_start_in_window_reads_the_chain_length_and_takes_the_nearest_shape():
    from lurch_tasks.families.find_origin.shortcuts import (
        _origin_like_rows,
        _start_in_window,
        chain_length_read,
        view,
    )

    prompt = _hand_prompt()
    assert chain_length_read(view(prompt), _origin_like_rows(prompt)) == 3
    # The starts 4 lines above (d = 2) and 4 below (d = -2) are at the nearest distance a 2-link chain can have, but
    # only the one above is a chain shape: the one below has its would-be middle link (row 22) starting a chain.
    assert _start_in_window(prompt, ("chains", "nearest", -1, 15)) == "FINAL ANSWER: o"
    assert _start_in_window(prompt, ("chains", "nearest", 1, 15)) == "FINAL ANSWER: o"
    # farthest: 20 lines above (d = 10: row 0, its middle row 10 no start)
    assert _start_in_window(prompt, ("chains", "farthest", -1, 15)) == "FINAL ANSWER: c0w0"


# --- the wide d grid of find_the_origin_depth (issue 27) ---------------------------------------------------------


def test_d_values_bound_is_the_wide_one_and_only_depth_goes_beyond_the_papers():
    from lurch_tasks.core.config import ConfigError
    from lurch_tasks.families.find_origin.config import MAX_ABS_D, MAX_WIDE_D, WIDE_D_VALUES

    assert _small(d_values=[MAX_WIDE_D, -MAX_WIDE_D]).config.d_values == (29, -29)
    for bad in (MAX_WIDE_D + 1, -MAX_WIDE_D - 1, 0):
        with pytest.raises(ConfigError) as error:
            _small(d_values=[2, bad])
        message = str(error.value)
        assert message.startswith(f"d_values: {bad} is not allowed") and "\n" not in message, message
    # the paper's -15..15 stays the bound of every other config, the paper-faithful one byte for byte
    for task in all_tasks():
        if task.family == "find_the_origin":
            widest = max(abs(d) for d in task.config.d_values)
            assert widest == (MAX_WIDE_D if task.name == "find_the_origin_depth" else MAX_ABS_D), task.name
    assert resolve_task("find_the_origin_depth").config.d_values == WIDE_D_VALUES and len(WIDE_D_VALUES) == 56


def _depth_rows(match):
    task = resolve_task("find_the_origin_depth")
    indices = [i for i in range(task.config.size()) if match(cell_at(task.config, i))]
    return list(iter_rows(task, indices))


def test_depth_context_holds_the_widest_shape_and_its_decoys_use_the_wide_grid():
    from lurch_tasks.families.find_origin.config import DEFAULT_D_VALUES as PAPER_GRID
    from lurch_tasks.families.find_origin.config import WIDE_D_VALUES
    from lurch_tasks.families.find_origin.shortcuts import _origin_like_rows, _shaped, view

    rows = _depth_rows(lambda cell: cell.chain_length in (3, 8) and abs(cell.d) in (2, 16, 29))
    assert len(rows) == 12
    for row in rows:
        params = json.loads(row["params"])
        d, links = params["cell"]["d"], params["cell"]["chain_length"] - 1
        destination, n = params["target_rows"][-1], row["difficulty"]["num_lines"]
        # 8k tokens: the 8-link chain of d = ±29 spans 204 lines, and its destination is 203 lines from both ends
        assert n >= 2 * links * 29 + 1 and min(destination, n - 1 - destination) >= links * abs(d), row["id"]
        assert FAMILY.score(row, FAMILY.solve(row["prompt"]))["score"] == 1.0
        # the decoys are drawn from the config's own grid: a reader of chain starts finds the gold among the
        # look-alikes of the wide grid; on the paper's grid a gold |d| > 15 is not there
        assert set(params["decoy_d"]) <= set(WIDE_D_VALUES) and max(map(abs, params["decoy_d"])) > 15, row["id"]
        starts = _origin_like_rows(row["prompt"])
        shaped = _shaped(view(row["prompt"]), starts, links, WIDE_D_VALUES)
        on_list = on_list_ds(params["decoy_d"], destination, links, n)
        assert sorted(shaped) == sorted([*on_list, d]), row["id"]
        assert (d in _shaped(view(row["prompt"]), starts, links, PAPER_GRID)) == (abs(d) <= 15)


def test_strategies_cover_the_wide_grid():
    from lurch_tasks.families.find_origin.config import MAX_ABS_D, MAX_WIDE_D
    from lurch_tasks.families.find_origin.shortcuts import SHORTCUTS

    variants = {shortcut.name: shortcut.variants for shortcut in SHORTCUTS}
    assert max(abs(delta) for delta in variants["offset"]) == 7 * MAX_WIDE_D
    assert max(k for k, _ in variants["start_at_distance"]) == 7 * MAX_WIDE_D
    assert {variant[-1] for variant in variants["start_in_window"]} == {MAX_ABS_D, MAX_WIDE_D}


def test_depth_lengths_below_its_widest_shape_are_raised_and_other_configs_keep_theirs(capsys):
    """find_the_origin_depth's 8-link chains of d = ±29 need ~2.4k tokens: a harness-wide 2048 is raised to its
    floor with one warning (strict: an error naming the allowed lengths); find_the_origin keeps 2048."""
    from lurch_tasks.core.config import ConfigError
    from lurch_tasks.harness.tasks import build_docs

    docs = build_docs("find_the_origin_depth", max_seq_lengths=[2048], num_samples=1, chain_lengths=[8],
                      d_values=[29, -29])["test"]
    assert [d["difficulty"]["target_tokens"] for d in docs] == [3072, 3072]
    assert "below the 3072 tokens" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="max_seq_lengths of 3072 or more"):
        build_docs("find_the_origin_depth", max_seq_lengths=[2048], num_samples=1, strict=True)
    plain = build_docs("find_the_origin", max_seq_lengths=[2048], num_samples=1, d_values=[2, -2])["test"]
    assert {d["difficulty"]["target_tokens"] for d in plain} == {2048}


def test_render_lines_writes_the_line_template():
    from lurch_tasks.families.find_origin.prompt import LINE_TEMPLATE, parse_line, render_lines

    sources, targets = ["origin", "a{0}b", 'x"y'], ["destination", "{}", "z"]
    assert render_lines(sources, targets) == [LINE_TEMPLATE.format(s, t) for s, t in zip(sources, targets, strict=True)]
    assert parse_line(render_lines(["origin"], ["destination"])[0]) == ("origin", "destination")
