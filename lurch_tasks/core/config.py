"""Helpers for frozen, validated family configs (fail fast, one clear line per problem)."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from .rng import canonical_json
from .suggest import did_you_mean

C = TypeVar("C")


class ConfigError(ValueError):
    """A config value is not allowed; the message names the field, the value and what is allowed."""


def require(condition: bool, field: str, value: object, allowed: str) -> None:
    if not condition:
        raise ConfigError(f"{field}: {value!r} is not allowed; allowed: {allowed}")


def require_int_range(field: str, value: object, low: int, high: int) -> None:
    ok = isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
    require(ok, field, value, f"an integer in {low}..{high}")


def require_number(field: str, value: object, low: float, high: float) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and low <= value <= high
    require(ok, field, value, f"a number in {low:g}..{high:g}")


def require_list(field: str, value: object) -> None:
    """List knobs arrive as tuples (config_from_mapping converts lists); a scalar is a user error."""
    require(isinstance(value, tuple) and len(value) > 0, field, value, "a non-empty list, e.g. [1, 2]")


def require_budget_knobs(tokenizer: object, chat_template: object) -> None:
    """The two knobs every family's token budget reads (DESIGN 3.3)."""
    require(isinstance(tokenizer, str) and bool(tokenizer), "tokenizer", tokenizer,
            "cl100k_base, a local Hugging Face tokenizer folder, PATH.gguf, or a cached hub id")
    require(isinstance(chat_template, bool), "chat_template", chat_template,
            "true (count prompts inside the tokenizer's chat template) or false")


def require_choice(field: str, value: object, choices: Iterable[object]) -> None:
    choices = tuple(choices)
    require(value in choices, field, value, " | ".join(map(str, choices)))


def config_from_mapping(cls: type[C], values: Mapping[str, Any], *, base: C | None = None) -> C:
    """Build ``cls`` from a mapping, rejecting unknown keys; lists become tuples (configs are frozen).

    With ``base``, only the given keys change and the rest keep the base's values.
    """
    fields = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(values) - fields)
    if unknown:
        raise ConfigError(
            f"{unknown[0]}: unknown config key for {cls.__name__}{did_you_mean(unknown[0], fields)}; allowed: "
            f"{', '.join(sorted(fields))}"
        )
    cleaned = {key: tuple(v) if isinstance(v, list) else v for key, v in values.items()}
    if base is not None:
        return dataclasses.replace(base, **cleaned)  # type: ignore[type-var]
    return cls(**cleaned)


def config_to_dict(config: object) -> dict[str, Any]:
    """The config's fields; a field marked ``omit_default`` is left out at its default, so adding such a knob
    keeps the hashes (and rows) of every config that does not use it."""
    values = dataclasses.asdict(config)  # type: ignore[call-overload]
    for f in dataclasses.fields(config):  # type: ignore[arg-type]
        if f.metadata.get("omit_default") and values[f.name] == f.default:
            del values[f.name]
    return values


def config_hash(config: object) -> str:
    """SHA-256 of the canonical JSON of a config (its tokenizer id included)."""
    payload = {"type": type(config).__name__, **config_to_dict(config)}
    return hashlib.sha256(canonical_json(payload).encode("ascii")).hexdigest()
