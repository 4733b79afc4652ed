"""The shortcut audit (DESIGN 3.5): the mechanism, every default config at chance, known holes caught."""

from __future__ import annotations

import dataclasses
import importlib
import json
import subprocess
import sys

import pytest

from lurch_tasks.core.generation import generate_row, iter_rows, resolve_task
from lurch_tasks.core.probe import LearnedProbe
from lurch_tasks.core.registry import all_tasks, get_family
from lurch_tasks.core.shortcuts import (
    EXPECTED,
    FAIL,
    KNOWN,
    OK,
    LabelCounts,
    Probe,
    Shortcut,
    StreamingAudit,
    audit_task,
    counted_rank_auc,
    format_table,
    rank_auc,
    run_audit,
)
from lurch_tasks.families.graph.shortcuts import template_of

WORLD_MODULE = importlib.import_module("lurch_tasks.families.graph.world")
GENERATE_MODULE = importlib.import_module("lurch_tasks.families.graph.generate")
DEFAULT_TASKS = [t.name for t in all_tasks() if not t.paper_faithful]
PAPER_TASKS = [t.name for t in all_tasks() if t.paper_faithful]
# Every row of every default config, except an evenly spaced slice of find_the_origin_long (2 rows per d).
SLICE = {"find_the_origin_long": 56}
# RECON's full grids (576-3456 rows of 16k-32k-token cases each) run in `scripts/validity_report.py audit`; here
# every cell of every RECON config, fewer cases per cell.
RECON_SMALL = {"num_samples": 12, "context_tokens": [16384]}
RECON_SMALL_ALL = {"num_samples": 4, "context_tokens": [16384]}


def audited_task(name: str):
    task = resolve_task(name)
    if task.family != "recon":
        return task
    if name == "recon_long":
        return task  # 72 rows: two 64k-128k cases per (domain, length)
    return resolve_task(name, RECON_SMALL_ALL if name.endswith("_all") else RECON_SMALL)


def _line(lines, name):
    return next(line for line in lines if line.strategy.startswith(name))


# --- the mechanism ----------------------------------------------------------------------------------


def test_rank_auc_hand_cases():
    assert rank_auc([(1, False), (2, True)]) == 1.0
    assert rank_auc([(1, True), (2, False)]) == 0.0
    assert rank_auc([(1, True), (1, False)]) == 0.5  # ties count half
    assert rank_auc([(0, False), (1, True), (1, False), (2, True)]) == pytest.approx(0.875)
    assert rank_auc([(1, True), (2, True)]) is None



def test_counted_rank_auc_is_rank_auc_of_the_samples():
    """One implementation: samples one by one and the same samples counted by value give the same float, and
    both are the pairwise definition (a gold above a non-gold counts 1, a tie half)."""
    import random

    draw = random.Random(7)
    for _ in range(50):
        pairs = [(draw.choice([0.0, 0.25, 0.5, 1.0, 2]), draw.random() < 0.3) for _ in range(draw.randint(2, 40))]
        counts: dict[float, list[int]] = {}
        for value, gold in pairs:
            counts.setdefault(value, [0, 0])[0] += 1
            counts[value][1] += gold
        assert rank_auc(pairs) == counted_rank_auc(counts)
        golds = [v for v, g in pairs if g]
        others = [v for v, g in pairs if not g]
        if golds and others:
            wins = sum((a > b) + 0.5 * (a == b) for a in golds for b in others)
            assert rank_auc(pairs) == pytest.approx(wins / (len(golds) * len(others)))
        else:
            assert rank_auc(pairs) is None

def _toy_rows():
    return [{"prompt": f"p{i}", "answer": str(i % 4)} for i in range(40)]


def _toy_score(row, output):
    return {"score": float(output == row["answer"])}


