"""The reference solver: it rebuilds the case from the prompt alone (the narrative through the templates, the
oracle from its JSON lines) and answers each category by the reasoning it asks for: walking a trail back,
reachability with a link cut, the record that settles a conflict, replaying actions against a moved result,
covering a window with two streams, and a custody history up to a moment."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .case import MINUTES_PER_DAY, at, covered, stamp
from .catalog import DOMAINS, Domain, domain
from .narrate import Read, parse_narrative, parse_oracle, patterns
from .prompt import ABSTAIN, LIST_HEADERS, format_of, letters_for
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
    format: str = "mcq_single"


def split_prompt(prompt: str, read_case: bool = True) -> Parsed | None:
    """The prompt's parts, or None when it is not a RECON prompt; without ``read_case`` its entries are not
    parsed (the surface strategies never read them)."""
    head = _DOMAIN.match(prompt)
    answer_format = format_of(prompt)
    if not head or head.group(1) not in DOMAINS or "\nQuestion: " not in prompt or answer_format is None:
        return None
    the_domain = domain(head.group(1))
    body, _, asked = prompt.rpartition("Question: ")
    text, _, rest = asked.partition("\n")
    letters = letters_for(answer_format)
    options = []
    if rest.startswith(LIST_HEADERS.get(answer_format, "\0")):
        options = [line[3:] for line in rest.split("\n")[1:] if len(line) > 3 and line[0] in letters
                   and line[1:3] == ") "]
    _, marker, context = body.partition("Case file:\n")
    if not marker:
        return Parsed(the_domain, "closedbook", [], text, options, answer_format)
    if context.startswith("{"):
        entries = parse_oracle(context.rstrip("\n")) if read_case else []
        return Parsed(the_domain, "oracle", entries, text, options, answer_format)
    entries = parse_narrative(context.rstrip("\n"), the_domain) if read_case else []
    return Parsed(the_domain, "narrative", entries, text, options, answer_format)


def _minute(day: str, time: str) -> int:
    hours, minutes = time.split(":")
    return at(int(day), int(hours), int(minutes))


def facts(entries: Sequence[Read], kind: str) -> list[Read]:
    return [e for e in entries if e.fact["kind"] == kind]


def person_of(text: str) -> str:
    return " ".join(text.split(" ")[:2])


def trail_walk(p: Parsed, match: re.Match) -> list[str] | None:
    """The findings of the trail from the origin to the one its conclusion rests on, in order."""
    person, origin = person_of(match.group("conclusion")), match.group("origin")
    incoming = {e.fact["to"]: e.fact["from"] for e in facts(p.entries, "link")}
    for conclusion in facts(p.entries, "conclude"):
        if conclusion.fact["person"] != person:
            continue
        walk = [conclusion.fact["clue"]]
        while walk[-1] in incoming:
            walk.append(incoming[walk[-1]])
        if walk[-1] == origin:
            return list(reversed(walk[:-1]))
    return None


def chain(p: Parsed, match: re.Match):
    walk = trail_walk(p, match)
    if walk is None:
        return None
    if p.format == "integer":
        return len(walk)
    if p.format == "ordering":
        return in_order(p.options, walk)
    return [option == ARROW.join(walk) for option in p.options]


def in_order(options: Sequence[str], order: Sequence[str]) -> list[int] | None:
    """The option indices in the order ``order`` lists them (None unless the options are exactly its items)."""
    if sorted(options) != sorted(order):
        return None
    return [options.index(item) for item in order]


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
    if p.format == "mcq_multi":
        return [person_of(option) in after for option in p.options]
    return [person_of(option) in before - after for option in p.options]


def fallen_count(p: Parsed, match: re.Match) -> int:
    """People concluded by the moment whose every conclusion had lost its support by then."""
    moment = _minute(match.group("day"), match.group("time"))
    cut = {(e.fact["from"], e.fact["to"]) for e in facts(p.entries, "withdraw") if e.minute <= moment}
    reached = {e.fact["person"] for e in facts(p.entries, "conclude") if e.minute <= moment}
    return len(reached - supported_people(p.entries, moment, cut))


def conflict(p: Parsed, match: re.Match):
    person, moment = match.group("person"), _minute(match.group("day"), match.group("time"))
    records = [e for e in facts(p.entries, "record")
               if e.fact["person"] == person and e.fact["start"] <= moment <= e.fact["end"]]
    places = {e.fact["place"] for e in records}
    if p.format != "free_form":
        return [option in places for option in p.options]
    if len(places) != 1:
        return None
    place = records[0].fact["place"]
    claimed = sorted({e.fact["place"] for e in facts(p.entries, "statement")
                      if e.fact["person"] == person and e.fact["minute"] == moment} - places)
    wrong = f"; the account that puts {person} at {claimed[0]} is wrong" if claimed else ""
    return (f"{person} was at {place} at that time. The {records[0].entry_type.lower()} entry records {person} "
            f"there, which settles it{wrong}.")


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


def uncovered(p: Parsed, match: re.Match, people: Sequence[str]) -> list[bool]:
    start, end = _minute(match.group("day"), match.group("start")), _minute(match.group("day"), match.group("end"))
    records = facts(p.entries, "record")
    return [not covered([(e.fact["start"], e.fact["end"]) for e in records if e.fact["person"] == person],
                        start, end) for person in people]


def temporal(p: Parsed, match: re.Match):
    if p.format == "integer":
        return sum(uncovered(p, match, match.group("people").split(", ")))
    return uncovered(p, match, p.options)


def custody_moves(p: Parsed, thing: str) -> list[Read]:
    return sorted((e for e in facts(p.entries, "custody") if e.fact["thing"] == thing), key=lambda e: e.minute)


def custody_order(p: Parsed, match: re.Match):
    return in_order(p.options, [e.fact["place"] for e in custody_moves(p, match.group("thing"))])


def custody_since(p: Parsed, match: re.Match) -> str | None:
    thing, moment = match.group("thing"), _minute(match.group("day"), match.group("time"))
    moves = [e for e in custody_moves(p, thing) if e.minute <= moment]
    if not moves:
        return None
    return (f"On {stamp(moment)}, {thing} was held at {moves[-1].fact['place']}. It had been taken there on "
            f"{stamp(moves[-1].minute)}.")


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
                             rf"that began with (?P<origin>{clue})\. ")),
        ("fallen", re.compile(r"^Consider every person X for whom the case had reached the finding that .+ by "
                              rf"{_TIME}\. For how many")),
        ("cascade", re.compile(rf"^On {_TIME}, the finding that (?P<a>{clue}) led to (?P<b>{clue}) was withdrawn\.")),
        ("conflict", re.compile(rf"^Two accounts disagree about where (?P<person>{person}) was on Day (?P<day>\d+) at "
                                r"about (?P<time>\d\d:\d\d)\.")),
        ("later", re.compile(rf"^Suppose the result on (?P<clue>{clue}) had come in only on {_TIME} instead")),
        ("earlier", re.compile(rf"^Suppose the result on (?P<clue>{clue}) had come in already on {_TIME} instead")),
        ("temporal", re.compile(r"^.+ took place on Day (?P<day>\d+) between (?P<start>\d\d:\d\d) and "
                                r"(?P<end>\d\d:\d\d)\. Which of these people")),
        ("temporal", re.compile(r"^On Day (?P<day>\d+) between (?P<start>\d\d:\d\d) and (?P<end>\d\d:\d\d), "
                                r"(?:which|how many) of these people are not accounted for by the records for the "
                                rf"whole of that time(?:: (?P<people>{person}(?:, {person})*))?\?")),
        ("retrieval", re.compile(rf"^Where was (?P<thing>{slots['thing']}) held on {_TIME}\?")),
        ("since", re.compile(rf"^Where was (?P<thing>{slots['thing']}) held on {_TIME}, and since when had it been "
                             r"there\?")),
        ("custody_order", re.compile(rf"^Put the places below in the order (?P<thing>{slots['thing']}) was taken to "
                                     r"them\.")),
        ("ordering", re.compile(rf"^After (?P<thing>{slots['thing']}) was taken to (?P<place>{place}), where was it "
                                r"taken next\?")),
        ("elimination", re.compile(rf"^Which of these people does no record place at (?P<place>{place}) on Day "
                                   r"(?P<day>\d+)\?")),
        ("streams", re.compile(rf"^Which of these people was recorded at (?P<place>{place}) on Day (?P<day>\d+) by "
                               rf"both the (?P<a>{stream}) and the (?P<b>{stream})\?")),
    ]


def answer(p: Parsed):
    """What the case makes the answer, by format: which options are correct (MCQ, a list of booleans), the
    option indices in order (ordering), the number (integer) or a sentence (free form); None when the question
    is not understood."""
    for name, regex in question_patterns(p.domain):
        match = regex.match(p.question)
        if not match:
            continue
        if name in ("later", "earlier"):
            return counterfactual(p, match, name == "later")
        return {"chain": chain, "cascade": cascade, "conflict": conflict, "temporal": temporal,
                "retrieval": custody_state, "ordering": ordering, "elimination": elimination,
                "streams": stream_matching, "fallen": fallen_count, "since": custody_since,
                "custody_order": custody_order}[name](p, match)
    return None


def render_answer(p: Parsed, solved) -> str:
    """The solver's answer line; ``ABSTAIN`` when the case does not settle the question as its format needs."""
    letters = letters_for(p.format)
    if p.format == "mcq_single" and isinstance(solved, list) and sum(solved) == 1:
        return f"ANSWER: {letters[solved.index(True)]}"
    if p.format == "mcq_multi" and isinstance(solved, list) and 0 < sum(solved) < len(solved):
        return "ANSWER: " + ", ".join(letters[k] for k, right in enumerate(solved) if right)
    if p.format == "ordering" and isinstance(solved, list) and solved:
        return "ANSWER: " + ", ".join(letters[k] for k in solved)
    if p.format == "integer" and isinstance(solved, int) and not isinstance(solved, bool):
        return f"ANSWER: {solved}"
    if p.format == "free_form" and isinstance(solved, str):
        return f"ANSWER: {solved}"
    return f"ANSWER: {ABSTAIN}"


def solve(prompt: str) -> str | None:
    """The answer the case settles, in the prompt's format (``ANSWER: ABSTAIN`` when it does not, and always for
    the closed-book variant, which has no case); None for a prompt that is not RECON's."""
    parsed = split_prompt(prompt)
    if parsed is None:
        return None
    return render_answer(parsed, answer(parsed) if parsed.variant != "closedbook" else None)
