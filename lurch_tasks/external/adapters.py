"""Items of other benchmarks in the shape ``core.item_properties.Item`` measures: one adapter per common shape that
carries evidence. Each takes one record (a JSON object) and returns an Item, or raises a ValueError naming the field.

* ``generic``: ``context``; ``evidence`` as a list of ``{"start", "end"}`` character spans or of quoted passages;
  optional ``prompt`` (the whole text the model reads) and ``reasoning_graph`` (``{"nodes": [{"id", "kind"}],
  "edges": [[from, to]]}``, kinds ``evidence`` / ``step`` / ``answer``).
* ``hotpotqa``: ``context`` as ``[[title, [sentence, ...]], ...]`` and ``supporting_facts`` as ``[[title,
  sentence index], ...]``. The context is rendered one paragraph per title (``title``, a newline, its sentences as
  written), paragraphs separated by a blank line; each supporting sentence is one span.
* ``babi``: ``story`` as lines ``"<id> <text>"`` (bAbI's files) or ``[{"id", "text"}]``, and ``supporting_facts`` as
  line ids. The context is the story's texts, one per line (ids dropped); each supporting line is one span.
* ``ruler``: ``context`` (or ``input``) and ``needles`` as ``[{"text", "position"}]``: each needle's character
  position, checked against the text found there.
* ``lurch``: a row of ours (``lurch materialize``): ``context``, ``prompt``, ``evidence`` spans, ``reasoning_graph``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..core.item_properties import Item
from .locate import locate

Span = tuple[int, int]
HOTPOT_PARAGRAPHS = "\n\n"


def _text(record: Mapping[str, Any], *names: str) -> str:
    for name in names:
        if isinstance(record.get(name), str):
            return record[name]
    raise ValueError(f"{' or '.join(names)}: missing or not a string")


def item_id(record: Mapping[str, Any], default: str) -> str:
    """The record's own id (``id``, ``_id`` or ``qid``), else ``default`` (where it was read)."""
    for name in ("id", "_id", "qid"):
        if isinstance(record.get(name), (str, int)) and not isinstance(record.get(name), bool):
            return str(record[name])
    return default


def _graph(record: Mapping[str, Any]) -> Mapping[str, Any] | None:
    graph = record.get("reasoning_graph")
    if graph is None:
        return None
    if not isinstance(graph, Mapping):
        raise ValueError("reasoning_graph: not an object with nodes and edges")
    return graph


def generic(record: Mapping[str, Any], default_id: str) -> Item:
    context = _text(record, "context")
    evidence = record.get("evidence")
    if not isinstance(evidence, list) or not evidence:
        raise ValueError("evidence: missing or empty; allowed: a list of {start, end} spans or of quoted passages")
    spans: list[Span] = []
    for number, entry in enumerate(evidence, 1):
        if isinstance(entry, str):
            spans.append(locate(context, entry, number))
        elif isinstance(entry, Mapping) and all(isinstance(entry.get(k), int) and not isinstance(entry.get(k), bool)
                                                for k in ("start", "end")):
            spans.append((entry["start"], entry["end"]))
        else:
            raise ValueError(f"evidence {number}: {str(entry)[:60]!r} is neither a quoted passage nor a "
                             "{start, end} span")
    prompt = record.get("prompt")
    if prompt is not None and not isinstance(prompt, str):
        raise ValueError("prompt: not a string")
    return Item(item_id(record, default_id), context, tuple(spans), prompt, _graph(record))