def test_categorical_probes_keep_counts_with_the_floats_of_the_pairs():
    """A categorical probe keeps per row how many candidates carry each (label, gold) (issue 29: not one pair
    per sentence); its AUC is rank_auc's over the pairs, float for float, and an older record's plain lists
    still add up to the same."""
    def labels(row):
        return [(f"t{(row['case'] * 7 + k * 3) % 5}", (row["case"] + k) % 4 == 0) for k in range(6 + row["case"])]

    probe = Probe("label", "template", "a template label", labels, categorical=True)
    rows = [{"case": case} for case in range(9)]
    calibration = [{"case": case + 3} for case in range(9)]

    def audit():
        return StreamingAudit("config", False, [], [probe], lambda row, out: {"score": 0.0}, lambda p, k: None,
                              chance=0.0)

    counted, listed = audit(), audit()
    for row, other in zip(rows, calibration, strict=True):
        counted.absorb(counted.measure(row))
        counted.absorb_calibration(counted.calibration_labels(other))
        measure = listed.measure(row)
        listed.absorb(dataclasses.replace(measure, probes=(labels(row),)))  # an older run's record
        listed.absorb_calibration([labels(other)])
    assert isinstance(counted.measure(rows[0]).probes[0], LabelCounts)
    learned = [pair for row in calibration for pair in labels(row)]
    counts: dict = {}
    for label, gold in learned:
        counts.setdefault(label, [0, 0])[int(gold)] += 1
    rate = {label: gold / (gold + other) for label, (other, gold) in counts.items()}
    base = sum(float(gold) for _, gold in learned) / len(learned)
    raw = rank_auc([(rate.get(label, base), gold) for row in rows for label, gold in labels(row)])
    (line,) = counted.lines()
    assert line.score == max(raw, 1.0 - raw) and listed.lines() == [line]


def test_run_audit_statuses_and_best_variant():
    always_zero = Shortcut("zero", "position", "answers 0", lambda prompt, _: "0")
    cheat = Shortcut("cheat", "family", "reads the answer off the prompt index",
                     lambda prompt, k: str(int(prompt[1:]) % k), variants=(2, 3, 4))
    expected = Shortcut("studied", "family", "the studied regularity", lambda prompt, _: str(int(prompt[1:]) % 4),
                        expected_when=lambda config: config == "structured")
    probe = Probe("index", "position", "index parity", lambda row: [(int(row["prompt"][1:]) % 2, True),
                                                                    (1 - int(row["prompt"][1:]) % 2, False)])
    guess = lambda prompt, seed: "9"  # noqa: E731 - never right: chance 0
    lines = run_audit(_toy_rows(), "random", False, [always_zero, cheat, expected], [probe], _toy_score, guess)
    assert [line.status for line in lines] == [FAIL, FAIL, FAIL, OK]
    assert _line(lines, "zero").score == 0.25 and _line(lines, "cheat").score == 1.0
    assert "best variant 4" in _line(lines, "cheat").note
    assert _line(lines, "index").score == 0.5  # AUC 1 in half the rows and 0 in the other half
    structured = run_audit(_toy_rows(), "structured", False, [expected], [], _toy_score, guess)
    assert structured[0].status == EXPECTED
    faithful = run_audit(_toy_rows(), "random", True, [cheat], [], _toy_score, guess)
    assert faithful[0].status == KNOWN
    table = format_table(lines)
    assert "strategy" in table.splitlines()[0] and "cheat" in table and "FAIL" in table


def test_a_hole_in_one_slot_is_not_averaged_away():
    """A strategy exact on one slot of eight and at chance elsewhere: +0.11 pooled, +0.9 on its slot."""
    rows = [{"prompt": f"p{i}", "answer": str(i % 4), "slot": f"s{i % 8}"} for i in range(160)]
    cheat = Shortcut("slot_cheat", "family", "reads slot s3",
                     lambda prompt, _: str(int(prompt[1:]) % 4) if int(prompt[1:]) % 8 == 3 else "9")
    guess = lambda prompt, seed: "9"  # noqa: E731 - never right: chance 0
    pooled = run_audit(rows, "random", False, [cheat], [], _toy_score, guess)
    per_slot = run_audit(rows, "random", False, [cheat], [], _toy_score, guess, slot=lambda row: row["slot"])
    assert pooled[0].score == pytest.approx(0.125) and per_slot[0].score == 1.0
    assert per_slot[0].status == FAIL and "worst slot s3 (20 rows)" in per_slot[0].note
    exact = run_audit(rows, "random", False, [cheat], [], _toy_score, guess, slot=lambda row: row["slot"],
                      slot_chance=lambda name: 0.5 if name == "s3" else None)
    assert exact[0].chance == 0.5 and "worst slot s3" in exact[0].note


def test_a_slot_that_studies_the_regularity_is_reported_apart_and_the_rest_still_judged():
    """ImplicitHop's dispersion-0 rows: proximity is what they study. Declared there, the strategy's hole on that
    slot is reported as expected on its own line; a hole on any other slot still fails."""
    rows = [{"prompt": f"p{i}", "answer": str(i % 4), "slot": f"s{i % 4}"} for i in range(160)]
    cheat = Shortcut("block_cheat", "family", "reads slot s0",
                     lambda prompt, _: str(int(prompt[1:]) % 4) if int(prompt[1:]) % 4 == 0 else "9",
                     expected_in=lambda slot: slot == "s0")
    guess = lambda prompt, seed: "9"  # noqa: E731 - never right: chance 0
    lines = run_audit(rows, "random", False, [cheat], [], _toy_score, guess, slot=lambda row: row["slot"])
    judged, studied = lines
    assert (judged.strategy, judged.status, judged.score) == ("block_cheat", OK, 0.0)
    assert (studied.strategy, studied.status, studied.score) == ("block_cheat[s0]", EXPECTED, 1.0)
    leaky = dataclasses.replace(cheat, expected_in=lambda slot: slot == "s1")  # the hole is not where it is studied
    judged, studied = run_audit(rows, "random", False, [leaky], [], _toy_score, guess, slot=lambda row: row["slot"])
    assert judged.status == FAIL and "worst slot s0" in judged.note and studied.status == OK


