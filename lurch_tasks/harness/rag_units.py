"""How `lurch-rag` cuts each family's context into retrievable units and puts the prompt back together.

One entry per family (``FAMILY_UNITS``): its unit separator (RECON: one entry per line; Find the Origin and
ImplicitHop: one link or fact per line; graph: one profile per paragraph) and how its own ``prompt.render_prompt``
is called for a doc (instructions and question unchanged). Any other family gets the word-window chunker. Units
partition the context: unit i spans [start_i, start_{i+1}) (its separator included), so the units that an evidence
span touches are exactly those ``analysis.retrieval.evidence_lines`` names for lines, and joining every unit with the
separator gives the context back byte for byte.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Units:
    texts: tuple[str, ...]
    starts: tuple[int, ...]  # each unit's first character in the context
    separator: str  # what joins two selected units (and sat between them in the context)

    def join(self, chosen: Sequence[int]) -> str:
        """The chosen units in context order, joined as the context joined them."""
        return self.separator.join(self.texts[i] for i in sorted(set(chosen)))

    def gold(self, spans: Sequence[dict]) -> list[int]:
        """The units an evidence character span touches (each unit owns its trailing separator)."""
        found: set[int] = set()
        for span in spans:
            first = bisect.bisect_right(self.starts, span["start"]) - 1
            last = bisect.bisect_right(self.starts, max(span["start"], span["end"] - 1)) - 1
            found.update(range(max(first, 0), last + 1))
        return sorted(found)


def split_on(context: str, separator: str) -> Units:
    texts = context.split(separator)
    starts, at = [], 0
    for text in texts:
        starts.append(at)
        at += len(text) + len(separator)
    return Units(tuple(texts), tuple(starts), separator)


_WORD_END = re.compile(r"\S+\s*")


def word_windows(context: str, words: int) -> Units:
    """The token-window chunker: consecutive windows of ``words`` whitespace-separated words (trailing space kept,
    joined with nothing), for a family with no natural unit."""
    pieces = [m.start() for m in _WORD_END.finditer(context)]
    starts = [0] + [pieces[i] for i in range(words, len(pieces), words)] if pieces else [0]
    ends = [*starts[1:], len(context)]
    return Units(tuple(context[s:e] for s, e in zip(starts, ends, strict=True)), tuple(starts), "")


@dataclass(frozen=True)
class FamilyUnits:
    separator: str
    render: Callable[[dict, str], str]  # (doc, context) -> the family's prompt with that context


def _find_origin(doc: dict, context: str) -> str:
    from ..families.find_origin.prompt import render_prompt

    return render_prompt(context, doc["question"])


def _graph(doc: dict, context: str) -> str:
    from ..families.graph.prompt import render_prompt

    return render_prompt(context, int(doc["difficulty"]["num_people"]), doc["question"])


def _implicit_hop(doc: dict, context: str) -> str:
    from ..families.implicit_hop.prompt import render_prompt

    return render_prompt(context, doc["question"])


def _recon(doc: dict, context: str) -> str:
    from ..families.recon.prompt import render_prompt

    return render_prompt(doc["difficulty"]["variant"], doc["difficulty"]["domain"], context, doc["question"])


FAMILY_UNITS: dict[str, FamilyUnits] = {
    "find_the_origin": FamilyUnits("\n", _find_origin),
    "graph_reconstruction": FamilyUnits("\n\n", _graph),
    "implicit_hop": FamilyUnits("\n", _implicit_hop),
    "recon": FamilyUnits("\n", _recon),
}


def units_of(doc: dict, chunk_words: int) -> Units:
    family = FAMILY_UNITS.get(doc["family"])
    if family is None:
        return word_windows(doc["context"], chunk_words)
    return split_on(doc["context"], family.separator)


def render(doc: dict, context: str) -> str:
    """The doc's prompt with ``context`` in place of its own; a family without an entry gets its context swapped
    inside its rendered prompt."""
    family = FAMILY_UNITS.get(doc["family"])
    if family is not None:
        return family.render(doc, context)
    head, found, tail = doc["prompt"].partition(doc["context"])
    if not found:
        raise ValueError(f"lurch-rag: doc {doc['id']!r} does not hold its context in its prompt; allowed: families "
                         f"{', '.join(FAMILY_UNITS)} or prompts that contain the context verbatim")
    return head + context + tail


# What each doc's lurch-rag request cost and covered, handed to ``tasks.process_results`` (same process; lm-eval scores
# after generating): doc id -> metrics of the last lurch-rag request for it.
ACCOUNTS: dict[str, dict[str, float]] = {}


def take_account(doc: dict) -> dict[str, float]:
    """The doc's lurch-rag metrics, removed once read (a later plain run of the same docs gets none)."""
    return ACCOUNTS.pop(str(doc.get("id")), {})
