"""The answer formats beyond MCQ single (paper App. A.4, D.1) and the fixed quota matrix: which formats every
case asks of every category. Each question is computed from the blueprint and the case's entries, like the
six-option ones in ``questions``:

- MCQ multiple: six options, 1-5 of them correct (the count drawn uniformly among those the case allows);
- integer: an exact count;
- ordering: the gold set of items as letters, to be put in order (a path of the provenance DAG, or a custody
  history in time), so the gold is the DAG's only topological order of those items;
- free form: key facts that must be stated and contradicting facts that must not be asserted.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from ...core.rng import StableRng
from .blueprint import ALIBI_SUBJECTS, COUNTED_HOPS, IMPLICATED, Blueprint, uncovered_windows
from .case import Entry, clock, day_of, stamp
from .questions import (
    DECOY_MODE,
    NUM_OPTIONS,
    Index,
    Question,
    before_first_record,
    build_question,
    counterfactual_text,
    open_conflict_proof,
    open_conflict_text,
    trail_proof,
    unsettled_conflict_question,
    unsettled_state_question,
)

FORMATS = ("mcq_single", "mcq_multi", "integer", "ordering", "free_form")
QUOTA: dict[str, tuple[str, ...]] = {
    "chain": ("mcq_single", "integer", "ordering"),
    "cascade": ("mcq_single", "mcq_multi", "integer"),
    "conflict": ("mcq_single", "free_form"),
    "counterfactual": ("mcq_single", "mcq_multi"),
    "temporal": ("mcq_single", "mcq_multi", "integer"),
    "retrieval": ("mcq_single", "ordering", "free_form"),
}
"""One question per (category, format) listed, on every case: 16 per case."""

# Each integer question's answer is uniform over a fixed range of its category (drawn first, DESIGN 3.5), and the
# seeded guess is uniform over the same range, read off the question: a constant answer scores exactly chance.
# (Chain: a config whose hops leave 3-9 draws over its own range, and the guess is then only close to chance.)
INTEGER_RANGES = {"chain": COUNTED_HOPS, "cascade": (0, IMPLICATED - 1), "temporal": (0, ALIBI_SUBJECTS)}
INTEGER_ASKS = {"chain": "did that trail pass through", "cascade": "lost all of its support by then",
                "temporal": "are not accounted for"}  # words only that category's integer question uses


def quota_slots(categories: Sequence[str], formats: Sequence[str]) -> list[tuple[str, str]]:
    """The (category, format) questions of one case, in quota order, for the configured subsets."""
    return [(c, f) for c in QUOTA if c in categories for f in QUOTA[c] if f in formats]


def quota_table() -> str:
    """The quota matrix as a Markdown table (the dataset card and README show it)."""
    head = "| category | " + " | ".join(FORMATS) + " | per case |"
    rule = "|---" * (len(FORMATS) + 2) + "|"
    rows = [f"| {c} | " + " | ".join("1" if f in QUOTA[c] else "-" for f in FORMATS) + f" | {len(QUOTA[c])} |"
            for c in QUOTA]
    totals = [sum(f in QUOTA[c] for c in QUOTA) for f in FORMATS]
    rows.append("| all | " + " | ".join(map(str, totals)) + f" | {sum(totals)} |")
    return "\n".join([head, rule, *rows])


def _phrase(bp: Blueprint, person: str) -> str:
    return bp.domain.conclusion.format(person=person, incident=bp.incident)


def _multi(category: str, text: str, right: Sequence[tuple[str, str]], wrong: Sequence[tuple[str, str]], k: int,
           rng: StableRng, proof: Sequence[int], params: dict) -> Question:
    """Six options, ``k`` of ``right`` and the rest of ``wrong`` ((text, failure mode) pairs), shuffled."""
    chosen = [(t, None) for t, _ in rng.sample(list(right), k)] + rng.sample(list(wrong), NUM_OPTIONS - k)
    chosen = rng.shuffled(chosen)
    gold = tuple(i for i, (_, mode) in enumerate(chosen) if mode is None)
    return Question(category, text, tuple(t for t, _ in chosen), gold, tuple(m for _, m in chosen),
                    tuple(sorted(set(proof))), params, "mcq_multi")


def _ordering(category: str, text: str, items: Sequence[str], rng: StableRng, proof: Sequence[int],
              params: dict) -> Question:
    """``items`` (in their correct order) shuffled into options; gold = the options in the correct order."""
    options = rng.shuffled(list(items))
    gold = tuple(options.index(item) for item in items)
    return Question(category, text, tuple(options), gold, (None,) * len(options), tuple(sorted(set(proof))),
                    params, "ordering")


# ------------------------------------------------------------------------------------------------------- chain

def chain_premise(bp: Blueprint, t: int) -> str:
    trail = bp.trails[t]
    return f"The finding that {_phrase(bp, trail.person)} rests on a trail of findings that began with {trail.origin}."


def integer_range(question: str, default: tuple[int, int]) -> tuple[int, int]:
    """The answer range of an integer question, read from its text (``default`` for none of ours)."""
    return next((INTEGER_RANGES[c] for c, words in INTEGER_ASKS.items() if words in question), default)


def chain_integer(bp: Blueprint, index: Index, rng: StableRng) -> Question:
    """The counted trail's link count was drawn first, uniformly over ``COUNTED_HOPS`` (``generate.trail_hops``)."""
    t = bp.counted_trail
    trail = bp.trails[t]
    text = (f"{chain_premise(bp, t)} How many findings did that trail pass through after {trail.origin}, counting "
            "the one the finding rests on?")
    return Question("chain", text, (), len(trail.clues), (), tuple(trail_proof(index, trail)),
                    {"trail": t, "hops": len(trail.clues)}, "integer")


