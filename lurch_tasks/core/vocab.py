"""Shipped vocabularies (see core/data/README.md for provenance and licences)."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from importlib import resources


def _data_file(name: str):
    return resources.files("lurch_tasks.core").joinpath("data", name)


@lru_cache(maxsize=None)
def load_words(name: str) -> tuple[str, ...]:
    """One entry per line, in file order (for english_words.txt: most frequent first)."""
    text = _data_file(name).read_text("utf-8")
    return tuple(line for line in text.splitlines() if line)


@lru_cache(maxsize=None)
def source_hash(names: tuple[str, ...]) -> str:
    """SHA-256 over the named vocabulary files' bytes, in the given order."""
    digest = hashlib.sha256()
    for name in names:
        data = _data_file(name).read_bytes()
        digest.update(name.encode("utf-8") + b"\0" + str(len(data)).encode("ascii") + b"\0" + data)
    return digest.hexdigest()
