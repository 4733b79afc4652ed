"""Shortcut strategies for graph reconstruction: list connections without comparing a single identifier.

Every strategy reads only the prompt. It may use positions, lengths, counts and the *kind* of each cue
sentence (which template wrote it: a call record, a plate, a flight, ...), never the values. Two profiles are
"kind-compatible" when one holds one side of a pair template and the other the other side (or both hold a
group sentence): the most a solver can learn about a link without reading the identifier.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

from ...core.probe import (
    CandidateTable,
    LearnedProbe,
    ProbeItem,
    as_features,
    likely_answers,
    mention_positions,
    rank_features,
)
from ...core.shortcuts import Probe, Shortcut, register_audit_type
from .placement import cut_fractions
from .prompt import ANSWER_MARKER, PROFILE_SEPARATOR, profile_name, split_prompt
from .world import PAIR_CUE_KINDS, cue_templates

MAX_UNITS = 10
_SENTENCE_SPLIT = re.compile(r"(?<=\.) (?=[A-Z])")


def _template_regex(template: str) -> re.Pattern[str]:
    parts = re.split(r"(\{[A-Za-z]+\})", template)
    return re.compile("^" + "".join(".+?" if p.startswith("{") else re.escape(p) for p in parts if p) + "$")


# (kind, side) of every cue template: side 0/1 for the two phrasings of a pair cue, "g<i>" for groups.
_TEMPLATES: tuple[tuple[tuple[str, str], re.Pattern[str]], ...] = tuple(
    [((kind, str(side)), _template_regex(t)) for kind in PAIR_CUE_KINDS for side, t in enumerate(cue_templates(kind))]
    + [(("group", f"g{i}"), _template_regex(t)) for i, t in enumerate(cue_templates("group"))]
)


def template_of(sentence: str) -> tuple[str, str] | None:
    """The cue template that wrote ``sentence`` (kind, side), or None for biography / own details."""
    for label, pattern in _TEMPLATES:
        if pattern.match(sentence):
            return label
    return None


@dataclass(frozen=True)
class ProfileView:
    name: str
    chars: int
    sentences: tuple[str, ...]
    templates: tuple[tuple[str, str] | None, ...]

    @property
    def cue_like(self) -> int:
        return sum(1 for t in self.templates if t)

    def sides(self) -> frozenset[tuple[str, str]]:
        return frozenset(("group", "g") if t[0] == "group" else t for t in self.templates if t)


@dataclass(frozen=True)
class View:
    profiles: tuple[ProfileView, ...]
    task: str  # edge | subgraph | clique, read from the task hint


def _task_of(prompt: str) -> str:
    if "star-shaped" in prompt:
        return "subgraph"
    if "everyone is connected to everyone else" in prompt:
        return "clique"
    return "edge"


@lru_cache(maxsize=8)
def view(prompt: str) -> View:
    profiles = []
    for paragraph in split_prompt(prompt):
        name = profile_name(paragraph)
        if name is None:
            continue
        body = paragraph[len(name) + 2:]
        sentences = tuple(_SENTENCE_SPLIT.split(body))
        profiles.append(ProfileView(name, len(paragraph), sentences, tuple(template_of(s) for s in sentences)))
    return View(tuple(profiles), _task_of(prompt))


def compatible(a: ProfileView, b: ProfileView) -> bool:
    sa, sb = a.sides(), b.sides()
    if ("group", "g") in sa and ("group", "g") in sb:
        return True
    return any((kind, "0") in sa and (kind, "1") in sb or (kind, "1") in sa and (kind, "0") in sb
               for kind in PAIR_CUE_KINDS)


def _render(pairs) -> str:
    lines = sorted({" -- ".join(sorted((a, b))) for a, b in pairs if a != b})
    return f"{ANSWER_MARKER}\n" + "\n".join(lines)


def _unit_size(task: str) -> int:
    return {"edge": 2, "subgraph": 4, "clique": 3}[task]  # the default star degree 3 and clique size 3


def _unit_pairs(v: View, members: list[int]) -> list[tuple[str, str]]:
    names = [v.profiles[m].name for m in members if 0 <= m < len(v.profiles)]
    return list(combinations(names, 2))


def _compatible_at(v: View, pairs_of_indices) -> str:
    n = len(v.profiles)
    out = [(v.profiles[i].name, v.profiles[j].name) for i, j in pairs_of_indices
           if 0 <= i < n and 0 <= j < n and i != j and compatible(v.profiles[i], v.profiles[j])]
    return _render(out)


def _adjacent(prompt: str, _: object) -> str:
    v = view(prompt)
    return _compatible_at(v, [(i, i + 1) for i in range(len(v.profiles) - 1)])


def _mirror(prompt: str, _: object) -> str:
    v = view(prompt)
    n = len(v.profiles)
    return _compatible_at(v, [(i, n - 1 - i) for i in range(n // 2)])


def _gap(prompt: str, fraction: float) -> str:
    v = view(prompt)
    n = len(v.profiles)
    gap = max(1, round(fraction * n))
    return _compatible_at(v, [(i, i + gap) for i in range(n - gap)])


def _cut_points(prompt: str, variant: tuple[str, int]) -> str:
    """The source code's layouts, inverted: with k units of u members among n profiles, ``spread`` puts
    member i of unit j at cut_i + i*k + j, ``adjacent`` puts unit j's members together at cut_j + j*u."""
    mode, k = variant
    v = view(prompt)
    u = _unit_size(v.task)
    distractors = len(v.profiles) - k * u
    if distractors < 0:
        return _render([])
    pairs = []
    if mode == "spread":
        cuts = [round(f * distractors) for f in cut_fractions(u, 0.1, 1.0)]
        for j in range(k):
            pairs += _unit_pairs(v, [cuts[i] + i * k + j for i in range(u)])
    else:
        cuts = [round(f * distractors) for f in cut_fractions(k, 0.1, 1.0)]
        for j in range(k):
            pairs += _unit_pairs(v, [cuts[j] + j * u + i for i in range(u)])
    return _render(pairs)


