"""The case blueprint: every structural part of a case (evidence trails and their conclusions, invalidations,
a source conflict, counterfactual discoveries with their dependent actions, an alibi window covered by parallel
streams, an item's custody history) as production rules with ``requires`` / ``establishes`` attributes, and a
stream of routine filler units built from the same rules, entry types, authors and people."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ...core.names import NameMaker
from ...core.rng import StableRng
from .case import LAST_DAY, MINUTES_PER_DAY, Entry, at
from .catalog import Domain

COUNTED_HOPS = (3, 9)  # the integer chain question's link counts (every domain's trails reach 9 links)
IMPLICATED = 8  # people implicated at some point: the culprit (on two trails) and seven others
ALIBI_SUBJECTS = 6
CUSTODY_MOVES = 6
NEAR_CHECKS = 3  # register checks per custody place a look-alike gap before the asked moment (retrieval state)
ORDERED_MOVES = 7  # the ordering question's history: every place but the one it names is an option
ROSTER = 6  # people in the elimination and stream-matching rosters
CONFLICT_PLACES = 6
LAST_CONCLUSION_DAY = 18  # trails conclude by then; withdrawals come after
LAST_LINK_DAY = 14  # every trail's links come before every conclusion (days 15-18): a withdrawn link's entry is
# followed by every conclusion, so which one follows it most closely is the earliest, not the link's own
FIRST_WITHDRAWAL_DAY = 19
CORRECTION_HOPS = 5  # links of the closed line whose withdrawals change no conclusion
DECOYS = 5  # counterfactual: actions inside the question's window that do not await the result
JITTER = 4  # minutes between a trail's entry and its twin's (or its cross-check's) neighbour
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
    open_minute: int = -1  # a control case's second disputed moment, which no record settles (-1: none)
    open_claims: tuple[str, ...] = ()  # the two places its accounts give


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
class Plan:
    """The counterfactual questions' window: the result moved to ``moved`` (later or earlier); ``gold`` actions
    are the result's own inside the window, ``decoys`` actions inside it that do not await the result, drawn
    from the same times (so being mentioned between the question's two times singles out nothing)."""

    form: str  # "later" | "earlier"
    moved: int
    gold: tuple[Action, ...]
    decoys: tuple[Action, ...]
    k: int  # how many gold options the multiple-answer question offers


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
    ordered_trail: int  # the trail the chain ordering question asks about (the chain question's own)
    cascade_moment: int  # the moment the integer cascade question asks about
    counterfactual: Plan
    held: tuple[int, int]  # the retrieval state questions' (move, moment): the item is where move j took it
    counted_trail: int  # the trail the integer chain question counts (its link count drawn first, uniformly)


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
        """Anyone but a protected person (whose lines are all about the question that names them)."""
        return self.sighted()

    def sighted(self) -> str:
        """Someone a routine record or statement may place somewhere."""
        while True:
            person = self.rng.choice(self.people)
            if person not in self.protected:
                return person

    def author(self, entry_type: str) -> str:
        """Never a protected person: a line naming the question's subject is about them (so the places named
        beside them are the question's own)."""
        return f"{self.rng.choice(self.domain.entry_types[entry_type])} {self.sighted()}"

    def stream_author(self, role: str) -> str:
        return f"{role} {self.sighted()}"

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


def build_trail(names: Names, hops: int, person: str) -> Trail:
    """A lead and its links on days spread before ``LAST_LINK_DAY``, then the conclusion in the conclusions'
    block (days 15-18)."""
    rng = names.rng
    end_day = rng.integer(5, LAST_LINK_DAY)
    start_day = max(2, end_day - rng.integer(3, 12))
    minutes = spread(rng, at(start_day, 0), at(end_day, 23, 59), hops + 1)
    minutes.append(work_minute(rng, LAST_LINK_DAY + 1, LAST_CONCLUSION_DAY))
    return Trail(names.clue(), tuple(names.clue() for _ in range(hops)), person, tuple(minutes))


def build_blueprint(names: Names, hops: list[int], form: str, counted: int = 0, control: bool = False) -> Blueprint:
    """The structural case. ``hops``: the link count of each conclusion trail (the first two implicate the
    culprit); ``form``: the counterfactual questions' direction (the result moved ``later`` or ``earlier``);
    ``counted``: the trail the integer chain question counts; ``control``: an abstention-control case (its conflict
    has a second disputed moment that no record settles)."""
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
    subject = rng.choice([p for p in names.people if p not in persons])  # the conflict's: protected from the start
    names.protected.add(subject)
    # every conclusion is reached before the first withdrawal can come, so which conclusions a withdrawal leaves
    # standing is independent of when they were reached (no "the later ones still stand" cue)
    trails = [build_trail(names, h, p) for h, p in zip(hops, persons, strict=True)]
    entries: list[Entry] = []
    for trail in trails:
        ending = {"kind": "conclude", "person": trail.person}
        entries += trail_entries(names, trail.origin, list(trail.clues), list(trail.minutes), ending)
    closed = build_trail(names, CORRECTION_HOPS, names.person())
    entries += trail_entries(names, closed.origin, list(closed.clues), list(closed.minutes),
                             {"kind": "close", "person": closed.person})
    moment, withdrawals, corrections = plan_withdrawals(names, trails, closed)
    for trail, hop, minute, reason in [(trails[w.trail], w.hop, w.minute, w.reason) for w in withdrawals] + corrections:
        entries.append(withdraw_entry(names, trail, hop, minute, reason))
    asked = rng.below(len(trails))
    twin, twin_entries = build_twin(names, trails[asked], sum(w.trail == asked for w in withdrawals))
    entries += twin_entries
    conflict, conflict_entries = build_conflict(names, subject, conflict_places, control)
    discovery, plan, discovery_entries = build_discovery(names, form)
    alibi, alibi_entries = build_alibi(names, alibi_place, incident, culprit)
    custody, custody_entries = build_custody(names, custody_places)
    held, held_entries = plan_held(names, custody)
    custody_entries += held_entries
    ordered, ordered_entries = build_custody(names, ordered_places)
    absent, absent_entries = build_elimination(names, roster_places[0])
    matched, matched_entries = build_stream_matching(names, roster_places[1])
    entries += (conflict_entries + discovery_entries + alibi_entries + custody_entries + ordered_entries
                + absent_entries + matched_entries)
    # the ordering questions' items are each named again, mirrored: next to the entry that names item k, a
    # cross-check names item n + 1 - k, so every rank statistic of an item's mentions (first, second, median,
    # last, mean) is shared with its mirror image and says nothing about the order (DESIGN 3.5)
    entries += cross_checks(names, trails[asked], twin, incident)
    entries += custody_checks(names, ordered)
    return Blueprint(domain, incident, culprit, tuple(trails), tuple(withdrawals), conflict, (discovery,),
                     alibi, custody, tuple(entries), asked, twin, ordered, absent, matched, asked, moment, plan,
                     held, counted)


def withdraw_entry(names: Names, trail: Trail, hop: int, minute: int, reason: str) -> Entry:
    clues = [trail.origin, *trail.clues]
    source, target = clues[hop], clues[hop + 1]
    return entry(names, minute, names.rng.choice(names.domain.finding_types),
                 {"kind": "withdraw", "from": source, "to": target, "reason": reason},
                 (f"link:{source}>{target}",), (f"withdrawn:{source}>{target}",))


def plan_withdrawals(names: Names, trails: list[Trail], closed: Trail
                     ) -> tuple[int, list[Withdrawal], list[tuple[Trail, int, int, str]]]:
    """The integer cascade question's moment and every withdrawal. Each trail but the culprit's two loses one
    link; the count that has fallen by the moment is drawn uniformly first. Routine withdrawals that change no
    conclusion (links of the culprit's first trail, the trap, and of a closed line) fill up the rest so that
    exactly ``fatal`` withdrawal entries come before the moment and as many after it, whatever the answer:
    counting them, or reading the moment's day, says nothing."""
    rng, domain = names.rng, names.domain
    fatal = list(range(2, len(trails)))
    fallen = rng.below(len(fatal) + 1)
    moment = at(rng.integer(21, LAST_DAY - 2), 0) + rng.integer(WORK_START, WORK_END)
    before = spread(rng, at(FIRST_WITHDRAWAL_DAY, 0), moment - 30, len(fatal))
    after = spread(rng, moment + 30, at(LAST_DAY, 20), len(fatal))
    fatal_before = set(rng.sample(range(len(fatal)), fallen))
    fatal_after = set(rng.sample(range(len(fatal)), len(fatal) - fallen))
    fatal_minutes = [m for k, m in enumerate(before) if k in fatal_before]
    fatal_minutes += [m for k, m in enumerate(after) if k in fatal_after]
    routine_minutes = [m for k, m in enumerate(before) if k not in fatal_before]
    routine_minutes += [m for k, m in enumerate(after) if k not in fatal_after]
    withdrawals = [Withdrawal(k, inner_hop(rng, trails[k]), m, rng.choice(domain.invalidations))
                   for k, m in zip(rng.shuffled(fatal), fatal_minutes, strict=True)]
    pool = [(0, hop) for hop in range(1, len(trails[0].clues))] + [(-1, hop) for hop in range(len(closed.clues))]
    corrections = []
    for (k, hop), minute in zip(rng.sample(pool, len(routine_minutes)), routine_minutes, strict=True):
        if k == 0:
            withdrawals.append(Withdrawal(0, hop, minute, rng.choice(domain.invalidations)))
        else:
            corrections.append((closed, hop, minute, rng.choice(domain.invalidations)))
    return moment, sorted(withdrawals, key=lambda w: w.minute), corrections


def inner_hop(rng: StableRng, trail: Trail) -> int:
    """A link between two of the trail's findings (never the lead's own link): both ends are items of the chain
    questions, so the withdrawal's extra mentions fall on an item and its neighbour, mirror-symmetrically."""
    return rng.integer(1, len(trail.clues) - 1)


def near(rng: StableRng, minute: int, low: int, high: int) -> int:
    """A minute within ``JITTER`` of ``minute`` (never on it), inside (low, high) and in working hours when it
    can be."""
    for _ in range(MAX_DRAWS):
        offset = rng.integer(1, JITTER) * (1 if rng.below(2) else -1)
        if low < minute + offset < high and WORK_START <= (minute + offset) % MINUTES_PER_DAY <= WORK_END:
            return minute + offset
    return minute + 1


def mirrored(items: list[str], first: str, last: str) -> list[list[str]]:
    """What the cross-check next to each mention slot of a chain names: slot j (the lead's link, each link, the
    ending) names ``first`` / item k / ``last`` as the real entry does, with item k replaced by item n + 1 - k."""
    n = len(items)
    mirror = {item: items[n - 1 - k] for k, item in enumerate(items)}
    sequence = [first, *items, last]
    return [[mirror.get(x, x) for x in sequence[j:j + 2]] for j in range(n + 1)]


def cross_checks(names: Names, trail: Trail, twin: Trail, incident: str) -> list[Entry]:
    """One cross-check of files beside each link and the ending of ``trail`` (and of its twin, whose entries sit
    beside the trail's), naming the mirror images of what that entry names."""
    rng = names.rng
    # the ending's mirror names the finding itself (its person and incident), as the conclusion entry does
    conclusion = "the finding that " + names.domain.conclusion.format(person=trail.person, incident=incident)
    own = mirrored(list(trail.clues), trail.origin, conclusion)
    other = mirrored(list(twin.clues), twin.origin, f"the account of {twin.person}")
    out = []
    minutes = list(trail.minutes[1:])
    for j, minute in enumerate(minutes):
        low = minutes[j - 1] if j else trail.minutes[0]
        high = minutes[j + 1] if j + 1 < len(minutes) else at(LAST_DAY, 23, 59)
        # each pair in either order, as the link phrasings name either end first
        pairs = [pair if rng.below(2) else pair[::-1] for pair in (own[j], other[j])]
        items = pairs[0] + pairs[1] if rng.below(2) else pairs[1] + pairs[0]
        out.append(entry(names, near(rng, minute, low + JITTER, high - JITTER),
                         rng.choice(names.domain.finding_types), {"kind": "xref", "items": join_items(items)}))
    return out


def join_items(items: list[str]) -> str:
    return ", ".join(items[:-1]) + " and " + items[-1]


def custody_checks(names: Names, custody: Custody) -> list[Entry]:
    """Beside each move of the history, a register check naming the place of the mirrored move."""
    rng = names.rng
    minutes = [m for m, _ in custody.moves]
    places = [p for _, p in custody.moves]
    out = []
    for j, minute in enumerate(minutes):
        low = minutes[j - 1] if j else at(1, 23, 59)
        high = minutes[j + 1] if j + 1 < len(minutes) else at(LAST_DAY, 23, 59)
        out.append(entry(names, near(rng, minute, low + JITTER, high - JITTER),
                         rng.choice(names.domain.finding_types),
                         {"kind": "check", "place": places[len(places) - 1 - j], "thing": custody.thing}))
    return out


def plan_held(names: Names, custody: Custody) -> tuple[tuple[int, int], list[Entry]]:
    """The moment the 'where was it held' questions ask about (between move j and the next), and register checks
    naming the history's places. The moment's gap after move j is uniform over [span / 4, span) (span: to the
    next move); ``NEAR_CHECKS`` checks of every other place and one fewer of the held place are each that same
    kind of gap before the moment (drawn independently, in working hours), and the held place's last check is
    outside the window. So the asked move's entry is one of ``6 * NEAR_CHECKS`` look-alikes by its time to the
    moment (the place named last before the moment is the held one about one time in 18, as a look-alike's), and
    every place is named ``NEAR_CHECKS + 1`` times beside the item, ``NEAR_CHECKS`` of them near the moment. (Four
    each would make 24, but the structure of a long-trail criminal case would then overflow 16k tokens about one
    time in 55.)"""
    rng = names.rng
    minutes = [m for m, _ in custody.moves]
    places = [p for _, p in custody.moves]
    j = rng.below(len(minutes))
    end = minutes[j + 1] if j + 1 < len(minutes) else min(minutes[j] + 2 * MINUTES_PER_DAY, at(LAST_DAY, 23, 59))
    low_gap, high_gap = (end - minutes[j]) // 4, end - minutes[j] - 1
    moment = minutes[j] + rng.integer(low_gap, high_gap)
    checked = rng.shuffled([p for k, p in enumerate(places) if k != j] * NEAR_CHECKS + [places[j]] * (NEAR_CHECKS - 1))
    times: list[int] = []
    for _ in checked:
        times.append(look_alike(rng, moment, low_gap, high_gap, [*minutes, *times]))
    while True:  # the held place's other check: outside the window
        minute = work_minute(rng, 2, LAST_DAY)
        if not minutes[j] <= minute <= moment and minute not in times:
            times.append(minute)
            break
    out = [entry(names, minute, rng.choice(names.domain.finding_types),
                 {"kind": "check", "place": place, "thing": custody.thing})
           for minute, place in zip(times, [*checked, places[j]], strict=True)]
    return (j, moment), out


def look_alike(rng: StableRng, moment: int, low_gap: int, high_gap: int, taken: list[int]) -> int:
    """A minute a uniform gap in [low_gap, high_gap] before ``moment``, in working hours and on none of
    ``taken`` when a draw allows it (a short span may not: then any gap in the range)."""
    for _ in range(MAX_DRAWS // 10):
        minute = moment - rng.integer(low_gap, high_gap)
        if WORK_START <= minute % MINUTES_PER_DAY <= WORK_END and minute not in taken and minute > at(1, 23, 59):
            return minute
    return moment - rng.integer(low_gap, high_gap)


def build_twin(names: Names, trail: Trail, withdrawn: int) -> tuple[Trail, list[Entry]]:
    """A closed trail with the asked trail's length, each entry a few minutes from the trail's matching one,
    and as many withdrawn links: a finding borrowed from it into a wrong option is mentioned as often and when
    the trail's own are."""
    rng = names.rng
    hops = len(trail.clues)
    minutes = [near(rng, m, m - JITTER - 1, m + JITTER + 1) for m in trail.minutes]
    twin = Trail(names.clue(), tuple(names.clue() for _ in range(hops)), names.person(), tuple(minutes))
    entries = trail_entries(names, twin.origin, list(twin.clues), minutes, {"kind": "close", "person": twin.person})
    for hop in rng.sample(range(1, hops), min(withdrawn, hops - 1)):
        minute = spread(rng, at(FIRST_WITHDRAWAL_DAY, 0), at(LAST_DAY, 20), 1)[0]  # drawn as the trails' own are
        entries.append(withdraw_entry(names, twin, hop, minute, rng.choice(names.domain.invalidations)))
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


def build_conflict(names: Names, subject: str, places: list[str], open_dispute: bool = False
                   ) -> tuple[Conflict, list[Entry]]:
    """Two incompatible accounts of where someone was, and a record from a stream that settles it. Every place
    the question offers is named with the subject at that very day and time (the other places by the subject's
    own report of where someone else was at that moment: no conflict), and by a record of the subject there
    that day, logged like the settling one, at another hour for every place but the true one. So neither how
    often, nor when, nor beside the question's day and time a place is mentioned tells the true one."""
    rng = names.rng
    true_place, false_place, others = places[0], places[1], places[2:]
    day = rng.integer(3, 24)
    minute = at(day, 0) + rng.integer(13 * 60, 19 * 60)
    # the two accounts and the subject's reports, logged at times drawn together (none stands out by when)
    logged = spread(rng, minute + 60, minute + 3 * MINUTES_PER_DAY, 2 + len(others))
    slots = rng.shuffled(range(len(logged)))
    first, second = sorted(logged[k] for k in slots[:2])
    later_is_true = rng.below(2) == 1
    true_logged, false_logged = (second, first) if later_is_true else (first, second)
    entries = [statement_entry(names, subject, true_place, minute, true_logged),
               statement_entry(names, subject, false_place, minute, false_logged)]
    for place, k in zip(others, slots[2:], strict=True):
        entries.append(entry(names, logged[k], names.domain.statement_type,
                             {"kind": "report", "witness": subject, "person": names.sighted(), "place": place,
                              "minute": minute}))
    stream = rng.choice(names.domain.streams).name
    start, end = interval_around(rng, minute)
    resolve = record_entry(names, Presence(stream, subject, true_place, start, end),
                           work_minute(rng, day_of_minute(second) + 1, day_of_minute(second) + 2))
    entries.append(Entry(resolve.minute, resolve.entry_type, resolve.author, resolve.fact,
                         (f"claim:{subject}@{minute}:{true_place}", f"claim:{subject}@{minute}:{false_place}"),
                         resolve.establishes))
    # every other place: a visit the same day, hours from the moment, logged like the settling record (so which
    # place is mentioned last, or on which day, is a coin toss; only what covers the moment tells the true one)
    visits = visits_that_day(rng, minute, 1 + len(others))
    for place, moment in zip([false_place, *others], visits, strict=True):
        entries.append(visit_record(names, subject, place, moment, day_of_minute(second) + 1,
                                    day_of_minute(second) + 2))
    conflict = Conflict(subject, minute, true_place, false_place, tuple(others), later_is_true)
    if not open_dispute:
        return conflict, entries
    open_minute, claims, open_entries = open_conflict(names, subject, places, [minute, *visits])
    return dataclasses.replace(conflict, open_minute=open_minute, open_claims=claims), entries + open_entries


def open_conflict(names: Names, subject: str, places: list[str], taken: list[int]
                  ) -> tuple[int, tuple[str, str], list[Entry]]:
    """A second disputed moment of the conflict's subject (an abstention control), built like the settled one:
    two accounts that disagree and the subject's reports naming the other four places at that moment, logged
    alike, but no record covers it (it lies 100 minutes or more from every record of the subject's day)."""
    rng = names.rng
    day = day_of_minute(taken[0])
    moment = -1
    for _ in range(MAX_DRAWS):
        candidate = at(day, 0) + rng.integer(WORK_START, WORK_END)
        if all(abs(candidate - m) >= 100 for m in taken):
            moment = candidate
            break
    if moment < 0:  # a day packed with visits: the next day, which has no record of the subject
        moment = at(day + 1, 0) + rng.integer(13 * 60, 19 * 60)
    claimed = rng.sample(places, 2)
    logged = spread(rng, moment + 60, moment + 3 * MINUTES_PER_DAY, len(places))
    slots = rng.shuffled(range(len(logged)))
    entries = [statement_entry(names, subject, place, moment, logged[k]) for place, k in zip(claimed, slots[:2],
                                                                                               strict=True)]
    for place, k in zip([p for p in places if p not in claimed], slots[2:], strict=True):
        entries.append(entry(names, logged[k], names.domain.statement_type,
                             {"kind": "report", "witness": subject, "person": names.sighted(), "place": place,
                              "minute": moment}))
    return moment, (claimed[0], claimed[1]), entries


def visits_that_day(rng: StableRng, minute: int, n: int) -> list[int]:
    """``n`` moments on ``minute``'s day, in working hours, at least 100 minutes from it and from each other (a
    record's interval reaches at most 50 minutes either side)."""
    day = at(day_of_minute(minute), 0)
    chosen: list[int] = []
    draws = 0
    while len(chosen) < n:
        draws += 1
        if draws % 200 == 0:  # a packing that leaves no room: start again
            chosen = []
        moment = day + rng.integer(WORK_START, WORK_END)
        if all(abs(moment - m) >= 100 for m in [minute, *chosen]):
            chosen.append(moment)
    return rng.shuffled(chosen)


def visit_record(names: Names, person: str, place: str, moment: int, first_day: int, last_day: int) -> Entry:
    """A record of ``person`` at ``place`` around ``moment``, logged between two days."""
    start, end = interval_around(names.rng, moment)
    return record_entry(names, Presence(names.rng.choice(names.domain.streams).name, person, place, start, end),
                        work_minute(names.rng, first_day, last_day))


def day_of_minute(minute: int) -> int:
    return minute // MINUTES_PER_DAY + 1


DONE_ACTIONS, BLOCKED_ACTIONS = 4, 3


def window_minutes(rng: StableRng, low: int, high: int, n: int) -> list[int]:
    """``n`` distinct minutes in (low, high), in working hours when the window has room for them."""
    chosen: list[int] = []
    for _ in range(MAX_DRAWS):
        if len(chosen) == n:
            break
        minute = rng.integer(low + 1, high - 1)
        if WORK_START <= minute % MINUTES_PER_DAY <= WORK_END and minute not in chosen:
            chosen.append(minute)
    while len(chosen) < n:
        minute = rng.integer(low + 1, high - 1)
        if minute not in chosen:
            chosen.append(minute)
    return sorted(chosen)


def build_discovery(names: Names, form: str) -> tuple[Discovery, Plan, list[Entry]]:
    """A result awaited by actions: those planned after it went ahead, those planned before could not (so
    moving it changes which actions take place). The counterfactual questions' window is drawn first (the
    result moved ``later`` to after the j-th action that went ahead, or ``earlier`` to before the j-th that
    could not); then the result's actions inside the window and ``DECOYS`` actions that did not await it (they
    went ahead without it, or were called off for another reason) are drawn from the same minutes of the window,
    so an option's time tells nothing."""
    rng = names.rng
    clue = names.clue()
    minute = work_minute(rng, 9, 20)
    if form == "later":
        k = rng.integer(1, DONE_ACTIONS)
        inside = rng.integer(k, DONE_ACTIONS)
        moved = minute + rng.integer(MINUTES_PER_DAY, 6 * MINUTES_PER_DAY)
        drawn = window_minutes(rng, minute + 30, moved, inside + DECOYS)
        outside = spread(rng, moved + 30, minute + 8 * MINUTES_PER_DAY, DONE_ACTIONS - inside)
        others = spread(rng, max(at(2, 0), minute - 7 * MINUTES_PER_DAY), minute - 30, BLOCKED_ACTIONS)
        decoy_kind = "independent"
    else:
        k = rng.integer(1, BLOCKED_ACTIONS)
        inside = rng.integer(k, BLOCKED_ACTIONS)
        moved = minute - rng.integer(MINUTES_PER_DAY, 5 * MINUTES_PER_DAY)
        drawn = window_minutes(rng, moved, minute - 30, inside + DECOYS)
        outside = spread(rng, max(at(2, 0), minute - 7 * MINUTES_PER_DAY), moved - 30, BLOCKED_ACTIONS - inside)
        others = spread(rng, minute + 30, minute + 8 * MINUTES_PER_DAY, DONE_ACTIONS)
        decoy_kind = "cancelled"
    own_slots = set(rng.sample(range(len(drawn)), inside))
    own = [m for j, m in enumerate(drawn) if j in own_slots]
    decoy_minutes = [m for j, m in enumerate(drawn) if j not in own_slots]
    later = form == "later"
    gold = [Action(names.action(), m, clue, later) for m in own]
    actions = gold + [Action(names.action(), m, clue, later) for m in outside]
    actions += [Action(names.action(), m, clue, not later) for m in others]
    decoys = [Action(names.action(), m, clue, later) for m in decoy_minutes]
    entries = [entry(names, minute, rng.choice(names.domain.finding_types), {"kind": "result", "clue": clue}, (),
                     (f"result:{clue}",))]
    entries += [action_entry(names, a) for a in actions]
    entries += [entry(names, a.minute, names.domain.action_type, {"kind": decoy_kind, "action": a.phrase,
                                                                  "clue": clue}, (), (f"action:{a.phrase}",))
                for a in decoys]
    discovery = Discovery(clue, minute, tuple(sorted(actions, key=lambda a: a.minute)))
    return discovery, Plan(form, moved, tuple(gold), tuple(decoys), k), entries


def action_entry(names: Names, action: Action, structural: bool = True) -> Entry:
    fact = {"kind": "action", "action": action.phrase, "clue": action.clue, "done": action.done}
    requires = (f"result:{action.clue}",) if action.done else ()
    return entry(names, action.minute, names.domain.action_type, fact, requires, (f"action:{action.phrase}",),
                 structural)


WINDOW_STEP = 5  # minutes between candidate window bounds


def uncovered_windows(start: int, end: int, spans: dict[str, list[tuple[int, int]]]
                      ) -> list[tuple[int, int, frozenset[str]]]:
    """Candidate windows on the incident's day around its window [start, end], each with the people whose
    record intervals (``spans``) leave it uncovered."""
    day = at(start // MINUTES_PER_DAY + 1, 0)
    first = max(day + 6 * 60, start - 150)
    last = min(day + 23 * 60 + 50, end + 90)
    ordered = [(p, sorted(s)) for p, s in spans.items()]
    out = []
    for low in range(first, last, WINDOW_STEP):
        # [low, high] is covered for p iff high <= p's reach: as high grows, people only join the uncovered set
        reaches = sorted((covered_reach(s, low), p) for p, s in ordered)
        uncovered: frozenset[str] = frozenset()
        k = 0
        for high in range(low + 30, min(low + 180, last) + 1, WINDOW_STEP):
            if k < len(reaches) and reaches[k][0] < high:
                while k < len(reaches) and reaches[k][0] < high:
                    k += 1
                uncovered = frozenset(p for _, p in reaches[:k])
            out.append((low, high, uncovered))
    return out


def covered_reach(intervals: list[tuple[int, int]], start: int) -> int:
    """How far from ``start`` the union of the sorted [low, high] ``intervals`` reaches without a gap:
    ``covered(intervals, start, end)`` is ``end <= covered_reach(sorted(intervals), start)``."""
    reach = start
    for low, high in intervals:
        if low > reach:
            break
        reach = max(reach, high)
    return reach


def build_alibi(names: Names, place: str, incident: str, culprit: str) -> tuple[Alibi, list[Entry]]:
    """The incident's window on Day 1, and two records from two streams for each of six people: together they
    cover the window for five of them; one is left with a gap. No single record covers the window. The records
    are drawn again until some window around it leaves each count of them (0-6) uncovered, so the temporal
    questions can draw their count uniformly first (a constant answer scores exactly chance)."""
    rng = names.rng
    start = at(1, 0) + rng.integer(18 * 60, 20 * 60)
    end = start + rng.integer(60, 120)
    subjects = rng.sample([p for p in names.people if p != culprit and p not in names.protected], ALIBI_SUBJECTS)
    names.protected.update(subjects)
    unaccounted = subjects[rng.below(ALIBI_SUBJECTS)]
    for _ in range(MAX_DRAWS):
        pairs = []
        for person in subjects:
            first_stream, second_stream = rng.sample(names.domain.streams, 2)
            split = rng.integer(start + 15, end - 25)
            before = Presence(first_stream.name, person, names.place(), start - rng.integer(20, 90), split)
            resume = split + rng.integer(15, 20) if person == unaccounted else split - rng.integer(0, 15)
            pairs.append((before, Presence(second_stream.name, person, names.place(), resume,
                                           end + rng.integer(10, 60))))
        spans = {b.person: [(b.start, b.end), (a.start, a.end)] for b, a in pairs}
        if {len(g) for *_, g in uncovered_windows(start, end, spans)} >= set(range(ALIBI_SUBJECTS + 1)):
            break
    entries = [entry(names, at(1, 23, 30), names.domain.statement_type,
                     {"kind": "incident", "incident": incident, "start": start, "end": end}, (), ("incident",))]
    records: list[Presence] = []
    for before, after in pairs:
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
    """Five of six people recorded at ``place`` on one day; the sixth recorded elsewhere that day. Every one of
    them is recorded twice, once at ``place`` and once elsewhere, the other record on another day drawn alike
    (the gold's at ``place``): so each is named beside the place, and on and off the asked day, as often."""
    rng = names.rng
    day = rng.integer(3, 24)
    people = rng.sample([p for p in names.people if p not in names.protected], ROSTER)  # never a subject
    gold = people[rng.below(ROSTER)]
    entries = []
    for person in people:
        other_day = rng.choice([d for d in range(3, 25) if d != day])
        here, away = (other_day, day) if person == gold else (day, other_day)
        entries += [roster_record(names, person, place, here, rng.choice(names.domain.streams).name),
                    roster_record(names, person, names.place(), away, rng.choice(names.domain.streams).name)]
    return Roster(place, day, tuple(people), gold, ()), entries


def build_stream_matching(names: Names, place: str) -> tuple[Roster, list[Entry]]:
    """Six people each recorded twice at ``place`` on one day, each by a different pair of the four streams
    (there are exactly six pairs): the gold is the one the question's two streams both recorded."""
    rng = names.rng
    day = rng.integer(3, 24)
    people = rng.sample([p for p in names.people if p not in names.protected], ROSTER)  # never a subject
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
