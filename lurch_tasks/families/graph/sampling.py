"""Min-degree unit sampling (paper 000, Algorithm 1) and distractor selection.

Units are picked one at a time on a shrinking copy of the world graph; after each pick the unit's closed
neighbourhood is removed, so units are pairwise non-adjacent. Ties are broken by the sorted node tuple,
so the result is a pure function of the graph.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from itertools import combinations
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import networkx as nx

Unit = tuple[int, ...]
Adjacency = Sequence[Collection[int]] | Mapping[int, Collection[int]]  # node -> its neighbours


def _degree_sum(graph: nx.Graph, nodes: Iterable[int]) -> int:
    return sum(graph.degree(n) for n in nodes)


def pick_edge(graph: nx.Graph) -> Unit | None:
    """The edge with the smallest deg(u) + deg(v)."""
    best = None
    for u, v in graph.edges():
        pair = (min(u, v), max(u, v))
        key = (graph.degree(u) + graph.degree(v), pair)
        if best is None or key < best:
            best = key
    return best[1] if best else None


def leaves_unlinked(graph: nx.Graph, leaves: Collection[int]) -> bool:
    """No two leaves are linked, so the unit's induced subgraph is exactly the star the prompt promises
    (a degree-3 node of a K4 has a closed neighbourhood of four people, but six links among them)."""
    return not any(graph.has_edge(a, b) for a, b in combinations(sorted(leaves), 2))


def pick_star(graph: nx.Graph, degree: int) -> Unit | None:
    """Among nodes of degree exactly ``degree`` whose neighbours are pairwise unlinked, the one whose closed
    neighbourhood has the smallest degree sum; the unit is that closed neighbourhood, centre first."""
    best = None
    for node in graph.nodes():
        if graph.degree(node) != degree:
            continue
        leaves = tuple(sorted(graph.neighbors(node)))
        if not leaves_unlinked(graph, leaves):
            continue
        key = (_degree_sum(graph, (node, *leaves)), node)
        if best is None or key < best:
            best = (key[0], node, leaves)
    return (best[1], *best[2]) if best else None


def pick_clique(graph: nx.Graph, size: int) -> Unit | None:
    """Among the *maximal* cliques of exactly ``size`` nodes (``nx.find_cliques``, as the source code
    samples), the one with the smallest degree sum. A triangle inside a 4-clique is never a unit."""
    best = None
    import networkx as nx  # imported when a world is built, not when the family registers (~0.2 s)

    for clique in nx.find_cliques(graph):
        if len(clique) != size:
            continue
        members = tuple(sorted(clique))
        key = (_degree_sum(graph, members), members)
        if best is None or key < best:
            best = key
    return best[1] if best else None


def sample_units(graph: nx.Graph, task: str, parameter: int) -> list[Unit]:
    """Algorithm 1: repeatedly pick the least entangled unit, then remove its closed neighbourhood."""
    remaining = graph.copy()
    units: list[Unit] = []
    while True:
        if task == "edge":
            unit = pick_edge(remaining)
        elif task == "subgraph":
            unit = pick_star(remaining, parameter)
        elif task == "clique":
            unit = pick_clique(remaining, parameter)
        else:
            raise ValueError(f"task: {task!r} is not allowed; allowed: edge | subgraph | clique")
        if unit is None:
            return units
        units.append(unit)
        closed = set(unit)
        for node in unit:
            closed.update(remaining.neighbors(node))
        remaining.remove_nodes_from(sorted(closed))


def independent_distractors(adjacency: Adjacency, selected: Sequence[int], candidates: Sequence[int]) -> list[int]:
    """Candidates (in the given order) adjacent to no selected node and to no earlier accepted candidate.
    ``adjacency[node]`` lists a node's neighbours (``World.neighbours``, or a networkx graph's ``adj``)."""
    blocked = set(selected)
    for node in selected:
        blocked.update(adjacency[node])
    accepted: list[int] = []
    accept, block, block_all = accepted.append, blocked.add, blocked.update  # bound once: a world's worth of nodes
    for node in candidates:
        if node in blocked:
            continue
        accept(node)
        block(node)
        if linked := adjacency[node]:  # most people of a world have no link
            block_all(linked)
    return accepted


def induced_edges(adjacency: Adjacency, nodes: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted edges of the subgraph induced by ``nodes`` (``adjacency`` as in ``independent_distractors``)."""
    members = set(nodes)
    return sorted({(u, v) if u < v else (v, u) for u in members for v in adjacency[u] if v in members})
