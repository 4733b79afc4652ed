"""Evidence given as quoted passages, found in the context: exactly, else with white space folded (a quote copied
from a rendered page keeps its words but not always its line breaks)."""

from __future__ import annotations

import re

Span = tuple[int, int]
_SPACE = re.compile(r"\s+")


def locate(context: str, quote: str, number: int) -> Span:
    """The character span of ``quote`` in ``context``; a ValueError naming evidence ``number`` when it is absent,
    or present more than once (which place is meant cannot be known)."""
    if not quote.strip():
        raise ValueError(f"evidence {number}: an empty quote")
    first = context.find(quote)
    if first >= 0:
        if context.find(quote, first + 1) >= 0:
            raise ValueError(f"evidence {number}: {_short(quote)} occurs more than once in the context; allowed: a "
                             "quote that occurs once, or a character span")
        return first, first + len(quote)
    folded = _folded_matches(context, quote)
    if not folded:
        raise ValueError(f"evidence {number}: {_short(quote)} is not in the context (even with white space folded)")
    if len(folded) > 1:
        raise ValueError(f"evidence {number}: {_short(quote)} occurs more than once in the context; allowed: a "
                         "quote that occurs once, or a character span")
    return folded[0]


def _folded_matches(context: str, quote: str) -> list[Span]:
    """Spans of ``quote`` in ``context`` where any run of white space matches any other."""
    words = quote.split()
    pattern = re.compile(r"\s+".join(re.escape(word) for word in words))
    return [(m.start(), m.end()) for m in pattern.finditer(context)]


def _short(quote: str, width: int = 60) -> str:
    text = _SPACE.sub(" ", quote).strip()
    return repr(text if len(text) <= width else text[:width] + "...")
