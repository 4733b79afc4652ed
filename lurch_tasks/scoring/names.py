"""Name normalization and edge items (the rule is ``scoring.pairs``' module docstring), apart from the edge parser:
a generator that writes gold items (graph's ``edge_item``) or a scorer that compares names needs these few lines,
not the parser's patterns."""

from __future__ import annotations

import re

__all__ = ["TITLES", "edge_item", "normalize_name"]

TITLES: frozenset[str] = frozenset(
    {
        "dr", "doctor", "mr", "mrs", "ms", "miss", "mx", "mister", "missus", "master", "madam", "madame",
        "mme", "mlle", "prof", "professor", "sir", "dame", "lord", "lady", "rev", "reverend", "fr", "father",
        "herr", "frau", "senor", "senora", "sr", "sra", "srta", "capt", "captain", "col", "colonel", "lt",
        "sgt", "det", "detective", "insp", "inspector", "officer", "agent", "judge", "hon", "honorable",
    }
)  # fmt: skip
"""Honorifics dropped from the start of a name (case-folded, without the dot)."""

_APOSTROPHES = dict.fromkeys(map(ord, "'’‘ʼ′´"), None)
_NON_ALNUM = re.compile(r"[\W_]+")
# The same rule for ASCII text in one translate (casefold is lower there): apostrophes deleted, every other
# character that is not a letter or digit a space. About twice as fast as casefold + translate + regex.
_ASCII_NAME = str.maketrans({**{chr(c): " " for c in range(128) if not chr(c).isalnum()}, "'": None})


def normalize_name(text: str) -> str:
    """Canonical form of a person's name: pure, idempotent, see ``scoring.pairs``' module docstring for the rule.

    ``normalize_name("**Dr. Aoife O’Neill**") == normalize_name("aoife oneill") == "aoife oneill"``,
    ``normalize_name("Tomasz Adeyemi-Kovac") == "tomasz adeyemi kovac"``.
    """
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    if text.isascii():
        words = text.lower().translate(_ASCII_NAME).split()
    else:
        words = _NON_ALNUM.sub(" ", text.casefold().translate(_APOSTROPHES)).split()
    start = 0
    while start < len(words) - 1 and words[start] in TITLES:
        start += 1
    return " ".join(words[start:])


def _item(a: str, b: str) -> str:
    return f"{a}|{b}" if a <= b else f"{b}|{a}"


def edge_item(a: str, b: str) -> str:
    """The undirected item of the edge a-b: both names normalized, sorted, joined by ``|``."""
    return _item(normalize_name(a), normalize_name(b))
