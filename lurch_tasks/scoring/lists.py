"""Answers that are a list of names: the items after the last ``FINAL ANSWER`` marker.

Read within ``bounds.bounded_output``. The answer is the text after the last marker on its line (or the next
non-empty line when the marker ends its line); without a marker, the last non-empty line. Items are split on
semicolons, else on commas and a final "and"; list numbering ("1.", "(2)"), markdown and quotes are
stripped, and each item is compared in ``normalize_name`` form. Never raises; linear in the output.
"""

from __future__ import annotations

import re

from .bounds import bounded_output
from .names import normalize_name

_MARKER = re.compile(r"final\s+answers?\s*(?:is|are)?\s*[:\-–]*", re.IGNORECASE)
_NUMBERING = re.compile(r"^\s*(?:\(?\d{1,2}[.):]|[-*•])\s*")
# From the start of a space run only (a match ends after a whole run): linear on long runs of spaces
_AND = re.compile(r"(?<!\s)\s++(?:and|&)\s+", re.IGNORECASE)


def answer_text(output: object) -> str:
    """The answer's text: after the last FINAL ANSWER marker, else the output's last non-empty line."""
    text = output if isinstance(output, str) else ("" if output is None else str(output))
    text = bounded_output(text)
    markers = list(_MARKER.finditer(text))
    if markers:
        rest = text[markers[-1].end():]
        lines = [line for line in rest.split("\n") if line.strip(" *_`\t")]
        first, _, _ = rest.lstrip(" \t").partition("\n")
        return first if first.strip(" *_`\t") else (lines[0] if lines else "")
    lines = [line for line in text.split("\n") if line.strip()]
    return lines[-1] if lines else ""


def parse_name_list(output: object) -> list[str]:
    """The answer's items in ``normalize_name`` form, in order, without repeats or empty items."""
    try:
        text = answer_text(output)
        pieces = text.split(";") if ";" in text else [p for part in text.split(",") for p in _AND.split(part)]
        items: list[str] = []
        for piece in pieces:
            name = normalize_name(_NUMBERING.sub("", piece))
            if name and name not in items:
                items.append(name)
        return items
    except Exception:  # pragma: no cover - last resort; the parser is meant not to raise at all
        return []