def _segments(prompt: str, k: int) -> str:
    """Algorithm 2's segments: pair the first kind-compatible profiles inside each of k segments."""
    v = view(prompt)
    n = len(v.profiles)
    pairs = []
    for j in range(k):
        low, high = round((0.1 + 0.9 * j / k) * n), round((0.1 + 0.9 * (j + 1) / k) * n)
        inside = list(range(low, min(high, n)))
        found = next(((a, b) for a, b in combinations(inside, 2) if compatible(v.profiles[a], v.profiles[b])), None)
        if found:
            pairs.append((v.profiles[found[0]].name, v.profiles[found[1]].name))
    return _render(pairs)


def _unique_kind_match(prompt: str, _: object) -> str:
    """Pair two profiles when they are the only holders of the two sides of one cue kind."""
    v = view(prompt)
    holders: dict[tuple[str, str], list[int]] = {}
    for i, p in enumerate(v.profiles):
        for side in p.sides():
            holders.setdefault(side, []).append(i)
    pairs = []
    for kind in PAIR_CUE_KINDS:
        a, b = holders.get((kind, "0"), []), holders.get((kind, "1"), [])
        if len(a) == 1 and len(b) == 1 and a != b:
            pairs.append((v.profiles[a[0]].name, v.profiles[b[0]].name))
    group = holders.get(("group", "g"), [])
    if 2 <= len(group) <= 6:
        pairs += _unit_pairs(v, group)
    return _render(pairs)


def _greedy_pairs(v: View, ranked: list[int], m: int) -> str:
    """The top 2m profiles of ``ranked``, each paired with the next compatible one in rank order."""
    top, used, pairs = ranked[: 2 * m], set(), []
    for a in top:
        if a in used:
            continue
        partner = next((b for b in top if b != a and b not in used and compatible(v.profiles[a], v.profiles[b])),
                       None)
        if partner is not None:
            used.update((a, partner))
            pairs.append((v.profiles[a].name, v.profiles[partner].name))
    return _render(pairs)


def _longest(prompt: str, m: int) -> str:
    v = view(prompt)
    ranked = sorted(range(len(v.profiles)), key=lambda i: (-v.profiles[i].chars, i))
    return _greedy_pairs(v, ranked, m)


