"""`lurch-rag` (issue 31, stage 1): the retrieval-augmented wrapper, checked against the reference solver with no
model at all. With k = every unit it changes nothing (prompt byte for byte, score 1.0 on every family); with fewer
units the solver's score is exactly what the retrieved gold units allow, computed here independently of the solver,
and the coverage it records equals `lurch diagnose`'s. RECON's known exceptions are pinned, not hidden."""

from __future__ import annotations

import importlib.util
import json
import logging
from functools import cache
from statistics import mean

import pytest
from lm_eval.api.model import LM

from lurch_tasks.analysis.retrieval import diagnose_rows, evidence_lines, line_starts, rrf_fuse
from lurch_tasks.core.generation import iter_rows, resolve_task
from lurch_tasks.core.registry import get_family
from lurch_tasks.families.graph.prompt import profile_name
from lurch_tasks.harness.models import solve_prompt
from lurch_tasks.harness.rag import (
    RagSettings,
    Retriever,
    augment,
    entity_query,
    parse_settings,
    queries_for,
    settings_record,
)
from lurch_tasks.harness.rag_units import render, units_of, word_windows

SLICES = {  # family -> (task, overrides, docs): small, fast, every answer format the family has
    "find_the_origin": ("find_the_origin", {}, 16),
    "implicit_hop": ("implicit_hop_dispersion", {"facts": [3], "context_tokens": [2048]}, 10),  # single answers
    "implicit_hop_list": ("implicit_hop_depth", {"context_tokens": [2048]}, 16),
    "graph_reconstruction": ("memory_drift_edge", {"context_tokens": [2048, 4096]}, 12),
    "recon": ("recon_all", {"context_tokens": [16384], "domains": ["criminal"], "num_samples": 1}, 16),
}


@cache
def rows_of(name: str) -> tuple[dict, ...]:
    task_name, overrides, count = SLICES[name]
    task = resolve_task(task_name, overrides)
    return tuple(iter_rows(task, range(min(count, task.config.size()))))


def solved(row: dict, k: int | None, **settings) -> tuple[float, dict]:
    prompt, accounted = augment(row, Retriever(RagSettings(inner="lurch-solver", k=k, **settings)))
    return get_family(row["family"]).score(row, solve_prompt(prompt))["score"], accounted


def top_units(row: dict, k: int) -> set[int]:
    """The units the wrapper kept (its account says how many; the ranking is the wrapper's own)."""
    from lurch_tasks.harness.rag import rank_units

    units = units_of(row, 200)
    settings = RagSettings(inner="lurch-solver", k=k)
    return set(rank_units(list(units.texts), queries_for(row, settings), settings)[:k])


@pytest.mark.parametrize("name", sorted(SLICES))
def test_k_all_keeps_every_prompt_and_the_solver_scores_one(name):
    for row in rows_of(name):
        prompt, accounted = augment(row, Retriever(RagSettings(inner="lurch-solver", k=None)))
        assert prompt == row["prompt"]  # the family's render_prompt with every unit is the generated prompt
        assert get_family(row["family"]).score(row, solve_prompt(prompt))["score"] == 1.0
        if row["evidence"]:
            assert accounted["coverage"] == accounted["full_coverage"] == 1.0


@pytest.mark.parametrize("name", ["find_the_origin", "implicit_hop"])
@pytest.mark.parametrize("k", [3, 5, 20])
def test_exact_match_score_equals_full_coverage(name, k):
    pairs = [solved(row, k) for row in rows_of(name)]
    assert [score for score, _ in pairs] == [acc["full_coverage"] for _, acc in pairs]


@pytest.mark.parametrize("k", [2, 5, 8])
def test_graph_score_is_what_the_retrieved_profiles_allow(k):
    """The expected answer lists the gold edges whose two profiles were both retrieved (the solver cannot see a
    link whose other end is missing); the family scores it like any answer."""
    checked = 0
    for row in rows_of("graph_reconstruction"):
        gold_edges = json.loads(row["params"])["gold_edges"]
        if not gold_edges:
            continue  # a zero-gold control has nothing to lose
        units = units_of(row, 200)
        kept = {profile_name(units.texts[i]) for i in top_units(row, k)}
        expected = "\n".join(f"{a} -- {b}" for a, b in gold_edges if a in kept and b in kept)
        family = get_family(row["family"])
        assert solved(row, k)[0] == family.score(row, expected)["score"]
        checked += 1
    assert checked >= 6


