"""A real instruct model end to end: SmolLM2-135M-Instruct (GGUF, offline) through lm-eval's `hf` model.

Two 1k-token docs of each family (ImplicitHop: its count join) run with the chat template; the prompts must
be budgeted in the model's own tokenizer (template included) and fit its window, and every saved output must
re-score identically.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lurch_evals_one_process import lurch_evals
from offline_tokenizers import smollm2_gguf

from lurch_tasks.core.budget import prompt_meter
from lurch_tasks.core.registry import get_family
from lurch_tasks.core.tokens import within_budget_tolerance
from lurch_tasks.harness.tasks import process_results
from lurch_tasks.scoring.reasoning import strip_doc_output

pytestmark = pytest.mark.slow

TASKS = ("find_the_origin", "memory_drift_edge", "implicit_hop_count")
TARGET = 1024
LIMIT = 2
MAX_GEN_TOKS = 48
WINDOW = 8192  # SmolLM2's context length, read from the GGUF
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "HF_HUB_DISABLE_TELEMETRY": "1", "TOKENIZERS_PARALLELISM": "false",
           # one torch thread: beside the other test worker, two threads on two cores thrash (measured: 76 s
           # alone with two threads, 630 s next to the other worker; 87 s alone with one)
           "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


THINK_END = "</think>"
# The token's path (lm-eval strips, our scorers strip with the stamped token) is shared by every family: one
# task whose answers are parsed (ImplicitHop's count join) keeps the second model run short.
THINK_TASKS = ("implicit_hop_count",)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The plain run and the same run with lm-eval's ``think_end_token`` model argument (issue 28; SmolLM2 does
    not think), both through `lurch eval` in ONE process that reads the model once (lurch_evals_one_process):
    a second process spent most of its time importing lm-eval and dequantizing the GGUF again."""
    outs = [tmp_path_factory.mktemp("smollm2"), tmp_path_factory.mktemp("smollm2-think")]
    argvs = [_argv(outs[0], ""), _argv(outs[1], f",think_end_token={THINK_END}", THINK_TASKS)]
    return list(zip(outs, lurch_evals(argvs, env=OFFLINE, timeout=1200), strict=True))


@pytest.fixture(scope="module")
def run(runs):
    return runs[0]


@pytest.fixture(scope="module")
def run_think(runs):
    return runs[1]


def _argv(out: Path, extra_model_args: str, tasks: tuple[str, ...] = TASKS) -> list[str]:
    """`lurch eval`'s arguments (after ``eval``)."""
    gguf = smollm2_gguf()
    return [
        "--model", "hf",
        "--model_args", f"pretrained={gguf.parent},gguf_file={gguf.name},dtype=float32{extra_model_args}",
        "--device", "cpu",
        "--tasks", ",".join(tasks),
        "--limit", str(LIMIT),
        "--batch_size", "1",
        "--apply_chat_template",
        "--gen_kwargs", f"max_gen_toks={MAX_GEN_TOKS}",
        "--metadata", json.dumps({"max_seq_lengths": [TARGET], "num_samples": 2}),
        "--output_path", str(out),
        "--log_samples",
    ]


def _samples(out: Path, task: str) -> list[dict]:
    paths = sorted(out.rglob(f"samples_{task}_*.jsonl"))
    assert len(paths) == 1, paths
    return [json.loads(line) for line in paths[0].read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("task", TASKS)
def test_prompts_are_budgeted_in_the_model_tokenizer_and_fit(run, task):
    out, _ = run
    gguf = smollm2_gguf()
    meter = prompt_meter(str(gguf), chat_template=True)
    samples = _samples(out, task)
    assert len(samples) == LIMIT
    for sample in samples:
        doc = sample["doc"]
        params = json.loads(doc["params"])
        assert params["tokenizer"] == str(gguf) and params["chat_template"] is True
        sent = sample["arguments"]["gen_args_0"]["arg_0"]
        assert sent == meter.model_text(doc["prompt"]), "lm-eval sent something other than our templated prompt"
        tokens = meter.counter.count(sent)
        assert tokens == doc["difficulty"]["prompt_tokens"]
        assert within_budget_tolerance(tokens, TARGET)
        assert tokens + MAX_GEN_TOKS <= WINDOW


@pytest.mark.parametrize("task", TASKS)
def test_saved_outputs_rescore_identically(run, task):
    out, _ = run
    for sample in _samples(out, task):
        output = sample["filtered_resps"][0]
        assert isinstance(output, str)
        rescored = process_results(sample["doc"], [output])
        for name, value in rescored.items():
            assert name in sample, f"{name} missing from the logged sample"
            assert sample[name] == value, (name, sample[name], value)
        family = get_family(sample["doc"]["family"])
        assert family.score(sample["doc"], output)["score"] == sample["score"]


def test_results_hold_the_headline_metrics(run):
    out, proc = run
    results = json.loads(sorted(out.rglob("results_*.json"))[0].read_text(encoding="utf-8"))
    for task in TASKS:
        for metric in ("score,none", "memory_drift,none", "f1,none"):
            assert 0.0 <= results["results"][task][metric] <= 1.0
    assert "over-weighted" not in proc.stderr  # every metric counts the same docs (per-bin None, bin_mean)


def test_think_end_token_run_works_and_scores_the_same(run, run_think):
    """lm-eval strips up to the token (absent here) and our scorers strip with the token stamped on every doc: a
    model that does not think gives the same outputs and the same per-doc metrics as without it."""
    for task in THINK_TASKS:
        plain, think = _samples(run[0], task), _samples(run_think[0], task)
        assert len(plain) == len(think) == LIMIT
        for a, b in zip(plain, think, strict=True):
            assert b["doc"]["think_end_token"] == THINK_END and "think_end_token" not in a["doc"]
            assert a["filtered_resps"] == b["filtered_resps"]
            for name in ("score", "memory_drift", "f1", "headline", "truncated", "unparsed"):
                assert a[name] == b[name], (task, name)
            family = get_family(b["doc"]["family"])
            rescored = family.score(b["doc"], b["filtered_resps"][0])
            assert rescored["score"] == b["score"]
            assert rescored["truncated"] == b["truncated"]
            # truncated: nothing came out, or the output filled its budget (gen_budget) without a readable answer
            assert rescored["truncated"] == 0.0 or not b["filtered_resps"][0].strip() or (
                rescored["unparsed"] == 1.0 and strip_doc_output(b["doc"], b["filtered_resps"][0]).at_budget)
