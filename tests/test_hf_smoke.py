"""End-to-end smoke test: `lurch eval --model hf` on a tiny, randomly initialised, offline GPT-2.

The model is garbage, so only the plumbing is checked: lm-eval runs our task with a real HF model,
the docs are budgeted with the model's own tokenizer, the prompts sent are ours and fit the model.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hf_tiny import N_POSITIONS, build_tiny_gpt2

from lurch_tasks.core.tokens import within_budget_tolerance

pytestmark = pytest.mark.slow

TASK = "find_the_origin"
TARGETS = (768, 1024)
LIMIT = 4
MAX_GEN_TOKS = 8
HEADLINE = ("score,none", "memory_drift,none", "f1,none")
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "HF_HUB_DISABLE_TELEMETRY": "1"}


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    return build_tiny_gpt2(tmp_path_factory.mktemp("tiny_gpt2"))


@pytest.fixture(scope="module")
def tiny_tokenizer(tiny_model):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(tiny_model))


def _lurch_executable() -> str:
    path = Path(sys.executable).parent / ("lurch.exe" if os.name == "nt" else "lurch")
    if not path.exists():
        pytest.fail(f"no `lurch` next to {sys.executable}; install the package (pip install -e .)")
    return str(path)


@pytest.fixture(scope="module")
def eval_run(tiny_model, tmp_path_factory):
    out = tmp_path_factory.mktemp("hf_eval")
    metadata = {"max_seq_lengths": list(TARGETS), "num_samples": 1, "bins": True}  # per-length rows too
    argv = [
        _lurch_executable(), "eval",
        "--model", "hf",
        "--model_args", f"pretrained={tiny_model},tokenizer={tiny_model},dtype=float32",
        "--device", "cpu",
        "--tasks", TASK,
        "--limit", str(LIMIT),
        "--batch_size", "1",
        "--gen_kwargs", f"max_gen_toks={MAX_GEN_TOKS}",
        "--metadata", json.dumps(metadata),
        "--output_path", str(out),
        "--log_samples",
    ]
    env = {**os.environ, **OFFLINE, "TOKENIZERS_PARALLELISM": "false"}
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=240)
    return proc, out


def _require_success(eval_run):
    proc, out = eval_run
    assert proc.returncode == 0, (
        f"lurch eval exited {proc.returncode}\n--- stdout (tail) ---\n{proc.stdout[-3000:]}"
        f"\n--- stderr (tail) ---\n{proc.stderr[-5000:]}"
    )
    return out


def _one(out: Path, pattern: str) -> Path:
    found = sorted(out.rglob(pattern))
    assert len(found) == 1, f"expected one {pattern} under {out}, found {[str(p) for p in found]}"
    return found[0]


@pytest.fixture(scope="module")
def results(eval_run) -> dict:
    out = _require_success(eval_run)
    return json.loads(_one(out, "results_*.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def samples(eval_run) -> list[dict]:
    out = _require_success(eval_run)
    path = _one(out, f"samples_{TASK}_*.jsonl")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _prompt_and_kwargs(sample: dict) -> tuple[str, dict]:
    args = sample["arguments"]
    assert list(args) == ["gen_args_0"], f"one generate_until request per doc expected, got {list(args)}"
    request = args["gen_args_0"]
    return request["arg_0"], request["arg_1"]


def test_exit_code_zero(eval_run):
    _require_success(eval_run)


def test_results_report_headline_metrics(results, tiny_model):
    task_results = results["results"][TASK]
    for metric in HEADLINE:
        assert metric in task_results, f"{metric} missing from {sorted(task_results)}"
        value = task_results[metric]
        assert isinstance(value, (int, float)) and 0.0 <= value <= 1.0, f"{metric} = {value!r}"
    for target in TARGETS:
        assert f"score@{target},none" in task_results
    assert results["n-samples"][TASK]["effective"] == LIMIT
    assert results["config"]["model_args"]["pretrained"] == str(tiny_model)
    assert int(results["max_length"]) == N_POSITIONS


def test_samples_are_our_prompts(samples, tiny_model):
    from lurch_tasks.core.generation import generate_row, resolve_task

    assert sorted(s["doc_id"] for s in samples) == list(range(LIMIT))
    task = resolve_task(TASK, {"context_tokens": list(TARGETS), "num_samples": 1, "tokenizer": str(tiny_model)})
    for sample in samples:
        doc = sample["doc"]
        prompt, gen_kwargs = _prompt_and_kwargs(sample)
        assert doc["task"] == TASK and doc["split"] == "test"
        assert prompt == doc["prompt"], f"doc {doc['index']}: the request is not the doc's prompt"
        assert prompt == generate_row(task, doc["index"])["prompt"], (
            f"doc {doc['index']}: the prompt differs from a fresh generate_row with the same knobs"
        )
        assert sample["target"] == doc["answer_text"]
        assert gen_kwargs["max_gen_toks"] == MAX_GEN_TOKS
        assert gen_kwargs["do_sample"] is False


def test_budget_uses_the_model_tokenizer(samples, tiny_model, tiny_tokenizer):
    seen_targets = set()
    for sample in samples:
        doc = sample["doc"]
        params = json.loads(doc["params"])
        assert params["tokenizer"] == str(tiny_model), (
            f"doc {doc['index']}: budget measured with {params['tokenizer']!r}, not the model tokenizer"
        )
        assert params["config"]["tokenizer"] == str(tiny_model)
        difficulty = doc["difficulty"]
        target = difficulty["target_tokens"]
        seen_targets.add(target)
        measured = len(tiny_tokenizer(doc["prompt"], add_special_tokens=False)["input_ids"])
        assert measured == difficulty["prompt_tokens"], (
            f"doc {doc['index']}: recorded {difficulty['prompt_tokens']} prompt tokens, "
            f"tiny tokenizer counts {measured}"
        )
        assert within_budget_tolerance(measured, target), f"doc {doc['index']}: {measured} vs target {target}"
    assert seen_targets == set(TARGETS)


def test_prompt_plus_generation_fits_the_model(samples, tiny_model, tiny_tokenizer):
    from transformers import AutoConfig

    n_positions = AutoConfig.from_pretrained(str(tiny_model)).n_positions
    assert n_positions == N_POSITIONS
    for sample in samples:
        prompt, gen_kwargs = _prompt_and_kwargs(sample)
        prompt_tokens = len(tiny_tokenizer(prompt)["input_ids"])
        assert prompt_tokens == sample["doc"]["difficulty"]["prompt_tokens"]
        assert prompt_tokens + gen_kwargs["max_gen_toks"] <= n_positions, (
            f"doc {sample['doc_id']}: {prompt_tokens} prompt tokens + {gen_kwargs['max_gen_toks']} > {n_positions}"
        )
        assert isinstance(sample["resps"][0][0], str)
