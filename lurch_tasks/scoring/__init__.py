"""Answer parsing and metrics; no generation code lives here.

The names below are read from their modules on first use (PEP 562): a generator that needs one helper of a
scoring module (ImplicitHop's NOT_FOUND, RECON's adjacent_pairs) does not import, and compile the patterns of,
every answer parser."""

from __future__ import annotations

from importlib import import_module
from typing import Any

_HOMES = {"normalize_entity": "answers", "parse_final_answer": "answers", "ItemScores": "items",
          "memory_drift": "items", "score_items": "items", "edge_item": "names", "normalize_name": "names",
          "parse_edges": "pairs"}

__all__ = [
    "ItemScores", "edge_item", "memory_drift", "normalize_entity", "normalize_name", "parse_edges",
    "parse_final_answer", "score_items",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # later reads find it without this hook
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
