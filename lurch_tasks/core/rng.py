"""Seed derivation and sampling helpers on a stable core.

Every random choice in the project goes through :class:`StableRng`, whose only source of randomness is
``random.Random(seed).getrandbits`` (a Mersenne Twister whose integer seeding and bit stream are stable
across CPython versions). Higher-level helpers are written here, so their algorithms cannot drift with
the standard library.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def canonical_json(value: object) -> str:
    """The one JSON encoding used for hashing: sorted keys, no whitespace, ASCII only (one encoder built once:
    ``json.dumps`` with these options builds a new one per call, and seeds are derived tens of times per instance)."""
    return _CANONICAL.encode(value)


def derive_seed(*parts: object) -> int:
    """A 64-bit seed from any JSON-encodable parts, via blake2b (never Python's ``hash``)."""
    digest = hashlib.blake2b(canonical_json(list(parts)).encode("ascii"), digest_size=8).digest()
    return int.from_bytes(digest, "big")


class StableRng:
    """Deterministic sampling helpers; one instance per independent random stream."""

    def __init__(self, seed: int) -> None:
        self._bits = random.Random(seed).getrandbits

    def below(self, n: int) -> int:
        """Uniform integer in [0, n) by rejection sampling (no modulo bias)."""
        if n <= 0:
            raise ValueError(f"below() needs n > 0, got {n}")
        k = n.bit_length()
        while True:
            r = self._bits(k)
            if r < n:
                return r

    def integer(self, low: int, high: int) -> int:
        """Uniform integer in [low, high] (both inclusive)."""
        return low + self.below(high - low + 1)

    def uniform(self) -> float:
        """Uniform float in [0, 1) with 53 random bits."""
        return self._bits(53) / float(1 << 53)

    def choice(self, items: Sequence[T]) -> T:
        n = len(items)
        if n <= 0:
            raise ValueError(f"below() needs n > 0, got {n}")
        k, bits = n.bit_length(), self._bits
        r = bits(k)
        while r >= n:  # below(n), inlined: knowledge bases and names draw tens of thousands of choices
            r = bits(k)
        return items[r]

    def below_each(self, sizes: Sequence[int]) -> list[int]:
        """``[self.below(n) for n in sizes]``, the same draws in one call (a knowledge base draws one per fact)."""
        bits, out = self._bits, []
        for n in sizes:
            if n <= 0:
                raise ValueError(f"below() needs n > 0, got {n}")
            k = n.bit_length()
            r = bits(k)
            while r >= n:
                r = bits(k)
            out.append(r)
        return out

    def shuffled(self, items: Sequence[T]) -> list[T]:
        """A new list: Fisher-Yates shuffle of ``items``."""
        out, bits = list(items), self._bits
        for i in range(len(out) - 1, 0, -1):
            width = (i + 1).bit_length()
            j = bits(width)
            while j > i:  # below(i + 1), inlined: graph shuffles its whole population per instance
                j = bits(width)
            out[i], out[j] = out[j], out[i]
        return out

    def sample(self, items: Sequence[T], k: int) -> list[T]:
        """``k`` distinct elements in random order (partial Fisher-Yates)."""
        if not 0 <= k <= len(items):
            raise ValueError(f"sample size {k} outside 0..{len(items)}")
        draw = LazyPermutation(len(items), self)
        return [items[draw.next()] for _ in range(k)]


class LazyPermutation:
    """Draws a random permutation of range(n) one element at a time (partial Fisher-Yates).

    Cost is O(1) per draw plus the swaps actually made, so a generator that needs an unknown number of
    fresh words pays only for the ones it uses.
    """

    def __init__(self, n: int, rng: StableRng) -> None:
        self._n = n
        self._rng = rng
        self._taken = 0
        self._swapped: dict[int, int] = {}

    def remaining(self) -> int:
        return self._n - self._taken

    def take(self, k: int) -> list[int]:
        """The next ``k`` draws: the same values as ``k`` calls of ``next()``, in one loop."""
        if self._taken + k > self._n:
            raise IndexError("permutation exhausted")
        n, bits, swapped = self._n, self._rng._bits, self._swapped
        get = swapped.get  # bound once: this loop draws every word of a long context
        out: list[int] = []
        append = out.append
        for i in range(self._taken, self._taken + k):
            left = n - i
            width = left.bit_length()
            r = bits(width)
            while r >= left:  # StableRng.below, inlined
                r = bits(width)
            j = i + r
            append(get(j, j))
            swapped[j] = get(i, i)
        self._taken += k
        return out

    def next(self) -> int:
        return self.take(1)[0]


def numpy_generator(*parts: object):
    """A numpy ``Generator`` (PCG64) seeded by ``derive_seed(*parts)``: for vectorised resampling in the analysis
    (bootstrap), never for generating instances. The one sanctioned door to numpy's random module."""
    import numpy as np

    return np.random.Generator(np.random.PCG64(derive_seed(*parts)))  # noqa: TID251
