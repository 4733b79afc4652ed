"""The case blueprint: every structural part of a case (evidence trails and their conclusions, invalidations,
a source conflict, counterfactual discoveries with their dependent actions, an alibi window covered by parallel
streams, an item's custody history) as production rules with ``requires`` / ``establishes`` attributes, and a
stream of routine filler units built from the same rules, entry types, authors and people."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ...core.names import NameMaker
from ...core.rng import StableRng
from .case import LAST_DAY, MINUTES_PER_DAY, Entry, at
from .catalog import Domain

IMPLICATED = 8  # people implicated at some point: the culprit (on two trails) and seven others
ALIBI_SUBJECTS = 6
CUSTODY_MOVES = 6
ORDERED_MOVES = 7  # the ordering question's history: every place but the one it names is an option
ROSTER = 6  # people in the elimination and stream-matching rosters
CONFLICT_PLACES = 6
LAST_CONCLUSION_DAY = 18  # trails conclude by then; withdrawals come after
WORK_START, WORK_END = 7 * 60, 21 * 60  # entries are written in working hours
MIN_GAP = 10  # minutes between the entries of one trail, one custody history, one result's actions


@dataclass(frozen=True)
class Trail:
    origin: str
    clues: tuple[str, ...]  # reached one link at a time from the origin; the last one supports the conclusion
    person: str  # implicated by the trail's conclusion
    minutes: tuple[int, ...]  # origin, each link, the conclusion


@dataclass(frozen=True)
class Withdrawal:
    trail: int
    hop: int  # the link clues[hop - 1] -> clues[hop] (hop 0: origin -> clues[0])
    minute: int
    reason: str


@dataclass(frozen=True)
class Conflict:
    subject: str
    minute: int  # the moment both accounts describe
    true_place: str
    false_place: str
    other_places: tuple[str, ...]  # where the subject was recorded at other times
    later_is_true: bool  # the later of the two statements is the right one


@dataclass(frozen=True)
class Action:
    phrase: str
    minute: int
    clue: str  # the result it needs
    done: bool  # False: it could not go ahead, the result was not in yet


@dataclass(frozen=True)
class Discovery:
    clue: str
    minute: int
    actions: tuple[Action, ...]


@dataclass(frozen=True)
class Presence:
    stream: str
    person: str
    place: str
    start: int
    end: int


@dataclass(frozen=True)
class Alibi:
    start: int
    end: int
    place: str
    records: tuple[Presence, ...]  # two per subject, from two streams
    subjects: tuple[str, ...]
    unaccounted: str  # the subject whose records leave a gap in the window


@dataclass(frozen=True)
class Custody:
    thing: str
    moves: tuple[tuple[int, str], ...]  # (minute, place)


@dataclass(frozen=True)
class Roster:
    """Six people with records at one place on one day. ``elimination``: five are recorded there, the gold
    elsewhere. ``streams``: every one is recorded there twice, each by a different pair of streams."""

    place: str
    day: int
    people: tuple[str, ...]
    gold: str
    streams: tuple[tuple[str, str], ...]  # per person, the two streams that recorded them (stream matching)


@dataclass(frozen=True)
class Blueprint:
    domain: Domain
    incident: str
    culprit: str
    trails: tuple[Trail, ...]  # trails 0 and 1 implicate the culprit
    withdrawals: tuple[Withdrawal, ...]
    conflict: Conflict
    discoveries: tuple[Discovery, ...]
    alibi: Alibi
    custody: Custody
    entries: tuple[Entry, ...]  # the structural rules (routine filler comes from ``filler_units``)
    chain_trail: int  # the trail the chain question asks about
    twin: Trail  # a closed trail shaped and timed like it: the wrong options' findings come from it
    ordered: Custody  # a second custody history (the ordering question)
    absent: Roster  # elimination
    matched: Roster  # stream matching
    ordered_trail: int  # the trail the chain ordering question asks about


class Names:
    """The case's invented people, places and items, each used once where it must be unique."""

    def __init__(self, domain: Domain, rng: StableRng, people: int, places: int) -> None:
        self.domain, self.rng = domain, rng
        maker = NameMaker(rng)
        self.people = [maker.person() for _ in range(people)]
        self.places = [f"{maker.city()} {rng.choice(domain.place_kinds)}" for _ in range(places)]
        self.reserved: set[str] = set()  # places that only one structural part mentions
        self.protected: set[str] = set()  # people whose whereabouts a question asks about: no routine sightings
        self._clues: set[str] = set()
        self._things: set[str] = set()
        self._actions: set[str] = set()

    def person(self) -> str:
        return self.rng.choice(self.people)

    def sighted(self) -> str:
        """Someone a routine record or statement may place somewhere."""
        while True:
            person = self.rng.choice(self.people)
            if person not in self.protected:
                return person

    def author(self, entry_type: str) -> str:
        return f"{self.rng.choice(self.domain.entry_types[entry_type])} {self.person()}"

    def stream_author(self, role: str) -> str:
        return f"{role} {self.person()}"

    def place(self) -> str:
        while True:
            place = self.rng.choice(self.places)
            if place not in self.reserved:
                return place

    def reserve(self, k: int) -> list[str]:
        free = [p for p in self.places if p not in self.reserved]
        chosen = self.rng.sample(free, k)
        self.reserved.update(chosen)
        return chosen

    def thing(self) -> str:
        return f"the {self.rng.choice(self.domain.adjectives)} {self.rng.choice(self.domain.items)}"

    def held_thing(self) -> str:
        """An item with a custody history of its own (never shared with another history)."""
        return _fresh(self.thing, self._things, "items")

    def clue(self) -> str:
        return _fresh(lambda: f"{self.thing()} from {self.place()}", self._clues, "items")

    def action(self) -> str:
        return _fresh(lambda: self.rng.choice(self.domain.actions).format(place=self.place(), person=self.person()),
                      self._actions, "actions")


