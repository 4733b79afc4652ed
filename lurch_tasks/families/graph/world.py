"""The seeded world: people with intelligence-style profiles and a latent graph realized by shared cues.

Every edge of the latent graph is written into both endpoint profiles as one *specific* shared cue (a
phone line, a vehicle, a bank account, a named event on a date at a place, a flight on a date), phrased
differently on each side; a clique may instead share one named-group cue. Every cue identifier is unique
to its edge (or group), so two profiles share an identifier exactly when the people are linked. City,
nationality and employer are widely shared and are never links.

Every profile is padded with *solo details* up to a seeded number of detail sentences that does not depend
on the person's role: sentences written with the very cue templates (a call to a number, a flight, an
event, a group) but with identifiers nobody else holds. So gold and distractor profiles have the same
length distribution and the same sentence templates; only shared values make links.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import combinations
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import networkx as nx

from ...core.rng import StableRng, derive_seed
from ...core.vocab import load_words
from .config import OTHER_STRUCTURES, GraphConfig

VOCABULARY = (
    "first_names.txt", "last_names.txt", "cities.txt", "employers.txt", "occupations.txt", "event_prefixes.txt",
    "event_topics.txt", "event_kinds.txt", "group_kinds.txt", "vehicle_colors.txt", "vehicle_types.txt",
    "airline_codes.txt",
)
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
PAIR_CUE_KINDS = ("phone", "plate", "account", "event", "flight")
SOLO_KINDS = (*PAIR_CUE_KINDS, "group")
GROUP_CUE_SHARE = 0.6  # cliques realized by one named-group cue (the rest by one cue per edge)
DETAIL_SENTENCES = (6, 9)  # seeded range of detail sentences per profile (after the biography line)
BASE, SOLO, DECOY = -1, -2, -3  # sentence tags in a profile; cue sentences carry their cue id (>= 0)


@dataclass(frozen=True)
class Person:
    id: int
    name: str
    born: int
    birthplace: str
    residence: str
    nationality: str
    occupation: str
    employer: str
    phone: str
    plate: str  # "" when the person has no car
    vehicle: str


@dataclass(frozen=True)
class Cue:
    """One shared detail: ``key`` is the identifier text that appears verbatim in every member's sentence."""

    id: int
    kind: str  # phone | plate | account | event | flight | group
    key: str
    members: tuple[int, ...]
    sentences: tuple[str, ...]  # one per member, same order


@dataclass(frozen=True)
class Profile:
    text: str
    cue_spans: tuple[tuple[int, int, int], ...]  # (cue id, start, end) of each cue sentence in ``text``
    sentences: tuple[tuple[int, str], ...]  # (tag, sentence) in order: cue id, BASE, SOLO or DECOY
    name: str

    @property
    def name_span(self) -> tuple[int, int]:
        return 0, len(self.name)


@dataclass(frozen=True)
class WorldSpec:
    """The config knobs a world depends on: compared knobs (placement, decoys, prompt style) are not here,
    so configs that differ only in them share one world."""

    size: int
    task: str
    unit_size: int
    main_units: int


def world_spec(config: GraphConfig) -> WorldSpec:
    return WorldSpec(config.resolved_world_size(), config.task, config.unit_size, config.main_units)


@dataclass(frozen=True)
class World:
    people: tuple[Person, ...]
    links: tuple[tuple[int, int, int], ...]  # the latent graph's edges as (u, v, cue id), in networkx edge order
    cues: tuple[Cue, ...]
    profiles: tuple[Profile, ...]
    structures: tuple[tuple[str, tuple[int, ...]], ...]  # planted (kind, members), for reports and tests
    identifiers: frozenset[str]  # every identifier in use: near-miss decoys must avoid them all

    @cached_property
    def graph(self) -> nx.Graph:
        """The latent graph (node = person id; edge attribute "cue" = cue id), made on first use: generating
        from a world read back from disk never imports networkx (~0.2 s)."""
        import networkx as nx

        graph = nx.Graph()
        graph.add_nodes_from(range(len(self.people)))
        graph.add_edges_from((u, v, {"cue": cue}) for u, v, cue in self.links)
        return graph

    @cached_property
    def edge_cues(self) -> dict[tuple[int, int], int]:
        """(smaller id, larger id) -> the cue id of that edge."""
        return {(min(u, v), max(u, v)): cue for u, v, cue in self.links}

    def cue_of(self, u: int, v: int) -> int:
        return self.edge_cues[(u, v) if u < v else (v, u)]

    @cached_property
    def neighbours(self) -> tuple[frozenset[int], ...]:
        """Each person's neighbours in the latent graph, as plain sets (per-instance sampling reads these
        thousands of times; networkx's views are several times slower to iterate)."""
        adjacent: list[set[int]] = [set() for _ in self.people]
        for u, v, _ in self.links:
            adjacent[u].add(v)
            adjacent[v].add(u)
        return tuple(frozenset(nodes) for nodes in adjacent)


