"""Shortcut strategies for Find the Origin: answer without walking the target chain's links.

Each reads only the prompt. Position strategies take the left word of a line chosen by its place in the
list; the offset strategies read the line a fixed number of rows above the destination's line (the
attacker's guess at (chain_length - 1) * d); ``read_d`` learns d and the chain length from the *other*
chains and counts lines, which is exactly the regularity the structured arrangement studies.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from ...core.probe import Candidate, LearnedProbe, ProbeItem, as_features, rank_features, top_answer
from ...core.shortcuts import Probe, Shortcut
from .config import DEFAULT_D_VALUES, MAX_ABS_D, MAX_WIDE_D, WIDE_D_VALUES
from .prompt import context_lines, parse_line, parse_question

MAX_LINKS = 7  # links of the longest chain (chain_lengths go up to 8)
MAX_OFFSET = MAX_WIDE_D * MAX_LINKS  # (chain_length - 1) * |d| at most, on the widest d grid a config may have
# The attacker knows the grid: the d grids of the registered configs, by their largest |d| (the prompt does not say
# which config wrote it, so the shape strategies try each grid as a variant).
D_GRIDS = {MAX_ABS_D: DEFAULT_D_VALUES, MAX_WIDE_D: WIDE_D_VALUES}


@dataclass(frozen=True)
class View:
    pairs: tuple[tuple[str, str], ...]
    destination: str
    destination_row: int  # the line whose right word is the destination (-1 when absent)


@lru_cache(maxsize=8)
def view(prompt: str) -> View:
    pairs = tuple(pair for line in context_lines(prompt) if (pair := parse_line(line)))
    destination = parse_question(prompt) or ""
    row = next((i for i, (_, b) in enumerate(pairs) if b == destination), -1)
    return View(pairs, destination, row)


def _answer(word: str | None) -> str:
    return f"FINAL ANSWER: {word}" if word else "I cannot tell."


def _source_at(v: View, row: int) -> str | None:
    return v.pairs[row][0] if 0 <= row < len(v.pairs) else None


def _by_row(pick):
    def answer(prompt: str, variant: object) -> str:
        v = view(prompt)
        return _answer(_source_at(v, pick(v, variant)) if v.pairs else None)
    return answer


def _most_frequent(prompt: str, _: object) -> str:
    v = view(prompt)
    counts = Counter(word for pair in v.pairs for word in pair if word != v.destination)
    return _answer(max(counts, key=lambda w: counts[w]) if counts else None)


def _origin_like(v: View) -> list[int]:
    """Rows whose left word no line links to: the start of some chain."""
    targets = {b for _, b in v.pairs}
    return [i for i, (a, _) in enumerate(v.pairs) if a not in targets]


def _nearest_origin_like(prompt: str, _: object) -> str:
    v = view(prompt)
    rows = [r for r in _origin_like(v) if r != v.destination_row] or _origin_like(v)
    if not rows:
        return _answer(None)
    return _answer(v.pairs[min(rows, key=lambda r: (abs(r - v.destination_row), r))][0])


def _by_length(longest: bool):
    def answer(prompt: str, _: object) -> str:
        v = view(prompt)
        words = [v.pairs[r][0] for r in _origin_like(v)]
        if not words:
            return _answer(None)
        return _answer((max if longest else min)(words, key=lambda w: (len(w), w)))
    return answer


def _structure(v: View) -> tuple[int, int] | None:
    """d and the chain length read off one other chain: the first complete chain (in list order) that does
    not hold the destination. Under ``structured`` every chain obeys d; under ``random`` only the target."""
    row_of_source = {a: i for i, (a, _) in enumerate(v.pairs)}
    targets = {b for _, b in v.pairs}
    for start in (i for i, (a, _) in enumerate(v.pairs) if a not in targets):
        rows = [start]
        while v.pairs[rows[-1]][1] in row_of_source and len(rows) <= 8:
            rows.append(row_of_source[v.pairs[rows[-1]][1]])
        if len(rows) >= 2 and v.destination_row not in rows and start > 0:  # row 0 may be a cut chain
            return rows[1] - rows[0], len(rows)
    return None


def _read_d(prompt: str, _: object) -> str:
    v = view(prompt)
    structure = _structure(v)
    if structure is None or v.destination_row < 0:
        return _answer(None)
    d, chain_length = structure
    return _answer(_source_at(v, v.destination_row - (chain_length - 1) * d))


@lru_cache(maxsize=8)
def _origin_like_rows(prompt: str) -> frozenset[int]:
    return frozenset(_origin_like(view(prompt)))


def _start_at_distance(prompt: str, variant: tuple[int, int]) -> str:
    """The chain start exactly k lines from the destination's line, looking on one side first (``first`` = -1:
    above), then on the other: an attacker who guesses |(chain_length - 1) * d| but not its sign."""
    k, first = variant
    v = view(prompt)
    if v.destination_row < 0:
        return _answer(None)
    starts = _origin_like_rows(prompt)
    rows = (v.destination_row + first * k, v.destination_row - first * k)
    return _answer(next((v.pairs[r][0] for r in rows if r in starts), None))


def chain_length_read(v: View, starts: frozenset[int]) -> int:
    """The chain length read off the other chains: the most common number of lines from a chain start (ties: the
    shorter), never counting the destination's chain."""
    row_of_source = {a: i for i, (a, _) in enumerate(v.pairs)}
    lengths: Counter[int] = Counter()
    for start in sorted(starts):
        rows = [start]
        while v.pairs[rows[-1]][1] in row_of_source and len(rows) <= 9:
            rows.append(row_of_source[v.pairs[rows[-1]][1]])
        if v.destination_row not in rows:
            lengths[len(rows)] += 1
    return min(lengths, key=lambda c: (-lengths[c], c)) if lengths else 2


