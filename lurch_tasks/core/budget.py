"""Fitting a prompt to a token budget without re-tokenizing the whole prompt per step.

The budget is the whole prompt as the model receives it: instructions, context and question, and with
``chat_template`` the tokenizer's chat template around it (DESIGN 3.3: within max(1%, 16) tokens of the
target, never above it). Generators estimate the fit from block costs they know without tokenizing (cached
per block or per word), then the prompt is tokenized once; token counts of joined text can differ from the
sum of the parts (a merge at a boundary), so the fit is corrected by single blocks in whichever direction
the exact count asks for. That one encoding also yields the context's token count and evidence offsets.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .pieces import PieceCounter, PieceLines, piece_lines, starts_every_line
from .tokens import (
    REFERENCE_TOKENIZER,
    Encoded,
    StartsEncoded,
    TokenCounter,
    get_token_counter,
    within_budget_tolerance,
)

MAX_CORRECTIONS = 64  # single-block steps after the exact count; boundary effects are a few tokens per join


@dataclass(frozen=True)
class Fitted:
    blocks: int
    text: str
    tokens: int


@dataclass(frozen=True)
class PromptEncoding:
    """One tokenization of a prompt as the model reads it."""

    prompt: str
    encoded: Encoded  # of the model's text: the prompt, inside the chat template when there is one
    offset: int  # where the plain prompt starts in the model's text

    @property
    def tokens(self) -> int:
        return self.encoded.tokens

    def tokens_between(self, start: int, end: int) -> int:
        """Tokens that start inside the character span [start, end) of the plain prompt."""
        return self.encoded.first_token_at(self.offset + end) - self.encoded.first_token_at(self.offset + start)


class PromptMeter:
    """Counts prompts the way the model will see them: in ``counter``'s tokens, inside its chat template when
    ``chat_template`` is set (lm-eval's ``--apply_chat_template``).

    It remembers the last two prompts it encoded, so a generator that fits a prompt and then measures it
    (context tokens, evidence offsets) tokenizes it once."""

    RECENT = 2  # a fit's last two counts: the prompt it keeps and the one step it tried beyond

    def __init__(self, counter: TokenCounter, chat_template: bool = False) -> None:
        self.counter, self.chat_template = counter, chat_template
        self._recent: list[PromptEncoding] = []

    def model_text(self, prompt: str) -> str:
        return self.counter.chat_prompt(prompt) if self.chat_template else prompt

    def encode(self, prompt: str) -> PromptEncoding:
        for known in self._recent:
            if known.prompt == prompt:
                return known
        text = self.model_text(prompt)
        offset = text.find(prompt) if self.chat_template else 0
        if offset < 0:
            raise ValueError(f"chat_template: the chat template of {self.counter.name!r} rewrites the prompt, so its "
                             "context cannot be located in it; allowed: false")
        encoding = PromptEncoding(prompt, self.counter.encoding(text), offset)
        self._recent = [encoding, *self._recent[: self.RECENT - 1]]
        return encoding

    def count(self, prompt: str) -> int:
        return self.encode(prompt).tokens

    def remember(self, prompt: str, encoded: Encoded) -> None:
        """``encoded``: the exact tokenization of ``prompt`` (no chat template), composed by the caller from
        parts it tokenized already; ``encode`` then returns it without a pass."""
        if self.chat_template:
            raise ValueError("remember: a prompt inside a chat template is encoded as the model reads it")
        self._recent = [PromptEncoding(prompt, encoded, 0), *self._recent[: self.RECENT - 1]]

    @property
    def reads_reference(self) -> bool:
        """Whether the model reads plain prompts in the reference tokenizer (its encodings are the reference's)."""
        return self.counter.name == REFERENCE_TOKENIZER and not self.chat_template

    def reference_starts(self, prompt: str) -> np.ndarray:
        """Token starts of the plain prompt in the reference tokenizer (evidence offsets): the fit's own
        encoding when the meter counts plain prompts in the reference tokenizer, else one more pass."""
        if self.reads_reference:
            encoded = self.encode(prompt).encoded
            if isinstance(encoded, StartsEncoded):
                return encoded.starts
        return get_token_counter(REFERENCE_TOKENIZER).token_starts(prompt)


def prompt_meter(tokenizer: str, chat_template: bool = False) -> PromptMeter:
    meter = PromptMeter(get_token_counter(tokenizer), chat_template)
    if chat_template:
        meter.model_text("")  # fail fast when the tokenizer has no chat template
    return meter


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


@dataclass(frozen=True)
class JoinedTokens:
    """One tokenization of texts joined by a separator (and a final separator): the token starts, each text's
    first character (``bounds``, one more than the texts), and the index of each text's first token (``cuts``;
    a text owns the tokens that start inside it or its separator)."""

    starts: np.ndarray
    bounds: np.ndarray
    cuts: np.ndarray

    def costs(self) -> list[int]:
        return np.diff(self.cuts).tolist()

    def laid_out(self, rows: Sequence[int], offset: int) -> np.ndarray:
        """Token starts of the texts ``rows``, each with its separator, written one after another from character
        ``offset``: this tokenization's starts, moved, with no second pass. Exact where every join is a boundary
        the tokenizer never merges across (``sums_over_lines``)."""
        picked = np.asarray(rows, dtype=np.int64)
        if not len(picked):
            return np.zeros(0, dtype=np.int64)
        first, counts = self.cuts[picked], self.cuts[picked + 1] - self.cuts[picked]
        widths = self.bounds[picked + 1] - self.bounds[picked]
        moved = offset + np.cumsum(widths) - widths - self.bounds[picked]  # each text's new start minus its old
        before = np.cumsum(counts) - counts
        index = np.arange(int(counts.sum()), dtype=np.int64) + np.repeat(first - before, counts)
        return self.starts[index] + np.repeat(moved, counts)


def joined_tokens(texts: Sequence[str], counter: TokenCounter, separator: str) -> JoinedTokens:
    """One tokenization of ``texts`` joined by ``separator`` (and a final separator)."""
    widths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) + len(separator)
    bounds = np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(widths)])
    starts = counter.token_starts(separator.join(texts) + separator)
    return JoinedTokens(starts, bounds, np.searchsorted(starts, bounds, side="left"))


