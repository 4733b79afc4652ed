"""Evidence of a context in reference tokens and characters, and its LURCH scope and dispersion."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .difficulty import evidence_dispersion, evidence_scope, reasoning_width, step_count
from .tokens import token_spans


@dataclass(frozen=True)
class EvidenceMeasures:
    """Evidence spans in chars and reference tokens, and the LURCH scope/dispersion in both units."""

    spans: tuple[dict, ...]
    context_ref_tokens: int
    scope: float
    dispersion: float
    scope_chars: float
    dispersion_chars: float


def measure_evidence(prompt_starts: np.ndarray, context_start: int, context_chars: int,
                     evidence_chars: Sequence[tuple[int, int]]) -> EvidenceMeasures:
    """Evidence of a context that sits at ``context_start`` in a prompt, from the prompt's reference token
    starts (one tokenization). The context's tokens are the prompt tokens that start inside it, numbered
    from 0; a token that begins before the context and runs into it counts toward no span start."""
    low, high = np.searchsorted(prompt_starts, [context_start, context_start + context_chars], side="left")
    starts = prompt_starts[low:high] - context_start
    return evidence_measures(token_spans(starts, list(evidence_chars)), len(starts), context_chars, evidence_chars)


def evidence_measures(token_ranges: Sequence[tuple[int, int]], num_tokens: int, context_chars: int,
                      evidence_chars: Sequence[tuple[int, int]]) -> EvidenceMeasures:
    """Evidence of a context of ``num_tokens`` reference tokens whose evidence spans cover ``token_ranges``."""
    spans = tuple(
        {"start": s, "end": e, "token_start": ts, "token_end": te}
        for (s, e), (ts, te) in zip(evidence_chars, token_ranges, strict=True)
    )
    return EvidenceMeasures(
        spans=spans,
        context_ref_tokens=num_tokens,
        scope=evidence_scope(list(token_ranges), num_tokens),
        dispersion=evidence_dispersion(list(token_ranges), num_tokens),
        scope_chars=evidence_scope(evidence_chars, context_chars),
        dispersion_chars=evidence_dispersion(evidence_chars, context_chars),
    )


def line_token_ranges(line_costs: Sequence[int], evidence_rows: Sequence[int]) -> tuple[list[tuple[int, int]], int]:
    """Token ranges of the ``evidence_rows`` of lines laid end to end with these token costs, in row order,
    and the lines' total: evidence offsets without a tokenizer pass, exact where no token crosses a line
    junction (each family's docstring says why its lines never do)."""
    bounds = np.concatenate([[0], np.cumsum(line_costs, dtype=np.int64)]).tolist()
    return [(bounds[row], bounds[row + 1]) for row in evidence_rows], bounds[-1]


def line_char_spans(lines: Sequence[str], rows: Sequence[int], separator: str) -> list[tuple[int, int]]:
    """Character spans of ``rows`` (in that order) in ``separator.join(lines)``."""
    starts = np.concatenate([[0], np.cumsum([len(line) + len(separator) for line in lines], dtype=np.int64)]).tolist()
    return [(starts[row], starts[row] + len(lines[row])) for row in rows]


def laid_end_to_end(starts: Sequence[np.ndarray], lengths: Sequence[int]) -> np.ndarray:
    """Token starts of texts written one after another, from each text's own starts (relative to it) and
    character length. Exact when every junction is a boundary the tokenizer never merges across."""
    if not starts:
        return np.zeros(0, dtype=np.int64)
    offsets = np.cumsum([0, *lengths[:-1]])
    return np.concatenate([np.asarray(s, dtype=np.int64) + offset for s, offset in zip(starts, offsets, strict=True)])


def lurch_difficulty(encoding, context_start: int, context: str, target_tokens: int, evidence: EvidenceMeasures,
                     depth: int, graph: tuple[Sequence[dict], Sequence[Sequence[str]]]) -> dict:
    """The difficulty fields every family records, in one order: the context's and prompt's tokens (as the
    model reads them), the token target, the LURCH evidence scope and dispersion (reference tokens and
    characters) and the reasoning depth. ``encoding`` is the prompt's (``PromptEncoding``)."""
    return {
        "context_tokens": encoding.tokens_between(context_start, context_start + len(context)),
        "context_chars": len(context),
        "target_tokens": target_tokens,
        "prompt_tokens": encoding.tokens,
        "evidence_scope": evidence.scope,
        "evidence_dispersion": evidence.dispersion,
        "evidence_scope_chars": evidence.scope_chars,
        "evidence_dispersion_chars": evidence.dispersion_chars,
        "reasoning_depth": depth,
        "reasoning_width": reasoning_width(*graph),
        "step_count": step_count(graph[0]),
    }