@pytest.mark.parametrize("k", [5, 20, 40])
def test_implicit_hop_list_score_is_the_share_of_chains_fully_retrieved(k):
    """A branch is answerable when every hop's fact line was retrieved (the line holding both ends of the hop);
    the others are NOT FOUND (which scores as a wrong answer), and the family scores that answer line."""
    for row in rows_of("implicit_hop_list"):
        if row["answer_format"] != "entity_set":
            continue
        units = units_of(row, 200)
        gold = units.gold(row["evidence"])
        kept = top_units(row, k)
        answers = []
        for branch in json.loads(row["params"])["branches"]:
            chain = [branch["start"], *branch["bridges"], branch["answer"]]
            hops = [next(g for g in gold if a in units.texts[g] and b in units.texts[g])
                    for a, b in zip(chain, chain[1:], strict=False)]
            answers.append(branch["answer"] if all(h in kept for h in hops) else "NOT FOUND")
        expected = "FINAL ANSWER: " + "; ".join(answers)
        assert solved(row, k)[0] == get_family(row["family"]).score(row, expected)["score"]


def test_recon_score_against_full_coverage_and_its_known_exceptions():
    """RECON integer and ordering items: score = full coverage. MCQ single: equal except two by-design cases,
    pinned here (HANDOFF.md gives the numbers): a temporal "who is not accounted for" question needs every other
    person's alibi, which is not gold evidence (full coverage, solver abstains: 0), and a question whose partial
    evidence points to a wrong option (no full coverage, solver answers: -0.2)."""
    exceptions = []
    for k in (5, 20):
        for row in rows_of("recon"):
            score, accounted = solved(row, k)
            if row["answer_format"] in ("integer", "ordering"):
                assert score == accounted["full_coverage"], row["id"]
            elif row["answer_format"] == "mcq_single" and score != accounted["full_coverage"]:
                exceptions.append((k, row["difficulty"]["category"], accounted["full_coverage"], score))
    assert sorted(exceptions) == [(5, "retrieval", 0.0, -0.2), (20, "temporal", 1.0, 0.0)], exceptions


@pytest.mark.parametrize("k", [5, 10, 20])
def test_coverage_equals_diagnose(k):
    rows = rows_of("recon")
    table = diagnose_rows(rows, ["bm25"], (k,)).table(["bm25"])
    everything = next(r for r in table if r["group"] == "all")
    accounts = [solved(row, k)[1] for row in rows if row["evidence"]]
    assert round(mean(a["coverage"] for a in accounts), 4) == everything[f"recall@{k}"]
    assert round(mean(a["full_coverage"] for a in accounts), 4) == everything[f"full@{k}"]


def test_units_partition_the_context_and_gold_units_are_evidence_lines():
    for name in ("find_the_origin", "recon", "graph_reconstruction"):
        for row in rows_of(name)[:3]:
            units = units_of(row, 200)
            assert units.join(range(len(units.texts))) == row["context"]
            if units.separator == "\n":
                assert units.gold(row["evidence"]) == evidence_lines(line_starts(row["context"]), row["evidence"])
    text = "one two three four five six seven"
    windows = word_windows(text, 3)
    assert windows.texts == ("one two three ", "four five six ", "seven") and windows.join([0, 1, 2]) == text
    assert windows.gold([{"start": 9, "end": 18}]) == [0, 1]


def test_rrf_and_ties_follow_unit_order():
    assert rrf_fuse([[2, 0, 1], [0, 2, 1]], 3) == [0, 2, 1]  # 0 and 2 tie: unit order decides
    assert rrf_fuse([[1, 0]], 3) == [1, 0, 2]  # a unit no ranking holds scores nothing
    context_row = {"context": "same\nsame\nother", "question": "same?", "evidence": [], "family": "recon",
                   "options": []}
    from lurch_tasks.harness.rag import rank_units

    assert rank_units(["same", "same", "other"], ["same"], RagSettings(inner="x"))[:2] == [0, 1]
    assert queries_for(context_row, RagSettings(inner="x")) == ["same?"]


def test_template_queries_and_entities():
    row = rows_of("recon")[0]
    settings = RagSettings(inner="x", multi_query="template")
    queries = queries_for(row, settings)
    assert len(queries) == 2 + len(row["options"]) and queries[0] == queries_for(row, RagSettings(inner="x"))[0]
    assert entity_query('What is the origin of "cherub"? Reason step by step') == "cherub"
    assert entity_query("Question: What is the home city of Zotri Veropu?\nFINAL") == "Zotri Veropu"