def chain_ordering(bp: Blueprint, index: Index, rng: StableRng) -> Question:
    t = bp.ordered_trail
    trail = bp.trails[t]
    text = f"{chain_premise(bp, t)} Put the findings below in the order that trail passed through them."
    return _ordering("chain", text, trail.clues, rng, trail_proof(index, trail), {"trail": t,
                                                                                  "hops": len(trail.clues)})


# ----------------------------------------------------------------------------------------------------- cascade

def concluded(bp: Blueprint, until: int) -> dict[str, list[int]]:
    """Person -> their conclusion trails reached by ``until``."""
    out: dict[str, list[int]] = {}
    for k, trail in enumerate(bp.trails):
        if trail.minutes[-1] <= until:
            out.setdefault(trail.person, []).append(k)
    return out


def fallen(bp: Blueprint, until: int) -> set[str]:
    """People concluded by ``until`` whose every conclusion trail has lost a link by then."""
    cut = {w.trail for w in bp.withdrawals if w.minute <= until}
    return {p for p, trails in concluded(bp, until).items() if all(t in cut for t in trails)}


def withdrawn_link(bp: Blueprint, w) -> tuple[str, str]:
    trail = bp.trails[w.trail]
    clues = [trail.origin, *trail.clues]
    return clues[w.hop], clues[w.hop + 1]


PATTERN_DRAWS = 40  # target recency patterns tried before any feasible option set is taken


