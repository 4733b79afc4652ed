"""Find the Origin generator: chains of word links, laid out with a signed line distance d."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache

from ...core.budget import PromptMeter, SummedPrompt, prompt_meter, settle_to_budget, sums_over_lines
from ...core.cells import setup_instance
from ...core.config import config_to_dict
from ...core.context import evidence_measures, line_token_ranges, lurch_difficulty, measure_evidence
from ...core.difficulty import reasoning_depth
from ...core.instance import Instance, instance_id
from ...core.rng import StableRng, canonical_json, derive_seed
from ...core.tokens import REFERENCE_TOKENIZER, get_token_counter
from ...core.vocab import load_words
from .config import Cell, FindOriginConfig
from .lines import (
    VOCABULARY,
    Layout,
    RandomLines,
    StructuredLines,
    Window,
    WordSource,
    decoys,
    lines_within,
    link_costs,
)
from .prompt import PROMPT_HEAD, parse_line, render_line, render_prompt, render_question

FAMILY = "find_the_origin"
VERSION = "2.4.0"  # 2.4.0: difficulty records reasoning_width and step_count
# Knobs that studies compare: left out of the instance seed, so the target chain and word stream stay fixed.
COMPARED_KNOBS = ("arrangement", "target_position")


@dataclass(frozen=True)
class Rendered:
    window: Window
    context: str
    prompt: str
    summed: SummedPrompt | None = None  # the prompt's exact counts, summed from the cost table (``summable``)


def render_window(source: StructuredLines | RandomLines, n: int, question: str) -> Rendered:
    window = source.window(n)
    context = "\n".join(window.texts)
    return Rendered(window, context, render_prompt(context, question))


def evidence_chars(window: Window) -> list[tuple[int, int]]:
    """Character span of every target line in the context, in row order."""
    spans, offset, row = [], 0, 0
    for target in window.target_rows:
        offset += sum(map(len, window.texts[row:target])) + (target - row)  # lines between, with newlines
        spans.append((offset, offset + len(window.texts[target])))
        row = target
    return spans


def reference_line_tokens(window: Window) -> tuple[list[tuple[int, int]], int]:
    """Reference-token ranges of the target lines and the context's reference tokens, for a prompt the model
    reads in another tokenizer, without a second pass over it: from the reference cost table. cl100k splits
    text into words before merging, and every line starts with a quote right after a newline, so a line's
    tokens are its two parts' tokens wherever it stands, and its closing quote and newline are one token
    (tests compare this with a pass over the prompt)."""
    costs = link_costs(REFERENCE_TOKENIZER)
    return line_token_ranges(costs.source[window.sources] + costs.target[window.targets], window.target_rows)


def generate(config: FindOriginConfig, seed: int, split: str, index: int, config_name: str) -> Instance:
    """Instance ``index`` of ``split``: a pure function of (family, config, seed, split, index)."""
    setup = setup_instance(FAMILY, config, VOCABULARY, seed, split, index, COMPARED_KNOBS)
    cell: Cell = setup.cell
    cfg_hash, src_hash, rng_seed = setup.config_hash, setup.source_hash, setup.rng_seed
    position = target_fraction(config.target_position, rng_seed)
    # Jitter keeps the destination's line at least the origin's distance from both ends (see Layout).
    margin = (cell.chain_length - 1) * abs(cell.d) if config.target_position == "jitter" else 0
    layout = Layout(cell.d, cell.chain_length, position, margin)
    meter = prompt_meter(config.tokenizer, config.chat_template)
    words = WordSource(StableRng(derive_seed(rng_seed, "words")), cell.chain_length)
    slot = StableRng(derive_seed(rng_seed, "slot")).below(abs(cell.d))
    shapes = None
    if config.arrangement == "structured":
        source: StructuredLines | RandomLines = StructuredLines(layout, slot, words)
    else:
        shapes = decoys(config.d_values, cell.chain_length, cell.d, StableRng(derive_seed(rng_seed, "decoys")))
        source = RandomLines(layout, words, derive_seed(rng_seed, "shuffle"), shapes)
    question = render_question(source.target_words[-1])
    target_tokens = cell.length if cell.length_unit == "tokens" else 0
    if target_tokens:
        rendered = _fit_lines(source, layout.span, meter, target_tokens, question)
    else:
        rendered = render_window(source, cell.length, question)
    context, prompt = rendered.context, rendered.prompt
    num_lines = len(rendered.window.texts)
    rows = rendered.window.target_rows
    target_rows = rows if layout.d > 0 else rows[::-1]  # link order: the origin's link first
    chain = [rendered.window.texts[row] for row in target_rows]
    origin, destination = _chain_ends(chain)
    # One encoding of the prompt gives its exact length, the context's tokens and the evidence offsets; a summed
    # fit knows them without one (and its reference offsets come from the cost table, as for other tokenizers).
    encoding = rendered.summed or meter.encode(prompt)
    context_start = len(PROMPT_HEAD)
    if meter.reads_reference and rendered.summed is None:
        evidence = measure_evidence(meter.reference_starts(prompt), context_start, len(context),
                                    evidence_chars(rendered.window))
    else:
        evidence = evidence_measures(*reference_line_tokens(rendered.window), len(context),
                                     evidence_chars(rendered.window))
    nodes, edges = _reasoning_graph(chain, origin, destination)
    # Evidence spans are in row order; re-order them into link order to measure link separation.
    token_starts = [span["token_start"] for span in evidence.spans]
    link_token_starts = token_starts if cell.d > 0 else token_starts[::-1]
    separations = [abs(b - a) for a, b in zip(link_token_starts, link_token_starts[1:], strict=False)]
    difficulty = {
        **lurch_difficulty(encoding, context_start, context, target_tokens, evidence,
                           reasoning_depth(nodes, edges), (nodes, edges)),
        "d": cell.d,
        "chain_length": cell.chain_length,
        "num_lines": num_lines,
        "target_position": position,
        "target_line": target_rows[0],
        "separation_tokens": sum(separations) / len(separations),
    }
    params = {
        "rng_seed": rng_seed,
        "cell": cell._asdict(),
        "sample": setup.sample,
        "arrangement": config.arrangement,
        "target_position_mode": config.target_position if isinstance(config.target_position, str) else "fixed",
        "target_fraction": position,
        "target_margin": margin,
        "target_slot": slot if config.arrangement == "structured" else None,
        "decoy_d": list(shapes.ds) if shapes else None,
        "lines_above_target": layout.lines_above(num_lines),
        "target_rows": target_rows,
        "target_chain": chain,
        "tokenizer": config.tokenizer,
        "chat_template": config.chat_template,
        "config": config_to_dict(config),
    }
    return Instance(
        id=instance_id(config_name, split, index, FAMILY),
        family=FAMILY,
        task=config_name,
        config_name=config_name,
        split=split,
        index=index,
        seed=seed,
        family_version=VERSION,
        config_hash=cfg_hash,
        source_hash=src_hash,
        context=context,
        question=question,
        prompt=prompt,
        answer_format="entity",
        answer=json.dumps(origin),
        answer_text=origin,
        options=[],
        answer_items=[origin],
        evidence=list(evidence.spans),
        reasoning_graph={"nodes": nodes, "edges": edges},
        difficulty=difficulty,
        params=canonical_json(params),
        pair_key=setup.pair_key,
    )


def target_fraction(mode: str | float, rng_seed: int) -> float:
    """Depth fraction of the target chain: seeded uniform (jitter), the paper's 0.5 (centre), or fixed."""
    if mode == "jitter":
        return StableRng(derive_seed(rng_seed, "position")).uniform()
    if mode == "centre":
        return 0.5
    return float(mode)


