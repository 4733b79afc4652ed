"""The on-disk doc cache of our lm-eval tasks (harness.doc_cache): a second build reads what the first one
generated, the docs are identical to a fresh generation, and no cache problem ever fails a run."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lurch_tasks.core import registry
from lurch_tasks.core.generation import generate_row, resolve_task
from lurch_tasks.core.instance import content_hash, instance_part
from lurch_tasks.harness import doc_cache
from lurch_tasks.harness.tasks import build_docs

TASK = "memory_drift_edge"
FAMILY = "graph_reconstruction"
META = {"max_seq_lengths": [2048, 4096], "num_samples": 1}  # 8 docs: 6 grid, a zero-gold control per length
LURCH = str(Path(sys.executable).parent / "lurch")


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("LURCH_CACHE_DIR", str(folder))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # the MAC key: never the user's own
    return folder


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Indices the graph family generates (its generate function is wrapped in the registry)."""
    generated: list[int] = []
    family = registry.get_family(FAMILY)

    def generate(config, seed, split, index, name):
        generated.append(index)
        return family.generate(config, seed, split, index, name)

    monkeypatch.setitem(registry._FAMILIES, FAMILY, dataclasses.replace(family, generate=generate))
    return generated


def fresh(monkeypatch: pytest.MonkeyPatch, **metadata):
    """The docs generated with the cache off."""
    with monkeypatch.context() as patch:
        patch.setenv("LURCH_CACHE_DIR", "off")
        return build_docs(TASK, **metadata)["test"]


def assert_same(docs, expected) -> None:
    assert docs.features == expected.features
    assert docs.data.table.equals(expected.data.table)
    assert [content_hash(dict(d)) for d in docs] == [content_hash(dict(d)) for d in expected]


def entries(folder: Path) -> list[Path]:
    return sorted((folder / "docs").glob("*.arrow")) if (folder / "docs").is_dir() else []


def warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("lurch: warning:")]


def test_second_build_reads_the_cache_and_the_docs_are_identical(cache_dir, calls, monkeypatch, capsys) -> None:
    expected = fresh(monkeypatch, **META)
    assert len(calls) == len(expected) == 8
    first = build_docs(TASK, **META)["test"]
    assert len(calls) == 16  # generated once more, into the cache
    [entry] = entries(cache_dir)
    before = entry.stat()
    second = build_docs(TASK, **META)["test"]
    assert len(calls) == 16  # nothing generated
    after = entry.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)  # read, not rewritten
    assert_same(first, expected)
    assert_same(second, expected)
    task = resolve_task(TASK, {"context_tokens": (2048, 4096), "num_samples": 1})
    assert [content_hash(instance_part(dict(d))) for d in second] == [content_hash(generate_row(task, i))
                                                                      for i in range(8)]
    assert not warnings(capsys.readouterr().err)
    assert not list((cache_dir / "docs").glob(".*.tmp"))  # no temporary file left


def test_limit_reuses_a_longer_prefix_and_extends_a_shorter_one(cache_dir, calls, monkeypatch) -> None:
    assert len(build_docs(TASK, **META, max_docs=3)["test"]) == 3
    assert calls == [0, 1, 2]
    shorter = build_docs(TASK, **META, max_docs=2)["test"]
    assert calls == [0, 1, 2]
    longer = build_docs(TASK, **META, max_docs=5)["test"]
    assert calls == [0, 1, 2, 3, 4]  # only the two docs the cache did not hold
    calls.clear()
    assert_same(shorter, fresh(monkeypatch, **META, max_docs=2))
    assert_same(longer, fresh(monkeypatch, **META, max_docs=5))
    calls.clear()
    full = build_docs(TASK, **META)["test"]
    assert calls == [5, 6, 7]  # the docs after the longest prefix (6 and 7: zero-gold controls)
    assert_same(full, fresh(monkeypatch, **META))
    assert len(entries(cache_dir)) == 1


def test_window_filter_is_applied_per_run_to_cached_docs(cache_dir, calls, monkeypatch) -> None:
    build_docs(TASK, **META)
    calls.clear()
    window = {**META, "max_model_len": 3000}  # drops the 4096-token docs at every run
    cached = build_docs(TASK, **window)["test"]
    assert calls == []
    expected = fresh(monkeypatch, **window)
    assert 0 < len(cached) < 8
    assert_same(cached, expected)


