"""Rendering a report's sections: CSV, Markdown, one self-contained HTML page (figures embedded as data URIs, no
network, no script), the terminal summary, and writing it all into the report folder without touching files the
report did not write.

Text from the logs (model labels, task names, difficulty strings, file names in notes) is outside text: it reaches
the terminal through ``printable``, Markdown through ``markdown_cell``, CSV through ``csv_cell`` and HTML through
``printable`` and ``html.escape`` (``core.text``)."""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Callable
from html import escape
from pathlib import Path

import pandas as pd

from .. import __version__
from ..core.files import check_owned_folder, write_owned_folder
from ..core.text import csv_cell, markdown_cell, printable

MANIFEST = ".lurch-report.json"
LONG_TABLE = 40  # rows beyond which an HTML table is folded into <details>
# The tables a reader needs first are shown open; every other one is folded into <details> (its CSV is beside it)
OPEN_TABLES = frozenset({"headline", "summary_models", "negative_controls", "length_onset", "glm_fits",
                         "implicit_hop_not_found", "systems_oracle_gap", "systems_score_tokens", "systems_wins",
                         "discovery_pairs"})
# Columns that hold length bins in tokens: whole numbers, also in their intervals
BIN_COLUMNS = frozenset({"drift_onset", "effective_length"})