@pytest.mark.parametrize("args, message", [
    ({"inner": "lurch-solver", "retriever": "tfidf"}, "retriever='tfidf' is not allowed; allowed: bm25, dense, hybrid"),
    ({"inner": "lurch-solver", "k": 0}, "k=0 is not allowed; allowed: a positive integer or all"),
    ({"inner": "lurch-solver", "rerank": "cross"}, "rerank='cross' is not allowed; allowed: none, dense"),
    ({"inner": "lurch-solver", "multi_query": "llm"}, "multi_query='llm' is not allowed; allowed: none, template"),
    ({}, "inner='' is not allowed; allowed: a registered lm-eval model"),
    ({"inner": "lurch-rag"}, "inner='lurch-rag' is not allowed"),
    ({"inner": "lurch-solver", "topk": 3}, "'topk' is not an argument of lurch-rag; allowed: inner, inner_args"),
])
def test_settings_errors_are_one_line(args, message):
    with pytest.raises(ValueError, match=None) as error:
        parse_settings(args)
    assert message in str(error.value) and "\n" not in str(error.value)


class _Kept(logging.Handler):
    """Keeps lm-eval's log messages (its logger does not propagate to pytest's caplog)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_lurch_eval_through_lm_eval_records_the_accounting(tmp_path):
    """The real CLI and lm-eval in this process: the inner model answers the re-rendered prompt and every doc's
    metrics carry what it read and wrote; lm-eval averages them with no "No aggregation function" warning; each
    sample holds the doc's record (settings, units sent), `lurch report` still reads the samples, and the results
    JSON has the means and the run's settings. A plain run of the same docs afterwards carries none of it."""
    from in_process import lurch_in_process

    from lurch_tasks.analysis.runs import find_runs, iter_samples
    from lurch_tasks.core.tokens import reference_counter

    out = tmp_path / "rag"
    kept, lm_eval_log = _Kept(), logging.getLogger("lm_eval")
    lm_eval_log.addHandler(kept)
    try:
        result = lurch_in_process("eval", "--model", "lurch-rag", "--model_args", "inner=lurch-solver,k=5",
                                  "--tasks", "find_the_origin", "--limit", "4", "--output_path", str(out),
                                  "--log_samples")
    finally:
        lm_eval_log.removeHandler(kept)
    assert result.returncode == 0, result.stderr[-3000:]
    logged = kept.messages
    assert any("--limit" in message for message in logged)  # lm-eval's warnings are captured here
    assert not [m for m in logged + result.stderr.splitlines() if "No aggregation function" in m]
    samples = [json.loads(line) for path in out.rglob("samples_*.jsonl") for line in path.read_text().splitlines()]
    assert len(samples) == 4
    for sample in samples:
        assert sample["retrieved_units"] == 5 and 0 < sample["prompt_tokens"] < 400
        assert sample["score"] == sample["full_coverage"] and 0 <= sample["coverage"] <= 1
        assert sample["completion_tokens"] == reference_counter().count(sample["resps"][0][0]) > 0
        record = sample["lurch_rag"]
        assert record["settings"] == settings_record(parse_settings({"inner": "lurch-solver", "k": 5}))
        assert len(record["units"]) == 5 and record["units"] == sorted(record["units"])
        assert "dropped_units" not in sample  # no window known for the solver: nothing to drop
    assert len(list(iter_samples(find_runs([out])))) == 4  # the report's doc checks accept the samples
    results = json.loads(next(out.rglob("results_*.json")).read_text())
    entry = results["results"]["find_the_origin"]
    for name in ("prompt_tokens", "completion_tokens", "retrieved_units", "coverage", "full_coverage"):
        assert entry[f"{name},none"] == mean(s[name] for s in samples)
    assert "lurch_rag,none" not in entry and results["lurch_rag"]["k"] == 5 and results["lurch_rag"]["inner"] == \
        "lurch-solver"
    plain_out = tmp_path / "plain"
    plain = lurch_in_process("eval", "--model", "lurch-solver", "--tasks", "find_the_origin", "--limit", "4",
                             "--output_path", str(plain_out))
    assert plain.returncode == 0 and "coverage" not in plain.stdout
    plain_results = json.loads(next(plain_out.rglob("results_*.json")).read_text())
    rag_names = ("prompt_tokens", "completion_tokens", "retrieved_units", "coverage", "full_coverage", "lurch_rag")
    assert "lurch_rag" not in plain_results
    assert not [k for k in plain_results["results"]["find_the_origin"] if k.split(",")[0] in rag_names]
    assert not set(plain_results["higher_is_better"]["find_the_origin"]) & set(rag_names)


