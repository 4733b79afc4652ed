"""A graph world and its token tables, cached on disk (``core.disk_cache``).

A 128k config's world holds ~3.7k profiles: making it, sampling its units and tokenizing every profile twice
(in-prompt costs in the prompt's tokenizer, token starts in the reference one) took ~2.5 s of a fresh process
before its first prompt, more than generating eight prompts. A cold process now reads them back (~0.1 s).

Keys: the world's table names what the world derives from: its spec, its seed, the source of the modules that
make it and the vocabulary files' bytes, so an edited generator never reads a stale world. The token tables add
the tokenizer's ``table_stamp`` (no stamp: built in memory) and a digest of the profile texts themselves.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path

import numpy as np

from ...core.budget import joined_costs, joined_starts, joined_tokens
from ...core.disk_cache import cached_table, file_stamp, tokenizer_table
from ...core.vocab import source_hash
from .prompt import PROFILE_SEPARATOR
from .world import VOCABULARY, Cue, Person, World, WorldSpec, compose_profile

_HERE = Path(__file__).resolve().parent
_CORE = _HERE.parent.parent / "core"
# The code a world and its units are made by: an edit to any of these reads another table.
WORLD_SOURCES = (_HERE / "world.py", _HERE / "sampling.py", _HERE / "config.py", _HERE / "tables.py",
                 _CORE / "rng.py", _CORE / "vocab.py")
FORMAT = 1  # of the world table's JSON; bump when it changes


@cache
def code_stamp() -> str:
    return hashlib.sha256((file_stamp(*WORLD_SOURCES) + source_hash(VOCABULARY)).encode("ascii")).hexdigest()


def world_key(spec: WorldSpec, seed: int) -> dict[str, object]:
    return {"spec": dataclasses.astuple(spec), "seed": seed, "code": code_stamp(), "format": FORMAT}


# ---------------------------------------------------------------- the world as two arrays

def world_arrays(world: World) -> dict[str, np.ndarray]:
    """The world as arrays: a UTF-8 JSON document of its people, cues, profiles (name and tagged sentences: the
    text and spans follow from them), structures and identifiers; its links as an (n, 3) table."""
    doc = {
        "people": [dataclasses.astuple(person) for person in world.people],
        "cues": [[cue.id, cue.kind, cue.key, cue.members, cue.sentences] for cue in world.cues],
        "profiles": [[profile.name, profile.sentences] for profile in world.profiles],
        "structures": world.structures,
        "identifiers": sorted(world.identifiers),
    }
    data = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return {"world": np.frombuffer(data, dtype=np.uint8),
            "links": np.array(world.links, dtype=np.int64).reshape(-1, 3)}


def world_from_arrays(arrays: dict[str, np.ndarray]) -> World:
    doc = json.loads(arrays["world"].tobytes().decode("utf-8"))
    people = tuple(Person(*fields) for fields in doc["people"])
    cues = tuple(Cue(i, kind, key, tuple(members), tuple(sentences))
                 for i, kind, key, members, sentences in doc["cues"])
    profiles = tuple(compose_profile(name, [(tag, sentence) for tag, sentence in tagged])
                     for name, tagged in doc["profiles"])
    structures = tuple((kind, tuple(members)) for kind, members in doc["structures"])
    links = tuple(tuple(link) for link in arrays["links"].tolist())
    return World(people, links, cues, profiles, structures, frozenset(doc["identifiers"]))


def stored_world(spec: WorldSpec, seed: int, make: Callable[[WorldSpec, int], World]) -> World:
    """``make(spec, seed)``, or the same world read back from the disk cache."""
    made: list[World] = []

    def build() -> dict[str, np.ndarray]:
        made.append(make(spec, seed))
        return world_arrays(made[0])

    arrays = cached_table("graph-world", world_key(spec, seed), build)
    return made[0] if made else world_from_arrays(arrays)


def stored_units(spec: WorldSpec, parameter: int, seed: int,
                 sample: Callable[[], Sequence[tuple[int, ...]]]) -> tuple[tuple[int, ...], ...]:
    """``sample()`` (the world's Algorithm 1 units), or the same units read back from the disk cache."""
    def build() -> dict[str, np.ndarray]:
        units = list(sample())
        return {"members": np.array([p for unit in units for p in unit], dtype=np.int64),
                "sizes": np.array([len(unit) for unit in units], dtype=np.int64)}

    arrays = cached_table("graph-units", {**world_key(spec, seed), "parameter": parameter}, build)
    members, bounds = arrays["members"].tolist(), np.cumsum(arrays["sizes"]).tolist()
    return tuple(tuple(members[a:b]) for a, b in zip([0, *bounds[:-1]], bounds, strict=True))


# ---------------------------------------------------------------- token tables of the profiles

def texts_digest(texts: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for text in texts:
        data = text.encode("utf-8")
        digest.update(len(data).to_bytes(8, "little") + data)
    return digest.hexdigest()


def _table_key(texts: Sequence[str]) -> dict[str, object]:
    return {"texts": texts_digest(texts), "separator": PROFILE_SEPARATOR}


def profile_cost_table(texts: Sequence[str], counter) -> tuple[int, ...]:
    """``joined_costs`` of the profiles (in-prompt tokens of each), cached on disk under the tokenizer's stamp."""
    def build() -> dict[str, np.ndarray]:
        return {"costs": np.array(joined_costs(list(texts), counter, PROFILE_SEPARATOR), dtype=np.int64)}

    arrays = tokenizer_table("graph-profile-costs", counter.table_stamp, _table_key(texts), build)
    return tuple(arrays["costs"].tolist())


def profile_starts_table(texts: Sequence[str], counter) -> tuple[np.ndarray, ...]:
    """``joined_starts`` of the profiles (each one's token starts, relative to it), cached on disk."""
    def build() -> dict[str, np.ndarray]:
        starts = joined_starts(list(texts), counter, PROFILE_SEPARATOR)
        flat = np.concatenate(starts) if starts else np.zeros(0, dtype=np.int32)
        return {"starts": flat.astype(np.int32), "counts": np.array([len(s) for s in starts], dtype=np.int64)}

    arrays = tokenizer_table("graph-profile-starts", counter.table_stamp, _table_key(texts), build)
    cuts = np.cumsum(arrays["counts"])[:-1]
    return tuple(np.split(np.asarray(arrays["starts"], dtype=np.int32), cuts))


# What follows every profile of a prompt: another profile's name or the request, a non-whitespace character.
NEXT_TEXT = "A"


@dataclasses.dataclass(frozen=True)
class ProfileTokens:
    """Per profile: its in-prompt tokens wherever it stands (``costs``) and how many of them start in the separator
    after it (``tails``: tokens of the context's last profile that lie beyond the context)."""

    costs: tuple[int, ...]
    tails: tuple[int, ...]


def in_prompt_tokens(texts: Sequence[str], counter) -> ProfileTokens:
    """One tokenization of the texts joined by the separator with a non-whitespace text after the last, so that
    the last one too is measured as a prompt holds it (``joined_costs`` measures it at the text's end, where
    GPT-2's split reads its trailing newlines as one piece). Exact wherever it stands when the tokenizer cuts
    before every line break (``generate.sums_exactly``)."""
    if not texts:
        return ProfileTokens((), ())
    joined = joined_tokens([*texts, NEXT_TEXT], counter, PROFILE_SEPARATOR)
    ends = joined.bounds[1:-1] - len(PROFILE_SEPARATOR)  # each text's end, where its separator starts
    cuts = joined.cuts
    in_text = np.searchsorted(joined.starts, ends, side="left") - cuts[:-2]
    costs = np.diff(cuts)[:-1]
    return ProfileTokens(tuple(costs.tolist()), tuple((costs - in_text).tolist()))


def profile_token_table(texts: Sequence[str], counter) -> tuple[tuple[int, ...], ProfileTokens]:
    """``joined_costs`` of the profiles (the fit's estimates, as they always were) and their ``in_prompt_tokens``,
    from one pass over the world (and one over its last profile alone), cached on disk under the tokenizer's stamp.
    Only for a tokenizer that cuts before every line break: there a profile's tokens are the same in any company,
    so the two differ at most in the last profile."""
    def build() -> dict[str, np.ndarray]:
        exact = in_prompt_tokens(texts, counter)
        last = joined_costs(list(texts[-1:]), counter, PROFILE_SEPARATOR)
        return {"costs": np.array(exact.costs, dtype=np.int64), "tails": np.array(exact.tails, dtype=np.int64),
                "last": np.array(last, dtype=np.int64)}

    arrays = tokenizer_table("graph-profile-tokens", counter.table_stamp, _table_key(texts), build)
    exact = ProfileTokens(tuple(arrays["costs"].tolist()), tuple(arrays["tails"].tolist()))
    return exact.costs[:-1] + tuple(arrays["last"].tolist()), exact