def _most_cue_like(prompt: str, m: int) -> str:
    v = view(prompt)
    ranked = sorted(range(len(v.profiles)), key=lambda i: (-v.profiles[i].cue_like, i))
    return _greedy_pairs(v, ranked, m)


def _ends(last: bool):
    def answer(prompt: str, _: object) -> str:
        v = view(prompt)
        u, n = _unit_size(v.task), len(v.profiles)
        return _render(_unit_pairs(v, list(range(n - u, n)) if last else list(range(u))))
    return answer


# ---------------------------------------------------------------- probes (need the row's gold labels)


def _gold_people(row: dict) -> set[str]:
    return {name for pair in json.loads(row["answer"]) for name in pair}


def _per_profile(feature):
    def features(row: dict) -> list[tuple[float, bool]]:
        v, gold = view(row["prompt"]), _gold_people(row)
        n = len(v.profiles)
        return [(feature(p, i, n), p.name in gold) for i, p in enumerate(v.profiles)]
    return features


def _cue_sentences(row: dict) -> list[tuple[tuple[str, str], int, int, str, str]]:
    """Every cue-template sentence: (template, index in profile, sentences in profile, text, holder)."""
    out = []
    for p in view(row["prompt"]).profiles:
        for i, (sentence, template) in enumerate(zip(p.sentences, p.templates, strict=True)):
            if template:
                out.append((template, i, len(p.sentences), sentence, p.name))
    return out


def _evidence_texts(row: dict) -> set[str]:
    return {row["context"][s["start"]: s["end"]] for s in row["evidence"]}


def _cue_template(row: dict) -> list[tuple[object, bool]]:
    gold = _evidence_texts(row)
    return [("/".join(t), s in gold) for t, _, _, s, _ in _cue_sentences(row)]


def _decoy_vs_gold(feature):
    """Every gold cue sentence and every sentence holding a decoy value, whatever template wrote it."""
    def features(row: dict) -> list[tuple[object, bool]]:
        gold = _evidence_texts(row)
        keys = [d["near_miss"] for d in json.loads(row["params"])["decoys"]]
        out = []
        for p in view(row["prompt"]).profiles:
            for i, (sentence, template) in enumerate(zip(p.sentences, p.templates, strict=True)):
                decoy = any(k in sentence for k in keys)
                if decoy or sentence in gold:
                    out.append((feature(template or ("other", "-"), i, len(p.sentences)), decoy))
        return out
    return features


_GAPS = tuple(round(0.05 * k, 2) for k in range(2, 19))
_LAYOUTS = tuple((mode, k) for mode in ("spread", "adjacent") for k in range(1, MAX_UNITS + 1))
_COUNTS = tuple(range(1, MAX_UNITS + 1))

SHORTCUTS = (
    Shortcut("adjacent_profiles", "position", "kind-compatible neighbours in the prompt", _adjacent),
    Shortcut("mirror_profiles", "position", "kind-compatible profiles i and n-1-i", _mirror),
    Shortcut("fixed_gap", "position", "kind-compatible profiles a fixed fraction of the prompt apart (best fraction)",
             _gap, variants=_GAPS),
    Shortcut("cut_points", "position", "the source code's cut-point layouts inverted for k units (best k)",
             _cut_points, variants=_LAYOUTS),
    Shortcut("segments", "position", "first kind-compatible pair inside each of k segments (best k)", _segments,
             variants=_COUNTS),
    Shortcut("first_profiles", "position", "the first profiles as one unit", _ends(False)),
    Shortcut("last_profiles", "position", "the profiles nearest the question as one unit", _ends(True)),
    Shortcut("longest_profiles", "length", "the 2m longest profiles paired by cue kind (best m)", _longest,
             variants=_COUNTS),
    Shortcut("most_cue_sentences", "frequency", "the 2m profiles with the most cue-like sentences, paired by cue "
             "kind (best m)", _most_cue_like, variants=_COUNTS),
    Shortcut("unique_kind_match", "family", "cue kinds without values: the only two holders of the two sides of a "
             "kind", _unique_kind_match),
)

