"""Invented names (ImplicitHop's knowledge base, RECON's people and places): no entity exists outside the
prompt, so a model cannot answer from memory. Names are built from syllables with a seeded generator and
checked against the shipped real-word, surname and city lists, so an invented name never collides with a real
one."""

from __future__ import annotations

import re
from functools import cache
from itertools import chain

import numpy as np

from .rng import StableRng
from .vocab import load_words, source_hash

ONSETS = ("b", "br", "c", "d", "dr", "f", "g", "gr", "h", "k", "kr", "l", "m", "n", "p", "pr", "r", "s", "st",
          "t", "tr", "v", "w", "z", "th", "sh", "ch")
VOWELS = ("a", "e", "i", "o", "u", "ae", "ei", "ou", "ia")
CODAS = ("", "", "", "n", "r", "l", "s", "th", "m", "nd", "rk", "st", "x")
# Kinds make a name's entity type readable without naming a relation ("Velmar Codex", "Ostrin Works").
ORGANISATION_KINDS = ("Works", "Holdings", "Trust", "Guild", "Institute", "Company", "Foundation", "Syndicate")
REGION_KINDS = ("Province", "Valley", "Coast", "Highlands", "Marches", "Basin", "Reach")
ARTEFACT_KINDS = ("Codex", "Manuscript", "Chronicle", "Astrolabe", "Tapestry", "Ledger", "Atlas", "Compass")


REAL_WORD_FILES = ("english_words.txt", "last_names.txt", "first_names.txt", "cities.txt")


def all_real_words() -> frozenset[str]:
    """Lower-case real words and names an invented stem must not equal."""
    cities = (line.split("|", 1)[0] for line in load_words("cities.txt"))
    return frozenset(map(str.lower, chain(load_words("english_words.txt"), load_words("last_names.txt"),
                                          load_words("first_names.txt"), cities)))


def spellable(words: frozenset[str]) -> frozenset[str]:
    """The words a stem or a one-vowel edit of one can equal: syllables of an onset and one or two vowel letters,
    then a coda (``stem``'s grammar, any vowel letters: ``one_edit`` changes one). Testing a stem against these
    says what testing it against every word says."""
    onsets, codas = "|".join(ONSETS), "|".join(coda for coda in CODAS if coda)
    letters = "".join(sorted(set("aeiou").union(*VOWELS)))
    grammar = re.compile(f"(?:(?:{onsets})[{letters}]{{1,2}})+(?:{codas})?")
    return frozenset(word for word in words if grammar.fullmatch(word))


@cache
def _real_words() -> frozenset[str]:
    """``all_real_words``, or only the ``spellable`` ones read back from the disk cache (a cold process then
    skips reading and lower-casing 50k words)."""
    from .disk_cache import cached_table, tables_enabled

    if not tables_enabled():
        return all_real_words()
    key = {"sources": source_hash(REAL_WORD_FILES), "grammar": [ONSETS, VOWELS, CODAS], "rule": 1}
    table = cached_table("spellable-real-words", key, lambda: {"words": np.frombuffer(
        "\n".join(sorted(spellable(all_real_words()))).encode("utf-8"), dtype=np.uint8)})
    text = table["words"].tobytes().decode("utf-8")
    return frozenset(text.split("\n")) if text else frozenset()


_SYLLABLES = [[onset + vowel for vowel in VOWELS] for onset in ONSETS]  # onset x vowel, joined once
_SIZES = {n: [len(ONSETS), len(VOWELS)] * n + [len(CODAS)] for n in (1, 2, 3)}  # a stem's draws, per syllables


def stem(rng: StableRng, syllables: int) -> str:
    """One invented word of ``syllables`` syllables, capitalised."""
    # onset and vowel of every syllable, then the last one's coda: the draws of one choice() each, in one call
    draws = rng.below_each(_SIZES.get(syllables) or [len(ONSETS), len(VOWELS)] * syllables + [len(CODAS)])
    parts = [_SYLLABLES[draws[2 * i]][draws[2 * i + 1]] for i in range(syllables)]
    return ("".join(parts) + CODAS[draws[-1]]).capitalize()


class NameMaker:
    """Unique invented names per entity type; every draw is seeded and never repeats a name or a stem."""

    def __init__(self, rng: StableRng) -> None:
        self.rng = rng
        self._used: set[str] = set()

    def _fresh_stem(self) -> str:
        real = _real_words()
        for _ in range(10_000):
            word = stem(self.rng, 2 + self.rng.below(2))
            if word.lower() not in real and word not in self._used:
                self._used.add(word)
                return word
        raise ValueError("context_tokens: the invented-name space ran out; allowed: a smaller knowledge base")

    def person(self) -> str:
        return f"{self._fresh_stem()} {self._fresh_stem()}"

    def organisation(self) -> str:
        return f"{self._fresh_stem()} {self.rng.choice(ORGANISATION_KINDS)}"

    def city(self) -> str:
        return self._fresh_stem()

    def region(self) -> str:
        return f"{self._fresh_stem()} {self.rng.choice(REGION_KINDS)}"

    def artefact(self) -> str:
        return f"{self._fresh_stem()} {self.rng.choice(ARTEFACT_KINDS)}"

    def name(self, entity_type: str) -> str:
        return getattr(self, entity_type)()


def one_edit(name: str, taken: set[str], rng: StableRng) -> str | None:
    """A name one letter away from ``name`` (a vowel of its first word changed), not in ``taken`` and not a real
    word: a near miss that only careful reading tells apart. None when every such edit is taken."""
    first, _, rest = name.partition(" ")
    spots = [i for i, ch in enumerate(first) if ch.lower() in "aeiou"]
    options = [(i, v) for i in spots for v in "aeiou" if v != first[i].lower()]
    for i, vowel in rng.shuffled(options):
        letter = vowel.upper() if first[i].isupper() else vowel
        word = first[:i] + letter + first[i + 1:]
        candidate = f"{word} {rest}" if rest else word
        if candidate not in taken and word.lower() not in _real_words():
            return candidate
    return None
