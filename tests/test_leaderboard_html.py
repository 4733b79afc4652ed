"""The static leaderboard page (lurch_tasks.leaderboard.html): the rendered cells (escaping, CIs, empty cells, tied
ranks, the data-sort values) and, in headless Chromium, the sorting a reader gets by clicking the headers: best first
on the first click, reversed on the second, numbers as numbers, text alphabetically, empty cells always last, and
not one console error. Without Chromium the browser tests skip, except under CI, where they fail (the rule of
test_browser_helper.py)."""

from __future__ import annotations

import math
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from browser import check_page, leftover_browser_processes, open_page, require_browser

from lurch_tasks.leaderboard.html import (
    NOT_EVALUATED,
    NOT_EVALUATED_HELP,
    Column,
    LeaderboardTable,
    cell_text,
    ci_text,
    render_index,
    sort_key,
)

WIDTH, HEIGHT = 1000, 700

MODEL_COLUMNS = (
    Column("rank", "#", "rank", higher_is_better=False),
    Column("model", "Model", "text", higher_is_better=None),
    Column("score", "Score", "number", higher_is_better=True, help="mean score, 95% bootstrap CI"),
    Column("memory_drift", "Memory drift", "number", higher_is_better=False, help="lower is better"),
)
# Scores and drifts are chosen so that sorting them as strings would give another order (12.0 < 1.5 < 0.3 as text).
MODEL_ROWS = (
    {"rank": 1, "model": "gamma", "score": 0.9, "score_lo": 0.85, "score_hi": 0.95, "memory_drift": 0.3},
    {"rank": 2, "tie": True, "model": "alpha", "score": 0.812, "score_lo": 0.75, "score_hi": 0.87,
     "memory_drift": 0.1},
    {"rank": 2, "tie": True, "model": "Beta", "score": 0.8, "score_lo": 0.7, "score_hi": 0.9, "memory_drift": 12.0},
    {"rank": 4, "model": "epsilon", "score": 0.05, "score_lo": 0.0, "score_hi": 0.1, "memory_drift": 1.5},
    {"rank": None, "model": "delta", "score": None, "memory_drift": float("nan")},  # not scored: empty cells
)
TASK_COLUMNS = (
    Column("task", "Task", "text", higher_is_better=None),
    Column("notes", "Notes", "text", higher_is_better=None),
    Column("docs", "Docs", "number", higher_is_better=None),
)
TASK_ROWS = (
    {"task": "recon", "notes": "zeta", "docs": 100},
    {"task": "graph", "notes": None, "docs": 2},
    {"task": "find_origin", "notes": "eta", "docs": None},
    {"task": "implicit_hop", "notes": "alpha", "docs": 10},
)


def models_table(rows: tuple[dict, ...] = MODEL_ROWS) -> LeaderboardTable:
    return LeaderboardTable("models", "Models", MODEL_COLUMNS, rows)


def page_html() -> str:
    tables = [models_table(), LeaderboardTable("tasks", "Tasks", TASK_COLUMNS, TASK_ROWS)]
    return render_index("Lurch leaderboard", "Two tables.\n\nClick a header to sort.", tables)


