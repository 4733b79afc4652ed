"""A generic Hugging Face ``GeneratorBasedBuilder`` for one lurch-tasks family (DESIGN 7).

Each family gets a module ``lurch_tasks.dataset_builders.<family>`` that subclasses :class:`LurchBuilder`
and sets ``FAMILY``; its BuilderConfigs are the family's registered tasks, one per task name. Rows
come from ``lurch_tasks.core.generation`` -- the same function lm-eval uses -- so the builder adds no
generation logic of its own: it only declares explicit Features and shards the index range.
"""

from __future__ import annotations

import ctypes
import importlib
import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import datasets
import pyarrow as pa

from lurch_tasks.core.generation import generate_row, resolve_task, task_size
from lurch_tasks.core.instance import instance_schema
from lurch_tasks.core.registry import Task, all_tasks, get_family
from lurch_tasks.core.rng import canonical_json

SPLIT = "test"
# Contiguous index ranges per split. datasets hands each of the ``num_proc`` jobs a contiguous run of
# ranges and concatenates the jobs in order, so rows stay in index order for any num_proc <= this.
NUM_SHARDS = 64

_STRING = datasets.Value("string")
_INT64 = datasets.Value("int64")
_FLOAT64 = datasets.Value("float64")
_BOOL = datasets.Value("bool")
_SCHEMA_DTYPES = {"integer": _INT64, "number": _FLOAT64, "string": _STRING, "boolean": _BOOL}


# --------------------------------------------------------------------------- features


def difficulty_features(difficulty: Mapping[str, Any]) -> dict[str, datasets.Value]:
    """Struct fields of ``difficulty`` in the row's key order.

    The shared LURCH keys take their type from the Instance JSON Schema; the family's own knobs are
    inferred from the Python type of the value in this (first) row, because families do not declare them.
    """
    declared = instance_schema()["properties"]["difficulty"]["properties"]
    fields: dict[str, datasets.Value] = {}
    for key, value in difficulty.items():
        if key in declared:
            fields[key] = _SCHEMA_DTYPES[declared[key]["type"]]
        else:
            fields[key] = _dtype_of(key, value)
    return fields


def _dtype_of(key: str, value: object) -> datasets.Value:
    # bool before int: bool is a subclass of int.
    if isinstance(value, bool):
        return _BOOL
    if isinstance(value, int):
        return _INT64
    if isinstance(value, float):
        return _FLOAT64
    if isinstance(value, str):
        return _STRING
    raise ValueError(f"difficulty.{key}: {value!r} has no Arrow type; allowed: bool, int, float or str in every row")


def instance_features(difficulty: Mapping[str, datasets.Value]) -> datasets.Features:
    """Explicit Features of the Instance record (DESIGN 3.2), with the family's difficulty struct."""
    return datasets.Features(
        {
            "id": _STRING,
            "family": _STRING,
            "task": _STRING,
            "config_name": _STRING,
            "split": _STRING,
            "index": _INT64,
            "seed": _INT64,
            "family_version": _STRING,
            "config_hash": _STRING,
            "source_hash": _STRING,
            "context": _STRING,
            "question": _STRING,
            "prompt": _STRING,
            "answer_format": _STRING,
            "answer": _STRING,
            "answer_text": _STRING,
            "options": datasets.List(_STRING),
            "answer_items": datasets.List(_STRING),
            "evidence": datasets.List({"start": _INT64, "end": _INT64, "token_start": _INT64, "token_end": _INT64}),
            "reasoning_graph": {
                "nodes": datasets.List({"id": _STRING, "kind": _STRING, "text": _STRING}),
                "edges": datasets.List(datasets.List(_STRING)),
            },
            "difficulty": dict(difficulty),
            "params": _STRING,
            "pair_key": _STRING,
        }
    )


def type_mismatches(value: Any, feature: Any, path: str = "") -> list[str]:
    """Where ``value`` differs in shape or Python type from ``feature``.

    Strict on purpose: an int where a float column is declared would come back from Parquet as a float
    and change the row's canonical JSON (and its content hash), so such rows are refused up front.
    """
    where = path or "<row>"
    if isinstance(feature, dict):
        if not isinstance(value, dict):
            return [f"{where}: expected an object, got {type(value).__name__}"]
        if set(value) != set(feature):
            missing = sorted(set(feature) - set(value))
            extra = sorted(set(value) - set(feature))
            return [f"{where}: keys differ from the first row (missing {missing}, extra {extra})"]
        problems: list[str] = []
        for key, sub in feature.items():
            problems.extend(type_mismatches(value[key], sub, f"{path}.{key}" if path else key))
        return problems
    if isinstance(feature, datasets.List):
        if not isinstance(value, list):
            return [f"{where}: expected a list, got {type(value).__name__}"]
        problems = []
        for position, item in enumerate(value):
            problems.extend(type_mismatches(item, feature.feature, f"{where}[{position}]"))
        return problems
    expected = {"string": (str,), "int64": (int,), "float64": (float,), "bool": (bool,)}[feature.dtype]
    ok = isinstance(value, expected) and not (feature.dtype == "int64" and isinstance(value, bool))
    return [] if ok else [f"{where}: expected {feature.dtype}, got {type(value).__name__} {value!r}"]


# --------------------------------------------------------------------------- tasks and shards


