"""A static leaderboard page: one self-contained HTML document whose tables sort when a header is clicked.

``render_index`` writes every table with its cells already formatted (floats to 3 decimals, a confidence interval
as a small second line ``0.750–0.870`` under its point value, ``=2`` for a tied rank) and the raw value each cell sorts
by in its ``data-sort`` attribute, so the small inline script never parses what it displays. No external asset, no
network, no framework: the page opens the same from a file, a static host or an archive.

No cell is silently blank: an empty value shows its column's marker (``—`` "not evaluated" unless the column says
otherwise, e.g. ``none`` for "no drift onset within the tested lengths") with the meaning in its ``title``, and a legend
line under the table lists every marker the table uses. Wide tables fit a 1,400-px window: headers wrap (at
underscores too), columns may be grouped under a shared header (``Column.group``), and leading ``sticky`` columns
(rank, model) stay in view when a narrower window scrolls the table sideways.

Sorting: the first click on a column orders it best first (descending when higher is better, ascending when lower
is better, when the column has no direction and for text); another click on the same column reverses it. Numbers
compare as numbers, text with ``localeCompare``; empty cells go last in both directions. ``aria-sort`` tells
assistive technology which column is sorted and how.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

KINDS = ("text", "number", "rank")
DECIMALS = 3
CI_DECIMALS = 2  # a CI line is context for the point value (ranks use 3 decimals), and 2 keep a column narrow
NOT_EVALUATED = "\u2014"  # an em dash
NOT_EVALUATED_HELP = "not evaluated"


@dataclass(frozen=True)
class Column:
    name: str  # the key in the row dicts
    label: str
    kind: str  # "text" | "number" | "rank"
    higher_is_better: bool | None
    help: str = ""  # shown as a tooltip (title attribute)
    empty: str = NOT_EVALUATED  # what an empty cell shows: never a blank that could mean "none" or "missing"
    empty_help: str = NOT_EVALUATED_HELP  # what that marker means (the cell's title and the legend line)
    group: str = ""  # a shared header above consecutive columns with the same group
    sticky: bool = False  # stays in view when the table scrolls sideways (leading columns only)
    width: float = 0.0  # a fixed width in rem (0: as wide as the content); needed by a sticky column with one after it
    open_bound: str = ""  # shown for a missing CI bound when the point is there (e.g. "none": no onset in a resample)
    clip: bool = False  # long text (a revision hash) cut to the column with an ellipsis; the full text in its title
    wide: bool = False  # prose (a reason, a task list): at least a readable width instead of a word per line

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"column {self.name!r}: kind must be one of {KINDS}, not {self.kind!r}")
        if not self.empty or not self.empty_help:
            raise ValueError(f"column {self.name!r}: an empty cell needs a marker and its meaning")


@dataclass(frozen=True)
class LeaderboardTable:
    key: str  # the table's HTML id is "table-{key}"; its section's is the key itself
    title: str
    columns: tuple[Column, ...]
    rows: tuple[dict, ...]

    def __post_init__(self) -> None:
        # An HTML id must be non-empty and contain no whitespace, or the anchors and selectors break.
        if not self.key or any(ch.isspace() for ch in self.key):
            raise ValueError(f"table key {self.key!r} is not a valid HTML id (empty or with whitespace)")
        sticky = [column.sticky for column in self.columns]
        count = sum(sticky)
        if sticky[:count] != [True] * count:
            raise ValueError(f"table {self.key!r}: sticky columns must lead the table")
        if any(column.width <= 0 for column in self.columns[:max(count - 1, 0)]):
            raise ValueError(f"table {self.key!r}: a sticky column followed by another needs a width (rem)")

    def left(self, index: int) -> float:
        """A sticky column's offset from the table's left edge (rem): the widths of the sticky columns before it."""
        return sum(column.width for column in self.columns[:index])


Value = str | int | float | None


def is_empty(value: object) -> bool:
    """None and NaN show as an empty cell (and sort last)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def format_value(value: Value, decimals: int = DECIMALS) -> str:
    """How a single value reads: floats to 3 decimals (whole ones of 1,000 or more, such as token lengths, without),
    ints as ints, empty for None/NaN."""
    if is_empty(value):
        return ""
    if isinstance(value, float):
        if value.is_integer() and abs(value) >= 1000:
            return f"{value:.0f}"
        text = f"{value:.{decimals}f}"
        return text[1:] if text.startswith("-") and not text.strip("-0.") else text  # no "-0.00" for -0.001
    return str(value)


def sort_key(value: Value, kind: str) -> str:
    """The data-sort attribute: the raw point value, in a form JavaScript's Number() reads; "" for empty."""
    if kind == "text":
        return format_value(value)
    number = _as_number(value)
    if number is None:
        return ""
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"  # Number("inf") would be NaN
    return str(int(value)) if isinstance(value, int) else repr(number)  # repr: full precision, not the 3 shown


