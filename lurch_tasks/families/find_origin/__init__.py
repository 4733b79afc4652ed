"""Find the Origin (source paper 003): follow word links back to a chain's origin."""

from __future__ import annotations

from ...core.difficulty import length_bin
from ...core.registry import Deferred, Family, Task, register_family, register_task
from .config import ALL_D_VALUES, WIDE_D_VALUES, FindOriginConfig
from .generate import COMPARED_KNOBS, FAMILY, VERSION, VOCABULARY, generate
from .prompt import parse_question

CITATION = """@article{findtheorigin2024,
  title   = {Challenging LLMs Beyond Information Retrieval: Reasoning Degradation with Long Context Windows},
  author  = {Fraga, Natanael},
  year    = {2024},
  note    = {Find the Origin test}
}"""


def score(doc: dict, output: str) -> dict[str, float]:
    """Exact match of the parsed FINAL ANSWER against the gold origin, plus item metrics.

    The question's destination word (from ``question``, else ``prompt``) helps read answers that restate it
    (``"x", the origin of "y"``); docs without either are scored on the output alone.
    """
    from ...scoring import parse_final_answer, score_items  # scoring is imported when a process scores
    from ...scoring.reasoning import reasoning_metrics, strip_doc_output

    stripped = strip_doc_output(doc, output)
    predicted = parse_final_answer(stripped.answer, _destination(doc))
    items = score_items(doc["answer_items"], [predicted] if predicted else [])
    return {"score": float(items.tp == 1 and items.fp == 0), **_item_metrics(items),
            **reasoning_metrics(stripped, predicted is not None)}


def _destination(doc: dict) -> str | None:
    for key in ("question", "prompt"):
        text = doc.get(key)
        if isinstance(text, str) and text:
            return parse_question(text)
    return None


def _item_metrics(items) -> dict[str, float]:
    return {"memory_drift": items.memory_drift, "precision": items.precision, "recall": items.recall, "f1": items.f1}


def bin_keys(doc: dict) -> dict[str, str]:
    """Per-bin metric suffixes of a doc: its length bin (tokens) and its d."""
    difficulty = doc["difficulty"]
    return {"length": str(length_bin(difficulty["target_tokens"], difficulty["context_tokens"])),
            "d": f"d={difficulty['d']}", "depth": f"chain={difficulty['chain_length']}"}


def bin_names(config: FindOriginConfig) -> list[str]:
    """Every bin suffix a config can produce (declared in the lm-eval YAML)."""
    if config.context_tokens:
        lengths = sorted(set(config.context_tokens))
    else:
        # Line-count configs are binned by the power of two above their token count; lines cost
        # roughly 8-16 tokens each, so these bounds cover every doc.
        lines = config.num_lines or (min(config.chain_lengths), config.line_growth[1])
        low, high = length_bin(0, min(lines) * 8), length_bin(0, max(lines) * 16)
        lengths = [1 << k for k in range(low.bit_length() - 1, high.bit_length())]
    return ([str(n) for n in lengths] + [f"d={d}" for d in config.d_values]
            + [f"chain={c}" for c in config.chain_lengths])


REASONING_TOKENS = 256  # the prompt asks for step-by-step reasoning before the FINAL ANSWER line
TOKENS_PER_EXTRA_LINK = 64


def max_gen_toks(config: FindOriginConfig) -> int:
    """Room for short reasoning and the answer line: 256 tokens for a 2-link chain, 64 more per extra link."""
    return REASONING_TOKENS + TOKENS_PER_EXTRA_LINK * (max(config.chain_lengths) - 2)


def token_target(cell) -> int | None:
    return cell.length if cell.length_unit == "tokens" else None


