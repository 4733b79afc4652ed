"""A tokenizer folder counted from its tokenizer.json alone once transformers was seen to load it unchanged
(core.hf_files), its byte-length table read back from the disk cache, and generation with the collector paused."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import numpy as np
import pytest

from lurch_tasks.core import disk_cache
from lurch_tasks.core.memory import collector_paused
from lurch_tasks.core.registry import all_families
from lurch_tasks.core.tokens import HFTokenCounter, byte_lengths, byte_lengths_table

TEXTS = ("The quick brown fox jumps over the lazy dog.", "a<x>b and <|end|> too", "  spaced\n\nlines\n", "naïve €5")
END = "<|end|>"


def tiny_folder(folder: Path) -> Path:
    """A byte-level BPE trained on one sentence, saved as transformers saves a fast tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=[END], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    backend.train_from_iterator([TEXTS[0]] * 3, trainer=trainer)
    PreTrainedTokenizerFast(tokenizer_object=backend, eos_token=END, model_max_length=512).save_pretrained(folder)
    return folder


def test_a_folder_holding_an_oversized_file_keeps_transformers_path(disk, tmp_path, monkeypatch):
    """A file beside the tokenizer larger than any tokenizer file is not hashed in every process: no record, so
    every process loads the folder through transformers, and counts are the same."""
    from lurch_tasks.core import hf_files

    folder = tiny_folder(tmp_path / "tok")
    (folder / "notes.txt").write_bytes(b"x" * 4096)
    monkeypatch.setattr(hf_files, "MAX_HASHED_BYTES", 1024 * 1024)
    assert hf_files.record_key(folder / hf_files.TOKENIZER_FILE) is not None
    monkeypatch.setattr(hf_files, "MAX_HASHED_BYTES", 2048)
    assert hf_files.record_key(folder / hf_files.TOKENIZER_FILE) is None
    first, second = HFTokenCounter(str(folder)), HFTokenCounter(str(folder))
    assert hf_files.read_record(folder / hf_files.TOKENIZER_FILE) is None and "_loaded" in second.__dict__
    assert counted(second) == counted(first)


def counted(counter: HFTokenCounter) -> list:
    return [(counter.count(text), counter.token_starts(text).tolist()) for text in TEXTS]


def test_a_recorded_folder_counts_from_its_file_alone_and_the_same(disk, tmp_path):
    folder = str(tiny_folder(tmp_path / "tok"))
    first = HFTokenCounter(folder)  # transformers loads it; the comparison is recorded
    assert "_loaded" in first.__dict__ and first._record.equivalent
    second = HFTokenCounter(folder)
    assert counted(second) == counted(first)
    assert second.table_stamp == first.table_stamp is not None
    assert np.array_equal(second._byte_lengths, first._byte_lengths)
    assert (second.newline_rules, second.added_texts) == (first.newline_rules, first.added_texts)
    assert "_loaded" not in second.__dict__  # counting never needed transformers
    assert (second.end_of_turn, second.model_max_length) == (END, 512)  # what only transformers knows, on demand
    assert {p.name.split("-")[0] for p in (disk / "tables").iterdir()} >= {"hf"}


def test_an_edited_folder_reads_no_stale_record(disk, tmp_path):
    folder = tiny_folder(tmp_path / "tok")
    plain = HFTokenCounter(str(folder)).count("a<x>b")
    config = json.loads((folder / "tokenizer_config.json").read_text())
    (folder / "tokenizer_config.json").write_text(json.dumps({**config, "extra_special_tokens": ["<x>"]}))
    for _ in range(2):  # transformers adds the token to the pipeline: never the file alone
        counter = HFTokenCounter(str(folder))
        assert "_loaded" in counter.__dict__ and not counter._record.equivalent
        assert counter.count("a<x>b") == 3 < plain


def test_without_a_cache_transformers_loads_the_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("LURCH_CACHE_DIR", "off")
    folder = str(tiny_folder(tmp_path / "tok"))
    counters = [HFTokenCounter(folder) for _ in range(2)]
    assert all(c._record is None and "_loaded" in c.__dict__ for c in counters)
    assert counted(counters[0]) == counted(counters[1])


def test_a_vocabulary_that_is_not_byte_level_has_no_byte_lengths_read_back(disk):
    from tokenizers import Tokenizer, decoders, models

    backend = Tokenizer(models.BPE(vocab={"a": 0, "€": 1}, merges=[]))
    backend.decoder = decoders.ByteLevel()
    assert byte_lengths(backend) is None
    built = disk_cache.cached_table("hf-byte-lengths-test", {"k": 1}, lambda: byte_lengths_table(None))
    read = disk_cache.cached_table("hf-byte-lengths-test", {"k": 1}, lambda: pytest.fail("not read back"))
    assert built["byte_level"][0] == read["byte_level"][0] == 0


def test_generation_runs_with_the_cycle_collector_paused():
    seen = []
    paused = collector_paused(lambda: seen.append(gc.isenabled()))
    paused()
    assert seen == [False] and gc.isenabled()
    assert all(getattr(family.generate, "collector_paused", False) for family in all_families())


def test_objects_alive_after_the_first_instance_are_frozen_once():
    paused = collector_paused(lambda: None)
    paused()
    frozen = gc.get_freeze_count()
    assert frozen > 0 and gc.isenabled()
    paused()
    assert gc.get_freeze_count() == frozen  # once per process: later instances' objects are collected as before
