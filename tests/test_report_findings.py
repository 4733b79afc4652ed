"""The report a new user reads first (issue 30, item 3): key findings per model at the top, one figure per task with
the models as colours and every legend outside the axes, integers written as integers, the chance baseline marked
"chance" with no onset, effective length or GLM fit, the GLM's notes folded to one line per fit, and a visible
warning wherever a curve rests on few docs per bin; the page renders in headless Chromium.

Fast: the docs are generated in-process and answered by the three built-in models' own answer functions (no lm-eval
run), then re-scored exactly as ``lurch report`` re-scores logged samples (``frame.score_sample``)."""

from __future__ import annotations

import contextlib
import csv
import json
import math
import re
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from browser import check_page, leftover_browser_processes, require_browser

from lurch_tasks.analysis import plots
from lurch_tasks.analysis.frame import _frame, score_sample
from lurch_tasks.analysis.render import _display, render_html, render_markdown, write_files
from lurch_tasks.analysis.report import CHANCE, FEW_DOCS, Options, build_sections, few_docs, fold_notes
from lurch_tasks.analysis.runs import Sample, find_runs, is_chance_run
from lurch_tasks.core.generation import generate_row, resolve_task
from lurch_tasks.harness.models import SimulatedLM, guess_prompt, solve_prompt

TASKS = ("find_the_origin", "memory_drift_edge", "implicit_hop_depth", "implicit_hop_length", "recon_chain")
MODELS = ("lurch-random", "lurch-simulated", "lurch-solver")
OPTIONS = Options(reps=40)


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    """8 docs of a task of each family with a length curve, answered by the solver, the chance baseline and
    lurch-simulated (known depth and length effects)."""
    simulated = SimulatedLM.create_from_arg_string("intercept=1.5,depth=-0.8,length=-0.6,answer_seed=1")
    rows = []
    for name in TASKS:
        task = resolve_task(name)
        for index in range(8):
            doc = generate_row(task, index)
            answers = {"lurch-solver": solve_prompt(doc["prompt"]), "lurch-random": guess_prompt(doc["prompt"], 1234),
                       "lurch-simulated": simulated.answer_doc(doc, doc["prompt"])}
            rows += [score_sample(Sample(model, name, doc, answer, f"{name}:{index}"))
                     for model, answer in answers.items()]
    return _frame(rows, {"lurch-random"})


@pytest.fixture(scope="module")
def drawn(frame) -> tuple[list, list]:
    """The report's sections, built once, and what each figure drew (``drawn_figures``)."""
    with drawn_figures() as boxes:
        sections = build_sections(frame, OPTIONS)
    return sections, boxes


@pytest.fixture(scope="module")
def sections(drawn):
    return drawn[0]


@pytest.fixture(scope="module")
def report(sections, tmp_path_factory) -> Path:
    """The report's files, written from the sections above as ``write_report`` writes them."""
    out = tmp_path_factory.mktemp("findings") / "r"
    write_files(out, sections, render_markdown(sections, ()), render_html(sections, (), OPTIONS))
    return out


def _tables(sections) -> dict[str, pd.DataFrame]:
    return {name: table for section in sections for name, table in section.tables}


