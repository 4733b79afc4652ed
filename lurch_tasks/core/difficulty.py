"""LURCH difficulty properties (DESIGN 3.4): evidence scope, evidence dispersion, reasoning depth."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import networkx as nx

Span = tuple[int, int]
STEP_KINDS = frozenset({"step"})


def merge_spans(spans: Iterable[Span]) -> list[Span]:
    """Sorted union of half-open spans; touching spans merge."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if end <= start:
            continue
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(s, e) for s, e in merged]


def evidence_scope(spans: Sequence[Span], total: int) -> float:
    """|union of evidence| / |context|; 0 for an empty context."""
    if total <= 0:
        return 0.0
    return sum(e - s for s, e in merge_spans(spans)) / total


def evidence_dispersion(spans: Sequence[Span], total: int) -> float:
    """Non-evidence text between the first evidence start and the last evidence end, over all
    non-evidence text. 0 for one contiguous span or no non-evidence text at all."""
    merged = merge_spans(spans)
    if not merged:
        return 0.0
    covered = sum(e - s for s, e in merged)
    non_evidence = total - covered
    if non_evidence <= 0:
        return 0.0
    inside_gaps = (merged[-1][1] - merged[0][0]) - covered
    return inside_gaps / non_evidence


def reasoning_depth(nodes: Sequence[dict], edges: Sequence[Sequence[str]]) -> int:
    """Most inference steps on any path of the reasoning graph (parallel lookups add no depth).

    ``nodes`` carry ``id`` and ``kind`` (``evidence`` | ``step`` | ``answer``); only ``step`` nodes count.
    """
    graph = nx.DiGraph()
    kinds = {node["id"]: node["kind"] for node in nodes}
    graph.add_nodes_from(sorted(kinds))
    graph.add_edges_from((src, dst) for src, dst in edges)
    if not nx.is_directed_acyclic_graph(graph):
        raise ValueError("reasoning_graph: the graph has a cycle; it must be a DAG")
    best: dict[str, int] = {}
    for node in nx.lexicographical_topological_sort(graph):
        incoming = max((best[p] for p in graph.predecessors(node)), default=0)
        best[node] = incoming + (1 if kinds.get(node) in STEP_KINDS else 0)
    return max(best.values(), default=0)


def length_bin(target_tokens: int, context_tokens: int) -> int:
    """The length bin of an instance: its token target, or else the power of two at or above its size."""
    if target_tokens:
        return target_tokens
    return 1 << max(context_tokens - 1, 0).bit_length()
