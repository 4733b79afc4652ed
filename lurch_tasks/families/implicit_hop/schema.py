"""The ImplicitHop knowledge-base schema: entity types, typed functional relations, and their wording.

Every relation maps an entity to exactly one entity (or a year) of a fixed type, so relations compose into
paths (artefact -> creator -> employer -> headquarters -> region). Every relation has three phrasings (so
which phrasing wrote a line says nothing about its relation). Each entity type has four relations into
every type it links to (their values differ), so a hop cannot be answered by "the nearest city", nor by
following entity types, without reading which relation a sentence states. Phrasings never name a relation
id; questions use the noun phrases.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

ENTITY_TYPES = ("person", "organisation", "city", "region", "artefact")
YEAR = "year"


@dataclass(frozen=True)
class Relation:
    """A functional relation ``source -> target``; ``facts`` are sentence templates over ``{s}`` (the
    source entity) and ``{t}`` (its value); ``phrase`` is the question's noun phrase over ``{x}``, always
    "the ... of {x}", so nested phrases read (and parse) from the outside in."""

    id: str
    source: str
    target: str
    facts: tuple[str, ...]
    phrase: str


RELATIONS: tuple[Relation, ...] = (
    Relation("employer", "person", "organisation",
             ("{s} works for {t}.", "{s} is employed by {t}.", "{t} employs {s}."),
             "the employer of {x}"),
    Relation("former_employer", "person", "organisation",
             ("{s} used to work for {t}.", "{s} left a post at {t} years ago.", "{t} once employed {s}."),
             "the former employer of {x}"),
    Relation("client", "person", "organisation",
             ("{s} consults for {t}.", "{s} advises {t}.", "{t} hires {s} as an adviser."),
             "the consulting client of {x}"),
    Relation("investment", "person", "organisation",
             ("{s} holds shares in {t}.", "{s} invested in {t}.", "{t} has {s} as a shareholder."),
             "the investment of {x}"),
    Relation("birthplace", "person", "city",
             ("{s} was born in {t}.", "{s} is a native of {t}.", "{t} is where {s} was born."),
             "the birthplace of {x}"),
    Relation("residence", "person", "city",
             ("{s} lives in {t}.", "{s} has a home in {t}.", "{t} is where {s} lives now."),
             "the home city of {x}"),
    Relation("study_city", "person", "city",
             ("{s} studied in {t}.", "{s} went to college in {t}.", "{t} is where {s} studied."),
             "the university city of {x}"),
    Relation("holiday_city", "person", "city",
             ("{s} holidays in {t}.", "{s} spends summers in {t}.", "{t} is where {s} holidays."),
             "the holiday city of {x}"),
    Relation("mentor", "person", "person",
             ("{s} was trained by {t}.", "{t} mentored {s}.", "{s} learned the trade from {t}."),
             "the mentor of {x}"),
    Relation("rival", "person", "person",
             ("{s} has a long rivalry with {t}.", "{t} is the great rival of {s}.", "{s} competes with {t}."),
             "the rival of {x}"),
    Relation("friend", "person", "person",
             ("{s} is a friend of {t}.", "{t} is the best friend of {s}.", "{s} confides in {t}."),
             "the best friend of {x}"),
    Relation("successor", "person", "person",
             ("{s} was succeeded by {t}.", "{t} took over from {s}.", "{t} is the successor of {s}."),
             "the successor of {x}"),
    Relation("founder", "organisation", "person",
             ("{t} founded {s}.", "{s} was founded by {t}.", "{s} owes its start to {t}."),
             "the founder of {x}"),
    Relation("chair", "organisation", "person",
             ("{t} chairs {s}.", "{s} is chaired by {t}.", "The board of {s} is led by {t}."),
             "the chair of {x}"),
    Relation("treasurer", "organisation", "person",
             ("{t} is treasurer of {s}.", "{t} keeps the books of {s}.", "{s} has {t} as treasurer."),
             "the treasurer of {x}"),
    Relation("spokesperson", "organisation", "person",
             ("{t} speaks for {s}.", "{s} is represented by {t}.", "{t} is the voice of {s}."),
             "the spokesperson of {x}"),
    Relation("headquarters", "organisation", "city",
             ("{s} is headquartered in {t}.", "{s} has its head office in {t}.", "{t} hosts the head office of {s}."),
             "the head-office city of {x}"),
    Relation("branch", "organisation", "city",
             ("{s} runs a branch in {t}.", "{s} keeps a branch office in {t}.", "{t} hosts a branch of {s}."),
             "the branch city of {x}"),
    Relation("warehouse", "organisation", "city",
             ("{s} has a warehouse in {t}.", "{s} stores goods in {t}.", "{t} holds a depot of {s}."),
             "the warehouse city of {x}"),
    Relation("factory", "organisation", "city",
             ("{s} runs a factory in {t}.", "{s} manufactures in {t}.", "{t} hosts a factory of {s}."),
             "the factory city of {x}"),
    Relation("region", "city", "region",
             ("{s} lies in {t}.", "{s} is a city of {t}.", "{t} is the region that contains {s}."),
             "the region of {x}"),
    Relation("trade_partner", "city", "region",
             ("{s} trades mostly with {t}.", "Most of the trade of {s} goes to {t}.",
              "{t} is the main trading partner of {s}."),
             "the main trading region of {x}"),
    Relation("water_source", "city", "region",
             ("{s} draws water from {t}.", "{s} gets water from {t}.", "{t} supplies water to {s}."),
             "the water-supply region of {x}"),
    Relation("twin_region", "city", "region",
             ("{s} is twinned with {t}.", "{s} has a twin pact with {t}.", "{t} is the twin of {s}."),
             "the twin region of {x}"),
    Relation("creator", "artefact", "person",
             ("{s} was made by {t}.", "{t} created {s}.", "{s} is the work of {t}."),
             "the creator of {x}"),
    Relation("keeper", "artefact", "person",
             ("{s} is kept by {t}.", "{t} looks after {s}.", "{s} is in the care of {t}."),
             "the keeper of {x}"),
    Relation("restorer", "artefact", "person",
             ("{s} was restored by {t}.", "{t} restored {s}.", "{s} owes its repair to {t}."),
             "the restorer of {x}"),
    Relation("owner", "artefact", "person",
             ("{s} belongs to {t}.", "{t} owns {s}.", "{s} is the property of {t}."),
             "the owner of {x}"),
    Relation("birth_year", "person", YEAR,
             ("{s} was born in the year {t}.", "{s}'s year of birth is {t}.", "{s} came into the world in {t}."),
             "the birth year of {x}"),
    Relation("founding_year", "organisation", YEAR,
             ("{s} was founded in the year {t}.", "{s} dates from {t}.", "{s} opened its doors in {t}."),
             "the founding year of {x}"),
)

BY_ID = {relation.id: relation for relation in RELATIONS}

# The final step of a joined question. ``compare``: which of the chains' ends came first or last by a year
# relation; ``count``: how many of the ends a city relation leads to one named city. Each join's wording:
# the ends' plural noun, and the predicate the question asks about.
PLURALS = {"person": "people", "organisation": "organisations"}
COMPARE_RELATIONS = {"birth_year": {"earliest": "was born earliest", "latest": "was born latest"},
                     "founding_year": {"earliest": "was founded earliest", "latest": "was founded latest"}}
COUNT_RELATIONS = {"birthplace": "were born in {c}", "residence": "live in {c}"}


@cache
def outgoing(entity_type: str) -> tuple[Relation, ...]:
    """Relations from ``entity_type`` to another entity (not to a year), in schema order."""
    return tuple(r for r in RELATIONS if r.source == entity_type and r.target != YEAR)
