"""RECON shortcut strategies (DESIGN 3.5): answers from the prompt's surface alone, never from the case's
reasoning, one set per answer format. MCQ (single and multiple): the options' position, length, overlap with the
question or with each other, where and how often they occur in the case (single: the top option; multiple:
the top three). Ordering: the items by where they are first or last mentioned, by length, or in letter order.
Integer: a constant. Free form: the place last / first / most often mentioned beside the question's subject.
Order- and time-aware (issue 27): items by their second / median / mean mention; the longest option whose
findings appear in mention order; the options mentioned between the question's two times, or last before its
time; a count of withdrawal (finding, people) entries before the moment, plus -1 / 0 / +1; the conclusion
mentioned soonest after the withdrawn link's entry; the place of either account giving the question's time.
On a row of another format (or one it cannot read) a strategy gives the seeded random answer (the chance
baseline's own), so each is measured against chance on its own format only. Each must stay at chance."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable

from ...core.probe import word_overlap
from ...core.rng import StableRng, derive_seed
from ...core.shortcuts import Probe, Shortcut
from .baselines import guess, subject_mentions
from .formats import FORMATS
from .narrate import patterns
from .prompt import ABSTAIN, LETTERS, letters_for
from .questions import ARROW
from .solver import Parsed, split_prompt
from .surface import RANKS, question_times, rank, read_case

MULTI_PICKS = 3  # how many options a multiple-answer strategy selects (k is 1-5, uniform)
Pick = Callable[[Parsed, str, object], str | None]  # (parsed prompt, case text, variant) -> answer


def _strategy(formats: tuple[str, ...], pick: Pick) -> Callable[[str, object], str]:
    def strategy(prompt: str, variant: object) -> str:
        parsed = split_prompt(prompt, read_case=False)
        if parsed is None:
            return ""
        if parsed.format not in formats:
            return guess(prompt, 0) or ""
        body = prompt.rpartition("Question: ")[0]
        answer = pick(parsed, body, variant)
        # a question the strategy cannot read (no time to anchor on, ...) gets the chance answer
        return (guess(prompt, 0) or "") if answer is None else answer

    return strategy


def _units(option: str) -> list[str]:
    return option.split(ARROW)


Value = Callable[[list[str], str, str], list[float]]  # (options, question, case) -> one value per option


def length(options, question, body) -> list[float]:
    return [float(len(o)) for o in options]


def question_overlap(options, question, body) -> list[float]:
    """The share of the question's words an option uses too: the count of shared words over a constant."""
    return [word_overlap(question, o) for o in options]


def consensus(options, question, body) -> list[float]:
    """The shares of an option's words each other option uses too, summed: the 'centre' of a distractor set."""
    return [sum(word_overlap(o, other) for j, other in enumerate(options) if j != k) for k, o in enumerate(options)]


def recency(options, question, body) -> list[float]:
    """Where an option is last mentioned in the case."""
    return [float(max(body.rfind(u) for u in _units(o))) for o in options]


def first_mention(options, question, body) -> list[float]:
    return [float(min((body.find(u) for u in _units(o) if u in body), default=len(body))) for o in options]


def frequency(options, question, body) -> list[float]:
    return [float(sum(body.count(u) for u in _units(o))) / len(_units(o)) for o in options]


def _ranked(values: list[float], variant: object, tie_seed: str) -> list[int]:
    """Option indices from the highest value (``max``) or the lowest (``min``); ties in a seeded order, so a
    feature with many ties is not measured as a position strategy (``option_position`` is that)."""
    sign = -1.0 if variant == "max" else 1.0
    tie = StableRng(derive_seed("recon-ties", tie_seed)).shuffled(range(len(values)))
    return sorted(range(len(values)), key=lambda k: (sign * values[k], tie[k]))


def _mcq(value: Value) -> Pick:
    def pick(parsed: Parsed, body: str, variant: object) -> str | None:
        if len(parsed.options) != len(LETTERS):
            return None
        ranked = _ranked(value(parsed.options, parsed.question, body), variant, parsed.question)
        chosen = ranked[:1] if parsed.format == "mcq_single" else sorted(ranked[:MULTI_PICKS])
        return "ANSWER: " + ", ".join(LETTERS[k] for k in chosen)

    return pick


def by_position(parsed: Parsed, body: str, variant: object) -> str:
    return f"ANSWER: {variant}"


def _ordering(value: Value | None) -> Pick:
    def pick(parsed: Parsed, body: str, variant: object) -> str:
        letters = letters_for("ordering")
        if value is None:  # letter order, or its reverse
            order = list(range(len(parsed.options)))
            order = order if variant == "min" else order[::-1]
        else:
            order = _ranked(value(parsed.options, parsed.question, body), variant, parsed.question)
        return "ANSWER: " + ", ".join(letters[k] for k in order)

    return pick


