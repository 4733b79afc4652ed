"""Fresh words and statements for the discovery family: nothing a model could recognise or guess.

Message words are uniform random letters (4-7 of them), never an English word: any Caesar shift, mirror or
reversal of such a word looks as (un)English as the plaintext, so "pick the most English-looking decoding"
finds nothing. Statements (the directive kind) are short sentences of common English words drawn at random.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from functools import cache

from ...core.rng import StableRng
from ...core.vocab import load_words

VOCABULARY = ("english_words.txt",)
LETTERS = string.ascii_lowercase
MIN_LETTERS, MAX_LETTERS = 4, 7
STATEMENT_WORDS = (5, 8)  # words per statement, inclusive
COMMON_RANKS = (300, 6000)  # statement words: frequent enough to read as plain English, past the function words


@cache
def english() -> frozenset[str]:
    return frozenset(load_words(VOCABULARY[0]))


@cache
def common_words() -> tuple[str, ...]:
    low, high = COMMON_RANKS
    return tuple(w for w in load_words(VOCABULARY[0])[low:high] if w.isalpha() and w.isascii() and len(w) >= 3)


def fresh_word(rng: StableRng) -> str:
    """Random letters that are not an English word."""
    while True:
        word = "".join(rng.choice(LETTERS) for _ in range(rng.integer(MIN_LETTERS, MAX_LETTERS)))
        if word not in english():
            return word


def fresh_words(count: int, rng: StableRng, keep: Callable[[str], bool] = lambda word: True) -> list[str]:
    """``count`` distinct fresh words that ``keep`` accepts."""
    out: list[str] = []
    while len(out) < count:
        word = fresh_word(rng)
        if word not in out and keep(word):
            out.append(word)
    return out


def statement(rng: StableRng) -> str:
    """A short sentence of random common words: "Garden silver hold tonight across market."."""
    words = [rng.choice(common_words()) for _ in range(rng.integer(*STATEMENT_WORDS))]
    return " ".join([words[0].capitalize(), *words[1:]]) + "."


def statements(count: int, rng: StableRng) -> list[str]:
    """``count`` distinct statements (decoys and the directive's are drawn alike)."""
    out: list[str] = []
    while len(out) < count:
        text = statement(rng)
        if text not in out:
            out.append(text)
    return out
