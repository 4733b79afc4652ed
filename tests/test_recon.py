"""RECON: production rules and provenance, narration read back, the six categories solved from the prompt alone,
the row audit and its fault injection, scoring, views of the stored config, Parquet deduplication, goldens."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from lurch_tasks.core.generation import iter_rows, resolve_task
from lurch_tasks.core.instance import content_hash, schema_errors
from lurch_tasks.core.registry import all_tasks, get_family, get_task
from lurch_tasks.families.recon.audit import audit
from lurch_tasks.families.recon.baselines import guess, solve
from lurch_tasks.families.recon.case import Entry, RuleError, fire
from lurch_tasks.families.recon.catalog import DOMAINS, domain
from lurch_tasks.families.recon.config import ReconConfig
from lurch_tasks.families.recon.generate import build_case, case_config, generate
from lurch_tasks.families.recon.narrate import parse_narrative, parse_oracle
from lurch_tasks.families.recon.prompt import render_prompt
from lurch_tasks.families.recon.questions import CATEGORIES
from lurch_tasks.scoring.mcq import ABSTAIN, mcq_score, parse_choice

SMALL = ReconConfig(context_tokens=(16_384,), num_samples=1)
GOLDEN = Path(__file__).parent / "golden" / "recon.json"
TASKS = [t.name for t in all_tasks() if t.family == "recon"]


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    """One case per domain, its six questions, in the narrative variant."""
    return [generate(SMALL, 0, "test", index, "recon_small").to_row() for index in range(SMALL.size())]


def test_catalogues_have_every_part_the_issue_names():
    for name in DOMAINS:
        d = domain(name)
        assert len(d.streams) == 4 and len(d.invalidations) == 4 and len(d.entry_types) >= 4
        assert d.statement_type in d.entry_types and d.action_type in d.entry_types
        assert set(d.finding_types) <= set(d.entry_types)


def test_rules_fire_only_when_their_requirements_hold():
    case = build_case(case_config(SMALL), 0, "test", "criminal", 16_384, 0)
    assert all(case.trace.entries[u].minute <= case.trace.entries[v].minute for u, v, _ in case.trace.edges)
    assert {kind for _, _, kind in case.trace.edges} >= {"causal", "invalidation", "conflict_resolution", "revision"}
    early = Entry(0, "INTERVIEW", "Detective A B", {"kind": "link", "from": "x", "to": "y"}, ("found:x",))
    with pytest.raises(RuleError, match="found:x"):
        fire([early])


def test_exactly_one_culprit_survives_and_chains_span_the_configured_hops():
    for sample in range(3):
        case = build_case(case_config(SMALL), 0, "test", "criminal", 16_384, sample)
        bp = case.blueprint
        hops = [len(t.clues) for t in bp.trails]
        assert all(3 <= h <= 15 for h in hops)
        withdrawn = {w.trail for w in bp.withdrawals}
        standing = {t.person for k, t in enumerate(bp.trails) if k not in withdrawn}
        assert standing == {bp.culprit}  # the trap hits the culprit's first trail; the second one stands
    medical = build_case(case_config(SMALL), 0, "test", "medical", 16_384, 0).blueprint
    assert max(len(t.clues) for t in medical.trails) <= 9


def test_narration_reads_back_to_the_same_facts():
    case = build_case(case_config(SMALL), 0, "test", "financial", 16_384, 1)
    the_domain = case.blueprint.domain
    narrative = parse_narrative("\n".join(case.lines), the_domain)
    oracle = parse_oracle("\n".join(case.oracle))
    assert len(narrative) == len(oracle) == len(case.entries)
    for read_n, read_o, entry in zip(narrative, oracle, case.entries, strict=True):
        expected = dict(entry.fact)
        assert read_n.fact == expected and read_o.fact == expected
        assert read_n.minute == read_o.minute == entry.minute and read_n.author == entry.author


def solved(row: dict) -> bool:
    """The reference solver's answer to the row's prompt scores full marks."""
    return get_family("recon").score(row, solve(row["prompt"]))["accuracy"] == 1.0


def test_every_category_is_solved_from_the_prompt_and_every_row_audits_clean(rows):
    assert sorted({r["difficulty"]["category"] for r in rows}) == sorted(CATEGORIES)
    assert {(r["difficulty"]["category"], r["answer_format"]) for r in rows} == set(SMALL.slots())
    for row in rows:
        assert schema_errors(row) == []
        assert solved(row), row["id"]
        assert audit(row) == [], row["id"]
        assert row["difficulty"]["prompt_tokens"] <= row["difficulty"]["target_tokens"]
        assert not re.search(r"\b(?:EV|log)[-_]\d+", row["prompt"])


def test_a_cases_questions_are_consecutive_rows_of_one_case(rows):
    contexts = [r["context"] for r in rows]
    per_case = len(SMALL.slots())
    for first in range(0, len(rows), per_case):
        assert len(set(contexts[first:first + per_case])) == 1
    assert len(set(contexts)) == len(rows) // per_case


def test_every_retrieval_and_counterfactual_form_is_asked_and_solved():
    """Forms rotate over blocks of six cases (so within a form every letter is gold once)."""
    seen: dict[str, set[str]] = {"retrieval": set(), "counterfactual": set()}
    for category in seen:
        config = ReconConfig(domains=("medical",), context_tokens=(16_384,), categories=(category,),
                             formats=("mcq_single",), num_samples=24)
        for index in range(0, 24, 3):
            row = generate(config, 0, "test", index, "t").to_row()
            seen[category].add(json.loads(row["params"])["question"]["form"])
            assert audit(row) == [], (category, index)
    assert seen == {"retrieval": {"state", "ordering", "elimination", "streams"},
                    "counterfactual": {"later", "earlier"}}


@pytest.mark.parametrize("variant", ["oracle", "closedbook"])
def test_variants_share_the_cases_and_questions(rows, variant):
    config = dataclasses.replace(SMALL, variant=variant)
    for index in (0, 7, 17):
        row = generate(config, 0, "test", index, "recon_variant").to_row()
        narrative = rows[index]
        assert row["question"] == narrative["question"] and row["answer"] == narrative["answer"]
        assert row["pair_key"] == narrative["pair_key"]
        assert audit(row) == []
        if variant == "oracle":
            assert row["context"].startswith("{") and solved(row)
        else:
            assert row["context"] == "" and solve(row["prompt"]) == f"ANSWER: {ABSTAIN}"


def test_the_gold_letter_rotates_and_failure_modes_label_every_wrong_option():
    config = ReconConfig(domains=("criminal",), context_tokens=(16_384,), categories=("retrieval",),
                         formats=("mcq_single",), num_samples=6)
    letters = [generate(config, 0, "test", index, "t").answer for index in range(6)]
    assert sorted(letters) == list("ABCDEF")
    row = generate(config, 0, "test", 0, "t").to_row()
    modes = json.loads(row["params"])["failure_modes"]
    assert modes.count(None) == 1 and all(m for m in modes if m is not None)


# ------------------------------------------------------------------------------------------- fault injection

def _retimed(line: str, stamp: str) -> str:
    return re.sub(r"^\[Day \d+, \d\d:\d\d\]", stamp, line)


def _with_context(row: dict, lines: list[str], nodes: dict[str, str] | None = None) -> dict:
    """The row with a new context, its prompt rebuilt and proof nodes renamed to match: only the fault differs."""
    old = row["context"].split("\n")
    changed = {o: n for o, n in zip(old, lines, strict=True) if o != n}
    context = "\n".join(lines)
    graph = json.loads(json.dumps(row["reasoning_graph"]))
    for node in graph["nodes"]:
        node["text"] = changed.get(node["text"], node["text"])
    difficulty = row["difficulty"]
    prompt = render_prompt(difficulty["variant"], difficulty["domain"], context, row["question"])
    return {**row, "context": context, "prompt": prompt, "reasoning_graph": graph}


def inject(row: dict, fault: str) -> dict:
    lines = row["context"].split("\n")
    proof = [int(n["id"][1:]) for n in row["reasoning_graph"]["nodes"] if n["kind"] == "evidence"]
    if fault == "timestamp_inversion":  # a later proof entry dated before the first line of the case
        k = proof[-1]
        lines[k] = _retimed(lines[k], "[Day 1, 00:01]")
        return _with_context(row, lines)
    if fault == "dag_cycle":
        graph = json.loads(json.dumps(row["reasoning_graph"]))
        graph["edges"].append(["answer", graph["nodes"][0]["id"]])
        graph["edges"].append([graph["nodes"][0]["id"], "answer"])
        return {**row, "reasoning_graph": graph}
    if fault == "dangling_reference":  # a link whose source finding the case never establishes
        link = next(k for k, line in enumerate(lines) if re.search(r"\] (?:Examination of|Analysis of) the ", line))
        lines[link] = re.sub(r"(Examination of|Analysis of) the \w+", r"\1 the unlogged", lines[link], count=1)
        broken = _with_context(row, lines)
        graph = broken["reasoning_graph"]
        graph["edges"].append([graph["nodes"][0]["id"], "e99999"])
        return broken
    if fault == "identifier_leak":
        k = proof[0]
        lines[k] = lines[k] + " See EV-07."
        leaked = _with_context(row, lines)
        if not leaked["options"]:
            return leaked
        return {**leaked, "options": [*leaked["options"][:-1], leaked["options"][-1] + " (log_001)"]}
    raise ValueError(fault)


FAULTS = ("timestamp_inversion", "dag_cycle", "dangling_reference", "identifier_leak")


@pytest.mark.parametrize("fault", FAULTS)
def test_the_row_audit_catches_every_injected_fault(rows, fault):
    caught = sum(bool(audit(inject(row, fault))) for row in rows)
    assert caught == len(rows), f"{fault}: caught {caught} of {len(rows)}"


# ------------------------------------------------------------------------------------------------- scoring

@pytest.mark.parametrize("output, choice", [
    ("ANSWER: C", "C"), ("C)", "C"), ("**C**", "C"), ("abstain", ABSTAIN), ("ANSWER: ABSTAIN", ABSTAIN),
    ("Reasoning... the answer is (d).", "D"), ("Final answer: **E**", "E"), ("ANSWER: G", None), ("", None),
    (None, None), (12, None), ("I am not sure.\nANSWER: b", "B"),
])
def test_the_parser_reads_any_usual_answer_and_never_raises(output, choice):
    assert parse_choice(output, "ABCDEF") == choice


def test_the_penalised_rule_makes_guessing_worth_nothing():
    assert mcq_score("A", "A", 6) == {"score": 1.0, "accuracy": 1.0, "abstain_rate": 0.0}
    assert mcq_score("A", "B", 6) == {"score": -0.2, "accuracy": 0.0, "abstain_rate": 0.0}
    assert mcq_score("A", ABSTAIN, 6) == {"score": 0.0, "accuracy": 0.0, "abstain_rate": 1.0}
    assert mcq_score("A", None, 6) == {"score": 0.0, "accuracy": 0.0, "abstain_rate": 0.0}  # unreadable: as abstaining
    assert (1.0 + 5 * -0.2) / 6 == 0.0  # a uniform guess over six options


def test_family_score_reports_the_umbrella_metrics_and_random_is_at_chance(rows):
    family = get_family("recon")
    right = family.score(rows[0], f"ANSWER: {rows[0]['answer']}")
    assert rows[0]["answer_format"] == "mcq_single"
    assert right == {"score": 1.0, "accuracy": 1.0, "abstain_rate": 0.0, "memory_drift": 0.0, "precision": 1.0,
                     "recall": 1.0, "f1": 1.0, "prompt_tokens": float(rows[0]["difficulty"]["prompt_tokens"]),
                     "abstain_correct": None, "false_answer_rate": None,  # the controls' metrics: not defined here
                     "truncated": 0.0, "unparsed": 0.0}
    # issue 28: an unreadable answer scores as an abstention (0, the paper's record after retries), not -1/5
    unreadable = family.score(rows[0], "no idea")
    assert (unreadable["score"], unreadable["abstain_rate"], unreadable["unparsed"]) == (0.0, 0.0, 1.0)
    assert all(guess(r["prompt"], 0).startswith("ANSWER: ") for r in rows)


# ---------------------------------------------------------------------------------- views, Parquet, goldens

def test_category_tasks_are_views_of_the_stored_config():
    for category in CATEGORIES:
        task = get_task(f"recon_{category}")
        assert task.stored_as == "recon_all" and task.config.categories == (category,)
    from lurch_tasks.hub import materialize

    with pytest.raises(ValueError, match="is a view of 'recon_all'"):
        materialize(["recon_chain"], Path("/nonexistent/never-written"), progress=False)


def test_materialized_cases_are_stored_once_and_views_read_them(tmp_path):
    import datasets
    import pyarrow.parquet as pq

    from lurch_tasks.harness.tasks import build_docs
    from lurch_tasks.hub import materialize, validate_folder

    overrides = {"context_tokens": [16_384], "num_samples": 2, "domains": ["criminal"]}
    folder = materialize(["recon_all"], tmp_path / "out", overrides=overrides, progress=False)
    loaded = datasets.load_dataset(str(folder), "recon_all", split="test")
    task = resolve_task("recon_all", overrides)
    assert [content_hash(dict(row)) for row in loaded] == [content_hash(r) for r in iter_rows(task, range(32))]
    assert validate_folder(folder, progress=False)["recon_all"]["problems"] == []
    stored = sum(p.stat().st_size for p in (folder / "recon_all").glob("*.parquet"))
    raw_case = sum(len(c.encode()) for c in {row["context"] for row in loaded})  # each case's text once
    raw_rows = sum(len(row["context"].encode()) + len(row["prompt"].encode()) for row in loaded)
    # the folder holds the cases' text once, not 32 copies: less than two copies of it, with each row's own fields
    # (question, evidence, proof graph, params) beside it
    assert stored < 2 * raw_case < raw_rows / 10
    metadata = pq.read_metadata(next((folder / "recon_all").glob("*.parquet")))
    assert metadata.num_rows == 32
    docs = build_docs("recon_chain", dataset_path=str(folder))["test"]
    assert [(d["difficulty"]["category"], d["answer_format"]) for d in docs] == [
        ("chain", "mcq_single"), ("chain", "integer"), ("chain", "ordering")] * 2
    assert all(solved(d) for d in docs)


def golden_fingerprints() -> dict:
    """SHA-256 of the first two instances of every registered RECON config."""
    return {
        "family_version": get_family("recon").version,
        "configs": {name: [content_hash(r) for r in iter_rows(task, range(2))]
                    for name in TASKS if (task := resolve_task(name))},
    }


def test_golden_fingerprints():
    expected = json.loads(GOLDEN.read_text())
    assert golden_fingerprints() == expected, (
        "generated bytes changed: bump VERSION in lurch_tasks/families/recon/generate.py and regenerate with "
        "`python scripts/update_golden.py`")


def test_generation_is_deterministic_and_a_pure_function_of_the_index():
    first = generate(SMALL, 5, "validation", 4, "t").to_row()
    build_case.cache_clear()
    assert generate(SMALL, 5, "validation", 4, "t").to_row() == first
    assert generate(SMALL, 6, "validation", 4, "t").context != first["context"]


def test_lengths_below_the_shortest_case_are_raised_with_a_warning(capsys):
    from lurch_tasks.core.config import ConfigError
    from lurch_tasks.harness.tasks import build_docs

    docs = build_docs("recon_retrieval", max_seq_lengths=[2048], num_samples=1, domains=["medical"])["test"]
    assert [d["difficulty"]["target_tokens"] for d in docs] == [16_384] * 3  # its three quota formats
    assert "below the 16384 tokens" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="max_seq_lengths of 16384 or more"):
        build_docs("recon_retrieval", max_seq_lengths=[2048], num_samples=1, strict=True)


def test_a_window_shorter_than_any_case_is_one_clear_error():
    from lurch_tasks.core.config import ConfigError
    from lurch_tasks.harness.tasks import build_docs

    with pytest.raises(ConfigError, match="shortest case needs 16384 tokens, more than the model's 8192-token"):
        build_docs("recon_chain", max_model_len=8192)