def test_the_account_travels_on_the_answer_only():
    """``process_results`` reads the account from the answer object lm-eval hands it: a plain answer (any other model,
    or the same doc in another run) gets none, whatever doc id it shares."""
    from lurch_tasks.harness.rag_units import RagAnswer
    from lurch_tasks.harness.tasks import process_results

    row = rows_of("find_the_origin")[0]
    answered = process_results(row, [RagAnswer("FINAL ANSWER: x", {"prompt_tokens": 7.0, "lurch_rag": {"units": []}})])
    assert answered["prompt_tokens"] == 7.0 and answered["lurch_rag"] == {"units": []}
    assert "prompt_tokens" not in process_results(row, ["FINAL ANSWER: x"])
    assert process_results(row, ["FINAL ANSWER: x"]) == process_results(row, [RagAnswer("FINAL ANSWER: x", {})])


def test_every_family_brings_its_own_units():
    from lurch_tasks.core.registry import RagUnits, all_families

    for family in all_families():
        assert isinstance(family.rag_units, RagUnits), family.name


def test_unknown_inner_model_fails_on_one_line():
    from in_process import lurch_in_process

    result = lurch_in_process("eval", "--model", "lurch-rag", "--model_args", "inner=nosuchmodel",
                              "--tasks", "find_the_origin", "--limit", "1")
    assert result.returncode != 0 and "inner='nosuchmodel' is not a model lm-eval registers" in result.stderr


@pytest.mark.slow
def test_dense_hybrid_rerank_and_multi_query_run_and_stay_exact():
    """The dense stages (offline MiniLM) on one short doc: k = all is still the generated prompt, and the exact-
    match equality holds for the dense retriever and for the full pipeline (hybrid, re-rank, template queries)."""
    row = rows_of("find_the_origin")[0]
    for settings in ({"retriever": "dense"}, {"retriever": "hybrid", "rerank": "dense", "multi_query": "template"}):
        score, accounted = solved(row, 10, **settings)
        assert score == accounted["full_coverage"]
        assert augment(row, Retriever(RagSettings(inner="x", k=None, **settings)))[0] == row["prompt"]


def test_the_inner_models_tokenizer_builds_the_prompts():
    """`--apply_chat_template` budgets prompts in the evaluated model's tokenizer: for lurch-rag, the inner one."""
    from lurch_tasks.harness.window import model_tokenizer, model_window

    metadata = {"inner": "hf", "inner_args": "pretrained=/m,gguf_file=x.gguf,dtype=float32", "k": 5}
    assert model_tokenizer(metadata) == "/m/x.gguf"
    assert model_tokenizer({"inner_args": '"pretrained=/m'}) == "/m"  # a naive comma split of the quoted form
    assert model_window(metadata) is None  # the retrieved prompt, not the generated one, meets the window


def test_memory_facts_ingests_each_case_once_and_accounts_what_it_recalls():
    """``memory=facts``: the built-in fact store stands where the retriever stood. A RECON case's 16 questions share
    one ingestion; the units sent are exactly what the store recalls for the question (checked against a store built
    here), withdrawn steps are not among them, and coverage is measured on those units."""
    from lurch_tasks.harness.rag import MemorySource, memory_factory, units_holding
    from lurch_tasks.memory import FactStore

    settings = parse_settings({"inner": "lurch-solver", "memory": "facts", "k": 20})
    source = MemorySource(settings, memory_factory(settings.memory))
    rows = rows_of("recon")
    assert len({row["context"] for row in rows}) == 1  # one case
    for row in rows:
        prompt, accounted = augment(row, source)
        units = units_of(row, settings.chunk_words)
        store = FactStore()
        store.ingest(units.texts)
        expected = units_holding(units, store.recall(" ".join(queries_for(row, settings)), 20))
        assert accounted["retrieved_units"] == len(expected) <= 20
        assert units.join(expected) in prompt and row["question"] in prompt
        gold = units.gold(row["evidence"])
        if gold:
            assert accounted["coverage"] == len(set(gold) & set(expected)) / len(gold)
        assert all(store.in_force(i) for i in expected)  # a unit is one fact: withdrawn steps are never sent
    assert any(not store.in_force(i) for i in range(len(units.texts)))  # the case does withdraw some steps
    assert len(source.cache) == 1  # ingested once for the whole case


def test_memory_argument_is_validated_on_one_line():
    with pytest.raises(ValueError) as error:
        parse_settings({"inner": "lurch-solver", "memory": "mem1"})
    assert "memory='mem1' is not allowed; allowed: none, facts" in str(error.value)


