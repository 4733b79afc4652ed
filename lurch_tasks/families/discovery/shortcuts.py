"""Shortcut strategies for the discovery family: answer without reading the clue (cipher) or the directive.

Each reads only the prompt. Directive rows: pick one quoted statement by position, length, word rarity or lead-in,
or paste them all. Cipher rows: paste a paragraph (the ciphertext included), the rarest repeated words, or a
decoding chosen without the clue (the most English-looking of every shift, mirror and reversal).
Locating the directive sentence is itself what the directive kind measures, so "the quote in the sentence about a
reward" is the reference solver, not a shortcut.
Code rows: name functions by place, size, nesting, loop count, docstring rarity ("a planted function and its one
twin are the only pair"), or every function that mentions a suspect call (``sum(``, ``sorted(``, ``.index(``, a
membership test, string ``+``), without judging whether the work sits inside a loop.
"""

from __future__ import annotations

import math
from collections import Counter
from functools import lru_cache

from ...core.probe import Candidate, LearnedProbe, ProbeItem, as_features, rank_features, top_answer
from ...core.shortcuts import Probe, Shortcut
from .baselines import cipher_line
from .cipher import Key, decrypt_word
from .code_surface import Surface, surfaces
from .config import CIPHERS
from .directive import quoted
from .prompt import paragraphs, prompt_text
from .scoring import response_words
from .words import english, load_words

# English letter frequencies (percent): the "most English-looking decoding" attack scores candidates with them.
_FREQ = dict(zip("etaoinshrdlcumwfgypbvkjxqz", (12.7, 9.1, 8.2, 7.5, 7.0, 6.7, 6.3, 6.1, 6.0, 4.3, 4.0, 2.8, 2.8,
                                                 2.4, 2.4, 2.2, 2.0, 2.0, 1.9, 1.5, 1.0, 0.8, 0.15, 0.15, 0.1, 0.07),
                 strict=True))
ALL_KEYS = tuple(Key(c, shift=k) for c in CIPHERS if c != "keyword" for k in range(26))


def englishness(text: str) -> float:
    letters = [c for c in text if c.isalpha()]
    return sum(math.log(_FREQ[c]) for c in letters) / len(letters) if letters else 0.0


@lru_cache(maxsize=8)
def _quotes(prompt: str) -> tuple[str, ...]:
    return tuple(quoted(prompt_text(prompt)))


def _units(prompt: str) -> tuple[str, ...]:
    """The quotes (directive rows), the functions' texts (code rows) or the paragraphs (cipher rows)."""
    return _quotes(prompt) or tuple(s.text for s in surfaces(prompt)) or tuple(paragraphs(prompt))


def _pick(index):
    """A quote (directive rows), a function (code rows) or a paragraph (cipher rows) chosen by its place."""
    def answer(prompt: str, _: object) -> str:
        units = _units(prompt)
        return units[index(len(units))] if units else ""
    return answer


def _by_length(longest: bool):
    def answer(prompt: str, _: object) -> str:
        units = _units(prompt)
        if not units:
            return ""
        return (max if longest else min)(units, key=len)
    return answer


def _top_functions(key, many: bool = False):
    """Code rows: the function that ranks first by ``key`` (ties: the first in the module), or every function
    tied for first with ``many``; other rows: nothing (their strategies are the ones above)."""
    def answer(prompt: str, _: object) -> str:
        found = surfaces(prompt)
        if not found:
            return ""
        best = max(key(s) for s in found)
        chosen = [s.name for s in found if key(s) == best]
        return "FINAL ANSWER: " + ", ".join(chosen if many else chosen[:1])
    return answer


def _suspects(prompt: str, _: object) -> str:
    return "FINAL ANSWER: " + ", ".join(s.name for s in surfaces(prompt) if s.suspects)


def _lone_pairs(prompt: str, _: object) -> str:
    """Every function whose docstring exactly one other function shares (a planted function and its twin, were the
    twin the only look-alike)."""
    return "FINAL ANSWER: " + ", ".join(s.name for s in surfaces(prompt) if s.doc_count == 2)


@lru_cache(maxsize=1)
def _ranks() -> dict[str, int]:
    return {w: r for r, w in enumerate(load_words("english_words.txt"))}


