"""Reference solver (reads only the prompt) and seeded chance baseline for Find the Origin."""

from __future__ import annotations

import hashlib

from ...core.rng import StableRng, derive_seed
from .prompt import context_lines, parse_line, parse_question


def solve(prompt: str) -> str | None:
    """Follow links backwards from the asked word until a word nothing links to (None: not our prompt)."""
    predecessor: dict[str, str] = {}
    for line in context_lines(prompt):
        pair = parse_line(line)
        if pair:
            predecessor[pair[1]] = pair[0]
    word = parse_question(prompt)
    if word is None or not predecessor:
        return None
    seen = {word}
    while word in predecessor and predecessor[word] not in seen:
        word = predecessor[word]
        seen.add(word)
    return f"Walking the links backwards ends at this word.\nFINAL ANSWER: {word}"


def guess(prompt: str, seed: int) -> str | None:
    """A uniformly random word from the list (seeded by the prompt, so reruns agree); None: not ours."""
    if parse_question(prompt) is None:
        return None
    words = sorted({w for line in context_lines(prompt) if (pair := parse_line(line)) for w in pair})
    if not words:
        return None
    prompt_key = hashlib.sha256(prompt.encode("utf-8")).hexdigest()
    return f"FINAL ANSWER: {StableRng(derive_seed('guess', seed, prompt_key)).choice(words)}"
