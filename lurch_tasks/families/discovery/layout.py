"""Laying out the text: filler sentences in paragraphs, with the family's sentences inserted at depth fractions."""

from __future__ import annotations

from dataclasses import dataclass

from .prompt import SEPARATOR

SENTENCES_PER_PARAGRAPH = 5


@dataclass(frozen=True)
class Insert:
    """A sentence placed at ``fraction`` of the filler; ``block``: a paragraph of its own (the ciphertext)."""

    fraction: float
    text: str
    block: bool = False
    role: str = "filler"  # clue | ciphertext | directive | decoy


@dataclass(frozen=True)
class Laid:
    context: str
    spans: tuple[tuple[int, int], ...]  # character span of every insert, in insert order


def slot_of(fraction: float, n: int) -> int:
    return min(n, max(0, round(fraction * n)))


def lay_out(filler: list[str], inserts: tuple[Insert, ...], n: int, slot_base: int | None = None) -> Laid:
    """The first ``n`` filler sentences, five to a paragraph, with every insert before the filler sentence at its
    slot (inserts of one slot keep their order). Slots are fractions of ``slot_base`` sentences (default ``n``):
    sentences that top up a fitted text go after it without moving what it holds."""
    by_slot: dict[int, list[int]] = {}
    for k, insert in enumerate(inserts):
        by_slot.setdefault(slot_of(insert.fraction, n if slot_base is None else slot_base), []).append(k)
    parts: list[str] = []
    spans: list[tuple[int, int]] = [(0, 0)] * len(inserts)
    state = {"pos": 0, "open": False, "count": 0}

    def write(text: str) -> None:
        parts.append(text)
        state["pos"] += len(text)

    def sentence(text: str) -> tuple[int, int]:
        if state["open"]:
            write(" ")
        elif state["pos"]:
            write(SEPARATOR)
        state["open"] = True
        start = state["pos"]
        write(text)
        return start, state["pos"]

    def block(text: str) -> tuple[int, int]:
        if state["pos"]:
            write(SEPARATOR)
        start = state["pos"]
        write(text)
        state["open"], state["count"] = False, 0
        return start, state["pos"]

    for slot in range(n + 1):
        for k in by_slot.get(slot, ()):
            spans[k] = block(inserts[k].text) if inserts[k].block else sentence(inserts[k].text)
        if slot < n:
            sentence(filler[slot])
            state["count"] += 1
            if state["count"] == SENTENCES_PER_PARAGRAPH:
                state["open"], state["count"] = False, 0
    return Laid("".join(parts), tuple(spans))
