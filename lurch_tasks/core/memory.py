"""Allocation-heavy generation without the cycle collector's passes."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from typing import TypeVar

F = TypeVar("F", bound=Callable)


@contextmanager
def cycles_uncollected() -> Iterator[None]:
    """The cycle collector paused for the block, restored after (even on an error). A generator that allocates
    tens of thousands of short-lived objects (facts, keys, lines) and drops them all when it returns otherwise
    pays for the collector walking them again and again (an eighth of an ImplicitHop instance at 128k tokens);
    nothing it builds is a cycle that must be freed early. Nested or concurrent blocks only ever leave the
    collector on: the outermost one that found it on turns it back on."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def collector_paused(function: F) -> F:
    """``function`` run inside ``cycles_uncollected``. A family's ``generate`` is wrapped so (``core.registry``):
    its first call builds worlds and tables of tens of thousands of long-lived objects, which in a process that
    holds transformers' (~200k objects) sets off a full collection of the whole heap (~0.1 s, as much as the
    rest of the set-up), and later calls allocate and drop as many short-lived ones."""

    @wraps(function)
    def paused(*args, **kwargs):
        with cycles_uncollected():
            result = function(*args, **kwargs)
        freeze_set_up()
        return result

    paused.collector_paused = True  # type: ignore[attr-defined]
    return paused  # type: ignore[return-value]


_FROZEN = False


def freeze_set_up() -> None:
    """Once per process, after a family's first instance: every object alive then (tokenizers, piece and vocabulary
    tables, worlds, and whatever the process imported before: transformers alone holds ~200k) moved to the
    collector's permanent generation (``gc.freeze``), after a collection of the young generations. Such objects
    live as long as the process, and every full collection would walk them all again (one of ~0.14 s fell inside a
    500-sample 4k ImplicitHop run: 4% of it); later collections walk only what came after. Whatever the run
    allocates later is collected as before; only cyclic garbage already in the old generation at that moment is
    kept (once per process, bounded by what existed then)."""
    global _FROZEN
    if _FROZEN or not gc.isenabled():  # a caller that turned the collector off manages it itself
        return
    _FROZEN = True
    gc.collect(1)
    gc.freeze()