def _as_number(value: Value) -> float | None:
    """A float for sorting, or None for empty, NaN and a string that is not a number (all sort last)."""
    if is_empty(value):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return None if math.isnan(number) else number


def cell_text(row: dict, column: Column) -> str:
    """The displayed value of one cell ('=' before a tied rank), or the column's marker when it is empty."""
    text = format_value(row.get(column.name))
    if not text:
        return column.empty
    if column.kind == "rank" and row.get("tie"):
        text = f"={text}"
    return text


def ci_text(row: dict, column: Column) -> str:
    """A number's 95% CI, ``lo–hi`` to 2 decimals, or "" (a text cell, an empty point, or a missing bound and no
    ``open_bound``)."""
    if column.kind == "text" or is_empty(row.get(column.name)):
        return ""
    bounds = [format_value(row.get(f"{column.name}_{end}"), CI_DECIMALS) or column.open_bound for end in ("lo", "hi")]
    return "\u2013".join(bounds) if all(bounds) else ""


def first_direction(column: Column) -> str:
    """The order of a column's first click: best first; ascending when there is no 'best'."""
    if column.kind != "text" and column.higher_is_better:
        return "descending"
    return "ascending"


def wrappable(label: str) -> str:
    """An escaped label that may break after an underscore (``graph_<wbr>reconstruction``), so headers wrap."""
    return "_<wbr>".join(escape(part) for part in label.split("_"))


def _place(table: LeaderboardTable, index: int, classes: list[str]) -> str:
    """The class and style attributes that pin a sticky column and fix a column's width."""
    column = table.columns[index]
    style = []
    if column.sticky:
        last = index + 1 == len(table.columns) or not table.columns[index + 1].sticky
        classes = [*classes, "sticky", *(["edge"] if last else [])]  # the edge draws a line the others scroll under
        style.append(f"left:{table.left(index):g}rem")
    if column.width:
        style.append(f"width:{column.width:g}rem;min-width:{column.width:g}rem;max-width:{column.width:g}rem")
    css = f' class="{" ".join(classes)}"' if classes else ""
    return css + (f' style="{";".join(style)}"' if style else "")


def render_header(table: LeaderboardTable, index: int) -> str:
    column = table.columns[index]
    title = f' title="{escape(column.help)}"' if column.help else ""
    return (f'<th scope="col"{_place(table, index, [])} data-column="{escape(column.name)}" '
            f'data-kind="{escape(column.kind)}" data-first="{first_direction(column)}"{title}>'
            f'<button type="button">{wrappable(column.label)}</button></th>')


def render_groups(table: LeaderboardTable) -> str:
    """The row of shared headers above the sortable one ("" when no column has a group): one cell per run of
    columns with the same group, and one per sticky column so it stays pinned with its column."""
    if not any(column.group for column in table.columns):
        return ""
    cells: list[str] = []
    index = 0
    while index < len(table.columns):
        column = table.columns[index]
        span = 1
        while (not column.sticky and index + span < len(table.columns)
               and not table.columns[index + span].sticky and table.columns[index + span].group == column.group):
            span += 1
        colspan = f' colspan="{span}"' if span > 1 else ""
        scope = ' scope="colgroup"' if column.group else ""
        cells.append(f'<th{scope}{colspan}{_place(table, index, [])}>{wrappable(column.group)}</th>')
        index += span
    return f'<tr class="groups">{"".join(cells)}</tr>'


def render_cell(table: LeaderboardTable, row: dict, index: int) -> str:
    column = table.columns[index]
    classes = [] if column.kind == "text" else ["num"]
    sort = escape(sort_key(row.get(column.name), column.kind))
    if is_empty(row.get(column.name)):
        place = _place(table, index, [*classes, "empty"])
        return f'<td{place} title="{escape(column.empty_help)}" data-sort="{sort}">{escape(column.empty)}</td>'
    ci = ci_text(row, column)
    ci_html = f' <span class="ci">{escape(ci)}</span>' if ci else ""
    text = escape(cell_text(row, column))
    full = f' title="{text}"' if column.clip else ""  # the whole text, however much the column shows
    classes += ["clip"] * column.clip + ["wide"] * column.wide
    return f'<td{_place(table, index, classes)}{full} data-sort="{sort}">{text}{ci_html}</td>'


def legend(table: LeaderboardTable) -> str:
    """One line under the table naming every empty-cell marker it shows and what it means ("" if none)."""
    used: dict[tuple[str, str], None] = {}
    for row in table.rows:
        for column in table.columns:
            if is_empty(row.get(column.name)):
                used[(column.empty, column.empty_help)] = None
    if not used:
        return ""
    parts = "; ".join(f"<b>{escape(marker)}</b> {escape(meaning)}" for marker, meaning in used)
    return f'<p class="legend">Empty cells: {parts}.</p>\n'