def _rarity(text: str) -> float:
    ranks = _ranks()
    words = response_words(text)
    return sum(math.log1p(ranks.get(w, len(ranks))) for w in words) / len(words) if words else 0.0


def _rarest_quote(prompt: str, _: object) -> str:
    units = _quotes(prompt)
    return max(units, key=_rarity) if units else _rare_words(prompt, None)


def _rare_words(prompt: str, _: object) -> str:
    """The most repeated words that are not English (ties: first seen)."""
    counts = Counter(w for w in response_words(prompt_text(prompt)) if w not in english())
    return " ".join(w for w, _ in counts.most_common(8))


def _all_quotes(prompt: str, _: object) -> str:
    return "\n".join(_quotes(prompt)) or _rare_words(prompt, None)


def _lone_lead(prompt: str, _: object) -> str:
    """The first quote whose lead-in (the words before it) no other quote of the text shares."""
    text = prompt_text(prompt)
    leads = []
    for quote in _quotes(prompt):
        head = text[: text.find(f"\"{quote}\"")].rsplit(".", 1)[-1].strip().lower()
        leads.append(" ".join(head.split()[:2]))
    counts = Counter(leads)
    lone = [q for q, lead in zip(_quotes(prompt), leads, strict=True) if counts[lead] == 1]
    return lone[0] if lone else ""


def _english_decoding(prompt: str, _: object) -> str:
    """Every shift of every keyless reading (plain, mirrored, reversed) of the ciphertext; the most English one."""
    line = cipher_line(prompt)
    if not line:
        return _pick(lambda n: 0)(prompt, None)
    decodings = [" ".join(decrypt_word(w, key) for w in line.split()) for key in ALL_KEYS]
    return max(decodings, key=englishness)


