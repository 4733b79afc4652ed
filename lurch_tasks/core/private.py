"""Private-seed evaluation: maintainers generate docs from a seed that is never published.

``LURCH_PRIVATE_SEED`` (an integer in the environment) replaces the generation seed of every lm-eval task and of
the leaderboard validator. The seed itself is never written anywhere: each generated row is *masked* before it
leaves the generator — its ``seed`` field becomes a number derived from the seed's SHA-256 (``masked_seed``) and its
``pair_key`` names that hash instead of the seed — and the doc cache is not used. Everything else in a row is derived
from the seed through blake2b, which does not reveal it. Runs and submissions record only the SHA-256
(``seed_sha256``), so anyone can check which private seed a result came from, and no one can regenerate its docs.
"""

from __future__ import annotations

import hashlib
import os

from .generation import MAX_SEED

ENV = "LURCH_PRIVATE_SEED"


def private_seed() -> int | None:
    """The private seed from the environment, or None (public evaluation). A malformed value is an error."""
    text = os.environ.get(ENV, "").strip()
    if not text:
        return None
    if not text.isdigit() or not 0 <= int(text) <= MAX_SEED:
        raise ValueError(f"{ENV}: the value is not allowed (not shown); allowed: an integer in 0..{MAX_SEED}")
    return int(text)


def seed_sha256(seed: int) -> str:
    return hashlib.sha256(f"lurch-private-seed:{seed}".encode("ascii")).hexdigest()


def masked_seed(seed: int) -> int:
    """What a private doc's ``seed`` field holds: the top 62 bits of the seed's SHA-256 (an int64, never the seed)."""
    return int(seed_sha256(seed)[:16], 16) >> 2


def mask_row(row: dict, seed: int) -> dict:
    """A row generated from the private ``seed`` with every literal trace of the seed replaced by its hash."""
    masked = dict(row)
    masked["seed"] = masked_seed(seed)
    family, shared, _, split, index = row["pair_key"].split("/")
    masked["pair_key"] = f"{family}/{shared}/private-{seed_sha256(seed)[:16]}/{split}/{index}"
    return masked
