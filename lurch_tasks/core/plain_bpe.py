"""cl100k token counts of plain ASCII text in pure Python, from a subset of its ranks: what a cold process uses until
loading tiktoken (~0.08 s: its ranks, then its Rust encoder) pays for itself.

cl100k cuts a text into pieces with one regex and runs byte-pair merging on each piece alone, looking up only the
piece's own substrings. A piece of letters after an optional space (``" ?[A-Za-z]+"``) has only such substrings
(and the space); an apostrophe and one or two letters (``'s``, ``'ll``) only such substrings, letters and the
apostrophe; a piece without letters (digits, punctuation, spaces, newlines) only pieces without letters. So the
ranks of the tokens of those kinds (75k of cl100k's 100k) merge such pieces exactly as the full ranks do, and a
text whose pieces are all of them (an invented name's words, a fact line, a year, a possessive) is counted
exactly; any other text (a letter after a bracket, a longer word after an apostrophe, non-ASCII) is left to
tiktoken.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

# cl100k's pattern (``core.tokens``) on printable ASCII and newlines, where its classes are ``[A-Za-z]`` (letters),
# ``[0-9]`` (numbers) and ``[ \n]`` (whitespace). Its possessive quantifiers never give back what a greedy one would
# (nothing after them could match it), and its ``$`` is the end of the text (``\Z`` here).
PIECES = re.compile(r"""'(?i:[sdmt]|ll|ve|re)|[^\nA-Za-z0-9]?[A-Za-z]+|[0-9]{1,3}| ?[^ \nA-Za-z0-9]+\n*"""
                    r"""|[ \n]+\Z|[ \n]*\n|[ \n]+(?![^ \n])|[ \n]""")
_PRINTABLE = bytes(range(ord(" "), ord("~") + 1)) + b"\n"
# a token (bytes) whose merges stay within the subset: letters after an optional space, an apostrophe and one or
# two letters (cl100k's contractions), or no letters at all
SUBSET_TOKEN = re.compile(rb" ?[A-Za-z]+|'[A-Za-z]{1,2}|[\n -@\[-`{-~]+")
_SUBSET_PIECE = re.compile(r" ?[A-Za-z]+|'[A-Za-z]{1,2}|[\n -@\[-`{-~]+")

# Estimated CPU cost of the work done here, in seconds (measured on the bench: splitting and looking pieces up per
# character; merging a new piece), so a process stops at about what loading tiktoken costs (ski rental).
CHAR_COST = 0.5e-6
NEW_PIECE_COST = 6e-6
BUDGET = 0.05
# A single request (a text, or the new words of one call) estimated above this share of the budget loads tiktoken
# at once: it is one instance's worth of a long context (~2,600 new names at 128k tokens), whose next few instances
# would spend the rest of the budget and load it anyway.
LARGEST_SHARE = 0.25


_NEVER = 1 << 62  # the rank of a pair that is no token


def subset_ranks(ranks: dict[bytes, int]) -> dict[bytes, int]:
    """The ranks of the tokens ``SUBSET_TOKEN`` matches: all that merging a plain piece ever looks up."""
    fullmatch = SUBSET_TOKEN.fullmatch
    return {token: rank for token, rank in ranks.items() if fullmatch(token)}


def merged_lengths(piece: bytes, ranks: dict[bytes, int]) -> tuple[int, ...]:
    """Byte lengths of the tokens tiktoken encodes one piece as: the piece itself when it is a token, else byte-pair
    merging (the adjacent pair whose joined bytes have the lowest rank, the leftmost of equals, until no pair is a
    token), as tiktoken's ``_byte_pair_merge``."""
    size = len(piece)
    if size == 1 or piece in ranks:
        return (size,)
    get = ranks.get
    cuts = list(range(size + 1))  # where each part starts, and the piece's end
    pairs = [get(piece[k:k + 2], _NEVER) for k in range(size - 1)]  # rank of part k joined with part k + 1
    best = min(pairs)
    while best != _NEVER:
        k = pairs.index(best)  # the leftmost of equal ranks
        del cuts[k + 1]
        del pairs[k]
        if not pairs:
            break
        if k < len(pairs):
            pairs[k] = get(piece[cuts[k]:cuts[k + 2]], _NEVER)
        if k:
            pairs[k - 1] = get(piece[cuts[k - 1]:cuts[k + 1]], _NEVER)
        best = min(pairs)
    return tuple([end - start for start, end in zip(cuts, cuts[1:], strict=False)])