# --- every default config is at chance ----------------------------------------------------------------


# Open holes: strategies known to beat chance on a default config, registered and failing until the generator
# closes them. Only these may fail there, and each must still fail (remove it here when it closes).
OPEN_HOLES: dict[str, dict[str, str]] = {}


@pytest.mark.slow
@pytest.mark.parametrize("name", DEFAULT_TASKS)
def test_every_default_config_passes_the_shortcut_audit(name):
    task = audited_task(name)
    result = audit_task(task, SLICE.get(name))
    failed = {line.strategy for line in result.lines if line.status == FAIL}
    open_holes = set(OPEN_HOLES.get(name, {}))
    assert failed <= open_holes, "\n" + format_table(result.lines)
    assert failed == open_holes, f"closed, remove from OPEN_HOLES: {sorted(open_holes - failed)}"
    if name.startswith("find_the_origin") and task.config.arrangement == "structured":
        assert _line(result.lines, "read_d").status == EXPECTED  # the regularity structured configs study


def test_read_d_is_at_chance_under_random_arrangement():
    result = audit_task(resolve_task("find_the_origin_random"), 56)
    line = _line(result.lines, "read_d")
    assert line.status == OK and line.score <= line.chance + 0.05


# --- the audit catches the known holes -----------------------------------------------------------------


def test_find_the_origin_paper_mirror_hole_is_caught():
    result = audit_task(resolve_task("find_the_origin_paper"), 90)
    assert result.passed  # paper-faithful: known holes are reported, not failed
    mirror = _line(result.lines, "mirror")
    assert mirror.status == KNOWN and mirror.score == 1.0
    assert _line(result.lines, "origin_line_centrality").status == KNOWN


@pytest.mark.slow
def test_find_the_origin_depth_chain_length_hole_is_closed_on_the_wide_grid_and_caught_on_the_paper_grid():
    # Issue 27: the chain length, read off the other chains or off the chain shapes around the destination, leaves the
    # origin one of the look-alike shapes of that length, at most one per signed d. On the paper's 28 d (exact floor
    # of a rank pick: mean 1/K = 0.052) the nearest such start beats chance + 0.05; on the 56 of ±2..29 (0.025) not.
    closed = audit_task(resolve_task("find_the_origin_depth"))
    line = _line(closed.lines, "start_in_window")
    assert line.status == OK and line.score <= line.chance + 0.05, format_table(closed.lines)
    assert closed.passed, format_table(closed.lines)
    paper_grid = [d for d in range(-15, 16) if abs(d) > 1]
    caught = audit_task(resolve_task("find_the_origin_depth", {"d_values": paper_grid}))
    line = _line(caught.lines, "start_in_window")
    assert line.status == FAIL and line.score > line.chance + 0.05, format_table(caught.lines)


def test_centred_target_fails_the_audit_outside_paper_configs():
    task = resolve_task("find_the_origin", {"target_position": "centre"})
    result = audit_task(task, 56)
    assert not result.passed and _line(result.lines, "mirror").status == FAIL


@pytest.mark.slow
def test_graph_source_code_dispersion_hole_is_caught():
    result = audit_task(resolve_task("memory_drift_edge_paper"))
    assert _line(result.lines, "cut_points").status == KNOWN
    assert _line(result.lines, "profile_centrality").status == KNOWN
    assert _line(result.lines, "profile_centrality").score > 0.8
    default = audit_task(resolve_task("memory_drift_edge"))
    assert _line(default.lines, "cut_points").status == OK


def test_graph_adjacent_placement_hole_is_caught():
    task = resolve_task("memory_drift_edge", {"placement": "adjacent"})
    result = audit_task(task, 30)
    assert _line(result.lines, "cut_points").status == FAIL


def _clear_graph_caches():
    WORLD_MODULE._build_world.cache_clear()
    GENERATE_MODULE._world_units.cache_clear()
    GENERATE_MODULE._profile_costs.cache_clear()


