"""Token costs and token starts of lines for a GPT-2-style tokenizer, from a cache of its pre-token pieces.

A GPT-2-style tokenizer (``HFTokenCounter.splits_like_gpt2``: SmolLM2, GPT-2) cuts a text into pieces with one
regex and runs BPE on each piece alone, so a text's tokens are its pieces' tokens, one after another. Invented
names and the templates around them repeat across lines and instances: splitting the lines with the regex and
looking each piece up costs a fraction of a tokenizer pass, and only pieces never seen are tokenized (in one
batch). Used only where it is exact: ASCII text (Python's ``regex`` and the tokenizer's engine read the pattern's
classes alike there) holding no added token's text (the encoder matches those before it splits).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain

import numpy as np

# tokenizers' ByteLevel pre-tokenizer (use_regex): GPT-2's pattern
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
CACHE_LIMIT = 500_000  # pieces remembered per tokenizer; the cache is cleared when full (speed only, never output)


@lru_cache(maxsize=1)
def _pattern():
    import regex  # tiktoken's own dependency

    return regex.compile(GPT2_PATTERN)


class PieceTable:
    """Token counts and token byte lengths of the pieces seen so far, for one tokenizer."""

    def __init__(self, counter) -> None:
        self.counter = counter
        self.counts: dict[str, int] = {}
        self.lengths: dict[str, tuple[int, ...]] = {}

    def learn(self, pieces: Sequence[str]) -> bool:
        """Tokenize the pieces not seen yet (one batch); False if a piece's tokens do not spell it byte for byte
        (then pieces cannot stand for the tokenizer)."""
        new = [piece for piece in dict.fromkeys(pieces) if piece not in self.counts]
        if not new:
            return True
        if len(self.counts) + len(new) > CACHE_LIMIT:  # new tables: lines split before keep the old ones
            self.counts, self.lengths = {}, {}
            new = list(dict.fromkeys(pieces))
        byte_lengths = self.counter._byte_lengths
        for piece, ids in zip(new, self.counter.encode_pieces(new), strict=True):
            lengths = tuple(byte_lengths[np.asarray(ids, dtype=np.int64)].tolist())
            if sum(lengths) != len(piece):  # ASCII: a byte per character
                return False
            self.counts[piece], self.lengths[piece] = len(lengths), lengths
        return True


_TABLES: dict[str, PieceTable] = {}


def piece_table(counter) -> PieceTable:
    table = _TABLES.get(counter.name)
    if table is None or table.counter is not counter:
        table = _TABLES[counter.name] = PieceTable(counter)
    return table


def pieces_apply(counter, text: str) -> bool:
    """Whether ``text`` can be costed piece by piece in ``counter``'s tokens (see the module's notes)."""
    return (bool(getattr(counter, "splits_like_gpt2", False)) and text.isascii()
            and not any(added in text for added in counter.added_texts))


@dataclass(frozen=True)
class PieceLines:
    """Lines joined by newlines (and a final newline), split into pieces once: the ``JoinedTokens`` interface
    (each line owns its tokens and its newline's) without a tokenizer pass over the lines."""

    pieces: list[str]
    bounds: list[int]  # index of each line's first piece, and the number of pieces
    counts: dict[str, int]  # the table's, as they were when the lines were split
    lengths: dict[str, tuple[int, ...]]

    def costs(self) -> list[int]:
        counts = np.fromiter(map(self.counts.__getitem__, self.pieces), dtype=np.int64, count=len(self.pieces))
        total = np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(counts)])
        return np.diff(total[np.asarray(self.bounds, dtype=np.int64)]).tolist()

    def laid_out(self, rows: Sequence[int], offset: int) -> np.ndarray:
        """Token starts of the lines ``rows``, each with its newline, written one after another from character
        ``offset`` (exact: a newline before a non-space character ends a piece)."""
        pieces, bounds, lengths = self.pieces, self.bounds, self.lengths
        flat = np.fromiter(chain.from_iterable(lengths[piece] for row in rows
                                               for piece in pieces[bounds[row]:bounds[row + 1]]), dtype=np.int64)
        ends = np.cumsum(flat) + offset
        return ends - flat


def piece_lines(lines: Sequence[str], counter) -> PieceLines | None:
    """``lines`` joined by newlines as pieces of ``counter``'s pre-tokenizer; None where pieces would not be exact
    (not a GPT-2-style tokenizer, non-ASCII text, an added token's text, a line with a newline, an empty line or
    one starting with whitespace: the newline would then not end a piece)."""
    if not lines or any(not line or line[0].isspace() for line in lines):
        return None
    text = "\n".join(lines) + "\n"
    if not pieces_apply(counter, text):
        return None
    pieces = _pattern().findall(text)
    ends = [k + 1 for k, piece in enumerate(pieces) if piece == "\n"]
    if len(ends) != len(lines):  # a line held a newline
        return None
    table = piece_table(counter)
    if not table.learn(pieces):
        return None
    return PieceLines(pieces, [0, *ends], table.counts, table.lengths)