MAX_DRAWS = 10_000


def _fresh(draw: Callable[[], str], used: set[str], what: str) -> str:
    """A draw not in ``used`` (then recorded there)."""
    for _ in range(MAX_DRAWS):
        value = draw()
        if value not in used:
            used.add(value)
            return value
    raise ValueError(f"context_tokens: the case ran out of distinct {what}; allowed: a smaller target")


def work_minute(rng: StableRng, first_day: int, last_day: int) -> int:
    return at(rng.integer(first_day, last_day), 0) + rng.integer(WORK_START, WORK_END)


def spread(rng: StableRng, start: int, end: int, n: int, gap: int = MIN_GAP) -> list[int]:
    """``n`` sorted minutes in [start, end], in working hours, at least ``gap`` apart (so a moment can always be
    named strictly between two of them)."""
    chosen: list[int] = []
    while len(chosen) < n:
        minute = rng.integer(start, end)
        if WORK_START <= minute % MINUTES_PER_DAY <= WORK_END and all(abs(minute - m) >= gap for m in chosen):
            chosen.append(minute)
    return sorted(chosen)


def entry(names: Names, minute: int, entry_type: str, fact: dict, requires=(), establishes=(),
          structural: bool = True) -> Entry:
    return Entry(minute, entry_type, names.author(entry_type), fact, tuple(requires), tuple(establishes), structural)


