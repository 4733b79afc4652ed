"""Real-model support: tokenizer specs (folder, GGUF, hub id), prompt budgets in any tokenizer, the
context-window guard, and how `lurch eval` passes the run's settings and reports library errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from in_process import lurch_in_process
from offline_tokenizers import smollm2_gguf, tokenizer_specs

from lurch_tasks.core.budget import prompt_meter
from lurch_tasks.core.config import ConfigError
from lurch_tasks.core.context import measure_evidence
from lurch_tasks.core.generation import generate_row, resolve_task
from lurch_tasks.core.tokens import get_token_counter, load_hf_tokenizer, within_budget_tolerance
from lurch_tasks.harness.errors import library_of
from lurch_tasks.harness.lm_eval_cli import lm_eval_argv
from lurch_tasks.harness.tasks import build_docs
from lurch_tasks.harness.window import ModelWindow, model_tokenizer, model_window, plan_window

LURCH = str(Path(sys.executable).parent / "lurch")


@pytest.fixture(scope="module")
def tokenizers(tmp_path_factory) -> dict[str, str]:
    """Four real tokenizers of different kinds, by name -> tokenizer spec."""
    return tokenizer_specs(tmp_path_factory.mktemp("tokenizers"))


# --- tokenizer specs ------------------------------------------------------------------------------------


def test_a_gguf_file_is_a_tokenizer_spec():
    counter = get_token_counter(str(smollm2_gguf()))
    assert counter.count("hello world") == 2
    assert counter.end_of_turn == "<|im_end|>"
    templated = counter.chat_prompt("Hi")
    assert templated.startswith("<|im_start|>") and templated.endswith("<|im_start|>assistant\n")


@pytest.mark.parametrize("spec, message", [
    ("/nonexistent/model.gguf", "is not a file; allowed: the path of a GGUF model file"),
    ("/nonexistent/folder", "is neither a tokenizer folder nor a GGUF file"),
    ("someone/not-cached-model", "cannot be loaded from the local Hugging Face cache (offline) or the Hub"),
])
def test_tokenizers_that_cannot_load_offline_fail_in_one_clear_line(spec, message):
    with pytest.raises(ValueError, match="^tokenizer: ") as caught:
        load_hf_tokenizer(spec)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_folder_without_tokenizer_files_is_named(tmp_path):
    with pytest.raises(ValueError, match="holds no tokenizer files"):
        load_hf_tokenizer(str(tmp_path))


def test_chat_template_needs_a_tokenizer_that_has_one():
    with pytest.raises(ValueError, match="chat_template: cl100k_base has no chat template"):
        prompt_meter("cl100k_base", chat_template=True)


@pytest.mark.slow
def test_cli_generate_with_the_gguf_tokenizer(tmp_path):
    gguf = smollm2_gguf()
    for config in ("find_the_origin", "memory_drift_edge"):
        # in this process: the CLI reads the GGUF tokenizer once (cached), not once per process
        proc = lurch_in_process("generate", "--config", config, "--n", "2", "--set", f"tokenizer={gguf}")
        assert proc.returncode == 0, proc.stderr
        rows = [json.loads(line) for line in proc.stdout.splitlines()]
        counter = get_token_counter(str(gguf))
        for row in rows:
            assert row["difficulty"]["prompt_tokens"] == counter.count(row["prompt"])
            assert within_budget_tolerance(row["difficulty"]["prompt_tokens"], row["difficulty"]["target_tokens"])
    bad = subprocess.run([LURCH, "generate", "--config", "find_the_origin", "--n", "1", "--set",
                          "tokenizer=/nonexistent/x.gguf"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "tokenizer:" in bad.stderr


# --- budgets in any tokenizer: every family, prompt within tolerance and never above ---------------------


FAMILY_CASES = {
    # (task, overrides, smallest and largest target): the two tokenizers trained here on a small vocabulary
    # count about twice as many tokens as cl100k, so graph targets leave room for a few of their profiles
    "find_the_origin": ("find_the_origin", {"num_samples": 4}, 900, 5000),
    "graph_edge": ("memory_drift_edge", {"connections": [1, 2], "num_samples": 2}, 3500, 7000),
    "graph_clique": ("memory_drift_clique", {"connections": [1], "num_samples": 2}, 3000, 7000),
    # ImplicitHop: three same-signature competitors per hop (0.2.0) put a depth-8 question's smallest prompt near
    # 1.6k of these tokens (a target below it is refused with one line)
    "implicit_hop": ("implicit_hop_grid", {"num_samples": 1, "depths": [2, 8], "facts": [8]}, 2000, 6000),
    "implicit_hop_compare": ("implicit_hop_compare", {"num_samples": 1, "depths": [3, 5]}, 2000, 6000),
}


@pytest.mark.parametrize("tokenizer_name", ["cl100k", "byte_bpe", "sentencepiece", "smollm2"])
def test_token_starts_agree_with_the_tokenizer_itself(tokenizers, tokenizer_name):
    """One encoding serves both counts and offsets: it must be the tokenizer's own (what lm-eval counts)."""
    counter = get_token_counter(tokenizers[tokenizer_name])
    texts = ["hello world", "  leading spaces", "naïve café — 東京 🚀", '"tube" is linked to "vivid"\n"a" is',
             "Ann Lee: Lee works as a clerk.\n\nBo Kim: Kim flew on EK 3621 on 9 May 2024.", ""]
    for text in texts:
        starts = counter.token_starts(text)
        assert len(starts) == counter.count(text), text
        assert list(starts) == sorted(starts) and all(0 <= s <= max(len(text) - 1, 0) for s in starts), text
    assert counter.count_many(texts) == [counter.count(text) for text in texts]
    if tokenizer_name != "cl100k":
        for text in texts:
            assert counter.count(text) == len(counter._tok(text, add_special_tokens=False)["input_ids"]), text
            # Byte-level tokenizers give byte starts, the others their own offsets: the two agree up to a
            # leading space some tokenizers trim from a token's offsets.
            wrapped = counter._tok(text, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
            for start, (offset, _) in zip(counter.token_starts(text).tolist(), wrapped, strict=True):
                assert start <= offset and not text[start:offset].strip(), (text, start, offset)
        assert (counter._byte_lengths is not None) == (tokenizer_name in ("byte_bpe", "smollm2"))


@pytest.mark.parametrize("tokenizer_name", ["byte_bpe", "sentencepiece", "smollm2"])
def test_a_prompt_encoding_counts_the_tokens_of_a_span(tokenizers, tokenizer_name):
    """Lazy encodings (the encoder's own, or starts from token byte lengths) count spans as the starts do."""
    meter = prompt_meter(tokenizers[tokenizer_name], tokenizer_name == "smollm2")
    prompt = 'Intro line.\n\n"tube" is linked to "vivid"\n"naïve" is linked to "東京"\n\nWhat is it?'
    encoding = meter.encode(prompt)
    text = meter.model_text(prompt)
    shift = text.index(prompt)
    starts = meter.counter.token_starts(text) - shift
    assert encoding.tokens == len(starts) == meter.counter.count(text)
    for start, end in [(0, len(prompt)), (13, 58), (14, 14), (40, 41), (0, 1)]:
        assert encoding.tokens_between(start, end) == int(((starts >= start) & (starts < end)).sum()), (start, end)


@pytest.mark.parametrize("tokenizer_name", ["byte_bpe", "sentencepiece", "smollm2"])
@pytest.mark.parametrize("task_name, overrides", [
    ("find_the_origin", {"context_tokens": [1500, 3000], "num_samples": 2}),
    ("find_the_origin_random", {"context_tokens": [2000], "num_samples": 2}),
    ("memory_drift_edge", {"context_tokens": [5000], "connections": [1, 2], "num_samples": 2}),
    ("memory_drift_clique", {"context_tokens": [5000], "connections": [1], "num_samples": 2,
                             "decoys": "near_miss"}),
    ("implicit_hop_dispersion", {"context_tokens": [2048], "num_samples": 1}),
    ("implicit_hop_count", {"context_tokens": [2048], "num_samples": 1, "depths": [2, 5]}),
    ("implicit_hop_compare", {"context_tokens": [2048], "num_samples": 1, "depths": [3, 6], "filler": 0.3}),
])
def test_evidence_in_reference_tokens_matches_a_reference_pass(tokenizers, tokenizer_name, task_name, overrides):
    """A prompt the model reads in another tokenizer gets its reference-token evidence without a second pass
    (per-profile starts, the line cost table): it must be what a reference pass over the prompt says."""
    spec = tokenizers[tokenizer_name]
    task = resolve_task(task_name, {**overrides, "tokenizer": spec, "chat_template": tokenizer_name == "smollm2"})
    reference = get_token_counter("cl100k_base")
    for index in range(task.config.size()):
        row = generate_row(task, index)
        start = row["prompt"].index(row["context"])
        spans = [(span["start"], span["end"]) for span in row["evidence"]]
        expected = measure_evidence(reference.token_starts(row["prompt"]), start, len(row["context"]), spans)
        assert row["evidence"] == list(expected.spans), index
        assert row["difficulty"]["evidence_scope"] == expected.scope
        assert row["difficulty"]["evidence_dispersion"] == expected.dispersion


@pytest.mark.slow
@pytest.mark.parametrize("tokenizer_name", ["cl100k", "byte_bpe", "sentencepiece", "smollm2"])
@pytest.mark.parametrize("family_case", sorted(FAMILY_CASES))
def test_property_prompt_budget_in_any_tokenizer(tokenizers, tokenizer_name, family_case):
    task_name, overrides, low, high = FAMILY_CASES[family_case]
    spec = tokenizers[tokenizer_name]

    @settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(target=st.integers(low, high), index=st.integers(0, 7), chat=st.booleans())
    def check(target, index, chat):
        chat = chat and tokenizer_name == "smollm2"  # the only one of the four with a chat template
        task = resolve_task(task_name, {**overrides, "context_tokens": [target], "tokenizer": spec,
                                        "chat_template": chat})
        row = generate_row(task, index % task.config.size())
        meter = prompt_meter(spec, chat)
        tokens = meter.count(row["prompt"])
        assert tokens == row["difficulty"]["prompt_tokens"]
        assert within_budget_tolerance(tokens, target), (tokens, target)
        assert row["difficulty"]["context_tokens"] == context_tokens(meter, row)

    check()


def context_tokens(meter, row: dict) -> int:
    """The definition: tokens of the prompt, as the model reads it, that start inside the context."""
    text = meter.model_text(row["prompt"])
    start = text.index(row["prompt"]) + row["prompt"].index(row["context"])
    starts = meter.counter.token_starts(text)
    return int(((starts >= start) & (starts < start + len(row["context"]))).sum())


# --- the context-window guard ---------------------------------------------------------------------------


def test_model_tokenizer_and_window_come_from_the_model_args():
    gguf = smollm2_gguf()
    metadata = {"pretrained": str(gguf.parent), "gguf_file": gguf.name}
    assert model_tokenizer(metadata) == str(gguf)
    assert model_window(metadata) == ModelWindow(8192, f"the config of {gguf.parent.name}")
    assert model_window({**metadata, "max_length": "4096"}).tokens == 4096
    assert model_window({"max_model_len": 2048}).source == "--metadata max_model_len"
    assert model_window({"model": "smollm2"}) is None
    with pytest.raises(ConfigError, match="max_model_len: 0 is not allowed"):
        model_window({"max_model_len": 0})


def test_plan_window_skips_lengths_that_cannot_fit():
    plan = plan_window((1024, 2048, 4096, 8192), ModelWindow(8192, "test"), 256)
    assert plan.skipped == (8192,) and plan.prompt_limit == 7936
    assert "skipping context_tokens 8192" in plan.describe("find_the_origin")
    with pytest.raises(ConfigError, match="max_gen_toks"):
        plan_window((1024,), ModelWindow(1024, "test"), 1024)


@pytest.mark.slow
@pytest.mark.parametrize("task_name, lengths, kept", [
    ("find_the_origin", [4096, 8192], {4096}),
    ("memory_drift_edge", [4096, 8192, 16384], {4096}),
])
def test_lengths_beyond_an_8k_model_are_skipped_with_one_warning(capfd, task_name, lengths, kept):
    gguf = smollm2_gguf()
    metadata = {"pretrained": str(gguf.parent), "gguf_file": gguf.name, "max_seq_lengths": lengths,
                "num_samples": 1}
    docs = build_docs(task_name, **metadata)["test"]
    assert {doc["difficulty"]["target_tokens"] for doc in docs} == kept
    counter = get_token_counter(str(gguf))
    for doc in docs:
        assert json.loads(doc["params"])["tokenizer"] == str(gguf)  # budgeted in the model's own tokenizer
        assert counter.count(doc["prompt"]) + 256 <= 8192
    warnings = [line for line in capfd.readouterr().err.splitlines() if line.startswith("lurch: warning:")]
    assert len(warnings) == 1, warnings
    skipped = ", ".join(str(n) for n in lengths if n not in kept)
    assert f"{task_name}: skipping context_tokens {skipped}" in warnings[0] and "8192-token window" in warnings[0]
    with pytest.raises(ConfigError, match="skipping context_tokens"):
        build_docs(task_name, **metadata, strict=True)


def test_stored_docs_are_counted_in_the_model_tokenizer(tmp_path, capfd):
    """A folder built in cl100k, evaluated against a small window: prompts are recounted in the model's
    tokenizer and those that would overflow are dropped (never truncated)."""
    from lurch_tasks.hub.build import materialize

    materialize(["find_the_origin"], tmp_path / "ds", progress=False,
                overrides={"context_tokens": [1024, 2048], "num_samples": 1, "d_values": [-3, 4]})
    gguf = smollm2_gguf()
    docs = build_docs("find_the_origin", dataset_path=str(tmp_path / "ds"), pretrained=str(gguf.parent),
                      gguf_file=gguf.name, max_model_len=1800, max_gen_toks=64)["test"]
    counter = get_token_counter(str(gguf))
    assert len(docs) == 2 and all(counter.count(doc["prompt"]) + 64 <= 1800 for doc in docs)
    assert "skipping 2 of 4 docs" in capfd.readouterr().err


# --- lurch eval ------------------------------------------------------------------------------------------


def test_lurch_eval_passes_the_run_settings_to_the_tasks():
    argv = lm_eval_argv(["--model", "hf", "--tasks", "find_the_origin", "--apply_chat_template", "--strict",
                         "--gen_kwargs", "temperature=0,max_gen_toks=32", "--metadata", '{"seed": 3}'])
    assert "--strict" not in argv
    metadata = json.loads(argv[argv.index("--metadata") + 1])
    assert metadata == {"lurch_model": "hf", "chat_template": True, "max_gen_toks": "32", "strict": True,
                        "seed": 3}


def test_library_errors_are_attributed_to_the_library(tmp_path):
    from transformers import AutoConfig

    with pytest.raises(Exception) as raised:  # noqa: B017 - whatever transformers raises for a missing model
        AutoConfig.from_pretrained(str(tmp_path / "missing"), local_files_only=True)
    assert library_of(raised.value) in ("transformers", "huggingface_hub")
    with pytest.raises(ValueError) as raised:
        json.loads("{")
    assert library_of(raised.value) == __name__.split(".")[0]  # stdlib frames are skipped: the caller is named


@pytest.mark.slow
def test_lurch_eval_names_the_library_that_failed(tmp_path):
    proc = subprocess.run([LURCH, "eval", "--model", "hf", "--model_args", f"pretrained={tmp_path / 'missing'}",
                           "--tasks", "find_the_origin", "--limit", "1"], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("lurch eval: error raised by ") and "lurch: error" not in proc.stderr
    assert "transformers" in last or "huggingface_hub" in last or "lm_eval" in last


@pytest.mark.parametrize("tokenizer_name", ["byte_bpe", "smollm2"])
def test_implicit_hop_token_figures_are_a_real_pass_in_gpt2_style_tokenizers(tokenizers, tokenizer_name):
    """In a GPT-2-style tokenizer ImplicitHop costs lines from cached pieces, fits by summing them and lays the
    kept prompt's encoding out from the pieces (``core.pieces``): every token figure must be a pass's."""
    from lurch_tasks.families.implicit_hop.prompt import prompt_head

    spec = tokenizers[tokenizer_name]
    counter, reference = get_token_counter(spec), get_token_counter("cl100k_base")
    assert counter.splits_like_gpt2
    head = len(prompt_head())
    for name, overrides in (("implicit_hop_length", {"context_tokens": [2048, 4096], "num_samples": 2}),
                            ("implicit_hop_compare", {"num_samples": 1, "depths": [3, 5]}),
                            ("implicit_hop_dispersion", {"num_samples": 1, "filler": 0.3}),
                            ("implicit_hop_broken", {"num_samples": 8})):
        task = resolve_task(name, {**overrides, "tokenizer": spec})
        for index in range(task.config.size()):
            row = generate_row(task, index)
            starts = counter.token_starts(row["prompt"])
            context = (head, head + len(row["context"]))
            assert row["difficulty"]["prompt_tokens"] == len(starts) == counter.count(row["prompt"])
            assert row["difficulty"]["context_tokens"] == int(((starts >= context[0]) & (starts < context[1])).sum())
            spans = [(span["start"], span["end"]) for span in row["evidence"]]
            expected = measure_evidence(reference.token_starts(row["prompt"]), head, len(row["context"]), spans)
            assert row["evidence"] == list(expected.spans)
            assert row["difficulty"]["evidence_dispersion"] == expected.dispersion


@pytest.mark.parametrize("tokenizer_name", ["byte_bpe", "smollm2"])
def test_pieces_stand_for_the_tokenizer(tokenizers, tokenizer_name):
    """Line costs, laid-out starts and whole-text counts from pieces are the tokenizer's own; cl100k costs of
    lines from the same pieces are a cl100k pass's."""
    import regex

    from lurch_tasks.core.budget import joined_costs, joined_tokens, line_tokens, sums_over_lines
    from lurch_tasks.core.pieces import GPT2_PATTERN, PieceCounter, PieceLines, split_pieces

    counter, reference = get_token_counter(tokenizers[tokenizer_name]), get_token_counter("cl100k_base")
    lines = ["Velmar Oster founded Brin Works.", "The mentor of Ka Lu is Tor Vex.", "Dren's year of birth is 1923.",
             "Wait,  two spaces and (brackets)!", "Numbers 12345 and it's done.", "Ends with spaces   ",
             "X.", "Rain fell steadily through the afternoon."]
    joined, pieces = joined_tokens(lines, counter, "\n"), line_tokens(lines, counter, "\n")
    assert isinstance(pieces, PieceLines)
    assert pieces.costs() == joined.costs()
    for rows in ([0, 1, 2], [7, 3, 5, 0], list(range(len(lines)))):
        assert pieces.laid_out(rows, 11).tolist() == joined.laid_out(rows, 11).tolist()
    assert pieces.reference_costs(lines, reference) == joined_costs(lines, reference, "\n")
    assert not sums_over_lines(counter, "Head:\n", lines)  # "Ends with spaces   "
    assert sums_over_lines(counter, "Head:\n", [line for line in lines if line == line.strip()])
    parts = PieceCounter(counter)
    for text in ["Head:\n", "Velmar Oster.\n\nQuestion: who?\nAnswer:", "  spaced \n\n out  ", "naïve café", ""]:
        assert parts.count(text) == counter.count(text), text
        assert parts.token_starts(text).tolist() == counter.token_starts(text).tolist(), text
    text = "\n".join(lines) + "\n"
    assert split_pieces(text) == regex.findall(GPT2_PATTERN, text)
    assert line_tokens(["naïve café."], counter, "\n").costs() == joined_costs(["naïve café."], counter, "\n")