class Identifiers:
    """Unique identifier factory: no two cues (or decoys, or own details) ever share an identifier."""

    def __init__(self, rng: StableRng) -> None:
        self.rng = rng
        self.used: set[str] = set()
        self.airlines = load_words("airline_codes.txt")
        self.cities = [line.split("|")[0] for line in load_words("cities.txt")]

    def _unique(self, make) -> str:
        for _ in range(100_000):
            value = make()
            if value not in self.used:
                self.used.add(value)
                return value
        raise ValueError(f"world_size: {len(self.used)} identifiers exhaust a vocabulary; "
                         "allowed: a smaller world_size")

    def digits(self, n: int) -> str:
        return "".join(str(self.rng.below(10)) for _ in range(n))

    def phone(self) -> str:
        return self._unique(lambda: f"+{self.rng.integer(20, 98)} {self.digits(3)} {self.digits(3)} {self.digits(4)}")

    def plate(self) -> str:
        letters = "ABCDEFGHJKLMNPRSTUVWXYZ"

        def make() -> str:
            a = "".join(self.rng.choice(letters) for _ in range(2))
            b = "".join(self.rng.choice(letters) for _ in range(2))
            return f"{a}-{self.digits(3)}-{b}"

        return self._unique(make)

    def account(self) -> str:
        letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
        return self._unique(lambda: f"{self.rng.choice(letters)}{self.rng.choice(letters)}{self.digits(2)} "
                                    f"{self.digits(4)} {self.digits(4)} {self.digits(4)}")

    def date(self) -> str:
        return f"{self.rng.integer(1, 28)} {self.rng.choice(MONTHS)} {self.rng.integer(2015, 2024)}"

    def flight(self) -> str:
        return self._unique(lambda: f"flight {self.rng.choice(self.airlines)} {self.rng.integer(100, 9899)} "
                                    f"on {self.date()}")

    def event(self) -> str:
        prefixes, topics = load_words("event_prefixes.txt"), load_words("event_topics.txt")
        kinds = load_words("event_kinds.txt")
        return self._unique(lambda: f"the {self.rng.choice(prefixes)} {self.rng.choice(topics)} "
                                    f"{self.rng.choice(kinds)} in {self.rng.choice(self.cities)} on {self.date()}")

    def group(self) -> str:
        prefixes, kinds = load_words("event_prefixes.txt"), load_words("group_kinds.txt")
        surnames, topics = load_words("last_names.txt"), load_words("event_topics.txt")
        return self._unique(lambda: f"the {self.rng.choice(prefixes + surnames)} {self.rng.choice(topics)} "
                                    f"{self.rng.choice(kinds)}")


# --- people --------------------------------------------------------------------------------------


def make_people(size: int, rng: StableRng, ids: Identifiers) -> tuple[Person, ...]:
    firsts, lasts = load_words("first_names.txt"), load_words("last_names.txt")
    if size > len(firsts) * len(lasts) // 2:
        raise ValueError(f"world_size: {size} is too large for the name lists; allowed: at most "
                         f"{len(firsts) * len(lasts) // 2}")
    cities = [line.split("|") for line in load_words("cities.txt")]
    employers, occupations = load_words("employers.txt"), load_words("occupations.txt")
    colors, vehicles = load_words("vehicle_colors.txt"), load_words("vehicle_types.txt")
    names: list[str] = []
    taken: set[str] = set()
    while len(names) < size:
        name = f"{rng.choice(firsts)} {rng.choice(lasts)}"
        if name not in taken:
            taken.add(name)
            names.append(name)
    people = []
    for pid, name in enumerate(names):
        birth_city, _, nationality = rng.choice(cities)
        residence = rng.choice(cities)[0]
        has_car = rng.uniform() < 0.7
        people.append(Person(
            id=pid, name=name, born=rng.integer(1955, 2001), birthplace=birth_city,
            residence=residence, nationality=nationality, occupation=rng.choice(occupations),
            employer=rng.choice(employers), phone=ids.phone(), plate=ids.plate() if has_car else "",
            vehicle=f"{rng.choice(colors)} {rng.choice(vehicles)}" if has_car else "",
        ))
    return tuple(people)


# --- latent graph --------------------------------------------------------------------------------


