"""Graph reconstruction ("memory drift") configuration: every knob, validated before generation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from ...core.cells import cell_position
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

TASKS = ("edge", "subgraph", "clique")
PLACEMENTS = ("scatter", "spread", "segments", "adjacent", "random")
DECOYS = ("none", "near_miss")
PROMPT_STYLES = ("regular", "cot", "cot_expanded")
DEFAULT_PROMPT_STYLE = PROMPT_STYLES[0]
MAX_CONNECTIONS = 10
MAX_CONTEXT_TOKENS = 1_048_576
# Generous token estimates that decide which knob cells exist (tokenizer-independent, so every tokenizer gets the
# same grid): profiles measure ~110-225 cl100k tokens (~155 on average) and ~115-275 in SmolLM2's byte-level BPE
# (~195, its 90th percentile 235); the instructions and question ~250. A cell whose gold profiles alone would not
# fit its token target, with room to spare for distractors, is left out of the grid.
PROFILE_TOKENS_ESTIMATE = 235
FRAME_TOKENS_ESTIMATE = 260
# Structures planted for variety besides the config's own units (world.plant_structures): two stars of
# each degree 2-6, two cliques of each size 3-6 and six pairs.
OTHER_STRUCTURES = tuple([("star", d + 1) for d in range(2, 7) for _ in range(2)]
                         + [("clique", k) for k in range(3, 7) for _ in range(2)] + [("pair", 2)] * 6)
OTHER_STRUCTURE_PEOPLE = sum(n for _, n in OTHER_STRUCTURES)


def _people_for(context_tokens: int) -> int:
    """World size that fills a context with distractors: profiles are at least ~60 tokens, 60% spare."""
    return int(context_tokens // 60 * 1.6) + 200


def max_world_size() -> int:
    """Distinct full names the shipped name lists allow (world.make_people draws at most half of them)."""
    from ...core.vocab import load_words

    return len(load_words("first_names.txt")) * len(load_words("last_names.txt")) // 2


def largest_context_tokens() -> int:
    """The largest context target whose automatic world fits the name lists."""
    low, high = 256, MAX_CONTEXT_TOKENS
    while low < high:  # the world size grows with the target: bisect for the last that fits
        mid = (low + high + 1) // 2
        low, high = (mid, high) if _people_for(mid) <= max_world_size() else (low, mid - 1)
    return low


class Cell(NamedTuple):
    connections: int
    context_tokens: int


@dataclass(frozen=True)
class GraphConfig:
    """Knobs of the graph reconstruction family (DESIGN 4.2, paper 000).

    ``connections`` is the density axis: units (edges, stars or cliques) per prompt.
    ``world_size`` 0 sizes the seeded population automatically from the largest context target.
    ``placement``: ``scatter`` (default: each unit at a seeded place, its first and last member
    ``separation`` +- ``separation_jitter`` of the context apart), ``spread`` (the source code's cut points
    between ``spread_start`` and ``spread_end``), ``segments`` (the paper's Algorithm 2 text: unit j inside
    segment j of that window), ``adjacent`` or ``random``.
    """

    task: str = "edge"
    connections: tuple[int, ...] = (1, 3, 5, 7)
    # 2k and up: a 1k prompt holds ~6 profiles, where the gold pair's position is guessable (the fixed-gap
    # shortcut scored 0.75 on every 1k row). Shorter prompts stay available by knob.
    context_tokens: tuple[int, ...] = (2048, 4096, 8192, 16384)
    star_degree: int = 3
    clique_size: int = 3
    placement: str = "scatter"
    spread_start: float = 0.1
    spread_end: float = 1.0
    separation: float = 0.5
    separation_jitter: float = 0.25
    decoys: str = "none"
    prompt_style: str = DEFAULT_PROMPT_STYLE
    world_size: int = 0
    num_samples: int = 3
    tokenizer: str = REFERENCE_TOKENIZER
    chat_template: bool = False
    # Negative controls (issue 28): one cell per length with no gold connection, after the grid's docs.
    zero_gold: bool = field(default=False, metadata={"omit_default": True})

    def __post_init__(self) -> None:
        require_choice("task", self.task, TASKS)
        require_list("connections", self.connections)
        for k in self.connections:
            require_int_range("connections", k, 1, MAX_CONNECTIONS)
        require(len(set(self.connections)) == len(self.connections), "connections", self.connections, "distinct")
        require_list("context_tokens", self.context_tokens)
        for tokens in self.context_tokens:
            require_int_range("context_tokens", tokens, 256, MAX_CONTEXT_TOKENS)
        require_int_range("star_degree", self.star_degree, 2, 6)
        require_int_range("clique_size", self.clique_size, 3, 6)
        require_choice("placement", self.placement, PLACEMENTS)
        for name in ("spread_start", "spread_end"):
            require_number(name, getattr(self, name), 0.0, 1.0)
        require(self.spread_start <= self.spread_end, "spread_start", self.spread_start,
                f"at most spread_end ({self.spread_end})")
        require_number("separation", self.separation, 0.0, 1.0)
        require_number("separation_jitter", self.separation_jitter, 0.0, 0.5)
        require_choice("decoys", self.decoys, DECOYS)
        require_choice("prompt_style", self.prompt_style, PROMPT_STYLES)
        smallest, largest = self.min_world_size(), max_world_size()
        ok = isinstance(self.world_size, int) and not isinstance(self.world_size, bool) and (
            self.world_size == 0 or smallest <= self.world_size <= largest)
        require(ok, "world_size", self.world_size, f"0 (automatic) or an integer in {smallest}..{largest}")
        if not self.world_size and self.resolved_world_size() > largest:
            raise ConfigError(
                f"context_tokens: {max(self.context_tokens)} is not allowed: it needs a world of "
                f"{self.resolved_world_size()} people and the name lists hold {largest}; allowed: targets up to "
                f"{largest_context_tokens()}")
        require_int_range("num_samples", self.num_samples, 1, 1_000_000)
        require_budget_knobs(self.tokenizer, self.chat_template)
        require(isinstance(self.zero_gold, bool), "zero_gold", self.zero_gold, "true or false")
        if not self.grid_cells():
            smallest_target = self.unit_size * min(self.connections) * PROFILE_TOKENS_ESTIMATE + FRAME_TOKENS_ESTIMATE
            raise ConfigError(
                f"context_tokens: {list(self.context_tokens)} is too small for connections {list(self.connections)}; "
                f"allowed: targets of at least ~{smallest_target} "
                "tokens for the smallest density"
            )

    @property
    def unit_size(self) -> int:
        """People per unit: 2 for an edge, degree+1 for a star, k for a clique."""
        return {"edge": 2, "subgraph": self.star_degree + 1, "clique": self.clique_size}[self.task]

    def fits(self, connections: int, context_tokens: int) -> bool:
        return connections * self.unit_size * PROFILE_TOKENS_ESTIMATE + FRAME_TOKENS_ESTIMATE <= context_tokens

    def grid_cells(self) -> list[Cell]:
        """The knob grid (lengths fastest, then density); cells that cannot fit are left out. Docs visit it in
        golden-stride order (``cell_position``)."""
        return [Cell(k, n) for k in self.connections for n in self.context_tokens if self.fits(k, n)]

    def control_lengths(self) -> list[int]:
        """Lengths with a zero-gold control cell: those where some density of the grid fits."""
        if not self.zero_gold:
            return []
        return [n for n in self.context_tokens if any(self.fits(k, n) for k in self.connections)]

    def cells(self) -> list[Cell]:
        """The grid, then (``zero_gold``) one control cell per length, ``Cell(0, length)``."""
        return self.grid_cells() + [Cell(0, n) for n in self.control_lengths()]

    def sparse_metrics(self) -> tuple[str, ...]:
        """Metrics only some docs report: the controls' false-positive rate (harness.tasks.SPARSE_METRICS)."""
        return ("false_positive_rate",) if self.zero_gold else ()

    def cell_position(self, index: int) -> int:
        """Grid docs first, in the golden-stride order they always had (so adding controls moves no grid row),
        then the controls, lengths fastest."""
        grid = len(self.grid_cells())
        if index < grid * self.num_samples:
            return cell_position(index, grid)
        return grid + (index - grid * self.num_samples) % len(self.control_lengths())

    def sample_of(self, index: int) -> int:
        """How many times this doc's cell came round before."""
        grid = len(self.grid_cells())
        if index < grid * self.num_samples:
            return index // grid
        return (index - grid * self.num_samples) // len(self.control_lengths())

    def matched_density(self, context_tokens: int) -> int:
        """The density of the grid cell a control at this length mirrors (shares people with): the lower median
        of the densities that fit there, so controls plant as much partner-less cue material as a typical row."""
        fitting = sorted(k for k in self.connections if self.fits(k, context_tokens))
        return fitting[(len(fitting) - 1) // 2]

    def matched_index(self, index: int) -> int:
        """The grid doc whose seed (world, sampled units, distractor pool) a control doc reuses: same length,
        the matched density, same sample."""
        cell = self.cells()[self.cell_position(index)]
        grid = self.grid_cells()
        target = grid.index(Cell(self.matched_density(cell.context_tokens), cell.context_tokens))
        rank = next(r for r in range(len(grid)) if cell_position(r, len(grid)) == target)
        return self.sample_of(index) * len(grid) + rank

    def size(self) -> int:
        return len(self.cells()) * self.num_samples

    @property
    def units_needed(self) -> int:
        return max(self.connections)

    @property
    def main_units(self) -> int:
        """Units of the config's own type planted in the world: enough for the densest prompt, and variety."""
        return max(12, 3 * self.units_needed)

    def min_world_size(self) -> int:
        """People the planted structures need, leaving 30% of the world unlinked for distractors."""
        return int((self.main_units * self.unit_size + OTHER_STRUCTURE_PEOPLE) / 0.7) + 1

    def resolved_world_size(self) -> int:
        """Enough people for the structures plus distractors filling the largest context."""
        if self.world_size:
            return self.world_size
        return max(400, self.min_world_size(), _people_for(max(self.context_tokens)))