def test_unpadded_profiles_length_tell_is_caught(monkeypatch):
    """Without solo details, gold profiles (which carry cue sentences) are longer: the probe sees it."""
    monkeypatch.setattr(WORLD_MODULE, "DETAIL_SENTENCES", (0, 0))
    _clear_graph_caches()
    try:
        result = audit_task(resolve_task("memory_drift_edge", {"context_tokens": [4096, 8192]}), 16)
        assert _line(result.lines, "profile_length").status == FAIL
    finally:
        _clear_graph_caches()


def test_decoy_only_template_is_caught(monkeypatch):
    """A decoy written with a template no real cue uses (the old design) fails the template probe."""
    def decoy_only(cue, rng, taken):
        key = WORLD_MODULE.near_miss(cue.key, cue.kind, rng, taken)
        return "{S} declined an offer involving {key}.", {"key": key}, key

    monkeypatch.setattr(GENERATE_MODULE, "decoy_parts", decoy_only)
    result = audit_task(resolve_task("memory_drift_edge_decoys", {"context_tokens": [2048, 4096]}), 16)
    assert _line(result.lines, "decoy_template").status == FAIL


# --- decoys and distractors look like gold material ---------------------------------------------------


def test_decoys_use_the_imitated_cue_kinds_own_templates():
    task = resolve_task("memory_drift_edge_decoys")
    for row in iter_rows(task, range(0, 24, 3)):
        decoys = json.loads(row["params"])["decoys"]
        assert decoys
        for decoy in decoys:
            profile = next(p for p in row["context"].split("\n\n") if p.startswith(decoy["holder"] + ": "))
            sentence = next(s for s in profile.split(". ") if decoy["near_miss"] in s)
            template = template_of(sentence if sentence.endswith(".") else sentence + ".")
            assert template is not None and template[0] == decoy["kind"], (sentence, decoy)
            assert not profile.endswith(sentence) or profile.count(". ") > 0


# --- the CLI ------------------------------------------------------------------------------------------


def _lurch(*args):
    return subprocess.run([sys.executable, "-m", "lurch_tasks.cli", *args], capture_output=True, text=True)


def test_cli_audit_passes_a_default_config_and_prints_the_table():
    result = _lurch("audit-shortcuts", "--config", "find_the_origin_random", "--n", "112", "--quiet")
    assert result.returncode == 0, result.stderr
    assert "strategy" in result.stdout and "mirror" in result.stdout and "passed" in result.stdout


def test_cli_audit_reports_paper_holes_without_failing():
    result = _lurch("audit-shortcuts", "--config", "find_the_origin_paper", "--n", "60", "--quiet")
    assert result.returncode == 0, result.stderr
    assert "known hole" in result.stdout


def test_cli_audit_exits_non_zero_on_a_hole():
    result = _lurch("audit-shortcuts", "--config", "find_the_origin", "--set", "target_position=\"centre\"",
                    "--n", "28", "--quiet")
    assert result.returncode == 1
    assert "FAIL" in result.stdout and "find_the_origin" in result.stderr


def test_every_family_registers_shortcuts_and_probes():
    for task in all_tasks():
        family = get_family(task.family)
        assert family.shortcuts and family.probes and family.compared_knobs, family.name
        kinds = {s.kind for s in family.shortcuts} | {p.kind for p in family.probes}
        assert {"position", "frequency", "length", "family"} <= kinds, (family.name, kinds)
        assert isinstance(family.learned_probe, LearnedProbe), f"{family.name} registers no learned probe"


def test_paper_faithful_configs_are_never_in_the_default_suite():
    for name in PAPER_TASKS:
        task = resolve_task(name)
        assert not task.in_suite and ("paper" in name or "segments" in name)
    row = generate_row(resolve_task(PAPER_TASKS[0]), 0)
    assert row["pair_key"]


def test_task_auditor_can_leave_out_one_side():
    from lurch_tasks.core.shortcuts import TaskAuditor

    task = resolve_task("implicit_hop_scope")
    rows = [generate_row(task, index, "test") for index in (0, 9, 18, 27)]
    sides = {}
    for shortcuts, learned in ((True, True), (True, False), (False, True)):
        auditor = TaskAuditor(task, shortcuts=shortcuts, learned=learned)
        for row in rows:
            auditor.add(row)
        sides[shortcuts, learned] = [line.strategy for line in auditor.result().lines]
    learned_lines = [name for name in sides[True, True] if name.startswith("learned_probe")]
    assert learned_lines and sides[False, True] == learned_lines
    assert sides[True, False] == [name for name in sides[True, True] if name not in learned_lines]