def plant_structures(spec: WorldSpec, rng: StableRng) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """Disjoint stars, cliques and pairs over a shuffled population; the config's own unit type is
    planted often enough for the densest prompt, the others for variety; the rest stay isolated."""
    order = rng.shuffled(list(range(spec.size)))
    main_kind = {"edge": "pair", "subgraph": "star", "clique": "clique"}[spec.task]
    plan = rng.shuffled([(main_kind, spec.unit_size)] * spec.main_units + list(OTHER_STRUCTURES))
    structures, cursor = [], 0
    for kind, n in plan:
        structures.append((kind, tuple(order[cursor:cursor + n])))
        cursor += n
    return tuple(structures)


def structure_edges(kind: str, members: tuple[int, ...]) -> list[tuple[int, int]]:
    if kind == "star":
        return [(members[0], leaf) for leaf in members[1:]]
    return list(combinations(members, 2))  # pair or clique


def random_extra_edges(size: int, graph: nx.Graph, rng: StableRng, count: int) -> list[tuple[int, int]]:
    """Sparse random links across the population (cross-community noise for the min-degree sampler)."""
    extra: list[tuple[int, int]] = []
    attempts = 0
    while len(extra) < count and attempts < count * 50:
        attempts += 1
        u, v = rng.below(size), rng.below(size)
        if u != v and not graph.has_edge(u, v) and (min(u, v), max(u, v)) not in extra:
            extra.append((min(u, v), max(u, v)))
    return extra


# --- cue sentences -------------------------------------------------------------------------------

# Profiles name their subject by surname, as case notes do; {S} is the surname, {Ss} its possessive.
_PAIR_PHRASES = {
    "phone": ("Call records show {S} making repeated calls to {key}.", "{S} also uses a second phone, {key}."),
    "plate": ("{S} was seen several times in a {vehicle} with plate {key}.",
              "{S} is the registered keeper of a {vehicle}, plate {key}."),
    "account": ("{S} wired {amount} to the account {key}.", "{S} controls the bank account {key}."),
    "event": ("{S} attended {key}.", "A guest list places {S} at {key}."),
    "flight": ("Airline records list {S} on {key}.", "{S} travelled on {key}, seat {seat}."),
}
_GROUP_PHRASES = ("{S} is a member of {key}.", "{S} regularly attends meetings of {key}.",
                  "A report names {S} as belonging to {key}.")


def cue_templates(kind: str) -> tuple[str, ...]:
    """The sentence templates of a cue kind: real cues, solo details and decoys all draw from these."""
    return _GROUP_PHRASES if kind == "group" else _PAIR_PHRASES[kind]


def _side_values(rng: StableRng, key: str) -> dict[str, str]:
    colors, vehicles = load_words("vehicle_colors.txt"), load_words("vehicle_types.txt")
    return {"key": key, "vehicle": f"{rng.choice(colors)} {rng.choice(vehicles)}",
            "amount": f"EUR {rng.integer(2, 95) * 100:,}", "seat": f"{rng.integer(1, 38)}{rng.choice('ABCDEF')}"}


def _surname(person: Person) -> str:
    return person.name.split(" ", 1)[1]


def _fill(template: str, person: Person, **values: str) -> str:
    surname = _surname(person)
    return template.format(S=surname, Ss=f"{surname}'s", **values)


def _new_key(kind: str, ids: Identifiers) -> str:
    return {"phone": ids.phone, "plate": ids.plate, "account": ids.account, "event": ids.event,
            "flight": ids.flight, "group": ids.group}[kind]()


def make_cues(world_edges: list[tuple[int, int]], groups: list[tuple[int, ...]], people: tuple[Person, ...],
              rng: StableRng, ids: Identifiers) -> tuple[list[Cue], dict[tuple[int, int], int]]:
    """One cue per group (covering its pairs) and one cue per remaining edge; edge -> cue id."""
    cues: list[Cue] = []
    edge_cue: dict[tuple[int, int], int] = {}
    for members in groups:
        key = ids.group()
        sentences = tuple(_fill(rng.choice(_GROUP_PHRASES), people[m], key=key) for m in members)
        cues.append(Cue(len(cues), "group", key, members, sentences))
        for u, v in combinations(sorted(members), 2):
            edge_cue[(u, v)] = cues[-1].id
    for u, v in world_edges:
        if (u, v) in edge_cue:
            continue
        kind = rng.choice(SOLO_KINDS)  # a pair may be a two-person named group too, so no kind marks a task
        key = _new_key(kind, ids)
        members = (u, v) if rng.below(2) else (v, u)  # which side gets which phrasing
        values = _side_values(rng, key)
        if kind == "group":
            sentences = tuple(_fill(rng.choice(_GROUP_PHRASES), people[m], **values) for m in members)
        else:
            first, second = _PAIR_PHRASES[kind]
            sentences = (_fill(first, people[members[0]], **values), _fill(second, people[members[1]], **values))
        cues.append(Cue(len(cues), kind, key, members, sentences))
        edge_cue[(u, v)] = cues[-1].id
    return cues, edge_cue