def test_units_holding_maps_recalled_texts_back_to_units_in_order():
    from lurch_tasks.harness.rag import units_holding

    units = units_of({"family": "find_the_origin", "context": "a\nb\na\nc", "evidence": []}, 200)
    assert units_holding(units, ["a", "c", "a", "zz"]) == [0, 2, 3]


# --- the wrapper's own requests (no lm-eval run): window check, Oracle retrieval, queries written by the model -------

def _requests(rows, max_gen_toks: int = 256):
    from lm_eval.api.instance import Instance

    return [Instance("generate_until", row, (row["prompt"], {"max_gen_toks": max_gen_toks}), 0, ("t", i, 1))
            for i, row in enumerate(rows)]


def test_the_window_check_drops_the_lowest_ranked_units_and_warns_once(capsys):
    """A fake 1600-token window for the solver (``inner_window``; baselines have none): every prompt + max_gen_toks
    fits, the units kept are the head of the ranking, ``dropped_units`` says how many went, coverage is measured on
    what was sent, and one warning line covers the whole batch."""
    from lurch_tasks.core.tokens import reference_counter
    from lurch_tasks.harness.rag import RagLM, rank_units
    from lurch_tasks.harness.rag_units import answer_account

    rows = rows_of("recon")[:4]
    model = RagLM(inner="lurch-solver", k=40, inner_window=1600)
    answers = model.generate_until(_requests(rows, max_gen_toks=200), disable_tqdm=True)
    lines = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert len(lines) == 1 and lines[0].startswith("lurch: warning: lurch-rag: 4 of 4 docs did not fit the inner "
                                                   "model's 1600-token window (lurch-rag inner_window)"), lines
    for row, answer in zip(rows, answers, strict=True):
        accounted = answer_account(answer)
        record = accounted["lurch_rag"]
        units = units_of(row, 200)
        settings = parse_settings({"inner": "lurch-solver", "k": 40})
        ranking = rank_units(list(units.texts), queries_for(row, settings), settings)[:40]
        kept = len(record["units"])
        assert 0 < kept < 40 and record["units"] == sorted(ranking[:kept])  # the best-ranked head survives
        assert accounted["dropped_units"] == record["dropped_units"] == 40 - kept
        assert accounted["prompt_tokens"] + 200 <= 1600
        one_more = render(row, units.join(ranking[:kept + 1]))
        assert reference_counter().count(one_more) + 200 > 1600  # nothing was dropped that would have fitted
        gold = units.gold(row["evidence"])
        if gold:
            assert accounted["coverage"] == len(set(gold) & set(record["units"])) / len(gold)
    unbounded = RagLM(inner="lurch-solver", k=3).generate_until(_requests(rows[:1]), disable_tqdm=True)
    assert "dropped_units" not in answer_account(unbounded[0])


def test_keep_fitting_finds_the_longest_fitting_head():
    from lurch_tasks.harness.rag import keep_fitting

    ranked = [5, 3, 9, 1, 0, 2]
    for limit in range(0, 8):
        assert keep_fitting(ranked, lambda head, limit=limit: len(head) <= limit) == ranked[:limit]


# RECON questions the reference solver cannot answer from the gold entries alone, by design: "which finding lost all
# of its support" and "which findings still had support" need the other findings' support lines (not gold), and
# "who is not accounted for" needs every other person's alibi (not gold). (category, format, score)
GOLD_EXCEPTIONS = [("cascade", "mcq_multi", 0.5), ("cascade", "mcq_single", 0.0), ("temporal", "mcq_single", 0.0)]


@pytest.mark.parametrize("name", sorted(SLICES))
def test_gold_retrieval_is_the_oracle(name):
    """``retriever=gold`` sends exactly the gold evidence units (k ignored): the solver scores 1.0 on every family
    slice, RECON's by-design MCQ exceptions pinned."""
    misses = []
    for row in rows_of(name):
        prompt, accounted = augment(row, Retriever(RagSettings(inner="lurch-solver", retriever="gold", k=1)))
        units = units_of(row, 200)
        assert accounted["retrieved_units"] == len(units.gold(row["evidence"]))
        assert units.join(units.gold(row["evidence"])) in prompt or not row["evidence"]
        score = get_family(row["family"]).score(row, solve_prompt(prompt))["score"]
        if score != 1.0:
            misses.append((row["difficulty"]["category"], row["answer_format"], score))
    assert sorted(misses) == (GOLD_EXCEPTIONS if name == "recon" else [])