PROBES = (
    Probe("profile_length", "length", "characters of a profile; gold = a person in a gold edge",
          _per_profile(lambda p, i, n: float(p.chars))),
    Probe("cue_sentence_count", "frequency", "cue-like sentences in a profile",
          _per_profile(lambda p, i, n: float(p.cue_like))),
    Probe("profile_position", "position", "position of a profile in the prompt",
          _per_profile(lambda p, i, n: i / max(n - 1, 1))),
    Probe("profile_centrality", "position", "closeness of a profile to the middle of the prompt",
          _per_profile(lambda p, i, n: -abs(i / max(n - 1, 1) - 0.5))),
    Probe("cue_template", "template", "which template wrote a cue-like sentence; gold = a gold cue sentence",
          _cue_template, categorical=True),
    Probe("decoy_template", "template", "which template wrote a sentence; decoys vs gold cue sentences",
          _decoy_vs_gold(lambda t, i, n: "/".join(t)), categorical=True),
    Probe("decoy_slot", "position", "place of a sentence in its profile; decoys vs gold cue sentences",
          _decoy_vs_gold(lambda t, i, n: i / max(n - 1, 1))),
)


# ---------------------------------------------------------------- learned probe (core.probe)

# Pairs of a row whose prompt holds more people are not probed: candidates grow as n^2 (a 128k prompt holds ~840
# profiles, 350k pairs), and the 2k-32k rows of every config exercise the same layout code at the same relative
# positions, which is what the features read.
MAX_PROBED_PEOPLE = 240


@dataclass(frozen=True)
class PersonFeatures:
    """Reasoning-free statistics of one profile: where and how often its person is mentioned, how long it is,
    how many sentences look like cues, never an identifier."""

    name: str
    surname: str
    index: int
    sides: frozenset[tuple[str, str]]
    templates: frozenset[tuple[str, str]]
    values: tuple[float, ...]  # (position, chars, sentences, cue-like, group sentences, name length, *surname ranks)


def _person_features(context: str, v: View) -> list[PersonFeatures]:
    size, offset, out = max(len(context), 1), 0, []
    for i, p in enumerate(v.profiles):
        surname = p.name.split(" ", 1)[-1]
        groups = sum(1 for t in p.templates if t and t[0] == "group")
        values = (offset / size, float(p.chars), float(len(p.sentences)), float(p.cue_like), float(groups),
                  float(len(p.name)), *rank_features(mention_positions(context, surname)))
        out.append(PersonFeatures(p.name, surname, i, p.sides(), frozenset(t for t in p.templates if t), values))
        offset += p.chars + len(PROFILE_SEPARATOR)
    return out


def _compatible_kinds(a: PersonFeatures, b: PersonFeatures) -> int:
    """Cue kinds whose two sides the two profiles hold between them (both group sentences count as one)."""
    both_groups = ("group", "g") in a.sides and ("group", "g") in b.sides
    return int(both_groups) + sum(1 for kind in PAIR_CUE_KINDS if ((kind, "0") in a.sides and (kind, "1") in b.sides)
                                  or ((kind, "1") in a.sides and (kind, "0") in b.sides))


def pair_features(a: PersonFeatures, b: PersonFeatures, n: int, shared_lines: int) -> tuple[float, ...]:
    """Symmetric features of an unordered pair: each person's statistics as (min, max), then how far apart the
    two profiles sit, whether they are neighbours, and what their cue *templates* (never values) allow."""
    gap = abs(a.values[0] - b.values[0])
    kinds = _compatible_kinds(a, b)
    own = [f(x, y) for x, y in zip(a.values, b.values, strict=True) for f in (min, max)]
    return as_features((*own, gap, gap * gap, abs(a.index - b.index) / max(n - 1, 1), abs(a.index - b.index) == 1,
                        kinds, kinds > 0, len(a.templates & b.templates), a.surname == b.surname, shared_lines,
                        math.log(n)))


# Every cue template's (kind, side) label, numbered: a profile's templates are kept as one integer, bit k = label k.
_LABELS: tuple[tuple[str, str], ...] = tuple(label for label, _ in _TEMPLATES)
_LABEL_BIT = {label: 1 << k for k, label in enumerate(_LABELS)}


def _template_mask(templates: frozenset[tuple[str, str]]) -> int:
    return sum(_LABEL_BIT[t] for t in templates)