def cascade_multi(bp: Blueprint, index: Index, rng: StableRng) -> Question:
    """Which conclusions still stand right after a withdrawal (independent support included). Standing
    conclusions tend to be the later ones (each loses its link at a random time after it is reached), so the
    option set is drawn to match a uniform pattern of which recency ranks are correct: a strategy that picks
    the most (or least) recently stated conclusions is at chance."""
    fatal = [w for w in bp.withdrawals if w.trail >= 2]
    said = {t.person: t.minutes[-1] for t in bp.trails}  # when each conclusion is stated (the culprit's: latest)

    def candidates(leave_out: set[str]) -> list[tuple]:
        out = []
        for w in fatal:
            down = fallen(bp, w.minute)
            people = sorted(p for p in concluded(bp, w.minute) if p not in leave_out)
            for chosen in combinations(people, NUM_OPTIONS):
                pattern = tuple(p not in down for p in sorted(chosen, key=lambda p: said[p]))
                if 0 < sum(pattern) < NUM_OPTIONS:
                    out.append((w, chosen, pattern))
        return out

    # the culprit is left out when the case allows: named by two conclusions, its option is mentioned twice
    pool = candidates({bp.culprit}) or candidates(set())
    if not pool:
        raise ValueError("recon: too few conclusions for a multiple-answer cascade question")
    k = rng.choice(sorted({sum(c[2]) for c in pool}))
    matching = []
    for _ in range(PATTERN_DRAWS):
        ranks = set(rng.sample(range(NUM_OPTIONS), k))
        target = tuple(r in ranks for r in range(NUM_OPTIONS))
        matching = [c for c in pool if c[2] == target]
        if matching:
            break
    w, chosen, _ = rng.choice(matching or [c for c in pool if sum(c[2]) == k])
    down = fallen(bp, w.minute)
    source, target_clue = withdrawn_link(bp, w)
    right = [(_phrase(bp, p), "") for p in chosen if p not in down]
    wrong = [(_phrase(bp, p), "missed_invalidation" if p == bp.trails[w.trail].person else "stale_support")
             for p in chosen if p in down]
    text = (f"On {stamp(w.minute)}, the finding that {source} led to {target_clue} was withdrawn. Which of these "
            "findings still had support right after that? Choose every one that did.")
    withdrawn = index.find_kind("withdraw", lambda f: f["from"] == source and f["to"] == target_clue)
    proof = [*withdrawn, *(r for k in range(len(bp.trails)) for r in trail_proof(index, bp.trails[k]))]
    return _multi("cascade", text, right, wrong, len(right), rng, proof, {"trail": w.trail, "hop": w.hop})


def cascade_integer(bp: Blueprint, index: Index, rng: StableRng) -> Question:
    """How many people's conclusions had lost all support at a moment: the moment and the count are planned
    with the withdrawals (``blueprint.plan_withdrawals``: the count uniform, and as many withdrawal entries
    before the moment whatever it is)."""
    asked = bp.cascade_moment
    answer = len(fallen(bp, asked))
    that = _phrase(bp, "X")
    text = (f"Consider every person X for whom the case had reached the finding that {that} by {stamp(asked)}. "
            "For how many of them had every such finding lost all of its support by then?")
    proof = [r for k in range(len(bp.trails)) for r in trail_proof(index, bp.trails[k])]
    proof += index.find_kind("withdraw")
    return Question("cascade", text, (), answer, (), tuple(sorted(set(proof))),
                    {"asked": asked}, "integer")


# ---------------------------------------------------------------------------------------------- counterfactual

def counterfactual_multi(bp: Blueprint, index: Index, rng: StableRng) -> Question:
    """Move the result later (which actions would not have gone ahead when they did) or earlier (which planned
    actions would then have gone ahead); ``plan.k`` of the result's own actions inside the window (k drawn
    uniformly) and decoys from the same window."""
    plan, result = bp.counterfactual, bp.discoveries[0]
    right = [(a.phrase, "") for a in plan.gold]
    wrong = [(a.phrase, DECOY_MODE) for a in plan.decoys]
    proof = [index.one_kind("result", lambda f: f["clue"] == result.clue)]
    proof += index.find_kind("action", lambda f: f["clue"] == result.clue)
    return _multi("counterfactual", counterfactual_text(bp, True), right, wrong, plan.k, rng, proof,
                  {"form": plan.form, "moved_to": plan.moved, "discovery": 0})


# ---------------------------------------------------------------------------------------------------- temporal

def alibi_windows(bp: Blueprint, entries: Sequence[Entry]) -> list[tuple[int, int, frozenset[str]]]:
    """Candidate windows on the incident's day around its window, each with the subjects the records leave
    uncovered in it (every record of those people counts, as the solver reads them)."""
    a = bp.alibi
    spans: dict[str, list[tuple[int, int]]] = {p: [] for p in a.subjects}
    for e in entries:
        if e.fact["kind"] == "record" and e.fact["person"] in spans:
            spans[e.fact["person"]].append((e.fact["start"], e.fact["end"]))
    return uncovered_windows(a.start, a.end, spans)


