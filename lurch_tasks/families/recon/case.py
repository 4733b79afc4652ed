"""The structured case: timestamped entries, each one fired production rule, and the provenance DAG read off
the firing trace (u -> v when v requires an attribute u established)."""

from __future__ import annotations

from dataclasses import dataclass, field

MINUTES_PER_DAY = 1440
LAST_DAY = 30

# Fact kinds and the DAG edge type of what they require
EDGE_TYPES = {
    "link": "causal", "conclude": "causal", "action": "causal", "close": "causal",
    "withdraw": "invalidation", "record": "conflict_resolution", "custody": "revision", "statement": "corroboration",
}


@dataclass(frozen=True)
class Entry:
    """One case entry: when it was written, its type and author, and the one fact it states (``fact['kind']``
    plus named fields). ``requires`` / ``establishes`` are the production rule that wrote it."""

    minute: int  # since Day 1, 00:00
    entry_type: str
    author: str  # "Role Full Name"
    fact: dict
    requires: tuple[str, ...] = ()
    establishes: tuple[str, ...] = ()
    structural: bool = True  # False: routine filler

    @property
    def kind(self) -> str:
        return self.fact["kind"]


def day_of(minute: int) -> int:
    return minute // MINUTES_PER_DAY + 1


def clock(minute: int) -> str:
    """'14:05' within its day."""
    within = minute % MINUTES_PER_DAY
    return f"{within // 60:02d}:{within % 60:02d}"


def stamp(minute: int) -> str:
    return f"Day {day_of(minute)}, {clock(minute)}"


def at(day: int, hour: int, minute: int = 0) -> int:
    return (day - 1) * MINUTES_PER_DAY + hour * 60 + minute


@dataclass
class Provenance:
    """The firing trace of a case, in time order: rule i fired only once every attribute it requires was
    established by an earlier rule (the producer of each attribute is kept), which makes the DAG acyclic
    and every causal edge point forward in time."""

    entries: list[Entry]
    producer: dict[str, int] = field(default_factory=dict)
    edges: list[tuple[int, int, str]] = field(default_factory=list)


class RuleError(ValueError):
    """A rule fired before its requirements held: a generator bug, never a user error."""


def fire(entries: list[Entry]) -> Provenance:
    """Fire the rules in time order (ties in list order), checking each one's requirements."""
    order = sorted(range(len(entries)), key=lambda k: (entries[k].minute, k))
    ordered = [entries[k] for k in order]
    trace = Provenance(ordered)
    for k, entry in enumerate(ordered):
        for attribute in entry.requires:
            if attribute not in trace.producer:
                raise RuleError(f"rule {entry.kind} at {stamp(entry.minute)} requires {attribute!r}, "
                                "not yet established")
            trace.edges.append((trace.producer[attribute], k, EDGE_TYPES.get(entry.kind, "causal")))
        for attribute in entry.establishes:
            trace.producer.setdefault(attribute, k)
    return trace


def node_depths(trace: Provenance) -> list[int]:
    """The longest path (in edges) ending at each rule. Edges point forward in firing order, so one pass in
    that order suffices."""
    depths = [0] * len(trace.entries)
    for u, v, _ in sorted(trace.edges, key=lambda edge: edge[1]):
        depths[v] = max(depths[v], depths[u] + 1)
    return depths


def still_implicated(entries: list[Entry]) -> set[str]:
    """People a conclusion implicates whose finding is still reachable from a lead once every withdrawn link is
    cut: the invariant is that exactly one (the culprit, or root cause) is left."""
    cut = {(e.fact["from"], e.fact["to"]) for e in entries if e.kind == "withdraw"}
    links = [(e.fact["from"], e.fact["to"]) for e in entries if e.kind == "link"]
    reached = {e.fact["clue"] for e in entries if e.kind == "lead"}
    grew = True
    while grew:
        grew = False
        for source, target in links:
            if source in reached and target not in reached and (source, target) not in cut:
                reached.add(target)
                grew = True
    return {e.fact["person"] for e in entries if e.kind == "conclude" and e.fact["clue"] in reached}


def covered(intervals: list[tuple[int, int]], start: int, end: int) -> bool:
    """Whether the union of the [low, high] intervals covers [start, end] (records placing someone)."""
    reach = start
    for low, high in sorted(intervals):
        if low > reach:
            return False
        reach = max(reach, high)
        if reach >= end:
            return True
    return reach >= end