class Tags(HTMLParser):
    """Every start tag with its attributes, in document order."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def tags(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Tags()
    parser.feed(html)
    return parser.tags


def cells(html: str) -> list[tuple[str, str]]:
    """(data-sort, text) of every body cell, its CI line left out."""
    return [(m.group(1), m.group(2))
            for m in re.finditer(r'<td[^>]* data-sort="([^"]*)">([^<]*)(?:<span class="ci">[^<]*</span>)?</td>', html)]


# --- rendering --------------------------------------------------------------------------------------------------

def test_page_is_one_self_contained_document():
    html = page_html()
    assert html.startswith("<!DOCTYPE html>")
    assert html.count("<script>") == 1 and html.count("<style>") == 1
    assert "http://" not in html and "https://" not in html and " src=" not in html
    found = tags(html)
    assert [attrs["id"] for tag, attrs in found if tag == "table"] == ["table-models", "table-tasks"]
    heads = [attrs for tag, attrs in found if tag == "th"]
    assert len(heads) == len(MODEL_COLUMNS) + len(TASK_COLUMNS)
    assert [attrs for tag, attrs in found if tag == "button"] == [{"type": "button"}] * len(heads)
    assert all("aria-sort" not in attrs for attrs in heads)  # nothing is sorted until a click
    assert "<p>Two tables.</p>\n<p>Click a header to sort.</p>" in html


def test_first_click_direction_and_tooltips():
    heads = {attrs["data-column"]: attrs for tag, attrs in tags(page_html()) if tag == "th"}
    first = {name: attrs["data-first"] for name, attrs in heads.items()}
    assert first == {"rank": "ascending", "model": "ascending", "score": "descending",
                     "memory_drift": "ascending", "task": "ascending", "notes": "ascending", "docs": "ascending"}
    assert heads["score"]["title"] == "mean score, 95% bootstrap CI"
    assert "title" not in heads["model"]


def test_text_is_escaped():
    evil = '<script>alert("x")</script> & co'
    columns = (Column("model", evil, "text", None, help='"quoted" <help>'),)
    html = render_index(evil, evil, [LeaderboardTable('k"1', evil, columns, ({"model": evil},))])
    assert "<script>alert" not in html
    escaped = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; co"
    assert html.count(escaped) >= 5  # title, h1, intro, h2, header label, the cell and its data-sort
    assert 'id="table-k&quot;1"' in html and 'title="&quot;quoted&quot; &lt;help&gt;"' in html


def test_ci_is_shown_and_the_point_value_sorts():
    row = {"score": 0.812, "score_lo": 0.75, "score_hi": 0.87}
    score = MODEL_COLUMNS[2]
    assert (cell_text(row, score), ci_text(row, score)) == ("0.812", "0.75\u20130.87")  # the CI: a small second line
    assert '<td class="num" data-sort="0.812">0.812 <span class="ci">0.75\u20130.87</span></td>' in page_html()
    # One bound missing (or empty): the point alone.
    assert ci_text({"score": 0.812, "score_lo": 0.75}, score) == ""
    assert ci_text({"score": 0.812, "score_lo": 0.75, "score_hi": None}, score) == ""
    # ... unless the column says what a missing bound means (drift onset: none in some resamples).
    onset = Column("drift_onset", "drift onset", "number", True, empty="none", empty_help="no onset",
                   open_bound="none")
    assert ci_text({"drift_onset": 4096.0, "drift_onset_lo": 2048.0, "drift_onset_hi": None}, onset) == \
        "2048\u2013none"
    # No point value: the column's empty marker, and no CI even with bounds.
    assert cell_text({"score": None, "score_lo": 0.1, "score_hi": 0.2}, score) == NOT_EVALUATED
    assert ci_text({"score": None, "score_lo": 0.1, "score_hi": 0.2}, score) == ""
    # A bound that rounds to zero from below is not "-0.00".
    assert ci_text({"score": 0.01, "score_lo": -0.001, "score_hi": 0.02}, score) == "0.00\u20130.02"


def test_numbers_and_empty_cells():
    number = Column("x", "x", "number", True)
    assert [cell_text({"x": value}, number) for value in (12, 12.0, 0.1234567, None, math.nan)] == \
        ["12", "12.000", "0.123", NOT_EVALUATED, NOT_EVALUATED]
    # data-sort keeps full precision (the display rounds), and something Number() reads.
    assert [sort_key(value, "number") for value in (12, 0.1234567, None, math.nan, math.inf, -math.inf, "0.5", "n/a")] \
        == ["12", "0.1234567", "", "", "Infinity", "-Infinity", "0.5", ""]
    rendered = cells(page_html())
    dash = NOT_EVALUATED
    assert rendered[16:20] == [("", dash), ("delta", "delta"), ("", dash), ("", dash)]  # the unscored model's row
    assert rendered[23:26] == [("graph", "graph"), ("", dash), ("2", "2")]  # an empty text cell
    # Every empty cell says what it means (its title), and a legend line under its table names each marker once.
    html = page_html()
    assert html.count(f'title="{NOT_EVALUATED_HELP}" data-sort="">{dash}</td>') == 5
    assert html.count(f'<p class="legend">Empty cells: <b>{dash}</b> {NOT_EVALUATED_HELP}.</p>') == 2


def test_empty_markers_and_legend_follow_the_column():
    onset = Column("onset", "drift onset", "number", True, empty="none", empty_help="no drift onset within the "
                   "tested lengths")
    table = LeaderboardTable("spans", "Spans", (MODEL_COLUMNS[1], onset),
                             ({"model": "a", "onset": 4096.0}, {"model": "b", "onset": None}))
    html = render_index("t", "", [table])
    assert '<td class="num empty" title="no drift onset within the tested lengths" data-sort="">none</td>' in html
    assert '<p class="legend">Empty cells: <b>none</b> no drift onset within the tested lengths.</p>' in html
    full = LeaderboardTable("full", "Full", (MODEL_COLUMNS[1], onset), ({"model": "a", "onset": 4096.0},))
    assert "legend" not in render_index("t", "", [full]).split("<body>")[1].split("<script>")[0]  # nothing to explain
    with pytest.raises(ValueError, match="marker"):
        Column("x", "x", "number", True, empty="")


def test_sticky_columns_groups_and_wrapping_headers():
    columns = (Column("rank", "rank", "rank", False, sticky=True, width=3.0),
               Column("model", "model", "text", None, sticky=True),
               Column("f:graph_reconstruction", "graph_reconstruction", "number", True, group="by family"),
               Column("f:recon", "recon", "number", True, group="by family"), Column("docs", "docs", "number", None))
    html = render_index("t", "", [LeaderboardTable("wide", "Wide", columns, ({"rank": 1, "model": "m"},))])
    assert '<th scope="col" class="sticky" style="left:0rem;width:3rem;min-width:3rem;max-width:3rem"' in html
    assert '<td class="sticky edge" style="left:3rem" data-sort="m">m</td>' in html
    assert '<tr class="groups"><th class="sticky" style="left:0rem;width:3rem;min-width:3rem;max-width:3rem">' \
           '</th><th class="sticky edge" style="left:3rem"></th><th scope="colgroup" colspan="2">by family</th>' \
           '<th></th></tr>' in html
    assert "graph_<wbr>reconstruction" in html  # a long name may wrap at its underscore
    with pytest.raises(ValueError, match="lead"):
        LeaderboardTable("x", "x", (columns[2], columns[0]), ())
    with pytest.raises(ValueError, match="width"):
        LeaderboardTable("x", "x", (Column("a", "a", "text", None, sticky=True), columns[1]), ())


def test_tied_ranks():
    rank = MODEL_COLUMNS[0]
    assert [cell_text(row, rank) for row in MODEL_ROWS] == ["1", "=2", "=2", "4", NOT_EVALUATED]
    assert [sort_key(row["rank"], "rank") for row in MODEL_ROWS] == ["1", "2", "2", "4", ""]
    assert cell_text({"model": "m", "tie": True}, MODEL_COLUMNS[1]) == "m"  # only ranks carry the '='


def test_bad_tables_are_refused():
    with pytest.raises(ValueError, match="kind"):
        Column("x", "x", "percent", True)
    with pytest.raises(ValueError, match="HTML id"):
        LeaderboardTable("two words", "t", MODEL_COLUMNS, ())
    with pytest.raises(ValueError, match="unique"):
        render_index("t", "", [models_table(), models_table()])


# --- in the browser ---------------------------------------------------------------------------------------------

@pytest.fixture
def browser_here():
    require_browser()
    yield
    assert leftover_browser_processes() == [], "a browser or driver process outlived its check"


def column_text(live, table: str, n: int) -> list[str]:
    return live.evaluate(f"[...document.querySelectorAll('#table-{table} tbody tr td:nth-child({n})')]"
                         ".map(td => td.textContent)")


def click(live, table: str, column: str) -> None:
    live.click(f"#table-{table} th[data-column={column}] button")


def sort_state(live, table: str) -> dict[str, str]:
    return live.evaluate(f"Object.fromEntries([...document.querySelectorAll('#table-{table} th[aria-sort]')]"
                         ".map(th => [th.dataset.column, th.getAttribute('aria-sort')]))")


def models_by(key: str, reverse: bool) -> list[str]:
    """Model names ordered by a numeric column, empty values last whichever the direction."""
    scored = [row for row in MODEL_ROWS if not (row[key] is None or math.isnan(row[key]))]
    empty = [row["model"] for row in MODEL_ROWS if row not in scored]
    return [row["model"] for row in sorted(scored, key=lambda row: row[key], reverse=reverse)] + empty


def test_page_in_the_browser(tmp_path: Path, browser_here):
    page = tmp_path / "index.html"
    page.write_text(page_html(), encoding="utf-8")
    check = check_page(page, tmp_path / "shot.png", width=WIDTH, height=HEIGHT)
    assert check.console_errors == []
    assert check.title == "Lurch leaderboard" and check.images_total == 0
    assert check.screenshot_size == (WIDTH, HEIGHT) and check.screenshot.stat().st_size > 0
    assert "0.812\n0.75\u20130.87" in check.text and "=2" in check.text


def test_clicking_headers_sorts(tmp_path: Path, browser_here):
    page = tmp_path / "index.html"
    page.write_text(page_html(), encoding="utf-8")
    with open_page(page, width=WIDTH, height=HEIGHT) as live:
        assert column_text(live, "models", 2) == ["gamma", "alpha", "Beta", "epsilon", "delta"]

        click(live, "models", "score")  # higher is better: best first
        assert column_text(live, "models", 2) == models_by("score", reverse=True)
        assert column_text(live, "models", 2) == ["gamma", "alpha", "Beta", "epsilon", "delta"]
        assert column_text(live, "models", 3)[0] == "0.900 0.85\u20130.95"
        assert sort_state(live, "models") == {"score": "descending"}

        click(live, "models", "score")  # again: reversed, the unscored model still last
        assert column_text(live, "models", 2) == models_by("score", reverse=False)
        assert column_text(live, "models", 2) == ["epsilon", "Beta", "alpha", "gamma", "delta"]
        assert sort_state(live, "models") == {"score": "ascending"}

        click(live, "models", "memory_drift")  # lower is better: ascending, as numbers (12 after 1.5)
        assert column_text(live, "models", 2) == ["alpha", "gamma", "epsilon", "Beta", "delta"]
        assert column_text(live, "models", 4) == ["0.100", "0.300", "1.500", "12.000", NOT_EVALUATED]
        assert sort_state(live, "models") == {"memory_drift": "ascending"}

        click(live, "models", "model")  # text: alphabetical (localeCompare, so case does not split it)
        assert column_text(live, "models", 2) == ["alpha", "Beta", "delta", "epsilon", "gamma"]
        click(live, "models", "model")
        assert column_text(live, "models", 2) == ["gamma", "epsilon", "delta", "Beta", "alpha"]

        click(live, "models", "rank")  # ties sort together; the stable sort keeps their last order
        assert column_text(live, "models", 1) == ["1", "=2", "=2", "4", NOT_EVALUATED]
        assert column_text(live, "models", 2) == ["gamma", "Beta", "alpha", "epsilon", "delta"]

        # The other table was not touched; its unranked number column sorts ascending first, as numbers.
        assert column_text(live, "tasks", 1) == [row["task"] for row in TASK_ROWS]
        assert sort_state(live, "tasks") == {}
        click(live, "tasks", "docs")
        assert column_text(live, "tasks", 3) == ["2", "10", "100", NOT_EVALUATED]
        click(live, "tasks", "docs")
        assert column_text(live, "tasks", 3) == ["100", "10", "2", NOT_EVALUATED]
        click(live, "tasks", "notes")  # empty text cells last too, both ways
        assert column_text(live, "tasks", 2) == ["alpha", "eta", "zeta", NOT_EVALUATED]
        click(live, "tasks", "notes")
        assert column_text(live, "tasks", 2) == ["zeta", "eta", "alpha", NOT_EVALUATED]
        assert sort_state(live, "tasks") == {"notes": "descending"}
        assert sort_state(live, "models") == {"rank": "ascending"}

        # The headers are real buttons: the keyboard sorts too.
        live.page.focus("#table-models th[data-column=score] button")
        live.page.keyboard.press("Enter")
        assert column_text(live, "models", 2) == models_by("score", reverse=True)

        assert live.console_errors == []


# --- the board's own tables at a 1,400-px window -----------------------------------------------------------------

FAMILIES = ("find_the_origin", "graph_reconstruction", "implicit_hop", "recon")
BINS = (1024, 2048, 4096, 8192, 16384, 32768)


def _board_row(model: str, revision: str, seed: str, value: float, families=FAMILIES, bins=BINS) -> dict:
    """One submission's numbers as build.py's tables hold them: every metric with a CI, negative ones included."""
    row = {"model": model, "revision": revision, "seed": seed, "coverage": "full", "docs": 5955,
           "lm_eval_model": "hf", "date": "2026-12-04"}
    for name in ("headline", *(f"headline:{family}" for family in families), "memory_drift", "score", "f1"):
        row.update({name: value, f"{name}_lo": value - 0.0123, f"{name}_hi": value + 0.0456})
    row.update({f"headline@{length}": value - 0.001 * index for index, length in enumerate(bins)})
    return row


def board_page() -> str:
    import pandas as pd

    from lurch_tasks.leaderboard.build import _html_tables, ranked, standard_key

    overall = ranked(pd.DataFrame([
        _board_row("meta-llama/Llama-3.1-70B-Instruct", "a" * 40, "private (sha256 0123456789ab)", 0.8125),
        _board_row("Qwen2.5-7B-Instruct-1M", "3f9c2e1a7b", "public", -0.0042),
        _board_row("lurch-solver", "0.1.0", "seed 12345", 1.0)]))
    partial = ranked(pd.DataFrame([{**_board_row("two-families", "r1", "public", 0.5, FAMILIES[1:3], BINS[1:4]),
                                    "group": 1, "partial_because": "misses 2 of 4 standard tasks (find_the_origin, "
                                    "recon_conflict)", "tasks": "implicit_hop_length, memory_drift_clique",
                                    "versions": "lurch-tasks 0.1.0 (graph_reconstruction 2.4.0, implicit_hop 0.6.0)"},
                                   _board_row("all-families", "r1", "public", 0.25) | {
                                       "group": 1, "partial_because": "coverage --limit 4, the standard's is full",
                                       "tasks": "find_the_origin", "versions": "lurch-tasks 0.1.0"}]))
    spans = pd.DataFrame([{"model": "m", "revision": "r1", "task": "find_the_origin", "shortest": 1024,
                           "longest": 8192, "drift_onset": None, "drift_onset_lo": None, "drift_onset_hi": None,
                           "effective_length": None, "effective_length_lo": None, "effective_length_hi": None}])
    tables = _html_tables(overall, partial, {}, spans, standard_key())
    return render_index("lurch-tasks leaderboard", "A board.", tables)


FIT_JS = """() => {
  const box = document.querySelector('#table-overall').parentElement;
  const right = box.getBoundingClientRect().right;
  const families = [...document.querySelectorAll('#table-overall th[data-column^="headline:"]')];
  return {scroll: box.scrollWidth, client: box.clientWidth, families: families.length,
          hidden: families.filter(th => th.getBoundingClientRect().right > right + 0.5).map(th => th.dataset.column)};
}"""
EMPTY_JS = """() => [...document.querySelectorAll('table.leaderboard')].map(table => ({
  id: table.id,
  blank: [...table.tBodies[0].querySelectorAll('td')].filter(td => td.textContent.trim() === '').length,
  unexplained: [...table.tBodies[0].querySelectorAll('td.empty')].filter(td => !td.title).length,
  markers: [...new Set([...table.tBodies[0].querySelectorAll('td.empty')].map(td => td.textContent))],
  legend: table.closest('section').querySelector('p.legend')?.textContent ?? ''}))"""
STICKY_JS = """() => {
  const box = document.querySelector('#table-partial').parentElement;
  box.scrollLeft = box.scrollWidth;  // to the far right: the pinned columns stay at the left edge
  const left = box.getBoundingClientRect().left;
  const at = name => document.querySelector(`#table-partial th[data-column="${name}"]`).getBoundingClientRect();
  return {scrolled: box.scrollLeft > 0, model: at('model').left - left, rank: at('rank').left - left,
          docs: at('docs').right <= box.getBoundingClientRect().right + 0.5};
}"""


def test_the_ranked_table_fits_1400px_and_every_empty_cell_is_explained(tmp_path: Path, browser_here):
    page = tmp_path / "index.html"
    page.write_text(board_page(), encoding="utf-8")
    with open_page(page, width=1400, height=900) as live:
        fit = live.evaluate(FIT_JS)
        assert fit["families"] == len(FAMILIES) and fit["hidden"] == []
        assert fit["scroll"] <= fit["client"], fit  # no sideways scrolling: every column in view
        tables = {table["id"]: table for table in live.evaluate(EMPTY_JS)}
        assert all(table["blank"] == 0 and table["unexplained"] == 0 for table in tables.values()), tables
        assert tables["table-partial"]["markers"] == [NOT_EVALUATED]  # families and bins two-families lacks
        assert "not evaluated" in tables["table-partial"]["legend"]
        assert sorted(tables["table-lengths"]["markers"]) == ["n/a", "none"]
        assert "none no drift onset within the tested lengths" in tables["table-lengths"]["legend"]
        assert "n/a no effective length" in tables["table-lengths"]["legend"]
        assert tables["table-overall"]["legend"] == ""  # nothing empty, nothing to explain
        # The partial table is wider than the window: it scrolls, with group, rank and model pinned at the left.
        sticky = live.evaluate(STICKY_JS)
        assert sticky["scrolled"] and sticky["docs"], sticky
        assert abs(sticky["model"] - 6.4 * 16) < 1 and abs(sticky["rank"] - 3.4 * 16) < 1, sticky
        assert live.console_errors == []
