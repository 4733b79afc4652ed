"""Reference solver (reads only the prompt) and seeded random-pairs baseline for graph reconstruction."""

from __future__ import annotations

import hashlib
import re
from itertools import combinations

from ...core.rng import StableRng, derive_seed
from .prompt import ANSWER_MARKER, CONTEXT_HEADER, profile_name, split_prompt

# The canonical identifier formats written by world.py: every shared cue appears verbatim in each member's
# profile, and no two cues (or decoys, or own details) share an identifier.
_IDENTIFIER = re.compile(
    r"\+\d{2} \d{3} \d{3} \d{4}"  # phone
    r"|\b[A-Z]{2}-\d{3}-[A-Z]{2}\b"  # plate
    r"|\b[A-Z]{2}\d{2} \d{4} \d{4} \d{4}\b"  # bank account
    r"|flight [A-Z]{2} \d{3,4} on \d{1,2} [A-Z][a-z]+ \d{4}"  # flight + date
    r"|the [A-Z][a-z]+ [A-Z][a-z]+ [A-Z][a-z]+ in [A-Z][a-z]+ on \d{1,2} [A-Z][a-z]+ \d{4}"  # event
    r"|the [A-Z][a-z]+ [A-Z][a-z]+ (?:Circle|Society|Club|Collective|Guild|Fellowship|Syndicate|League)\b"  # group
)


def _is_ours(prompt: str) -> bool:
    return f"\n{CONTEXT_HEADER}\n" in prompt and "Name A -- Name B" in prompt


def recover_edges(prompt: str) -> list[tuple[str, str]]:
    """People whose profiles share an identifier, as sorted name pairs."""
    holders: dict[str, list[str]] = {}
    for paragraph in split_prompt(prompt):
        name = profile_name(paragraph)
        if name is None:
            continue
        for identifier in sorted(set(_IDENTIFIER.findall(paragraph))):
            holders.setdefault(identifier, []).append(name)
    pairs = {tuple(sorted(pair)) for names in holders.values() for pair in combinations(sorted(set(names)), 2)}
    return sorted(pairs)


def solve(prompt: str) -> str | None:
    if not _is_ours(prompt):
        return None
    lines = [f"{a} -- {b}" for a, b in recover_edges(prompt)]
    return f"{ANSWER_MARKER}\n" + "\n".join(lines)


def guess(prompt: str, seed: int) -> str | None:
    """Random pairs of names from the prompt: a quarter as many pairs as there are people (at least one)."""
    if not _is_ours(prompt):
        return None
    names = sorted({n for p in split_prompt(prompt) if (n := profile_name(p))})
    if len(names) < 2:
        return None
    rng = StableRng(derive_seed("graph-guess", seed, hashlib.sha256(prompt.encode("utf-8")).hexdigest()))
    lines = []
    for _ in range(max(1, len(names) // 4)):
        a, b = rng.sample(names, 2)
        lines.append(f"{a} -- {b}")
    return f"{ANSWER_MARKER}\n" + "\n".join(lines)
