"""Find the Origin configuration: every knob, validated before any generation starts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from ...core.config import ConfigError, require, require_choice, require_int_range, require_list, require_number
from ...core.tokens import REFERENCE_TOKENIZER

MAX_ABS_D = 15
ARRANGEMENTS = ("structured", "random")
MAX_CONTEXT_TOKENS = 1_048_576
MAX_LINES = 100_000


class Cell(NamedTuple):
    """One point of the knob grid: a signed distance and a length (tokens or lines)."""

    d: int
    length_unit: str  # "tokens" | "lines"
    length: int


@dataclass(frozen=True)
class FindOriginConfig:
    """Knobs of the Find the Origin family (DESIGN 4.1).

    Exactly one length axis is set: ``context_tokens`` (token targets for the context),
    ``num_lines`` (fixed line counts) or ``line_growth`` = (step, max_lines), the paper's grid of
    |d|+1, |d|+1+step, ... lines for every d.
    """

    d_values: tuple[int, ...] = (-15, -10, -5, -1, 1, 5, 10, 15)
    context_tokens: tuple[int, ...] = (1024, 2048, 4096, 8192)
    num_lines: tuple[int, ...] = ()
    line_growth: tuple[int, ...] = ()
    chain_length: int = 2
    arrangement: str = "structured"
    target_position: float | None = None
    num_samples: int = 5
    tokenizer: str = REFERENCE_TOKENIZER

    def __post_init__(self) -> None:
        require_list("d_values", self.d_values)
        for axis in ("context_tokens", "num_lines", "line_growth"):
            value = getattr(self, axis)
            require(isinstance(value, tuple), axis, value, "a list (empty when another length axis is used)")
        for d in self.d_values:
            ok = isinstance(d, int) and not isinstance(d, bool) and 1 <= abs(d) <= MAX_ABS_D
            require(ok, "d_values", d, f"integers in -{MAX_ABS_D}..{MAX_ABS_D} except 0")
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
        require_int_range("chain_length", self.chain_length, 2, 8)
        require_choice("arrangement", self.arrangement, ARRANGEMENTS)
        if self.target_position is not None:
            require_number("target_position", self.target_position, 0.0, 1.0)
        require_int_range("num_samples", self.num_samples, 1, 1_000_000)
        require(isinstance(self.tokenizer, str) and bool(self.tokenizer), "tokenizer", self.tokenizer,
                "a tokenizer id (cl100k_base) or a Hugging Face tokenizer path")
        for lines in self.num_lines:
            for d in self.d_values:
                need = (self.chain_length - 1) * abs(d) + 1
                require(lines >= need, "num_lines", lines,
                        f"at least (chain_length-1)*|d|+1 = {need} lines for d={d}")

    def cells(self) -> list[Cell]:
        """The knob grid in doc order: round-robin so that any prefix is balanced.

        Lengths vary fastest, then d; for ``line_growth`` the k-th step of every d comes before the
        (k+1)-th of any.
        """
        if self.context_tokens:
            return [Cell(d, "tokens", n) for d in self.d_values for n in self.context_tokens]
        if self.num_lines:
            return [Cell(d, "lines", n) for d in self.d_values for n in self.num_lines]

        step, max_lines = self.line_growth
        per_d = {d: list(range((self.chain_length - 1) * abs(d) + 1, max_lines + 1, step)) for d in self.d_values}
        depth = max(len(v) for v in per_d.values())
        return [Cell(d, "lines", per_d[d][k]) for k in range(depth) for d in self.d_values if k < len(per_d[d])]

    def size(self) -> int:
        """Number of instances in one split: every cell, ``num_samples`` times."""
        return len(self.cells()) * self.num_samples

    @property
    def centre(self) -> float:
        return 0.5 if self.target_position is None else float(self.target_position)
