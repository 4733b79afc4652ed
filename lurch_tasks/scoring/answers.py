"""Parsers for model outputs. They never raise and run in time linear in the output length."""

from __future__ import annotations

import re

_FINAL_MARKER = re.compile(r"final[\s*_`]*answer", re.IGNORECASE)
_QUOTED = re.compile(r"[\"“”'‘’`]([^\"“”'‘’`\n]{1,200})[\"“”'‘’`]")
_STRIP = " \t\r\n*_`\"'“”‘’«»[](){}<>.,;:!?"


def normalize_entity(text: str) -> str:
    """Lower case, inner whitespace collapsed, markdown/quotes/trailing punctuation stripped."""
    return " ".join(text.strip(_STRIP).split()).lower().strip(_STRIP)


def parse_final_answer(output: object) -> str | None:
    """The entity after the last ``FINAL ANSWER`` marker, normalized; None when there is none.

    Accepts ``FINAL ANSWER: word``, ``**Final Answer:** "Word".``, ``final answer - word`` and the like.
    When the answer line quotes a word, the first quoted word wins ("... is "x"" -> x).
    """
    if not isinstance(output, str):
        output = "" if output is None else str(output)
    last = None
    for match in _FINAL_MARKER.finditer(output):
        last = match
    if last is None:
        return None
    rest = output[last.end() :].lstrip(" \t*_`:-=–—")
    line = rest.split("\n", 1)[0] if rest.strip() else ""
    if not line.strip() and rest.strip():
        line = rest.strip().split("\n", 1)[0]
    quoted = _QUOTED.search(line)
    candidate = quoted.group(1) if quoted else line
    entity = normalize_entity(candidate)
    return entity or None