def trail_entries(names: Names, origin: str, clues: list[str], minutes: list[int], ending: dict,
                  structural: bool = True) -> list[Entry]:
    """A lead, one link per clue, and its ending (a conclusion or a closed line) as rules."""
    domain = names.domain
    out = [entry(names, minutes[0], names.rng.choice(domain.finding_types), {"kind": "lead", "clue": origin}, (),
                 (f"found:{origin}",), structural)]
    previous = origin
    for clue, minute in zip(clues, minutes[1:], strict=False):
        out.append(entry(names, minute, names.rng.choice(domain.finding_types),
                         {"kind": "link", "from": previous, "to": clue}, (f"found:{previous}",),
                         (f"found:{clue}", f"link:{previous}>{clue}"), structural))
        previous = clue
    kind = ending["kind"]
    establishes = (f"implicated:{ending['person']}",) if kind == "conclude" else ()
    out.append(entry(names, minutes[-1], names.rng.choice(domain.finding_types), {**ending, "clue": previous},
                     (f"found:{previous}",), establishes, structural))
    return out


def build_trail(names: Names, hops: int, person: str, end_day: int, span_days: int) -> Trail:
    start_day = max(2, end_day - span_days)
    minutes = spread(names.rng, at(start_day, 0), at(end_day, 23, 59), hops + 2)
    return Trail(names.clue(), tuple(names.clue() for _ in range(hops)), person, tuple(minutes))


def build_blueprint(names: Names, hops: list[int]) -> Blueprint:
    """The structural case. ``hops``: the link count of each conclusion trail (the first two implicate the
    culprit)."""
    domain, rng = names.domain, names.rng
    # places only one part may mention, set aside before any other part picks a place
    alibi_place = names.reserve(1)[0]
    conflict_places = names.reserve(CONFLICT_PLACES)
    custody_places = names.reserve(CUSTODY_MOVES)
    ordered_places = names.reserve(ORDERED_MOVES)
    roster_places = names.reserve(2)
    incident = domain.incident.format(place=alibi_place)
    implicated = rng.sample(names.people, len(hops) - 1)
    culprit = implicated[0]
    persons = [culprit, *implicated]
    # every conclusion is reached before the first withdrawal can come, so which conclusions a withdrawal leaves
    # standing is independent of when they were reached (no "the later ones still stand" cue)
    trails = [build_trail(names, h, p, rng.integer(6, LAST_CONCLUSION_DAY), rng.integer(3, 18))
              for h, p in zip(hops, persons, strict=True)]
    entries: list[Entry] = []
    for trail in trails:
        ending = {"kind": "conclude", "person": trail.person}
        entries += trail_entries(names, trail.origin, list(trail.clues), list(trail.minutes), ending)
    # every trail but the culprit's second loses one link after its conclusion; the culprit's first is the trap
    # (its conclusion survives through the independent second trail)
    withdrawals = []
    for k, trail in enumerate(trails):
        if k == 1:
            continue
        hop = rng.below(len(trail.clues))
        minute = spread(rng, at(LAST_CONCLUSION_DAY + 1, 0), at(LAST_DAY, 20), 1)[0]
        withdrawals.append(Withdrawal(k, hop, minute, rng.choice(domain.invalidations)))
    for w in withdrawals:
        trail = trails[w.trail]
        source = trail.origin if w.hop == 0 else trail.clues[w.hop - 1]
        target = trail.clues[w.hop]
        entries.append(entry(names, w.minute, rng.choice(domain.finding_types),
                             {"kind": "withdraw", "from": source, "to": target, "reason": w.reason},
                             (f"link:{source}>{target}",), (f"withdrawn:{source}>{target}",)))
    asked = rng.below(len(trails))
    twin, twin_entries = build_twin(names, trails[asked], next((w for w in withdrawals if w.trail == asked), None))
    entries += twin_entries
    conflict, conflict_entries = build_conflict(names, culprit, conflict_places)
    discoveries, discovery_entries = build_discoveries(names)
    alibi, alibi_entries = build_alibi(names, alibi_place, incident, culprit)
    custody, custody_entries = build_custody(names, custody_places)
    ordered, ordered_entries = build_custody(names, ordered_places)
    absent, absent_entries = build_elimination(names, roster_places[0])
    matched, matched_entries = build_stream_matching(names, roster_places[1])
    entries += (conflict_entries + discovery_entries + alibi_entries + custody_entries + ordered_entries
                + absent_entries + matched_entries)
    # the ordering questions' items are each named once before the first and once after the last of them (a
    # trail's findings logged and reviewed, a custody history's places checked), so the order in which items are
    # first or last mentioned says nothing about their order. The trail is the shortest but the chain question's
    # (whose options must not tell its own findings from the twin's by such entries).
    ordered_trail = min((k for k in range(len(trails)) if k != asked), key=lambda k: (len(trails[k].clues), k))
    entries += bracket_mentions(names, list(trails[ordered_trail].clues), "clue", "intake", "review",
                                trails[ordered_trail].minutes[1], trails[ordered_trail].minutes[-1])
    entries += bracket_mentions(names, [place for _, place in ordered.moves], "place", "check", "check",
                                ordered.moves[0][0], ordered.moves[-1][0])
    return Blueprint(domain, incident, culprit, tuple(trails), tuple(withdrawals), conflict, tuple(discoveries),
                     alibi, custody, tuple(entries), asked, twin, ordered, absent, matched, ordered_trail)


