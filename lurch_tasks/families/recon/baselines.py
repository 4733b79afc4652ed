"""RECON baselines: the reference solver (``solver.solve``) and a seeded random pick among the six letters."""

from __future__ import annotations

from ...core.rng import StableRng, derive_seed
from .prompt import LETTERS
from .solver import solve, split_prompt

__all__ = ["guess", "solve"]


def guess(prompt: str, seed: int) -> str | None:
    """One of the six letters, uniformly, seeded by the question (expected score 0 under the penalised rule)."""
    if split_prompt(prompt, read_case=False) is None:
        return None
    rng = StableRng(derive_seed("recon-guess", seed, prompt[-600:]))
    return f"ANSWER: {rng.choice(LETTERS)}"