def _shaped(v: View, starts: frozenset[int], links: int, grid: tuple[int, ...] = DEFAULT_D_VALUES) -> list[int]:
    """The d of ``grid`` whose chain shape of ``links`` links ends at the destination: a start where its origin
    would be, no start where its middle links would be (which lines start a chain; no link followed)."""
    return [d for d in grid if v.destination_row - links * d in starts
            and not any(v.destination_row - k * d in starts for k in range(1, links))]


def shape_length_read(v: View, starts: frozenset[int], grid: tuple[int, ...] = DEFAULT_D_VALUES) -> int:
    """The chain length read off the chain shapes around the destination: the number of links whose shapes are
    there for the largest share of the grid's d (longer on ties; one link only when no longer shape is there,
    since any start 2-15 lines away has a one-link shape)."""
    def share(links: int) -> float:
        on_list = [d for d in grid if 0 <= v.destination_row - links * d < len(v.pairs)]
        return len(_shaped(v, starts, links, grid)) / max(len(on_list), 1)
    longer = max(range(2, MAX_LINKS + 1), key=lambda links: (share(links), links))
    return longer + 1 if share(longer) > 0 else 2


def _start_in_window(prompt: str, variant: tuple[str, str, int, int]) -> str:
    """Read the chain length L off the other chains (``chains``) or off the chain shapes around the destination
    (``shapes``); of the chain starts at a distance the origin can have, (L - 1) * |d| for a d of the grid (``D_GRIDS``
    by its largest |d|), whose would-be middle links are no chain starts, take the nearest (or farthest) one, one
    side first."""
    source, order, first, widest = variant
    grid = D_GRIDS[widest]
    v = view(prompt)
    if v.destination_row < 0:
        return _answer(None)
    starts = _origin_like_rows(prompt)
    links = (chain_length_read(v, starts) if source == "chains" else shape_length_read(v, starts, grid)) - 1
    shaped = _shaped(v, starts, links, grid)
    if not shaped:
        return _answer(None)
    d = min(shaped, key=lambda x: (abs(x) if order == "nearest" else -abs(x), x * first))
    return _answer(v.pairs[v.destination_row - links * d][0])


def _central_start(prompt: str, _: object) -> str:
    v = view(prompt)
    rows = _origin_like(v)
    if not rows:
        return _answer(None)
    middle = (len(v.pairs) - 1) / 2
    return _answer(v.pairs[min(rows, key=lambda r: (abs(r - middle), r))][0])


def _structured(config) -> bool:
    return config.arrangement == "structured"


def _origin_centrality(row: dict) -> list[tuple[float, bool]]:
    """Per chain start (the plausible answers): closeness to the middle of the list; gold = the origin."""
    origin_row = json.loads(row["params"])["target_rows"][0]
    v = view(row["prompt"])
    n = len(v.pairs)
    return [(-abs((i + 0.5) / n - 0.5), i == origin_row) for i in _origin_like(v)]


_OFFSETS = tuple(delta for delta in range(-MAX_OFFSET, MAX_OFFSET + 1) if delta)
_DISTANCES = tuple((k, first) for k in range(1, MAX_OFFSET + 1) for first in (-1, 1))