def bracket_mentions(names: Names, items: list[str], slot: str, before: str, after: str, first: int, last: int
                     ) -> list[Entry]:
    """For each item an entry of kind ``before`` at a random time before ``first`` and one of kind ``after`` at
    a random time after ``last`` (``slot``: the fact field that names the item)."""
    out = []
    for item in items:
        for kind, low, high in ((before, at(1, 0), first - 30), (after, last + 30, at(LAST_DAY, 21))):
            minute = spread(names.rng, low, high, 1)[0]
            out.append(entry(names, minute, names.rng.choice(names.domain.finding_types), {"kind": kind, slot: item},
                             (), ()))
    return out


def build_twin(names: Names, trail: Trail, withdrawal: Withdrawal | None) -> tuple[Trail, list[Entry]]:
    """A routine trail with the asked trail's length, stretch of days and (if it has one) a withdrawn link, so
    a finding borrowed from it into a wrong option is mentioned as often and as late as the trail's own."""
    rng = names.rng
    hops = len(trail.clues)
    minutes = spread(rng, at(day_of_minute(trail.minutes[0]), 0), at(day_of_minute(trail.minutes[-1]), 23, 59),
                     hops + 2)
    twin = Trail(names.clue(), tuple(names.clue() for _ in range(hops)), names.person(), tuple(minutes))
    entries = trail_entries(names, twin.origin, list(twin.clues), minutes, {"kind": "close", "person": twin.person})
    if withdrawal is not None:
        hop = rng.below(hops)
        clues = [twin.origin, *twin.clues]
        minute = spread(rng, minutes[-1] + 30, at(LAST_DAY, 20), 1)[0]  # drawn as the trails' own are
        entries.append(entry(names, minute, rng.choice(names.domain.finding_types),
                             {"kind": "withdraw", "from": clues[hop], "to": clues[hop + 1],
                              "reason": rng.choice(names.domain.invalidations)},
                             (f"link:{clues[hop]}>{clues[hop + 1]}",), (f"withdrawn:{clues[hop]}>{clues[hop + 1]}",)))
    return twin, entries


def record_entry(names: Names, presence: Presence, logged: int, structural: bool = True) -> Entry:
    stream = next(s for s in names.domain.streams if s.name == presence.stream)
    fact = {"kind": "record", "person": presence.person, "place": presence.place, "start": presence.start,
            "end": presence.end}
    return Entry(logged, stream.entry_type, names.stream_author(stream.author_role), fact, (),
                 (f"seen:{presence.person}@{presence.start}",), structural)


def statement_entry(names: Names, person: str, place: str, minute: int, logged: int, structural: bool = True) -> Entry:
    return entry(names, logged, names.domain.statement_type,
                 {"kind": "statement", "person": person, "place": place, "minute": minute}, (),
                 (f"claim:{person}@{minute}:{place}",), structural)


