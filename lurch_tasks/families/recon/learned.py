"""RECON's learned surface probe (DESIGN 3.5, issue 27 item 3b): every candidate answer of a row with generic,
reasoning-free statistics of where and when the case mentions it, for ``core.probe`` to fit across cases.

Candidates by format: the six options (MCQ), every ordered pair of items (ordering: features of a minus those
of b, gold = a comes first), the numbers 0-15 (integer: distances to a handful of surface counts), and the
(place, entry time) pairs the case names beside the question's subject (free form). Features are mention ranks
(count, first, second, median, last, mean position), the entry times of the mentions against the times the
question names (inside its window, gap before / after each), the distance to mentions of the entities the
question names, length, word overlap with the question and the other options, position in the list, and for
options made of several findings how far they appear in mention order. Nothing traces a link, reads a record or
replays a timeline: no feature knows what an entry states."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from ...core.probe import (
    Candidate,
    LearnedProbe,
    ProbeItem,
    as_features,
    likely_answers,
    nearest_distance,
    order_from_pairs,
    rank_features,
    top_answer,
    word_overlap,
)
from .baselines import MAX_GUESS, subject_mentions
from .narrate import patterns
from .prompt import letters_for
from .questions import ARROW
from .shortcuts import COUNTS, order_fit, surface_count
from .solver import Parsed, split_prompt
from .surface import RANKS, question_times, read_case

DAYS = 30.0  # the case's span: times and gaps are in days, capped at it
MINUTES_PER_DAY = 1440.0


def _days(minutes: float) -> float:
    return min(DAYS, max(-DAYS, minutes / MINUTES_PER_DAY))


def named_entities(parsed: Parsed) -> list[str]:
    """The findings, items, places and people the question names (the longest first, none twice)."""
    slots = patterns(parsed.domain)
    found: list[str] = []
    for kind in ("clue", "thing", "place", "person"):
        for m in re.finditer(slots[kind], parsed.question):
            if not any(m.group(0) in f for f in found):
                found.append(m.group(0))
    return found


class Question:
    """What every candidate of one row is measured against: the case, the question's times, and where the
    entities it names are mentioned (with the first line naming two of them: a link, a withdrawal...)."""

    def __init__(self, parsed: Parsed, body: str) -> None:
        self.parsed, self.case = parsed, read_case(body)
        self.times = question_times(parsed.question)
        entities = named_entities(parsed)
        self.anchors = sorted(p for e in entities for p in self.case.positions(e))
        lines = [k for k in range(len(self.case.starts)) if sum(e in self.case.line(k) for e in entities) >= 2]
        self.co_anchor = self.case.starts[lines[0]] / max(1, len(body)) if lines else None

    def time_features(self, minutes: Sequence[int]) -> tuple[float, ...]:
        """First and last mention time; the share inside the question's window; for each of its first two times
        the share of mentions before it and the gaps to the nearest mention before and after (days)."""
        out = [_days(minutes[0]) if minutes else DAYS, _days(minutes[-1]) if minutes else DAYS]
        window = 0.0
        if len(self.times) >= 2 and minutes:
            low, high = min(self.times[:2]), max(self.times[:2])
            window = sum(low <= m <= high for m in minutes) / len(minutes)
        out.append(window)
        for k in range(2):
            if k >= len(self.times) or not minutes:
                out += [0.0, DAYS, DAYS]
                continue
            t = self.times[k]
            before = [m for m in minutes if m <= t]
            after = [m for m in minutes if m >= t]
            out += [len(before) / len(minutes), _days(t - max(before)) if before else DAYS,
                    _days(min(after) - t) if after else DAYS]
        return tuple(out)

    def text_features(self, text: str) -> tuple[float, ...]:
        """Mention ranks, mention times, distance to the question's entities and to the first line naming two
        of them (next mention after it), length and overlap with the question."""
        positions = self.case.positions(text)
        after = [p - self.co_anchor for p in positions if self.co_anchor is not None and p > self.co_anchor]
        return (*rank_features(positions), *self.time_features(sorted(self.case.times(text))),
                nearest_distance(positions, self.anchors), min(after, default=1.0), len(text) / 100.0,
                word_overlap(text, self.parsed.question))


def _mean(vectors: Sequence[tuple[float, ...]]) -> tuple[float, ...]:
    return tuple(sum(column) / len(vectors) for column in zip(*vectors, strict=True))


# --- MCQ ---------------------------------------------------------------------------------------------------

def option_features(q: Question, options: Sequence[str], k: int) -> tuple[float, ...]:
    """An option's findings' mean text features, how far they appear in each rank's mention order, how many
    there are, its word overlap with the other options and its position in the list."""
    units = options[k].split(ARROW)
    fits = [order_fit(which)([options[k]], q.parsed.question, q.case.body)[0] for which in RANKS]
    shares = [(fit - len(units)) / 100.0 for fit in fits]
    others = " ".join(o for j, o in enumerate(options) if j != k)
    return (*_mean([q.text_features(u) for u in units]), *shares, float(len(units)),
            word_overlap(options[k], others), k / max(1, len(options) - 1))


def mcq_candidates(q: Question, row: dict) -> tuple[Candidate, ...]:
    letters = letters_for(row["answer_format"])
    gold = {row["answer"]} if row["answer_format"] == "mcq_single" else set(json.loads(row["answer"]))
    options = q.parsed.options
    return tuple(Candidate(letters[k], letters[k] in gold, as_features(option_features(q, options, k)))
                 for k in range(len(options)))


# --- ordering ----------------------------------------------------------------------------------------------

def ordering_candidates(q: Question, row: dict) -> tuple[Candidate, ...]:
    """Every ordered pair (a, b) of items: a's features minus b's; gold when a comes before b."""
    letters = letters_for("ordering")
    options = q.parsed.options
    rank_of = {letter: k for k, letter in enumerate(json.loads(row["answer"]))}
    single = [(*q.text_features(o), k / max(1, len(options) - 1)) for k, o in enumerate(options)]
    return tuple(Candidate(f"{letters[a]}>{letters[b]}", rank_of[letters[a]] < rank_of[letters[b]],
                           as_features(x - y for x, y in zip(single[a], single[b], strict=True)))
                 for a in range(len(options)) for b in range(len(options)) if a != b)


# --- integer -----------------------------------------------------------------------------------------------

OFFSETS = (-2, -1, 0, 1, 2)


def surface_counts(q: Question) -> list[float]:
    """Counts a reader can take off the surface: entries by keyword up to the question's moment
    (``shortcuts.COUNTS``), the people the question lists, mentions of each of its first two named entities, and
    the entries between those two's first mentions."""
    counts = [float(surface_count(q.case.body, q.parsed.question, kind) or 0) for kind in COUNTS]
    listed = q.parsed.question.rpartition(": ")[2]
    counts.append(float(len(re.findall(patterns(q.parsed.domain)["person"], listed))) if ", " in listed else 0.0)
    entities = named_entities(q.parsed)[:2]
    firsts = []
    for k in range(2):
        found = q.case.offsets(entities[k]) if k < len(entities) else []
        counts.append(float(len(found)))
        firsts.append(found[0] if found else None)
    if None in firsts:
        counts.append(0.0)
    else:
        lines = sorted(q.case.line_at(f) for f in firsts)
        counts.append(float(lines[1] - lines[0]))
    return counts