def near_miss(key: str, kind: str, rng: StableRng, taken: set[str]) -> str | None:
    """An identifier one small edit away from ``key`` that is not in ``taken`` (then added to it)."""
    for _ in range(20):
        if kind in ("phone", "account", "plate"):
            positions = [i for i, ch in enumerate(key) if ch.isdigit()]
            i = rng.choice(positions)
            candidate = key[:i] + str((int(key[i]) + 1 + rng.below(8)) % 10) + key[i + 1:]
        elif kind in ("event", "flight"):
            year = key[-4:]
            candidate = key[:-4] + str(int(year) + rng.choice((-2, -1, 1, 2)))
        else:  # group: same name, another kind of group
            words = key.split(" ")
            other_kinds = [k for k in load_words("group_kinds.txt") if k != words[-1]]
            candidate = " ".join(words[:-1] + [rng.choice(other_kinds)])
        if candidate not in taken:
            taken.add(candidate)
            return candidate
    return None


# --- profiles ------------------------------------------------------------------------------------


def _article(noun: str) -> str:
    return "an" if noun[0] in "aeiou" else "a"


def base_sentences(person: Person) -> list[str]:
    """Biography, occupation, contact and asset details: widely shared or the person's own, never links."""
    s = _surname(person)
    sentences = [
        f"Born in {person.born} in {person.birthplace}, {s} holds {person.nationality} citizenship and now lives "
        f"in {person.residence}.",
        f"{s} works as {_article(person.occupation)} {person.occupation} for {person.employer}.",
        f"{s} can be reached on {person.phone}.",
    ]
    if person.plate:
        sentences.append(f"{s} drives a {person.vehicle}, plate {person.plate}.")
    return sentences


def cue_sentence_kinds(cues: list[Cue]) -> tuple[tuple[str, int], ...]:
    """How many cue sentences of each kind ``cues`` hold. Solo details are drawn with the weights of the
    cues inside the config's own unit type (what gold is made of), so a sentence's kind says nothing about
    whether it is a gold link (a clique task's gold is rich in named groups, an edge task's is not)."""
    counts = dict.fromkeys(SOLO_KINDS, 0)
    for cue in cues:
        counts[cue.kind] += len(cue.members)
    return tuple((kind, counts[kind] or 1) for kind in SOLO_KINDS)


def solo_sentence(person: Person, rng: StableRng, ids: Identifiers, weights: tuple[tuple[str, int], ...]) -> str:
    """A detail written like a cue but with an identifier nobody else holds: never a link."""
    kind = _weighted(weights, rng.below(sum(w for _, w in weights)))
    return _fill(rng.choice(cue_templates(kind)), person, **_side_values(rng, _new_key(kind, ids)))


def _weighted(weights: tuple[tuple[str, int], ...], draw: int) -> str:
    """The item whose cumulative weight range holds ``draw`` (0 <= draw < total weight)."""
    for item, weight in weights:
        if draw < weight:
            return item
        draw -= weight
    return weights[-1][0]


def compose_profile(name: str, tagged: list[tuple[int, str]]) -> Profile:
    """``Name: sentence sentence ...`` with the character span of every cue sentence."""
    header = f"{name}: "
    parts, spans, offset = [], [], len(header)
    for i, (tag, sentence) in enumerate(tagged):
        if i:
            offset += 1
        if tag >= 0:
            spans.append((tag, offset, offset + len(sentence)))
        parts.append(sentence)
        offset += len(sentence)
    return Profile(header + " ".join(parts), tuple(spans), tuple(tagged), name)


def render_profile(person: Person, own: list[tuple[int, str]], rng: StableRng, ids: Identifiers,
                   weights: tuple[tuple[str, int], ...]) -> Profile:
    """Biography first, then own details, cue sentences and solo details in a seeded order.

    The number of detail sentences is drawn from ``DETAIL_SENTENCES`` for everyone alike; solo details fill
    the gap, so a profile's length says nothing about how many links its person has."""
    body = base_sentences(person)
    details = [(BASE, s) for s in body[1:]] + own
    target = rng.integer(*DETAIL_SENTENCES)
    details += [(SOLO, solo_sentence(person, rng, ids, weights)) for _ in range(max(0, target - len(details)))]
    return compose_profile(person.name, [(BASE, body[0]), *rng.shuffled(details)])