# A PairTable expands to n(n-1)/2 pairs x 34 features when the probe is fitted, and one read back from a record
# on disk may hold anything: past these it is refused. Rows are probed up to MAX_PROBED_PEOPLE (the default
# configs' largest probed row holds 214 people, memory_drift_edge_long); 480 people are 114,960 pairs, ~31 MB.
MAX_TABLE_PEOPLE = 2 * MAX_PROBED_PEOPLE
MAX_TABLE_PARAGRAPHS = 4 * MAX_TABLE_PEOPLE  # a paragraph index in holders (a prompt has one per profile)
MAX_TABLE_VALUES = 64  # PersonFeatures.values per person (12 today)


def _table_problem(table: PairTable) -> str | None:
    """What makes ``table`` one _probe_read cannot have built (field, value, allowed), or None."""
    n = len(table.names)
    if not 2 <= n <= MAX_TABLE_PEOPLE:
        return f"{n} people; allowed: 2..{MAX_TABLE_PEOPLE} (its n(n-1)/2 pairs are built when the probe is fitted)"
    if not all(isinstance(name, str) and 0 < len(name) <= 200 for name in table.names):
        return "names: not all strings of 1 to 200 characters; allowed: the prompt's people"
    width = len(table.values[0]) if table.values and isinstance(table.values[0], tuple) else -1
    if not (len(table.values) == n and 0 < width <= MAX_TABLE_VALUES and all(
            isinstance(v, tuple) and len(v) == width and all(isinstance(x, (int, float)) for x in v)
            for v in table.values)):
        return f"values: not {n} tuples of one length of numbers; allowed: PersonFeatures.values per person"
    if not (len(table.templates) == n and all(type(t) is int and 0 <= t < 1 << len(_LABELS)
                                               for t in table.templates)):
        return f"templates: not {n} masks of {len(_LABELS)} bits; allowed: one template mask per person"
    if not (len(table.holders) == n and all(isinstance(rows, tuple) and all(
            type(k) is int and 0 <= k < MAX_TABLE_PARAGRAPHS for k in rows) for rows in table.holders)):
        return f"holders: not {n} tuples of paragraph indices; allowed: indices in 0..{MAX_TABLE_PARAGRAPHS - 1}"
    pairs = n * (n - 1) // 2
    if not (all(type(k) is int and 0 <= k < pairs for k in table.gold) and list(table.gold) == sorted(set(table.gold))):
        return f"gold: not increasing pair positions; allowed: positions in 0..{pairs - 1}"
    return None


@lru_cache(maxsize=4)
def _pair_indices(n: int):
    """(i, j) of every pair i < j in ``combinations(range(n), 2)`` order."""
    import numpy as np

    return np.triu_indices(n, 1)


