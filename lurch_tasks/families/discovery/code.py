"""Inefficient code hidden in a long module (discovery kind "code"): the generator and its execution-checked gold.

A module is a run of generated utility functions named with invented words. A few are planted, plainly
inefficient ones (a list used for membership, trial division up to the number, string building by ``+``, a sum,
sort, max or count recomputed in a loop, a list scan where a dict lookup suffices); every kind that can be planted
also runs through the module as efficient look-alikes of the same shape, and plain linear utilities fill the rest
to an exact token budget. The gold is checked by running the module: ``measure`` counts operations (traced line
events plus the comparisons, hashes, additions and copied characters of instrumented inputs) at sizes n and 4n,
never wall time.
"""

from __future__ import annotations

import ast
import dataclasses
import gc
import math
import re
import sys
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...core.names import NameMaker
from ...core.rng import StableRng, derive_seed
from ...core.tokens import TokenCounter

VERSION = 2  # 2: eleven kinds; planted functions without a fixed twin, among look-alikes drawn with the stream
HEADER = '"""Small helpers shared by the reporting jobs."""\n\nimport math\n'
SEPARATOR = "\n\n"  # each function ends with a newline: two blank lines between them
SMALL_N = 48  # measured sizes: n and 4n; small enough to trace quickly, large enough for clear growth ratios
GROWTH_FACTOR = 4
PLANTED_MIN_RATIO = 10.0  # a quadratic function's cost grows ~16x at 4x the input
EFFICIENT_MAX_RATIO = 6.0  # linear (4x) with room for n log n and fixed overheads


@dataclass(frozen=True)
class Template:
    """One function shape: ``kind`` names the pair; ``role`` is planted, distractor or plain; ``body`` is the
    source after the ``def`` line with ``{doc}`` for the docstring; ``inputs`` names the input builder."""

    kind: str
    role: str
    params: str
    docs: tuple[str, ...]
    body: str
    inputs: str


@dataclass(frozen=True)
class CodeFunction:
    name: str
    kind: str
    role: str  # "planted", "distractor" or "plain"
    span: tuple[int, int]  # characters [start, end) of the function in the module source
    inputs: str  # key of the input builder in INPUT_BUILDERS


@dataclass(frozen=True)
class CodeModule:
    source: str
    functions: tuple[CodeFunction, ...]
    gold: tuple[str, ...]  # names of the planted functions, in module order
    tokens: int

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(function.name for function in self.functions)


# --- templates: a planted shape and its efficient twin differ in a line or two, never in layout -------------------