def _damage(kind: str, path: Path) -> None:
    data = path.read_bytes()
    if kind == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "garbage":
        path.write_bytes(b"\x00not a cache\n" * 100)
    elif kind == "flipped byte in a row":
        position = data.index(b'"prompt"') + 20
        path.write_bytes(data[:position] + bytes([data[position] ^ 0x01]) + data[position + 1:])
    elif kind == "key edited":
        key = data.index(doc_cache.KEY_FIELD)
        position = data.index(b'"seed":0', key)
        path.write_bytes(data[:position] + b'"seed":7' + data[position + 8:])
    else:
        raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["truncated", "empty", "garbage", "flipped byte in a row", "key edited"])
def test_a_damaged_cache_file_is_regenerated_with_one_warning(kind, cache_dir, calls, monkeypatch, capsys) -> None:
    build_docs(TASK, **META)
    [entry] = entries(cache_dir)
    _damage(kind, entry)
    capsys.readouterr()
    calls.clear()
    docs = build_docs(TASK, **META)["test"]
    lines = warnings(capsys.readouterr().err)
    assert len(lines) == 1 and "damaged doc cache file" in lines[0], lines
    assert len(calls) >= 1 and set(calls) <= set(range(8))
    assert_same(docs, fresh(monkeypatch, **META))
    calls.clear()
    capsys.readouterr()
    again = build_docs(TASK, **META)["test"]  # the damaged file was replaced by a good one
    assert calls == [] and not warnings(capsys.readouterr().err)
    assert_same(again, docs)


