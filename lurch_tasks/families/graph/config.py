"""Graph reconstruction ("memory drift") configuration: every knob, validated before generation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from ...core.config import ConfigError, require, require_choice, require_int_range
from ...core.tokens import REFERENCE_TOKENIZER

TASKS = ("edge", "subgraph", "clique")
PLACEMENTS = ("spread", "adjacent", "random")
DECOYS = ("none", "near_miss")
PROMPT_STYLES = ("regular", "cot", "cot_expanded")
MAX_CONNECTIONS = 10
MAX_CONTEXT_TOKENS = 1_048_576
# A generous per-profile token estimate (profiles measure ~70-110 cl100k tokens): a knob cell whose
# connections alone would not fit its token target is left out of the grid.
PROFILE_TOKENS_ESTIMATE = 120


class Cell(NamedTuple):
    connections: int
    context_tokens: int


@dataclass(frozen=True)
class GraphConfig:
    """Knobs of the graph reconstruction family (DESIGN 4.2, paper 000).

    ``connections`` is the density axis: units (edges, stars or cliques) per prompt.
    ``world_size`` 0 sizes the seeded population automatically from the largest context target.
    """

    task: str = "edge"
    connections: tuple[int, ...] = (1, 3, 5, 7)
    context_tokens: tuple[int, ...] = (1024, 2048, 4096, 8192, 16384)
    star_degree: int = 3
    clique_size: int = 3
    placement: str = "spread"
    spread_start: float = 0.1
    spread_end: float = 1.0
    decoys: str = "none"
    prompt_style: str = "regular"
    world_size: int = 0
    num_samples: int = 3
    tokenizer: str = REFERENCE_TOKENIZER

    def __post_init__(self) -> None:
        require_choice("task", self.task, TASKS)
        require(len(self.connections) > 0, "connections", self.connections, "a non-empty list")
        for k in self.connections:
            require_int_range("connections", k, 1, MAX_CONNECTIONS)
        require(len(set(self.connections)) == len(self.connections), "connections", self.connections, "distinct")
        require(len(self.context_tokens) > 0, "context_tokens", self.context_tokens, "a non-empty list")
        for tokens in self.context_tokens:
            require_int_range("context_tokens", tokens, 256, MAX_CONTEXT_TOKENS)
        require_int_range("star_degree", self.star_degree, 2, 6)
        require_int_range("clique_size", self.clique_size, 3, 6)
        require_choice("placement", self.placement, PLACEMENTS)
        for name in ("spread_start", "spread_end"):
            value = getattr(self, name)
            require(isinstance(value, (int, float)) and 0.0 <= value <= 1.0, name, value, "a number in 0..1")
        require(self.spread_start <= self.spread_end, "spread_start", self.spread_start,
                f"at most spread_end ({self.spread_end})")
        require_choice("decoys", self.decoys, DECOYS)
        require_choice("prompt_style", self.prompt_style, PROMPT_STYLES)
        require(self.world_size == 0 or (isinstance(self.world_size, int) and 100 <= self.world_size <= 50_000),
                "world_size", self.world_size, "0 (automatic) or an integer in 100..50000")
        require_int_range("num_samples", self.num_samples, 1, 1_000_000)
        require(isinstance(self.tokenizer, str) and bool(self.tokenizer), "tokenizer", self.tokenizer,
                "a tokenizer id (cl100k_base) or a Hugging Face tokenizer path")
        if not self.cells():
            raise ConfigError(
                f"context_tokens: {list(self.context_tokens)} is too small for connections {list(self.connections)}; "
                f"allowed: targets of at least ~{self.unit_size * min(self.connections) * PROFILE_TOKENS_ESTIMATE} "
                "tokens for the smallest density"
            )

    @property
    def unit_size(self) -> int:
        """People per unit: 2 for an edge, degree+1 for a star, k for a clique."""
        return {"edge": 2, "subgraph": self.star_degree + 1, "clique": self.clique_size}[self.task]

    def fits(self, connections: int, context_tokens: int) -> bool:
        return connections * self.unit_size * PROFILE_TOKENS_ESTIMATE <= context_tokens

    def cells(self) -> list[Cell]:
        """The knob grid in doc order (lengths fastest, then density); cells that cannot fit are left out."""
        return [Cell(k, n) for k in self.connections for n in self.context_tokens if self.fits(k, n)]

    def size(self) -> int:
        return len(self.cells()) * self.num_samples

    @property
    def units_needed(self) -> int:
        return max(self.connections)

    def resolved_world_size(self) -> int:
        """Enough people for the structures plus distractors filling the largest context."""
        if self.world_size:
            return self.world_size
        distractors = max(self.context_tokens) // 60  # profiles are at least ~60 tokens
        return max(400, int(distractors * 1.6) + 200)