_PAIRS: tuple[tuple[Template, Template], ...] = (
    (
        Template("list_membership", "planted", "items", (
            "Return the items in first-seen order, each once.", "Keep the first occurrence of every item."),
            "    {doc}\n    seen = []\n    kept = []\n    for item in items:\n        # first sighting wins\n"
            "        if item not in seen:\n            seen.append(item)\n            kept.append(item)\n"
            "    return kept\n", "repeats"),
        Template("list_membership", "distractor", "items", (
            "Return the items in first-seen order, each once.", "Keep the first occurrence of every item."),
            "    {doc}\n    seen = set()\n    kept = []\n    for item in items:\n        # first sighting wins\n"
            "        if item not in seen:\n            seen.add(item)\n            kept.append(item)\n"
            "    return kept\n", "repeats"),
    ),
    (
        Template("trial_division", "planted", "limit", (
            "Count the primes below the limit.", "How many primes are smaller than the limit."),
            "    {doc}\n    total = 0\n    for value in range(2, limit):\n"
            "        # try each divisor from two up to the value itself\n        for divisor in range(2, value):\n"
            "            if value % divisor == 0:\n                break\n        else:  # no divisor found\n"
            "            total += 1\n    return total\n", "limit"),
        Template("trial_division", "distractor", "limit", (
            "Count the primes below the limit.", "How many primes are smaller than the limit."),
            "    {doc}\n    total = 0\n    marks = [True] * limit\n    for value in range(2, limit):\n"
            "        if marks[value]:\n            total += 1\n            # cross out its multiples\n"
            "            for multiple in range(value * value, limit, value):\n"
            "                marks[multiple] = False\n    return total\n", "limit"),
    ),
    (
        Template("string_concat", "planted", "pieces, sep", (
            "Join the non-empty pieces, each followed by the separator.",
            "Build one line of text from the pieces."),
            "    {doc}\n    text = ''\n    for piece in pieces:\n        # empty pieces add nothing\n"
            "        if piece:\n            text = text + piece\n            text = text + sep\n"
            "    return text\n", "pieces"),
        Template("string_concat", "distractor", "pieces, sep", (
            "Join the non-empty pieces, each followed by the separator.",
            "Build one line of text from the pieces."),
            "    {doc}\n    parts = []\n    for piece in pieces:\n        # empty pieces add nothing\n"
            "        if piece:\n            parts.append(piece)\n            parts.append(sep)\n"
            "    return ''.join(parts)\n", "pieces"),
    ),
    (
        Template("loop_invariant", "planted", "values", (
            "Each value as a whole percentage of the total.", "Express every value as a share of the sum."),
            "    {doc}\n    shares = []\n    for value in values:\n        total = sum(values)\n"
            "        # guard against an all-zero input\n        shares.append(value * 100 // max(total, 1))\n"
            "    return shares\n", "numbers"),
        Template("loop_invariant", "distractor", "values", (
            "Each value as a whole percentage of the total.", "Express every value as a share of the sum."),
            "    {doc}\n    shares = []\n    total = sum(values)\n    for value in values:\n"
            "        # guard against an all-zero input\n        shares.append(value * 100 // max(total, 1))\n"
            "    return shares\n", "numbers"),
    ),
    (
        Template("nested_lookup", "planted", "orders, accounts", (
            "Pair each order amount with the label of its account.", "Attach account labels to the orders."),
            "    {doc}\n    matched = []\n    keys = [other for other, label in accounts]\n"
            "    for key, amount in orders:\n        # only keys that have an account\n        if key in keys:\n"
            "            matched.append((accounts[keys.index(key)][1], amount))\n    return matched\n", "orders"),
        Template("nested_lookup", "distractor", "orders, accounts", (
            "Pair each order amount with the label of its account.", "Attach account labels to the orders."),
            "    {doc}\n    matched = []\n    keys = {other: label for other, label in accounts}\n"
            "    for key, amount in orders:\n        # only keys that have an account\n        if key in keys:\n"
            "            matched.append((keys[key], amount))\n    return matched\n", "orders"),
    ),
    (
        Template("sorted_in_loop", "planted", "values", (
            "Flag the values that equal the current largest value.", "Mark every value that is a maximum."),
            "    {doc}\n    flags = []\n    for value in values:\n        ordered = sorted(values)\n"
            "        # the last one after sorting is the largest\n        flags.append(value == ordered[-1])\n"
            "    return flags\n", "numbers"),
        Template("sorted_in_loop", "distractor", "values", (
            "Flag the values that equal the current largest value.", "Mark every value that is a maximum."),
            "    {doc}\n    flags = []\n    ordered = sorted(values)\n    for value in values:\n"
            "        # the last one after sorting is the largest\n        flags.append(value == ordered[-1])\n"
            "    return flags\n", "numbers"),
    ),
)
_PLAIN: tuple[Template, ...] = (
    Template("running_sum", "plain", "values", ("Running totals of the values.", "Prefix sums, one per value."),
             "    {doc}\n    out = []\n    total = 0\n    for value in values:\n        total += value\n"
             "        # each total includes the value itself\n        out.append(total)\n    return out\n", "numbers"),
    Template("count_words", "plain", "words", ("How often each word occurs.", "Tally the words."),
             "    {doc}\n    # an empty input gives an empty mapping\n    counts = {}\n    for word in words:\n"
             "        # missing words start at zero\n"
             "        counts[word] = counts.get(word, 0) + 1\n    return counts\n", "pieces_only"),
    Template("largest", "plain", "values", ("The largest value, or None for no values.", "Pick the maximum."),
             "    {doc}\n    best = None\n    for value in values:\n        # None means nothing was seen yet\n"
             "        if best is None or value > best:\n"
             "            best = value\n    return best\n", "numbers"),
    Template("chunks", "plain", "items, size", ("Split the items into runs of the given size.",
                                                "Cut the items into fixed-size groups."),
             "    {doc}\n    size = max(size, 1)\n    groups = []\n"
             "    # the last group may be shorter than the others\n"
             "    for start in range(0, len(items), size):\n"
             "        groups.append(items[start:start + size])\n    return groups\n", "items_size"),
    Template("merge_sorted", "plain", "left, right", ("Merge two sorted lists into one sorted list.",
                                                     "Combine two ordered lists in order."),
             "    {doc}\n    out = []\n    i = j = 0\n    while i < len(left) and j < len(right):\n"
             "        if left[i] <= right[j]:\n            out.append(left[i])\n            i += 1\n"
             "        else:\n            out.append(right[j])\n            j += 1\n"
             "    out.extend(left[i:])\n    out.extend(right[j:])\n    return out\n", "two_sorted"),
    Template("binary_search", "plain", "values, target", ("Index of the target in sorted values, or -1.",
                                                         "Find the target in an ordered list."),
             "    {doc}\n    low, high = 0, len(values) - 1\n    while low <= high:\n"
             "        middle = (low + high) // 2\n"
             "        if values[middle] == target:\n            return middle\n        if values[middle] < target:\n"
             "            low = middle + 1\n        else:\n            high = middle - 1\n    return -1\n",
             "sorted_target"),
    Template("window_sums", "plain", "values, width", ("Sums of every window of the given width.",
                                                      "Sliding totals over the values."),
             "    {doc}\n    width = max(width, 1)\n    sums = []\n    current = sum(values[:width])\n"
             "    if len(values) >= width:\n        sums.append(current)\n    for i in range(width, len(values)):\n"
             "        # slide by one: add the new value, drop the old one\n"
             "        current += values[i] - values[i - width]\n        sums.append(current)\n    return sums\n",
             "numbers_width"),
    Template("is_prime", "plain", "number", ("Whether the number is prime.", "Primality of one number."),
             "    {doc}\n    # zero, one and negative numbers are not prime\n    if number < 2:\n        return False\n"
             "    for divisor in range(2, math.isqrt(number) + 1):\n"
             "        if number % divisor == 0:\n            return False\n    return True\n", "prime"),
    Template("group_by_first", "plain", "words", ("Group the words by their first letter.",
                                                  "Bucket words by initial."),
             "    {doc}\n    groups = {}\n    for word in words:\n"
             "        # empty words have no first letter\n        if word:\n"
             "            groups.setdefault(word[0], []).append(word)\n    return groups\n", "pieces_only"),
    Template("reverse_words", "plain", "words", ("The words in reverse order, each reversed too.",
                                                 "Mirror a list of words."),
             "    {doc}\n    out = []\n    for word in reversed(words):\n"
             "        # a negative step walks the word backwards\n"
             "        out.append(word[::-1])\n"
             "    return out\n", "pieces_only"),
    Template("clamp_all", "plain", "values, low, high", ("Clamp every value into [low, high].",
                                                        "Limit the values to a range."),
             "    {doc}\n    # the bounds are taken to be in order\n    out = []\n    for value in values:\n"
             "        # below low becomes low, above high becomes high\n"
             "        out.append(min(max(value, low), high))\n    return out\n", "numbers_range"),
    Template("histogram", "plain", "values, width", ("Count the values per bucket of the given width.",
                                                    "Bucket the values and count each bucket."),
             "    {doc}\n    width = max(width, 1)\n    buckets = {}\n    for value in values:\n"
             "        # negative values share the first bucket\n        start = max(value, 0) // width * width\n"
             "        if start not in buckets:\n            buckets[start] = 0\n        buckets[start] += 1\n"
             "    return [(start, buckets[start]) for start in sorted(buckets)]\n", "numbers_width"),
    Template("interleave", "plain", "left, right", ("Alternate the items of two lists, then the rest.",
                                                   "Zip two lists together, keeping the longer tail."),
             "    {doc}\n    out = []\n    shorter = min(len(left), len(right))\n    for i in range(shorter):\n"
             "        out.append(left[i])\n        out.append(right[i])\n    # whatever is left of the longer one\n"
             "    if len(left) > shorter:\n        out.extend(left[shorter:])\n    else:\n"
             "        out.extend(right[shorter:])\n    return out\n", "two_sorted"),
    Template("longest_run", "plain", "values", ("Length of the longest run of equal neighbours.",
                                                "The longest stretch of repeated values."),
             "    {doc}\n    best = 0\n    current = 0\n    previous = None\n    for value in values:\n"
             "        # a new value starts a new run\n        if value == previous:\n            current += 1\n"
             "        else:\n            current = 1\n        if current > best:\n            best = current\n"
             "        previous = value\n    return best\n", "numbers"),
    Template("split_even_odd", "plain", "values", ("Separate even values from odd ones, keeping order.",
                                                  "Two lists: the even values and the odd values."),
             "    {doc}\n    evens = []\n    odds = []\n    index = 0\n    while index < len(values):\n"
             "        value = values[index]\n        # parity decides the list\n        if value % 2 == 0:\n"
             "            evens.append(value)\n        else:\n            odds.append(value)\n        index += 1\n"
             "    return evens, odds\n", "numbers"),
    # nested loops that stay linear (bounded inner loops), so nesting alone does not point at the planted ones
    Template("flatten", "plain", "groups", ("All items of the groups in one list, skipping None.",
                                           "Flatten the groups into one list."),
             "    {doc}\n    out = []\n    for group in groups:\n        # groups may be empty\n"
             "        for item in group:\n            if item is not None:\n                out.append(item)\n"
             "    return out\n", "groups"),
    Template("transpose", "plain", "rows", ("Columns of a table given as rows; short rows leave gaps.",
                                           "Turn the rows of a table into its columns."),
             "    {doc}\n    width = max((len(row) for row in rows), default=0)\n    columns = []\n"
             "    for j in range(width):\n        column = []\n        for row in rows:\n"
             "            if j < len(row):\n                column.append(row[j])\n        columns.append(column)\n"
             "    return columns\n", "groups"),
    Template("near_repeats", "plain", "values, width", ("Count equal pairs closer than the given distance.",
                                                       "How many values repeat within a short distance."),
             "    {doc}\n    count = 0\n    for i in range(len(values)):\n        # only look a few places ahead\n"
             "        for j in range(i + 1, min(i + width, len(values))):\n            if values[i] == values[j]:\n"
             "                count += 1\n    return count\n", "numbers_width"),
    Template("pair_sums", "plain", "values, target", ("Whether two of the values add up to the target.",
                                                     "Find a pair with the given sum."),
             "    {doc}\n    wanted = set()\n    for value in values:\n"
             "        # a value completes a pair seen earlier\n"
             "        if value in wanted:\n"
             "            return True\n        wanted.add(target - value)\n    return False\n", "sorted_target"),
)


