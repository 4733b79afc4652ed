"""Regenerating a submission's docs and comparing fingerprints, in one process or in several.

Docs are visited in the order of their ``Pending.order`` key, so docs that share costly work (a RECON case and its
sixteen questions) are regenerated together and hit the family's caches. Rows come from this machine's doc cache
(``harness.doc_cache``: written by this very generator code, keyed by a stamp of it, every row checked by an
HMAC-SHA256 under a per-user key, so a local edit of the cache cannot make a tampered doc match) when an earlier run
generated them. With ``workers`` > 1 the ordered docs are cut into chunks at case boundaries and spread over forked
workers; only the parent writes the doc cache (workers read it and send back what they generated), so its entries are
never written by two processes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..core.generation import generate_row
from ..core.instance import content_hash
from ..core.private import mask_row
from ..core.registry import get_task

CHUNK = 48  # docs per task handed to a worker (rounded up to a whole case)


@dataclass(frozen=True)
class Pending:
    """A logged doc to regenerate: everything needed, and its fingerprint (the doc itself is not kept)."""

    order: tuple  # (family, family's regeneration key..., task, index)
    where: str
    task: str
    config: object
    seed: int
    split: str
    index: int
    fingerprint: str
    private: bool = False  # ``seed`` is the private seed: regenerate without the doc cache and mask the row


@dataclass(frozen=True)
class Outcome:
    position: int  # in the ordered list
    problem: str | None
    generated: dict | None  # a row generated here, for the parent's doc cache


def _cache_key(item: Pending) -> tuple:
    return item.task, item.config, item.seed, item.split


def _check(item: Pending, caches: dict, position: int) -> Outcome:
    from ..harness.doc_cache import open_doc_cache

    task = dataclasses.replace(get_task(item.task), config=item.config, seed=item.seed)
    generated = None
    try:
        if item.private:  # the private seed never reaches the disk: no doc cache
            row = mask_row(generate_row(task, item.index, item.split), item.seed)
        else:
            if _cache_key(item) not in caches:
                caches[_cache_key(item)] = open_doc_cache(task, item.split)
            cache = caches[_cache_key(item)]
            row = cache.get(item.index)
            if row is None:
                row = generate_row(task, item.index, item.split)
                generated = row if cache.path is not None else None
    except (ValueError, OSError) as error:  # e.g. a tokenizer this machine does not have
        return Outcome(position, f"cannot be regenerated here ({error})", None)
    if content_hash(row) != item.fingerprint:
        kind = " on the private seed" if item.private else ""
        return Outcome(position, f"differs from its regeneration{kind} (its content hash does not match)", generated)
    return Outcome(position, None, generated)


def _check_chunk(chunk: list[tuple[int, Pending]]) -> list[Outcome]:
    caches: dict = {}
    return [_check(item, caches, position) for position, item in chunk]


def _chunks(ordered: list[Pending]) -> Iterator[list[tuple[int, Pending]]]:
    """Runs of about ``CHUNK`` docs, cut only where the family's regeneration key changes."""
    chunk: list[tuple[int, Pending]] = []
    for position, item in enumerate(ordered):
        keyless = len(item.order) == 3  # (family, task, index): nothing shared between docs
        if len(chunk) >= CHUNK and (keyless or item.order[:-2] != chunk[-1][1].order[:-2]):
            yield chunk
            chunk = []
        chunk.append((position, item))
    if chunk:
        yield chunk


def regeneration_problems(pending: list[Pending], workers: int = 1,
                          progress: Callable[[int], None] | None = None) -> list[str]:
    """One line per doc whose regeneration differs (or fails), in the order of their keys."""
    from ..harness.doc_cache import open_doc_cache

    ordered = sorted(pending, key=lambda p: p.order)
    caches: dict = {}
    problems: list[tuple[int, str]] = []

    def keep(outcome: Outcome) -> None:
        """Record a problem; the parent alone adds generated rows to the doc cache (then drops them)."""
        if outcome.problem is not None:
            problems.append((outcome.position, outcome.problem))
        if outcome.generated is not None:
            item = ordered[outcome.position]
            if _cache_key(item) not in caches:
                caches[_cache_key(item)] = open_doc_cache(dataclasses.replace(
                    get_task(item.task), config=item.config, seed=item.seed), item.split)
            caches[_cache_key(item)].put(item.index, outcome.generated)
        if progress is not None:
            progress(1)

    if workers <= 1 or len(ordered) <= CHUNK:
        local: dict = {}
        for position, item in enumerate(ordered):
            keep(_check(item, local, position))
    else:
        _in_workers(ordered, workers, keep)
    for cache in caches.values():
        cache.save()
    return [f"{ordered[position].where}: {problem}" for position, problem in sorted(problems)]


def _in_workers(ordered: list[Pending], workers: int, keep: Callable[[Outcome], None]) -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from ..core.workers import mortal_children

    with mortal_children(), ProcessPoolExecutor(max_workers=workers,
                                                mp_context=multiprocessing.get_context("fork")) as pool:
        for part in pool.map(_check_chunk, list(_chunks(ordered))):
            for outcome in part:
                keep(outcome)