def integer_candidates(q: Question, row: dict) -> tuple[Candidate, ...]:
    """Each number 0-15 with its distance to each surface count and whether it is that count plus -2..+2."""
    counts = surface_counts(q)
    gold = int(row["answer"])
    out = []
    for value in range(MAX_GUESS + 1):
        features = [value / MAX_GUESS]
        for c in counts:
            features += [min(abs(value - c), MAX_GUESS) / MAX_GUESS, *(float(value == c + d) for d in OFFSETS)]
        out.append(Candidate(str(value), value == gold, as_features(features)))
    return tuple(out)


# --- free form ---------------------------------------------------------------------------------------------

def free_form_candidates(q: Question, row: dict) -> tuple[Candidate, ...]:
    """Each (place, entry time) the case names beside the question's subject: when that entry is against the
    question's time, its rank among the subject's entries, whether it repeats the question's day and clock time,
    and the place's own mention statistics. Gold: the place is a key fact (and the time, when one is)."""
    subject, found = subject_mentions(q.parsed, q.case.body)
    if not found:
        return ()
    facts = json.loads(row["answer"])["key_facts"]
    asked = re.search(r"Day (\d+)(?:,| at about| around) (\d\d:\d\d)", q.parsed.question)
    clock = asked.group(2) if asked else None
    stamps = [_stamp_minute(s) for _, s in found]
    t = q.times[0] if q.times else None
    before = sorted({m for m in stamps if t is not None and m is not None and m <= t}, reverse=True)
    seen: set[tuple[str, str]] = set()
    out = []
    for k, (place, stamp) in enumerate(found):
        if (place, stamp) in seen:
            continue
        seen.add((place, stamp))
        minute = stamps[k]
        same_clock = float(clock is not None and any(
            clock in q.case.line(j) and place in q.case.line(j) and subject in q.case.line(j)
            for j in q.case.lines_with(place, clock)))
        recency = float(before.index(minute)) / max(1, len(before)) if minute in before else 1.0
        gap = _days(t - minute) if t is not None and minute is not None else DAYS
        features = (gap, float(gap >= 0), recency, same_clock, k / max(1, len(found) - 1),
                    sum(p == place for p, _ in found) / len(found), *rank_features(q.case.positions(place)),
                    word_overlap(place, q.parsed.question))
        gold = place in facts and all(f == place or f == stamp or not f.startswith("Day ") for f in facts)
        out.append(Candidate(json.dumps([subject, place, stamp]), gold, as_features(features)))
    return tuple(out)


