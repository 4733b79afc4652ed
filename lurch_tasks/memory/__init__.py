"""Memory systems for memory-augmented evaluation: read a context once, answer many questions from what was kept.

``MemorySystem`` is the protocol (``ingest`` once per context in time order, ``recall`` per question, ``describe``
for the samples); ``IngestCache`` ingests each distinct context once; ``make_memory`` builds one by name:

- ``facts``: the built-in running fact store (``facts.FactStore``), no model, runs everywhere;
- ``mem0``: the Mem0 library configured fully offline (``mem0_local.Mem0Memory``), needs the ``[memory]`` extra and
  an OpenAI-compatible server on 127.0.0.1 (the llama.cpp server with SmolLM2).
"""

from __future__ import annotations

from typing import Any

from lurch_tasks.memory.base import IngestCache, MemorySystem, context_key
from lurch_tasks.memory.facts import FactStore, FactStoreConfig

__all__ = ["FactStore", "FactStoreConfig", "IngestCache", "MemorySystem", "context_key", "make_memory", "MEMORIES",
           "setting_names"]

MEMORIES = ("facts", "mem0")


def setting_names(name: str) -> tuple[str, ...]:
    """The settings ``make_memory(name, ...)`` accepts, known without importing the memory's library (so a typo
    fails before anything loads)."""
    if name == "facts":
        return ("include_superseded",)
    if name == "mem0":
        from dataclasses import fields

        from lurch_tasks.memory.mem0_local import Mem0Config  # stdlib only at import: mem0 itself loads later

        return tuple(f.name for f in fields(Mem0Config))
    raise ValueError(f"unknown memory {name!r}: choose one of {', '.join(MEMORIES)}")


def make_memory(name: str, **settings: Any) -> MemorySystem:
    """A fresh memory system by name, with its settings (strings from ``--model_args`` are accepted)."""
    if name == "facts":
        flag = str(settings.pop("include_superseded", False)).lower() in ("1", "true", "yes")
        if settings:
            raise ValueError(f"memory 'facts' takes no settings {sorted(settings)}")
        return FactStore(FactStoreConfig(include_superseded=flag))
    if name == "mem0":
        from lurch_tasks.memory.mem0_local import Mem0Config, Mem0Memory

        return Mem0Memory(Mem0Config.from_settings(settings))
    raise ValueError(f"unknown memory {name!r}: choose one of {', '.join(MEMORIES)}")