def line_tokens(texts: Sequence[str], counter: TokenCounter, separator: str) -> JoinedTokens | PieceLines:
    """``joined_tokens``, from cached pieces where the tokenizer allows (``core.pieces``: no tokenizer pass)."""
    if separator == "\n" and (pieces := piece_lines(texts, counter)) is not None:
        return pieces
    return joined_tokens(texts, counter, separator)


class CostsOnDemand:
    """``joined_costs`` of texts, each counted the first time it is asked for (``need``, one pass over the
    texts asked for at once): for a tokenizer that ``sums_over_lines`` over the texts, a text costs the same
    in any company, so the texts a prompt never holds are never tokenized."""

    def __init__(self, texts: Sequence[str], counter: TokenCounter, separator: str) -> None:
        self.texts, self.counter, self.separator = texts, counter, separator
        self.values: list[int | None] = [None] * len(texts)

    def need(self, rows: Sequence[int]) -> list[int | None]:
        values = self.values
        missing = [row for row in dict.fromkeys(rows) if values[row] is None]
        if missing:
            for row, cost in zip(missing, joined_costs([self.texts[row] for row in missing], self.counter,
                                                       self.separator), strict=True):
                values[row] = cost
        return values


def _joined_cuts(texts: Sequence[str], counter: TokenCounter, separator: str) -> tuple[np.ndarray, np.ndarray,
                                                                                       np.ndarray]:
    joined = joined_tokens(texts, counter, separator)
    return joined.starts, joined.bounds, joined.cuts


def joined_costs(texts: Sequence[str], counter: TokenCounter, separator: str) -> list[int]:
    """Tokens each text adds to a list of such texts joined by ``separator``: one tokenization of the whole
    list, each text owning the tokens that start inside it or its following separator.

    Counting a text alone misses the merges at its boundaries (a byte-level BPE splits a trailing ``"\\n\\n"``
    differently from one followed by a name); between real neighbours the costs add up to the joined count
    (up to the list's two ends, which belong to the prompt's frame)."""
    if not texts:
        return []
    return joined_tokens(texts, counter, separator).costs()


def joined_starts(texts: Sequence[str], counter: TokenCounter, separator: str) -> list[np.ndarray]:
    """Token starts of each text, relative to it, in a list of such texts joined by ``separator`` (the same
    single tokenization as ``joined_costs``)."""
    if not texts:
        return []
    starts, bounds, cuts = _joined_cuts(texts, counter, separator)
    cuts, firsts = cuts.tolist(), bounds.tolist()[:-1]
    return [(starts[a:b] - first).astype(np.int32) for a, b, first in zip(cuts[:-1], cuts[1:], firsts, strict=True)]


def sums_over_lines(counter: TokenCounter, head: str, lines: Sequence[str]) -> bool:
    """Whether ``head + "\\n".join(lines) + tail`` counts, in ``counter``, exactly as ``LineSum`` sums it: ``head``
    (ending with a newline) and each line but the last with its newline, as each costs before a line
    (``newline_costs``, or a line's ``joined_costs`` among such lines), plus one pass over the last line and
    ``tail``; so a fit sums known costs instead of tokenizing the prompt per step.

    True when every newline the joins put before a line is a line break the tokenizer never cuts across
    (``TokenCounter.newline_ends_piece``; ``core.tokens.NewlineRules`` gives the argument) and every line starts
    with a non-whitespace character (no empty line; a line's own newlines are its own business). Where the
    newline is a piece of its own (``newline_separates``: GPT-2's split) a line must also end with one: the last
    of the texts ``joined_costs`` tokenizes ends the text, and there ``\\s+(?!\\S)`` takes the whitespace before
    the newline and the newline as one piece."""
    if not head.endswith("\n") or not counter.newline_ends_piece:
        return False
    if not lines:
        return True
    ends_free = not counter.newline_separates
    body = "\n".join(lines)
    if starts_every_line("\n" + body) and (ends_free or not space_before_newline(body + "\n")):
        return True  # (one scan each in C; the exact test per line decides when a line holds a newline)
    return all(line and not line[0].isspace() and (ends_free or not line[-1].isspace()) for line in lines)


