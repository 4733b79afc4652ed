"""The memory-system protocol and the per-context ingestion cache.

A memory system reads a context once, unit by unit in time order (``ingest``), then answers any number of questions
about it from what it kept (``recall``): the paper's protocol for memory systems (ingest a case once, retrieve per
question). ``recall`` returns stored texts verbatim where the system keeps the units themselves, so a caller can map
them back to context units and measure coverage of the gold evidence; a system that rewrites what it read (an LLM
memory) returns its own texts, and the caller matches them as well as it can.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class MemorySystem(Protocol):
    """What a memory-augmented model needs from its memory."""

    def ingest(self, units: Sequence[str]) -> None:
        """Read one context's units in time order. Called once per context, before any ``recall``."""

    def recall(self, question: str, k: int) -> list[str]:
        """At most ``k`` stored texts relevant to ``question``, in context (time) order."""

    def describe(self) -> dict[str, Any]:
        """The system's name, settings and what ingestion produced (JSON-ready), recorded in the samples."""


def context_key(units: Sequence[str]) -> str:
    """A stable key for a context's units: the SHA-256 of their texts, each length-prefixed so that no two
    different splittings of the same characters share a key."""
    digest = hashlib.sha256()
    for unit in units:
        data = unit.encode("utf-8")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()


class IngestCache:
    """One ingested memory per distinct context: every question of a RECON case shares its case file, so the case
    is ingested once and its questions all recall from the same memory (the paper's protocol), and a re-run over
    the same docs ingests nothing twice. In-process only: memories built on an LLM or a vector store hold live
    handles that do not pickle."""

    def __init__(self, factory: Callable[[], MemorySystem]) -> None:
        self._factory = factory
        self._memories: dict[str, MemorySystem] = {}

    def memory_for(self, units: Sequence[str]) -> MemorySystem:
        key = context_key(units)
        memory = self._memories.get(key)
        if memory is None:
            memory = self._factory()
            memory.ingest(units)
            self._memories[key] = memory
        return memory

    def __len__(self) -> int:
        return len(self._memories)

    def __contains__(self, units: object) -> bool:
        return isinstance(units, Sequence) and context_key(units) in self._memories  # type: ignore[arg-type]