# Five utilities whose slow version differs from the efficient one in a line or two: their efficient versions are
# look-alikes like the twins above, and any of them can be planted.
_ONE_LINE_SLOW: dict[str, tuple[tuple[str, str], ...]] = {
    "running_sum": (("total += value", "total = sum(values[:len(out) + 1])"),),  # re-adds the prefix every time
    "count_words": (("counts[word] = counts.get(word, 0) + 1", "counts[word] = words.count(word)"),),  # rescans
    "largest": (("if best is None or value > best:", "if best is None or value == max(values):"),),  # max per value
    "pair_sums": (("wanted = set()", "wanted = []"), ("wanted.add(", "wanted.append(")),  # a list as the store
    "is_prime": (("range(2, math.isqrt(number) + 1)", "range(2, number)"),),  # trial division up to the number
}


def _one_line_pair(template: Template) -> tuple[Template, Template]:
    body = template.body
    for old, new in _ONE_LINE_SLOW[template.kind]:
        if body.count(old) != 1:
            raise ValueError(f"{template.kind}: {old!r} must occur exactly once")
        body = body.replace(old, new)
    return (dataclasses.replace(template, role="planted", body=body),
            dataclasses.replace(template, role="distractor"))


_PAIRS += tuple(_one_line_pair(t) for t in _PLAIN if t.kind in _ONE_LINE_SLOW)
_PLAIN = tuple(t for t in _PLAIN if t.kind not in _ONE_LINE_SLOW)
KINDS = tuple(pair[0].kind for pair in _PAIRS)

