"""Answers that are one entity name or one whole number, read after the last ``FINAL ANSWER`` marker.

An entity scores by exact match after normalisation (``normalize_entity_name``: ``normalize_name`` and no
leading article) and by token precision / recall / F1 against the gold name's words (partial credit for
"Gukrapir" against "Gukrapir Foundation"). A number is the first whole number of the answer text, in digits
("3", "3.", "**3**", "3 people") or as a word up to twenty ("three"); "no one" and "none" read as 0. Both
readers never raise and work within ``bounds.bounded_output`` like the other parsers.
"""

from __future__ import annotations

import re
from collections import Counter

from .lists import answer_text
from .names import normalize_name

NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
                "twenty")
_NUMBER = re.compile(r"(?<![\w.])(\d{1,6})(?![\w]|\.\d)|\b(" + "|".join(NUMBER_WORDS) + r"|none|no one|nobody)\b",
                     re.IGNORECASE)
_ARTICLE = re.compile(r"^(?:the|a|an) (?=\S)")


def normalize_entity_name(text: object) -> str:
    """``normalize_name`` without a leading article: "The Ostrin Works" and "ostrin works" are one name."""
    return _ARTICLE.sub("", normalize_name(text if isinstance(text, str) else str(text or "")))


def token_scores(gold: str, predicted: str) -> tuple[float, float, float]:
    """(precision, recall, F1) of the predicted name's words against the gold name's (multiset overlap)."""
    gold_words, predicted_words = Counter(gold.split()), Counter(predicted.split())
    common = sum((gold_words & predicted_words).values())
    if not common:
        return 0.0, 0.0, 0.0
    precision, recall = common / sum(predicted_words.values()), common / sum(gold_words.values())
    return precision, recall, 2 * precision * recall / (precision + recall)


def parse_count(output: object) -> int | None:
    """The first whole number of the answer text, or None."""
    try:
        match = _NUMBER.search(answer_text(output))
    except Exception:  # pragma: no cover - last resort; the reader is meant not to raise at all
        return None
    if match is None:
        return None
    if match.group(1) is not None:
        return int(match.group(1))
    word = match.group(2).lower()
    return NUMBER_WORDS.index(word) if word in NUMBER_WORDS else 0
