"""Find the Origin generator: chains of word links, laid out with a signed line distance d."""

from __future__ import annotations

import json
from dataclasses import dataclass

from ...core.budget import PromptMeter, count_fitting, prompt_meter, settle_to_budget
from ...core.cells import setup_instance
from ...core.config import config_to_dict
from ...core.context import Block, assemble, measure_evidence
from ...core.difficulty import reasoning_depth
from ...core.instance import Instance, instance_id
from ...core.rng import LazyPermutation, StableRng, canonical_json, derive_seed
from ...core.tokens import reference_counter
from ...core.vocab import load_words
from .config import Cell, FindOriginConfig
from .prompt import parse_line, render_line, render_prompt, render_question

FAMILY = "find_the_origin"
VERSION = "2.1.0"
# Knobs that studies compare: left out of the instance seed, so the target chain and word stream stay fixed.
COMPARED_KNOBS = ("arrangement", "target_position")
VOCABULARY = ("english_words.txt",)


class WordSource:
    """Fresh words on demand: every chain gets words no other chain of the instance uses."""

    def __init__(self, rng: StableRng) -> None:
        self._words = load_words(VOCABULARY[0])
        self._draw = LazyPermutation(len(self._words), rng)
        self._chains: dict[object, tuple[str, ...]] = {}

    def chain(self, key: object, chain_length: int) -> tuple[str, ...]:
        if key not in self._chains:
            if self._draw.remaining() < chain_length + 1:
                raise ValueError(
                    f"context too long: the {len(self._words)}-word vocabulary ran out of fresh words "
                    "(lower context_tokens/num_lines or raise chain_length)"
                )
            self._chains[key] = tuple(self._words[self._draw.next()] for _ in range(chain_length + 1))
        return self._chains[key]


@dataclass(frozen=True)
class Layout:
    """Where the target chain sits in a window of ``n`` lines."""

    d: int
    chain_length: int
    position: float  # depth fraction of the target chain's first line within the free lines

    @property
    def span(self) -> int:
        """Lines from the target chain's first line to its last, inclusive."""
        return (self.chain_length - 1) * abs(self.d) + 1

    def lines_above(self, n: int) -> int:
        return int((n - self.span) * self.position + 0.5)

    def link_offset(self, k: int) -> int:
        """Offset of link k (0 = origin's link) from the target's first line: later links are d lines
        below for d > 0 and above for d < 0."""
        step = k if self.d > 0 else self.chain_length - 1 - k
        return step * abs(self.d)


class StructuredLines:
    """Every chain obeys d: blocks of |d| lines, block b holding link b (d>0) of |d| parallel chains.

    The sequence is infinite in both directions; group 0 holds the target chain in slot ``slot``.
    """

    def __init__(self, layout: Layout, slot: int, words: WordSource) -> None:
        self.layout, self.slot, self.words = layout, slot, words
        self.width = abs(layout.d)
        self.group = layout.chain_length * self.width
        # the target chain draws the first words, as in random
        self.target_words = words.chain(("s", 0, slot), layout.chain_length)

    def line(self, position: int) -> tuple[str, bool]:
        """Text of the line at ``position`` (0 = target's first line) and whether it is evidence."""
        absolute = position + self.slot
        group, within = divmod(absolute, self.group)
        block, slot = divmod(within, self.width)
        link = block if self.layout.d > 0 else self.layout.chain_length - 1 - block
        chain = self.words.chain(("s", group, slot), self.layout.chain_length)
        is_target = group == 0 and slot == self.slot
        return render_line(chain[link], chain[link + 1]), is_target

    def window(self, n: int) -> list[tuple[str, bool]]:
        top = -self.layout.lines_above(n)
        return [self.line(top + i) for i in range(n)]

    def growth_lines(self):
        """Each line added (with its newline) as the window grows from the target span outward."""
        previous_above = self.layout.lines_above(self.layout.span)
        n = self.layout.span
        while True:
            n += 1
            above = self.layout.lines_above(n)
            position = -above if above > previous_above else n - above - 1
            previous_above = above
            yield self.line(position)[0] + "\n"


