"""Token costs of fact lines from their templates and their names, without splitting or tokenizing the lines.

Every fact line is a template's literal text around two names (or a name and a year). In a GPT-2-style tokenizer
(``core.pieces``) a line's pieces are then its literals' pieces and its names' pieces: a letters-only name ends
a piece on both sides, and a literal's last space joins the name after it. So a line costs its template's pieces
(counted once per process) plus its names' (each name counted once per instance), in the run's tokenizer and in
the reference one (cl100k, whose simple lines cost their word pieces: ``PieceLines.reference_costs``). The same
costs as ``line_tokens`` and ``ReferenceOnDemand`` give, at a fraction of the time: the split is checked on probe
names per template once per process, and wherever a check fails the caller takes the general path.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ...core.budget import joined_costs
from ...core.pieces import learn_reference_words, piece_table, pieces_apply, split_pieces
from .kb import Fact, KnowledgeBase, _split_template, render_facts
from .schema import RELATIONS, YEAR

_NAME = re.compile(r"[A-Z][A-Za-z]*(?: [A-Za-z]+)*")  # a name that ends a piece on both sides
_SIMPLE_LINE = re.compile(r"[A-Za-z]+(?: [A-Za-z]+)*\.")  # as ``core.pieces``: costed from its word pieces
PROBES = (("Ab", "Cd Ef"), ("Gh Ij Kl", "Mn"))
_DATED = frozenset(relation.id for relation in RELATIONS if relation.target == YEAR)


@dataclass(frozen=True)
class Shape:
    """A template as the pieces of its three literals (the last with the line's newline) and its two fields."""

    literals: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]
    fields: tuple[str, str]  # "s" or "t", in line order
    spaced: tuple[bool, bool]  # whether a field's first piece takes the space before it
    simple: bool  # whether every rendering is a simple line (reference costs from its word pieces)

    def pieces(self, source: str, target: str) -> list[str]:
        values = {"s": source, "t": target}
        first, middle, last = self.literals
        return [*first, *name_pieces(values[self.fields[0]], self.spaced[0]), *middle,
                *name_pieces(values[self.fields[1]], self.spaced[1]), *last]


def name_pieces(value: str, spaced: bool) -> list[str]:
    return split_pieces(" " + value if spaced else value)


def _shape(template: str) -> Shape:
    first, field_1, middle, field_2, last = _split_template(template)
    if first and not "A" <= first[0] <= "Z":  # render_facts capitalises a line's first letter
        first = first[0].upper() + first[1:]
    spaced = (first.endswith(" "), middle.endswith(" "))
    literals = (tuple(split_pieces(first[:-1] if spaced[0] else first)),
                tuple(split_pieces(middle[:-1] if spaced[1] else middle)), tuple(split_pieces(last + "\n")))
    return Shape(literals, (field_1, field_2), spaced, False)


def _probe_line(relation, phrasing: int, source: str, target: str) -> str:
    names = (source, target)
    value = 1850 if relation.target == YEAR else 1
    kb = KnowledgeBase(names, ("x", "x"), (Fact(relation.id, 0, value, phrasing),))
    return render_facts(kb, list(kb.facts))[0]


_SHAPES: dict[tuple[str, int], Shape] | None = None


def shapes() -> dict[tuple[str, int], Shape] | None:
    """Every template's ``Shape``, checked on probe names against the regex split of the rendered line (once per
    process); None if any template's pieces are not its literals' and its names' (then no shape is used)."""
    global _SHAPES
    if _SHAPES is None:
        built: dict[tuple[str, int], Shape] = {}
        for relation in RELATIONS:
            for phrasing, template in enumerate(relation.facts):
                shape = _shape(template)
                simple = True
                for source, target in PROBES:
                    line = _probe_line(relation, phrasing, source, target)
                    value = "1850" if relation.target == YEAR else target
                    if (split_pieces(line + "\n") != shape.pieces(source, value) or line[:1].isspace()
                            or "\n" in line):
                        _SHAPES = {}
                        return None
                    simple = simple and _SIMPLE_LINE.fullmatch(line) is not None
                built[(relation.id, phrasing)] = Shape(shape.literals, shape.fields, shape.spaced, simple)
        _SHAPES = built
    return _SHAPES or None