def plain(text: str) -> bool:
    """Whether ``text`` holds only printable ASCII and newlines (where ``PIECES`` is cl100k's split)."""
    return text.isascii() and not text.encode("ascii").translate(None, _PRINTABLE)


class PlainCounter:
    """cl100k's tokens of plain texts from the subset's ranks, each piece merged once per process; None from any
    method where a text is not plain or holds a piece outside the subset, or once the work done here reaches
    ``budget`` (then the caller loads tiktoken and uses it from then on).

    ``ranks``: the subset, or what reads it (None: not available, and this counter stops), called when a piece is
    first merged: a process whose first text is not plain (a prompt in cl100k's own run) never reads them."""

    def __init__(self, ranks: dict[bytes, int] | Callable[[], dict[bytes, int] | None],
                 budget: float | None = None) -> None:
        self._ranks = ranks
        self.budget, self.spent = BUDGET if budget is None else budget, 0.0
        self.lengths: dict[str, tuple[int, ...]] = {}

    @property
    def exhausted(self) -> bool:
        return self.spent >= self.budget

    def _merge(self, new: list[str], cost: float) -> bool:
        """Merge the pieces ``new`` at an estimated ``cost``; False (and no more counting) past the budget or
        without ranks."""
        if self.spent + cost > self.budget or cost > self.budget * LARGEST_SHARE:  # known before merging
            self.spent = self.budget
            return False
        if not new:
            return True
        ranks = self._ranks
        if callable(ranks):
            ranks = self._ranks = ranks()
        if ranks is None:
            self.spent = self.budget
            return False
        lengths = self.lengths
        for piece in new:
            lengths[piece] = merged_lengths(piece.encode("ascii"), ranks)
        self.spent += cost
        return True

    def pieces(self, text: str) -> list[str] | None:
        """``text``'s pieces, each with its token lengths known; None where this counter does not apply."""
        if self.spent + len(text) * CHAR_COST > self.budget or len(text) * CHAR_COST > self.budget * LARGEST_SHARE:
            self.spent = self.budget  # a text this long (a prompt): tiktoken from now on
            return None
        if not plain(text):
            return None
        pieces = PIECES.findall(text)
        lengths = self.lengths
        new = [piece for piece in dict.fromkeys(pieces) if piece not in lengths]
        if not all(map(_SUBSET_PIECE.fullmatch, new)):
            return None
        return pieces if self._merge(new, len(text) * CHAR_COST + len(new) * NEW_PIECE_COST) else None

    def word_counts(self, words: Sequence[str]) -> list[int] | None:
        """Tokens of each word piece alone (``" ?[A-Za-z]+"``, which the caller has checked: no split, no check)."""
        lengths = self.lengths
        new = [word for word in dict.fromkeys(words) if word not in lengths]
        if not self._merge(new, len(new) * NEW_PIECE_COST):
            return None
        return [len(lengths[word]) for word in words]

    def count(self, text: str) -> int | None:
        pieces = self.pieces(text)
        return None if pieces is None else sum(map(len, map(self.lengths.__getitem__, pieces)))

    def token_lengths(self, text: str) -> list[int] | None:
        """Byte length of each token of ``text`` (a character per byte: the text is ASCII)."""
        pieces = self.pieces(text)
        if pieces is None:
            return None
        lengths = self.lengths
        return [size for piece in pieces for size in lengths[piece]]

    def count_many(self, texts: Sequence[str]) -> list[int] | None:
        counts = []
        for text in texts:
            count = self.count(text)
            if count is None:
                return None
            counts.append(count)
        return counts