def has_solo(profile: Profile) -> bool:
    return any(tag == SOLO for tag, _ in profile.sentences)


def decoy_slot(profile: Profile, sentence: str, rng: StableRng) -> tuple[int, int]:
    """Where ``sentence`` would replace a solo detail: among the solo details closest to it in characters, a
    seeded pick ("the first" would put decoys early), so the slot says nothing; and that length gap."""
    solos = [i for i, (tag, _) in enumerate(profile.sentences) if tag == SOLO]
    if not solos:
        raise ValueError("decoy_slot: the profile has no solo detail to replace")
    gaps = {i: abs(len(profile.sentences[i][1]) - len(sentence)) for i in solos}
    closest = min(gaps.values())
    return rng.choice([i for i in solos if gaps[i] == closest]), closest


def with_decoy(profile: Profile, sentence: str, slot: int) -> Profile:
    """The profile with ``sentence`` in place of its solo detail at ``slot`` (see ``decoy_slot``)."""
    tagged = list(profile.sentences)
    tagged[slot] = (DECOY, sentence)
    return compose_profile(profile.name, tagged)


# --- the world -----------------------------------------------------------------------------------


def build_world(config: GraphConfig, seed: int) -> World:
    """The population, latent graph, cues and profiles for (config's world knobs, seed); cached."""
    return _build_world(world_spec(config), seed)


@lru_cache(maxsize=8)
def _build_world(spec: WorldSpec, seed: int) -> World:
    """The world of (spec, seed): read from the disk cache when a valid table is there, else made and saved."""
    from .tables import stored_world  # the cache layer imports this module

    return stored_world(spec, seed, make_world)


def make_world(spec: WorldSpec, seed: int) -> World:
    size = spec.size
    rng = StableRng(derive_seed("graph-world", seed, size, spec.task, spec.unit_size, spec.main_units))
    ids = Identifiers(StableRng(derive_seed("graph-ids", seed, size)))
    people = make_people(size, rng, ids)
    structures = plant_structures(spec, rng)
    import networkx as nx  # imported when a world is built, not when the family registers (~0.2 s)

    graph = nx.Graph()
    graph.add_nodes_from(range(size))
    groups: list[tuple[int, ...]] = []
    for kind, members in structures:
        graph.add_edges_from(structure_edges(kind, members))
        if kind == "clique" and rng.uniform() < GROUP_CUE_SHARE:
            groups.append(tuple(sorted(members)))
    extra = random_extra_edges(size, graph, rng, max(2, size // 50))
    graph.add_edges_from(extra)
    edges = sorted((min(u, v), max(u, v)) for u, v in graph.edges())
    cues, edge_cue = make_cues(edges, groups, people, rng, ids)
    for (u, v), cue_id in edge_cue.items():
        graph.edges[u, v]["cue"] = cue_id
    own: dict[int, list[tuple[int, str]]] = {pid: [] for pid in range(size)}
    for cue in cues:
        for member, sentence in zip(cue.members, cue.sentences, strict=True):
            own[member].append((cue.id, sentence))
    main_kind = {"edge": "pair", "subgraph": "star", "clique": "clique"}[spec.task]
    main_cues = sorted({edge_cue[(min(u, v), max(u, v))] for kind, members in structures if kind == main_kind
                        for u, v in structure_edges(kind, members)})
    weights = cue_sentence_kinds([cues[c] for c in main_cues])
    profiles = tuple(render_profile(p, own[p.id], rng, ids, weights) for p in people)
    world = World(people, tuple((u, v, cue) for u, v, cue in graph.edges(data="cue")), tuple(cues), profiles,
                  structures, frozenset(ids.used))
    world.__dict__["graph"] = graph  # the graph as built (cached_property's slot), not a copy
    return world


def decoy_parts(cue: Cue, rng: StableRng, taken: set[str]) -> tuple[str, dict[str, str], str] | None:
    """Template, values and identifier of a near miss of ``cue``: written with one of the cue kind's own
    templates, exactly as a real cue would be; only the value differs from the gold cue it imitates."""
    key = near_miss(cue.key, cue.kind, rng, taken)
    if key is None:
        return None
    return rng.choice(cue_templates(cue.kind)), _side_values(rng, key), key


def fill_sentence(template: str, person: Person, values: dict[str, str]) -> str:
    return _fill(template, person, **values)