def constant(parsed: Parsed, body: str, variant: object) -> str:
    return f"ANSWER: {variant}"


def subject_place(parsed: Parsed, body: str, variant: object) -> str:
    """The place named last (``max``), first (``min``) or most often (``most``) in the case's lines that mention
    the question's subject (its item, else its person), with that line's time."""
    subject, found = subject_mentions(parsed, body)
    if not found:
        return ""
    if variant == "most":
        name = Counter(p for p, _ in found).most_common(1)[0][0]
        stamp = next(s for p, s in found if p == name)
    else:
        name, stamp = found[-1] if variant == "max" else found[0]
    return f"ANSWER: {subject} was at {name}, from {stamp}."


# --- order- and time-aware strategies (issue 27): mention ranks, the question's times, countable entries -------

def mention_rank(which: str) -> Value:
    """Each option's ``which`` mention (``surface.RANKS``: first, second, median, last, mean) in the case."""

    def value(options, question, body) -> list[float]:
        case = read_case(body)
        return [rank(case.positions(o), which) for o in options]

    return value


def order_fit(which: str) -> Value:
    """How far an option's items appear in ``which``-mention order (the share of its consecutive pairs that do,
    x100), plus its number of items: the options fully in mention order first, the longest of them on top."""

    def value(options, question, body) -> list[float]:
        case = read_case(body)
        out = []
        for option in options:
            ranks = [rank(case.positions(u), which) for u in _units(option)]
            pairs = list(zip(ranks, ranks[1:], strict=False))
            share = sum(a < b for a, b in pairs) / len(pairs) if pairs else 1.0
            out.append(100.0 * share + len(ranks))
        return out

    return value


def _chosen(parsed: Parsed, ranked: list[int], picked: list[int] | None = None) -> str:
    """The answer line: the top option (single); ``picked`` when it is a proper subset, else the top three
    (multiple)."""
    if parsed.format == "mcq_single":
        return f"ANSWER: {LETTERS[ranked[0]]}"
    if picked is None or not 0 < len(picked) < len(parsed.options):
        picked = ranked[:MULTI_PICKS]
    return "ANSWER: " + ", ".join(LETTERS[k] for k in sorted(picked))


def mention_order(parsed: Parsed, body: str, variant: object) -> str | None:
    """Chain options: keep those whose items appear in ``variant``-mention order; take the longest."""
    if len(parsed.options) != len(LETTERS):
        return None
    values = order_fit(str(variant))(parsed.options, parsed.question, body)
    ranked = _ranked(values, "max", parsed.question)
    return _chosen(parsed, ranked, [k for k, v in enumerate(values) if v >= 100.0])


def window_mentions(options: list[str], question: str, body: str, inside: bool) -> list[float] | None:
    """Mentions of each option in entries dated inside (or outside) the window between the question's first two
    named times; None when it names fewer than two."""
    times = question_times(question)
    if len(times) < 2:
        return None
    low, high = min(times[:2]), max(times[:2])
    case = read_case(body)
    return [float(sum((low <= m <= high) == inside for m in case.times(o))) for o in options]


def in_window(parsed: Parsed, body: str, variant: object) -> str | None:
    """The option(s) mentioned between (``between``) or only outside (``outside``) the question's two times:
    single, the one mentioned most there; multiple, every one mentioned there."""
    if len(parsed.options) != len(LETTERS):
        return None
    values = window_mentions(parsed.options, parsed.question, body, variant == "between")
    if values is None:
        return None
    ranked = _ranked(values, "max", parsed.question)
    return _chosen(parsed, ranked, [k for k, v in enumerate(values) if v > 0])


_FINDING = re.compile(r"the finding that [A-Z] (?P<tail>.+?) by Day")
_WITHDRAWN = re.compile(r"(?i)withdraw")  # "is withdrawn", "Withdrawn:", an oracle entry's "kind": "withdraw"
COUNTS = ("withdrawals", "conclusions", "people", "withdrawals_all")
OFFSETS = (-1, 0, 1)


def surface_count(body: str, question: str, kind: str) -> int | None:
    """A count of entries read off the case's surface up to the question's moment: withdrawal entries
    (``withdrawals``; ``withdrawals_all``: in the whole case), entries stating the asked kind of finding
    (``conclusions``), or the distinct names those entries open with (``people``)."""
    times = question_times(question)
    case = read_case(body)
    lines = [k for k, line in enumerate(body.split("\n")) if case.minutes[k] is not None]
    if kind == "withdrawals_all":
        return sum(bool(_WITHDRAWN.search(case.line(k))) for k in lines)
    if not times:
        return None
    before = [k for k in lines if case.minutes[k] <= times[0]]
    if kind == "withdrawals":
        return sum(bool(_WITHDRAWN.search(case.line(k))) for k in before)
    finding = _FINDING.search(question)
    if finding is None:
        return None
    tail = " " + finding.group("tail")
    stating = [case.line(k) for k in before if tail in case.line(k)]
    if kind == "conclusions":
        return len(stating)
    names = {m.group(1) for line in stating for m in re.finditer(r"([A-Z][a-z]+ [A-Z][a-z]+)" + re.escape(tail), line)}
    return len(names)


