"""Ciphers, keys and the clue sentences that name a key indirectly (the cipher kind)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...core.rng import StableRng
from .config import MAX_SHIFT, MIN_SHIFT
from .words import LETTERS, common_words

NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                "twelve")
SHIFT_STYLES = ("word", "sum", "letters")  # how a clue names a shift: "seven", "three and four", "the letters of X"


@dataclass(frozen=True)
class Key:
    cipher: str  # caesar | atbash | reverse | keyword
    shift: int = 0  # caesar, atbash, reverse: letters moved forward after the mirror / reversal
    keyword: str = ""  # keyword: the mixed alphabet starts with its letters


def shifted(word: str, k: int) -> str:
    return "".join(LETTERS[(LETTERS.index(c) + k) % 26] for c in word)


def mirrored(word: str) -> str:
    return "".join(LETTERS[25 - LETTERS.index(c)] for c in word)


def mixed_alphabet(keyword: str) -> str:
    """The keyword's letters (each once, in order), then the unused letters in alphabetical order."""
    seen = dict.fromkeys(keyword + LETTERS)
    return "".join(seen)


def encrypt_word(word: str, key: Key) -> str:
    if key.cipher == "caesar":
        return shifted(word, key.shift)
    if key.cipher == "atbash":
        return shifted(mirrored(word), key.shift)
    if key.cipher == "reverse":
        return shifted(word[::-1], key.shift)
    alphabet = mixed_alphabet(key.keyword)
    return "".join(alphabet[LETTERS.index(c)] for c in word)


def decrypt_word(word: str, key: Key) -> str:
    if key.cipher == "caesar":
        return shifted(word, -key.shift)
    if key.cipher == "atbash":
        return mirrored(shifted(word, -key.shift))
    if key.cipher == "reverse":
        return shifted(word, -key.shift)[::-1]
    alphabet = mixed_alphabet(key.keyword)
    return "".join(LETTERS[alphabet.index(c)] for c in word)


def draw_key(cipher: str, rng: StableRng) -> Key:
    if cipher == "keyword":
        choices = [w for w in common_words() if 5 <= len(w) <= 8]
        return Key(cipher, keyword=rng.choice(choices))
    return Key(cipher, shift=rng.integer(MIN_SHIFT, MAX_SHIFT))


# ----------------------------------------------------------------------------------------------- clue sentences
# A clue says that the line of strange words is a hidden message and how to read it. Framings vary the sentence;
# each names the decoding steps with one of the phrases below, which the reference solver reads back.
FRAMES = (
    "A note in the margin says that the line of strange words in this text is a hidden message: to read it, {how}.",
    "Whoever wrote the line of unfamiliar words hid a message in it, and it can be read if you {how}.",
    "The odd line of letters in this text is a secret message; the trick to reading it is to {how}.",
    "Those who know the code say the line of jumbled words is a message that reads plainly once you {how}.",
)


def shift_phrase(k: int, style: str, rng: StableRng) -> str:
    """``k`` named indirectly: a number word, a sum of two number words, or the letters of a word of length k."""
    if style == "word":
        return f"{NUMBER_WORDS[k]} places"
    if style == "sum":
        a = rng.integer(1, k - 1)
        return f"as many places as {NUMBER_WORDS[a]} and {NUMBER_WORDS[k - a]} together"
    word = rng.choice([w for w in common_words() if len(w) == k])
    return f"as many places as there are letters in the word \"{word}\""


def how_phrase(key: Key, style: str, rng: StableRng) -> str:
    if key.cipher == "keyword":
        return (f"write the alphabet starting with the letters of \"{key.keyword}\" (each letter once) followed by the "
                "unused letters in order, then replace every letter by the ordinary letter in the same place")
    back = f"move every letter back along the alphabet by {shift_phrase(key.shift, style, rng)}"
    if key.cipher == "caesar":
        return back
    if key.cipher == "atbash":
        return f"{back}, then swap every letter with its mirror in the alphabet (a with z, b with y, and so on)"
    return f"{back}, then spell every word backwards"


def clue_sentence(key: Key, rng: StableRng) -> tuple[str, str]:
    """The clue and its shift style (recorded in params)."""
    styles = [s for s in SHIFT_STYLES if s != "letters" or any(len(w) == key.shift for w in common_words())]
    style = rng.choice(styles)
    how = how_phrase(key, style, rng)
    return rng.choice(FRAMES).format(how=how), style if key.cipher != "keyword" else "keyword"


_SHIFT = (r"move every letter back along the alphabet by (?:(?P<word>[a-z]+) places|as many places as "
          r"(?P<a>[a-z]+) and (?P<b>[a-z]+) together|"
          r"as many places as there are letters in the word \"(?P<w>[a-z]+)\")")
_CLUE_SHIFT = re.compile(_SHIFT + r"(?P<rest>, then swap every letter with its mirror|, then spell every word "
                         r"backwards)?")
_CLUE_KEYWORD = re.compile(r"write the alphabet starting with the letters of \"([a-z]+)\"")


def read_clue(text: str) -> Key | None:
    """The key a clue in ``text`` names (None: no clue)."""
    keyword = _CLUE_KEYWORD.search(text)
    if keyword:
        return Key("keyword", keyword=keyword.group(1))
    match = _CLUE_SHIFT.search(text)
    if not match:
        return None
    if match.group("word"):
        k = NUMBER_WORDS.index(match.group("word"))
    elif match.group("a"):
        k = NUMBER_WORDS.index(match.group("a")) + NUMBER_WORDS.index(match.group("b"))
    else:
        k = len(match.group("w"))
    rest = match.group("rest") or ""
    cipher = "atbash" if "mirror" in rest else "reverse" if "backwards" in rest else "caesar"
    return Key(cipher, shift=k)