# ``\s\n`` written to start with its newline: the engine then jumps from newline to newline (a fast literal scan)
# and looks back one character, where ``\s\n`` tries its class at every character (ten times slower on a prompt)
_SPACE_BEFORE_NEWLINE = re.compile(r"\n(?<=\s\n)")


def space_before_newline(text: str) -> bool:
    """Whether a whitespace character stands right before a newline in ``text`` (``\\s\\n``)."""
    return _SPACE_BEFORE_NEWLINE.search(text) is not None


@dataclass(frozen=True)
class SummedPrompt:
    """A prompt's token count and its context's, summed from counts of its parts (``LineSum``): what a
    generator reads from a ``PromptEncoding`` (``tokens``, and ``tokens_between`` over the context's span)."""

    tokens: int
    context_span: tuple[int, int]  # characters of the context in the prompt
    context_tokens: int

    def tokens_between(self, start: int, end: int) -> int:
        if (start, end) != self.context_span:
            raise ValueError(f"tokens_between: only the context's span {self.context_span} is known, not "
                             f"{(start, end)}")
        return self.context_tokens


def newline_costs(counter: TokenCounter, texts: Sequence[str], counts: Sequence[int] | None = None) -> list[int]:
    """Tokens of each text followed by a newline, alone: what it adds to a prompt where a non-whitespace character
    follows that newline (``sums_over_lines``). From the texts' own ``counts`` when the newline is always a token of
    its own (``newline_separates``) or, in the reference tokenizer, when the text's last piece is known
    (``reference_newline_cost``); else one pass over each text and its newline."""
    if counter.newline_separates:
        return [c + 1 for c in (counter.count_many(list(texts)) if counts is None else counts)]
    if counts is not None and counter.name == REFERENCE_TOKENIZER:
        return [reference_newline_cost(counter, text, count) for text, count in zip(texts, counts, strict=True)]
    return counter.count_many([text + "\n" for text in texts])


_ASCII_PUNCTUATION = string.punctuation  # the printable ASCII characters cl100k's regex reads as [^\s\p{L}\p{N}]


def reference_newline_cost(counter: TokenCounter, text: str, count: int) -> int:
    """``counter.count(text + "\\n")`` in the reference tokenizer, from ``count`` (the text's own count) without a
    pass when the text ends with printable ASCII: cl100k encodes each piece of its regex alone, and a newline
    only joins the text's last piece when that piece is punctuation (`` ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+``: a
    space, if one comes right before it, and the whole run of punctuation at the end), after a letter or digit
    it is a piece (and token) of its own. Other texts take one pass."""
    last = text[-1:]
    if last.isascii() and last.isalnum():
        return count + 1
    if last and last in _ASCII_PUNCTUATION:
        start = len(text.rstrip(_ASCII_PUNCTUATION))
        before = text[start - 1:start]
        if not before or (before.isascii() and before.isalnum()) or before == " ":
            piece = text[start - (before == " "):]
            return count - _reference_piece_count(piece) + _reference_piece_count(piece + "\n")
    return counter.count(text + "\n")


@lru_cache(maxsize=4096)
def _reference_piece_count(piece: str) -> int:
    return get_token_counter(REFERENCE_TOKENIZER).count(piece)


class LineSum:
    """The one way a prompt ``head + "\\n".join(lines) + tail`` is counted from its lines' costs, exact where
    ``sums_over_lines`` (which the caller checks): ``head`` with its newline (counted once), each line but the last
    with its newline (``line_costs``), and one pass over the last line and ``tail`` by ``parts`` (the counter, or
    a ``core.pieces.PieceCounter`` of it)."""

    def __init__(self, counter: TokenCounter, head: str, parts: PieceCounter | None = None) -> None:
        if not head.endswith("\n"):
            raise ValueError("LineSum: a head that ends with a newline")
        self.head, self.parts = head, counter if parts is None else parts
        self.head_tokens = newline_costs(counter, [head[:-1]])[0]

    def prompt(self, lines: Sequence[str], line_costs: Sequence[int], tail: str) -> SummedPrompt:
        """The counts of the prompt holding ``lines`` (at least one; ``line_costs``: theirs, the last one unread)."""
        if not lines:
            raise ValueError("LineSum.prompt: at least one line")
        body = sum(line_costs[:-1])  # every line but the last, each with its newline
        starts = self.parts.token_starts(lines[-1] + tail)
        in_last = int(np.searchsorted(starts, len(lines[-1]), side="left"))  # the last line's own tokens
        context_chars = sum(map(len, lines)) + len(lines) - 1
        return SummedPrompt(self.head_tokens + body + len(starts), (len(self.head), len(self.head) + context_chars),
                            body + in_last)