def _fit_lines(source: StructuredLines | RandomLines, min_lines: int, meter: PromptMeter, budget: int,
               question: str) -> Rendered:
    """The window with the most lines whose whole prompt stays within ``budget`` tokens.

    Line costs come from the per-word table, added to the frame (instructions, question, chat template) as
    the window grows; the chosen prompt is then counted once, and corrected line by line if a boundary merge
    moved it."""
    smallest = render_window(source, min_lines, question)
    costs = link_costs(meter.counter.name)
    smallest_tokens = (frame_tokens(meter.counter.name, meter.chat_template) + meter.counter.count(question)
                       + int((costs.source[smallest.window.sources] + costs.target[smallest.window.targets]).sum()))
    extra = lines_within(source, costs, budget - smallest_tokens)
    if summable(meter) and smallest_tokens <= budget:
        # exact sums: the window lines_within picks is the one settle_to_budget would settle on (it counts at most
        # the budget, and one growth line more would not), so no tokenizer pass is needed
        fitted = render_window(source, min_lines + extra, question)
        lines_sum = int((costs.source[fitted.window.sources] + costs.target[fitted.window.targets]).sum())
        context_span = (len(PROMPT_HEAD), len(PROMPT_HEAD) + len(fitted.context))
        summed = SummedPrompt(smallest_tokens - int((costs.source[smallest.window.sources]
                                                     + costs.target[smallest.window.targets]).sum()) + lines_sum,
                              context_span, lines_sum + context_delta(meter.counter.name))
        return Rendered(fitted.window, fitted.context, fitted.prompt, summed)
    windows: dict[int, Rendered] = {0: smallest}

    def render(n_extra: int) -> str:
        if n_extra not in windows:
            windows[n_extra] = render_window(source, min_lines + n_extra, question)
        return windows[n_extra].prompt

    fitted = settle_to_budget(render, meter.count, extra, budget, 0)
    return windows[fitted.blocks]