class RandomLines:
    """Only the target chain obeys d; distractor lines come from other chains in a seeded shuffle."""

    def __init__(self, layout: Layout, words: WordSource, shuffle_seed: int) -> None:
        self.layout, self.words, self.shuffle_seed = layout, words, shuffle_seed
        self.target = self.target_words = words.chain(("target",), layout.chain_length)
        self._distractors: list[str] = []

    def distractor(self, i: int) -> str:
        while len(self._distractors) <= i:
            chain_no, link = divmod(len(self._distractors), self.layout.chain_length)
            chain = self.words.chain(("r", chain_no), self.layout.chain_length)
            self._distractors.append(render_line(chain[link], chain[link + 1]))
        return self._distractors[i]

    def window(self, n: int) -> list[tuple[str, bool]]:
        count = n - self.layout.chain_length
        others = StableRng(derive_seed(self.shuffle_seed, count)).shuffled(
            [self.distractor(i) for i in range(count)]
        )
        top = self.layout.lines_above(n)
        targets = {top + self.layout.link_offset(k): k for k in range(self.layout.chain_length)}
        lines: list[tuple[str, bool]] = []
        rest = iter(others)
        for row in range(n):
            if row in targets:
                k = targets[row]
                lines.append((render_line(self.target[k], self.target[k + 1]), True))
            else:
                lines.append((next(rest), False))
        return lines

    def growth_lines(self):
        """Each distractor line (with its newline) added beyond the minimal window of ``span`` lines."""
        i = self.layout.span - self.layout.chain_length
        while True:
            yield self.distractor(i) + "\n"
            i += 1


def _link_rows(lines: list[tuple[str, bool]], layout: Layout) -> list[int]:
    """Row of each target link in link order (the origin's link first)."""
    rows = [row for row, (_, is_target) in enumerate(lines) if is_target]
    return rows if layout.d > 0 else rows[::-1]


def generate(config: FindOriginConfig, seed: int, split: str, index: int, config_name: str) -> Instance:
    """Instance ``index`` of ``split``: a pure function of (family, config, seed, split, index)."""
    setup = setup_instance(FAMILY, config, VOCABULARY, seed, split, index, COMPARED_KNOBS)
    cell: Cell = setup.cell
    cfg_hash, src_hash, rng_seed = setup.config_hash, setup.source_hash, setup.rng_seed
    position = target_fraction(config.target_position, rng_seed)
    layout = Layout(cell.d, cell.chain_length, position)
    meter = prompt_meter(config.tokenizer, config.chat_template)
    words = WordSource(StableRng(derive_seed(rng_seed, "words")))
    slot = StableRng(derive_seed(rng_seed, "slot")).below(abs(cell.d))
    if config.arrangement == "structured":
        source: StructuredLines | RandomLines = StructuredLines(layout, slot, words)
    else:
        source = RandomLines(layout, words, derive_seed(rng_seed, "shuffle"))
    question = render_question(source.target_words[-1])
    target_tokens = cell.length if cell.length_unit == "tokens" else 0
    if target_tokens:
        num_lines, prompt_tokens = _fit_lines(source, layout.span, meter, target_tokens, question)
        lines = source.window(num_lines)
    else:
        num_lines = cell.length
        lines = source.window(num_lines)
        prompt_tokens = meter.count(render_prompt("\n".join(text for text, _ in lines), question))
    assembled = assemble([Block(text, ev) for text, ev in lines])
    context = assembled.text
    target_rows = _link_rows(lines, layout)
    chain = [lines[row][0] for row in target_rows]
    origin, destination = _chain_ends(chain)
    prompt = render_prompt(context, question)
    evidence = measure_evidence(context, assembled.evidence_chars, reference_counter())
    nodes, edges = _reasoning_graph(chain, origin, destination)
    # Evidence spans are in row order; re-order them into link order to measure link separation.
    token_starts = [span["token_start"] for span in evidence.spans]
    link_token_starts = token_starts if cell.d > 0 else token_starts[::-1]
    separations = [abs(b - a) for a, b in zip(link_token_starts, link_token_starts[1:], strict=False)]
    difficulty = {
        "context_tokens": meter.counter.count(context),
        "context_chars": len(context),
        "target_tokens": target_tokens,
        "prompt_tokens": prompt_tokens,
        "evidence_scope": evidence.scope,
        "evidence_dispersion": evidence.dispersion,
        "evidence_scope_chars": evidence.scope_chars,
        "evidence_dispersion_chars": evidence.dispersion_chars,
        "reasoning_depth": reasoning_depth(nodes, edges),
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
        "target_slot": slot if config.arrangement == "structured" else None,
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
               question: str) -> tuple[int, int]:
    """Most lines whose whole prompt stays within ``budget`` tokens, and that prompt's exact token count.

    Lines are counted once as the window grows; the prompt is counted once more, then corrected line by line."""

    def render(n_extra: int) -> str:
        return render_prompt("\n".join(text for text, _ in source.window(min_lines + n_extra)), question)

    base_cost = meter.count(render(0))
    extra = count_fitting(source.growth_lines(), meter.counter, budget, base_cost)
    fitted = settle_to_budget(render, meter.count, extra, budget, 0)
    return min_lines + fitted.blocks, fitted.tokens


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
