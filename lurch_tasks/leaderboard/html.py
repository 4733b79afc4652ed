"""A static leaderboard page: one self-contained HTML document whose tables sort when a header is clicked.

``render_index`` writes every table with its cells already formatted (floats to 3 decimals, ``0.812 [0.750, 0.870]``
when a confidence interval is given, ``=2`` for a tied rank) and the raw value each cell sorts by in its
``data-sort`` attribute, so the small inline script never parses what it displays. No external asset, no network,
no framework: the page opens the same from a file, a static host or an archive.

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


@dataclass(frozen=True)
class Column:
    name: str  # the key in the row dicts
    label: str
    kind: str  # "text" | "number" | "rank"
    higher_is_better: bool | None
    help: str = ""  # shown as a tooltip (title attribute)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"column {self.name!r}: kind must be one of {KINDS}, not {self.kind!r}")


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


Value = str | int | float | None


def is_empty(value: object) -> bool:
    """None and NaN show as an empty cell (and sort last)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def format_value(value: Value) -> str:
    """How a single value reads: floats to 3 decimals (whole ones of 1,000 or more, such as token lengths, without),
    ints as ints, empty for None/NaN."""
    if is_empty(value):
        return ""
    if isinstance(value, float):
        if value.is_integer() and abs(value) >= 1000:
            return f"{value:.0f}"
        return f"{value:.{DECIMALS}f}"
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
    """The displayed text of one cell: CI after a number, '=' before a tied rank."""
    value = row.get(column.name)
    text = format_value(value)
    if not text or column.kind == "text":
        return text
    lo, hi = row.get(f"{column.name}_lo"), row.get(f"{column.name}_hi")
    if not is_empty(lo) and not is_empty(hi):
        text = f"{text} [{format_value(lo)}, {format_value(hi)}]"
    if column.kind == "rank" and row.get("tie"):
        text = f"={text}"
    return text


def first_direction(column: Column) -> str:
    """The order of a column's first click: best first; ascending when there is no 'best'."""
    if column.kind != "text" and column.higher_is_better:
        return "descending"
    return "ascending"


def render_header(column: Column) -> str:
    title = f' title="{escape(column.help)}"' if column.help else ""
    return (f'<th scope="col" data-column="{escape(column.name)}" data-kind="{escape(column.kind)}" '
            f'data-first="{first_direction(column)}"{title}>'
            f'<button type="button">{escape(column.label)}</button></th>')


def render_cell(row: dict, column: Column) -> str:
    css = "" if column.kind == "text" else ' class="num"'
    sort = escape(sort_key(row.get(column.name), column.kind))
    return f'<td{css} data-sort="{sort}">{escape(cell_text(row, column))}</td>'


def render_table(table: LeaderboardTable) -> str:
    key = escape(table.key)
    head = "".join(render_header(column) for column in table.columns)
    body = "\n".join("<tr>" + "".join(render_cell(row, column) for column in table.columns) + "</tr>"
                     for row in table.rows)
    return (f'<section id="{key}">\n<h2>{escape(table.title)}</h2>\n<div class="scroll">\n'
            f'<table class="leaderboard" id="table-{key}">\n<thead><tr>{head}</tr></thead>\n'
            f"<tbody>\n{body}\n</tbody>\n</table>\n</div>\n</section>")


def render_intro(intro: str) -> str:
    """Blank lines separate paragraphs."""
    paragraphs = [part.strip() for part in intro.split("\n\n") if part.strip()]
    return "\n".join(f"<p>{escape(part)}</p>" for part in paragraphs)


CSS = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 72rem; padding: 0 1rem; color: #1d1d1f; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { padding: .3rem .6rem; border-bottom: 1px solid #ddd; text-align: left; white-space: nowrap; }
td.num, th[data-kind="number"], th[data-kind="rank"] { text-align: right; }
td.num { font-variant-numeric: tabular-nums; }
th { background: #f4f4f6; }
th button { font: inherit; font-weight: 600; border: 0; background: none; padding: 0; cursor: pointer; color: inherit; }
th button:focus-visible { outline: 2px solid #2b6cb0; }
th[aria-sort="ascending"] button::after { content: " \\25B2"; }
th[aria-sort="descending"] button::after { content: " \\25BC"; }
th[title] button { text-decoration: underline dotted; }
tbody tr:nth-child(even) { background: #fafafa; }
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
    const heads = [...table.tHead.rows[0].cells];
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
