"""Fitting a prompt to a token budget without re-tokenizing the whole prompt per step.

The budget is the whole prompt as the model receives it: instructions, context and question, and with
``chat_template`` the tokenizer's chat template around it (DESIGN 3.3: within max(1%, 16) tokens of the
target, never above it). Blocks are counted once, a chunk of blocks per tokenizer call, against a running
total; only the chunk that crosses the budget is counted block by block. The final prompt is counted once;
token counts of joined text differ from the sum of the parts (a merge at a boundary), so the fit is then
corrected by single blocks in whichever direction the exact count asks for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice

from .tokens import TokenCounter, get_token_counter, within_budget_tolerance

CHUNK_BLOCKS = 128  # blocks per tokenizer call: amortizes per-call overhead, bounds wasted work
MAX_CORRECTIONS = 64  # single-block steps after the exact count; boundary effects are a few tokens per join


@dataclass(frozen=True)
class Fitted:
    blocks: int
    text: str
    tokens: int


@dataclass(frozen=True)
class PromptMeter:
    """Counts prompts the way the model will see them: in ``counter``'s tokens, inside its chat template when
    ``chat_template`` is set (lm-eval's ``--apply_chat_template``)."""

    counter: TokenCounter
    chat_template: bool = False

    def model_text(self, prompt: str) -> str:
        return self.counter.chat_prompt(prompt) if self.chat_template else prompt

    def count(self, prompt: str) -> int:
        return self.counter.count(self.model_text(prompt))


def prompt_meter(tokenizer: str, chat_template: bool = False) -> PromptMeter:
    meter = PromptMeter(get_token_counter(tokenizer), chat_template)
    if chat_template:
        meter.model_text("")  # fail fast when the tokenizer has no chat template
    return meter


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


def settle_to_budget(render: Callable[[int], str], count: Callable[[str], int], blocks: int, budget: int,
                     min_blocks: int, max_blocks: int | None = None) -> Fitted:
    """The most blocks near the estimate ``blocks`` whose rendered text counts at most ``budget`` tokens.

    Counts the estimate once; while over, drops a block; while under the tolerance and a block is left
    (``max_blocks``, None = unbounded), adds one if the result still fits. Each step is one exact count."""
    text = render(blocks)
    tokens = count(text)
    while tokens > budget and blocks > min_blocks:
        blocks -= 1
        text = render(blocks)
        tokens = count(text)
    for _ in range(MAX_CORRECTIONS):
        if within_budget_tolerance(tokens, budget) or tokens > budget:
            break
        if max_blocks is not None and blocks >= max_blocks:
            break
        grown = render(blocks + 1)
        grown_tokens = count(grown)
        if grown_tokens > budget:
            break
        blocks, text, tokens = blocks + 1, grown, grown_tokens
    if tokens > budget:
        raise ValueError(f"context_tokens: the smallest prompt ({tokens} tokens) exceeds the target {budget}; "
                         "allowed: a larger target")
    return Fitted(blocks, text, tokens)


def marginal_costs(texts: Sequence[str], counter: TokenCounter, separator: str, left: str, right: str) -> list[int]:
    """Tokens each text adds when inserted between two neighbours (``left`` + sep + text + sep + ``right``).

    Counting a text alone misses the merges at its boundaries (a byte-level BPE splits a trailing ``"\\n\\n"``
    differently from one followed by a name); between neighbours shaped like real blocks, the costs add up
    to the joined text's count."""
    base = counter.count(left + separator + right)
    joined = counter.count_many([left + separator + text + separator + right for text in texts])
    return [tokens - base for tokens in joined]
