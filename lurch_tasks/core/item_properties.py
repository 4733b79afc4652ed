"""The LURCH properties of any item: a context, its evidence spans and (optionally) its reasoning graph, measured with
the same code our families use (``core.context``, ``core.difficulty``), so a benchmark's items and ours share units.

Tokens are counted as a model reads the text: when an item carries the whole ``prompt`` its context sits in, the
prompt is tokenized once and the context's tokens are those starting inside it (as every family does); otherwise the
context alone is tokenized.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .context import measure_evidence
from .difficulty import reasoning_depth, reasoning_width, step_count
from .tokens import REFERENCE_TOKENIZER, get_token_counter

Span = tuple[int, int]


@dataclass(frozen=True)
class Item:
    """One item to measure: ``evidence`` as character spans of ``context``; ``prompt`` (optional) the whole text the
    model reads, holding ``context`` once; ``graph`` (optional) ``{"nodes": [{id, kind}], "edges": [[a, b]]}``."""

    id: str
    context: str
    evidence: tuple[Span, ...]
    prompt: str | None = None
    graph: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


PROPERTY_FIELDS = ("context_tokens", "context_chars", "evidence_spans", "evidence_scope", "evidence_dispersion",
                   "evidence_scope_chars", "evidence_dispersion_chars", "reasoning_depth", "reasoning_width",
                   "step_count")


def measure_item(item: Item, tokenizer: str = REFERENCE_TOKENIZER) -> dict[str, Any]:
    """The item's properties in ``tokenizer`` (scope and dispersion in its tokens and in characters; the graph's
    depth, width and step count, None without a graph). A ValueError names what cannot be measured."""
    text = item.prompt if item.prompt is not None else item.context
    start = text.find(item.context) if item.prompt is not None else 0
    if start < 0:
        raise ValueError("prompt: does not contain the context")
    for number, (low, high) in enumerate(item.evidence, 1):
        if not 0 <= low < high <= len(item.context):
            raise ValueError(f"evidence {number}: span [{low}, {high}) is not inside the {len(item.context)}-character "
                             "context")
    starts = get_token_counter(tokenizer).token_starts(text)  # one tokenization for every token measure
    evidence = measure_evidence(starts, start, len(item.context), list(item.evidence))
    low, high = np.searchsorted(starts, [start, start + len(item.context)], side="left")
    out: dict[str, Any] = {
        "context_tokens": int(high - low),
        "context_chars": len(item.context),
        "evidence_spans": len(item.evidence),
        "evidence_scope": evidence.scope,
        "evidence_dispersion": evidence.dispersion,
        "evidence_scope_chars": evidence.scope_chars,
        "evidence_dispersion_chars": evidence.dispersion_chars,
    }
    return {**out, **graph_properties(item.graph)}


def graph_properties(graph: Mapping[str, Any] | None) -> dict[str, int | None]:
    """Depth, width and step count of a reasoning graph (None each without one)."""
    if graph is None:
        return {"reasoning_depth": None, "reasoning_width": None, "step_count": None}
    nodes, edges = _graph_parts(graph)
    return {"reasoning_depth": reasoning_depth(nodes, edges), "reasoning_width": reasoning_width(nodes, edges),
            "step_count": step_count(nodes)}


def _graph_parts(graph: Mapping[str, Any]) -> tuple[list[dict], list[Sequence[str]]]:
    nodes, edges = graph.get("nodes"), graph.get("edges", [])
    if not isinstance(nodes, list) or not all(isinstance(n, dict) and isinstance(n.get("id"), str)
                                              and n.get("kind") in ("evidence", "step", "answer") for n in nodes):
        raise ValueError("reasoning_graph: nodes must be a list of {id, kind}, kind one of evidence, step, answer")
    ids = {n["id"] for n in nodes}
    if not isinstance(edges, list) or not all(isinstance(e, (list, tuple)) and len(e) == 2 and e[0] in ids
                                              and e[1] in ids for e in edges):
        raise ValueError("reasoning_graph: edges must be [from, to] pairs of node ids")
    return nodes, edges