@register_audit_type
@dataclass(frozen=True)
class PairTable(CandidateTable):
    """Every pair of a row's people, packed: per person the statistics :func:`pair_features` reads, from which
    each pair's features are rebuilt exactly (the same floats) when the probe is fitted. A 16k-token row keeps
    ~100 people instead of ~5,000 pairs x 34 features."""

    names: tuple[str, ...]  # the prompt's people, in profile order
    values: tuple[tuple[float, ...], ...]  # per person: PersonFeatures.values
    templates: tuple[int, ...]  # per person: its cue templates, one bit per label of _LABELS
    holders: tuple[tuple[int, ...], ...]  # per person: the paragraphs that mention its surname
    gold: tuple[int, ...]  # positions of the gold pairs among the candidates

    def __post_init__(self) -> None:
        for name in ("names", "values", "templates", "holders", "gold"):
            if not isinstance(getattr(self, name), tuple):
                raise ValueError(f"PairTable: field {name!r} is a {type(getattr(self, name)).__name__}; allowed: a "
                                 "tuple")
        problem = _table_problem(self)
        if problem is not None:
            raise ValueError(f"PairTable: {problem}")

    def golds(self) -> tuple[bool, ...]:
        gold = set(self.gold)
        return tuple(k in gold for k in range(len(self)))

    def __len__(self) -> int:
        n = len(self.names)
        return n * (n - 1) // 2

    def width(self) -> int:
        return 2 * len(self.values[0]) + 10  # as pair_features: (min, max) of each value, then 10 of the pair

    def answer(self, k: int) -> str:
        first, second = _pair_indices(len(self.names))
        return " -- ".join(sorted((self.names[int(first[k])], self.names[int(second[k])])))

    def matrix(self):
        """:func:`pair_features` of every pair, vectorized: min / max, differences of exactly representable
        numbers, integer counts and one shared ``math.log``, so every float is the one the scalar code gives."""
        import numpy as np

        n = len(self.names)
        i, j = _pair_indices(n)
        values = np.array(self.values, dtype=float).reshape(n, -1)
        a, b = values[i], values[j]
        own = np.empty((len(i), 2 * values.shape[1]))
        own[:, 0::2], own[:, 1::2] = np.minimum(a, b), np.maximum(a, b)
        gap = np.abs(a[:, 0] - b[:, 0])
        held = np.array([[bool(mask >> k & 1) for k in range(len(_LABELS))] for mask in self.templates],
                        dtype=bool).reshape(n, len(_LABELS))
        kinds = np.zeros(len(i), dtype=np.int64)
        groups = held[:, [k for k, label in enumerate(_LABELS) if label[0] == "group"]].any(axis=1)
        kinds += groups[i] & groups[j]
        for kind in PAIR_CUE_KINDS:
            side0, side1 = _LABELS.index((kind, "0")), _LABELS.index((kind, "1"))
            kinds += (held[i, side0] & held[j, side1]) | (held[i, side1] & held[j, side0])
        counts = held.astype(np.int64)
        shared_templates = (counts @ counts.T)[i, j]
        surname_ids: dict[str, int] = {}
        ids = np.array([surname_ids.setdefault(name.split(" ", 1)[-1], len(surname_ids)) for name in self.names],
                       dtype=np.int64)
        lines = max((k for rows in self.holders for k in rows), default=-1) + 1
        mentions = np.zeros((n, lines), dtype=np.int64)
        for person, rows in enumerate(self.holders):
            mentions[person, list(rows)] = 1
        shared_lines = (mentions @ mentions.T)[i, j]
        columns = (gap, gap * gap, (j - i) / max(n - 1, 1), j - i == 1, kinds, kinds > 0, shared_templates,
                   ids[i] == ids[j], shared_lines, np.full(len(i), math.log(n)))
        return np.concatenate([own, np.column_stack([np.asarray(c, dtype=float) for c in columns])], axis=1)


def _probe_read(row: dict) -> ProbeItem | None:
    if not row["answer_items"]:  # a zero-gold control: no positive candidate to learn, and "none" is right there
        return None
    v = view(row["prompt"])
    n = len(v.profiles)
    if n < 2 or n > MAX_PROBED_PEOPLE:
        return None
    gold = {frozenset(pair) for pair in json.loads(row["answer"])}
    people = _person_features(row["context"], v)
    paragraphs = row["context"].split(PROFILE_SEPARATOR)
    holders: dict[str, tuple[int, ...]] = {}  # surname -> paragraphs mentioning it ("share a line")
    for person in people:
        if person.surname not in holders:
            holders[person.surname] = tuple(k for k, text in enumerate(paragraphs) if person.surname in text)
    names = tuple(person.name for person in people)
    golden = tuple(k for k, (a, b) in enumerate(combinations(names, 2)) if frozenset((a, b)) in gold)
    table = PairTable(names, tuple(person.values for person in people),
                      tuple(_template_mask(person.templates) for person in people),
                      tuple(holders[person.surname] for person in people), golden)
    # The world is shared by every row of a split (one population per seed and split), so the case a fold
    # holds out is the prompt itself: its pair_key (shared only with its matched twins in other configs).
    return ProbeItem(row["pair_key"], "pairs", "", table)


def _probe_decode(item: ProbeItem, probabilities) -> str:
    return f"{ANSWER_MARKER}\n" + "\n".join(likely_answers(item, probabilities))


LEARNED_PROBE = LearnedProbe(
    "every pair of people in the prompt (gold = a gold edge): each profile's position, length, sentence and "
    "cue-like sentence counts, name length and surname mention ranks (min and max of the two), the pair's "
    "distance and index gap, neighbours, cue kinds whose two sides they hold (templates, never values), shared "
    "templates and surnames; decoded as the pairs with P >= 0.5",
    _probe_read, _probe_decode)