def counted(parsed: Parsed, body: str, variant: object) -> str | None:
    """A surface count (``COUNTS``) plus an offset: 'withdrawal entries before the moment, minus one'."""
    kind, offset = variant  # type: ignore[misc]
    count = surface_count(body, parsed.question, kind)
    return None if count is None else f"ANSWER: {max(0, count + offset)}"


_WITHDRAWN_LINK = re.compile(r"the finding that (?P<a>.+?) led to (?P<b>.+?) was withdrawn")


def follows_link(options: list[str], question: str, body: str, nearest: bool) -> list[float] | None:
    """Characters from the first entry naming both ends of the question's withdrawn link to each option's next
    mention after it (``nearest``: its nearest mention either side); None without such a link."""
    link = _WITHDRAWN_LINK.search(question)
    if link is None:
        return None
    case = read_case(body)
    both = case.lines_with(link.group("a"), link.group("b"))
    if not both:
        return None
    anchor = case.starts[both[0]]
    out = []
    for option in options:
        found = case.offsets(option)
        gaps = [abs(k - anchor) for k in found] if nearest else [k - anchor for k in found if k > anchor]
        out.append(float(min(gaps, default=len(body))))
    return out


def after_link(parsed: Parsed, body: str, variant: object) -> str | None:
    """The conclusion whose entry follows the withdrawn link's entry most closely (``after``; ``nearest``: is
    closest to it either side)."""
    if len(parsed.options) != len(LETTERS):
        return None
    values = follows_link(parsed.options, parsed.question, body, variant == "nearest")
    if values is None:
        return None
    return _chosen(parsed, _ranked(values, "min", parsed.question))


def latest_before(parsed: Parsed, body: str, variant: object) -> str | None:
    """What the case mentions last before the question's (first) time (``before``; ``after``: first after it):
    free form, the place in the case's line beside the question's subject; MCQ, the option (single) or the three
    options (multiple)."""
    times = question_times(parsed.question)
    if not times:
        return None
    moment, before = times[0], variant == "before"
    if parsed.format == "free_form":
        subject, found = subject_mentions(parsed, body)
        dated = [(place, stamp) for place, stamp in found if (at := question_times(stamp))
                 and (at[0] <= moment if before else at[0] >= moment)]
        if not dated:
            return None
        place, stamp = dated[-1] if before else dated[0]
        return f"ANSWER: {subject} was at {place}, from {stamp}."
    if len(parsed.options) != len(LETTERS):
        return None
    case = read_case(body)
    values = [float(max((m for m in case.times(o) if m <= moment), default=-1)) if before
              else float(min((m for m in case.times(o) if m >= moment), default=10**9)) for o in parsed.options]
    return _chosen(parsed, _ranked(values, "max" if before else "min", parsed.question))


_WHERE = re.compile(r"about where (?P<person>[A-Z][a-z]+ [A-Z][a-z]+) was on Day (?P<day>\d+) at about "
                    r"(?P<time>\d\d:\d\d)")


def same_time_places(parsed: Parsed, body: str) -> tuple[str, list[str]] | None:
    """The question's person and the places named, in case order, by the entries that mention that person on the
    question's day and clock time (the two accounts that disagree); None when the question names no such time."""
    asked = _WHERE.search(parsed.question)
    if asked is None:
        return None
    person = asked.group("person")
    case = read_case(body)
    place = re.compile(patterns(parsed.domain)["place"])
    day = asked.group("day")
    lines = [case.line(k) for k in case.lines_with(person, asked.group("time"))]
    # a narrative account writes "on Day 4 at about 14:15"; an oracle entry has "day": 4 and "time": "14:15"
    texts = [line if line.startswith("{") else line.partition("] [")[2] for line in lines
             if f"Day {day} " in line or f'"day": {day},' in line]
    return person, [m.group(0) for text in texts for m in place.finditer(text)]


def same_time(parsed: Parsed, body: str, variant: object) -> str | None:
    """'Find the two accounts with the same time, pick either': the first or last place they name."""
    found = same_time_places(parsed, body)
    if found is None or not found[1]:
        return None
    person, places = found
    place = places[0] if variant == "first" else places[-1]
    if parsed.format == "free_form":
        return f"ANSWER: {person} was at {place} at that time."
    if place not in parsed.options:
        return None
    return f"ANSWER: {LETTERS[parsed.options.index(place)]}"


