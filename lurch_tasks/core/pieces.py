"""Token costs and token starts of lines for a GPT-2-style tokenizer, from a cache of its pre-token pieces.

A GPT-2-style tokenizer (``TokenCounter.splits_like_gpt2``: SmolLM2, GPT-2) cuts a text into pieces with one
regex and runs BPE on each piece alone, so a text's tokens are its pieces' tokens, one after another. Invented
names and the templates around them repeat across lines and instances: splitting the lines with the regex and
looking each piece up costs a fraction of a tokenizer pass, and only pieces never seen are tokenized (in one
batch). Used only where it is exact: ASCII text (Python's ``regex`` and the tokenizer's engine read the pattern's
classes alike there) holding no added token's text (the encoder matches those before it splits).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain, repeat

import numpy as np

# tokenizers' ByteLevel pre-tokenizer (use_regex) splits with GPT-2's pattern; on printable ASCII text and newlines
# (letters A-Z and a-z, digits 0-9, whitespace the space and the newline) it reads as ``_ASCII_PIECES``, which the
# standard library's engine runs twice as fast as ``regex`` runs the original
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
_ASCII_PIECES = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^ \nA-Za-z0-9]+"""
                           r"""|[ \n]+(?![^ \n])|[ \n]+""")
_PRINTABLE = bytes(range(ord(" "), ord("~") + 1)) + b"\n"  # the newline and printable ASCII


def printable(text: str) -> bool:
    """Whether an ASCII ``text`` holds only printable characters and newlines (a C pass deleting them: a regex
    for the others scans a long text several times slower)."""
    return not text.encode("ascii").translate(None, _PRINTABLE)
CACHE_LIMIT = 500_000  # pieces remembered per tokenizer; the cache is cleared when full (speed only, never output)


def split_pieces(text: str) -> list[str]:
    """GPT-2's pieces of a printable ASCII text (``pieces_apply``)."""
    return _ASCII_PIECES.findall(text)


def lengths_in_one_pass(pieces: Sequence[str],
                        token_lengths: Callable[[str], np.ndarray]) -> list[tuple[int, ...]] | None:
    """Token byte lengths of each piece alone, from one encoding of the pieces joined by newlines (a batch call
    costs an object per piece): exact when every piece and every newline starts and ends on a token boundary and
    each newline is one token, which is checked; None where not (then tokenize them one by one). ASCII only."""
    if not pieces:
        return []
    lengths = token_lengths("\n".join(pieces) + "\n")
    ends = np.cumsum(lengths)
    widths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces)) + 1
    line_ends = np.cumsum(widths)
    last = np.searchsorted(ends, line_ends - 1)  # each piece's last token, if it ends where the piece does
    newline = np.searchsorted(ends, line_ends)
    if (newline >= len(ends)).any() or (last >= len(ends)).any():
        return None
    if not (np.array_equal(ends[last], line_ends - 1) and np.array_equal(ends[newline], line_ends)
            and np.array_equal(newline, last + 1)):
        return None
    flat, firsts = lengths.tolist(), [0, *(newline[:-1] + 1).tolist()]
    return [tuple(flat[a:b + 1]) for a, b in zip(firsts, last.tolist(), strict=True)]


