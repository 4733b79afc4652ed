"""LURCH difficulty properties (DESIGN 3.4): evidence scope, evidence dispersion, reasoning depth, and the reasoning
graph's width and step count (seed 004, appendix E)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from graphlib import CycleError, TopologicalSorter

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


def _predecessors(nodes: Sequence[dict], edges: Sequence[Sequence[str]]) -> tuple[dict[str, str], list[str],
                                                                               dict[str, list[str]]]:
    """(kind per node, a topological order, predecessors per node); a ValueError for a cycle."""
    kinds = {node["id"]: node["kind"] for node in nodes}
    predecessors: dict[str, list[str]] = {node: [] for node in kinds}
    for src, dst in edges:
        predecessors.setdefault(dst, []).append(src)
        predecessors.setdefault(src, [])
    try:
        order = list(TopologicalSorter(predecessors).static_order())
    except CycleError as err:
        raise ValueError("reasoning_graph: the graph has a cycle; it must be a DAG") from err
    return kinds, order, predecessors


def reasoning_depth(nodes: Sequence[dict], edges: Sequence[Sequence[str]]) -> int:
    """Most inference steps on any path of the reasoning graph (parallel lookups add no depth).

    ``nodes`` carry ``id`` and ``kind`` (``evidence`` | ``step`` | ``answer``); only ``step`` nodes count.
    """
    kinds, order, predecessors = _predecessors(nodes, edges)
    best: dict[str, int] = {}
    for node in order:  # longest path: any topological order gives the same maximum
        incoming = max((best[p] for p in predecessors[node]), default=0)
        best[node] = incoming + (1 if kinds.get(node) in STEP_KINDS else 0)
    return max(best.values(), default=0)


def reasoning_width(nodes: Sequence[dict], edges: Sequence[Sequence[str]]) -> int:
    """The most steps that can run side by side: step nodes grouped by their level (the most steps on a path
    ending at them), the largest group. A chain has width 1; two lookups combined by a third step, width 2."""
    kinds, order, predecessors = _predecessors(nodes, edges)
    level: dict[str, int] = {}
    for node in order:
        incoming = max((level[p] for p in predecessors[node]), default=0)
        level[node] = incoming + (1 if kinds.get(node) in STEP_KINDS else 0)
    counts: dict[int, int] = {}
    for node, kind in kinds.items():
        if kind in STEP_KINDS:
            counts[level[node]] = counts.get(level[node], 0) + 1
    return max(counts.values(), default=0)


def step_count(nodes: Sequence[dict]) -> int:
    """How many inference steps the reasoning graph holds (its ``step`` nodes), dependent or not."""
    return sum(1 for node in nodes if node["kind"] in STEP_KINDS)


def length_bin(target_tokens: int, context_tokens: int) -> int:
    """The length bin of an instance: its token target, or else the power of two at or above its size."""
    if target_tokens:
        return target_tokens
    return 1 << max(context_tokens - 1, 0).bit_length()
