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


def _cell(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        if math.isinf(value):
            return "none" if value > 0 else "-inf"
        return f"{value:.0f}" if value.is_integer() and abs(value) >= 1000 else f"{value:.3f}"
    return str(value)


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
            shown[column] = [
                f"{_cell(v)} [{_cell(lo)}, {_cell(hi)}]" if _cell(lo) else _cell(v)
                for v, lo, hi in zip(table[column], table[f"{column}_lo"], table[f"{column}_hi"], strict=True)]
        else:
            shown[column] = [text(_cell(v)) if column in texts else _cell(v) for v in table[column]]
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
        parts += [f"- note: {markdown_cell(note)}" for note in section.notes]
        for name, table in section.tables:
            parts += ["", f"### {name}", "", markdown_table(table, markdown_cell)]
        for figure in section.figures:
            parts += ["", f"![{markdown_cell(figure.caption)}](figures/{figure.name}.png)"]
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
figcaption { color: #555; font-size: 12.5px; } .note { color: #8a5300; } nav a { margin-right: 1em; }
details summary { cursor: pointer; color: #0b5cad; }
"""


def _html_table(name: str, table: pd.DataFrame) -> str:
    if table.empty:
        return f"<p><code>{escape(name)}</code>: no rows.</p>"
    shown = _display(table)
    head = "".join(f"<th>{_h(c)}</th>" for c in shown.columns)
    text = [c in _text_columns(table) for c in shown.columns]
    body = "".join("<tr>" + "".join(f'<td class="t">{escape(v)}</td>' if is_text else f"<td>{escape(v)}</td>"
                                    for v, is_text in zip(row, text, strict=True)) + "</tr>"
                   for row in shown.itertuples(index=False, name=None))
    html = (f'<table id="table-{escape(name)}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
            f'<p><a href="{escape(name)}.csv">{escape(name)}.csv</a></p>')
    if len(shown) > LONG_TABLE:
        return f"<details><summary>{escape(name)} ({len(shown)} rows)</summary>{html}</details>"
    return f"<h3>{escape(name)}</h3>{html}"


def render_html(sections, notes: tuple[str, ...], options, headlines: tuple[str, ...] = ()) -> str:
    stamp = json.dumps({"reps": options.reps, "seed": options.seed, "onset_margin": options.onset_margin,
                        "effective_fraction": options.effective_fraction})
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             "<title>lurch report</title>", f"<style>{_STYLE}</style></head><body>",
             "<h1>lurch report</h1>",
             f"<p>lurch-tasks {escape(__version__)}; options {escape(stamp)}.</p>",
             "<nav>" + "".join(f'<a href="#{s.key}">{escape(s.title)}</a>' for s in sections) + "</nav>"]
    parts += [f'<p class="headline"><b>headline:</b> {_h(line)}</p>' for line in headlines]
    parts += [f'<p class="note">note: {_h(note)}</p>' for note in notes]
    for section in sections:
        parts.append(f'<section id="{section.key}"><h2>{_h(section.title)}</h2><p>{_h(section.intro)}</p>')
        parts += [f'<p class="note">note: {_h(note)}</p>' for note in section.notes]
        for figure in section.figures:
            data = base64.b64encode(figure.png).decode("ascii")
            parts.append(f'<figure><img src="data:image/png;base64,{data}" alt="{_h(figure.caption)}">'
                         f"<figcaption>{_h(figure.caption)}</figcaption></figure>")
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
