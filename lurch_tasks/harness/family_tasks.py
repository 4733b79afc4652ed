"""One lm-eval task per family, the leaves of the umbrella group ``memory_drift``.

lm-eval aggregates a group over its *leaf* tasks, never over its subgroups, so an umbrella over the family groups
weighs families by how many tasks (or docs) they hold. Each family task instead holds every doc of its family's
default tasks (the family group's members), interleaved so that any prefix (``--limit N``) is balanced over them, and
reports ``headline`` aggregated by ``scoring.headline.balanced_mean``: equal weight per member task (RECON: per
question category). The umbrella then averages the four family tasks without size weights: equal weight per family.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from ..core.config import ConfigError
from ..core.registry import Family, all_families, all_tasks, get_family
from .fit import skip_or_fail
from .metadata import parse_metadata
from .window import warn

PREFIX = "family_"


def family_task_name(family: Family) -> str:
    return f"{PREFIX}{family.name}"


def members(family: Family) -> list[str]:
    """The family group's tasks (the in-suite ones), in registry order."""
    return [t.name for t in all_tasks() if t.family == family.name and t.in_suite]


def family_tasks() -> list[Family]:
    """Families with a family task: those with in-suite tasks."""
    return [family for family in all_families() if members(family)]


def family_of(task_name: str) -> Family | None:
    """The family whose family task is ``task_name`` (None for any other name)."""
    if not task_name.startswith(PREFIX):
        return None
    name = task_name[len(PREFIX):]
    try:
        family = get_family(name)
    except (KeyError, ValueError):
        return None
    return family if members(family) else None


def family_sparse_metrics(family: Family) -> tuple[str, ...]:
    """The negative controls' metrics any member reports (``tasks.sparse_metrics``), in SPARSE_METRICS order."""
    from .metrics import SPARSE_METRICS
    from .tasks import sparse_metrics

    own = {m for name in members(family) for m in sparse_metrics(name)}
    return tuple(m for m in SPARSE_METRICS if m in own)


def max_gen_toks(family: Family) -> int:
    """The family task's generation budget: its members' largest (each doc may need its own task's)."""
    from ..core.registry import get_task

    return max(family.max_gen_toks(get_task(name).config) for name in members(family))


def member_task(task_name: str, doc: dict) -> str | None:
    """The member task a doc logged under the family task ``task_name`` belongs to (None: it belongs to none)."""
    family = family_of(task_name)
    if family is None or doc.get("family") != family.name:
        return None
    return doc.get("task") if doc.get("task") in members(family) else None


def interleave(columns: list[list[dict]]) -> list[dict]:
    """Round robin over the members' doc lists (each already in its golden-stride order), so a prefix holds every
    member in proportion until the shorter lists run out."""
    return list(interleave_streams([iter(column) for column in columns]))


def interleave_streams(streams: list[Iterator[Any]]) -> Iterator[Any]:
    """``interleave`` over iterators, one item at a time (the members' docs are never all in memory)."""
    live = list(streams)
    while live:
        still = []
        for stream in live:
            for item in stream:
                yield item
                still.append(stream)
                break
        live = still


def _guarded(task_name: str, name: str, rows: Iterator[dict], strict: bool) -> Iterator[dict]:
    """A member's rows; a member that fails once its rows are exhausted (none fits the window) is left out
    with one warning line (re-raised with ``strict``)."""
    try:
        yield from rows
    except ConfigError as error:
        if strict:
            raise
        warn(f"{task_name}: leaving out {name}: {error}")


def build_family_docs(task_name: str, **metadata: Any) -> dict[str, Any]:
    """The family task's docs as {split: datasets.Dataset}: every member's docs (``tasks.iter_docs`` with the same
    metadata), interleaved and streamed into a memory-mapped Arrow file (``doc_store``). With ``max_docs``
    (``lurch eval --limit N``) each member generates its share only. A member no doc of which fits the model's
    window is left out with one warning line (an error with ``strict``)."""
    from .doc_store import rows_to_dataset
    from .tasks import iter_docs

    family = family_of(task_name)
    if family is None:
        raise ValueError(f"{task_name!r} is not a family task; allowed: "
                         f"{', '.join(family_task_name(f) for f in family_tasks())}")
    names = members(family)
    request = parse_metadata(family.config_type, metadata)
    share = dict(metadata)
    if request.max_docs is not None:
        share["max_docs"] = math.ceil(request.max_docs / len(names))
    streams = []
    for name in names:
        if skip_or_fail(name, share) is not None:
            continue  # no length of this member fits the window: one warning line, no docs built
        try:
            streams.append(_guarded(task_name, name, iter_docs(name, **share), request.strict))
        except ConfigError as error:
            if request.strict:
                raise
            warn(f"{task_name}: leaving out {name}: {error}")
    dataset = rows_to_dataset(interleave_streams(streams))
    if not len(dataset):
        raise ConfigError(f"{task_name}: no member task has a doc for this run; allowed: a model whose window fits "
                          "the family's shortest cases")
    return {request.split: dataset}
