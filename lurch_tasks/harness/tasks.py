"""lm-eval glue: docs built at load time from the same ``generate()`` the dataset builders use."""

from __future__ import annotations

from typing import Any

from ..core.generation import check_split, iter_rows, resolve_task, task_size
from ..core.registry import get_family, get_task
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
    """Docs read from a materialized folder or a Hub copy (same rows as generating them)."""
    import datasets

    try:
        return datasets.load_dataset(path, task_name, split=split)
    except (FileNotFoundError, ValueError) as err:
        first_line = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(f"dataset_path: cannot read config {task_name!r} from {path!r}: {first_line}") from err


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
