"""The file plan of a materialize run: which rows go into which Parquet file, and which shard writes which file.

The plan is a pure function of the request (configs, overrides, seed, limit): never of the process that writes a
file, the number of workers, the backend or the number of shards. So shard I of N writes exactly the files that a
one-machine run writes under the same names, byte for byte, and any engine can map ``write_file`` over the plan.

A config's rows (in index order) are cut into files of equal row counts, never inside a block of rows that belong
together (a config's ``block_rows()``: RECON's questions of one case, which share its text). How many files: the
fewest such that none holds more than ``max_rows_per_file`` rows or about ``TARGET_FILE_BYTES`` of row JSON
(estimated from each row's token budget, so the plan never needs a row generated). A file is the unit of work
of every backend, so the target trades parallelism against storage: rows of one file compress together (a graph
config's profiles repeat across prompts: 8 files of 5 rows take 3.2x the bytes of one file of 42) and each file
carries a ~25 KB footer. Docs interleave the knob cells (golden-stride order), so equal row counts are close to
equal bytes and equal work.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from math import ceil
from typing import Any

from ..core.cells import config_cell_position
from ..core.generation import MAX_SEED
from ..core.registry import Task, get_family
from ..core.rng import canonical_json
from ..dataset_builders._builder import check_limit, index_ranges, num_rows, resolved_task
from .layout import shard_file_name

# Changing any of these changes which rows land in which file: treat them like a format version (LAYOUT_VERSION).
LAYOUT_VERSION = 2
TARGET_FILE_BYTES = 16 * 2**20  # of row JSON (zstd makes it 2-8 MiB on disk)
MAX_ROWS_PER_FILE = 10_000
BYTES_PER_TOKEN = 8  # canonical-JSON bytes of a row per prompt token (measured: 6.6-9.1 across the families)
FALLBACK_ROW_TOKENS = 8_192  # cells sized otherwise than in tokens (Find the Origin's line counts)


@dataclass(frozen=True)
class MaterializeRequest:
    """What a materialize run builds: the same request gives the same plan and the same bytes everywhere."""

    configs: tuple[str, ...]  # sorted, distinct
    overrides_json: str = "{}"  # canonical JSON of the --set overrides (applied to every config)
    seed: int | None = None
    limit: int | None = None
    max_rows_per_file: int = MAX_ROWS_PER_FILE

    @classmethod
    def create(cls, configs: Sequence[str], overrides: Mapping[str, Any] | None = None, seed: int | None = None,
               limit: int | None = None, max_rows_per_file: int = MAX_ROWS_PER_FILE) -> MaterializeRequest:
        check_limit(limit)
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= MAX_SEED):
            raise ValueError(f"seed: {seed!r} is not allowed; allowed: an integer in 0..{MAX_SEED}")
        if not isinstance(max_rows_per_file, int) or isinstance(max_rows_per_file, bool) or max_rows_per_file < 1:
            raise ValueError(f"max_rows_per_file: {max_rows_per_file!r} is not allowed; allowed: a positive integer")
        return cls(tuple(sorted(configs)), canonical_json(dict(overrides or {})), seed, limit, max_rows_per_file)

    @property
    def overrides(self) -> dict[str, Any]:
        return json.loads(self.overrides_json)

    def task(self, name: str) -> Task:
        return resolved_task(name, self.overrides or None, self.seed)

    def to_json(self) -> dict[str, Any]:
        return {"configs": list(self.configs), "overrides": self.overrides, "seed": self.seed, "limit": self.limit,
                "max_rows_per_file": self.max_rows_per_file, "layout": LAYOUT_VERSION}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MaterializeRequest:
        return cls.create(data["configs"], data.get("overrides"), data.get("seed"), data.get("limit"),
                          data.get("max_rows_per_file", MAX_ROWS_PER_FILE))

    @cached_property
    def files(self) -> tuple[PlannedFile, ...]:
        """Every file of every config, configs in name order, files in row order."""
        return tuple(f for name in self.configs for f in plan_config(name, self.task(name), self.limit,
                                                                       self.max_rows_per_file))

    @cached_property
    def digest(self) -> str:
        """SHA-256 of the request and its plan: equal for every process that writes a part of the same output."""
        plan = [[f.config, f.start, f.stop] for f in self.files]
        return hashlib.sha256(canonical_json({"request": self.to_json(), "files": plan}).encode("ascii")).hexdigest()

    def config_files(self, name: str) -> tuple[PlannedFile, ...]:
        return tuple(f for f in self.files if f.config == name)


@dataclass(frozen=True)
class PlannedFile:
    config: str
    number: int  # position of the file in its config, from 0
    count: int  # files in the config
    start: int  # first row index
    stop: int  # one past the last row index
    estimated_bytes: int

    @property
    def name(self) -> str:
        return shard_file_name(self.number, self.count)

    @property
    def path(self) -> str:
        """Relative POSIX path inside the output folder."""
        return f"{self.config}/{self.name}"

    @property
    def rows(self) -> int:
        return self.stop - self.start


def estimated_row_sizes(task: Task, rows: int) -> list[int]:
    """The estimated row-JSON bytes of rows 0..rows-1, from their cells' token budgets (one per cell, not per row:
    a cell list is rebuilt on every ``cells()`` call, and the plan must stay cheap for every worker that needs it)."""
    cells = task.config.cells()
    family = get_family(task.family)
    per_cell = [(family.token_target(cell) or FALLBACK_ROW_TOKENS) * BYTES_PER_TOKEN for cell in cells]
    return [per_cell[config_cell_position(task.config, index, len(cells))] for index in range(rows)]


def number_of_files(rows: int, estimated_bytes: int, max_rows_per_file: int) -> int:
    if rows == 0:
        return 0
    return min(rows, max(ceil(estimated_bytes / TARGET_FILE_BYTES), ceil(rows / max_rows_per_file)))


def block_rows(config: object) -> int:
    """Rows a file must not split (``config.block_rows()``, e.g. RECON's questions of one case), else 1."""
    own = getattr(config, "block_rows", None)
    return max(1, int(own())) if own is not None else 1


def plan_config(name: str, task: Task, limit: int | None, max_rows_per_file: int) -> list[PlannedFile]:
    """The files of one config: contiguous row ranges of near-equal length, cut between blocks (see the module
    docstring)."""
    rows = num_rows(task, limit)
    sizes = estimated_row_sizes(task, rows)
    block = block_rows(task.config)
    blocks = ceil(rows / block)
    wanted = number_of_files(rows, sum(sizes), max_rows_per_file)
    ranges = [(min(start * block, rows), min(stop * block, rows)) for start, stop in index_ranges(blocks, wanted)]
    return [PlannedFile(name, k, len(ranges), start, stop, sum(sizes[start:stop]))
            for k, (start, stop) in enumerate(ranges)]


def assign_shards(files: Sequence[PlannedFile], num_shards: int) -> list[list[PlannedFile]]:
    """Files per shard: largest estimated file first, each to the least-loaded shard (ties: the lower shard), so
    shards carry near-equal work. Depends only on the plan and ``num_shards``; each shard's files in plan order."""
    if not isinstance(num_shards, int) or isinstance(num_shards, bool) or num_shards < 1:
        raise ValueError(f"num_shards: {num_shards!r} is not allowed; allowed: a positive integer")
    order = {f.path: position for position, f in enumerate(files)}
    loads = [0] * num_shards
    shards: list[list[PlannedFile]] = [[] for _ in range(num_shards)]
    for planned in sorted(files, key=lambda f: (-f.estimated_bytes, order[f.path])):
        target = min(range(num_shards), key=lambda k: (loads[k], k))
        shards[target].append(planned)
        loads[target] += planned.estimated_bytes
    return [sorted(shard, key=lambda f: order[f.path]) for shard in shards]
