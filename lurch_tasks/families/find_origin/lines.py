"""The lines of a Find the Origin list: which chain link sits on which line, with words drawn on demand.

Lines are computed in bulk (numpy) from their positions, and each line's token cost comes from a table of
per-word costs, so fitting a long list to a budget does no Python work per line beyond rendering the final
list once. Chains draw their words from one seeded permutation of the vocabulary, in the order the lines
that use them are first requested; that order is part of the output and must not change.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ... import __version__
from ...core import tokens as _tokens_module
from ...core.disk_cache import file_stamp, tokenizer_table
from ...core.rng import LazyPermutation, StableRng, derive_seed
from ...core.tokens import TokenCounter, get_token_counter
from ...core.vocab import load_words, source_hash
from .prompt import line_parts, render_lines

VOCABULARY = ("english_words.txt",)


@dataclass(frozen=True)
class Layout:
    """Where the target chain sits in a window of ``n`` lines.

    With ``margin`` = 0 (the paper's centring, fixed depth fractions), ``position`` is the depth fraction of the
    chain's first line within the lines the chain can start on. With ``margin`` > 0 (seeded jitter: the origin's
    distance to the destination, span - 1) it is the depth fraction of the destination's line among the lines at
    least ``margin`` from both ends of the list (as far as the list allows). Then where the destination sits is
    the same for d and -d, so the ends of the list do not tell on which side of it the origin is (with the chain
    placed uniformly, a destination near the bottom had its origin above)."""

    d: int
    chain_length: int
    position: float
    margin: int = 0

    @property
    def span(self) -> int:
        """Lines from the target chain's first line to its last, inclusive."""
        return (self.chain_length - 1) * abs(self.d) + 1

    def lines_above(self, n: int) -> int:
        return int(self.lines_above_many(np.asarray([n], dtype=np.int64))[0])

    def lines_above_many(self, n: np.ndarray) -> np.ndarray:
        """Lines above the chain's first line in windows of ``n`` lines; it grows by 0 or 1 line per line added."""
        if not self.margin:
            return ((n - self.span) * self.position + 0.5).astype(np.int64)
        margin = np.minimum(self.margin, (n - 1) // 2)
        destination = margin + ((n - 1 - 2 * margin) * self.position + 0.5).astype(np.int64)
        top = destination - (self.span - 1 if self.d > 0 else 0)
        return np.clip(top, 0, n - self.span)

    def link_offset(self, k: int) -> int:
        """Offset of link k (0 = origin's link) from the target's first line: later links are d lines
        below for d > 0 and above for d < 0."""
        step = k if self.d > 0 else self.chain_length - 1 - k
        return step * abs(self.d)


@dataclass(frozen=True)
class Window:
    """Rendered lines, top to bottom, their source and target word ids, and the rows of the target chain's
    lines (top to bottom)."""

    texts: list[str]
    target_rows: list[int]
    sources: np.ndarray
    targets: np.ndarray


class WordSource:
    """Fresh words on demand: every chain (an integer key) gets words no other chain of the instance uses."""

    def __init__(self, rng: StableRng, chain_length: int) -> None:
        self.words = load_words(VOCABULARY[0])
        self._draw = LazyPermutation(len(self.words), rng)
        self._size = chain_length + 1
        self._row: dict[int, int] = {}
        self._ids = np.empty((0, self._size), dtype=np.int64)

    def _add(self, keys: list[int]) -> None:
        need = len(keys) * self._size
        if self._draw.remaining() < need:
            raise ValueError(f"context too long: the {len(self.words)}-word vocabulary ran out of fresh words "
                             "(lower context_tokens/num_lines or raise chain_length)")
        drawn = np.asarray(self._draw.take(need), dtype=np.int64).reshape(len(keys), self._size)
        first = len(self._ids)
        self._ids = np.concatenate([self._ids, drawn])
        self._row.update(zip(keys, range(first, first + len(keys)), strict=True))

    def chain(self, key: int) -> tuple[str, ...]:
        """The words of one chain, from its origin."""
        return tuple(self.words[i] for i in self.chain_ids(np.asarray([key]))[0].tolist())

    def chain_ids(self, keys: np.ndarray) -> np.ndarray:
        """Word ids of the chain of every key (one row each); unseen chains draw in first-request order."""
        unique, first = np.unique(keys, return_index=True)
        new = sorted((f, k) for k, f in zip(unique.tolist(), first.tolist(), strict=True) if k not in self._row)
        if new:
            self._add([k for _, k in new])
        rows = np.fromiter(map(self._row.__getitem__, keys.tolist()), dtype=np.int64, count=len(keys))
        return self._ids[rows]

    def render(self, sources: np.ndarray, targets: np.ndarray) -> list[str]:
        word = self.words.__getitem__
        return render_lines(list(map(word, sources.tolist())), list(map(word, targets.tolist())))


class StructuredLines:
    """Every chain obeys d: blocks of |d| lines, block b holding link b (d>0) of |d| parallel chains.

    The sequence is infinite in both directions; group 0 holds the target chain in slot ``slot``. The chain
    of a line has key group * |d| + slot.
    """

    def __init__(self, layout: Layout, slot: int, words: WordSource) -> None:
        self.layout, self.slot, self.words = layout, slot, words
        self.width = abs(layout.d)
        self.group = layout.chain_length * self.width
        self.target_words = words.chain(slot)  # the target chain draws the first words, as in random

    def _line_words(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Source and target word ids of the lines at ``positions`` (0 = the target's first line), and
        which of them belong to the target chain."""
        group, within = np.divmod(positions + self.slot, self.group)
        block, slot = np.divmod(within, self.width)
        link = block if self.layout.d > 0 else self.layout.chain_length - 1 - block
        ids = self.words.chain_ids(group * self.width + slot)
        rows = np.arange(len(positions))
        return ids[rows, link], ids[rows, link + 1], (group == 0) & (slot == self.slot)

    def window(self, n: int) -> Window:
        top = -self.layout.lines_above(n)
        sources, targets, is_target = self._line_words(np.arange(top, top + n))
        return Window(self.words.render(sources, targets), np.flatnonzero(is_target).tolist(), sources, targets)

    def growth_words(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """Word ids of the lines added by growth steps [start, stop): step t (from 0) grows the window from
        span + t to span + t + 1 lines, at the top when ``lines_above`` goes up, else at the bottom."""
        step = np.arange(start + 1, stop + 1)
        above = self.layout.lines_above_many(self.layout.span + step)
        before = self.layout.lines_above_many(self.layout.span + step - 1)
        positions = np.where(above > before, -above, self.layout.span + step - above - 1)
        sources, targets, _ = self._line_words(positions)
        return sources, targets


@dataclass(frozen=True)
class Decoys:
    """Chain-shaped decoys around the destination, as offsets from its line: for every decoy d' of ``ds``, the
    line (chain_length - 1) * -d' away holds a chain start (where the origin of d' would be) and the lines k * -d'
    away, 0 < k < chain_length - 1, hold lines that are not chain starts (where its middle links would be)."""

    ds: tuple[int, ...] = ()
    starts: tuple[int, ...] = ()
    links: tuple[int, ...] = ()


def _shape(d: int, links: int) -> tuple[int, set[int]]:
    return -links * d, {-k * d for k in range(1, links)}


def decoys(d_values: tuple[int, ...], chain_length: int, d: int, rng: StableRng) -> Decoys:
    """Every other d' of the grid whose shape fits beside the target's and the decoys' before it (in a seeded
    order): the target chain is then one of many that look alike to a reader of which lines start a chain, so the
    line distance of a start to the destination says no more than chance. With 2-link chains every d' fits; with
    longer ones a d' whose origin line is where another's middle link is cannot join (11-23 of the other 27 do)."""
    links = chain_length - 1
    chosen = [d]
    for other in rng.shuffled(sorted(x for x in d_values if x != d)):
        start, middles = _shape(other, links)
        if all(start not in _shape(x, links)[1] and _shape(x, links)[0] not in middles for x in chosen):
            chosen.append(other)
    decoy_ds = sorted(chosen[1:])
    starts = sorted(_shape(x, links)[0] for x in decoy_ds)
    middles = sorted({m for x in decoy_ds for m in _shape(x, links)[1]} - set(_shape(d, links)[1]))
    return Decoys(tuple(decoy_ds), tuple(starts), tuple(middles))


class RandomLines:
    """Only the target chain obeys d; distractor lines come from other chains (keys 0, 1, ...) in a seeded
    shuffle. Distractor line i is link i % L of chain i // L.

    Around the destination, ``decoys`` fixes which lines are chain starts and which are not (see ``Decoys``), as
    far as the distractor starts and other lines go; the rest is shuffled. A plain shuffle left a start on only
    1/L of the lines where the origin of another d would be, so the origin stuck out by its distance."""

    def __init__(self, layout: Layout, words: WordSource, shuffle_seed: int, decoys: Decoys = Decoys()) -> None:
        self.layout, self.words, self.shuffle_seed, self.decoys = layout, words, shuffle_seed, decoys
        self.target = self.target_words = words.chain(-1)
        self.target_ids = words.chain_ids(np.asarray([-1]))[0]

    def _distractor_words(self, lines: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        chain, link = np.divmod(lines, self.layout.chain_length)
        ids = self.words.chain_ids(chain)
        rows = np.arange(len(lines))
        return ids[rows, link], ids[rows, link + 1]

    def _order(self, count: int, free: np.ndarray, destination: int) -> np.ndarray:
        """The distractor line on each free row (top to bottom): decoy starts and decoy links in the seeded
        shuffle's order, the other lines shuffled over the rest."""
        order = np.asarray(StableRng(derive_seed(self.shuffle_seed, count)).shuffled(range(count)), dtype=np.int64)
        is_start = order % self.layout.chain_length == 0
        rows = np.full(count, -1, dtype=np.int64)
        used = np.zeros(count, dtype=bool)  # positions in ``order`` already placed
        for offsets, pool, salt in ((self.decoys.starts, np.flatnonzero(is_start), "slots"),
                                    (self.decoys.links, np.flatnonzero(~is_start), "links")):
            wanted = np.flatnonzero(np.isin(free, destination + np.asarray(offsets, dtype=np.int64)))
            if len(pool) < len(wanted):  # too few lines of the kind: a seeded choice of the rows gets one
                picked = StableRng(derive_seed(self.shuffle_seed, count, salt)).sample(range(len(wanted)), len(pool))
                wanted = wanted[np.sort(np.asarray(picked, dtype=np.int64))]
            rows[wanted] = order[pool[: len(wanted)]]
            used[pool[: len(wanted)]] = True
        rows[rows < 0] = order[~used]
        return rows

    def window(self, n: int) -> Window:
        length = self.layout.chain_length
        count = n - length
        sources, targets = self._distractor_words(np.arange(count))
        top = self.layout.lines_above(n)
        target_rows = sorted(top + self.layout.link_offset(k) for k in range(length))
        is_target = np.zeros(n, dtype=bool)
        is_target[target_rows] = True
        destination = top + self.layout.link_offset(length - 1)
        order = self._order(count, np.flatnonzero(~is_target), destination)
        row_sources, row_targets = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
        row_sources[~is_target], row_targets[~is_target] = sources[order], targets[order]
        for k in range(length):
            row = top + self.layout.link_offset(k)
            row_sources[row], row_targets[row] = self.target_ids[k], self.target_ids[k + 1]
        return Window(self.words.render(row_sources, row_targets), target_rows, row_sources, row_targets)

    def growth_words(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """Word ids of the distractor lines added by growth steps [start, stop) beyond the ``span`` lines."""
        first = self.layout.span - self.layout.chain_length
        return self._distractor_words(np.arange(first + start, first + stop))


class LinkCosts:
    """Tokens a line adds to the list, estimated as its source part plus its target part (see
    ``prompt.line_parts``). Every vocabulary word's two costs come from one tokenization of the whole
    vocabulary written as lines, once per tokenizer and process (an estimate: the prompt is counted exactly)."""

    def __init__(self, counter: TokenCounter) -> None:
        table = _cost_table(counter)
        self.source, self.target = table["source"], table["target"]
        self.mean = float(self.source.mean() + self.target.mean())


def build_cost_table(counter: TokenCounter) -> dict[str, np.ndarray]:
    """Each vocabulary word's source and target costs (int64), from one tokenization of all of it as lines."""
    words = load_words(VOCABULARY[0])
    parts = [line_parts(word, word) for word in words]
    text = "".join(head + tail for head, tail in parts)
    bounds = np.cumsum([0] + [len(part) for pair in parts for part in pair])
    tokens = np.diff(np.searchsorted(counter.token_starts(text), bounds, side="left")).astype(np.int64)
    return {"source": tokens[0::2], "target": tokens[1::2]}


def _cost_table(counter: TokenCounter) -> dict[str, np.ndarray]:
    """``build_cost_table``, read from the disk cache when the tokenizer has a content key (a cold process then
    skips tokenizing ~1 MB of lines); the key covers the words, the code that renders and counts them, and the
    tokenizer."""
    here = Path(__file__).parent
    key = {"words": source_hash(VOCABULARY), "lurch_tasks": __version__,
           "code": file_stamp(here / "lines.py", here / "prompt.py", Path(_tokens_module.__file__))}
    return tokenizer_table("find_origin-link-costs", counter.table_stamp, key, lambda: build_cost_table(counter))


@lru_cache(maxsize=8)
def link_costs(tokenizer: str) -> LinkCosts:
    return LinkCosts(get_token_counter(tokenizer))


def lines_within(source: StructuredLines | RandomLines, costs: LinkCosts, room: int) -> int:
    """How many growth lines fit in ``room`` tokens by the cost table, drawing words only for the lines
    looked at (a chunk sized by the mean cost, then small chunks)."""
    fitted, chunk = 0, max(16, int(room / costs.mean * 1.05) + 16)
    while True:
        sources, targets = source.growth_words(fitted, fitted + chunk)
        spent = np.cumsum(costs.source[sources] + costs.target[targets])
        fits = int(np.searchsorted(spent, room, side="right"))
        if fits < chunk:
            return fitted + fits
        fitted, room, chunk = fitted + chunk, room - int(spent[-1]), max(64, chunk // 8)
