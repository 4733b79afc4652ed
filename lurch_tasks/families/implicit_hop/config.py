"""ImplicitHop configuration: every knob, validated before any generation starts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from ...core.config import (
    ConfigError,
    require,
    require_budget_knobs,
    require_choice,
    require_int_range,
    require_list,
    require_number,
)
from ...core.tokens import REFERENCE_TOKENIZER
from .competitors import MAX_COMPETITORS

MAX_DEPTH = 8
MAX_FACTS = 32
MAX_CONTEXT_TOKENS = 131_072
EVIDENCE_ORDERS = ("forward", "reverse", "shuffled")
DISTRACTORS = ("unrelated", "same_relation", "near_miss")
QUESTION_STYLES = ("nested", "stepwise")
JOINS = ("list", "compare", "count")
MAX_FILLER = 0.9
FACT_TOKENS_ESTIMATE = 16  # a fact line in cl100k, invented names included (measured: 12-20)
FRAME_TOKENS_ESTIMATE = 220  # instructions and answer format, before the questions


class Cell(NamedTuple):
    depth: int
    facts: int
    dispersion: float
    context_tokens: int


def branch_lengths(depth: int, facts: int) -> tuple[int, ...]:
    """The question's shape: branches of ``depth`` lookups while they fit, the rest in one shorter branch, so
    the longest chain is ``depth`` (the LURCH depth of a list question) and the lookups add up to ``facts``
    (8 facts: 1x8, 7+1, 6+2, 5+3, 4+4, 3+3+2, 2x4, 8x1)."""
    full, rest = divmod(facts, depth)
    return (depth,) * full + ((rest,) if rest else ())


def shape(join: str, depth: int, facts: int) -> tuple[int, ...]:
    """Lookups per branch (the join's own lookup included). A list collects its branches' ends, so its depth
    is the longest branch; a comparison or a count is one more step after the longest branch."""
    return branch_lengths(depth, facts) if join == "list" else branch_lengths(depth - 1, facts) if depth > 1 else ()


def decoy_lines(join: str, depth: int, facts: int, competitors: int) -> int:
    """At most how many competitor lines a question of this shape adds (``competitors.decoy_facts``): its
    competitors on every hop."""
    return competitors * sum(hops for hops in shape(join, depth, facts))


def shape_fits(join: str, depth: int, facts: int) -> bool:
    """A join needs two branches or more; a comparison also needs a lookup before the year on every branch
    (an end named in the question would leave only the named entities to choose from)."""
    lengths = shape(join, depth, facts)
    if join == "list":
        return bool(lengths)
    return len(lengths) >= 2 and min(lengths) >= (2 if join == "compare" else 1)


@dataclass(frozen=True)
class ImplicitHopConfig:
    """Knobs of the ImplicitHop family (DESIGN 4.3): each axis varies alone when the others hold one value.

    ``depths`` (reasoning depth, 1-8) and ``facts`` (required facts, the evidence scope at a fixed length)
    set the question's shape (``branch_lengths``); ``dispersions`` are LURCH dispersion targets the layout
    meets within 0.02; ``context_tokens`` budgets the whole prompt in ``tokenizer`` (inside its chat
    template with ``chat_template``). ``evidence_order``: the required facts seeded (``shuffled``, the default,
    never with a final hop first or last, where dispersion 1 would expose it), in chain order (``forward``)
    or last hop first (``reverse``). ``distractors``: ``same_relation`` (default: the
    rest of the knowledge base, the same relation types about other entities), ``unrelated`` (only relation
    types the question does not use), ``near_miss`` (adds entities named one edit away from the bridges).
    ``question_style``: ``nested`` ("the birthplace of the founder of X") or ``stepwise``.
    ``join``: the final step over the branches (``shape``): ``list`` (every branch's end is an answer, an
    entity set), ``compare`` (which end was born or founded earliest / latest: an entity) or ``count`` (how
    many ends were born in / live in a named city: an integer). ``filler`` (0-0.9, default 0): the share of
    the distractor lines that are neutral sentences about nothing in the knowledge base, not facts.
    ``competitors_per_hop`` (0-3, default 3): how many of the subject's facts for the other relations of a
    hop's signature are in the context, exactly, on every hop (``competitors``): a walk that follows entity types
    without reading relations is right on a hop 1 time in ``competitors_per_hop + 1``; 0 removes them all (an
    ablation a relation-blind walk solves, never a default).
    ``broken`` (0-1, default 0): the share of each cell's samples whose chain breaks: one required fact (a
    seeded hop) is left out of the context, its competitors and everything else kept, so the honest answer is
    NOT FOUND (``broken_samples``); one more competitor takes the fact's place, so ``competitors_per_hop`` must
    leave one spare (at most 2). Exact per cell, so the same at every level of every axis; only for list
    questions of one chain (depth = facts, one question per prompt) of 3 facts or more (two evidence lines stay).
    """

    depths: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 8)
    facts: tuple[int, ...] = (8,)
    dispersions: tuple[float, ...] = (0.5,)
    context_tokens: tuple[int, ...] = (4096,)
    evidence_order: str = "shuffled"
    distractors: str = "same_relation"
    question_style: str = "nested"
    join: str = "list"
    filler: float = 0.0
    competitors_per_hop: int = MAX_COMPETITORS
    num_samples: int = 8  # rows per cell: the shortcut audit needs a few dozen rows per slice to be stable
    tokenizer: str = REFERENCE_TOKENIZER
    chat_template: bool = False
    broken: float = field(default=0.0, metadata={"omit_default": True})  # added in 0.6.0: worlds kept at 0

    def __post_init__(self) -> None:
        require_list("depths", self.depths)
        for depth in self.depths:
            require_int_range("depths", depth, 1, MAX_DEPTH)
        require_list("facts", self.facts)
        for facts in self.facts:
            require_int_range("facts", facts, 1, MAX_FACTS)
        require_list("dispersions", self.dispersions)
        for dispersion in self.dispersions:
            require_number("dispersions", dispersion, 0.0, 1.0)
        require_list("context_tokens", self.context_tokens)
        for tokens in self.context_tokens:
            require_int_range("context_tokens", tokens, 512, MAX_CONTEXT_TOKENS)
        for name, values in (("depths", self.depths), ("facts", self.facts), ("dispersions", self.dispersions),
                             ("context_tokens", self.context_tokens)):
            require(len(set(values)) == len(values), name, list(values), "distinct values")
        require_choice("evidence_order", self.evidence_order, EVIDENCE_ORDERS)
        require_choice("distractors", self.distractors, DISTRACTORS)
        require_choice("question_style", self.question_style, QUESTION_STYLES)
        require_choice("join", self.join, JOINS)
        require_number("filler", self.filler, 0.0, MAX_FILLER)
        require_int_range("competitors_per_hop", self.competitors_per_hop, 0, MAX_COMPETITORS)
        if self.distractors == "near_miss":
            require(self.join == "list", "join", self.join, "list with distractors near_miss")
        require_int_range("num_samples", self.num_samples, 1, 1_000_000)
        require_budget_knobs(self.tokenizer, self.chat_template)
        require_number("broken", self.broken, 0.0, 1.0)
        if self.broken:
            require(self.join == "list", "join", self.join, "list with broken > 0")
            require(self.competitors_per_hop < MAX_COMPETITORS, "competitors_per_hop", self.competitors_per_hop,
                    f"0-{MAX_COMPETITORS - 1} with broken > 0 (a broken hop shows one more competitor in the left-out "
                    "fact's place, so its subject has as many lines of the signature as any other hop's)")
            require(self.distractors != "near_miss", "distractors", self.distractors,
                    "same_relation or unrelated with broken > 0 (a near miss of the broken hop's subject would "
                    "state it)")
            require(all(d == f and f >= 3 for d in self.depths for f in self.facts), "depths", list(self.depths),
                    "each equal to every facts value, 3 or more, with broken > 0 (one chain per question)")
        if not self.cells():
            raise ConfigError(f"depths: {list(self.depths)} with facts {list(self.facts)}, dispersions "
                              f"{list(self.dispersions)} and context_tokens {list(self.context_tokens)} leave no "
                              f"cell for join {self.join!r}; allowed: a depth at most the facts, a dispersion of 0 "
                              "for one fact, two branches or more for compare / count (depth 3+ for compare, 2+ "
                              f"for count), and room for the facts (~{FACT_TOKENS_ESTIMATE} tokens each)")

    def fits(self, depth: int, facts: int, dispersion: float, context_tokens: int) -> bool:
        # the facts, distractors around them, and the competitor lines
        lines = 3 * facts + decoy_lines(self.join, depth, facts, self.competitors_per_hop)
        needed = FRAME_TOKENS_ESTIMATE + lines * FACT_TOKENS_ESTIMATE
        return (depth <= facts and shape_fits(self.join, depth, facts) and (facts > 1 or dispersion == 0.0)
                and needed <= context_tokens)

    def cells(self) -> list[Cell]:
        """The knob grid (lengths fastest); cells that cannot exist are left out. Docs visit it in
        golden-stride order (core.cells.cell_at)."""
        return [Cell(d, f, x, n) for d in self.depths for f in self.facts for x in self.dispersions
                for n in self.context_tokens if self.fits(d, f, x, n)]

    def size(self) -> int:
        return len(self.cells()) * self.num_samples

    def sparse_metrics(self) -> tuple[str, ...]:
        """Metrics only some docs report: the broken chains' NOT FOUND accuracy (harness.tasks.SPARSE_METRICS)."""
        return ("not_found_accuracy",) if self.broken else ()

    def broken_samples(self) -> int:
        """How many of each cell's samples break their chain: the share, rounded, the same in every cell."""
        return round(self.broken * self.num_samples)
