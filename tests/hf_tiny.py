"""A tiny, randomly initialised GPT-2 built entirely offline, for end-to-end smoke tests.

The tokenizer is a byte-level BPE trained on a few of our own prompts, so it can encode any text
(unknown words fall back to bytes) and counts tokens differently from cl100k_base.
"""

from __future__ import annotations

from pathlib import Path

BOS, EOS, PAD = "<|bos|>", "<|endoftext|>", "<|pad|>"
VOCAB_SIZE = 1000
N_POSITIONS = 2048
SEED = 1234

_EXTRA_SENTENCES = (
    "The quick brown fox jumps over the lazy dog.",
    "FINAL ANSWER: origin",
    "Step 1: find the line that links to the word. Step 2: follow the chain back to its start.",
    "There is no line linking to this word, so it is the origin of the chain.",
)


def training_corpus() -> list[str]:
    """A small in-memory corpus: two of our prompts, a few sentences and the generator's word list.

    The word list keeps the average word short in tokens, so the tiny tokenizer can still fit the
    longest-|d| layouts into a 384-token prompt budget.
    """
    from lurch_tasks.core.generation import generate_row, resolve_task
    from lurch_tasks.core.vocab import load_words

    task = resolve_task("find_the_origin", {"context_tokens": [384], "num_samples": 1})
    prompts = [generate_row(task, index)["prompt"] for index in (0, 1)]
    words = load_words("english_words.txt")
    return prompts + list(_EXTRA_SENTENCES) + [f'"{word}"' for word in words]


def build_tokenizer():
    """A byte-level BPE tokenizer wrapped as ``PreTrainedTokenizerFast``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    backend.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        min_frequency=2,
        special_tokens=[EOS, BOS, PAD],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(training_corpus(), trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=backend, bos_token=BOS, eos_token=EOS, pad_token=PAD, unk_token=None,
        model_max_length=N_POSITIONS,
    )


def build_tiny_gpt2(folder: Path) -> Path:
    """Save a 2-layer GPT-2 (random weights, fixed seed) and its tokenizer into ``folder``."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer()
    config = GPT2Config(
        n_layer=2, n_head=2, n_embd=64, n_positions=N_POSITIONS, vocab_size=len(tokenizer),
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(SEED)
    model = GPT2LMHeadModel(config)
    model.eval()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
