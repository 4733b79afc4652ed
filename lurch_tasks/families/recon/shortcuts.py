"""RECON shortcut strategies (DESIGN 3.5): answers from the prompt's surface alone, never from the case's
reasoning, one set per answer format. MCQ (single and multiple): the options' position, length, overlap with the
question or with each other, where and how often they occur in the case (single: the top option; multiple:
the top three). Ordering: the items by where they are first or last mentioned, by length, or in letter order.
Integer: a constant. Free form: the place last / first / most often mentioned beside the question's subject.
On a row of another format a strategy gives the seeded random answer (the chance baseline's own), so each is
measured against chance on its own format only. Each must stay at chance."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable

from ...core.rng import StableRng, derive_seed
from ...core.shortcuts import Probe, Shortcut
from .baselines import guess, subject_mentions
from .prompt import LETTERS, letters_for
from .questions import ARROW
from .solver import Parsed, split_prompt

MULTI_PICKS = 3  # how many options a multiple-answer strategy selects (k is 1-5, uniform)
Pick = Callable[[Parsed, str, object], str | None]  # (parsed prompt, case text, variant) -> answer


def _strategy(formats: tuple[str, ...], pick: Pick) -> Callable[[str, object], str]:
    def strategy(prompt: str, variant: object) -> str:
        parsed = split_prompt(prompt, read_case=False)
        if parsed is None:
            return ""
        if parsed.format not in formats:
            return guess(prompt, 0) or ""
        body = prompt.rpartition("Question: ")[0]
        return pick(parsed, body, variant) or ""

    return strategy


def _units(option: str) -> list[str]:
    return option.split(ARROW)


def _words(text: str) -> set[str]:
    return {w.strip(".,?;:()").lower() for w in text.split()}


Value = Callable[[list[str], str, str], list[float]]  # (options, question, case) -> one value per option


def length(options, question, body) -> list[float]:
    return [float(len(o)) for o in options]


def question_overlap(options, question, body) -> list[float]:
    asked = _words(question)
    return [float(len(_words(o) & asked)) for o in options]


def consensus(options, question, body) -> list[float]:
    """Words shared with the other options: the 'centre' of a distractor set."""
    words = [_words(o) for o in options]
    return [float(sum(len(w & other) for other in words if other is not w)) for w in words]


def recency(options, question, body) -> list[float]:
    """Where an option is last mentioned in the case."""
    return [float(max(body.rfind(u) for u in _units(o))) for o in options]


def first_mention(options, question, body) -> list[float]:
    return [float(min((body.find(u) for u in _units(o) if u in body), default=len(body))) for o in options]


def frequency(options, question, body) -> list[float]:
    return [float(sum(body.count(u) for u in _units(o))) / len(_units(o)) for o in options]


def _ranked(values: list[float], variant: object, tie_seed: str) -> list[int]:
    """Option indices from the highest value (``max``) or the lowest (``min``); ties in a seeded order, so a
    feature with many ties is not measured as a position strategy (``option_position`` is that)."""
    sign = -1.0 if variant == "max" else 1.0
    tie = StableRng(derive_seed("recon-ties", tie_seed)).shuffled(range(len(values)))
    return sorted(range(len(values)), key=lambda k: (sign * values[k], tie[k]))


def _mcq(value: Value) -> Pick:
    def pick(parsed: Parsed, body: str, variant: object) -> str | None:
        if len(parsed.options) != len(LETTERS):
            return None
        ranked = _ranked(value(parsed.options, parsed.question, body), variant, parsed.question)
        chosen = ranked[:1] if parsed.format == "mcq_single" else sorted(ranked[:MULTI_PICKS])
        return "ANSWER: " + ", ".join(LETTERS[k] for k in chosen)

    return pick


def by_position(parsed: Parsed, body: str, variant: object) -> str:
    return f"ANSWER: {variant}"


def _ordering(value: Value | None) -> Pick:
    def pick(parsed: Parsed, body: str, variant: object) -> str:
        letters = letters_for("ordering")
        if value is None:  # letter order, or its reverse
            order = list(range(len(parsed.options)))
            order = order if variant == "min" else order[::-1]
        else:
            order = _ranked(value(parsed.options, parsed.question, body), variant, parsed.question)
        return "ANSWER: " + ", ".join(letters[k] for k in order)

    return pick


def constant(parsed: Parsed, body: str, variant: object) -> str:
    return f"ANSWER: {variant}"


def subject_place(parsed: Parsed, body: str, variant: object) -> str:
    """The place named last (``max``), first (``min``) or most often (``most``) in the case's lines that mention
    the question's subject (its item, else its person), with that line's time."""
    subject, found = subject_mentions(parsed, body)
    if not found:
        return ""
    if variant == "most":
        name = Counter(p for p, _ in found).most_common(1)[0][0]
        stamp = next(s for p, s in found if p == name)
    else:
        name, stamp = found[-1] if variant == "max" else found[0]
    return f"ANSWER: {subject} was at {name}, from {stamp}."


MCQ = ("mcq_single", "mcq_multi")
SHORTCUTS = (
    Shortcut("option_position", "position", "always the same letter", _strategy(MCQ, by_position), tuple(LETTERS)),
    Shortcut("option_length", "length", "the longest / shortest option(s)", _strategy(MCQ, _mcq(length)),
             ("max", "min")),
    Shortcut("question_overlap", "template", "the option(s) sharing most / fewest words with the question",
             _strategy(MCQ, _mcq(question_overlap)), ("max", "min")),
    Shortcut("option_consensus", "family", "the option(s) sharing most / fewest words with the other options",
             _strategy(MCQ, _mcq(consensus)), ("max", "min")),
    Shortcut("most_recent_entry", "position", "the option(s) mentioned last / first in the case",
             _strategy(MCQ, _mcq(recency)), ("max", "min")),
    Shortcut("most_mentioned", "frequency", "the option(s) mentioned most / least often in the case",
             _strategy(MCQ, _mcq(frequency)), ("max", "min")),
    Shortcut("order_by_first_mention", "position", "the items in the order they are first mentioned (or reversed)",
             _strategy(("ordering",), _ordering(first_mention)), ("min", "max")),
    Shortcut("order_by_last_mention", "position", "the items in the order they are last mentioned (or reversed)",
             _strategy(("ordering",), _ordering(recency)), ("min", "max")),
    Shortcut("order_by_length", "length", "the items from shortest to longest (or reversed)",
             _strategy(("ordering",), _ordering(length)), ("min", "max")),
    Shortcut("order_as_listed", "position", "the items in letter order (or reversed)",
             _strategy(("ordering",), _ordering(None)), ("min", "max")),
    Shortcut("integer_constant", "frequency", "always the same number", _strategy(("integer",), constant),
             tuple(range(0, 10))),
    Shortcut("subject_place", "family", "the place named last / first / most often beside the question's subject",
             _strategy(("free_form",), subject_place), ("max", "min", "most")),
)


def _gold_marks(row: dict) -> set[int]:
    if row["answer_format"] == "mcq_single":
        return {LETTERS.index(row["answer"])}
    return {LETTERS.index(x) for x in json.loads(row["answer"])}


def _option_lengths(row: dict) -> list[tuple[float, bool]]:
    if row["answer_format"] not in MCQ:
        return []
    gold = _gold_marks(row)
    return [(float(len(o)), k in gold) for k, o in enumerate(row["options"])]


def _option_mentions(row: dict) -> list[tuple[float, bool]]:
    if row["answer_format"] not in MCQ:
        return []
    context, gold = row["context"], _gold_marks(row)
    return [(float(sum(context.count(u) for u in _units(o))) / len(_units(o)), k in gold)
            for k, o in enumerate(row["options"])]


PROBES = (
    Probe("option_chars", "length", "characters of an option (MCQ)", _option_lengths),
    Probe("option_mentions", "frequency", "mentions of an option's parts in the case (MCQ)", _option_mentions),
)