class PieceTable:
    """Token counts and token byte lengths of the pieces seen so far, for one tokenizer."""

    def __init__(self, counter) -> None:
        self.counter = counter
        self.counts: dict[str, int] = {}
        self.lengths: dict[str, tuple[int, ...]] = LengthsOnDemand(self, self.counts)
        self._spelling: object | None = None  # the BPE model once checked (``_spelling_model``), or False

    def _token_lengths(self, text: str) -> np.ndarray:
        return self.counter._byte_lengths[np.asarray(self.counter._ids(text), dtype=np.int64)]

    def _model_lengths(self, words: list[str]) -> list[tuple[int, ...]] | None:
        """Token byte lengths of each piece from the BPE model itself, skipping the pre-tokenizer (the pieces are
        its pieces already): a piece in the byte-level alphabet (printable ASCII is itself, a space is "\u0120")
        runs through the very merges an encoding of it would, at half the cost for new names. None where the
        model is not BPE."""
        model = getattr(getattr(self.counter, "_backend", None), "model", None)
        if type(model).__name__ != "BPE" or not hasattr(model, "tokenize"):
            return None
        tokenize = model.tokenize
        return [tuple(len(token.value) for token in tokenize(word.translate(_BYTE_SYMBOLS))) for word in words]

    def _spelling_model(self):
        """The BPE model where its tokens of any printable ASCII word spell the word byte for byte, so a word's count
        is its tokens' number and the check ``learn`` makes on each word's lengths holds for every word: every
        printable character (in the byte-level alphabet) is a token of its own, and merges only join tokens (no
        subword prefix or word suffix, no dropout). None elsewhere (then every word's lengths are read at once)."""
        if self._spelling is None:
            model = getattr(getattr(self.counter, "_backend", None), "model", None)
            spells = (type(model).__name__ == "BPE" and hasattr(model, "tokenize") and not model.dropout
                      and not model.continuing_subword_prefix and not model.end_of_word_suffix
                      and all(model.token_to_id(chr(c).translate(_BYTE_SYMBOLS)) is not None
                              for c in range(ord(" "), ord("~") + 1)))
            self._spelling = model if spells else False
        return self._spelling or None

    def learn(self, pieces: Sequence[str]) -> bool:
        """Tokenize the pieces not seen yet; False if a piece's tokens do not spell it byte for byte (then pieces
        cannot stand for the tokenizer)."""
        new = [piece for piece in dict.fromkeys(pieces) if piece not in self.counts]
        if not new:
            return True
        if len(self.counts) + len(new) > CACHE_LIMIT:  # new tables: lines split before keep the old ones
            self.counts = {}
            self.lengths = LengthsOnDemand(self, self.counts)
            new = list(dict.fromkeys(pieces))
        # whitespace pieces would run into the joining newlines: those alone (few, and soon all known)
        spaced = [piece for piece in new if piece[-1].isspace()]
        words = [piece for piece in new if not piece[-1].isspace()]
        model = self._spelling_model() if words else None
        if model is not None:  # word pieces counted by the model; their lengths only when read (``LengthsOnDemand``)
            tokenize = model.tokenize
            self.counts.update(zip(words, [len(tokenize(word.translate(_BYTE_SYMBOLS))) for word in words],
                                   strict=True))
            words = []
        found = self._model_lengths(words) if words else []
        if found is None:
            found = lengths_in_one_pass(words, self._token_lengths)
        if found is None:
            words, spaced, found = [], new, []
        if spaced:
            byte_lengths = self.counter._byte_lengths
            found += [tuple(byte_lengths[np.asarray(ids, dtype=np.int64)].tolist())
                      for ids in self.counter.encode_pieces(spaced)]
        for piece, lengths in zip(words + spaced, found, strict=True):
            if sum(lengths) != len(piece):  # ASCII: a byte per character
                return False
            self.counts[piece], self.lengths[piece] = len(lengths), lengths
        return True


class LengthsOnDemand(dict):
    """A piece table's token byte lengths: a word piece counted by the model alone (``PieceTable.learn``) is
    tokenized again for its lengths when they are first read (a fit reads only counts; a prompt's token starts the
    lengths of its last line and question)."""

    def __init__(self, table: PieceTable, counts: dict[str, int]) -> None:
        super().__init__()
        self.table, self.counts = table, counts  # the counts learned with these lengths (a full table starts afresh)

    def __missing__(self, piece: str) -> tuple[int, ...]:
        model = self.table._spelling_model()
        if model is None or piece not in self.counts:
            raise KeyError(piece)
        lengths = tuple([len(token.value) for token in model.tokenize(piece.translate(_BYTE_SYMBOLS))])
        self[piece] = lengths
        return lengths


_BYTE_SYMBOLS = {ord(" "): "\u0120"}  # GPT-2's byte-level alphabet on a word piece: printable ASCII maps to itself
_TABLES: dict[str, PieceTable] = {}


def piece_table(counter) -> PieceTable:
    table = _TABLES.get(counter.name)
    if table is None or table.counter is not counter:
        table = _TABLES[counter.name] = PieceTable(counter)
    return table


def pieces_apply(counter, text: str) -> bool:
    """Whether ``text`` can be costed piece by piece in ``counter``'s tokens (see the module's notes)."""
    return (counter.splits_like_gpt2 and text.isascii()
            and printable(text) and not counter.holds_added_text(text))


_BLANK_START = re.compile(r"\n(?:\s|\Z)")


def starts_every_line(text: str) -> bool:
    """Whether every newline of ``text`` is followed by a character that is not whitespace: ``"\n" +
    "\n".join(lines)`` holds no empty line and none starting with whitespace (one scan in C)."""
    return _BLANK_START.search(text) is None


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
        pieces, bounds = self.pieces, self.bounds
        # a Python step per row only: the pieces and their tokens are chained in C
        laid = chain.from_iterable([pieces[bounds[row]:bounds[row + 1]] for row in rows])
        flat = np.fromiter(chain.from_iterable(map(self.lengths.__getitem__, laid)), dtype=np.int64)
        ends = np.cumsum(flat) + offset
        return ends - flat

    def reference_costs(self, lines: Sequence[str], reference) -> list[int]:
        """Each line's tokens (with its newline) in the reference tokenizer (cl100k), from the same pieces: a line
        of words and single spaces ending in a full stop (every fact template but a year's) splits there into
        the same words and the piece ``".\n"``, so it costs its words' tokens (each word's counted once per
        process) plus that piece's; any other line is tokenized (one pass over those lines: cl100k is
        ``sums_over_lines`` over lines that start with a non-space character)."""
        from .budget import joined_costs

        table = learn_reference_words(self.pieces, reference)
        per_piece = np.fromiter(map(table.get, self.pieces, repeat(0)), dtype=np.int64, count=len(self.pieces))
        total = np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(per_piece)])
        costs = np.diff(total[np.asarray(self.bounds, dtype=np.int64)]).tolist()
        others = [k for k, simple in enumerate(map(_SIMPLE_LINE.fullmatch, lines)) if simple is None]
        for k, cost in zip(others, joined_costs([lines[k] for k in others], reference, "\n"), strict=True):
            costs[k] = cost
        return costs


