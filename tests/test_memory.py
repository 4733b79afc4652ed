"""Memory systems (lurch_tasks.memory): the protocol, the per-context ingestion cache, the built-in running fact
store on hand-made entries and on a RECON case, and the Mem0 adapter's offline configuration."""

from __future__ import annotations

import importlib.util
import os
import urllib.request

import pytest

from lurch_tasks.memory import FactStore, FactStoreConfig, IngestCache, MemorySystem, context_key, make_memory
from lurch_tasks.memory.facts import subjects_of
from lurch_tasks.memory.mem0_local import Mem0Config, check_offline

ENTRIES = [
    "[Day 1, 09:00] [LOG] [Officer Mara Quill] Anna Berg was seen at Harbor Bank on Day 1 from 10:00 to 11:00.",
    "[Day 1, 12:00] [LOG] [Officer Mara Quill] Tomas Reed was seen at Lake Market on Day 1 from 10:30 to 12:00.",
    "[Day 2, 08:00] [NOTES] [Detective Ivo Lund] Following up on the torn glove from Lake Market, "
    "the team traced the red scarf from Harbor Bank.",
    "[Day 2, 15:00] [MEMO] [Clerk Pia Sund] The vault code is kept by Jonas Kell.",
    "[Day 3, 10:00] [NOTES] [Detective Ivo Lund] The step from the torn glove from Lake Market to the red scarf "
    "from Harbor Bank is withdrawn: the sample was contaminated.",
    "[Day 4, 11:00] [MEMO] [Clerk Pia Sund] Correction: Jonas Kell handed the vault code to Ruth Amsel.",
]


def store(entries=ENTRIES, **settings) -> FactStore:
    memory = FactStore(FactStoreConfig(**settings))
    memory.ingest(entries)
    return memory


def test_subjects_skip_the_header_and_keep_item_phrases_whole():
    assert subjects_of(ENTRIES[0]) == ("anna berg", "harbor bank")  # not the author, Mara Quill
    assert subjects_of(ENTRIES[2]) == ("torn glove from lake market", "red scarf from harbor bank")
    assert subjects_of(ENTRIES[4]) == ("torn glove from lake market", "red scarf from harbor bank")


def test_a_withdrawal_supersedes_the_step_it_names_and_only_that():
    memory = store()
    assert memory.superseded == {2: 4, 3: 5}  # the withdrawn step; the corrected vault-code fact
    assert [f.kind for f in memory.facts] == ["fact", "fact", "fact", "fact", "retraction", "correction"]
    assert memory.in_force(0) and memory.in_force(1) and memory.in_force(4)
    recalled = memory.recall("Which item did the torn glove from Lake Market lead to?", k=5)
    assert ENTRIES[2] not in recalled and ENTRIES[4] in recalled  # the withdrawal, not the withdrawn step
    assert memory.recall("Who holds the vault code now?", k=1) == [ENTRIES[5]]


def test_superseded_facts_come_back_when_asked_for_and_history_keeps_them():
    memory = store(include_superseded=True)
    assert ENTRIES[2] in memory.recall("Which item did the torn glove from Lake Market lead to?", k=5)
    assert [f.position for f in memory.history("Jonas Kell")] == [3, 5]


def test_recall_is_ranked_then_returned_in_time_order_and_never_more_than_k():
    memory = store()
    recalled = memory.recall("Where was Anna Berg seen, and was Tomas Reed at Lake Market?", k=2)
    assert recalled == [ENTRIES[0], ENTRIES[1]]
    assert len(memory.recall("Harbor Bank", k=1)) == 1
    assert memory.recall("Harbor Bank", k=0) == [] and memory.recall("zebra quantum", k=3) == []


def test_the_fact_store_is_deterministic_and_describes_itself():
    assert store().recall("Anna Berg", 3) == store().recall("Anna Berg", 3)
    assert store().describe() == {"memory": "facts", "include_superseded": False, "units": 6, "subjects": 8,
                                  "retractions": 1, "corrections": 1, "superseded": 2}
    assert isinstance(store(), MemorySystem)


