"""RECON domain catalogues (package data ``recon_catalog.json``): roles, entry types and their authors, the four
data streams, invalidation kinds and the words case items are built from."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache

from ...core.vocab import _data_file

CATALOG_FILE = "recon_catalog.json"
DOMAINS = ("criminal", "medical", "financial")
# Typical longest evidence chain per domain (RECON reports deeper provenance in crime cases than in medical or
# financial ones); the config's max_hops caps it.
DOMAIN_MAX_HOPS = {"criminal": 15, "medical": 9, "financial": 9}


@dataclass(frozen=True)
class Stream:
    name: str
    entry_type: str
    author_role: str


@dataclass(frozen=True)
class Domain:
    name: str
    incident: str
    place_kinds: tuple[str, ...]
    entry_types: dict[str, tuple[str, ...]] = field(hash=False)  # type -> author roles
    finding_types: tuple[str, ...]
    statement_type: str
    action_type: str
    actions: tuple[str, ...]
    streams: tuple[Stream, ...]
    invalidations: tuple[str, ...]
    adjectives: tuple[str, ...]
    items: tuple[str, ...]
    custody_verb: str
    conclusion: str
    subject_role: str

    def all_types(self) -> tuple[str, ...]:
        return tuple(self.entry_types) + tuple(s.entry_type for s in self.streams)


@cache
def domain(name: str) -> Domain:
    raw = json.loads(_data_file(CATALOG_FILE).read_text("utf-8"))["domains"][name]
    return Domain(
        name=name, incident=raw["incident"], place_kinds=tuple(raw["place_kinds"]),
        entry_types={k: tuple(v) for k, v in raw["entry_types"].items()}, finding_types=tuple(raw["finding_types"]),
        statement_type=raw["statement_type"], action_type=raw["action_type"], actions=tuple(raw["actions"]),
        streams=tuple(Stream(k, v[0], v[1]) for k, v in raw["streams"].items()),
        invalidations=tuple(raw["invalidations"]), adjectives=tuple(raw["adjectives"]), items=tuple(raw["items"]),
        custody_verb=raw["custody_verb"], conclusion=raw["conclusion"], subject_role=raw["subject_role"],
    )