def summable(meter: PromptMeter) -> bool:
    """Whether a plain prompt's count is exactly the frame, plus the question counted alone, plus the lines' costs
    from the table, so a fit needs no tokenizer pass."""
    return not meter.chat_template and words_summable(meter.counter.name)


@lru_cache(maxsize=16)
def words_summable(tokenizer: str) -> bool:
    """True when a newline before a non-space character always ends a piece of the tokenizer's pre-tokenizer
    (``sums_over_lines``: every line starts and ends with a quote) and every vocabulary word is ASCII letters,
    holding no added token's text. Then a line's pieces are the same wherever it stands, the cut before its target word
    (after the piece `` "``) is a piece boundary, so the table's two parts count it exactly, and every last line
    ends like the probe's (a letter, a quote, the blank line), so the frame and the context's tokens are the
    probe's wherever the question follows."""
    counter = get_token_counter(tokenizer)
    words = load_words(VOCABULARY[0])
    if not sums_over_lines(counter, "\n", [render_line(*PROBE_LINE)]) or not all(map(_LETTERS.fullmatch, words)):
        return False
    return not counter.holds_added_text("\n".join(words))


_LETTERS = re.compile(r"[A-Za-z]+")
PROBE_LINE = ("origin", "destination")  # any line: the frame is what a one-line prompt counts beyond it


@lru_cache(maxsize=16)
def frame_tokens(tokenizer: str, chat_template: bool) -> int:
    """Tokens of a prompt beyond its lines and question: the instructions and, with ``chat_template``, the
    template. Measured once per tokenizer on a one-line prompt with a question, less the question counted
    alone: the blank line before a question splits differently from one that ends the text in GPT-2-style
    tokenizers (SmolLM2: one token more), and a frame measured without it made 7% of fits one token too long,
    each then counted again. In cl100k both ways count the same (lines and question start where it splits)."""
    costs = link_costs(tokenizer)
    words = load_words(VOCABULARY[0])
    source, target = (words.index(word) for word in PROBE_LINE)
    line, question = render_line(*PROBE_LINE), render_question(PROBE_LINE[1])
    meter = prompt_meter(tokenizer, chat_template)
    return meter.count(render_prompt(line, question)) - meter.counter.count(question) - int(
        costs.source[source] + costs.target[target])


@lru_cache(maxsize=16)
def context_delta(tokenizer: str) -> int:
    """The context's tokens in a plain prompt less its lines' table costs: the last line's newline cost, where
    the blank line before the question leaves it outside the context (GPT-2-style tokenizers: -1), or 0 where
    it joins the closing quote's token (cl100k). Measured on the probe prompt of ``frame_tokens``."""
    costs = link_costs(tokenizer)
    words = load_words(VOCABULARY[0])
    source, target = (words.index(word) for word in PROBE_LINE)
    line, question = render_line(*PROBE_LINE), render_question(PROBE_LINE[1])
    encoding = prompt_meter(tokenizer).encode(render_prompt(line, question))
    start = len(PROMPT_HEAD)
    return encoding.tokens_between(start, start + len(line)) - int(costs.source[source] + costs.target[target])


def _chain_ends(chain_lines: list[str]) -> tuple[str, str]:
    """Origin and destination of the target chain, read back from its rendered lines."""
    first, last = parse_line(chain_lines[0]), parse_line(chain_lines[-1])
    if first is None or last is None:
        raise RuntimeError("a rendered target line does not parse: the line template and its parser disagree")
    return first[0], last[1]


def _reasoning_graph(chain_lines: list[str], origin: str, destination: str) -> tuple[list[dict], list[list[str]]]:
    """Walk back from the destination: step j reads link L-j using step j-1's result."""
    length = len(chain_lines)
    nodes = [{"id": f"e{k}", "kind": "evidence", "text": line} for k, line in enumerate(chain_lines)]
    edges: list[list[str]] = []
    for j in range(1, length + 1):
        link = length - j
        nodes.append({"id": f"s{j}", "kind": "step", "text": f"predecessor via link {link}"})
        edges.append([f"e{link}", f"s{j}"])
        if j > 1:
            edges.append([f"s{j - 1}", f"s{j}"])
    nodes.append({"id": "answer", "kind": "answer", "text": f"origin of {destination} is {origin}"})
    edges.append([f"s{length}", "answer"])
    return nodes, edges


__all__ = ["COMPARED_KNOBS", "FAMILY", "VERSION", "generate"]
