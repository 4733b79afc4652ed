"""Narration by templates: every entry is one line, ``[Day X, HH:MM] [TYPE] [AUTHOR]`` then its fact in one of
several phrasings and a few routine remarks; the oracle variant writes the same entries as canonical JSON. Both
can be read back (``parse_narrative`` / ``parse_oracle``) into the same facts, which is how the solver works."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache

from ...core.rng import StableRng
from ...core.vocab import _data_file
from .case import Entry, at, clock, day_of, stamp
from .catalog import CATALOG_FILE, Domain

TEMPLATES: dict[str, tuple[str, ...]] = {
    "lead": ("A new lead was opened on {clue}.", "The team logged {clue} as a new lead.",
             "Work began on {clue}, logged as a lead."),
    # half the phrasings name the link's target first, so which of two findings a line names first says
    # nothing about their order in the trail
    "link": ("Examination of {a} led to {b}.", "Following up on {a}, the team traced {b}.",
             "Analysis of {a} pointed to {b}.", "The team reached {b} by following up on {a}.",
             "The trace to {b} came from examining {a}.", "Analysis showed that {b} followed from {a}."),
    "close": ("Checks on {clue} against the account of {person} found nothing further; the line was closed.",
              "The line from {clue} was closed after {person} accounted for it."),
    "conclude": ("On the strength of {clue}, {conclusion}.", "Given {clue}, the finding is that {conclusion}."),
    "withdraw": ("The finding that {a} led to {b} is withdrawn: {reason}.",
                 "Withdrawn: the step from {a} to {b}, because {reason}.",
                 "The step to {b} from {a} is withdrawn: {reason}.",
                 "No longer accepted: that {b} followed from {a}, because {reason}."),
    "statement": ("The account given states that {person} was at {place} on Day {day} at about {time}.",
                  "According to the account given, {person} was seen at {place} on Day {day} around {time}."),
    "record": ("The log places {person} at {place} on Day {day} from {start} to {end}.",
               "Records show {person} at {place} on Day {day} between {start} and {end}."),
    "result": ("The result on {clue} came in and was filed.",
               "The analysis of {clue} is complete; the result is on file."),
    "done": ("On the strength of the result on {clue}, {action} went ahead.",
             "With the result on {clue} in hand, {action} was carried out."),
    "blocked": ("Planned for this time, {action} could not go ahead: it awaited the result on {clue}.",
                "It was not possible to proceed with {action}: the result on {clue} was still awaited."),
    "custody": ("Custody log: {thing} {verb} {place}.", "Movement noted: {thing} {verb} {place}."),
    "xref": ("The files on {items} were cross-checked for consistency.",
             "A consistency check covered the files on {items}."),
    "check": ("The register at {place} was checked for {thing}.",
              "Staff at {place} checked their register for {thing}."),
    "report": ("{witness} reported that {person} was at {place} on Day {day} at about {time}.",
               "According to {witness}, {person} was at {place} on Day {day} around {time}."),
    # decoy actions (counterfactual): phrased with the same gap between the result and the action as the
    # result's own actions (done / blocked), so how close an option sits to the result's name says nothing
    "independent": ("Without waiting for the result on {clue}, {action} went ahead.",
                    "Without needing the result on {clue} at all, {action} was carried out."),
    "cancelled": ("Planned for this time, {action} was dropped: it had not awaited the result on {clue}.",
                  "It was decided not to go on with {action}: the result on {clue} played no part."),
    "incident": ("Opening entry: {incident} took place on Day {day} between {start} and {end}.",),
}
MAX_REMARKS = 0  # no routine remarks: the structure of a long-trail case (with its cross-checks) must fit 16k tokens
HEADER = re.compile(r"^\[Day (\d+), (\d\d):(\d\d)\] \[([A-Z /-]+)\] \[([^\]]+)\] (.*)$")


@cache
def remarks() -> tuple[str, ...]:
    return tuple(json.loads(_data_file(CATALOG_FILE).read_text("utf-8"))["remarks"])


def template_key(fact: dict) -> str:
    if fact["kind"] == "action":
        return "done" if fact["done"] else "blocked"
    return fact["kind"]


def slots(fact: dict, domain: Domain, incident: str) -> dict[str, str]:
    """The template slots of a fact (times as the text writes them)."""
    kind = fact["kind"]
    values = {k: v for k, v in fact.items() if isinstance(v, str)}
    if kind in ("link", "withdraw"):
        values.update(a=fact["from"], b=fact["to"])
    if kind == "conclude":
        values["conclusion"] = domain.conclusion.format(person=fact["person"], incident=incident)
    if kind in ("statement", "report"):
        values.update(day=str(day_of(fact["minute"])), time=clock(fact["minute"]))
    if kind in ("record", "incident"):
        values.update(day=str(day_of(fact["start"])), start=clock(fact["start"]), end=clock(fact["end"]))
    if kind == "custody":
        values["verb"] = domain.custody_verb
    return values


def header(e: Entry) -> str:
    return f"[{stamp(e.minute)}] [{e.entry_type}] [{e.author}]"


def fact_sentence(fact: dict, domain: Domain, incident: str, rng: StableRng) -> str:
    return rng.choice(TEMPLATES[template_key(fact)]).format(**slots(fact, domain, incident))


def narrate(entries: list[Entry], domain: Domain, incident: str, rng: StableRng) -> list[str]:
    """One line per entry (in the given order): header, fact sentence (and up to MAX_REMARKS routine remarks)."""
    pool = remarks()
    lines = []
    for e in entries:
        extra = rng.sample(pool, rng.below(MAX_REMARKS + 1))
        lines.append(" ".join([header(e), fact_sentence(e.fact, domain, incident, rng), *extra]))
    return lines


def oracle_fact(fact: dict, domain: Domain, incident: str) -> dict:
    """A fact as structured fields (days and clock times as written, no internal identifiers)."""
    kind = fact["kind"]
    out: dict = {"kind": kind}
    for key, value in fact.items():
        if key in ("minute", "start", "end"):
            out["day"] = day_of(value)
            out["time" if key == "minute" else key] = clock(value)
        elif key != "kind":
            out[key] = value
    if kind == "conclude":
        out["finding"] = domain.conclusion.format(person=fact["person"], incident=incident)
    return out


def oracle_lines(entries: list[Entry], domain: Domain, incident: str) -> list[str]:
    return [json.dumps({"day": day_of(e.minute), "time": clock(e.minute), "type": e.entry_type, "author": e.author,
                        "fact": oracle_fact(e.fact, domain, incident)}, sort_keys=True, ensure_ascii=True)
            for e in entries]


# ------------------------------------------------------------------------------------------------------ reading

@dataclass(frozen=True)
class Read:
    """An entry read back from a case: where its line is, and its fact in the generator's own fields."""

    line: int
    minute: int
    entry_type: str
    author: str
    fact: dict


