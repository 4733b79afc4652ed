"""RECON shortcut strategies (DESIGN 3.5): answers from the options' surface alone (position, length, overlap
with the question or with each other) or from where and how often options occur in the case, never from its
reasoning. Each must stay at chance (0 under the penalised score)."""

from __future__ import annotations

from collections.abc import Callable

from ...core.shortcuts import Probe, Shortcut
from .prompt import LETTERS
from .questions import ARROW
from .solver import split_prompt


def _answer(pick: Callable[[list[str], str, str, object], int | None]) -> Callable[[str, object], str]:
    def strategy(prompt: str, variant: object) -> str:
        parsed = split_prompt(prompt, read_case=False)
        if parsed is None or len(parsed.options) != len(LETTERS):
            return ""
        body = prompt.rpartition("Question: ")[0]
        chosen = pick(parsed.options, parsed.question, body, variant)
        return f"ANSWER: {LETTERS[chosen]}" if chosen is not None else ""

    return strategy


def _best(values: list[float], variant: object) -> int:
    """The first option with the highest value (``max``) or the lowest (``min``)."""
    target = max(values) if variant == "max" else min(values)
    return values.index(target)


def _units(option: str) -> list[str]:
    return option.split(ARROW)


def _words(text: str) -> set[str]:
    return {w.strip(".,?;:()").lower() for w in text.split()}


def by_position(options, question, body, variant) -> int:
    return LETTERS.index(variant)


def by_length(options, question, body, variant) -> int:
    return _best([float(len(o)) for o in options], variant)


def by_question_overlap(options, question, body, variant) -> int:
    asked = _words(question)
    return _best([float(len(_words(o) & asked)) for o in options], variant)


def by_consensus(options, question, body, variant) -> int:
    """The option that shares most (or fewest) words with the other options: the 'centre' of a distractor set."""
    words = [_words(o) for o in options]
    return _best([float(sum(len(w & other) for other in words if other is not w)) for w in words], variant)


def by_recency(options, question, body, variant) -> int:
    """The option whose last mention comes latest (or earliest) in the case."""
    return _best([float(max(body.rfind(u) for u in _units(o))) for o in options], variant)


def by_frequency(options, question, body, variant) -> int:
    """The option mentioned most (or least) often in the case."""
    return _best([float(sum(body.count(u) for u in _units(o))) / len(_units(o)) for o in options], variant)


SHORTCUTS = (
    Shortcut("option_position", "position", "always the same letter", _answer(by_position), tuple(LETTERS)),
    Shortcut("option_length", "length", "the longest / shortest option", _answer(by_length), ("max", "min")),
    Shortcut("question_overlap", "template", "the option sharing most / fewest words with the question",
             _answer(by_question_overlap), ("max", "min")),
    Shortcut("option_consensus", "family", "the option sharing most / fewest words with the other options",
             _answer(by_consensus), ("max", "min")),
    Shortcut("most_recent_entry", "position", "the option mentioned last / first in the case",
             _answer(by_recency), ("max", "min")),
    Shortcut("most_mentioned", "frequency", "the option mentioned most / least often in the case",
             _answer(by_frequency), ("max", "min")),
)


def _option_lengths(row: dict) -> list[tuple[float, bool]]:
    return [(float(len(o)), k == "ABCDEF".index(row["answer"])) for k, o in enumerate(row["options"])]


def _option_mentions(row: dict) -> list[tuple[float, bool]]:
    context = row["context"]
    return [(float(sum(context.count(u) for u in _units(o))) / len(_units(o)), k == "ABCDEF".index(row["answer"]))
            for k, o in enumerate(row["options"])]


PROBES = (
    Probe("option_chars", "length", "characters of an option", _option_lengths),
    Probe("option_mentions", "frequency", "mentions of an option's parts in the case", _option_mentions),
)