MCQ = ("mcq_single", "mcq_multi")
SHORTCUTS = (
    Shortcut("option_position", "position", "always the same letter", _strategy(MCQ, by_position), tuple(LETTERS)),
    Shortcut("option_length", "length", "the longest / shortest option(s)", _strategy(MCQ, _mcq(length)),
             ("max", "min")),
    Shortcut("question_overlap", "template", "the option(s) sharing most / fewest words with the question",
             _strategy(MCQ, _mcq(question_overlap)), ("max", "min")),
    Shortcut("option_consensus", "family", "the option(s) sharing most / fewest words with the other options",
             _strategy(MCQ, _mcq(consensus)), ("max", "min")),
    Shortcut("most_recent_entry", "position", "the option(s) mentioned last / first in the case",
             _strategy(MCQ, _mcq(recency)), ("max", "min")),
    Shortcut("most_mentioned", "frequency", "the option(s) mentioned most / least often in the case",
             _strategy(MCQ, _mcq(frequency)), ("max", "min")),
    Shortcut("order_by_first_mention", "position", "the items in the order they are first mentioned (or reversed)",
             _strategy(("ordering",), _ordering(first_mention)), ("min", "max")),
    Shortcut("order_by_last_mention", "position", "the items in the order they are last mentioned (or reversed)",
             _strategy(("ordering",), _ordering(recency)), ("min", "max")),
    Shortcut("order_by_length", "length", "the items from shortest to longest (or reversed)",
             _strategy(("ordering",), _ordering(length)), ("min", "max")),
    Shortcut("order_as_listed", "position", "the items in letter order (or reversed)",
             _strategy(("ordering",), _ordering(None)), ("min", "max")),
    Shortcut("integer_constant", "frequency", "always the same number", _strategy(("integer",), constant),
             tuple(range(0, 10))),
    Shortcut("subject_place", "family", "the place named last / first / most often beside the question's subject",
             _strategy(("free_form",), subject_place), ("max", "min", "most")),
    *(Shortcut(f"order_by_{which}_mention", "position",
               f"the items in the order of their {which} mention in the case (or reversed)",
               _strategy(("ordering",), _ordering(mention_rank(which))), ("min", "max"))
      for which in ("second", "median", "mean")),
    Shortcut("options_in_mention_order", "position",
             "the longest option whose items appear in first (second, median, last, mean) mention order",
             _strategy(MCQ, mention_order), RANKS),
    Shortcut("mentioned_in_time_window", "position",
             "the option(s) mentioned in entries between (or only outside) the question's two times",
             _strategy(MCQ, in_window), ("between", "outside")),
    Shortcut("surface_count", "frequency",
             "a count of entries up to the question's moment (withdrawals, findings, people) plus -1 / 0 / +1",
             _strategy(("integer",), counted), tuple((kind, offset) for kind in COUNTS for offset in OFFSETS)),
    Shortcut("follows_withdrawn_link", "position",
             "the option mentioned soonest after (or nearest to) the entry of the question's withdrawn link",
             _strategy(MCQ, after_link), ("after", "nearest")),
    Shortcut("latest_before_time", "position",
             "the option, or the place beside the subject, mentioned last before (or first after) the question's time",
             _strategy(("mcq_single", "mcq_multi", "free_form"), latest_before), ("before", "after")),
    Shortcut("always_abstain", "frequency", "ANSWER: ABSTAIN on every question (the abstention controls' answer)",
             _strategy(FORMATS, lambda parsed, body, variant: f"ANSWER: {ABSTAIN}")),
    Shortcut("same_time_account", "template",
             "the place named first / last by the entries giving the question's person, day and time",
             _strategy(("mcq_single", "free_form"), same_time), ("first", "last")),
)


def _gold_marks(row: dict) -> set[int]:
    if row["answer"] == ABSTAIN:  # an abstention control: no option is right
        return set()
    if row["answer_format"] == "mcq_single":
        return {LETTERS.index(row["answer"])}
    return {LETTERS.index(x) for x in json.loads(row["answer"])}


def _option_lengths(row: dict) -> list[tuple[float, bool]]:
    if row["answer_format"] not in MCQ:
        return []
    gold = _gold_marks(row)
    return [(float(len(o)), k in gold) for k, o in enumerate(row["options"])]


def _option_mentions(row: dict) -> list[tuple[float, bool]]:
    if row["answer_format"] not in MCQ:
        return []
    context, gold = row["context"], _gold_marks(row)
    return [(float(sum(context.count(u) for u in _units(o))) / len(_units(o)), k in gold)
            for k, o in enumerate(row["options"])]


PROBES = (
    Probe("option_chars", "length", "characters of an option (MCQ)", _option_lengths),
    Probe("option_mentions", "frequency", "mentions of an option's parts in the case (MCQ)", _option_mentions),
)
