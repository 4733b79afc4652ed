"""Find the Origin configuration: every knob, validated before any generation starts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from ...core.config import (
    ConfigError,
    require,
    require_budget_knobs,
    require_choice,
    require_int_range,
    require_list,
)
from ...core.tokens import REFERENCE_TOKENIZER

MAX_ABS_D = 15  # the paper's bound on |d|: every config that keeps to the paper's grid stays within it
# Beyond the paper, a config may widen d (find_the_origin_depth, where d is a nuisance and its rays are look-alikes
# that hide the origin): at most this far, so a chain of 8 links spans 7 * 29 + 1 = 204 lines.
MAX_WIDE_D = 29
ARRANGEMENTS = ("structured", "random")
MAX_CONTEXT_TOKENS = 1_048_576
MAX_LINES = 100_000


TARGET_POSITIONS = ("jitter", "centre")
ALL_D_VALUES = tuple(d for d in range(-MAX_ABS_D, MAX_ABS_D + 1) if d)  # the paper's -15..15 without 0
# Defaults leave out |d| = 1: there the origin's line touches the destination's, so "the chain start
# nearest the destination" answers 50-75% of those rows without following a link (see the shortcut audit).
DEFAULT_D_VALUES = tuple(d for d in ALL_D_VALUES if abs(d) > 1)
# The widest grid, ±2..±29: 56 signed distances, so a random list can hold about twice the look-alike chain shapes.
WIDE_D_VALUES = tuple(d for d in range(-MAX_WIDE_D, MAX_WIDE_D + 1) if abs(d) > 1)


class Cell(NamedTuple):
    """One point of the knob grid: a signed distance, a chain length and a length (tokens or lines)."""

    d: int
    chain_length: int
    length_unit: str  # "tokens" | "lines"
    length: int


@dataclass(frozen=True)
class FindOriginConfig:
    """Knobs of the Find the Origin family (DESIGN 4.1).

    Exactly one length axis is set: ``context_tokens`` (token budgets of the whole prompt, see below),
    ``num_lines`` (fixed line counts) or ``line_growth`` = (step, max_lines), the paper's grid of
    |d|+1, |d|+1+step, ... lines for every d.

    ``context_tokens`` budgets the whole prompt the model reads (instructions, list, question), counted with
    ``tokenizer``; with ``chat_template`` it is counted inside that tokenizer's chat template, as lm-eval's
    ``--apply_chat_template`` sends it.

    ``target_position``: ``"jitter"`` (default) puts the destination's line at a seeded uniform depth among the
    lines at least the origin's distance from both ends, recorded per instance, so no line of the answer can be
    computed from the layout and the list's ends do not tell the origin's side; ``"centre"`` is the paper's
    centring (the origin then mirrors the destination: a known hole, for paper-faithful configs only); a
    number in 0..1 fixes the depth fraction.
    """

    d_values: tuple[int, ...] = DEFAULT_D_VALUES
    context_tokens: tuple[int, ...] = (1024, 2048, 4096, 8192)
    num_lines: tuple[int, ...] = ()
    line_growth: tuple[int, ...] = ()
    chain_lengths: tuple[int, ...] = (2,)
    arrangement: str = "structured"
    target_position: str | float = "jitter"
    num_samples: int = 2
    tokenizer: str = REFERENCE_TOKENIZER
    chat_template: bool = False

    def __post_init__(self) -> None:
        require_list("d_values", self.d_values)
        for axis in ("context_tokens", "num_lines", "line_growth"):
            value = getattr(self, axis)
            require(isinstance(value, tuple), axis, value,
                    "a list of integers, e.g. [4096, 8192] (empty when another length axis is used)")
        for d in self.d_values:
            ok = isinstance(d, int) and not isinstance(d, bool) and 1 <= abs(d) <= MAX_WIDE_D
            require(ok, "d_values", d, f"integers in -{MAX_WIDE_D}..{MAX_WIDE_D} except 0 (the paper's grid is "
                    f"-{MAX_ABS_D}..{MAX_ABS_D})")
        require(len(set(self.d_values)) == len(self.d_values), "d_values", self.d_values, "distinct values")
        axes = [name for name in ("context_tokens", "num_lines", "line_growth") if getattr(self, name)]
        if len(axes) != 1:
            raise ConfigError(
                f"length: {axes or 'none'} set; allowed: exactly one of context_tokens, num_lines, line_growth"
            )
        for tokens in self.context_tokens:
            require_int_range("context_tokens", tokens, 64, MAX_CONTEXT_TOKENS)
        for lines in self.num_lines:
            require_int_range("num_lines", lines, 2, MAX_LINES)
        if self.line_growth:
            require(len(self.line_growth) == 2, "line_growth", self.line_growth, "[step, max_lines]")
            require_int_range("line_growth[0] (step)", self.line_growth[0], 1, MAX_LINES)
            require_int_range("line_growth[1] (max_lines)", self.line_growth[1], 2, MAX_LINES)
        require_list("chain_lengths", self.chain_lengths)
        for chain_length in self.chain_lengths:
            require_int_range("chain_lengths", chain_length, 2, 8)
        require(len(set(self.chain_lengths)) == len(self.chain_lengths), "chain_lengths", self.chain_lengths,
                "distinct values")
        require_choice("arrangement", self.arrangement, ARRANGEMENTS)
        if isinstance(self.target_position, str):
            require_choice("target_position", self.target_position, TARGET_POSITIONS)
        else:
            require(isinstance(self.target_position, (int, float)) and not isinstance(self.target_position, bool)
                    and 0.0 <= self.target_position <= 1.0, "target_position", self.target_position,
                    "jitter | centre | a number in 0..1")
        require_int_range("num_samples", self.num_samples, 1, 1_000_000)
        require_budget_knobs(self.tokenizer, self.chat_template)
        for lines in self.num_lines:
            for d in self.d_values:
                need = (max(self.chain_lengths) - 1) * abs(d) + 1
                require(lines >= need, "num_lines", lines,
                        f"at least (chain_length-1)*|d|+1 = {need} lines for d={d}")

    def cells(self) -> list[Cell]:
        """The knob grid; docs visit it in golden-stride order (core.cells.cell_at), so any prefix is balanced.

        Lengths vary fastest, then d, then chain length; for ``line_growth`` the k-th step of every
        (chain length, d) comes before the (k+1)-th of any.
        """
        pairs = [(c, d) for c in self.chain_lengths for d in self.d_values]
        if self.context_tokens:
            return [Cell(d, c, "tokens", n) for c, d in pairs for n in self.context_tokens]
        if self.num_lines:
            return [Cell(d, c, "lines", n) for c, d in pairs for n in self.num_lines]

        step, max_lines = self.line_growth
        steps = {(c, d): list(range((c - 1) * abs(d) + 1, max_lines + 1, step)) for c, d in pairs}
        depth = max(len(v) for v in steps.values())
        return [Cell(d, c, "lines", steps[c, d][k]) for k in range(depth) for c, d in pairs if k < len(steps[c, d])]

    def size(self) -> int:
        """Number of instances in one split: every cell, ``num_samples`` times."""
        return len(self.cells()) * self.num_samples