def _window(bp: Blueprint, entries: Sequence[Entry], rng: StableRng, counts: Sequence[int]
            ) -> tuple[int, int, frozenset[str]]:
    """A window whose uncovered count is drawn uniformly over ``counts`` the case allows."""
    windows = alibi_windows(bp, entries)
    by_count: dict[int, list] = {}
    for w in windows:
        by_count.setdefault(len(w[2]), []).append(w)
    allowed = [c for c in counts if c in by_count]
    return rng.choice(by_count[rng.choice(allowed)])


def _records_of(index: Index, people: Sequence[str], day: int) -> list[int]:
    return index.find_kind("record", lambda f: f["person"] in people and day_of(f["start"]) == day)


def temporal_multi(bp: Blueprint, index: Index, rng: StableRng) -> Question:
    start, end, gaps = _window(bp, index.entries, rng, range(1, NUM_OPTIONS))
    right = [(p, "") for p in bp.alibi.subjects if p in gaps]
    wrong = [(p, "single_stream_reading") for p in bp.alibi.subjects if p not in gaps]
    text = (f"On Day {day_of(start)} between {clock(start)} and {clock(end)}, which of these people are not accounted "
            "for by the records for the whole of that time? Choose every one.")
    return _multi("temporal", text, right, wrong, len(right), rng,
                  _records_of(index, bp.alibi.subjects, day_of(start)), {"start": start, "end": end})


def temporal_integer(bp: Blueprint, index: Index, rng: StableRng) -> Question:
    start, end, gaps = _window(bp, index.entries, rng, range(len(bp.alibi.subjects) + 1))
    people = rng.shuffled(list(bp.alibi.subjects))
    text = (f"On Day {day_of(start)} between {clock(start)} and {clock(end)}, how many of these people are not "
            f"accounted for by the records for the whole of that time: {', '.join(people)}?")
    return Question("temporal", text, (), len(gaps), (), tuple(_records_of(index, people, day_of(start))),
                    {"start": start, "end": end, "people": people}, "integer")


# ---------------------------------------------------------------------------------------------------- conflict

def conflict_free_form(bp: Blueprint, index: Index, rng: StableRng) -> Question:
    c = bp.conflict
    record = index.one_kind("record", lambda f: f["person"] == c.subject and f["place"] == c.true_place
                       and f["start"] <= c.minute <= f["end"])
    statements = index.find_kind("statement", lambda f: f["person"] == c.subject
                            and f["minute"] == c.minute)
    kind = index.entries[record].entry_type.lower()
    text = (f"Two accounts disagree about where {c.subject} was on Day {day_of(c.minute)} at about "
            f"{clock(c.minute)}. Where was {c.subject} at that time, and what settles it?")
    reference = (f"{c.subject} was at {c.true_place} at that time. The {kind} entry records {c.subject} there, which "
                 f"settles it; the account that puts {c.subject} at {c.false_place} is wrong.")
    return Question("conflict", text, (), 0, (), tuple(sorted([*statements, record])), {}, "free_form",
                    (c.true_place,), (c.false_place,), reference)


# --------------------------------------------------------------------------------------------------- retrieval

def retrieval_ordering(bp: Blueprint, index: Index, rng: StableRng) -> Question:
    thing = bp.ordered.thing
    places = [place for _, place in bp.ordered.moves]
    text = f"Put the places below in the order {thing} was taken to them."
    proof = index.find_kind("custody", lambda f: f["thing"] == thing)
    return _ordering("retrieval", text, places, rng, proof, {"form": "ordering"})