SHORTCUTS = (
    Shortcut("first_line", "position", "left word of the first line", _by_row(lambda v, _: 0)),
    Shortcut("last_line", "position", "left word of the last line (nearest the question)",
             _by_row(lambda v, _: len(v.pairs) - 1)),
    Shortcut("middle_line", "position", "left word of the middle line", _by_row(lambda v, _: len(v.pairs) // 2)),
    Shortcut("mirror", "position", "left word of the line mirroring the destination's line (n-1-r or n-r)",
             _by_row(lambda v, k: len(v.pairs) - k - v.destination_row), variants=(1, 0)),
    Shortcut("offset", "family", "left word of the line a fixed number of rows above the destination's line "
             "(best fixed offset)", _by_row(lambda v, delta: v.destination_row - delta), variants=_OFFSETS),
    Shortcut("start_at_distance", "family", "the chain start exactly k lines from the destination's line, one side "
             "first, else the other (best k and side)", _start_at_distance, variants=_DISTANCES),
    Shortcut("start_in_window", "family", "read the chain length L off the other chains or off the chain shapes "
             "around the destination; the nearest (or farthest) chain start at a distance the origin can have, "
             "(L-1)*|d| for a d of the grid, whose middle links would be no starts, one side first (best source, "
             "order, side and grid)",
             _start_in_window, variants=tuple((source, order, first, widest) for source in ("chains", "shapes")
                                              for order in ("nearest", "farthest") for first in (-1, 1)
                                              for widest in D_GRIDS),
             expected_when=_structured),  # structured: every chain obeys d, as read_d
    Shortcut("central_origin_like", "position", "the chain start nearest the middle of the list", _central_start),
    Shortcut("most_frequent", "frequency", "the most frequent word other than the destination", _most_frequent),
    Shortcut("nearest_origin_like", "frequency", "the chain start (a word nothing links to) nearest the "
             "destination's line", _nearest_origin_like),
    Shortcut("longest_origin_like", "length", "the longest word that starts a chain", _by_length(True)),
    Shortcut("shortest_origin_like", "length", "the shortest word that starts a chain", _by_length(False)),
    Shortcut("read_d", "family", "read d and the chain length off the other chains, then count lines up from the "
             "destination", _read_d, expected_when=_structured),
)

PROBES = (
    Probe("origin_line_centrality", "position", "closeness of a line to the middle; gold = the origin's line",
          _origin_centrality),
)


# ---------------------------------------------------------------- learned probe (core.probe)


def _letters_overlap(word: str, other: str) -> float:
    """Jaccard overlap of the two words' letter sets (lexical overlap with the question's word)."""
    a, b = set(word.lower()), set(other.lower())
    return len(a & b) / len(a | b) if a | b else 0.0


def origin_features(v: View, word: str, rows: list[int], source_row: int) -> tuple[float, ...]:
    """Reasoning-free statistics of one candidate word: the ranks of the lines mentioning it, how often it
    starts a line, where its first line sits against the destination's line and the middle, its length and
    letters against the destination; never a link followed."""
    n = max(len(v.pairs), 1)
    signed = (source_row - v.destination_row) / n if v.destination_row >= 0 else 0.0
    lines = abs(source_row - v.destination_row) if v.destination_row >= 0 else n
    position = (source_row + 0.5) / n
    return as_features((*rank_features([(r + 0.5) / n for r in rows]), sum(1 for r in rows if v.pairs[r][0] == word),
                        signed, abs(signed), math.log1p(lines), abs(position - 0.5), len(word),
                        abs(len(word) - len(v.destination)), _letters_overlap(word, v.destination), math.log(n)))


def _probe_read(row: dict) -> ProbeItem | None:
    """Candidates: every chain start (a word some line starts from and no line leads to), the only words the
    instructions allow as an origin; gold = the origin."""
    v = view(row["prompt"])
    if not v.pairs or v.destination_row < 0:
        return None
    origin = row["answer_items"][0] if row["answer_items"] else None
    mentions: dict[str, list[int]] = {}
    for r, (a, b) in enumerate(v.pairs):
        mentions.setdefault(a, []).append(r)
        mentions.setdefault(b, []).append(r)
    candidates = tuple(Candidate(v.pairs[r][0], v.pairs[r][0] == origin,
                                 origin_features(v, v.pairs[r][0], mentions[v.pairs[r][0]], r))
                       for r in _origin_like(v) if v.pairs[r][0] != v.destination)
    # Every row draws fresh words and its own chain: the case a fold holds out is the row (its pair_key, shared
    # only with its matched twins in other configs).
    return ProbeItem(row["pair_key"], "origin", "", candidates) if candidates else None


LEARNED_PROBE = LearnedProbe(
    "every chain start (gold = the origin): mention ranks and counts, signed and absolute line distance to the "
    "destination's line, distance from the middle, word length and letter overlap with the destination; decoded "
    "as the most likely start",
    _probe_read, lambda item, probabilities: _answer(top_answer(item, probabilities)))