def test_the_cache_ingests_each_context_once():
    made: list[FactStore] = []

    def factory() -> FactStore:
        made.append(FactStore())
        return made[-1]

    cache = IngestCache(factory)
    first = cache.memory_for(ENTRIES)
    assert cache.memory_for(list(ENTRIES)) is first and len(made) == 1 and ENTRIES in cache
    assert cache.memory_for(ENTRIES[:3]) is not first and len(cache) == 2
    assert context_key(["ab", "c"]) != context_key(["a", "bc"])  # units are length-prefixed


def test_make_memory_names_and_settings():
    assert make_memory("facts", include_superseded="true").describe()["include_superseded"] is True
    with pytest.raises(ValueError, match="unknown memory"):
        make_memory("notes")
    with pytest.raises(ValueError, match="no settings"):
        make_memory("facts", k="3")


def test_on_a_recon_case_every_withdrawal_ends_exactly_one_earlier_step():
    from lurch_tasks.families.recon.config import ReconConfig
    from lurch_tasks.families.recon.generate import generate

    row = generate(ReconConfig(context_tokens=(16_384,), num_samples=1), 0, "test", 0, "recon_small").to_row()
    units = row["context"].splitlines()
    memory = store(units)
    retractions = [f.position for f in memory.facts if f.kind == "retraction"]
    assert retractions and sorted(memory.superseded.values()) == retractions
    for old, new in memory.superseded.items():
        assert old < new and set(memory.facts[old].subjects) == set(memory.facts[new].subjects)


def test_mem0_settings_convert_and_stay_on_the_loopback(monkeypatch):
    config = Mem0Config.from_settings({"infer": "false", "max_tokens": "64", "extraction_prompt": "short"})
    assert (config.infer, config.max_tokens, config.extraction_prompt) == (False, 64, "short")
    with pytest.raises(ValueError, match="no setting"):
        Mem0Config.from_settings({"top_k": "3"})
    check_offline(config)
    with pytest.raises(ValueError, match="loopback"):
        check_offline(Mem0Config(base_url="https://api.example.com/v1"))
    monkeypatch.setenv("OPENROUTER_API_KEY", "x")
    with pytest.raises(ValueError, match="OPENROUTER"):
        check_offline(config)


MEM0 = importlib.util.find_spec("mem0") is not None
SERVER = os.environ.get("LURCH_MEM0_SERVER", "http://127.0.0.1:8089/v1")


def server_up() -> bool:
    try:
        urllib.request.urlopen(f"{SERVER}/models", timeout=2)
        return True
    except OSError:
        return False


@pytest.mark.skipif(not MEM0, reason="mem0ai is not installed (pip install 'lurch-tasks[memory]')")
def test_mem0_stores_and_recalls_units_verbatim_offline():
    memory = make_memory("mem0", infer="false")
    memory.ingest(ENTRIES[:4])
    assert memory.recall("Where was Anna Berg seen?", k=1) == [ENTRIES[0]]
    assert memory.describe()["ingest"]["memories"] == 4


@pytest.mark.skipif(not MEM0, reason="mem0ai is not installed (pip install 'lurch-tasks[memory]')")
@pytest.mark.skipif(MEM0 and not server_up(), reason=f"no OpenAI-compatible server at {SERVER} (LURCH_MEM0_SERVER)")
def test_mem0_extracts_with_the_local_server():
    memory = make_memory("mem0", base_url=SERVER, extraction_prompt="short", max_tokens="128")
    memory.ingest(ENTRIES[:2])
    ingest = memory.describe()["ingest"]
    assert ingest["llm_calls"] == 2 and ingest["unit_errors"] == 0, ingest
    assert ingest["memories"] == len(memory.recall("Anna Berg Tomas Reed", k=10))