def hotpotqa(record: Mapping[str, Any], default_id: str) -> Item:
    paragraphs = record.get("context")
    if not isinstance(paragraphs, list) or not all(
            isinstance(p, (list, tuple)) and len(p) == 2 and isinstance(p[0], str) and isinstance(p[1], list)
            and all(isinstance(s, str) for s in p[1]) for p in paragraphs):
        raise ValueError("context: not HotpotQA's [[title, [sentence, ...]], ...]")
    pieces: list[str] = []
    where: dict[tuple[str, int], Span] = {}
    offset = 0
    for number, (title, sentences) in enumerate(paragraphs):
        if number:
            pieces.append(HOTPOT_PARAGRAPHS)
            offset += len(HOTPOT_PARAGRAPHS)
        pieces.append(title + "\n")
        offset += len(title) + 1
        for index, sentence in enumerate(sentences):
            where.setdefault((title, index), (offset, offset + len(sentence)))
            pieces.append(sentence)
            offset += len(sentence)
    facts = record.get("supporting_facts")
    if not isinstance(facts, list) or not facts:
        raise ValueError("supporting_facts: missing or empty; allowed: [[title, sentence index], ...]")
    spans = []
    for number, fact in enumerate(facts, 1):
        key = (fact[0], fact[1]) if isinstance(fact, (list, tuple)) and len(fact) == 2 else None
        if key not in where:
            raise ValueError(f"supporting_facts {number}: {str(fact)[:60]} names no sentence of the context")
        spans.append(where[key])
    return Item(item_id(record, default_id), "".join(pieces), tuple(spans), None, _graph(record))


def babi(record: Mapping[str, Any], default_id: str) -> Item:
    story = record.get("story")
    if not isinstance(story, list) or not story:
        raise ValueError("story: missing or empty; allowed: lines '<id> <text>' or [{id, text}]")
    lines: list[tuple[str, str]] = []
    for number, line in enumerate(story, 1):
        if isinstance(line, str) and " " in line.strip():
            line_id, text = line.strip().split(" ", 1)
        elif isinstance(line, Mapping) and isinstance(line.get("text"), str) and line.get("id") is not None:
            line_id, text = str(line["id"]), line["text"]
        else:
            raise ValueError(f"story {number}: {str(line)[:60]!r} is neither '<id> <text>' nor {{id, text}}")
        lines.append((line_id, text))
    where: dict[str, Span] = {}
    offset = 0
    for line_id, text in lines:
        if line_id in where:
            raise ValueError(f"story: line id {line_id} occurs twice")
        where[line_id] = (offset, offset + len(text))
        offset += len(text) + 1
    facts = record.get("supporting_facts")
    if not isinstance(facts, list) or not facts:
        raise ValueError("supporting_facts: missing or empty; allowed: a list of story line ids")
    missing = [str(f) for f in facts if str(f) not in where]
    if missing:
        raise ValueError(f"supporting_facts: line id {missing[0]} is not in the story")
    context = "\n".join(text for _, text in lines)
    return Item(item_id(record, default_id), context, tuple(where[str(f)] for f in facts), None, _graph(record))


def ruler(record: Mapping[str, Any], default_id: str) -> Item:
    context = _text(record, "context", "input")
    needles = record.get("needles")
    if not isinstance(needles, list) or not needles:
        raise ValueError("needles: missing or empty; allowed: [{text, position}]")
    spans = []
    for number, needle in enumerate(needles, 1):
        text = needle.get("text") if isinstance(needle, Mapping) else None
        position = needle.get("position") if isinstance(needle, Mapping) else None
        if not isinstance(text, str) or not isinstance(position, int) or isinstance(position, bool):
            raise ValueError(f"needles {number}: not {{text, position}}")
        if context[position:position + len(text)] != text:
            raise ValueError(f"needles {number}: the context at position {position} is not the needle's text")
        spans.append((position, position + len(text)))
    return Item(item_id(record, default_id), context, tuple(spans), None, _graph(record))


def lurch(record: Mapping[str, Any], default_id: str) -> Item:
    """A row of ours: its evidence spans (characters of its context) and its graph, measured inside its prompt."""
    evidence = record.get("evidence")
    if not isinstance(evidence, list):
        raise ValueError("evidence: not a list of spans")
    return Item(item_id(record, default_id), _text(record, "context"),
                tuple((int(e["start"]), int(e["end"])) for e in evidence), _text(record, "prompt"), _graph(record))


ADAPTERS: dict[str, Callable[[Mapping[str, Any], str], Item]] = {
    "generic": generic, "hotpotqa": hotpotqa, "babi": babi, "ruler": ruler, "lurch": lurch,
}
