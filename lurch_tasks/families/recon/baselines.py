"""RECON baselines: the reference solver (``solver.solve``) and a seeded random answer in the prompt's format:
a uniform letter (MCQ single), a uniform random subset (MCQ multiple), a uniform permutation (ordering), a
uniform number in 0-15 (integer) and a word of the question (free form). All but the integer guess score 0 in
expectation."""

from __future__ import annotations

from ...core.rng import StableRng, derive_seed
from .prompt import letters_for
from .solver import solve, split_prompt

__all__ = ["guess", "solve"]

MAX_GUESS = 15


def guess(prompt: str, seed: int) -> str | None:
    parsed = split_prompt(prompt, read_case=False)
    if parsed is None:
        return None
    rng = StableRng(derive_seed("recon-guess", seed, prompt[-600:]))
    letters = letters_for(parsed.format)[: len(parsed.options)]
    if parsed.format == "mcq_single":
        return f"ANSWER: {rng.choice(letters)}"
    if parsed.format == "mcq_multi":
        size = rng.integer(1, len(letters) - 1)
        return "ANSWER: " + ", ".join(sorted(rng.sample(list(letters), size)))
    if parsed.format == "ordering":
        return "ANSWER: " + ", ".join(rng.shuffled(list(letters)))
    if parsed.format == "integer":
        return f"ANSWER: {rng.integer(0, MAX_GUESS)}"
    return f"ANSWER: {rng.choice(parsed.question.split())}"