def test_gold_records_that_k_is_ignored():
    from lurch_tasks.harness.rag import RagLM
    from lurch_tasks.harness.rag_units import answer_account

    row = rows_of("implicit_hop")[0]
    record = answer_account(RagLM(inner="lurch-solver", retriever="gold", k=2).generate_until(_requests([row]))[0])
    assert record["lurch_rag"]["k_ignored"] is True and record["lurch_rag"]["settings"]["retriever"] == "gold"
    assert record["lurch_rag"]["units"] == units_of(row, 200).gold(row["evidence"]) and record["full_coverage"] == 1.0


_WRITTEN = ("Queries:\n1. first query about Zotri\n\n- \"second query\"\n* first query about zotri\nQuery 3: third "
            + "x" * 300)


class QueryWriter(LM):
    """A stand-in inner model: writes fixed queries when asked for them (and remembers the ask), solves otherwise."""

    asks: list = []

    def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
        out = []
        for request in requests:
            prompt, gen_kwargs = request.args
            if "search queries" in prompt:
                QueryWriter.asks.append((prompt, gen_kwargs))
                out.append(_WRITTEN)
            else:
                out.append(solve_prompt(prompt))
        return out

    def apply_chat_template(self, chat_history, add_generation_prompt: bool = True) -> str:
        return "<chat>" + "".join(turn["content"] for turn in chat_history) + "</chat>"

    def loglikelihood(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError


def test_parse_queries_one_per_line_capped_and_deduplicated():
    from lurch_tasks.harness.rag import QUERY_MAX_CHARS, parse_queries

    queries = parse_queries(_WRITTEN, 5)
    assert queries[:2] == ["first query about Zotri", "second query"]
    assert len(queries) == 3 and queries[2].startswith("third ") and len(queries[2]) <= QUERY_MAX_CHARS
    assert parse_queries(_WRITTEN, 1) == ["first query about Zotri"] and parse_queries("\n \n", 3) == []


def test_multi_query_model_asks_the_inner_model_and_fuses_its_queries():
    from lm_eval.api.registry import register_model

    from lurch_tasks.harness.rag import RagLM, parse_queries, rank_units
    from lurch_tasks.harness.rag_units import answer_account

    register_model("test-query-writer")(QueryWriter)
    QueryWriter.asks = []
    rows = rows_of("implicit_hop")[:2]
    model = RagLM(inner="test-query-writer", k=5, multi_query="model", mq_n=2)
    answers = model.generate_until(_requests(rows))
    assert len(QueryWriter.asks) == 2 and QueryWriter.asks[0][1]["do_sample"] is False
    assert "Write 2 different short search queries" in QueryWriter.asks[0][0]
    for row, answer in zip(rows, answers, strict=True):
        record = answer_account(answer)["lurch_rag"]
        assert record["queries"] == parse_queries(_WRITTEN, 2)
        queries = queries_for(row, model.settings, record["queries"])
        assert queries == [queries_for(row, RagSettings(inner="x"))[0], *record["queries"]]
        units = units_of(row, 200)
        assert record["units"] == sorted(rank_units(list(units.texts), queries, model.settings)[:5])


@pytest.mark.parametrize("inner", ["lurch-solver", "lurch-random", "lurch-simulated"])
def test_a_baseline_cannot_write_queries(inner):
    with pytest.raises(ValueError) as error:
        parse_settings({"inner": inner, "multi_query": "model"})
    assert str(error.value) == (f"model_args: multi_query='model' is not allowed with inner='{inner}' (a baseline "
                                "writes no queries); allowed: multi_query=template|none")


def test_written_queries_use_the_chat_template_when_the_run_applies_one():
    from lm_eval.api.registry import register_model

    from lurch_tasks.harness.rag import RagLM

    register_model("test-query-writer")(QueryWriter)
    QueryWriter.asks = []
    model = RagLM(inner="test-query-writer", k=5, multi_query="model")
    model.apply_chat_template([{"role": "user", "content": "x"}])  # what lm-eval calls for --apply_chat_template
    model.generate_until(_requests(rows_of("implicit_hop")[:1]), disable_tqdm=True)
    assert QueryWriter.asks[0][0].startswith("<chat>Write 3 different short search queries")


# --- memory systems inside lurch-rag: memory_<name>=<value> settings, Mem0's two coverage paths ------------------

MEMORY_ENTRIES = (
    "[Day 1, 09:00] [LOG] [Officer Mara Quill] Anna Berg was seen at Harbor Bank on Day 1 from 10:00 to 11:00.",
    "[Day 1, 12:00] [LOG] [Officer Mara Quill] Tomas Reed was seen at Lake Market on Day 1 from 10:30 to 12:00.",
    "[Day 2, 15:00] [MEMO] [Clerk Pia Sund] The vault code is kept by Jonas Kell.",
)


def memory_doc(question: str) -> dict:
    """A hand-made doc whose units are its lines (the line-family unit), the first line gold."""
    return {"family": "find_the_origin", "context": "\n".join(MEMORY_ENTRIES), "question": question,
            "evidence": [{"start": 0, "end": 10}]}


@pytest.mark.parametrize(("args", "message"), [
    ({"memory_infer": "false"}, "model_args: memory_infer needs a memory system; allowed: memory=facts or memory=mem0"),
    ({"memory": "facts", "memory_top_k": "3"},
     "model_args: memory_top_k is not a setting of memory=facts; allowed: memory_include_superseded"),
])
def test_memory_settings_errors_are_one_line(args, message):
    with pytest.raises(ValueError) as error:
        parse_settings({"inner": "lurch-solver", **args})
    assert message in str(error.value) and "\n" not in str(error.value)


def test_memory_settings_reach_make_memory_and_fail_before_the_inner_model_loads():
    from lurch_tasks.harness.metadata import chosen_model_arguments
    from lurch_tasks.harness.rag import RagLM, memory_factory

    settings = parse_settings({"inner": "lurch-solver", "memory": "facts", "memory_include_superseded": "true"})
    assert settings.memory_settings == (("include_superseded", "true"),)
    assert memory_factory(settings.memory, settings.memory_settings)().describe()["include_superseded"] is True
    with pytest.raises(ValueError, match="memory_top_k is not a setting of memory=mem0; allowed: memory_base_url"):
        RagLM.create_from_arg_string("inner=no-such-model,memory=mem0,memory_top_k=3")  # the memory fails first
    assert {"memory_infer", "memory_include_superseded"} <= chosen_model_arguments("lurch-rag")  # metadata check


def test_memory_mem0_without_the_library_names_the_extra(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mem0" else real(name, *a))
    with pytest.raises(ValueError) as error:
        parse_settings({"inner": "lurch-solver", "memory": "mem0", "memory_infer": "false"})
    assert str(error.value) == ("model_args: memory=mem0 needs the mem0ai library: "
                                "pip install 'lurch-tasks[memory]'")


class RewritingMemory:
    """A memory that writes its own texts (as Mem0 with infer=true does): coverage comes from provenance."""

    verbatim = False

    def ingest(self, units):
        self.units = list(units)

    def recall_with_origins(self, question, k):
        return [(0, "Anna Berg: Harbor Bank, Day 1."), (-1, "an orphan memory")][:k]

    def recall(self, question, k):
        return [text for _, text in self.recall_with_origins(question, k)]

    def describe(self):
        return {"memory": "rewriting"}


def test_a_rewriting_memory_sends_its_texts_and_is_covered_by_provenance():
    from lurch_tasks.harness.rag import MemorySource

    source = MemorySource(parse_settings({"inner": "lurch-solver", "memory": "facts", "k": 2}), RewritingMemory)
    doc = memory_doc("Where was Anna Berg seen?")
    units = units_of(doc, 200)
    context, chosen = source.context_for(doc, units)
    assert context == "Anna Berg: Harbor Bank, Day 1.\nan orphan memory" and chosen == [0]
    described = source.describe()
    assert described["contexts"][0]["units"] == 3 and described["contexts"][0]["memory"] == "rewriting"
    assert set(source.account(units)) == {"ingest_cpu_seconds", "ingest_wall_seconds"}


def test_lurch_eval_takes_memory_settings_and_records_the_ingest_cost(tmp_path):
    from in_process import lurch_in_process

    out = tmp_path / "mem"
    result = lurch_in_process("eval", "--model", "lurch-rag", "--model_args",
                              "inner=lurch-solver,memory=facts,memory_include_superseded=true,k=5",
                              "--tasks", "find_the_origin", "--limit", "2", "--output_path", str(out), "--log_samples")
    assert result.returncode == 0, result.stderr[-3000:]
    samples = [json.loads(line) for path in out.rglob("samples_*.jsonl") for line in path.read_text().splitlines()]
    assert len(samples) == 2 and all(s["ingest_cpu_seconds"] >= 0 and s["retrieved_units"] <= 5 for s in samples)


MEM0 = importlib.util.find_spec("mem0") is not None


@pytest.mark.skipif(not MEM0, reason="mem0ai is not installed (pip install 'lurch-tasks[memory]')")
def test_memory_mem0_verbatim_maps_by_identity():
    from lurch_tasks.harness.rag import MemorySource, memory_factory

    settings = parse_settings({"inner": "lurch-solver", "memory": "mem0", "memory_infer": "false", "k": 1})
    source = MemorySource(settings, memory_factory(settings.memory, settings.memory_settings))
    doc = memory_doc("Where was Anna Berg seen?")
    prompt_context, chosen = source.context_for(doc, units_of(doc, 200))
    assert (prompt_context, chosen) == (MEMORY_ENTRIES[0], [0])
    context = source.describe()["contexts"][0]
    assert context["ingest"]["memories"] == 3 and context["infer"] is False and context["cpu_seconds"] >= 0


# --- RECON's header-anchored recall (the paper's retrieval measure), and what a rewriting memory sends ------------

def test_recon_entry_header_is_the_composite_anchor():
    from lurch_tasks.families.recon.prompt import entry_header

    line = "[Day 2, 14:56] [CELL TOWER LOG] [Analyst Weivuthast Dousaem] Records show Peiciast at Fimia Depot."
    assert entry_header(line) == "[Day 2, 14:56] [CELL TOWER LOG] [Analyst Weivuthast Dousaem]"
    assert entry_header("no header here") is None
    assert get_family("find_the_origin").rag_units.anchor is None  # only RECON names its units by a header


def test_header_coverage_counts_gold_headers_in_what_was_sent():
    """Verbatim units carry their headers, so header recall is never below exact recall; it is above only where a
    gold entry's header also heads a sent non-gold entry (the paper's 93% anchor uniqueness). Checked by hand: the
    share of gold headers found in the sent context."""
    from lurch_tasks.families.recon.prompt import entry_header
    from lurch_tasks.harness.rag import RagLM
    from lurch_tasks.harness.rag_units import answer_account

    rows = [row for row in rows_of("recon") if row["evidence"]][:6]
    answers = RagLM(inner="lurch-solver", k=5).generate_until(_requests(rows), disable_tqdm=True)
    for row, answer in zip(rows, answers, strict=True):
        accounted = answer_account(answer)
        units = units_of(row, 200)
        sent = units.join(accounted["lurch_rag"]["units"])
        headers = [entry_header(units.texts[i]) for i in units.gold(row["evidence"])]
        want = sum(h in sent for h in headers) / len(headers)
        assert accounted["header_coverage"] == want >= accounted["coverage"]
        assert accounted["header_full_coverage"] == float(want == 1.0)
    [plain] = RagLM(inner="lurch-solver", k=5).generate_until(_requests(rows_of("find_the_origin")[:1]))
    assert "header_coverage" not in answer_account(plain)


class HeaderlessMemory:
    """A memory that rewrites every entry into a headerless fact (as LLM memories do) and keeps provenance."""

    verbatim = False

    def ingest(self, units):
        self.units = list(units)

    def recall_with_origins(self, question, k):
        return [(i, "fact: " + unit.split("] ", 3)[-1]) for i, unit in enumerate(self.units)][:k]

    def recall(self, question, k):
        return [text for _, text in self.recall_with_origins(question, k)]

    def describe(self):
        return {"memory": "headerless"}


def test_a_rewriting_memory_sends_its_own_texts_and_loses_the_header_anchors():
    from lurch_tasks.harness.rag import MemorySource, RagLM
    from lurch_tasks.harness.rag_units import answer_account

    row = next(row for row in rows_of("recon") if row["evidence"])
    model = RagLM(inner="lurch-solver", memory="facts", k=len(units_of(row, 200).texts))
    model.source = MemorySource(model.settings, HeaderlessMemory)
    model.inner = _Echo()
    [answer] = model.generate_until(_requests([row]), disable_tqdm=True)
    accounted = answer_account(answer)
    from lurch_tasks.families.recon.prompt import entry_header

    units = units_of(row, 200)
    assert "fact: " in str(answer) and not any(entry_header(unit) in str(answer) for unit in units.texts)
    assert accounted["coverage"] == 1.0  # provenance: every unit's add stored a recalled memory
    assert accounted["header_coverage"] == 0.0 and accounted["header_full_coverage"] == 0.0


class _Echo(LM):
    """An inner model that answers with the prompt it was sent."""

    def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
        return [request.args[0] for request in requests]

    def loglikelihood(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError
