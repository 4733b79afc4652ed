"""Fitting generated text to a token budget without re-tokenizing the whole text per step.

Each block is counted once as it is produced; a running total decides how many blocks fit; the final
text is counted once, and only if boundary merges push it over the budget are blocks dropped (each
drop costs one more count, and it is rare: blocks are counted with their separator).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .tokens import TokenCounter


@dataclass(frozen=True)
class Fitted:
    blocks: int
    text: str
    tokens: int


def count_fitting(costs: Iterator[int], budget: int, base: int = 0) -> int:
    """Largest m such that base + the first m costs stay within budget (consumes lazily)."""
    total, fitted = base, 0
    for cost in costs:
        if total + cost > budget:
            break
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
