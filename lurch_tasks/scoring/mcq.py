"""Multiple choice with an explicit abstain (RECON, paper App. D.1): +1 for the right letter, -1/(n-1) for a
wrong one (a random guess then scores 0 in expectation), 0 for abstaining. The parser reads the final answer
in any usual form and never raises."""

from __future__ import annotations

import re

ABSTAIN = "ABSTAIN"
_ABSTAIN_WORDS = r"(?:abstain|abstains|abstaining|cannot be determined|can't be determined|not determinable|unknown)"
# Explicit answer lines first ("ANSWER: C", "Final answer - (C)", "**Answer:** C"), last one wins.
_ANSWER_LINE = re.compile(r"(?:final\s+answer|answer)\s*(?:is)?\s*[*_]*\s*[:=\-]?\s*[*_]*\s*[(\[]?\s*"
                          rf"(?:(?P<letter>[A-Z])(?![A-Za-z])|(?P<abstain>{_ABSTAIN_WORDS}))", re.IGNORECASE)
_BARE = re.compile(rf"^\s*[*_(\[]*\s*(?:(?P<letter>[A-Z])(?![A-Za-z0-9])|(?P<abstain>{_ABSTAIN_WORDS}))",
                   re.IGNORECASE | re.MULTILINE)


def parse_choice(output: object, letters: str) -> str | None:
    """The chosen letter (upper case), ``ABSTAIN``, or None when no choice is readable. ``letters``: the
    allowed letters (``ABCDEF``); a letter outside them is no choice."""
    text = output if isinstance(output, str) else ("" if output is None else str(output))
    text = text[-20_000:]  # answers sit at the end; bound the work on runaway outputs
    for pattern in (_ANSWER_LINE, _BARE):
        found = list(pattern.finditer(text))
        for match in reversed(found):
            if match.group("abstain"):
                return ABSTAIN
            letter = match.group("letter").upper()
            if pattern is _ANSWER_LINE and match.group("letter") not in letters.upper() + letters.lower():
                continue
            if letter in letters:
                return letter
    return None


def mcq_score(gold: str, choice: str | None, num_options: int) -> dict[str, float]:
    """``score`` (the penalised rule), ``accuracy`` (strict), ``abstain_rate``; unreadable counts as wrong."""
    correct = choice == gold
    abstained = choice == ABSTAIN
    score = 1.0 if correct else 0.0 if abstained else -1.0 / (num_options - 1)
    return {"score": score, "accuracy": float(correct), "abstain_rate": float(abstained)}
