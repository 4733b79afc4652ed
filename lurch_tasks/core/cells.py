"""Locating instance ``index`` in a config's knob grid, and deriving its seed: shared by every family."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
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
    rng_seed: int  # blake2b of (family, config hash, seed, split, index)


@lru_cache(maxsize=64)
def _fingerprints(config: Any, vocabulary: tuple[str, ...]) -> tuple[str, str]:
    return config_hash(config), source_hash(vocabulary)


def setup_instance(family: str, config: Any, vocabulary: tuple[str, ...], seed: int, split: str,
                   index: int) -> InstanceSetup:
    """Docs interleave the cells round-robin: index i is cell i mod |cells|, so any prefix is balanced."""
    cells = config.cells()
    if not 0 <= index < len(cells) * config.num_samples:
        raise ValueError(f"index: {index} is out of range; allowed: 0..{len(cells) * config.num_samples - 1}")
    cfg_hash, src_hash = _fingerprints(config, vocabulary)
    return InstanceSetup(cells[index % len(cells)], index // len(cells), cfg_hash, src_hash,
                         derive_seed(family, cfg_hash, seed, split, index))