def fact_line_costs(kb: KnowledgeBase, facts: Sequence[Fact], lines: Sequence[str], counter,
                    reference) -> tuple[list[int], list[int]] | None:
    """(costs in ``counter``, costs in ``reference``) of the fact lines ``lines`` (``render_facts(kb, facts)``),
    each with its newline, exactly as ``line_tokens(lines, counter, "\\n").costs()`` and
    ``PieceLines.reference_costs`` give them; None where these shortcuts do not apply (not a GPT-2-style tokenizer,
    a name that is not letters and single spaces, text ``core.pieces`` may not split, a template whose pieces fail
    the probe check). The caller checks that the reference tokenizer ``sums_over_lines`` over ``lines``."""
    known = shapes()
    if known is None or not lines or len(lines) != len(facts) or not counter.splits_like_gpt2:
        return None
    if not pieces_apply(counter, "\n".join(lines) + "\n") or not all(map(_NAME.fullmatch, kb.names)):
        return None
    # a line's two values as codes ``2 * index + spaced`` into ``values`` (the names, then any year a line states):
    # the columns read off the facts at once (a named tuple transposes in C), one list step per line, no array
    relations, sources, targets, phrasings = zip(*facts, strict=True)
    keys = list(zip(relations, phrasings, strict=True))
    used = list(dict.fromkeys(keys))
    values = list(kb.names)
    if not _DATED.isdisjoint(relations):
        years: dict[int, int] = {}
        targets = list(targets)
        for k, relation in enumerate(relations):
            if relation in _DATED:
                year = targets[k]
                if year not in years:
                    years[year] = len(values)
                    values.append(str(year))
                targets[k] = years[year]
    used_shapes = [known[key] for key in used]
    # per shape: (source first, spaced first, spaced second); codes from the source's and the target's index
    layout = {key: (shape.fields[0] == "s", *shape.spaced) for key, shape in zip(used, used_shapes, strict=True)}
    first, second = [], []
    for key, source, target in zip(keys, sources, targets, strict=True):
        source_first, spaced_first, spaced_second = layout[key]
        if source_first:
            first.append(2 * source + spaced_first)
            second.append(2 * target + spaced_second)
        else:
            first.append(2 * target + spaced_first)
            second.append(2 * source + spaced_second)
    codes = sorted({*first, *second})
    named = len(kb.names)  # a name's pieces are its words (``_NAME``), a year's are the regex's
    split = [_words(values[code >> 1], code & 1) if code >> 1 < named
             else name_pieces(values[code >> 1], bool(code & 1)) for code in codes]
    value_pieces = [piece for pieces in split for piece in pieces]

    table = piece_table(counter)
    if not table.learn(value_pieces):
        return None
    if _LEARNED.get(("run", counter.name)) is not table.counts:  # a new table: every template's literals once
        if not table.learn(_all_literals(known) + value_pieces):
            return None
        _LEARNED[("run", counter.name)] = table.counts
    counts = table.counts
    costs = _summed(codes, split, counts.__getitem__, used, keys, first, second, table=counts)

    words = learn_reference_words(value_pieces, reference)
    if _LEARNED.get(("reference", reference.name)) is not words:
        words = learn_reference_words(_all_literals(known, simple=True) + value_pieces, reference)
        _LEARNED[("reference", reference.name)] = words
    references = _summed(codes, split, lambda piece: words.get(piece, 0), used, keys, first, second, table=words)
    others = {key for key, shape in zip(used, used_shapes, strict=True) if not shape.simple}
    if others:  # a year's line (or any other that is not simple) is tokenized, as ``reference_costs`` does
        rows = [k for k, key in enumerate(keys) if key in others]
        for k, cost in zip(rows, joined_costs([lines[k] for k in rows], reference, "\n"), strict=True):
            references[k] = cost
    return costs, references


def _words(name: str, spaced: int) -> list[str]:
    """``name_pieces`` of a name of letters and single spaces: its words, each after a space but the first
    unless ``spaced``."""
    words = name.split(" ")
    return [(" " + words[0]) if spaced else words[0], *(" " + word for word in words[1:])]


_LEARNED: dict[tuple[str, str], dict] = {}  # the piece table (by identity) each tokenizer's literals were learned in


def _all_literals(known: dict[tuple[str, int], Shape], simple: bool = False) -> list[str]:
    """Every template's literal pieces (only the simple templates' with ``simple``)."""
    return [piece for shape in known.values() if shape.simple or not simple for part in shape.literals
            for piece in part]


def _summed(codes: list[int], split: list[list[str]], count, used: list[tuple[str, int]],
            keys: list[tuple[str, int]], first: list[int], second: list[int], table: dict) -> list[int]:
    """Each line's literal pieces' counts plus its two values' (``count``: of a piece in ``table``)."""
    per_code = dict(zip(codes, [sum(map(count, pieces)) for pieces in split], strict=True))
    literal = dict(zip(used, _literal_sums(table, used, count), strict=True))
    return [literal[key] + per_code[a] + per_code[b] for key, a, b in zip(keys, first, second, strict=True)]


_LITERAL_SUMS: dict[int, tuple[dict, dict[tuple[str, int], int]]] = {}


def _literal_sums(table: dict, used: list[tuple[str, int]], count) -> list[int]:
    """Each shape's literal pieces' counts summed, remembered per piece table (a table replaced when full starts
    afresh): a template's literals are the same in every instance."""
    held = _LITERAL_SUMS.get(id(table))
    if held is None or held[0] is not table:
        if len(_LITERAL_SUMS) > 4:  # tables replaced when full: not kept alive here
            _LITERAL_SUMS.clear()
        held = _LITERAL_SUMS[id(table)] = (table, {})
    sums = held[1]
    for key in used:
        if key not in sums:
            sums[key] = sum(count(piece) for part in shapes()[key].literals for piece in part)
    return [sums[key] for key in used]
