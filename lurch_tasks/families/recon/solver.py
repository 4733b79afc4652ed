"""The reference solver: it rebuilds the case from the prompt alone (the narrative through the templates, the
oracle from its JSON lines) and answers each category by the reasoning it asks for: walking a trail back,
reachability with a link cut, the record that settles a conflict, replaying actions against a moved result,
covering a window with two streams, and a custody history up to a moment."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .case import MINUTES_PER_DAY, at
from .catalog import DOMAINS, Domain, domain
from .narrate import Read, parse_narrative, parse_oracle, patterns
from .prompt import ABSTAIN, LETTERS
from .questions import ARROW

_DOMAIN = re.compile(r"^The (?:case file below is the log of|question below is about) one (\w+) investigation")
_TIME = r"Day (?P<day>\d+), (?P<time>\d\d:\d\d)"


@dataclass(frozen=True)
class Parsed:
    domain: Domain
    variant: str
    entries: list[Read]
    question: str
    options: list[str]


def split_prompt(prompt: str, read_case: bool = True) -> Parsed | None:
    """The prompt's parts, or None when it is not a RECON prompt; without ``read_case`` its entries are not
    parsed (the surface strategies never read them)."""
    head = _DOMAIN.match(prompt)
    if not head or head.group(1) not in DOMAINS or "\nQuestion: " not in prompt or "\nOptions:\n" not in prompt:
        return None
    the_domain = domain(head.group(1))
    body, _, asked = prompt.rpartition("Question: ")
    text, _, rest = asked.partition("\nOptions:\n")
    options = [line[3:] for line in rest.split("\n") if len(line) > 3 and line[0] in LETTERS and line[1:3] == ") "]
    _, marker, context = body.partition("Case file:\n")
    if not marker:
        return Parsed(the_domain, "closedbook", [], text, options)
    if context.startswith("{"):
        return Parsed(the_domain, "oracle", parse_oracle(context.rstrip("\n")) if read_case else [], text, options)
    entries = parse_narrative(context.rstrip("\n"), the_domain) if read_case else []
    return Parsed(the_domain, "narrative", entries, text, options)


def _minute(day: str, time: str) -> int:
    hours, minutes = time.split(":")
    return at(int(day), int(hours), int(minutes))


def facts(entries: Sequence[Read], kind: str) -> list[Read]:
    return [e for e in entries if e.fact["kind"] == kind]


def person_of(text: str) -> str:
    return " ".join(text.split(" ")[:2])


def chain(p: Parsed, match: re.Match) -> list[bool]:
    person, origin = person_of(match.group("conclusion")), match.group("origin")
    incoming = {e.fact["to"]: e.fact["from"] for e in facts(p.entries, "link")}
    for conclusion in facts(p.entries, "conclude"):
        if conclusion.fact["person"] != person:
            continue
        walk = [conclusion.fact["clue"]]
        while walk[-1] in incoming:
            walk.append(incoming[walk[-1]])
        if walk[-1] == origin:
            sequence = ARROW.join(reversed(walk[:-1]))
            return [option == sequence for option in p.options]
    return []


def supported_people(entries: Sequence[Read], until: int, cut: set[tuple[str, str]]) -> set[str]:
    """People implicated by a conclusion whose clue is still reachable from a lead through links not cut."""
    links = [e.fact for e in facts(entries, "link") if e.minute <= until and (e.fact["from"], e.fact["to"]) not in cut]
    reached = {e.fact["clue"] for e in facts(entries, "lead") if e.minute <= until}
    grew = True
    while grew:
        grew = False
        for link in links:
            if link["from"] in reached and link["to"] not in reached:
                reached.add(link["to"])
                grew = True
    return {e.fact["person"] for e in facts(entries, "conclude") if e.minute <= until and e.fact["clue"] in reached}


def cascade(p: Parsed, match: re.Match) -> list[bool]:
    moment = _minute(match.group("day"), match.group("time"))
    link = (match.group("a"), match.group("b"))
    earlier = {(e.fact["from"], e.fact["to"]) for e in facts(p.entries, "withdraw") if e.minute < moment}
    before = supported_people(p.entries, moment, earlier)
    after = supported_people(p.entries, moment, earlier | {link})
    return [person_of(option) in before - after for option in p.options]


def conflict(p: Parsed, match: re.Match) -> list[bool]:
    person, moment = match.group("person"), _minute(match.group("day"), match.group("time"))
    places = {e.fact["place"] for e in facts(p.entries, "record")
              if e.fact["person"] == person and e.fact["start"] <= moment <= e.fact["end"]}
    return [option in places for option in p.options]


def counterfactual(p: Parsed, match: re.Match, later: bool) -> list[bool]:
    clue, moved = match.group("clue"), _minute(match.group("day"), match.group("time"))
    actions = {e.fact["action"]: e for e in facts(p.entries, "action") if e.fact["clue"] == clue}

    def changes(option: str) -> bool:
        entry = actions.get(option)
        if entry is None:
            return False
        if later:  # it went ahead, but before the moved result would have been in
            return entry.fact["done"] and entry.minute < moved
        return not entry.fact["done"] and entry.minute >= moved

    return [changes(option) for option in p.options]


def covered(intervals: list[tuple[int, int]], start: int, end: int) -> bool:
    reach = start
    for low, high in sorted(intervals):
        if low > reach:
            return False
        reach = max(reach, high)
        if reach >= end:
            return True
    return reach >= end


def temporal(p: Parsed, match: re.Match) -> list[bool]:
    start, end = _minute(match.group("day"), match.group("start")), _minute(match.group("day"), match.group("end"))
    records = facts(p.entries, "record")
    return [not covered([(e.fact["start"], e.fact["end"]) for e in records if e.fact["person"] == option],
                        start, end) for option in p.options]


def custody_state(p: Parsed, match: re.Match) -> list[bool]:
    thing, moment = match.group("thing"), _minute(match.group("day"), match.group("time"))
    moves = [e for e in facts(p.entries, "custody") if e.fact["thing"] == thing and e.minute <= moment]
    held = max(moves, key=lambda e: e.minute).fact["place"] if moves else None
    return [option == held for option in p.options]


def ordering(p: Parsed, match: re.Match) -> list[bool]:
    moves = sorted((e for e in facts(p.entries, "custody") if e.fact["thing"] == match.group("thing")),
                   key=lambda e: e.minute)
    places = [e.fact["place"] for e in moves]
    after = match.group("place")
    following = places[places.index(after) + 1] if after in places[:-1] else None
    return [option == following for option in p.options]


def day_records(p: Parsed, place: str, day: str) -> list[Read]:
    first = _minute(day, "00:00")
    return [e for e in facts(p.entries, "record")
            if e.fact["place"] == place and first <= e.fact["start"] < first + MINUTES_PER_DAY]


def elimination(p: Parsed, match: re.Match) -> list[bool]:
    present = {e.fact["person"] for e in day_records(p, match.group("place"), match.group("day"))}
    return [option not in present for option in p.options]


def stream_matching(p: Parsed, match: re.Match) -> list[bool]:
    records = day_records(p, match.group("place"), match.group("day"))
    wanted = {match.group("a"), match.group("b")}
    return [wanted <= {e.entry_type for e in records if e.fact["person"] == option} for option in p.options]


def question_patterns(d: Domain) -> list[tuple[str, re.Pattern]]:
    slots = patterns(d)
    clue, person, place = slots["clue"], slots["person"], slots["place"]
    stream = "|".join(re.escape(s.entry_type) for s in d.streams)
    return [
        ("chain", re.compile(rf"^The finding that (?P<conclusion>{slots['conclusion']}) rests on a trail of findings "
                             rf"that began with (?P<origin>{clue})\. Which option")),
        ("cascade", re.compile(rf"^On {_TIME}, the finding that (?P<a>{clue}) led to (?P<b>{clue}) was withdrawn\.")),
        ("conflict", re.compile(rf"^Two accounts disagree about where (?P<person>{person}) was on Day (?P<day>\d+) at "
                                r"about (?P<time>\d\d:\d\d)\.")),
        ("later", re.compile(rf"^Suppose the result on (?P<clue>{clue}) had come in only on {_TIME} instead")),
        ("earlier", re.compile(rf"^Suppose the result on (?P<clue>{clue}) had come in already on {_TIME} instead")),
        ("temporal", re.compile(r"^.+ took place on Day (?P<day>\d+) between (?P<start>\d\d:\d\d) and "
                                r"(?P<end>\d\d:\d\d)\. Which of these people")),
        ("retrieval", re.compile(rf"^Where was (?P<thing>{slots['thing']}) held on {_TIME}\?")),
        ("ordering", re.compile(rf"^After (?P<thing>{slots['thing']}) was taken to (?P<place>{place}), where was it "
                                r"taken next\?")),
        ("elimination", re.compile(rf"^Which of these people does no record place at (?P<place>{place}) on Day "
                                   r"(?P<day>\d+)\?")),
        ("streams", re.compile(rf"^Which of these people was recorded at (?P<place>{place}) on Day (?P<day>\d+) by "
                               rf"both the (?P<a>{stream}) and the (?P<b>{stream})\?")),
    ]


def answer(p: Parsed) -> list[bool]:
    """Which options the case makes correct (empty when the question is not understood)."""
    for name, regex in question_patterns(p.domain):
        match = regex.match(p.question)
        if not match:
            continue
        if name in ("later", "earlier"):
            return counterfactual(p, match, name == "later")
        return {"chain": chain, "cascade": cascade, "conflict": conflict, "temporal": temporal,
                "retrieval": custody_state, "ordering": ordering, "elimination": elimination,
                "streams": stream_matching}[name](p, match)
    return []


def solve(prompt: str) -> str | None:
    """``ANSWER: <letter>`` when exactly one option follows from the case, ``ANSWER: ABSTAIN`` otherwise (the
    closed-book variant has no case); None for a prompt that is not RECON's."""
    parsed = split_prompt(prompt)
    if parsed is None:
        return None
    correct = answer(parsed) if parsed.variant != "closedbook" else []
    if sum(correct) != 1:
        return f"ANSWER: {ABSTAIN}"
    return f"ANSWER: {LETTERS[correct.index(True)]}"
