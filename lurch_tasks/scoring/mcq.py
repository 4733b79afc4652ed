"""RECON's answer formats (paper App. D.1), each with an explicit abstain: MCQ single (+1 for the right
letter, -1/(n-1) for a wrong one, so a random guess scores 0 in expectation), MCQ multiple (c/k - w/(n-k):
selecting every option scores 0, as abstaining does) and integer (exact). The readers take the final answer
in any usual form ("ANSWER: C", "**Answer:** (b), (d)", "Final answer - 7", "abstain") and never raise;
orderings live in ``scoring.ordering``, free-form key facts in ``scoring.keyfacts``."""

from __future__ import annotations

import re

from .bounds import bounded_output
from .single import parse_count

ABSTAIN = "ABSTAIN"
_ABSTAIN_WORDS = r"(?:abstain|abstains|abstaining|cannot be determined|can't be determined|not determinable|unknown)"
_ABSTAIN = re.compile(rf"\b{_ABSTAIN_WORDS}\b", re.IGNORECASE)
# Linear time on any output (issue 26): runs of spaces and markup are possessive (*+, ++), so a run is read once
# and never re-split between adjacent quantifiers; the old "answer\s*(?:is)?\s*[*_`]*\s*[:=-]" was cubic on
# "answer" and a few KB of spaces. No path gives back a possessive run's characters to a later piece (the
# pieces' classes are disjoint), so every output reads as before (tests/test_linear_parsing.py checks that).
# Explicit answer lines first ("ANSWER: C", "Final answer - (C)", "**Answer:** C"), last one wins.
_ANSWER_LINE = re.compile(r"(?:final\s+answer|answer)\s*+(?:is)?\s*+[*_]*+\s*+[:=\-]?\s*+[*_]*+\s*+[(\[]?\s*+"
                          rf"(?:(?P<letter>[A-Z])(?![A-Za-z])|(?P<abstain>{_ABSTAIN_WORDS}))", re.IGNORECASE)
# A line holding only the letter (markup and blank lines before it allowed). The match starts at the last line
# start before the letter, so the lines of a blank run are not each read to its end (quadratic on "\n" * n).
_BARE = re.compile(rf"^[^\S\n]*+(?:[*_(\[]++\s*+)?(?:(?P<letter>[A-Z])(?![A-Za-z0-9])|(?P<abstain>{_ABSTAIN_WORDS}))",
                   re.IGNORECASE | re.MULTILINE)
_MARKER = re.compile(r"(?:final\s+answer|answer)s?\s*+(?:is|are)?\s*+[*_`]*+\s*+[:=\-–]", re.IGNORECASE)
_LETTER_RUN = re.compile(r"(?<![A-Za-z])([A-Za-z])(?![A-Za-z])")
_JOINERS = re.compile(r"^(?:[\s,;/&+*_`()\[\]{}\"'.>-]|and|then|or)*$", re.IGNORECASE)


def _text(output: object) -> str:
    text = output if isinstance(output, str) else ("" if output is None else str(output))
    return bounded_output(text[-200_000:])


def answer_clause(output: object) -> str:
    """The text of the final answer: what follows the last ``ANSWER:``-style marker (to the end of its line, or
    the next non-empty line when the marker ends its line), else the output's last non-empty line."""
    text = _text(output)
    markers = list(_MARKER.finditer(text))
    if markers:
        rest = text[markers[-1].end():]
        first, _, after = rest.lstrip(" \t").partition("\n")
        if first.strip(" *_`\t"):
            return first.strip()
        lines = [line for line in after.split("\n") if line.strip(" *_`\t")]
        return lines[0].strip() if lines else ""
    lines = [line for line in text.split("\n") if line.strip(" *_`\t")]
    return lines[-1].strip() if lines else ""


def is_abstain(clause: str) -> bool:
    return bool(_ABSTAIN.search(clause))


def parse_choice(output: object, letters: str) -> str | None:
    """The chosen letter (upper case), ``ABSTAIN``, or None when no choice is readable. ``letters``: the
    allowed letters (``ABCDEF``); a letter outside them is no choice."""
    text = _text(output)[-20_000:]  # answers sit at the end; bound the work on runaway outputs
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


def parse_letters(output: object, letters: str) -> tuple[str, ...] | str | None:
    """The letters of the final answer in the order written (upper case, no repeats), ``ABSTAIN``, or None when
    the answer is not a list of the allowed letters ("A, C and E", "(b) (d)", "ACE", "C > A > B")."""
    clause = answer_clause(output)[:2_000]
    if is_abstain(clause):
        return ABSTAIN
    clause = clause.strip(" .*_`")
    if re.fullmatch(r"[A-Z]{2,26}", clause) and all(c in letters for c in clause):  # "ACE"
        return tuple(dict.fromkeys(clause))
    found = list(_LETTER_RUN.finditer(clause))
    if not found:
        return None
    gaps = [clause[:found[0].start()], *(clause[a.end():b.start()] for a, b in zip(found, found[1:], strict=False)),
            clause[found[-1].end():]]
    picked = [m.group(1).upper() for m in found]
    if any(not _JOINERS.match(gap) for gap in gaps[1:-1]) or any(p not in letters for p in picked):
        return None
    return tuple(dict.fromkeys(picked))


def mcq_score(gold: str, choice: str | None, num_options: int) -> dict[str, float]:
    """``score`` (the penalised rule), ``accuracy`` (strict), ``abstain_rate``. An unreadable answer (None) scores 0
    as an abstention does (issue 28: the paper retries, then records an abstention), but is not counted in
    ``abstain_rate``: the family reports it as ``unparsed``."""
    correct = choice == gold
    abstained = choice == ABSTAIN
    score = 1.0 if correct else 0.0 if abstained or choice is None else -1.0 / (num_options - 1)
    return {"score": score, "accuracy": float(correct), "abstain_rate": float(abstained)}


def mcq_multi_score(gold: tuple[str, ...], chosen: tuple[str, ...] | str | None, num_options: int
                    ) -> dict[str, float]:
    """c/k - w/(n-k) over the selected options (c right, w wrong, k correct of n); abstaining and an unreadable
    answer score 0 (unreadable is not an abstention); accuracy only for exactly the correct set."""
    if chosen == ABSTAIN:
        return {"score": 0.0, "accuracy": 0.0, "abstain_rate": 1.0}
    if not chosen:
        return {"score": 0.0, "accuracy": 0.0, "abstain_rate": 0.0}
    k, picked = len(gold), set(chosen)
    c, w = len(picked & set(gold)), len(picked - set(gold))
    score = c / k - (w / (num_options - k) if num_options > k else 0.0)
    return {"score": score, "accuracy": float(picked == set(gold)), "abstain_rate": 0.0}


def parse_integer(output: object) -> int | str | None:
    """The whole number of the final answer ("7", "**7**", "seven", "none" = 0), ``ABSTAIN``, or None."""
    clause = answer_clause(output)[:2_000]
    if is_abstain(clause):
        return ABSTAIN
    return parse_count(f"FINAL ANSWER: {clause}")


def integer_score(gold: int, answer: int | str | None) -> dict[str, float]:
    correct = answer == gold
    return {"score": float(correct), "accuracy": float(correct), "abstain_rate": float(answer == ABSTAIN)}
