"""RECON configuration: every knob, validated before any generation starts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from ...core.cells import cell_position
from ...core.config import (
    require,
    require_budget_knobs,
    require_choice,
    require_int_range,
    require_list,
)
from ...core.tokens import REFERENCE_TOKENIZER
from .catalog import DOMAINS
from .formats import FORMATS, quota_slots
from .formats import QUOTA as _QUOTA
from .questions import CATEGORIES

MIN_CONTEXT_TOKENS = 16_384  # the structure of a case (nine trails, a conflict, ...) fills about half of this
MAX_CONTEXT_TOKENS = 131_072
MIN_HOPS, MAX_HOPS = 3, 15
VARIANTS = ("narrative", "oracle", "closedbook")


class Cell(NamedTuple):
    domain: str
    context_tokens: int
    category: str
    format: str


@dataclass(frozen=True)
class ReconConfig:
    """Knobs of the RECON family (DESIGN 4.4).

    ``domains`` (criminal, medical, financial) and ``context_tokens`` (the prompt budget of a case, 16k-128k) make
    the case cells; ``num_samples`` cases per cell, each asking the quota matrix's questions
    (``formats.QUOTA``: one per category and format) for the ``categories`` and ``formats`` kept. ``min_hops`` /
    ``max_hops`` bound the links of each evidence trail (3-15; medical and financial cases stop at 9, as RECON's
    provenance is shallower there). ``variant``: the case as narrated
    entries (``narrative``), as canonical JSON entries (``oracle``) or left out (``closedbook``); the cases and
    questions are the same in all three (a compared knob)."""

    domains: tuple[str, ...] = DOMAINS
    categories: tuple[str, ...] = CATEGORIES
    formats: tuple[str, ...] = FORMATS
    context_tokens: tuple[int, ...] = (16_384, 32_768)
    min_hops: int = MIN_HOPS
    max_hops: int = MAX_HOPS
    variant: str = "narrative"
    num_samples: int = 48  # 288 cases: 288 rows per (category, format), enough for the shortcut audits
    tokenizer: str = REFERENCE_TOKENIZER
    chat_template: bool = False

    def __post_init__(self) -> None:
        for name, values, allowed in (("domains", self.domains, DOMAINS), ("categories", self.categories, CATEGORIES),
                                      ("formats", self.formats, FORMATS)):
            require_list(name, values)
            for value in values:
                require_choice(name, value, allowed)
            require(len(set(values)) == len(values), name, list(values), "distinct values")
        require_list("context_tokens", self.context_tokens)
        for tokens in self.context_tokens:
            require_int_range("context_tokens", tokens, MIN_CONTEXT_TOKENS, MAX_CONTEXT_TOKENS)
        require(len(set(self.context_tokens)) == len(self.context_tokens), "context_tokens",
                list(self.context_tokens), "distinct values")
        require_int_range("min_hops", self.min_hops, MIN_HOPS, MAX_HOPS)
        require_int_range("max_hops", self.max_hops, self.min_hops, MAX_HOPS)
        asked = sorted({f for c in self.categories for f in _QUOTA[c]})
        require(bool(self.slots()), "formats", list(self.formats), f"a format the kept categories ask ({asked})")
        require_choice("variant", self.variant, VARIANTS)
        require_int_range("num_samples", self.num_samples, 1, 1_000_000)
        require_budget_knobs(self.tokenizer, self.chat_template)

    def sparse_metrics(self) -> tuple[str, ...]:
        """Metrics only the abstention controls report (harness.tasks.SPARSE_METRICS): when a control slot is kept
        and a cell has enough cases to hold a control case."""
        from .formats import CONTROLS
        from .questions import ABSTAIN_EVERY

        has_controls = self.num_samples >= ABSTAIN_EVERY and any(slot in CONTROLS for slot in self.slots())
        return ("abstain_correct", "false_answer_rate") if has_controls else ()

    def slots(self) -> list[tuple[str, str]]:
        """The (category, format) questions of every case."""
        return quota_slots(self.categories, self.formats)

    def cells(self) -> list[Cell]:
        """Case cells (domain, length) times quota slots, slots fastest."""
        return [Cell(d, n, c, f) for d in self.domains for n in self.context_tokens for c, f in self.slots()]

    def cell_position(self, index: int) -> int:
        """Docs are case-major: the questions of one case sit on consecutive indices (so a stored config's
        compression sees a case's text once per case, not once per question), and cases visit the (domain,
        length) cells in golden-stride order, so any prefix covers every domain and length."""
        per_case = len(self.slots())
        cases = len(self.domains) * len(self.context_tokens)
        case, category = divmod(index, per_case)
        return cell_position(case % cases, cases) * per_case + category

    def block_rows(self) -> int:
        """Rows that belong together (one case's questions): a stored file never splits them, so the case's text is
        compressed once and generated once."""
        return len(self.slots())

    def size(self) -> int:
        return len(self.cells()) * self.num_samples