def interval_around(rng: StableRng, minute: int) -> tuple[int, int]:
    return minute - rng.integer(10, 50), minute + rng.integer(10, 50)


def build_conflict(names: Names, culprit: str, places: list[str]) -> tuple[Conflict, list[Entry]]:
    """Two incompatible accounts of where someone was, and a record from a stream that settles it. Every place
    the question offers is mentioned with the subject twice within a few days: the false one also by a record
    from earlier that day, each other one by two records of a visit on another day (so neither how often nor
    when a place is mentioned tells the true one)."""
    rng = names.rng
    subject = rng.choice([p for p in names.people if p != culprit])
    names.protected.add(subject)
    true_place, false_place, others = places[0], places[1], places[2:]
    day = rng.integer(3, 24)
    minute = at(day, 0) + rng.integer(13 * 60, 19 * 60)
    first, second = sorted(spread(rng, minute + 60, minute + 3 * MINUTES_PER_DAY, 2))
    later_is_true = rng.below(2) == 1
    true_logged, false_logged = (second, first) if later_is_true else (first, second)
    entries = [statement_entry(names, subject, true_place, minute, true_logged),
               statement_entry(names, subject, false_place, minute, false_logged)]
    stream = rng.choice(names.domain.streams).name
    start, end = interval_around(rng, minute)
    resolve = record_entry(names, Presence(stream, subject, true_place, start, end),
                           work_minute(rng, day_of_minute(second) + 1, day_of_minute(second) + 2))
    entries.append(Entry(resolve.minute, resolve.entry_type, resolve.author, resolve.fact,
                         (f"claim:{subject}@{minute}:{true_place}", f"claim:{subject}@{minute}:{false_place}"),
                         resolve.establishes))
    earlier = minute - rng.integer(4 * 60, 8 * 60)  # at the false place that morning: never near the moment
    # logged like the settling record, so which of the two places is mentioned last is a coin toss
    entries.append(visit_record(names, subject, false_place, earlier, day_of_minute(second) + 1,
                                day_of_minute(second) + 2))
    for place in others:
        visit_day = rng.choice([d for d in range(3, 25) if abs(d - day) > 1])
        morning = at(visit_day, 0) + rng.integer(8 * 60, 12 * 60)
        entries += [visit_record(names, subject, place, morning, visit_day + 1, visit_day + 4),
                    visit_record(names, subject, place, morning + rng.integer(4 * 60, 8 * 60), visit_day + 1,
                                 visit_day + 4)]
    return Conflict(subject, minute, true_place, false_place, tuple(others), later_is_true), entries


def visit_record(names: Names, person: str, place: str, moment: int, first_day: int, last_day: int) -> Entry:
    """A record of ``person`` at ``place`` around ``moment``, logged between two days."""
    start, end = interval_around(names.rng, moment)
    return record_entry(names, Presence(names.rng.choice(names.domain.streams).name, person, place, start, end),
                        work_minute(names.rng, first_day, last_day))


def day_of_minute(minute: int) -> int:
    return minute // MINUTES_PER_DAY + 1


DONE_ACTIONS, BLOCKED_ACTIONS = 4, 3


def build_discoveries(names: Names) -> tuple[list[Discovery], list[Entry]]:
    """Two results, each awaited by actions: those planned after the result went ahead, those planned before
    could not (so moving a result earlier or later changes which actions take place)."""
    rng = names.rng
    discoveries, entries = [], []
    for _ in range(2):
        clue = names.clue()
        minute = work_minute(rng, 9, 20)
        done = spread(rng, minute + 30, minute + 8 * MINUTES_PER_DAY, DONE_ACTIONS)
        blocked = spread(rng, max(at(2, 0), minute - 7 * MINUTES_PER_DAY), minute - 30, BLOCKED_ACTIONS)
        actions = [Action(names.action(), m, clue, True) for m in done]
        actions += [Action(names.action(), m, clue, False) for m in blocked]
        entries.append(entry(names, minute, names.rng.choice(names.domain.finding_types),
                             {"kind": "result", "clue": clue}, (), (f"result:{clue}",)))
        entries += [action_entry(names, a) for a in actions]
        discoveries.append(Discovery(clue, minute, tuple(sorted(actions, key=lambda a: a.minute))))
    return discoveries, entries


