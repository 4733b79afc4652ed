"""Generating rows of a registered task: the single entry point used by builders, lm-eval and the CLI."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .config import config_from_mapping
from .registry import Family, Task, get_family, get_task

SPLITS = ("test", "validation", "train")
MAX_SEED = 2**63 - 1  # the seed column is int64


def resolve_task(name: str, overrides: Mapping[str, Any] | None = None, seed: int | None = None) -> Task:
    """The registered task ``name``, with config fields replaced by ``overrides`` (validated)."""
    task = get_task(name)
    if overrides:
        config = config_from_mapping(type(task.config), overrides, base=task.config)
        task = dataclasses.replace(task, config=config)
    if seed is not None:
        if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= MAX_SEED:
            raise ValueError(f"seed: {seed!r} is not allowed; allowed: an integer in 0..{MAX_SEED}")
        task = dataclasses.replace(task, seed=seed)
    return task


def check_split(split: str) -> None:
    if split not in SPLITS:
        raise ValueError(f"split: {split!r} is not allowed; allowed: {' | '.join(SPLITS)}")


def task_size(task: Task) -> int:
    return task.config.size()


def generate_row(task: Task, index: int, split: str = "test") -> dict[str, Any]:
    """Row ``index`` of ``split`` of ``task`` as a plain dict (the Instance record)."""
    check_split(split)
    family: Family = get_family(task.family)
    return family.generate(task.config, task.seed, split, index, task.name).to_row()


def iter_rows(task: Task, indices: Iterable[int], split: str = "test") -> Iterator[dict[str, Any]]:
    for index in indices:
        yield generate_row(task, index, split)