def index_ranges(num_rows: int, num_shards: int = NUM_SHARDS) -> list[tuple[int, int]]:
    """``range(num_rows)`` cut into at most ``num_shards`` contiguous (start, stop) pairs of near-equal size."""
    shards = max(1, min(num_shards, num_rows))
    bounds = [num_rows * k // shards for k in range(shards + 1)]
    return [(bounds[k], bounds[k + 1]) for k in range(shards) if bounds[k] < bounds[k + 1]]


def check_limit(limit: object) -> None:
    ok = limit is None or (isinstance(limit, int) and not isinstance(limit, bool) and limit >= 1)
    if not ok:
        raise ValueError(f"limit: {limit!r} is not allowed; allowed: null or a positive integer")


def num_rows(task: Task, limit: int | None) -> int:
    size = task_size(task)
    return size if limit is None else min(size, limit)


@lru_cache(maxsize=32)
def _resolved(name: str, overrides_json: str, seed: int | None) -> Task:
    # Keyed by canonical JSON because overrides may hold (unhashable) lists.
    return resolve_task(name, json.loads(overrides_json) or None, seed)


def resolved_task(name: str, overrides: Mapping[str, Any] | None, seed: int | None) -> Task:
    return _resolved(name, canonical_json(dict(overrides or {})), seed)


@lru_cache(maxsize=32)
def _first_difficulty(name: str, overrides_json: str, seed: int | None) -> tuple[tuple[str, Any], ...]:
    row = generate_row(_resolved(name, overrides_json, seed), 0, SPLIT)
    return tuple(row["difficulty"].items())


def task_features(name: str, overrides: Mapping[str, Any] | None = None, seed: int | None = None) -> datasets.Features:
    """Features of a task's rows; the difficulty struct is read off row 0 (see ``difficulty_features``)."""
    first = _first_difficulty(name, canonical_json(dict(overrides or {})), seed)
    return instance_features(difficulty_features(dict(first)))


def release_arrow_memory() -> None:
    """Hand freed memory back to the system: the Arrow pool's unused pages, and (glibc) the free pages inside
    the C heap, where Parquet's encoders and the rows' Python strings leave holes that ``free`` alone never
    returns. Without this a build's peak memory creeps up with the number of batches it writes or reads."""
    pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@lru_cache(maxsize=1)
def _malloc_trim() -> Any:
    """glibc's ``malloc_trim``, or None (another C library or platform)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


# --------------------------------------------------------------------------- builder


@dataclass
class LurchBuilderConfig(datasets.BuilderConfig):
    """One registered task; ``overrides``/``seed`` change its config, ``limit`` caps the rows."""

    overrides: dict[str, Any] | None = None
    seed: int | None = None
    limit: int | None = None


def builder_configs(family: str) -> list[LurchBuilderConfig]:
    """One BuilderConfig per registered task of ``family``, in name order."""
    version = datasets.Version(get_family(family).version)
    return [
        LurchBuilderConfig(name=task.name, version=version, description=task.description)
        for task in all_tasks()
        if task.family == family and task.stored_as is None  # views are read from the config they filter
    ]


class LurchBuilder(datasets.GeneratorBasedBuilder):
    """Base builder; subclasses set ``FAMILY``, ``VERSION`` and ``BUILDER_CONFIGS`` (see ``family_builder_attrs``)."""

    FAMILY: str = ""
    BUILDER_CONFIG_CLASS = LurchBuilderConfig
    DEFAULT_WRITER_BATCH_SIZE = 16  # rows buffered before an Arrow write: memory flat in the instance count

    def _task(self) -> Task:
        check_limit(self.config.limit)
        return resolved_task(self.config.name, self.config.overrides, self.config.seed)

    def _info(self) -> datasets.DatasetInfo:
        family = get_family(self.FAMILY)
        task = self._task()
        return datasets.DatasetInfo(
            description=f"{family.description}\n\n{task.name}: {task.description}",
            features=task_features(task.name, self.config.overrides, self.config.seed),
            citation=family.citation,
        )

    def _split_generators(self, dl_manager: Any) -> list[datasets.SplitGenerator]:
        ranges = index_ranges(num_rows(self._task(), self.config.limit))
        return [datasets.SplitGenerator(name=datasets.Split.TEST, gen_kwargs={"ranges": ranges})]

    def _generate_examples(self, ranges: Sequence[tuple[int, int]]) -> Iterator[tuple[int, dict[str, Any]]]:
        task = self._task()
        features = self.info.features
        done = 0
        for start, stop in ranges:
            for index in range(start, stop):
                if done and done % self.DEFAULT_WRITER_BATCH_SIZE == 0:
                    release_arrow_memory()  # the writer has just written a batch
                done += 1
                row = generate_row(task, index, SPLIT)
                problems = type_mismatches(row, features)
                if problems:
                    raise ValueError(
                        f"{row.get('id', index)}: {problems[0]}; allowed: the field types of row 0 "
                        "(a family must give every row the same types)"
                    )
                yield index, row


def family_builder_attrs(family: str) -> dict[str, Any]:
    """Class attributes of a family's builder: its version, configs and default config."""
    configs = builder_configs(family)
    names = [config.name for config in configs]
    return {
        "FAMILY": family,
        "VERSION": datasets.Version(get_family(family).version),
        "BUILDER_CONFIGS": configs,
        "DEFAULT_CONFIG_NAME": family if family in names else (names[0] if names else None),
    }


def builder_class(family: str) -> type[LurchBuilder]:
    """The builder of ``family``: the LurchBuilder subclass in module ``<this package>.<family>``."""
    get_family(family)  # unknown family -> ValueError naming the registered ones
    try:
        module = importlib.import_module(f".{family}", __package__)
    except ModuleNotFoundError as error:
        raise ValueError(
            f"family: {family!r} has no dataset builder; allowed: families with a module "
            f"{__package__}.{family} defining a LurchBuilder subclass"
        ) from error
    for value in vars(module).values():
        if isinstance(value, type) and issubclass(value, LurchBuilder) and value.FAMILY == family:
            return value
    raise ValueError(f"family: {family!r}: module {module.__name__} defines no LurchBuilder with FAMILY={family!r}")