# The stream that fills a module: plain utilities and, four times as often each, the efficient look-alikes of every
# kind that can be planted. A planted function is one more member of its kind's look-alikes, and about three
# functions in four are look-alikes at every length: neither a function's shape, its docstring nor how many
# functions share them says which one is slow; only its slow line does.
TWINS: tuple[Template, ...] = tuple(pair[1] for pair in _PAIRS)
_STREAM: tuple[Template, ...] = _PLAIN + TWINS * 4


# --- instrumented inputs: every comparison, hash, addition and copied character costs operations ------------------

class _Tally:
    ops = 0


class CountedInt(int):
    """An int whose comparisons and arithmetic are Python calls (traced) that also add to the tally."""

    def _wrap(self, value):
        _Tally.ops += 1
        return CountedInt(value) if isinstance(value, int) and not isinstance(value, bool) else value

    def __eq__(self, other):
        return self._wrap(int.__eq__(self, other))

    def __ne__(self, other):
        return self._wrap(int.__ne__(self, other))

    def __lt__(self, other):
        return self._wrap(int.__lt__(self, other))

    def __le__(self, other):
        return self._wrap(int.__le__(self, other))

    def __gt__(self, other):
        return self._wrap(int.__gt__(self, other))

    def __ge__(self, other):
        return self._wrap(int.__ge__(self, other))

    def __hash__(self):
        _Tally.ops += 1
        return int.__hash__(self)

    def __add__(self, other):
        return self._wrap(int.__add__(self, other))

    def __radd__(self, other):
        return self._wrap(int.__radd__(self, other))

    def __sub__(self, other):
        return self._wrap(int.__sub__(self, other))

    def __rsub__(self, other):
        return self._wrap(int.__rsub__(self, other))