def render_table(table: LeaderboardTable) -> str:
    key = escape(table.key)
    head = "".join(render_header(table, index) for index in range(len(table.columns)))
    body = "\n".join("<tr>" + "".join(render_cell(table, row, index) for index in range(len(table.columns)))
                     + "</tr>" for row in table.rows)
    return (f'<section id="{key}">\n<h2>{escape(table.title)}</h2>\n<div class="scroll">\n'
            f'<table class="leaderboard" id="table-{key}">\n<thead>{render_groups(table)}<tr>{head}</tr></thead>\n'
            f"<tbody>\n{body}\n</tbody>\n</table>\n</div>\n{legend(table)}</section>")


def render_intro(intro: str) -> str:
    """Blank lines separate paragraphs."""
    paragraphs = [part.strip() for part in intro.split("\n\n") if part.strip()]
    return "\n".join(f"<p>{escape(part)}</p>" for part in paragraphs)


# The page may use a 1,400-px window's full width for the tables; prose keeps a readable measure. Headers wrap,
# cells do not (except long text such as a revision hash); a CI is a small second line under its value.
CSS = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 90rem; padding: 0 1rem; color: #1d1d1f; }
p { max-width: 72rem; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
.scroll { overflow-x: auto; }
table { border-collapse: separate; border-spacing: 0; width: 100%; font-size: 13.5px; }
th, td { padding: .3rem .35rem; border-bottom: 1px solid #ddd; text-align: left; white-space: nowrap; background: #fff;
  box-sizing: border-box; }
th { white-space: normal; vertical-align: bottom; font-size: 12.5px; line-height: 1.25; }
td:not(.num) { white-space: normal; overflow-wrap: break-word; max-width: 12rem; }
td.clip { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; max-width: 5.5rem; }
td.wide { min-width: 14rem; max-width: 24rem; }
td.num, th[data-kind="number"], th[data-kind="rank"] { text-align: right; }
td.num { font-variant-numeric: tabular-nums; }
td.empty { color: #6b6b70; }
.ci { display: block; font-size: 11px; color: #5f5f66; }
th { background: #f4f4f6; }
tr.groups th { text-align: center; font-weight: 600; border-bottom: 2px solid #c9c9cf; }
tr.groups th:empty { border-bottom-color: transparent; }
.sticky { position: sticky; z-index: 1; }
.sticky.edge { box-shadow: 1px 0 0 #c9c9cf; }
.legend { font-size: 13px; color: #4a4a50; margin-top: .4rem; }
th button { font: inherit; font-weight: 600; border: 0; background: none; padding: 0; cursor: pointer; color: inherit; }
th button:focus-visible { outline: 2px solid #2b6cb0; }
th[aria-sort="ascending"] button::after { content: " \\25B2"; }
th[aria-sort="descending"] button::after { content: " \\25BC"; }
th[title] button { text-decoration: underline dotted; }
tbody tr:nth-child(even) td { background: #fafafa; }
"""

# Stable sort (Array.prototype.sort is stable), so ties keep their previous order.
SCRIPT = """
(() => {
  function sortBy(table, heads, col) {
    const th = heads[col];
    const now = th.getAttribute("aria-sort");
    const dir = now === "ascending" ? "descending" : now === "descending" ? "ascending" : th.dataset.first;
    const numeric = th.dataset.kind !== "text";
    const sign = dir === "ascending" ? 1 : -1;
    const body = table.tBodies[0];
    const rows = [...body.rows];
    rows.sort((a, b) => {
      const x = a.cells[col].dataset.sort, y = b.cells[col].dataset.sort;
      if (x === "" || y === "") return (x === "") - (y === "");  // empty last, whichever the direction
      const c = numeric ? Number(x) - Number(y) : x.localeCompare(y);
      return sign * (c || 0);  // Infinity - Infinity is NaN: equal
    });
    for (const h of heads) h.removeAttribute("aria-sort");
    th.setAttribute("aria-sort", dir);
    body.append(...rows);
  }
  for (const table of document.querySelectorAll("table.leaderboard")) {
    const heads = [...table.tHead.rows[table.tHead.rows.length - 1].cells];  // below any row of group headers
    heads.forEach((th, col) => th.querySelector("button").addEventListener("click", () => sortBy(table, heads, col)));
  }
})();
"""


def render_index(title: str, intro: str, tables: list[LeaderboardTable]) -> str:
    """The whole page: title, intro paragraphs, then each table in order."""
    keys = [table.key for table in tables]
    if len(set(keys)) != len(keys):
        raise ValueError(f"table keys must be unique (they are HTML ids): {keys}")
    sections = "\n".join(render_table(table) for table in tables)
    # The empty data: icon stops the browser asking for /favicon.ico.
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<link rel="icon" href="data:,">\n<title>{escape(title)}</title>\n<style>{CSS}</style>\n</head>\n'
            f"<body>\n<h1>{escape(title)}</h1>\n{render_intro(intro)}\n{sections}\n<script>{SCRIPT}</script>\n"
            f"</body>\n</html>\n")
