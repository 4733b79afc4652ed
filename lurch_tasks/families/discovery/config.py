"""Discovery family configuration (DESIGN 4.5): every knob, validated before any generation starts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from ...core.config import require, require_budget_knobs, require_choice, require_int_range, require_list
from ...core.tokens import REFERENCE_TOKENIZER

KINDS = ("cipher", "directive", "code")
REQUESTS = ("discovery", "request")
# Every cipher carries a shift: a keyless Atbash or reversal could be guessed without the clue on a quarter of the
# rows (the shortcut audit's "decode without the key"), so the mirror and the reversal are followed by a Caesar shift.
CIPHERS = ("caesar", "atbash", "reverse", "keyword")
MIN_SHIFT, MAX_SHIFT = 3, 12  # the clue styles can name any of these (number words, sums, letters of a word)
MAX_CONTEXT_TOKENS = 1_048_576
MIN_CONTEXT_TOKENS = 256
MAX_DECOYS = 10  # one distinct lead-in per decoy quote (directive.DECOYS)
MAX_PLANTED = 6  # one planted function per inefficiency kind (code.KINDS)


class Cell(NamedTuple):
    """One point of the knob grid: the cipher (or "directive"), the clue-to-target distance and a token length."""

    method: str
    distance: float
    length: int


class CodeCell(NamedTuple):
    """A cell of the code kind: how many inefficient functions are planted, and the token length."""

    method: str
    planted: int
    length: int


@dataclass(frozen=True)
class DiscoveryConfig:
    """Knobs of the discovery family.

    ``kind``: "cipher" (a clue names a cipher's key; a line of ciphertext elsewhere), "directive" (one sentence
    says which statement unlocks a reward) or "code" (``planted`` deliberately inefficient functions among efficient
look-alikes in a long Python module). ``request``: "discovery" asks only
    for a response to the text; "request" says what is hidden in it. Rows of configs that differ only in
    ``request`` are matched pairs (same text, same answer; ``pair_key``).

    ``distances``: the share of the context between the clue (or directive) and the ciphertext (cipher) or the
    nearest decoy quote's slot (directive: the directive's depth is seeded; the distance places the first decoy).
    ``planted``: the numbers of inefficient functions a code module holds (one cell each).
    ``context_tokens`` budgets the whole prompt (instructions, text, request) in ``tokenizer``'s tokens, inside its
    chat template with ``chat_template``."""

    kind: str = "cipher"
    request: str = "discovery"
    context_tokens: tuple[int, ...] = (1024, 2048, 4096, 8192)
    distances: tuple[float, ...] = (0.1, 0.4, 0.7)
    ciphers: tuple[str, ...] = CIPHERS
    message_words: int = 6
    decoys: int = 5
    planted: tuple[int, ...] = (1, 2, 3)
    num_samples: int = 2
    tokenizer: str = REFERENCE_TOKENIZER
    chat_template: bool = False

    def __post_init__(self) -> None:
        require_choice("kind", self.kind, KINDS)
        require_choice("request", self.request, REQUESTS)
        require_list("context_tokens", self.context_tokens)
        for tokens in self.context_tokens:
            require_int_range("context_tokens", tokens, MIN_CONTEXT_TOKENS, MAX_CONTEXT_TOKENS)
        require_list("distances", self.distances)
        for distance in self.distances:
            ok = isinstance(distance, (int, float)) and not isinstance(distance, bool) and 0.0 < distance <= 0.9
            require(ok, "distances", distance, "numbers in (0, 0.9]: the share of the text between clue and target")
        require_list("ciphers", self.ciphers)
        for cipher in self.ciphers:
            require_choice("ciphers", cipher, CIPHERS)
        require(len(set(self.ciphers)) == len(self.ciphers), "ciphers", self.ciphers, "distinct values")
        require_int_range("message_words", self.message_words, 1, 40)
        require_int_range("decoys", self.decoys, 1, MAX_DECOYS)
        require_list("planted", self.planted)
        for planted in self.planted:
            require_int_range("planted", planted, 1, MAX_PLANTED)
        require_int_range("num_samples", self.num_samples, 1, 1_000_000)
        require_budget_knobs(self.tokenizer, self.chat_template)

    def methods(self) -> tuple[str, ...]:
        return self.ciphers if self.kind == "cipher" else (self.kind,)

    def cells(self) -> list[Cell] | list[CodeCell]:
        """Lengths vary fastest, then distance (or the planted count), then the cipher (docs visit cells in
        golden-stride order)."""
        if self.kind == "code":
            return [CodeCell("code", p, n) for p in self.planted for n in self.context_tokens]
        # The directive's depth is seeded per row (a grid of depths would let "the quote nearest depth x" find it),
        # so its cells carry no distance.
        distances = self.distances if self.kind == "cipher" else (0.0,)
        return [Cell(m, d, n) for m in self.methods() for d in distances for n in self.context_tokens]

    def size(self) -> int:
        return len(self.cells()) * self.num_samples