class CountedStr(str):
    """A str whose concatenation onto another string costs the characters copied (``text += piece``)."""

    def __radd__(self, other):
        result = str.__add__(other, self)
        _Tally.ops += len(result)
        return result

    def __eq__(self, other):
        _Tally.ops += 1
        return str.__eq__(self, other)

    def __hash__(self):  # stable across PYTHONHASHSEED, so collision counts are reproducible
        _Tally.ops += 1
        return zlib.crc32(self.encode("utf-8"))


def _ints(n: int, modulus: int | None = None) -> list[CountedInt]:
    modulus = modulus or 10 * n + 7
    return [CountedInt((i * 7919 + 13) % modulus) for i in range(n)]


def _groups(items: list, size: int) -> list[list]:
    return [items[start:start + size] for start in range(0, len(items), size)]


def _next_prime(value: int) -> int:
    while value < 2 or any(value % d == 0 for d in range(2, math.isqrt(value) + 1)):
        value += 1
    return value


def _words(n: int) -> list[CountedStr]:
    letters = "abcdefghij"
    return [CountedStr(letters[i % 10] + letters[(i // 10) % 10] + letters[(i * 7) % 10] + "x") for i in range(n)]


INPUT_BUILDERS: dict[str, Callable[[int], tuple]] = {
    "repeats": lambda n: (_ints(n, n // 2 + 1),),
    "limit": lambda n: (4 * n,),
    "prime": lambda n: (_next_prime(16 * n * n),),
    "pieces": lambda n: (_words(n), CountedStr(", ")),
    "pieces_only": lambda n: (_words(n),),
    "numbers": lambda n: (_ints(n),),
    "orders": lambda n: ([(k, k) for k in _ints(n)], [(k, CountedStr(f"a{int(k)}")) for k in _ints(n)]),
    "items_size": lambda n: (_ints(n), 5),
    "groups": lambda n: (_groups(_ints(n), 4),),
    "two_sorted": lambda n: (sorted(_ints(n)), sorted(_ints(n, 3 * n + 1))),
    "sorted_target": lambda n: (sorted(_ints(n)), CountedInt(-1)),
    "numbers_width": lambda n: (_ints(n), 5),
    "numbers_range": lambda n: (_ints(n), CountedInt(n), CountedInt(5 * n)),
}


# --- generation ------------------------------------------------------------------------------------------------------

def _function_name(maker: NameMaker) -> str:
    return f"{maker.city().lower()}_{maker.city().lower()}"


# Local names vary per function (the same choice for singular and plural), so repeated shapes do not read alike;
# the groups are disjoint, so two names never merge.
_RENAMES: tuple[tuple[tuple[str, ...], ...], ...] = (
    (("value", "values"), ("number", "numbers"), ("amount", "amounts"), ("reading", "readings")),
    (("item", "items"), ("entry", "entries"), ("record", "records"), ("element", "elements")),
    (("word", "words"), ("term", "terms"), ("token", "tokens"), ("name", "names")),
    (("piece", "pieces"), ("fragment", "fragments"), ("snippet", "snippets")),
    (("out",), ("result",), ("collected",), ("acc",)),
    (("total",), ("tally",), ("running",)),
    (("seen",), ("visited",), ("met",)),
    (("kept",), ("unique",), ("firsts",)),
    (("shares",), ("percents",), ("ratios",)),
    (("flags",), ("tops",), ("peaks",)),
    (("matched",), ("joined",), ("paired",)),
    (("text",), ("line",), ("buffer",)),
)


def _rename_map(rng: StableRng) -> dict[str, str]:
    mapping = {}
    for group in _RENAMES:
        chosen = rng.choice(group)
        mapping.update(zip(group[0], chosen, strict=True))
    return mapping


def render_function(template: Template, name: str, rng: StableRng) -> str:
    doc = '"""' + rng.choice(template.docs) + '"""'
    mapping = _rename_map(rng)
    text = f"({template.params}):\n" + template.body.replace("{doc}", doc)
    text = re.sub(r"\b[a-z]+\b", lambda match: mapping.get(match.group(0), match.group(0)), text)
    return f"def {name}" + text


@dataclass(frozen=True)
class _Plan:
    """The core functions (planted + their twins) and a stream of plain ones, before fitting to the budget."""

    core: tuple[tuple[Template, str, str], ...]  # (template, name, source)
    plain: tuple[tuple[Template, str, str], ...]
    core_slots: tuple[float, ...]  # each core function's relative position in the module, in [0, 1)


def _plan(seed: int, n_planted: int, max_plain: int, extra_distractors: int = 0) -> _Plan:
    if not 1 <= n_planted <= len(_PAIRS):
        raise ValueError(f"n_planted: {n_planted}; allowed: 1..{len(_PAIRS)}")
    rng = StableRng(derive_seed("discovery-code", VERSION, seed))
    maker = NameMaker(StableRng(derive_seed("discovery-code-names", VERSION, seed)))
    pairs = rng.sample(_PAIRS, n_planted)
    # the planted functions only: a fixed efficient twin beside each would make its kind's look-alikes one more
    # than the other kinds' (a count that points at the planted kinds); the stream brings every kind's look-alikes
    core_templates = [pair[0] for pair in pairs]
    if not 0 <= extra_distractors <= len(_PAIRS) - n_planted:
        raise ValueError(f"extra_distractors: {extra_distractors}; allowed: 0..{len(_PAIRS) - n_planted}")
    if extra_distractors:  # efficient functions of kinds not planted, without a slow twin (own stream: the
        # default module's bytes do not change)
        rest = [pair for pair in _PAIRS if pair not in pairs]
        extra_rng = StableRng(derive_seed("discovery-code-extra", VERSION, seed))
        core_templates += [pair[1] for pair in extra_rng.sample(rest, extra_distractors)]
    core = tuple((t, name, render_function(t, name, rng)) for t in core_templates for name in [_function_name(maker)])
    slots = tuple(rng.uniform() for _ in core)  # drawn before the plain stream, so they do not depend on its length
    plain = []
    for _ in range(max_plain):
        template = rng.choice(_STREAM)
        name = _function_name(maker)
        plain.append((template, name, render_function(template, name, rng)))
    return _Plan(core, tuple(plain), slots)


def _assemble(plan: _Plan, selected: Sequence[int], header: str = HEADER,
              trailer: str = "") -> tuple[str, tuple[CodeFunction, ...]]:
    """The module with the chosen plain functions (stream indices, in order); core functions sit at their
    relative slots; ``trailer`` (a closing comment line) ends the module."""
    order: list[tuple[Template, str, str]] = [plan.plain[i] for i in selected]
    n_plain = len(order)
    # insert in slot order, each after the ones placed before it; ties keep the plan order
    placed = sorted(range(len(plan.core)), key=lambda i: (plan.core_slots[i], i))
    for offset, i in enumerate(placed):
        order.insert(min(int(plan.core_slots[i] * (n_plain + 1)) + offset, len(order)), plan.core[i])
    parts, functions, cursor = [header], [], len(header)
    for template, name, text in order:
        cursor += len(SEPARATOR)
        parts.append(text)
        functions.append(CodeFunction(name, template.kind, template.role, (cursor, cursor + len(text)),
                                      template.inputs))
        cursor += len(text)
    if trailer:
        parts.append(trailer)
    return SEPARATOR.join(parts), tuple(functions)


# Neutral sentences that may lengthen the module docstring, and the words of the closing comment: the last few
# tokens of a budget are met with text that says nothing about any function.
_DOC_SENTENCES = (
    "Every helper takes plain lists or numbers and returns new values.",
    "Nothing here reads files or talks to the network.",
    "Inputs are never changed in place.",
    "The helpers are grouped loosely, in the order they were written.",
    "Names follow the house style of the reporting team.",
    "Each function documents what it returns in one line.",
    "Callers are expected to validate their own inputs.",
    "These functions have no shared state.",
    "The module is imported by several nightly jobs.",
    "Keep new helpers short and give each a docstring.",
    "Results are plain Python values, easy to print.",
    "Empty inputs give empty results unless stated otherwise.",
)
_CLOSING = ("keep these helpers small and plain so that every job can share them without any surprise at all "
            "and add tests next to the jobs that use them").split()


def _header(sentences: Sequence[str]) -> str:
    lines = "\n".join(("Small helpers shared by the reporting jobs.", *sentences)) if sentences else \
        "Small helpers shared by the reporting jobs."
    return f'"""{lines}\n"""\n\nimport math\n' if sentences else f'"""{lines}"""\n\nimport math\n'


def _trailer(words: int) -> str:
    return "# " + " ".join(_CLOSING[:words]) + "\n" if words else ""


def _additive_fill(plan: _Plan, costs: dict[str, int], target: int, counter: TokenCounter,
                   sentences: Sequence[str]) -> tuple[list[int], int, int] | None:
    """Plain functions (greedy along the stream), docstring sentences and closing words whose token costs add
    up to exactly ``target``; costs add because every piece starts at a line start after a newline run (checked
    afterwards by one exact count)."""
    fixed = sum(costs[text] for _, _, text in plan.core)
    header_costs = [counter.count(_header(sentences[:m]) + SEPARATOR) for m in range(len(sentences) + 1)]
    trailer_costs = {counter.count(_trailer(w)): w for w in range(len(_CLOSING), 0, -1)}
    trailer_costs[0] = 0
    selected, used = [], fixed + header_costs[0]
    for index, (_, _, text) in enumerate(plan.plain):
        if used + costs[text] <= target:
            selected.append(index)
            used += costs[text]
    for drop in range(len(selected) + 1):  # rarely more than one: a sentence or a plain function gives room
        base = used - sum(costs[plan.plain[i][2]] for i in selected[len(selected) - drop:]) - header_costs[0]
        for m in range(len(sentences), -1, -1):
            gap = target - base - header_costs[m]
            if gap in trailer_costs:
                return selected[:len(selected) - drop], m, trailer_costs[gap]
    return None


def _exact_tail(plan: _Plan, selected: list[int], target: int, counter: TokenCounter,
                sentences: Sequence[str]) -> tuple[str, int, tuple[CodeFunction, ...]] | None:
    """For the chosen functions, docstring sentences and closing words counted exactly (the count grows with
    both, so closing words are binary-searched per sentence count)."""
    def build(m: int, w: int) -> tuple[str, int, tuple[CodeFunction, ...]]:
        source, functions = _assemble(plan, selected, _header(sentences[:m]), _trailer(w))
        return source, counter.count(source), functions

    for m in range(len(sentences), -1, -1):
        if build(m, 0)[1] > target:
            continue
        low, high = 0, len(_CLOSING)
        while low <= high:
            middle = (low + high) // 2
            built = build(m, middle)
            if built[1] == target:
                return built
            low, high = (middle + 1, high) if built[1] < target else (low, middle - 1)
    return None


def _fit(plan: _Plan, costs: dict[str, int], target: int, counter: TokenCounter,
         sentences: Sequence[str]) -> tuple[str, int, tuple[CodeFunction, ...]]:
    """Exactly ``target`` tokens: the additive fill, checked by one count; for a tokenizer whose count of the
    joined module differs from the sum of its pieces, refill against a target shifted by the difference, then
    settle the last tokens with exact counts."""
    shift = 0
    for _ in range(4):
        fill = _additive_fill(plan, costs, target - shift, counter, sentences)
        if fill is None:
            break
        selected, m, words = fill
        source, functions = _assemble(plan, selected, _header(sentences[:m]), _trailer(words))
        tokens = counter.count(source)
        if tokens == target:
            return source, tokens, functions
        shift += tokens - target
        if abs(tokens - target) <= len(_CLOSING):
            for drop in range(min(len(selected), 4) + 1):
                exact = _exact_tail(plan, selected[:len(selected) - drop], target, counter, sentences)
                if exact is not None:
                    return exact
    raise ValueError(f"target_tokens: no module of exactly {target} tokens was found; allowed: a nearby target")


def build_module(seed: int, n_planted: int, target_tokens: int, counter: TokenCounter, *,
                 extra_distractors: int = 0) -> CodeModule:
    """A valid module of exactly ``target_tokens`` tokens (by ``counter``) with ``n_planted`` planted functions,
    one efficient twin each, ``extra_distractors`` efficient functions of other planted kinds, and plain
    utilities filling the rest; a pure function of its arguments."""
    smallest = counter.count(_assemble(_plan(seed, n_planted, 0, extra_distractors), ())[0])
    if smallest > target_tokens:
        raise ValueError(f"target_tokens: {target_tokens} is below the smallest module ({smallest}); "
                         "allowed: a larger target or fewer planted functions")
    mean_plain = sum(counter.count(render_function(t, "abcde_fghij", StableRng(0))) for t in _STREAM) / len(_STREAM)
    plan = _plan(seed, n_planted, int(1.5 * (target_tokens - smallest) / mean_plain) + 16, extra_distractors)
    texts = [text + SEPARATOR for _, _, text in plan.core + plan.plain]
    costs = dict(zip([t[2] for t in plan.core + plan.plain], counter.count_many(texts), strict=True))
    order_rng = StableRng(derive_seed("discovery-code-doc", VERSION, seed))
    sentences = order_rng.shuffled(_DOC_SENTENCES)
    source, tokens, functions = _fit(plan, costs, target_tokens, counter, sentences)
    ast.parse(source)
    gold = tuple(function.name for function in functions if function.role == "planted")
    return CodeModule(source, functions, gold, tokens)


# --- execution-verified gold -----------------------------------------------------------------------------------------

_ALLOWED = ("range", "len", "sum", "max", "min", "sorted", "set", "dict", "list", "tuple", "reversed", "enumerate",
            "zip", "abs", "isinstance", "int", "str", "bool", "None", "True", "False")


def _namespace() -> dict:
    import builtins

    def only_math(name, *args, **kwargs):
        if name != "math":
            raise ImportError(f"only math may be imported, not {name}")
        return math

    allowed = {name: getattr(builtins, name) for name in _ALLOWED if hasattr(builtins, name)}
    allowed["__import__"] = only_math
    return {"__builtins__": allowed, "__name__": "generated"}


GENERATED = "<generated>"  # the file name the module is compiled under (``measure_costs``)


def operation_count(function: Callable, args: tuple) -> int:
    """Traced line events in the generated module's frames and the instrumented inputs' methods (this file), plus the
    tally. Other code that happens to run meanwhile (a finalizer, a weakref callback) is not counted, and the
    garbage collector waits until the call returns, so a count is the same on every run."""
    lines = 0
    counted = (GENERATED, __file__)

    def tracer(frame, event, arg):
        nonlocal lines
        if frame.f_code.co_filename not in counted:
            return None  # not our code: no line events from this frame
        if event == "line":
            lines += 1
        return tracer

    _Tally.ops = 0
    previous = sys.gettrace()
    collecting = gc.isenabled()
    gc.disable()
    sys.settrace(tracer)
    try:
        function(*args)
    finally:
        sys.settrace(previous)
        if collecting:
            gc.enable()
    return lines + _Tally.ops


def measure_costs(module: CodeModule, n: int = SMALL_N) -> dict[str, tuple[int, int]]:
    """Operations of every function at input sizes n and GROWTH_FACTOR * n, in a fresh namespace."""
    namespace = _namespace()
    exec(compile(module.source, GENERATED, "exec"), namespace)  # noqa: S102 - our own generated module
    costs = {}
    for function in module.functions:
        build = INPUT_BUILDERS[function.inputs]
        costs[function.name] = (operation_count(namespace[function.name], build(n)),
                                operation_count(namespace[function.name], build(GROWTH_FACTOR * n)))
    return costs


def measure(module: CodeModule, n: int = SMALL_N) -> dict[str, float]:
    """Each function's cost growth: operations at GROWTH_FACTOR * n over operations at n."""
    return {name: big / max(small, 1) for name, (small, big) in measure_costs(module, n).items()}


def verified_gold(module: CodeModule, n: int = SMALL_N) -> tuple[str, ...]:
    """The functions whose measured growth is super-linear (the gold, as execution says it is)."""
    return tuple(name for name, ratio in measure(module, n).items() if ratio >= PLANTED_MIN_RATIO)


# --- shortcut features -----------------------------------------------------------------------------------------------

def surface_features(module: CodeModule) -> dict[str, dict[str, float]]:
    """Features a shortcut could key on, per function: length, lines, nesting, loop keywords, position."""
    out = {}
    total = len(module.functions)
    for index, function in enumerate(module.functions):
        text = module.source[function.span[0]:function.span[1]]
        tree = ast.parse(text)
        out[function.name] = {
            "chars": float(len(text)),
            "lines": float(text.count("\n")),
            "depth": float(nesting_depth(tree)),
            "for_in": float(len(re.findall(r"\bfor\b", text))),
            "while": float(len(re.findall(r"\bwhile\b", text))),
            "in": float(len(re.findall(r"\bin\b", text))),
            "position": index / max(total - 1, 1),
        }
    return out


def nesting_depth(node: ast.AST, level: int = 0) -> int:
    """How deeply blocks (loops, ifs, with, try) nest inside ``node``."""
    blocks = (ast.For, ast.While, ast.If, ast.With, ast.Try)
    deeper = level + 1 if isinstance(node, blocks) else level
    return max([deeper] + [nesting_depth(child, deeper) for child in ast.iter_child_nodes(node)])


def best_threshold_accuracy(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """Balanced accuracy of the best single threshold (either direction) separating two samples."""
    cuts = sorted(set(positives) | set(negatives))
    best = 0.5
    for cut in cuts:
        tpr = sum(value >= cut for value in positives) / len(positives)
        fpr = sum(value >= cut for value in negatives) / len(negatives)
        best = max(best, (tpr + 1 - fpr) / 2, (1 - tpr + fpr) / 2)
    return best


# --- names in an answer -----------------------------------------------------------------------------------------------

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def mentioned_names(answer_text: str, all_names: Sequence[str]) -> tuple[str, ...]:
    """The module's function names an answer mentions, in module order: backticks, ``name()``, bold, plain words,
    markdown-escaped underscores and any letter case all count."""
    text = answer_text.replace("\\_", "_")
    found = {match.group(0).lower() for match in _IDENTIFIER.finditer(text)}
    return tuple(name for name in all_names if name.lower() in found)