class ReferenceOnDemand:
    """``PieceLines.reference_costs`` of the lines asked for (``need``), each costed once: a line's reference cost
    depends on its own pieces only (and, for a line that is not simple, on its own text where the reference
    tokenizer is ``newline_additive`` over the lines, which the caller checks), so the lines a prompt never holds
    are never costed."""

    def __init__(self, joined: PieceLines, lines: Sequence[str], reference) -> None:
        self.joined, self.lines, self.reference = joined, lines, reference
        self.values: list[int | None] = [None] * len(lines)

    def need(self, rows: Sequence[int]) -> list[int | None]:
        values = self.values
        missing = [row for row in dict.fromkeys(rows) if values[row] is None]
        if missing:
            pieces, bounds, own = self.joined.pieces, self.joined.bounds, [0]
            for row in missing:
                own.append(own[-1] + bounds[row + 1] - bounds[row])
            part = PieceLines(list(chain.from_iterable([pieces[bounds[row]:bounds[row + 1]] for row in missing])),
                              own, self.joined.counts, self.joined.lengths)
            for row, cost in zip(missing, part.reference_costs([self.lines[row] for row in missing], self.reference),
                                 strict=True):
                values[row] = cost
        return values


_SIMPLE_LINE = re.compile(r"[A-Za-z]+(?: [A-Za-z]+)*\.")
_WORD = re.compile(r" ?[A-Za-z]+")
_REFERENCE_TABLES: dict[str, dict[str, int]] = {}


def learn_reference_words(pieces: Sequence[str], reference) -> dict[str, int]:
    """The reference tokenizer's table of word pieces (and ``"."``, ``"\n"``), with every word piece of ``pieces``
    not in it yet counted (in one pass where ``lengths_in_one_pass`` allows)."""
    table = _reference_table(reference)
    new = [piece for piece in dict.fromkeys(pieces) if piece not in table and _WORD.fullmatch(piece)]
    # cl100k before tiktoken is loaded (``core.plain_bpe``): each word merged alone, no text to split
    plain = getattr(reference, "plain_word_counts", None)
    counts = None if plain is None or not new else plain(new)
    if counts is None:
        found = lengths_in_one_pass(new, reference.token_lengths)
        counts = [reference.count(piece) for piece in new] if found is None else list(map(len, found))
    table.update(zip(new, counts, strict=True))
    return table


def _reference_table(reference) -> dict[str, int]:
    table = _REFERENCE_TABLES.get(reference.name)
    if table is None or len(table) > CACHE_LIMIT:
        # a simple line's full stop is the piece ".\n" in cl100k; its newline adds nothing more
        table = _REFERENCE_TABLES[reference.name] = {".": reference.count(".\n"), "\n": 0}
    return table


def piece_lines(lines: Sequence[str], counter) -> PieceLines | None:
    """``lines`` joined by newlines as pieces of ``counter``'s pre-tokenizer; None where pieces would not be exact
    (not a GPT-2-style tokenizer, non-ASCII text, an added token's text, a line with a newline, an empty line or
    one starting with whitespace: the newline would then not end a piece)."""
    text = "\n".join(lines) + "\n"
    if not lines or not starts_every_line("\n" + text[:-1]) or not pieces_apply(counter, text):
        return None
    pieces = split_pieces(text)
    ends = [k + 1 for k, piece in enumerate(pieces) if piece == "\n"]
    if len(ends) != len(lines):  # a line held a newline
        return None
    table = piece_table(counter)
    if not table.learn(pieces):
        return None
    return PieceLines(pieces, [0, *ends], table.counts, table.lengths)


class PieceCounter:
    """``count`` and ``token_starts`` of whole texts from the piece table where pieces apply (a prompt's head, its
    question, a line with the question), the tokenizer's own elsewhere."""

    def __init__(self, counter) -> None:
        self.counter, self.table = counter, piece_table(counter)

    def _pieces(self, text: str) -> list[str] | None:
        if not pieces_apply(self.counter, text):
            return None
        pieces = split_pieces(text)
        return pieces if self.table.learn(pieces) else None

    def count(self, text: str) -> int:
        pieces = self._pieces(text)
        return self.counter.count(text) if pieces is None else sum(map(self.table.counts.__getitem__, pieces))

    def token_starts(self, text: str) -> np.ndarray:
        pieces = self._pieces(text)
        if pieces is None:
            return self.counter.token_starts(text)
        flat = np.fromiter(chain.from_iterable(map(self.table.lengths.__getitem__, pieces)), dtype=np.int64)
        return np.cumsum(flat) - flat