def action_entry(names: Names, action: Action, structural: bool = True) -> Entry:
    fact = {"kind": "action", "action": action.phrase, "clue": action.clue, "done": action.done}
    requires = (f"result:{action.clue}",) if action.done else ()
    return entry(names, action.minute, names.domain.action_type, fact, requires, (f"action:{action.phrase}",),
                 structural)


def build_alibi(names: Names, place: str, incident: str, culprit: str) -> tuple[Alibi, list[Entry]]:
    """The incident's window on Day 1, and two records from two streams for each of six people: together they
    cover the window for five of them; one is left with a gap. No single record covers the window."""
    rng = names.rng
    start = at(1, 0) + rng.integer(18 * 60, 20 * 60)
    end = start + rng.integer(60, 120)
    subjects = rng.sample([p for p in names.people if p != culprit and p not in names.protected], ALIBI_SUBJECTS)
    names.protected.update(subjects)
    unaccounted = subjects[rng.below(ALIBI_SUBJECTS)]
    records: list[Presence] = []
    entries = [entry(names, at(1, 23, 30), names.domain.statement_type,
                     {"kind": "incident", "incident": incident, "start": start, "end": end}, (), ("incident",))]
    for person in subjects:
        first_stream, second_stream = rng.sample(names.domain.streams, 2)
        split = rng.integer(start + 15, end - 25)
        before = Presence(first_stream.name, person, names.place(), start - rng.integer(20, 90), split)
        resume = split + rng.integer(15, 20) if person == unaccounted else split - rng.integer(0, 15)
        after = Presence(second_stream.name, person, names.place(), resume, end + rng.integer(10, 60))
        records += [before, after]
        for presence in rng.shuffled([before, after]):
            entries.append(record_entry(names, presence, work_minute(rng, 2, 4)))
    return Alibi(start, end, place, tuple(records), tuple(subjects), unaccounted), entries


def build_custody(names: Names, places: list[str]) -> tuple[Custody, list[Entry]]:
    """An item moved to each of ``places`` in turn, on days spread over the case."""
    rng = names.rng
    thing = names.held_thing()
    minutes = spread(rng, at(2, 0), at(LAST_DAY - 1, 23), len(places))
    entries = []
    for k, (minute, place) in enumerate(zip(minutes, places, strict=True)):
        requires = (f"custody:{thing}:{k - 1}",) if k else ()
        entries.append(entry(names, minute, rng.choice(names.domain.finding_types),
                             {"kind": "custody", "thing": thing, "place": place}, requires, (f"custody:{thing}:{k}",)))
    return Custody(thing, tuple(zip(minutes, places, strict=True))), entries


def roster_record(names: Names, person: str, place: str, day: int, stream: str) -> Entry:
    start = at(day, 0) + names.rng.integer(8 * 60, 19 * 60)
    return record_entry(names, Presence(stream, person, place, start, start + names.rng.integer(20, 120)),
                        work_minute(names.rng, day + 1, day + 3))


def build_elimination(names: Names, place: str) -> tuple[Roster, list[Entry]]:
    """Five of six people recorded at ``place`` on one day; the sixth recorded elsewhere that day."""
    rng = names.rng
    day = rng.integer(3, 24)
    people = rng.sample(names.people, ROSTER)
    gold = people[rng.below(ROSTER)]
    entries = [roster_record(names, p, names.place() if p == gold else place, day,
                             rng.choice(names.domain.streams).name) for p in people]
    return Roster(place, day, tuple(people), gold, ()), entries