SHORTCUTS = (
    Shortcut("first_unit", "position", "the first quote (directive) or paragraph (cipher)", _pick(lambda n: 0)),
    Shortcut("last_unit", "position", "the last quote or paragraph (nearest the request)", _pick(lambda n: n - 1)),
    Shortcut("middle_unit", "position", "the middle quote or paragraph", _pick(lambda n: n // 2)),
    Shortcut("longest_unit", "length", "the longest quote or paragraph", _by_length(True)),
    Shortcut("shortest_unit", "length", "the shortest quote or paragraph", _by_length(False)),
    Shortcut("rarest_quote", "frequency", "the quote of the rarest words (cipher rows: the most repeated made-up "
             "words)", _rarest_quote),
    Shortcut("repeated_rare_words", "frequency", "the most repeated words that are not English", _rare_words),
    Shortcut("lone_lead_in", "template", "the first quote whose lead-in no other quote shares", _lone_lead),
    Shortcut("every_quote", "family", "every quoted sentence of the text", _all_quotes),
    Shortcut("english_decoding", "family", "try every Caesar shift, mirror and reversal on the ciphertext and "
             "answer with the most English-looking decoding", _english_decoding),
    Shortcut("deepest_function", "template", "code: the most deeply nested function",
             _top_functions(lambda s: s.depth)),
    Shortcut("most_loops", "template", "code: the function with the most loops and membership tests",
             _top_functions(lambda s: (s.loops, s.ins))),
    Shortcut("rarest_docstring", "frequency", "code: every function whose docstring is the module's rarest",
             _top_functions(lambda s: -s.doc_count, many=True)),
    Shortcut("lone_pairs", "family", "code: every function whose docstring exactly one other shares", _lone_pairs),
    Shortcut("suspect_calls", "family", "code: every function mentioning sum(, sorted(, .index(, a membership test "
             "or string +, inside a loop or not", _suspects),
)


# ---------------------------------------------------------------------------------------------------- probes


def _quote_features(row: dict, value) -> list[tuple[float, bool]]:
    quotes = quoted(row["context"])
    if not quotes or row["difficulty"]["kind"] != "directive":
        return []
    gold = row["answer_items"][0]
    n = len(quotes)
    return [(value(q, k, n, row), q == gold) for k, q in enumerate(quotes)]


def _decoding_features(row: dict) -> list[tuple[float, bool]]:
    if row["difficulty"]["kind"] != "cipher":
        return []
    line = cipher_line(row["prompt"])
    gold = " ".join(row["answer_items"])
    decodings = [" ".join(decrypt_word(w, key) for w in line.split()) for key in ALL_KEYS] if line else []
    return [(englishness(d), d == gold) for d in decodings]


def _function_features(row: dict, value) -> list[tuple[float, bool]]:
    if row["difficulty"]["kind"] != "code":
        return []
    gold = set(row["answer_items"])
    return [(value(s), s.name in gold) for s in surfaces(row["prompt"])]


PROBES = (
    Probe("quote_depth", "position", "depth of a quote among the quotes; gold = the directive's",
          lambda row: _quote_features(row, lambda q, k, n, r: (k + 0.5) / n)),
    Probe("quote_length", "length", "characters of a quote",
          lambda row: _quote_features(row, lambda q, k, n, r: len(q))),
    Probe("quote_rarity", "frequency", "mean log frequency rank of a quote's words",
          lambda row: _quote_features(row, lambda q, k, n, r: _rarity(q))),
    Probe("decoding_englishness", "family", "English letter likelihood of every keyless decoding; gold = the "
          "message", _decoding_features),
    Probe("function_chars", "length", "code: characters of a function", lambda row: _function_features(
        row, lambda s: s.chars)),
    Probe("function_position", "position", "code: a function's place in the module", lambda row: _function_features(
        row, lambda s: s.position)),
    Probe("function_depth", "template", "code: nesting depth of a function", lambda row: _function_features(
        row, lambda s: s.depth)),
    Probe("docstring_count", "frequency", "code: how many functions share a function's docstring",
          lambda row: _function_features(row, lambda s: s.doc_count)),
)


# ---------------------------------------------------------------------------------------------------- learned probe


def _surface_vector(s: Surface) -> tuple[float, ...]:
    return as_features((s.chars, s.lines, s.depth, s.loops, s.ins, s.suspects, s.position, s.doc_count))


def _probe_read(row: dict) -> ProbeItem | None:
    """Directive rows: every quote (position, length, rarity, word count). Cipher rows: every keyless decoding
    (Englishness, vowel share, the reading and shift as numbers); keyword rows have no keyless gold and are left out.
    Code rows: every function (size, lines, nesting, loops, membership tests, suspect calls, place, docstring
    count)."""
    kind = row["difficulty"]["kind"]
    if kind == "code":
        gold = set(row["answer_items"])
        found = surfaces(row["prompt"])
        candidates = tuple(Candidate(f"FINAL ANSWER: {s.name}", s.name in gold, _surface_vector(s)) for s in found)
        return ProbeItem(row["pair_key"], "code", "", candidates) if candidates else None
    if kind == "directive":
        quotes = quoted(row["context"])
        gold = row["answer_items"][0]
        n = len(quotes)
        candidates = tuple(Candidate(q, q == gold, as_features((*rank_features([(k + 0.5) / n]), len(q),
                                                                len(q.split()), _rarity(q))))
                           for k, q in enumerate(quotes))
        return ProbeItem(row["pair_key"], "directive", "", candidates) if candidates else None
    line = cipher_line(row["prompt"]) if "prompt" in row else None
    if not line or row["difficulty"]["method"] == "keyword":
        return None
    gold = " ".join(row["answer_items"])
    candidates = []
    for key in ALL_KEYS:
        text = " ".join(decrypt_word(w, key) for w in line.split())
        vowels = sum(text.count(v) for v in "aeiou") / max(1, len(text.replace(" ", "")))
        candidates.append(Candidate(text, text == gold, as_features((englishness(text), vowels,
                                                                      CIPHERS.index(key.cipher), key.shift))))
    return ProbeItem(row["pair_key"], "cipher", "", tuple(candidates))


LEARNED_PROBE = LearnedProbe(
    "code: every function (size, lines, nesting, loops, membership tests, suspect calls, place, docstring count); "
    "directive: every quote (depth, length, words, rarity); cipher: every shift of the plain, mirrored and reversed "
    "ciphertext (English letter likelihood, vowel share, reading, shift); decoded as the most likely candidate",
    _probe_read, lambda item, probabilities: top_answer(item, probabilities))
