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

from lurch_tasks.leaderboard.html import Column, LeaderboardTable, cell_text, render_index, sort_key

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
    """(data-sort, text) of every body cell."""
    return [(m.group(1), m.group(2)) for m in re.finditer(r'<td[^>]* data-sort="([^"]*)">([^<]*)</td>', html)]


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
    assert cell_text(row, score) == "0.812 [0.750, 0.870]"
    assert '<td class="num" data-sort="0.812">0.812 [0.750, 0.870]</td>' in page_html()
    # One bound missing (or empty): the point alone.
    assert cell_text({"score": 0.812, "score_lo": 0.75}, score) == "0.812"
    assert cell_text({"score": 0.812, "score_lo": 0.75, "score_hi": None}, score) == "0.812"
    # No point value: the cell is empty even with bounds.
    assert cell_text({"score": None, "score_lo": 0.1, "score_hi": 0.2}, score) == ""


def test_numbers_and_empty_cells():
    number = Column("x", "x", "number", True)
    assert [cell_text({"x": value}, number) for value in (12, 12.0, 0.1234567, None, math.nan)] == \
        ["12", "12.000", "0.123", "", ""]
    # data-sort keeps full precision (the display rounds), and something Number() reads.
    assert [sort_key(value, "number") for value in (12, 0.1234567, None, math.nan, math.inf, -math.inf, "0.5", "n/a")] \
        == ["12", "0.1234567", "", "", "Infinity", "-Infinity", "0.5", ""]
    rendered = cells(page_html())
    assert rendered[16:20] == [("", ""), ("delta", "delta"), ("", ""), ("", "")]  # the unscored model's row
    assert rendered[23:26] == [("graph", "graph"), ("", ""), ("2", "2")]  # an empty text cell


def test_tied_ranks():
    rank = MODEL_COLUMNS[0]
    assert [cell_text(row, rank) for row in MODEL_ROWS] == ["1", "=2", "=2", "4", ""]
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
    assert "0.812 [0.750, 0.870]" in check.text and "=2" in check.text


def test_clicking_headers_sorts(tmp_path: Path, browser_here):
    page = tmp_path / "index.html"
    page.write_text(page_html(), encoding="utf-8")
    with open_page(page, width=WIDTH, height=HEIGHT) as live:
        assert column_text(live, "models", 2) == ["gamma", "alpha", "Beta", "epsilon", "delta"]

        click(live, "models", "score")  # higher is better: best first
        assert column_text(live, "models", 2) == models_by("score", reverse=True)
        assert column_text(live, "models", 2) == ["gamma", "alpha", "Beta", "epsilon", "delta"]
        assert column_text(live, "models", 3)[0] == "0.900 [0.850, 0.950]"
        assert sort_state(live, "models") == {"score": "descending"}

        click(live, "models", "score")  # again: reversed, the unscored model still last
        assert column_text(live, "models", 2) == models_by("score", reverse=False)
        assert column_text(live, "models", 2) == ["epsilon", "Beta", "alpha", "gamma", "delta"]
        assert sort_state(live, "models") == {"score": "ascending"}

        click(live, "models", "memory_drift")  # lower is better: ascending, as numbers (12 after 1.5)
        assert column_text(live, "models", 2) == ["alpha", "gamma", "epsilon", "Beta", "delta"]
        assert column_text(live, "models", 4) == ["0.100", "0.300", "1.500", "12.000", ""]
        assert sort_state(live, "models") == {"memory_drift": "ascending"}

        click(live, "models", "model")  # text: alphabetical (localeCompare, so case does not split it)
        assert column_text(live, "models", 2) == ["alpha", "Beta", "delta", "epsilon", "gamma"]
        click(live, "models", "model")
        assert column_text(live, "models", 2) == ["gamma", "epsilon", "delta", "Beta", "alpha"]

        click(live, "models", "rank")  # ties sort together; the stable sort keeps their last order
        assert column_text(live, "models", 1) == ["1", "=2", "=2", "4", ""]
        assert column_text(live, "models", 2) == ["gamma", "Beta", "alpha", "epsilon", "delta"]

        # The other table was not touched; its unranked number column sorts ascending first, as numbers.
        assert column_text(live, "tasks", 1) == [row["task"] for row in TASK_ROWS]
        assert sort_state(live, "tasks") == {}
        click(live, "tasks", "docs")
        assert column_text(live, "tasks", 3) == ["2", "10", "100", ""]
        click(live, "tasks", "docs")
        assert column_text(live, "tasks", 3) == ["100", "10", "2", ""]
        click(live, "tasks", "notes")  # empty text cells last too, both ways
        assert column_text(live, "tasks", 2) == ["alpha", "eta", "zeta", ""]
        click(live, "tasks", "notes")
        assert column_text(live, "tasks", 2) == ["zeta", "eta", "alpha", ""]
        assert sort_state(live, "tasks") == {"notes": "descending"}
        assert sort_state(live, "models") == {"rank": "ascending"}

        # The headers are real buttons: the keyboard sorts too.
        live.page.focus("#table-models th[data-column=score] button")
        live.page.keyboard.press("Enter")
        assert column_text(live, "models", 2) == models_by("score", reverse=True)

        assert live.console_errors == []
