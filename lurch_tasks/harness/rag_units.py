"""How `lurch-rag` cuts each family's context into retrievable units and puts the prompt back together.

Each family brings its own units (``Family.rag_units``, a ``core.registry.RagUnits``: the unit separator and how its
own ``prompt.render_prompt`` is called for a doc; RECON: one entry per line; Find the Origin and ImplicitHop: one link
or fact per line; graph: one profile per paragraph). Any other family gets the word-window chunker kept here. Units
partition the context: unit i spans [start_i, start_{i+1}) (its separator included), so the units that an evidence
span touches are exactly those ``analysis.retrieval.evidence_lines`` names for lines, and joining every unit with the
separator gives the context back byte for byte.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..core.registry import RagUnits


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


def family_units(doc: dict) -> RagUnits | None:
    """The doc's family's own units and re-render (``Family.rag_units``), None when it brings none."""
    from ..core.registry import get_family

    return get_family(doc["family"]).rag_units


def units_of(doc: dict, chunk_words: int) -> Units:
    family = family_units(doc)
    if family is None:
        return word_windows(doc["context"], chunk_words)
    return split_on(doc["context"], family.separator)


def render(doc: dict, context: str) -> str:
    """The doc's prompt with ``context`` in place of its own; a family that brings no ``rag_units`` gets its context
    swapped inside its rendered prompt."""
    family = family_units(doc)
    if family is not None:
        return family.render(doc, context)
    head, found, tail = doc["prompt"].partition(doc["context"])
    if not found:
        raise ValueError(f"lurch-rag: doc {doc['id']!r} does not hold its context in its prompt; allowed: families "
                         "with rag_units (core.registry.RagUnits) or prompts that contain the context verbatim")
    return head + context + tail


def anchored_coverage(doc: dict, units: Units, sent: str) -> dict[str, float]:
    """RECON's paper's recall: the share of the doc's gold units whose anchor (``RagUnits.anchor``: RECON's entry
    header) appears verbatim in ``sent``, the context the inner model read, and whether all do. It needs no unit
    indices, so it also measures a memory that rewrites what it stored (a rewrite that drops the headers scores 0
    here, which is why the paper leaves Mem0 out of it). Empty for a family without anchors or a doc without gold."""
    family = family_units(doc)
    anchor = getattr(family, "anchor", None)
    if anchor is None:
        return {}
    anchors = [a for a in (anchor(units.texts[i]) for i in units.gold(doc.get("evidence") or [])) if a]
    if not anchors:
        return {}
    held = sum(a in sent for a in anchors)
    return {"header_coverage": held / len(anchors), "header_full_coverage": float(held == len(anchors))}


# --- what one doc's lurch-rag request read, wrote and retrieved, handed to ``tasks.process_results`` -------------

# The per-doc metrics, averaged by lm-eval (``lm_task.LurchTask`` declares them, only in runs that report them), with
# whether higher is better (None: neither).
RAG_METRICS: dict[str, bool | None] = {"prompt_tokens": False, "completion_tokens": False, "retrieved_units": None,
                                       "coverage": True, "full_coverage": True, "dropped_units": False,
                                       "ingest_cpu_seconds": False, "ingest_wall_seconds": False,
                                       "header_coverage": True, "header_full_coverage": True}
RECORD_KEY = "lurch_rag"  # the per-doc record (settings, unit indices, written queries): a top-level sample key


class RagAnswer(str):
    """The inner model's answer (the text itself, unchanged), carrying its doc's account (``RAG_METRICS`` and the
    ``RECORD_KEY`` record) to ``tasks.process_results``.

    Why on the answer and not in a side table keyed by doc id: lm-eval hands ``process_results`` exactly the objects
    the model returned for that doc's requests (its default ``take_first`` filter passes them through), so the account
    cannot reach another doc, task or run, whatever ids they share, and nothing is left behind in the process. Only a
    filter that rewrites the answer (a regex filter; our YAMLs declare none) would drop it: the doc then reports no
    rag metrics, never another doc's. lm-eval's samples JSONL stores the answer as a plain string."""

    account: dict

    def __new__(cls, text: str, account: dict) -> RagAnswer:
        answer = super().__new__(cls, text)
        answer.account = account
        return answer


def answer_account(output: object) -> dict:
    """What a lurch-rag answer carries (empty for any other model's answer)."""
    account = getattr(output, "account", None)
    return dict(account) if isinstance(output, RagAnswer) and isinstance(account, dict) else {}
