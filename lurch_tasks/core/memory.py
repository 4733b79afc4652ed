"""Allocation-heavy generation without the cycle collector's passes."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


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