def retrieval_free_form(bp: Blueprint, index: Index, rng: StableRng) -> Question:
    moves = bp.custody.moves
    j, asked = bp.held
    thing = bp.custody.thing
    place, since = moves[j][1], stamp(moves[j][0])
    text = f"Where was {thing} held on {stamp(asked)}, and since when had it been there?"
    reference = f"On {stamp(asked)}, {thing} was held at {place}. It had been taken there on {since}."
    # the place it came from may be named in a right answer ("moved there from ..."); every other place is wrong
    against = tuple(p for k, (_, p) in enumerate(moves) if k not in (j, j - 1))
    proof = index.find_kind("custody", lambda f: f["thing"] == thing)[j:j + 2]
    return Question("retrieval", text, (), 0, (), tuple(proof), {"asked": asked, "move": j}, "free_form",
                    (place, since), against, reference)


def unsettled_since(bp: Blueprint, index: Index, rng: StableRng) -> Question:
    """The free-form state question asked of a moment before any record of the item: the honest answer is ABSTAIN;
    naming any place of its history asserts what the case does not say."""
    moves, thing = bp.custody.moves, bp.custody.thing
    asked = before_first_record(bp, rng)
    text = f"Where was {thing} held on {stamp(asked)}, and since when had it been there?"
    reference = (f"The case file has no record of {thing} before {stamp(moves[0][0])}, so where it was held on "
                 f"{stamp(asked)} is not settled: ABSTAIN.")
    proof = index.find_kind("custody", lambda f: f["thing"] == thing)[:1]
    places = [p for _, p in moves]
    return Question("retrieval", text, (), -1, (), tuple(proof),
                    {"asked": asked, "move": -1, "abstain": True}, "free_form", (), tuple(places),
                    reference, abstain=True)


def unsettled_state(bp: Blueprint, index: Index, rng: StableRng) -> Question:
    return unsettled_state_question(bp, index, rng, 0)


def unsettled_conflict(bp: Blueprint, index: Index, rng: StableRng) -> Question:
    return unsettled_conflict_question(bp, index, rng, 0)


def unsettled_conflict_free_form(bp: Blueprint, index: Index, rng: StableRng) -> Question:
    """The free-form conflict question asked of the disputed moment no record settles."""
    c = bp.conflict
    places = [c.true_place, c.false_place, *c.other_places]
    text = f"{open_conflict_text(bp)} Where was {c.subject} at that time, and what settles it?"
    reference = (f"No record places {c.subject} anywhere at that time, so the two accounts (at {c.open_claims[0]} "
                 f"and at {c.open_claims[1]}) are not settled: ABSTAIN.")
    return Question("conflict", text, (), -1, (), open_conflict_proof(bp, index),
                    {"abstain": True, "open_minute": c.open_minute}, "free_form", (),
                    tuple(places), reference, abstain=True)


# The slots that ask an abstention control on a control case (``questions.is_control_sample``): the same template,
# item and options as the slot's answerable question.
CONTROLS = {("retrieval", "mcq_single"): unsettled_state, ("retrieval", "free_form"): unsettled_since,
            ("conflict", "mcq_single"): unsettled_conflict, ("conflict", "free_form"): unsettled_conflict_free_form}


def build_formatted(category: str, answer_format: str, bp: Blueprint, entries: Sequence[Entry], rng: StableRng,
                    position: int, sample: int, control: bool = False) -> Question:
    """The question of one quota slot (MCQ single: ``questions.build_question`` with the gold at ``position``);
    ``control``: the slot's abstention control, for the slots that have one."""
    if control and (category, answer_format) in CONTROLS:
        return CONTROLS[category, answer_format](bp, Index(entries), rng)
    if answer_format == "mcq_single":
        return build_question(category, bp, entries, rng, position, sample)
    index = Index(entries)
    maker = {("chain", "integer"): chain_integer, ("chain", "ordering"): chain_ordering,
             ("cascade", "mcq_multi"): cascade_multi, ("cascade", "integer"): cascade_integer,
             ("temporal", "mcq_multi"): temporal_multi, ("temporal", "integer"): temporal_integer,
             ("conflict", "free_form"): conflict_free_form, ("counterfactual", "mcq_multi"): counterfactual_multi,
             ("retrieval", "ordering"): retrieval_ordering,
             ("retrieval", "free_form"): retrieval_free_form}[(category, answer_format)]
    return maker(bp, index, rng)