def _stamp_minute(stamp: str) -> int | None:
    times = question_times(stamp)
    return times[0] if times else None


# --- read and decode ---------------------------------------------------------------------------------------

def read(row: dict) -> ProbeItem | None:
    """A generated row as the probe sees it: grouped by case, one model per category/format slot, reported per
    slot; None for a row that is not RECON's."""
    parsed = split_prompt(row["prompt"], read_case=False)
    if parsed is None:
        return None
    q = Question(parsed, row["prompt"].rpartition("Question: ")[0])
    maker = {"mcq_single": mcq_candidates, "mcq_multi": mcq_candidates, "ordering": ordering_candidates,
             "integer": integer_candidates, "free_form": free_form_candidates}[row["answer_format"]]
    case = str(json.loads(row["params"])["case_seed"])
    slot = audit_slot(row)  # one model per slot: a per-format model is the weaker attack (it averages slots)
    return ProbeItem(case, slot, slot,
                     maker(q, row))


def decode(item: ProbeItem, probabilities: Sequence[float]) -> str:
    """The answer line the RECON scorer reads, in the format the report key names (not the model key, which a
    caller may regroup)."""
    answer_format = item.report.rpartition("/")[2]
    if answer_format == "mcq_multi":
        return "ANSWER: " + ", ".join(likely_answers(item, probabilities))
    if answer_format == "ordering":
        return "ANSWER: " + ", ".join(order_from_pairs(item, probabilities))
    if answer_format == "free_form":
        subject, place, stamp = json.loads(top_answer(item, probabilities))
        return f"ANSWER: {subject} was at {place}, from {stamp}."
    return f"ANSWER: {top_answer(item, probabilities)}"


LEARNED_PROBE = LearnedProbe(
    "RECON candidates (options, ordered item pairs, numbers 0-15, places beside the subject) with their mention "
    "ranks, mention times against the question's times, distance to the question's entities, length, overlap, "
    "position and mention-order fit; one model per answer format, held out by case", read, decode)


def audit_slot(row: dict) -> str:
    """The slot a row is audited in: its question category and answer format (the quota matrix's cell)."""
    return f"{row['difficulty']['category']}/{row['answer_format']}"


def slot_chance(slot: str) -> float | None:
    """A uniform option, subset or permutation scores 0 exactly (see ``chance``); integer and free-form slots are
    measured with the seeded guess."""
    return 0.0 if slot.rpartition("/")[2] in ("mcq_single", "mcq_multi", "ordering") else None