def build_stream_matching(names: Names, place: str) -> tuple[Roster, list[Entry]]:
    """Six people each recorded twice at ``place`` on one day, each by a different pair of the four streams
    (there are exactly six pairs): the gold is the one the question's two streams both recorded."""
    rng = names.rng
    day = rng.integer(3, 24)
    people = rng.sample(names.people, ROSTER)
    streams = [s.name for s in names.domain.streams]
    pairs = rng.shuffled([(a, b) for i, a in enumerate(streams) for b in streams[i + 1:]])
    entries = []
    for person, pair in zip(people, pairs, strict=True):
        entries += [roster_record(names, person, place, day, stream) for stream in rng.shuffled(list(pair))]
    gold = people[rng.below(ROSTER)]
    return Roster(place, day, tuple(people), gold, tuple(pairs)), entries


# ----------------------------------------------------------------------------------------------- routine filler

def filler_units(names: Names, rng: StableRng) -> Iterator[list[Entry]]:
    """An endless stream of routine units (a closed trail, a consistent statement and its record, a record,
    custody moves, a result and the actions it allowed), each written with the same rules as the evidence."""
    makers = (routine_trail, routine_trail, routine_sighting, routine_record, routine_custody, routine_result)
    while True:
        yield rng.choice(makers)(names, rng)


def routine_trail(names: Names, rng: StableRng) -> list[Entry]:
    hops = rng.integer(1, 4)
    end_day = rng.integer(3, LAST_DAY)
    minutes = spread(rng, at(max(2, end_day - rng.integer(1, 10)), 0), at(end_day, 23), hops + 2)
    clues = [names.clue() for _ in range(hops + 1)]
    return trail_entries(names, clues[0], clues[1:], minutes, {"kind": "close", "person": names.person()},
                         structural=False)


def routine_sighting(names: Names, rng: StableRng) -> list[Entry]:
    person, place = names.sighted(), names.place()
    day = rng.integer(2, LAST_DAY - 3)
    minute = at(day, 0) + rng.integer(8 * 60, 20 * 60)
    start, end = interval_around(rng, minute)
    return [statement_entry(names, person, place, minute, work_minute(rng, day, day + 2), structural=False),
            record_entry(names, Presence(rng.choice(names.domain.streams).name, person, place, start, end),
                         work_minute(rng, day + 1, day + 3), structural=False)]


def routine_record(names: Names, rng: StableRng) -> list[Entry]:
    day = rng.integer(1, LAST_DAY - 3)
    start = at(day, 0) + rng.integer(7 * 60, 21 * 60)
    presence = Presence(rng.choice(names.domain.streams).name, names.sighted(), names.place(), start,
                        start + rng.integer(20, 120))
    return [record_entry(names, presence, work_minute(rng, day + 1, day + 3), structural=False)]


def routine_custody(names: Names, rng: StableRng) -> list[Entry]:
    thing, moves = names.held_thing(), rng.integer(1, 3)
    minutes = spread(rng, at(2, 0), at(LAST_DAY, 20), moves)
    return [entry(names, m, rng.choice(names.domain.finding_types),
                  {"kind": "custody", "thing": thing, "place": names.place()}, structural=False) for m in minutes]


def routine_result(names: Names, rng: StableRng) -> list[Entry]:
    clue = names.clue()
    minute = work_minute(rng, 2, LAST_DAY - 2)
    out = [entry(names, minute, rng.choice(names.domain.finding_types), {"kind": "result", "clue": clue}, (),
                 (f"result:{clue}",), structural=False)]
    later = [m for m in spread(rng, minute + 30, min(minute + 5 * MINUTES_PER_DAY, at(LAST_DAY, 20)), 2)]
    out += [action_entry(names, Action(names.action(), m, clue, True), structural=False) for m in later]
    return out
