"""`lurch properties`: read another benchmark's items, measure each one's LURCH properties, write them as JSON Lines.

Input: a JSON Lines file (one item per line), or a ``datasets`` folder (``save_to_disk``), or Parquet files (a file or
a folder of them: a ``lurch materialize`` config folder, a Hub download). Each item goes through an adapter
(``external.adapters``) and ``core.item_properties.measure_item``. An item whose evidence cannot be located or
measured becomes one output line with its ``error``; the others are measured.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.item_properties import PROPERTY_FIELDS, measure_item
from .adapters import ADAPTERS, item_id


@dataclass
class Tally:
    measured: int = 0
    errors: list[str] = field(default_factory=list)


def sample_path(name: str) -> Path:
    """A shipped hand-made sample in an adapter's shape (``lurch properties sample:NAME``)."""
    from importlib import resources

    folder = resources.files("lurch_tasks.external").joinpath("samples")
    names = sorted(entry.name[: -len(".jsonl")] for entry in folder.iterdir() if entry.name.endswith(".jsonl"))
    if name not in names:
        allowed = ", ".join(f"sample:{n}" for n in names)
        raise ValueError(f"INPUT: sample:{name} is not a shipped sample; allowed: {allowed}")
    return Path(str(folder.joinpath(f"{name}.jsonl")))


def read_records(source: Path) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(where, record) for every item of ``source``."""
    from ..analysis.runs import read_jsonl

    if source.is_file() and source.suffix in (".jsonl", ".json"):
        for number, record in read_jsonl(source):
            yield f"{source.name}:{number}", record
        return
    dataset = _dataset(source)
    for index, record in enumerate(dataset):
        yield f"{source.name}[{index}]", record


def _dataset(source: Path):
    import datasets

    if source.is_dir() and (source / "dataset_info.json").is_file() and (source / "state.json").is_file():
        loaded = datasets.load_from_disk(str(source))
        if isinstance(loaded, datasets.DatasetDict):
            return datasets.concatenate_datasets([loaded[split] for split in sorted(loaded)])
        return loaded
    files = [source] if source.is_file() and source.suffix == ".parquet" else sorted(source.rglob("*.parquet")) \
        if source.is_dir() else []
    if not files:
        raise ValueError(f"INPUT: {str(source)!r} is not a .jsonl file, a datasets folder (save_to_disk) or Parquet "
                         "files; allowed: one of those")
    return datasets.load_dataset("parquet", data_files=[str(f) for f in files], split="train")


def measured(source: Path, adapter: str, tokenizer: str, tally: Tally) -> Iterator[dict[str, Any]]:
    """One output row per item: its id and properties, or its id and ``error``."""
    convert = ADAPTERS[adapter]
    for where, record in read_records(source):
        name = item_id(record, where)
        try:
            row = {"id": name, **measure_item(convert(record, where), tokenizer), "tokenizer": tokenizer}
        except (ValueError, KeyError, TypeError) as error:
            tally.errors.append(f"{where}: {error}" if name == where else f"{where} ({name}): {error}")
            yield {"id": name, "error": str(error)}
            continue
        tally.measured += 1
        yield row


def write_rows(rows: Iterator[dict[str, Any]], out: Path) -> int:
    """The rows as JSON Lines at ``out``, written atomically; how many."""
    from ..core.files import atomic_output

    count = 0
    with atomic_output(out) as handle:
        for row in rows:
            handle.write(json.dumps(row, sort_keys=False, allow_nan=False) + "\n")
            count += 1
    return count


def summary(rows_path: Path) -> dict[str, Any]:
    """Medians of each property over the measured rows (for the command's last line)."""
    values: dict[str, list[float]] = {name: [] for name in PROPERTY_FIELDS}
    with rows_path.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            for name in PROPERTY_FIELDS:
                if isinstance(row.get(name), (int, float)):
                    values[name].append(float(row[name]))
    return {name: _median(v) for name, v in values.items() if v}


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2 if ordered else math.nan
