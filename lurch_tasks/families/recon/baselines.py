"""RECON baselines: the reference solver (``solver.solve``) and a seeded random answer in the prompt's format:
a uniform letter (MCQ single), a uniform random subset (MCQ multiple), a uniform permutation (ordering), a
uniform number over the answer range of the question's category (integer: ``formats.INTEGER_RANGES``), and for
free form a uniform pick among the places the case names beside the question's subject (its item or person),
with that entry's time: the free-form analogue of a uniform option. MCQ and ordering guesses score 0 in
expectation; integer and free-form guesses can hit, and the shortcut audit compares with their measured mean."""

from __future__ import annotations

import json
import re

from ...core.rng import StableRng, derive_seed
from .formats import integer_range
from .narrate import patterns
from .prompt import letters_for
from .solver import Parsed, solve, split_prompt

__all__ = ["guess", "solve", "subject_mentions"]

MAX_GUESS = 15
_PERSON = re.compile(r"\b[A-Z][a-z]+ [A-Z][a-z]+\b")


def subject_mentions(parsed: Parsed, body: str) -> tuple[str | None, list[tuple[str, str]]]:
    """The question's subject (its item, else its first person) and every (place, entry time) the case's lines
    that mention it name, in case order."""
    slots = patterns(parsed.domain)
    thing = re.search(slots["thing"], parsed.question)
    person = _PERSON.search(parsed.question)
    subject = thing.group(0) if thing else person.group(0) if person else None
    if subject is None:
        return None, []
    place = re.compile(slots["place"])
    found = []
    for line in body.split("\n"):
        if subject not in line:
            continue
        stamp, text = _stamp_and_text(line)
        found += [(m.group(0), stamp) for m in place.finditer(text)]
    return subject, found


def _stamp_and_text(line: str) -> tuple[str, str]:
    """An entry's time and the text after its header, for a narrative line or an oracle JSON line."""
    if line.startswith("{"):
        try:
            record = json.loads(line)
            return f"Day {record['day']}, {record['time']}", json.dumps(record.get("fact", {}))
        except (ValueError, KeyError, TypeError):
            return "", line
    return line[1:line.find("]")], line.partition("] ")[2]


def guess(prompt: str, seed: int) -> str | None:
    parsed = split_prompt(prompt, read_case=False)
    if parsed is None:
        return None
    rng = StableRng(derive_seed("recon-guess", seed, prompt[-600:]))
    letters = letters_for(parsed.format)[: len(parsed.options)]
    if parsed.format == "mcq_single":
        return f"ANSWER: {rng.choice(letters)}"
    if parsed.format == "mcq_multi":
        size = rng.integer(1, len(letters) - 1)
        return "ANSWER: " + ", ".join(sorted(rng.sample(list(letters), size)))
    if parsed.format == "ordering":
        return "ANSWER: " + ", ".join(rng.shuffled(list(letters)))
    if parsed.format == "integer":
        return f"ANSWER: {rng.integer(*integer_range(parsed.question, (0, MAX_GUESS)))}"
    subject, found = subject_mentions(parsed, prompt.rpartition("Question: ")[0])
    if not found:
        return f"ANSWER: {rng.choice(parsed.question.split())}"
    place, stamp = rng.choice(found)
    return f"ANSWER: {subject} was at {place}, from {stamp}."
