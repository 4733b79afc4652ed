"""A bounded view of a model output, so scoring costs milliseconds on any output.

Real answers are a few kilobytes (``max_gen_toks`` is sized to the answer), so the parsers read an output whole
when it fits in ``2 * WINDOW_CHARS`` characters and ``2 * WINDOW_LINES`` lines. A longer output (a model stuck
in a loop, a runaway reasoning trace) is read as its head and its tail, each at most ``WINDOW_CHARS`` characters
and ``WINDOW_LINES`` lines, cut at line ends where possible and joined by an elision (``…`` lines): an answer at
the start or at the end is still found, and a line cut by the window never reads as a complete line. A window
inside one long line is cut after a semicolon, else a comma, else a space near its edge, so a list of pairs on
one huge line loses no pair to the cut.
"""

from __future__ import annotations

__all__ = ["ELISION", "WINDOW_CHARS", "WINDOW_LINES", "bounded_output"]

WINDOW_CHARS = 65_536
WINDOW_LINES = 1_000
_SOFT_CUT = 1_024  # how far from a window's edge a cut inside a line looks for a separator
_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")  # str.splitlines boundaries
ELISION = "…\n\n…\n\n"
"""Joins head and tail: ``…`` ends a line cut by the head window, and a line of its own resets pending state
(a ``Name:`` header, a heading's answer on the next line); the blank lines end any open section."""


def bounded_output(text: str, chars: int = WINDOW_CHARS, lines: int = WINDOW_LINES) -> str:
    """``text`` itself when it is short, else its head and tail windows joined by ``ELISION``."""
    if len(text) <= 2 * min(chars, lines):
        return text  # too short to hold more lines than the two windows
    if len(text) <= 2 * chars and len(text.splitlines()) <= 2 * lines:
        return text
    head = _head(text, chars, lines)
    tail_start = _tail_start(text, chars, lines)
    if len(head) >= tail_start:
        return text
    return head + ELISION + text[tail_start:]


def _head(text: str, chars: int, lines: int) -> str:
    """The first ``lines`` lines within the first ``chars`` characters; a line the window cuts is dropped
    unless it is the only one."""
    kept = text[:chars].splitlines(keepends=True)[:lines]
    if len(kept) > 1 and kept[-1][-1:] not in _BREAKS:
        kept.pop()
    if len(kept) == 1 and len(text) > chars and kept[0][-1:] not in _BREAKS:  # inside the only line
        kept[0] = kept[0][: _soft_end(kept[0])]
    return "".join(kept)


def _tail_start(text: str, chars: int, lines: int) -> int:
    """Where the tail window starts: the last ``lines`` lines within the last ``chars`` characters; a line the
    window cuts is dropped unless it is the only one."""
    start = max(0, len(text) - chars)
    kept = text[start:].splitlines(keepends=True)
    if len(kept) > 1 and start and text[start - 1] not in _BREAKS:
        start += len(kept.pop(0))
    elif len(kept) == 1 and start and text[start - 1] not in _BREAKS:  # inside the only line
        start += _soft_start(kept[0])
    if len(kept) > lines:
        start += sum(map(len, kept[: len(kept) - lines]))
    return start


def _soft_end(window: str) -> int:
    """Where to end a window inside a line: after its last ``;``, else ``,``, else whitespace near the end."""
    low = max(0, len(window) - _SOFT_CUT)
    for chars in (";", ",", " \t"):
        found = max(window.rfind(c, low) for c in chars)
        if found >= 0:
            return found + 1
    return len(window)


def _soft_start(window: str) -> int:
    """Where to start a window inside a line: after its first ``;``, else ``,``, else whitespace near the start."""
    for chars in (";", ",", " \t"):
        found = [i for i in (window.find(c, 0, _SOFT_CUT) for c in chars) if i >= 0]
        if found:
            return min(found) + 1
    return 0