def _csv(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_key_findings_lead_the_report_one_block_per_model(sections, report):
    findings = sections[0]
    assert findings.key == "findings" and findings.title == "Key findings"
    blocks = {block.title: block for block in findings.blocks}
    assert set(blocks) == set(MODELS) and findings.blocks[-1].title == "lurch-random"  # baselines last
    simulated = blocks["lurch-simulated"].lines
    assert re.fullmatch(r"headline -?\d\.\d{3} \[-?\d\.\d{3}, -?\d\.\d{3}\]", simulated[0])
    assert any(line.startswith("effective length:") for line in simulated)
    assert any(line.startswith("drift onset") for line in simulated)
    effects = [line for line in simulated if "property effects" in line]
    assert len(effects) == 1 and (re.search(r"\w+ [-+]?\d+\.\d \[[-+]\d+\.\d, [-+]\d+\.\d\] pp", effects[0])
                                  or "not estimable" in effects[0])
    solver = blocks["lurch-solver"].lines
    assert solver[0] == "headline 1.000 [1.000, 1.000]"
    assert "property effects not estimable: every outcome is 1" in " ".join(solver)  # said plainly, no numbers
    page = (report / "report.html").read_text(encoding="utf-8")
    assert page.index('<section id="findings">') < page.index('<section id="overview">')
    assert page.index('href="#findings"') < page.index('href="#overview"')
    assert "### lurch\\-simulated" in (report / "summary.md").read_text(encoding="utf-8")  # Markdown-escaped


def test_the_chance_baseline_gets_no_onset_effective_length_or_fit(sections, report):
    block = next(b for b in sections[0].blocks if b.title == "lurch-random")
    assert block.tag == CHANCE
    text = " ".join(block.lines)
    assert text.startswith("headline ") and "effective length:" not in text and "onset on" not in text
    assert "property effects:" not in text and "strongest" not in text
    onsets = _csv(report / "length_onset.csv")
    random = [r for r in onsets if r["model"] == "lurch-random"]
    assert random and all(r["drift_onset"] == CHANCE and r["effective_length"] == CHANCE for r in random)
    assert all(r["drift_onset_lo"] == r["drift_onset_hi"] == "" for r in random)
    assert all(r["drift_onset"] != CHANCE for r in onsets if r["model"] != "lurch-random")
    fits = _csv(report / "glm_fits.csv")
    assert "lurch-random" not in {r["label"] for r in fits}
    assert "lurch-random" not in {r["label"] for r in _csv(report / "glm_per_model.csv")}
    glm = next(s for s in sections if s.key == "glm")
    assert glm.notes[0].startswith("lurch-random: the chance baseline, left out of every fit")
    page = (report / "report.html").read_text(encoding="utf-8")
    assert '<span class="tag">chance</span>' in page


def test_a_chance_baseline_is_read_from_the_runs_results_file(tmp_path):
    for model, chance in (("lurch-random", True), ("lurch-solver", False), ("hf", False)):
        folder = tmp_path / model / "run"
        folder.mkdir(parents=True)
        (folder / "results_2026-01-01T00-00-00.000000.json").write_text(json.dumps(
            {"config": {"model": model, "model_args": ""}}))
        (folder / "samples_find_the_origin_2026-01-01T00-00-00.000000.jsonl").write_text("")
        assert is_chance_run(next(folder.glob("results_*.json"))) is chance
        assert [run.chance for run in find_runs([tmp_path / model])] == [chance]
    assert is_chance_run(None) is False  # samples without a results file: not assumed to be a baseline


def test_integers_print_as_integers_and_no_onset_reads_none_once(report):
    table = pd.DataFrame({"model": ["m", "m"], "d": [-15.0, 3.0], "n": [4, 12], "connections": [1.0, 5.0],
                          "score": [1.0, 0.5], "score_lo": [1.0, 0.25], "score_hi": [1.0, 0.75],
                          "drift_onset": [None, 4096.0], "drift_onset_lo": [math.inf, 4096.0],
                          "drift_onset_hi": [math.inf, math.inf]})
    shown = _display(table)
    assert list(shown["d"]) == ["-15", "3"] and list(shown["n"]) == ["4", "12"]
    assert list(shown["connections"]) == ["1", "5"]
    assert list(shown["score"]) == ["1.000 [1.000, 1.000]", "0.500 [0.250, 0.750]"]  # means keep decimals
    assert list(shown["drift_onset"]) == ["none", "4096 [4096, none]"]
    assert plots.number(-15.0) == "-15" and plots.number(1.0) == "1" and plots.number(0.25) == "0.25"
    for name in ("report.html", "summary.md"):
        text = (report / name).read_text(encoding="utf-8")
        assert "[none, none]" not in text and not re.search(r"\| -?\d+\.000 \| \d+ \| \d+\.\d{3} \[", text), name
    cells = [r for r in _csv(report / "fto_d_length.csv")]
    page = (report / "report.html").read_text(encoding="utf-8")
    first_d = int(float(cells[0]["d"]))
    assert f'<td class="t">{cells[0]["task"]}</td><td>{first_d}</td>' in page


@contextlib.contextmanager
def drawn_figures() -> Iterator[list]:
    """Every figure the report draws, laid out, with each legend's and each axes' box in pixels."""
    boxes: list = []
    original = plots._png

    def spy(figure) -> bytes:
        figure.canvas.draw()  # constrained layout places the outside legends here
        renderer = figure.canvas.get_renderer()
        legends = [*figure.legends, *(ax.get_legend() for ax in figure.axes if ax.get_legend() is not None)]
        texts = [t.get_text() for legend in legends for t in legend.get_texts()]
        axes = [ax.get_window_extent(renderer) for ax in figure.axes if ax.get_visible() and ax.has_data()]
        boxes.append(([legend.get_window_extent(renderer) for legend in legends], axes, texts))
        return original(figure)

    plots._png = spy
    try:
        yield boxes
    finally:
        plots._png = original


def test_one_figure_per_task_and_every_legend_outside_the_axes(drawn):
    sections, boxes = drawn
    names = [figure.name for section in sections for figure in section.figures]
    assert len(names) == len(set(names)) == len(boxes)
    assert not [name for name in names for model in MODELS if model in name]  # no figure per model
    assert [n for n in names if n.startswith("graph_")] == ["graph_memory_drift_edge", "graph_radar"]
    assert [n for n in names if n.startswith("fto_")] == ["fto_find_the_origin"]
    legends = 0
    for legend_boxes, axes_boxes, _ in boxes:
        for legend in legend_boxes:
            legends += 1
            assert not [axis for axis in axes_boxes if legend.overlaps(axis)], (legend, axes_boxes)
    assert legends >= len(boxes) - 2  # every figure but the heatmap (a colour bar) has its legend
    labels = [text for _, _, texts in boxes for text in texts]
    per_prompt = [text for text in labels if text.endswith("per prompt")]
    assert per_prompt and all(re.fullmatch(r"\d+ per prompt", text) for text in per_prompt)  # "1 per prompt"


def test_glm_notes_fold_to_one_line_per_fit(sections):
    notes = ["task find_the_origin: every outcome is 0 (6 rows); its intercept is infinite, rows dropped",
             "task implicit_hop_scope: every outcome is 0 (6 rows); its intercept is infinite, rows dropped",
             "task recon_all: every outcome is 1 (6 rows); its intercept is infinite, rows dropped",
             "scope is constant (evidence_scope = 0.01) in the data; term dropped",
             "depth is collinear with the task/model intercepts or other properties; term dropped",
             "RuntimeWarning: divide by zero encountered in divide",
             "RuntimeWarning: invalid value encountered in multiply",
             "quasi-complete separation: 4 rows fitted within 3e-7 of their 0/1 outcome; estimates not identified; "
             "no fit"]
    line = fold_notes(notes)
    assert "\n" not in line and line.startswith("quasi-complete separation")
    assert "(not fitted)" in line and "no fit" not in line
    assert "2 properties not estimable: scope (constant), depth (collinear)" in line
    assert "2 tasks left out, every score 0 (no finite intercept): find_the_origin, implicit_hop_scope" in line
    assert "1 task left out, every score 1" in line and "2 numerical warnings" in line
    assert "its intercept is infinite" not in line
    glm = next(s for s in sections if s.key == "glm")
    fits = _tables(sections)["glm_fits"]
    labelled = [note.split(": ", 1)[0] for note in glm.notes[1:]]  # after the chance baseline's line
    assert len(labelled) == len(set(labelled)) <= len(fits)  # at most one line per fit
    assert not [note for note in glm.notes if "its intercept is infinite" in note]


def test_few_docs_per_bin_are_flagged_where_they_are_shown(sections, report):
    assert few_docs(pd.DataFrame({"n": [FEW_DOCS, 40]}), "x") == ""
    assert few_docs(pd.DataFrame({"n": [2, 3, 12]}), "the curves") == (
        f"few docs per bin in the curves: 2 to 12 per bin, under {FEW_DOCS} in 2 of 3 bins; the intervals are wide "
        "and the shapes may be noise")
    flagged = {s.key for s in sections if s.warnings}
    assert {"findings", "length", "graph", "find_the_origin", "glm"} <= flagged  # 8 docs per task: every bin thin
    figures = [f for s in sections for f in s.figures if f.name.startswith(("length_", "graph_memory", "fto_"))]
    assert figures and all(f.warning.startswith("few docs per bin (") for f in figures)
    page = (report / "report.html").read_text(encoding="utf-8")
    assert page.count('class="warn">warning: few docs per bin') >= len(figures) + len(flagged) - 1


def test_the_page_renders_in_headless_chromium(report, tmp_path):
    require_browser()
    check = check_page(report / "report.html", tmp_path / "shot.png", width=1400, height=1600, full_page=True)
    assert check.console_errors == [] and check.images_broken == []
    assert check.images_total == len(list((report / "figures").glob("*.png")))
    assert check.text.index("Key findings") < check.text.index("Per-model summary")
    assert "chance" in check.text and "few docs per bin" in check.text
    assert leftover_browser_processes() == []


def test_a_report_of_the_chance_baseline_alone_has_no_fit_and_says_chance(frame):
    alone = frame[frame["model"] == "lurch-random"]
    sections = build_sections(alone, Options(reps=0))
    assert [b.tag for b in sections[0].blocks] == [CHANCE]
    glm = next(s for s in sections if s.key == "glm")
    assert glm.figures == () and glm.notes[0].startswith("lurch-random: the chance baseline")
    assert not _tables(sections)["glm_fits"]["fitted"].astype(bool).any()


def test_a_family_one_model_did_not_evaluate_is_an_explained_dash_in_a_fixed_column_order():
    """A model whose run skipped a family (its window) has no value there: the headline table keeps the columns in one
    order whatever model comes first, and the page shows a dash that says why, not a blank cell."""
    import pandas as pd

    from lurch_tasks.analysis import headline as analysis_headline
    from lurch_tasks.analysis.render import EMPTY_HELP, _html_table

    rows = [{"model": "a-small", "family": family, "balance_key": "k", analysis_headline.SCORE: 0.0}
            for family in ("find_the_origin", "graph_reconstruction")]
    rows += [{"model": "b-large", "family": family, "balance_key": "k", analysis_headline.SCORE: 1.0}
             for family in ("find_the_origin", "graph_reconstruction", "recon")]
    table = analysis_headline.table(pd.DataFrame(rows), reps=20, seed=0)
    shown = [c for c in table.columns if not c.endswith(("_lo", "_hi"))]
    assert shown == ["model", "headline", "headline:find_the_origin", "headline:graph_reconstruction", "headline:recon"]
    page = _html_table("headline", table)
    assert page.count('<td class="empty"') == 1 and f'title="{EMPTY_HELP}"' in page
    assert f'<p class="legend">— {EMPTY_HELP}</p>' in page
