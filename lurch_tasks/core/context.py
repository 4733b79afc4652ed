"""Assembling a context from text blocks while tracking which blocks are evidence."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .difficulty import evidence_dispersion, evidence_scope, merge_spans
from .tokens import TokenCounter, index_tokens


@dataclass(frozen=True)
class Block:
    text: str
    is_evidence: bool = False


@dataclass(frozen=True)
class AssembledContext:
    text: str
    evidence_chars: tuple[tuple[int, int], ...]


def assemble(blocks: Sequence[Block], separator: str = "\n") -> AssembledContext:
    """Join blocks with ``separator``; evidence spans are the character ranges of evidence blocks."""
    parts: list[str] = []
    spans: list[tuple[int, int]] = []
    offset = 0
    for i, block in enumerate(blocks):
        if i:
            parts.append(separator)
            offset += len(separator)
        if block.is_evidence:
            spans.append((offset, offset + len(block.text)))
        parts.append(block.text)
        offset += len(block.text)
    return AssembledContext("".join(parts), tuple(merge_spans(spans)))


@dataclass(frozen=True)
class EvidenceMeasures:
    """Evidence spans in chars and reference tokens, and the LURCH scope/dispersion in both units."""

    spans: tuple[dict, ...]
    context_ref_tokens: int
    scope: float
    dispersion: float
    scope_chars: float
    dispersion_chars: float


def measure_evidence(
    text: str, evidence_chars: Sequence[tuple[int, int]], reference: TokenCounter
) -> EvidenceMeasures:
    """Tokenize ``text`` once with the reference tokenizer and express evidence in both units."""
    index = index_tokens(text, reference)
    token_spans = [index.token_span(s, e) for s, e in evidence_chars]
    spans = tuple(
        {"start": s, "end": e, "token_start": ts, "token_end": te}
        for (s, e), (ts, te) in zip(evidence_chars, token_spans, strict=True)
    )
    return EvidenceMeasures(
        spans=spans,
        context_ref_tokens=index.num_tokens,
        scope=evidence_scope(token_spans, index.num_tokens),
        dispersion=evidence_dispersion(token_spans, index.num_tokens),
        scope_chars=evidence_scope(evidence_chars, len(text)),
        dispersion_chars=evidence_dispersion(evidence_chars, len(text)),
    )