def _cell(value: object, whole: bool = False) -> str:
    """One number as shown: "" for missing, "none" for +inf (no onset in that share of resamples), whole numbers
    without decimals when ``whole`` (a count, a bin, a distance d) or at 1,000 and above, else three decimals."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, float)):
        value = float(value)
        if math.isinf(value):
            return "none" if value > 0 else "-inf"
        return f"{value:.0f}" if value.is_integer() and (whole or abs(value) >= 1000) else f"{value:.3f}"
    return str(value)


def _whole(column: pd.Series) -> bool:
    """A numeric column every value of which is a whole number (a count, a bin, d): shown without decimals."""
    if not pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
        return False
    values = column.dropna().to_numpy(dtype=float)
    values = values[~(values == float("inf"))]
    return bool(len(values)) and bool((values == values.round()).all())


def _interval_cell(value: object, low: object, high: object, whole: bool) -> str:
    """``value [low, high]``; just ``value`` when there is no interval or it says nothing more (a missing value
    whose interval is [none, none] reads "none" once)."""
    shown, lo, hi = _cell(value, whole), _cell(low, whole), _cell(high, whole)
    if not lo and not hi:
        return shown
    if not shown and lo == hi:
        return lo
    return f"{shown or 'none'} [{lo}, {hi}]"


def _h(text: object) -> str:
    """Outside text as inert HTML: control characters shown as escapes, markup escaped."""
    return escape(printable(text))


def _text_columns(table: pd.DataFrame) -> set[str]:
    """Columns holding text (model labels, task names, difficulty strings), not numbers."""
    return {c for c in table.columns if not pd.api.types.is_numeric_dtype(table[c]) and f"{c}_lo" not in table}


def _display(table: pd.DataFrame, text: Callable[[str], str] = printable) -> pd.DataFrame:
    """CI columns folded into their metric: ``0.812 [0.750, 0.870]``; text cells passed through ``text``."""
    texts = _text_columns(table)
    shown = {}
    for column in table.columns:
        if column.endswith(("_lo", "_hi")) and column[:-3] in table.columns:
            continue
        if f"{column}_lo" in table.columns and f"{column}_hi" in table.columns:
            whole = column in BIN_COLUMNS
            shown[column] = [text(v) if isinstance(v, str) else _interval_cell(v, lo, hi, whole)
                             for v, lo, hi in zip(table[column], table[f"{column}_lo"], table[f"{column}_hi"],
                                                  strict=True)]
        else:
            whole = _whole(table[column])
            shown[column] = [text(_cell(v)) if column in texts else _cell(v, whole) for v in table[column]]
    return pd.DataFrame(shown, columns=list(shown))


def markdown_table(table: pd.DataFrame, text: Callable[[str], str] = printable) -> str:
    """A Markdown table; ``text`` renders text cells (``printable`` for a terminal, ``markdown_cell`` for a file)."""
    if table.empty:
        return "(none)"
    shown = _display(table, text)
    lines = ["| " + " | ".join(shown.columns) + " |", "|" + "---|" * len(shown.columns)]
    lines += ["| " + " | ".join(row) + " |" for row in shown.itertuples(index=False, name=None)]
    return "\n".join(lines)


def render_markdown(sections, notes: tuple[str, ...], headlines: tuple[str, ...] = ()) -> str:
    parts = ["# lurch report", ""]
    parts += [f"- headline: {markdown_cell(line)}" for line in headlines]
    parts += [f"- note: {markdown_cell(note)}" for note in notes]
    for section in sections:
        parts += ["", f"## {section.title}", "", section.intro]
        if section.warnings:
            parts += ["", *(f"- **warning**: {markdown_cell(warning)}" for warning in section.warnings)]
        for block in section.blocks:
            tag = f" ({block.tag})" if block.tag else ""
            parts += ["", f"### {markdown_cell(block.title)}{tag}", ""]
            parts += [f"- {markdown_cell(line)}" for line in block.lines]
        parts += [f"- note: {markdown_cell(note)}" for note in section.notes]
        for name, table in section.tables:
            parts += ["", f"### {name}", "", markdown_table(table, markdown_cell)]
        for figure in section.figures:
            parts += ["", f"![{markdown_cell(figure.caption)}](figures/{figure.name}.png)"]
            if figure.warning:
                parts += ["", f"- **warning**: {markdown_cell(figure.warning)}"]
    return "\n".join(parts) + "\n"


def short_summary(sections) -> str:
    """The per-model table only: what a terminal should show."""
    for section in sections:
        for name, table in section.tables:
            if name == "summary_models":
                return markdown_table(table[table["family"] == "all"].drop(columns=["family"]))
    return ""


_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #1d1d1f; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ddd; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; margin: .6em 0 1.2em; font-size: 12.5px; }
th, td { border: 1px solid #ddd; padding: 3px 7px; text-align: right; }
th { background: #f4f4f6; } td:first-child, th:first-child, td.t { text-align: left; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { color: #555; font-size: 12.5px; } .note { color: #8a5300; margin: .2em 0; } nav a { margin-right: 1em; }
details summary { cursor: pointer; color: #0b5cad; } details { margin: .3em 0; }
.warn { color: #8a1c00; background: #fff3ee; border-left: 4px solid #d9480f; padding: .3em .7em; margin: .5em 0; }
figcaption .warn { display: block; margin-top: .3em; }
.findings { display: grid; grid-template-columns: repeat(auto-fit, minmax(330px, 1fr)); gap: .8em; }
.finding { border: 1px solid #ddd; border-radius: 6px; padding: .5em 1em; }
.finding h3 { margin: .2em 0 .3em; font-size: 1.05em; } .finding ul { margin: 0; padding-left: 1.2em; }
.tag { font-size: 11px; font-weight: normal; background: #eee; border-radius: 3px; padding: 1px 6px;
       margin-left: .5em; color: #444; }
td.empty { color: #888; text-align: center; } .legend { color: #666; font-size: 12px; margin: -.8em 0 .6em; }
"""


def _html_table(name: str, table: pd.DataFrame) -> str:
    if table.empty:
        return f"<p><code>{escape(name)}</code>: no rows.</p>"
    shown = _display(table)
    head = "".join(f"<th>{_h(c)}</th>" for c in shown.columns)
    text = [c in _text_columns(table) for c in shown.columns]
    body = "".join("<tr>" + "".join(_html_cell(v, is_text) for v, is_text in zip(row, text, strict=True)) + "</tr>"
                   for row in shown.itertuples(index=False, name=None))
    legend = (f'<p class="legend">{EMPTY_MARK} {EMPTY_HELP}</p>'
              if any(v == "" for row in shown.itertuples(index=False, name=None) for v in row) else "")
    html = (f'<table id="table-{escape(name)}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{legend}'
            f'<p><a href="{escape(name)}.csv">{escape(name)}.csv</a></p>')
    if len(shown) > LONG_TABLE or name not in OPEN_TABLES:
        return f"<details><summary>table {escape(name)} ({len(shown)} rows)</summary>{html}</details>"
    return f"<h3>{escape(name)}</h3>{html}"


