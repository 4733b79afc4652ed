"""Free-form answers graded by key facts, deterministically (RECON free form without an LLM judge).

A question carries ``required`` facts (entities, places, times, outcomes) that must all appear in the answer
and ``contradicting`` facts that must not be asserted: score 1 when every required fact is there and no
contradicting one is asserted, else 0 (no negative marking, as in the paper). Matching is on normalised text
(case, punctuation, titles such as "Dr." ignored; whole words only). A time fact written ``Day 3, 14:05``
matches "Day 3" with any usual clock form of the same minute ("14:05", "14.05", "2:05 pm", "1405 hours").
A contradicting fact is not asserted when its clause also carries a denial or report cue ("not", "rather
than", "instead of", "claimed", "wrong", ...): "She was at the depot, not at the pier as the witness claimed"
asserts the depot only. The answer is the text after the last ``ANSWER:`` marker, else the whole output;
graders never raise."""

from __future__ import annotations

import re
from collections.abc import Sequence

from .mcq import _MARKER, ABSTAIN, _text, is_abstain

_TIME_FACT = re.compile(r"^Day (\d+), (\d\d):(\d\d)$")
_TITLES = re.compile(r"\b(?:dr|mr|mrs|ms|prof|doctor)\b\.?", re.IGNORECASE)
_NON_WORD = re.compile(r"[^0-9a-z]+")
# Linear time on any output (issue 26). After "14:05" the space run is read once (possessive): either all of it
# goes before "pm", or none does (the empty branch), which are the only ways the old "\s*([ap])?\.?\s*m?\b"
# could end, so it matched the same text but tried every split of the run (quadratic: 19 KB of spaces, 23 s).
_CLOCK = re.compile(r"\b(\d{1,2})[:.h](\d\d)(?:\s*+([ap])?\.?\s*m?|)\b\.?"  # 14:05, 2:05 pm, 14.05
                    r"|\b(\d{1,2})\s*+([ap])\.?\s*+m\b\.?"  # 2 pm
                    r"|\b(\d\d)(\d\d)\s*+hours?\b", re.IGNORECASE)  # 1405 hours
# "but"/"whereas" are looked for from the start of a space run only: a match always ends after a whole run, so a
# later start in the same run could not match either (it was tried from every space: quadratic).
_CLAUSES = re.compile(r"[.!?;:,\n]+\s*|(?<!\s)\s++(?:but|whereas)\s+", re.IGNORECASE)
_CUES = re.compile(r"\b(?:not|no|never|nor|n't|neither|instead|rather|contrary|contradict\w*|false|falsely|"
                   r"incorrect\w*|wrong\w*|mistaken\w*|disput\w*|claim\w*|said|says|stated|states|reported|alleg\w*|"
                   r"account|accounts|witness\w*|statement\w*|withdrawn|retracted|rejected|ruled|unsupported)\b",
                   re.IGNORECASE)


def normalize_text(text: str) -> str:
    """Lower case, titles dropped, every run of non-alphanumerics one space, padded for whole-word search."""
    return f" {_NON_WORD.sub(' ', _TITLES.sub(' ', text).lower()).strip()} "


def free_form_text(output: object) -> str:
    """The answer: after the last ``ANSWER:``-style marker, else the whole (bounded) output."""
    text = _text(output)
    markers = list(_MARKER.finditer(text))
    return text[markers[-1].end():].strip() if markers else text.strip()


def _clock_minutes(text: str) -> set[int]:
    minutes = set()
    for m in _CLOCK.finditer(text):
        if m.group(1) is not None:
            hour, minute, half = int(m.group(1)), int(m.group(2)), (m.group(3) or "").lower()
        elif m.group(4) is not None:
            hour, minute, half = int(m.group(4)), 0, m.group(5).lower()
        else:
            hour, minute, half = int(m.group(6)), int(m.group(7)), ""
        if half == "p" and hour < 12:
            hour += 12
        elif half == "a" and hour == 12:
            hour = 0
        if hour < 24 and minute < 60:
            minutes.add(hour * 60 + minute)
    return minutes


def _fact_key(fact: str) -> tuple[str, int | None]:
    """What to look for: (" day N ", minute of the day) for a ``Day N, HH:MM`` time, else (the phrase, None)."""
    time = _TIME_FACT.match(fact)
    if time:
        return f" day {int(time.group(1))} ", int(time.group(2)) * 60 + int(time.group(3))
    return normalize_text(fact), None


def _states(text: str, normal: str, key: tuple[str, int | None]) -> bool:
    """Whether ``text`` (``normal``: its ``normalize_text``) states the fact of ``key``."""
    phrase, minute = key
    if minute is not None:
        return phrase in normal and minute in _clock_minutes(text)
    return phrase.strip() != "" and phrase in normal


def mentions(text: str, fact: str) -> bool:
    """Whether ``text`` states ``fact`` (a name or phrase, or a ``Day N, HH:MM`` time)."""
    return _states(text, normalize_text(text), _fact_key(fact))


def _asserting_clauses(text: str) -> list[tuple[str, str]]:
    """(clause, its normal form) for every clause of ``text`` without a denial or report cue, each read once
    however many facts are checked against it (an output of 10k clauses costs 10k reads, not one per fact)."""
    return [(clause, normalize_text(clause)) for clause in _CLAUSES.split(text) if not _CUES.search(clause)]


def _asserted_in(clauses: list[tuple[str, str]], fact: str) -> bool:
    key = _fact_key(fact)
    return any(_states(clause, normal, key) for clause, normal in clauses)


def asserted(text: str, fact: str) -> bool:
    """Whether some clause of ``text`` mentions ``fact`` without a denial or report cue."""
    return _asserted_in(_asserting_clauses(text), fact)


def grade_free_form(output: object, required: Sequence[str], contradicting: Sequence[str]) -> dict:
    """``score``/``accuracy`` 1 or 0, ``abstain_rate``, and the facts found and asserted against (the items
    for memory drift: required facts found are hits, contradicting facts asserted are false positives)."""
    try:
        text = free_form_text(output)[:20_000]
        found = [fact for fact in required if mentions(text, fact)]
        clauses = _asserting_clauses(text) if contradicting else []
        against = [fact for fact in contradicting if _asserted_in(clauses, fact)]
        abstained = not found and is_abstain(text[:400])
    except Exception:  # pragma: no cover - last resort; the grader is meant not to raise at all
        found, against, abstained = [], [], False
    correct = len(found) == len(required) and not against and not abstained
    return {"score": float(correct), "accuracy": float(correct), "abstain_rate": float(abstained),
            "found": found, "against": against, "answer": ABSTAIN if abstained else None}
