"""lm-eval glue: docs built at load time from the same ``generate()`` the dataset builders use."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

from ..core.config import config_hash
from ..core.generation import check_split, iter_rows, resolve_task, task_size
from ..core.registry import get_family, get_task
from ..core.rng import canonical_json
from .metadata import parse_metadata

HEADLINE_METRICS = ("score", "memory_drift", "precision", "recall", "f1")
BINNED_METRICS = ("score", "memory_drift")


def build_docs(task_name: str, **metadata: Any) -> dict[str, Any]:
    """The docs of a registered task as {split: datasets.Dataset}, in doc order (golden-stride over the knob cells)."""
    import datasets
    from tqdm.auto import tqdm

    registered = get_task(task_name)
    request = parse_metadata(type(registered.config), metadata)
    check_split(request.split)
    if request.dataset_path:
        return {"test": _stored_docs(request.dataset_path, task_name, request.split)}
    task = resolve_task(task_name, request.overrides, request.seed)
    size = task_size(task)
    rows = list(tqdm(iter_rows(task, range(size), request.split), total=size, desc=f"generating {task_name}",
                     unit="doc", disable=size < 50))
    return {"test": datasets.Dataset.from_list(rows)}


def _stored_docs(path: str, task_name: str, split: str):
    """Docs read from a materialized folder or a Hub copy (same rows as generating them).

    A local folder is checked against its manifest first (every file's SHA-256), and read through a cache
    keyed by that manifest: rewritten files can neither slip through unchecked nor be served from a stale
    cache."""
    import datasets

    kwargs: dict[str, Any] = {}
    if Path(path).is_dir():
        kwargs["cache_dir"] = str(_checked_cache_dir(Path(path), task_name))
    try:
        return datasets.load_dataset(path, task_name, split=split, **kwargs)
    except (FileNotFoundError, ValueError) as err:
        first_line = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(f"dataset_path: cannot read config {task_name!r} from {path!r}: {first_line}") from err


def _checked_cache_dir(folder: Path, task_name: str) -> Path:
    import datasets

    from ..hub.manifest import MANIFEST_NAME, file_sha256, read_manifest

    manifest = read_manifest(folder)
    if manifest is None:
        raise ValueError(f"dataset_path: {str(folder)!r} has no {MANIFEST_NAME}; allowed: a folder written by "
                         "`lurch materialize` (check it with `lurch validate`)")
    entry = manifest["configs"].get(task_name)
    if entry is None:
        raise ValueError(f"dataset_path: {str(folder)!r} holds no config {task_name!r}; allowed: "
                         f"{', '.join(sorted(manifest['configs'])) or 'none'}")
    present = sorted(f"{task_name}/{p.name}" for p in (folder / task_name).iterdir()) if (folder / task_name).is_dir() \
        else []
    changed = [name for name in sorted(entry["files"]) if name not in present
               or file_sha256(folder / name) != entry["files"][name]] + sorted(set(present) - set(entry["files"]))
    if changed:
        raise ValueError(f"dataset_path: {changed[0]} differs from {MANIFEST_NAME} (the folder changed after "
                         "materialize); allowed: an unmodified folder (check it with `lurch validate`)")
    registered = get_task(task_name)
    if entry.get("config_hash") != config_hash(registered.config):
        print(f"lurch: note: {task_name!r} in {str(folder)!r} was materialized with other knobs than the registered "
              f"task (config_hash {entry.get('config_hash', '?')[:12]}); its results describe that folder's config",
              file=sys.stderr)
    key = hashlib.sha256(canonical_json(entry).encode("ascii")).hexdigest()[:16]
    return Path(datasets.config.HF_DATASETS_CACHE) / "lurch-stored" / key


def process_results(doc: dict, results: list[str]) -> dict[str, float]:
    """Headline metrics plus per-bin variants (``score@4096``, ``score@d=-5``) for this doc's bins only."""
    output = results[0] if results else ""
    family = get_family(doc["family"])
    metrics = family.score(doc, output if isinstance(output, str) else str(output))
    out = {name: float(metrics[name]) for name in HEADLINE_METRICS}
    for key in family.bin_keys(doc).values():
        for name in BINNED_METRICS:
            out[f"{name}@{key}"] = out[name]
    return out


def doc_to_text(doc: dict) -> str:
    return doc["prompt"]


def doc_to_target(doc: dict) -> str:
    return doc["answer_text"]


# One custom_dataset entry point per registered task (lm-eval's `!function` needs a named callable).
def _make_loader(task_name: str):
    def loader(**metadata: Any) -> dict[str, Any]:
        return build_docs(task_name, **metadata)

    loader.__name__ = loader.__qualname__ = f"load_{task_name}"
    return loader


def __getattr__(name: str):
    if name.startswith("load_"):
        task_name = name[len("load_") :]
        get_task(task_name)  # raises a clear error for an unknown task
        return _make_loader(task_name)
    raise AttributeError(name)
