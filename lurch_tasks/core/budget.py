"""Fitting generated text to a token budget without re-tokenizing the whole text per step.

Blocks (each with its separator) are counted once, a chunk of blocks per tokenizer call, against a
running total; only the chunk that crosses the budget is counted block by block. The final text is
counted once, and only if boundary merges push it over the budget are blocks dropped (each drop costs
one more count; rare, because blocks are counted together with their separator).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice

from .tokens import TokenCounter

CHUNK_BLOCKS = 128  # blocks per tokenizer call: amortizes per-call overhead, bounds wasted work


@dataclass(frozen=True)
class Fitted:
    blocks: int
    text: str
    tokens: int


def count_fitting(blocks: Iterator[str], counter: TokenCounter, budget: int, base: int = 0) -> int:
    """Largest m such that ``base`` + tokens of the first m blocks stay within ``budget``.

    ``blocks`` is consumed lazily and may be infinite.
    """
    total, fitted = base, 0
    while True:
        chunk = list(islice(blocks, CHUNK_BLOCKS))
        if not chunk:
            return fitted
        cost = counter.count("".join(chunk))
        if total + cost <= budget:
            total += cost
            fitted += len(chunk)
            continue
        for block in chunk:
            cost = counter.count(block)
            if total + cost > budget:
                return fitted
            total += cost
            fitted += 1
        return fitted


def settle_to_budget(
    render: Callable[[int], str], counter: TokenCounter, blocks: int, budget: int, min_blocks: int
) -> Fitted:
    """Render ``blocks`` blocks and count once; drop trailing blocks while the exact count is over."""
    while True:
        text = render(blocks)
        tokens = counter.count(text)
        if tokens <= budget or blocks <= min_blocks:
            if tokens > budget:
                raise ValueError(f"context_tokens: the smallest context ({tokens} tokens) exceeds the target {budget}")
            return Fitted(blocks, text, tokens)
        blocks -= 1