register_family(
    Family(
        rag_units=Deferred(f"{__name__}.prompt:RAG_UNITS"),
        name=FAMILY,
        version=VERSION,
        config_type=FindOriginConfig,
        generate=generate,
        audit=Deferred(f"{__name__}.audit:audit"),
        solve=Deferred(f"{__name__}.baselines:solve"),
        guess=Deferred(f"{__name__}.baselines:guess"),
        score=score,
        bin_keys=bin_keys,
        bin_names=bin_names,
        group="find_the_origin_suite",
        source_files=VOCABULARY,
        citation=CITATION,
        description=(
            "Find the Origin: lines link words into chains; the model must follow the links back from a "
            "destination word to its origin. The signed distance d sets how many lines separate "
            "consecutive links of a chain (negative: the later link is above)."
        ),
        compared_knobs=COMPARED_KNOBS,
        max_gen_toks=max_gen_toks,
        token_target=token_target,
        shortcuts=Deferred(f"{__name__}.shortcuts:SHORTCUTS"),
        probes=Deferred(f"{__name__}.shortcuts:PROBES"),
        learned_probe=Deferred(f"{__name__}.shortcuts:LEARNED_PROBE"),
        knob_properties=(
            ("d", "`d` and `separation_tokens` (mean token distance between consecutive links). LURCH "
             "`evidence_dispersion` is about (|d|-1)/(lines-2): it barely moves with d and falls with length."),
            ("chain_lengths", "`chain_length` and `reasoning_depth` (= chain length)."),
            ("context_tokens / num_lines / line_growth", "`context_tokens`, `num_lines`, `evidence_scope`."),
            ("arrangement", "matched pairs: rows with equal `pair_key` share the target chain and word stream."),
            ("target_position", "`target_position` (the depth fraction used) and `target_line`; matched pairs "
             "via `pair_key`."),
        ),
    )
)

DEPTH_MIN_CONTEXT_TOKENS = 3072  # 8-link chains of d = ±29 span 204 lines (~2.4k tokens) plus the jitter margin
PAPER_MAX_LINES = 880  # ~10k context tokens, the end of the paper's range
_LENGTHS = dict(context_tokens=(1024, 2048, 4096, 8192))
register_task(Task("find_the_origin", FAMILY, FindOriginConfig(**_LENGTHS),
               "structured arrangement, d in ±2..15 x contexts of 1k-8k tokens, target at a seeded depth",
               in_suite=True))
register_task(Task("find_the_origin_random", FAMILY, FindOriginConfig(**_LENGTHS, arrangement="random"),
               "random arrangement (only the target chain obeys d), same grid", in_suite=True))
register_task(Task("find_the_origin_long", FAMILY,
               FindOriginConfig(context_tokens=(16384, 32768, 65536, 131072), num_samples=1),
               "structured arrangement, contexts of 16k-128k tokens"))
# d is a nuisance here: its wide grid (56 signed distances) gives the origin about twice the look-alike chain shapes
# of the paper's grid (issue 27), and 8k tokens (~700 lines) hold every shape, 7 * 29 = 203 lines each side.
register_task(Task("find_the_origin_depth", FAMILY,
               FindOriginConfig(d_values=WIDE_D_VALUES, chain_lengths=(2, 3, 4, 5, 6, 7, 8), context_tokens=(8192,),
                                arrangement="random", num_samples=1),
               "reasoning depth 2-8: chains of 2-8 links, random arrangement, d in ±2..29, 8k tokens",
               min_context_tokens=DEPTH_MIN_CONTEXT_TOKENS))
register_task(Task("find_the_origin_paper", FAMILY,
               FindOriginConfig(d_values=ALL_D_VALUES, context_tokens=(), line_growth=(8, PAPER_MAX_LINES),
                                target_position="centre", num_samples=1),
               "paper-faithful: the paper's grid (d in -15..15, contexts grown 8 lines at a time from |d|+1 lines "
               "to ~10k tokens) with its centred target, whose origin line mirrors the destination's",
               paper_faithful=True))

__all__ = ["FindOriginConfig", "PAPER_MAX_LINES", "generate", "score"]