def test_cache_off_writes_nothing(tmp_path, calls, monkeypatch) -> None:
    monkeypatch.setenv("LURCH_CACHE_DIR", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    build_docs(TASK, **META)
    build_docs(TASK, **META)
    assert len(calls) == 16
    assert list(tmp_path.iterdir()) == []


def test_cache_location_follows_the_environment(tmp_path, calls, monkeypatch) -> None:
    assert doc_cache.cache_root({"LURCH_CACHE_DIR": "OFF"}) is None
    assert doc_cache.cache_root({"LURCH_CACHE_DIR": "/x/y"}) == Path("/x/y")
    assert doc_cache.cache_root({"XDG_CACHE_HOME": "/xdg"}) == Path("/xdg/lurch-tasks")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert doc_cache.cache_root({"XDG_CACHE_HOME": "relative"}) == tmp_path / "home/.cache/lurch-tasks"
    assert doc_cache.cache_root({}) == tmp_path / "home/.cache/lurch-tasks"
    monkeypatch.delenv("LURCH_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    build_docs(TASK, **META, max_docs=1)
    assert len(entries(tmp_path / "xdg" / "lurch-tasks")) == 1


def test_unwritable_cache_folder_still_builds_with_one_warning(tmp_path, calls, monkeypatch, capsys) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    monkeypatch.setenv("LURCH_CACHE_DIR", str(blocker / "cache"))  # cannot be created, even by root
    docs = build_docs(TASK, **META)["test"]
    lines = warnings(capsys.readouterr().err)
    assert len(lines) == 1 and "cannot write the doc cache" in lines[0], lines
    assert_same(docs, fresh(monkeypatch, **META))
    assert blocker.read_text() == "not a folder\n" and sorted(tmp_path.iterdir()) == [blocker]


def test_write_failure_midway_leaves_no_temporary_file(cache_dir, calls, monkeypatch, capsys) -> None:
    def disk_full(path, schema, parts):
        with doc_cache.atomic_output(path, binary=True) as out:
            out.write(b"ARROW1" + b"\0" * 1000)  # part of a file, then the disk is full
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(doc_cache, "write_entry", disk_full)
    docs = build_docs(TASK, **META)["test"]
    lines = warnings(capsys.readouterr().err)
    assert len(lines) == 1 and "No space left on device" in lines[0], lines
    assert_same(docs, fresh(monkeypatch, **META))
    assert list((cache_dir / "docs").iterdir()) == []  # neither an entry nor a temporary file


def test_an_interrupted_build_leaves_the_stored_entry_as_it_was(cache_dir, calls, monkeypatch) -> None:
    build_docs(TASK, **META, max_docs=2)
    [entry] = entries(cache_dir)
    stored = entry.read_bytes()
    family = registry.get_family(FAMILY)

    def interrupted(config, seed, split, index, name):
        if index == 4:
            raise KeyboardInterrupt
        return family.generate(config, seed, split, index, name)

    monkeypatch.setitem(registry._FAMILIES, FAMILY, dataclasses.replace(family, generate=interrupted))
    with pytest.raises(KeyboardInterrupt):
        build_docs(TASK, **META)
    assert entry.read_bytes() == stored
    assert list((cache_dir / "docs").iterdir()) == [entry]


def test_key_separates_seed_split_version_and_budget_knobs(monkeypatch) -> None:
    base = resolve_task(TASK)
    variants = [
        doc_cache.cache_key(base, "test"),
        doc_cache.cache_key(base, "validation"),
        doc_cache.cache_key(dataclasses.replace(base, seed=1), "test"),
        doc_cache.cache_key(resolve_task(TASK, {"chat_template": True}), "test"),
        doc_cache.cache_key(resolve_task(TASK, {"tokenizer": "some/model"}), "test"),
        doc_cache.cache_key(resolve_task(TASK, {"context_tokens": [2048]}), "test"),
    ]
    family = registry.get_family(FAMILY)
    monkeypatch.setitem(registry._FAMILIES, FAMILY, dataclasses.replace(family, version="99.0.0"))
    variants.append(doc_cache.cache_key(base, "test"))
    paths = {doc_cache.entry_path(Path("/c"), key) for key in variants}
    assert len(paths) == len(variants)


def test_a_local_tokenizer_is_part_of_the_key(tmp_path, cache_dir, monkeypatch) -> None:
    from hf_tiny import build_tokenizer

    folder = tmp_path / "tok"
    build_tokenizer().save_pretrained(folder)
    metadata = {"max_seq_lengths": [1024], "num_samples": 1, "tokenizer": str(folder)}
    docs = build_docs("find_the_origin", **metadata, max_docs=2)["test"]
    assert json.loads(docs[0]["params"])["tokenizer"] == str(folder)
    assert len(entries(cache_dir)) == 1
    config = folder / "tokenizer_config.json"
    os.utime(config, ns=(config.stat().st_atime_ns, config.stat().st_mtime_ns + 10**9))  # the tokenizer changed
    build_docs("find_the_origin", **metadata, max_docs=2)
    assert len(entries(cache_dir)) == 2


@pytest.mark.slow
def test_lurch_eval_second_run_reads_the_cache(tmp_path) -> None:
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", LURCH_CACHE_DIR=str(tmp_path / "cache"),
               XDG_CONFIG_HOME=str(tmp_path / "config"))
    args = [LURCH, "eval", "--model", "lurch-solver", "--tasks", "find_the_origin", "--limit", "4",
            "--metadata", json.dumps({"max_seq_lengths": [512], "num_samples": 1})]
    results = []
    for run in ("first", "second"):
        done = subprocess.run([*args, "--output_path", str(tmp_path / run)], capture_output=True, text=True,
                              env=env, cwd=tmp_path, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "doc cache" not in done.stderr
        [entry] = entries(tmp_path / "cache")
        results.append((entry.stat().st_mtime_ns, entry.stat().st_ino))
        [out] = sorted((tmp_path / run).rglob("results_*.json"))
        assert json.loads(out.read_text())["results"]["find_the_origin"]["score,none"] == 1.0
    assert results[0] == results[1]  # the second run read the entry and had nothing to add


def test_rows_are_spilled_while_generating_and_the_entry_is_the_same(cache_dir, calls, monkeypatch) -> None:
    monkeypatch.setattr(doc_cache, "SPILL_ROWS", 3)
    held: list[int] = []
    put = doc_cache.DocCache.put

    def watched(self, index, row):
        put(self, index, row)
        held.append(len(self._new))

    monkeypatch.setattr(doc_cache.DocCache, "put", watched)
    first = build_docs(TASK, **META)["test"]
    assert len(held) == 8 and max(held) < 3  # never more than a spill batch of rows in memory
    assert list((cache_dir / "docs").glob(".*.tmp")) == []  # the spill file is gone
    second = build_docs(TASK, **META)["test"]
    assert len(calls) == 8  # all 8 read back from the entry
    assert_same(second, first)
    assert_same(first, fresh(monkeypatch, **META))