EMPTY_MARK = "—"
EMPTY_HELP = "no value: this model has no docs for that column (a family or bin it did not evaluate, or skipped)"


def _html_cell(value: str, is_text: bool) -> str:
    """A table cell; an empty one shows a dash that says why it is empty (on hover and in the line below)."""
    if value == "":
        return f'<td class="empty" title="{escape(EMPTY_HELP)}">{EMPTY_MARK}</td>'
    return f'<td class="t">{escape(value)}</td>' if is_text else f"<td>{escape(value)}</td>"


def _html_block(block) -> str:
    tag = f'<span class="tag">{_h(block.tag)}</span>' if block.tag else ""
    lines = "".join(f"<li>{_h(line)}</li>" for line in block.lines)
    return f'<div class="finding"><h3>{_h(block.title)}{tag}</h3><ul>{lines}</ul></div>'


def render_html(sections, notes: tuple[str, ...], options) -> str:
    stamp = json.dumps({"reps": options.reps, "seed": options.seed, "onset_margin": options.onset_margin,
                        "effective_fraction": options.effective_fraction})
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             "<title>lurch report</title>", f"<style>{_STYLE}</style></head><body>",
             "<h1>lurch report</h1>",
             f"<p>lurch-tasks {escape(__version__)}; options {escape(stamp)}.</p>",
             "<nav>" + "".join(f'<a href="#{s.key}">{escape(s.title)}</a>' for s in sections) + "</nav>"]
    parts += [f'<p class="note">note: {_h(note)}</p>' for note in notes]
    for section in sections:
        parts.append(f'<section id="{section.key}"><h2>{_h(section.title)}</h2><p>{_h(section.intro)}</p>')
        parts += [f'<p class="warn">warning: {_h(warning)}</p>' for warning in section.warnings]
        if section.blocks:
            parts.append('<div class="findings">' + "".join(_html_block(b) for b in section.blocks) + "</div>")
        parts += [f'<p class="note">note: {_h(note)}</p>' for note in section.notes]
        for figure in section.figures:
            data = base64.b64encode(figure.png).decode("ascii")
            warning = f'<span class="warn">warning: {_h(figure.warning)}</span>' if figure.warning else ""
            parts.append(f'<figure><img src="data:image/png;base64,{data}" alt="{_h(figure.caption)}">'
                         f"<figcaption>{_h(figure.caption)}{warning}</figcaption></figure>")
        parts += [_html_table(name, table) for name, table in section.tables]
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _outputs(sections, markdown: str, html: str) -> dict[str, bytes]:
    files: dict[str, bytes] = {"summary.md": markdown.encode("utf-8"), "report.html": html.encode("utf-8")}
    for section in sections:
        for name, table in section.tables:
            files[f"{name}.csv"] = csv_table(table).to_csv(index=False).encode("utf-8")
        for figure in section.figures:
            files[f"figures/{figure.name}.png"] = figure.png
    return files


def csv_table(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with every text cell made a safe CSV cell (no formula prefix, no control character)."""
    texts = _text_columns(table)
    return table.apply(lambda column: column.map(csv_cell) if column.name in texts else column)


def check_out_folder(out: Path, overwrite: bool) -> None:
    """A report goes into a new or empty folder, or (with ``overwrite``) one that ``lurch report`` wrote."""
    check_owned_folder(out, overwrite, MANIFEST, "lurch report")


def write_files(out: Path, sections, markdown: str, html: str) -> None:
    """The report's files (``core.files.write_owned_folder``: one rename for a new folder; in an old report folder
    only the report's own files are replaced or removed)."""
    write_owned_folder(out, _outputs(sections, markdown, html), MANIFEST, "lurch report", __version__)
