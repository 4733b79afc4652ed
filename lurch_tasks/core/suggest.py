"""'Did you mean' for a name typed by a user: the closest allowed names, by difflib's similarity ratio."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

CUTOFF = 0.75  # close enough to be a typo (one or two letters off in a name of ten), not another word


def closest(name: str, allowed: Iterable[str], n: int = 3) -> list[str]:
    """The allowed names most like ``name`` (at most ``n``, best first); none when nothing is close."""
    return difflib.get_close_matches(str(name), sorted(set(allowed)), n=n, cutoff=CUTOFF)


def did_you_mean(name: str, allowed: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest allowed names, or ``""``: text to add to an error line."""
    found = closest(name, allowed)
    return f" (did you mean {' or '.join(repr(match) for match in found)}?)" if found else ""