def _alternatives(words) -> str:
    return "(?:" + "|".join(re.escape(w) for w in sorted(set(words), key=lambda w: (-len(w), w))) + ")"


@cache
def patterns(domain: Domain) -> dict[str, str]:
    name = r"[A-Z][a-z]+ [A-Z][a-z]+"
    place = r"[A-Z][a-z]+ " + _alternatives(domain.place_kinds)
    thing = "the " + _alternatives(domain.adjectives) + " " + _alternatives(domain.items)
    clue = thing + " from " + place

    def filled(template: str) -> str:
        text = re.escape(template)
        return text.replace(re.escape("{place}"), place).replace(re.escape("{person}"), name)

    incident = filled(domain.incident)
    finding = "the finding that " + filled(domain.conclusion).replace(re.escape("{incident}"), incident)
    named = f"(?:{clue}|the account of {name}|{finding})"
    items = f"{named}(?:(?:, | and ){named})*"  # a cross-check's files: findings and accounts
    return {
        "clue": clue, "a": clue, "b": clue, "thing": thing, "person": name, "witness": name, "items": items,
        "place": place, "day": r"\d+",
        "time": r"\d\d:\d\d", "start": r"\d\d:\d\d", "end": r"\d\d:\d\d", "reason": _alternatives(domain.invalidations),
        "action": "(?:" + "|".join(filled(a) for a in domain.actions) + ")", "incident": incident,
        "verb": re.escape(domain.custody_verb),
        "conclusion": filled(domain.conclusion).replace(re.escape("{incident}"), incident),
    }


_SLOT = re.compile(r"\\\{(\w+)\\\}")


@cache
def compiled(domain: Domain) -> tuple[tuple[str, re.Pattern], ...]:
    """Every template as an anchored regex with one named group per slot."""
    slot_patterns = patterns(domain)
    out = []
    for key, templates in TEMPLATES.items():
        for template in templates:
            regex = _SLOT.sub(lambda m: f"(?P<{m.group(1)}>{slot_patterns[m.group(1)]})", re.escape(template))
            out.append((key, re.compile(regex)))
    return tuple(out)


def _minute(day: str, time: str) -> int:
    hours, minutes = time.split(":")
    return at(int(day), int(hours), int(minutes))


def read_fact(key: str, groups: dict[str, str], domain: Domain) -> dict:
    fact: dict = {"kind": "action" if key in ("done", "blocked") else key}
    for field in ("clue", "person", "place", "reason", "action", "thing", "incident", "witness", "items"):
        if groups.get(field) is not None:
            fact[field] = groups[field]
    if key in ("link", "withdraw"):
        fact.update({"from": groups["a"], "to": groups["b"]})
    if key in ("done", "blocked"):
        fact["done"] = key == "done"
    if key == "conclude":
        fact["person"] = re.match(r"[A-Z][a-z]+ [A-Z][a-z]+", groups["conclusion"]).group(0)
    if key in ("statement", "report"):
        fact["minute"] = _minute(groups["day"], groups["time"])
    if key == "record":
        fact.update(start=_minute(groups["day"], groups["start"]), end=_minute(groups["day"], groups["end"]))
    if key == "incident":
        fact.update(start=_minute(groups["day"], groups["start"]), end=_minute(groups["day"], groups["end"]))
    return fact


def parse_narrative(context: str, domain: Domain) -> list[Read]:
    """Every entry line of a narrative case that states a known fact (others are skipped)."""
    regexes = compiled(domain)
    out = []
    for k, line in enumerate(context.split("\n")):
        head = HEADER.match(line)
        if not head:
            continue
        day, hours, minutes, entry_type, author, body = head.groups()
        for key, regex in regexes:
            match = regex.match(body)
            if match:
                out.append(Read(k, at(int(day), int(hours), int(minutes)), entry_type, author,
                                read_fact(key, match.groupdict(), domain)))
                break
    return out


def parse_oracle(context: str) -> list[Read]:
    out = []
    for k, line in enumerate(context.split("\n")):
        try:
            record = json.loads(line)
            fact = dict(record["fact"])
            minute = _minute(str(record["day"]), record["time"])
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        day = str(fact.pop("day", record["day"]))
        for key in ("time", "start", "end"):
            if key in fact:
                fact["minute" if key == "time" else key] = _minute(day, fact.pop(key))
        fact.pop("finding", None)
        out.append(Read(k, minute, record["type"], record["author"], fact))
    return out
