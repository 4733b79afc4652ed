"""NOT FOUND answers: a question whose chain breaks (a required fact is absent) has no entity for an answer, and
the honest output says so. Any reasonable wording counts ("not found", "NOT_FOUND", "cannot be determined", "no
answer", "unknown" ...); it is read from the answer text only (after the last FINAL ANSWER marker, else the last
line), so a reasoning step that says "not found" before a named answer does not count as one."""

from __future__ import annotations

import re

from .lists import answer_text

NOT_FOUND = "NOT FOUND"

_PHRASES = re.compile(
    r"^(?:the\s+answer\s+(?:is|was)\s+)?(?:"
    r"not\s+found|no\s+answer|none|n\s*a|unknown|unanswerable|no\s+such\s+\w+"
    r"|(?:it\s+)?(?:cannot|can\s*not|can\s*t|could\s+not|couldn\s*t)\s+(?:be\s+)?"
    r"(?:determined|found|answered|known|determine|find|answer|tell)"
    r"|(?:it\s+is\s+|that\s+is\s+)?(?:not|never)\s+(?:stated|given|mentioned|provided|specified|known|determinable)"
    r"|(?:the\s+)?(?:answer|information|fact|chain)\s+(?:is\s+)?(?:not\s+(?:found|given|stated|available|in)|missing"
    r"|breaks|is\s+broken)"
    r"|insufficient\s+information|not\s+enough\s+information|no\s+information"
    r")\b")


def _plain(text: str) -> str:
    """Lower case, underscores / hyphens / punctuation as spaces, one space between words."""
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower().replace("'", "")).split())


def says_not_found(output: object) -> bool:
    """Whether the answer text declares that there is no answer (any reasonable wording of NOT FOUND)."""
    return bool(_PHRASES.match(_plain(answer_text(output))))
