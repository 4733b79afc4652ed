"""The Instance record (one benchmark row) and its JSON Schema."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jsonschema

from .rng import canonical_json

ANSWER_FORMATS = ("entity", "edge_set", "mcq_single", "mcq_multi", "integer", "ordering", "free_form")


@dataclass(frozen=True)
class Instance:
    id: str
    family: str
    task: str
    config_name: str
    split: str
    index: int
    seed: int
    family_version: str
    config_hash: str
    source_hash: str
    context: str
    question: str
    prompt: str
    answer_format: str
    answer: str
    answer_text: str
    options: list[str]
    answer_items: list[str]
    evidence: list[dict]
    reasoning_graph: dict
    difficulty: dict
    params: str
    pair_key: str  # shared by instance i of configs that differ only in a compared knob (DESIGN 3.5)

    def to_row(self) -> dict[str, Any]:
        return asdict(self)


def instance_id(config_name: str, split: str, index: int, family: str) -> str:
    return f"{family}/{config_name}/{split}/{index}"


@lru_cache(maxsize=1)
def instance_schema() -> dict:
    text = resources.files("lurch_tasks.core").joinpath("instance.schema.json").read_text("utf-8")
    return json.loads(text)


@lru_cache(maxsize=1)
def _validator() -> jsonschema.Draft202012Validator:
    import jsonschema  # only audits validate rows: generating one need not pay its ~0.2 s import

    schema = instance_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def schema_errors(row: dict) -> list[str]:
    """Every schema violation of ``row`` as 'path: message' (empty when valid)."""
    errors = sorted(_validator().iter_errors(row), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(map(str, e.absolute_path)) or '<row>'}: {e.message}" for e in errors]


def validate(row: dict) -> None:
    """Raise ``ValueError`` naming the first problem if ``row`` is not a valid Instance."""
    errors = schema_errors(row)
    if errors:
        raise ValueError(f"invalid instance {row.get('id', '?')}: {errors[0]}")


# Keys the harness adds to a generated row for one run (``harness.tasks.run_keys``): how to read the model's output,
# not part of the instance, so a logged doc is compared with its regenerated row without them.
RUN_KEYS = ("think_end_token", "bins", "gen_budget")


def instance_part(doc: dict) -> dict:
    """A logged doc without the run's keys (``RUN_KEYS``): the row this package generated."""
    return {key: value for key, value in doc.items() if key not in RUN_KEYS}


def content_hash(row: dict) -> str:
    """SHA-256 of the canonical JSON of a row: the fingerprint used by golden tests."""
    return hashlib.sha256(canonical_json(row).encode("ascii")).hexdigest()
