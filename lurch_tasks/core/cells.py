"""Locating instance ``index`` in a config's knob grid, and deriving its seed: shared by every family."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from math import gcd
from typing import Any

from .config import config_hash
from .rng import derive_seed
from .vocab import source_hash


@dataclass(frozen=True)
class InstanceSetup:
    cell: Any  # the config's cell NamedTuple for this index
    sample: int  # how many times this cell came round before (index // number of cells)
    config_hash: str
    source_hash: str
    rng_seed: int  # blake2b of (family, config hash without the compared knobs, seed, split, index)
    pair_key: str  # equal for instance i of configs that differ only in compared knobs


GOLDEN_RATIO = (1 + 5**0.5) / 2


def golden_stride(total: int) -> int:
    """The integer nearest total/phi that is coprime with ``total``: k -> k*stride mod total is then a
    permutation whose every prefix is spread over the whole grid (a low-discrepancy order)."""
    if total <= 2:
        return 1
    base = round(total / GOLDEN_RATIO)
    for delta in range(total):
        for candidate in (base + delta, base - delta):
            if 0 < candidate < total and gcd(candidate, total) == 1:
                return candidate
    return 1


def cell_position(index: int, num_cells: int) -> int:
    """Position in the cell list of instance ``index``: golden-stride order, every cell once per round of
    ``num_cells`` indices, so any prefix (``--limit N``) covers every knob axis nearly evenly."""
    return (index % num_cells) * golden_stride(num_cells) % num_cells


def config_cell_position(config: Any, index: int, num_cells: int) -> int:
    """Position of instance ``index``'s cell: the golden-stride order, unless the config orders its docs
    itself (``config.cell_position``, e.g. RECON keeps a case's questions on consecutive indices)."""
    own = getattr(config, "cell_position", None)
    return own(index) if own is not None else cell_position(index, num_cells)


def cell_at(config: Any, index: int) -> Any:
    """The knob cell of instance ``index``."""
    cells = config.cells()
    return cells[config_cell_position(config, index, len(cells))]


def pair_hash(config: Any, compared_knobs: tuple[str, ...]) -> str:
    """Hash of the config with the compared knobs reset to their defaults: what matched pairs share."""
    defaults = {f.name: f.default for f in dataclasses.fields(config) if f.name in compared_knobs}
    return config_hash(dataclasses.replace(config, **defaults))


@lru_cache(maxsize=64)
def _fingerprints(config: Any, vocabulary: tuple[str, ...], compared: tuple[str, ...]) -> tuple[str, str, str]:
    return config_hash(config), source_hash(vocabulary), pair_hash(config, compared)


def setup_instance(family: str, config: Any, vocabulary: tuple[str, ...], seed: int, split: str,
                   index: int, compared_knobs: tuple[str, ...] = ()) -> InstanceSetup:
    """Docs interleave the cells: round r = index // |cells| visits every cell once, in golden-stride order.

    The instance seed leaves out ``compared_knobs``: every random choice that is not about the compared
    knob itself is the same across configs that differ only in it."""
    cells = config.cells()
    if not 0 <= index < len(cells) * config.num_samples:
        raise ValueError(f"index: {index} is out of range; allowed: 0..{len(cells) * config.num_samples - 1}")
    cfg_hash, src_hash, shared = _fingerprints(config, vocabulary, tuple(compared_knobs))
    cell = cells[config_cell_position(config, index, len(cells))]
    return InstanceSetup(cell, index // len(cells), cfg_hash, src_hash, derive_seed(family, shared, seed, split, index),
                         f"{family}/{shared[:16]}/{seed}/{split}/{index}")
