"""The model a task is evaluated with: its tokenizer (for exact budgets) and its context window (the guard).

lm-eval merges ``--model_args`` into the metadata our tasks receive, so the model's own arguments tell us
what it will do: ``hf`` truncates a prompt longer than ``max_length - max_gen_toks`` from the left (the
instructions go first), and API servers refuse it. Lengths that cannot fit are skipped with one warning
line (or, with ``strict``, fail), and budgets are counted in the model's tokenizer, chat template included.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..core.config import ConfigError

# Attributes of a Hugging Face model config that hold its window, in lm-eval's own order (HFLM.max_length).
_WINDOW_ATTRS = ("n_positions", "max_position_embeddings", "n_ctx")
LM_EVAL_DEFAULT_WINDOW = 2048  # what HFLM falls back to when neither the config nor the tokenizer says
_HUGE = 10**9  # tokenizers without a limit report ~1e30 as model_max_length


@dataclass(frozen=True)
class ModelWindow:
    tokens: int
    source: str  # where it was read, for the warning line


def inner_model_args(metadata: Mapping[str, Any]) -> Mapping[str, Any]:
    """A `lurch-rag` run's inner model arguments (``inner_args="pretrained=...,gguf_file=..."``) merged under the
    metadata, so the prompts are built for the model that reads them; other runs' metadata as it is."""
    inner = metadata.get("inner_args")
    if not isinstance(inner, str) or not inner.strip() or metadata.get("pretrained"):
        return metadata
    pairs = (item.split("=", 1) for item in inner.strip().strip("\"'").split(",") if "=" in item)
    return {**{key.strip(): value.strip() for key, value in pairs}, **metadata}


def model_tokenizer(metadata: Mapping[str, Any]) -> str | None:
    """The tokenizer spec of the model being evaluated: ``tokenizer``, else ``pretrained`` (+ ``gguf_file``; a
    `lurch-rag` run's inner model's)."""
    metadata = inner_model_args(metadata)
    tokenizer = metadata.get("tokenizer")
    if isinstance(tokenizer, str) and tokenizer:
        return tokenizer
    pretrained = metadata.get("pretrained")
    if not isinstance(pretrained, str) or not pretrained:
        return None
    gguf = metadata.get("gguf_file")
    return str(Path(pretrained) / gguf) if isinstance(gguf, str) and gguf else pretrained


def model_window(metadata: Mapping[str, Any]) -> ModelWindow | None:
    """The model's window in tokens, when it is known: ``max_model_len`` (ours), the model's ``max_length``
    argument, or an ``hf`` model's config, as lm-eval itself reads it."""
    for key, source in (("max_model_len", "--metadata max_model_len"), ("max_length", "the model's max_length")):
        if metadata.get(key) not in (None, ""):
            return ModelWindow(_positive_int(key, metadata[key]), source)
    pretrained = metadata.get("pretrained")
    if isinstance(pretrained, str) and pretrained:
        gguf = metadata.get("gguf_file") if isinstance(metadata.get("gguf_file"), str) else None
        tokens = _hf_window(pretrained, gguf or None)
        if tokens:
            return ModelWindow(tokens, f"the config of {Path(pretrained).name or pretrained}")
    return None


@lru_cache(maxsize=8)
def _hf_window(pretrained: str, gguf_file: str | None) -> int | None:
    """Read like HFLM.max_length: the config's window attribute, else the tokenizer's limit, else 2048."""
    try:
        from transformers import AutoConfig
    except ImportError:  # pragma: no cover - the hf extra is missing; lm-eval will say so itself
        return None
    kwargs = {"gguf_file": gguf_file} if gguf_file else {}
    try:
        config = AutoConfig.from_pretrained(pretrained, local_files_only=_offline(pretrained), **kwargs)
    except Exception:  # noqa: BLE001 - the model load reports its own error; the guard just does not apply
        return None
    for attr in _WINDOW_ATTRS:
        value = getattr(config, attr, None) or getattr(getattr(config, "text_config", None), attr, None)
        if isinstance(value, int) and value > 0:
            return value
    from ..core.tokens import get_token_counter

    spec = str(Path(pretrained) / gguf_file) if gguf_file else pretrained
    limit = getattr(get_token_counter(spec), "model_max_length", None)
    return limit if isinstance(limit, int) and 0 < limit < _HUGE else LM_EVAL_DEFAULT_WINDOW


def _offline(name: str) -> bool:
    return Path(name).exists() or os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0")


def _positive_int(key: str, value: Any) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ConfigError(f"{key}: {value!r} is not allowed; allowed: a positive integer (tokens)")
    return value


def as_bool(key: str, value: Any) -> bool:
    """A metadata flag: JSON true/false, or the strings lm-eval's ``key=value`` parsing leaves."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
        return value.lower() in ("true", "1")
    raise ConfigError(f"{key}: {value!r} is not allowed; allowed: true or false")


@dataclass(frozen=True)
class WindowPlan:
    """Which lengths of a task fit a window: prompt (at most its target) + ``max_gen_toks`` <= window."""

    window: ModelWindow
    max_gen_toks: int
    skipped: tuple[int, ...]

    @property
    def prompt_limit(self) -> int:
        return self.window.tokens - self.max_gen_toks

    def describe(self, task_name: str) -> str:
        lengths = ", ".join(str(n) for n in self.skipped)
        return (f"{task_name}: skipping context_tokens {lengths}: prompt + max_gen_toks {self.max_gen_toks} would "
                f"exceed the {self.window.tokens}-token window ({self.window.source})")


def plan_window(lengths: tuple[int, ...], window: ModelWindow, max_gen_toks: int) -> WindowPlan:
    if max_gen_toks >= window.tokens:
        raise ConfigError(f"max_gen_toks: {max_gen_toks} is not allowed; allowed: fewer than the model's "
                          f"{window.tokens}-token window ({window.source})")
    limit = window.tokens - max_gen_toks
    return WindowPlan(window, max_gen_toks, tuple(sorted({n for n in lengths if n > limit})))


def warn(message: str) -> None:
    print(f"lurch: warning: {message}", file=sys.stderr, flush=True)
