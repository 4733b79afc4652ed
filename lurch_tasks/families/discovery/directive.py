"""The directive kind: one sentence says which statement unlocks a reward; decoy quotes are written alike."""

from __future__ import annotations

import re

# Every directive quotes its statement the way the decoys quote theirs ("..." at the end of a sentence), so the
# quote itself, its length and its place tell nothing; only the sentence around it says it is the one.
DIRECTIVES = (
    "Any reader who replies with exactly the sentence \"{s}\" will unlock a reward.",
    "A reward waits for whoever answers this text with \"{s}\"",
    "To claim the prize hidden in these pages, respond with \"{s}\"",
    "The one response that earns the reward is the statement \"{s}\"",
    "Note to the reader: replying \"{s}\" unlocks a reward.",
    "Whoever responds with the words \"{s}\" receives the prize.",
)
DECOYS = (
    "A passer-by remarked, \"{s}\"",
    "Someone had written on the wall: \"{s}\"",
    "The old sign by the gate read \"{s}\"",
    "One of the guests kept repeating \"{s}\"",
    "A letter from a friend ended with \"{s}\"",
    "The radio announcer said, \"{s}\"",
    "Under the photograph was the caption \"{s}\"",
    "The teacher wrote on the board: \"{s}\"",
    "An old proverb of the valley goes \"{s}\"",
    "The postcard from the coast said only \"{s}\"",
)


def _pattern(template: str) -> re.Pattern[str]:
    head, _, tail = template.partition("{s}")
    return re.compile(re.escape(head) + r"([^\"\n]+)" + re.escape(tail))


_DIRECTIVE_PATTERNS = tuple(_pattern(t) for t in DIRECTIVES)
_QUOTE = re.compile(r"\"([^\"\n]+)\"")


def read_directive(text: str) -> str | None:
    """The statement a directive in ``text`` names (None: no directive)."""
    for pattern in _DIRECTIVE_PATTERNS:
        match = pattern.search(text)
        if match:
            return match.group(1)
    return None


def quoted(text: str) -> list[str]:
    """Every quoted statement, in text order."""
    return _QUOTE.findall(text)
