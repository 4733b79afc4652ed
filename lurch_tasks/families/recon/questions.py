"""The six question categories, each computed from the blueprint and the firing trace: six options (one
correct), every wrong option labelled with the failure mode it stands for, and the proof trace (the entries
that derive the answer)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...core.rng import StableRng
from .blueprint import Blueprint
from .case import Entry, at, clock, day_of, stamp

CATEGORIES = ("chain", "cascade", "conflict", "counterfactual", "temporal", "retrieval")
NUM_OPTIONS = 6
ARROW = " -> "


@dataclass(frozen=True)
class Question:
    """One question in one answer format. ``gold``: the correct option (mcq_single), the correct options in
    letter order (mcq_multi), the options in their correct order (ordering), the number (integer); unused for
    free form, which carries ``key_facts`` (all must be stated), ``contradicting`` (none may be asserted) and a
    ``reference`` answer."""

    category: str
    text: str
    options: tuple[str, ...]
    gold: int | tuple[int, ...]
    failure_modes: tuple[str | None, ...]  # per option: None when choosing it is right
    proof: tuple[int, ...]  # indices of the entries (in case order) that derive the answer
    params: dict
    format: str = "mcq_single"
    key_facts: tuple[str, ...] = ()
    contradicting: tuple[str, ...] = ()
    reference: str = ""
    abstain: bool = False  # a control: the case does not settle it, so the one right answer is ABSTAIN (gold -1)


def place_options(gold: str, wrong: Sequence[tuple[str, str]], position: int, rng: StableRng
                  ) -> tuple[tuple[str, ...], tuple[str | None, ...], int]:
    """Options with the gold at ``position`` and the wrong ones (text, failure mode) shuffled around it."""
    others = rng.shuffled(list(wrong))
    others.insert(position, (gold, None))
    return tuple(t for t, _ in others), tuple(m for _, m in others), position


def feasible_ranks(gold_key: int, pool: Sequence[tuple[object, int]], k: int) -> list[int]:
    """Ranks the gold can take among itself and ``k`` items of ``pool`` ((item, key) pairs) ordered by key."""
    before = sum(1 for _, key in pool if key < gold_key)
    after = sum(1 for _, key in pool if key > gold_key)
    return [r for r in range(k + 1) if r <= before and k - r <= after]


def rank_balanced(gold_key: int, pool: Sequence[tuple[object, int]], k: int, rng: StableRng,
                  rank: int | None = None) -> list[object]:
    """``k`` items of ``pool`` chosen so that the gold's rank by key among the k + 1 is ``rank`` (when the pool
    allows it) or a seeded draw over the ranks the pool allows: no 'earliest' or 'latest' option gives the
    answer away."""
    ranks = feasible_ranks(gold_key, pool, k)
    if not ranks:
        raise ValueError("recon: too few candidates for a balanced option set")
    if rank not in ranks:
        rank = rng.choice(ranks)
    before = [item for item, key in pool if key < gold_key]
    after = [item for item, key in pool if key > gold_key]
    return rng.sample(before, rank) + rng.sample(after, k - rank)


class Index:
    """Find entries of the case (in case order) by their fact."""

    def __init__(self, entries: Sequence[Entry]) -> None:
        self.entries = entries
        # only structural entries are ever found, mostly by kind: a long case is mostly filler, and a question
        # runs many finds
        self._facts = [(k, e.fact) for k, e in enumerate(entries) if e.structural]
        self._kinds: dict[str, list[tuple[int, dict]]] = {}
        for k, fact in self._facts:
            self._kinds.setdefault(fact["kind"], []).append((k, fact))

    def find(self, predicate: Callable[[dict], bool]) -> list[int]:
        return [k for k, fact in self._facts if predicate(fact)]

    def find_kind(self, kind: str, predicate: Callable[[dict], bool] | None = None) -> list[int]:
        """``find`` of the entries of one kind (that ``predicate`` accepts)."""
        facts = self._kinds.get(kind, [])
        return [k for k, _ in facts] if predicate is None else [k for k, fact in facts if predicate(fact)]

    def one(self, predicate: Callable[[dict], bool]) -> int:
        return _the_one(self.find(predicate))

    def one_kind(self, kind: str, predicate: Callable[[dict], bool] | None = None) -> int:
        return _the_one(self.find_kind(kind, predicate))


def _the_one(found: list[int]) -> int:
    if len(found) != 1:
        raise ValueError(f"recon: expected one entry, found {len(found)}")
    return found[0]


def trail_proof(index: Index, trail) -> list[int]:
    clues = [trail.origin, *trail.clues]
    proof = [index.one_kind("lead", lambda f: f["clue"] == trail.origin)]
    for a, b in zip(clues, clues[1:], strict=False):
        proof.append(index.one_kind("link", lambda f, a=a, b=b: f["from"] == a and f["to"] == b))
    proof.append(index.one_kind("conclude", lambda f: f["clue"] == clues[-1]))
    return proof


# ------------------------------------------------------------------------------------------------------- chain

EDITS = ("swap", "drop", "insert", "replace")
EDIT_MODES = {"swap": "reversed_order", "drop": "incomplete_chain", "insert": "over_scoping",
              "replace": "wrong_chain"}


def apply_edit(items: list[str], kind: str, rng: StableRng, foreign: Sequence[str]) -> list[str]:
    out = list(items)
    if kind == "swap":
        i = rng.below(len(out) - 1)
        out[i], out[i + 1] = out[i + 1], out[i]
    elif kind == "drop":
        del out[rng.below(len(out))]
    elif kind == "insert":
        out.insert(rng.below(len(out) + 1), rng.choice(foreign))
    else:
        out[rng.below(len(out))] = rng.choice(foreign)
    return out


def inverse_base(gold: list[str], rng: StableRng, foreign: Sequence[str]) -> tuple[list[str], str]:
    """A hidden base one edit away from the gold (the gold is then one edit away from the base, as every option
    is): the options are exchangeable, so no option's length or overlap with the others marks the gold."""
    kind = rng.choice(EDITS)
    return apply_edit(gold, kind, rng, foreign), kind


def chain_question(bp: Blueprint, index: Index, rng: StableRng, position: int) -> Question:
    t = bp.chain_trail
    trail = bp.trails[t]
    gold = list(trail.clues)
    foreign = list(bp.twin.clues)  # the twin's findings: as often and as late mentioned as the trail's own
    base, base_edit = inverse_base(gold, rng, foreign)
    seen = {tuple(gold)}
    wrong = []
    while len(wrong) < NUM_OPTIONS - 1:
        kind = rng.choice(EDITS)
        candidate = apply_edit(base, kind, rng, foreign)
        if len(candidate) >= 2 and tuple(candidate) not in seen and trail.origin not in candidate:
            seen.add(tuple(candidate))
            wrong.append((ARROW.join(candidate), EDIT_MODES[kind]))
    options, modes, gold_at = place_options(ARROW.join(gold), wrong, position, rng)
    conclusion = bp.domain.conclusion.format(person=trail.person, incident=bp.incident)
    text = (f"The finding that {conclusion} rests on a trail of findings that began with {trail.origin}. Which "
            f"option lists, in order, every finding that trail passed through after {trail.origin}, up to the one "
            "the finding rests on?")
    return Question("chain", text, options, gold_at, modes, tuple(trail_proof(index, trail)),
                    {"trail": t, "hops": len(gold), "base_edit": base_edit})


# ----------------------------------------------------------------------------------------------------- cascade

def cascade_question(bp: Blueprint, index: Index, rng: StableRng, position: int) -> Question:
    """A withdrawn link; which conclusion lost all its support (reachability from the trail's origin with the
    link cut), among conclusions that survive through independent support or fall to other withdrawals."""
    fatal = [w for w in bp.withdrawals if w.trail >= 2]
    # a conclusion is last mentioned by its (latest) conclusion entry; the culprit's two count as one option
    mentioned = {k: tr.minutes[-1] for k, tr in enumerate(bp.trails)}
    mentioned[0] = max(mentioned[0], mentioned.pop(1))

    def pool_for(w) -> list[tuple[int, int]]:
        return [(k, m) for k, m in mentioned.items() if k != w.trail]

    # the rank first, then a withdrawal that allows it: the gold's recency rank is uniform over questions
    rank = rng.below(NUM_OPTIONS)
    fitting = [w for w in fatal if rank in feasible_ranks(mentioned[w.trail], pool_for(w), NUM_OPTIONS - 1)]
    w = rng.choice(fitting or fatal)
    trail = bp.trails[w.trail]
    chosen = rank_balanced(mentioned[w.trail], pool_for(w), NUM_OPTIONS - 1, rng, rank)
    trap = min((x for x in bp.withdrawals if x.trail == 0), key=lambda x: x.minute)

    def mode(k: int) -> str:
        if k == 0:
            return "ignores_independent_support" if trap.minute <= w.minute else "wrong_target"
        other = next(x for x in bp.withdrawals if x.trail == k)
        return "recency_bias" if other.minute > w.minute else "wrong_target"

    def phrase(k: int) -> str:
        return bp.domain.conclusion.format(person=bp.trails[k].person, incident=bp.incident)

    options, modes, gold_at = place_options(phrase(w.trail), [(phrase(k), mode(k)) for k in chosen], position, rng)
    clues = [trail.origin, *trail.clues]
    source, target = clues[w.hop], clues[w.hop + 1]
    withdrawn = index.one_kind("withdraw", lambda f: f["from"] == source and f["to"] == target)
    text = (f"On {stamp(w.minute)}, the finding that {source} led to {target} was withdrawn. Which of these findings "
            "lost all of its support as a result?")
    proof = [withdrawn, *trail_proof(index, trail)[w.hop:]]
    return Question("cascade", text, options, gold_at, modes, tuple(proof),
                    {"trail": w.trail, "hop": w.hop, "chosen_trails": chosen})


# ---------------------------------------------------------------------------------------------------- conflict

def conflict_question(bp: Blueprint, index: Index, rng: StableRng, position: int) -> Question:
    c = bp.conflict
    wrong = [(c.false_place, "recency_bias" if not c.later_is_true else "authority_bias")]
    wrong += [(p, "temporal_confusion") for p in c.other_places]
    options, modes, gold_at = place_options(c.true_place, wrong, position, rng)
    text = (f"Two accounts disagree about where {c.subject} was on Day {day_of(c.minute)} at about "
            f"{clock(c.minute)}. Where was {c.subject} at that time?")
    statements = index.find_kind("statement", lambda f: f["person"] == c.subject
                            and f["minute"] == c.minute)
    record = index.one_kind("record", lambda f: f["person"] == c.subject and f["place"] == c.true_place
                       and f["start"] <= c.minute <= f["end"])
    return Question("conflict", text, options, gold_at, modes, tuple(sorted([*statements, record])), {})


# ---------------------------------------------------------------------------------------------- counterfactual

def between(rng: StableRng, low: int, high: int) -> int:
    """A minute strictly inside (low, high)."""
    return rng.integer(low + 1, high - 1)


def counterfactual_text(bp: Blueprint, multiple: bool) -> str:
    plan, result = bp.counterfactual, bp.discoveries[0]
    if plan.form == "later":
        text = (f"Suppose the result on {result.clue} had come in only on {stamp(plan.moved)} instead of "
                f"{stamp(result.minute)}. Which of these actions would not have gone ahead when "
                f"{'they' if multiple else 'it'} did?")
    else:
        text = (f"Suppose the result on {result.clue} had come in already on {stamp(plan.moved)} instead of "
                f"{stamp(result.minute)}. Which of these planned actions would then have gone ahead?")
    return text + (" Choose every one." if multiple else "")


DECOY_MODE = "false_dependency"  # an action inside the window that did not await the result


def counterfactual_question(bp: Blueprint, index: Index, rng: StableRng, position: int) -> Question:
    """Move the result later (which action would not have gone ahead when it did) or earlier (which planned
    action would then have gone ahead). Every option lies between the question's two times (``Plan``): one of
    the result's own actions there, and five that did not await it."""
    plan, result = bp.counterfactual, bp.discoveries[0]
    gold = rng.choice(list(plan.gold))
    options, modes, gold_at = place_options(gold.phrase, [(a.phrase, DECOY_MODE) for a in plan.decoys], position,
                                            rng)
    proof = [index.one_kind("result", lambda f: f["clue"] == result.clue),
             index.one_kind("action", lambda f: f["action"] == gold.phrase)]
    return Question("counterfactual", counterfactual_text(bp, False), options, gold_at, modes, tuple(sorted(proof)),
                    {"form": plan.form, "moved_to": plan.moved, "discovery": 0})


# ---------------------------------------------------------------------------------------------------- temporal

def temporal_question(bp: Blueprint, index: Index, rng: StableRng, position: int) -> Question:
    a = bp.alibi
    wrong = [(p, "single_stream_reading") for p in a.subjects if p != a.unaccounted]
    options, modes, gold_at = place_options(a.unaccounted, wrong, position, rng)
    incident = bp.incident[0].upper() + bp.incident[1:]
    text = (f"{incident} took place on Day {day_of(a.start)} between {clock(a.start)} and {clock(a.end)}. Which of "
            "these people is "
            "not accounted for by the records for the whole of that time?")
    proof = [index.one_kind("incident")]
    proof += index.find_kind("record", lambda f: f["person"] == a.unaccounted
                        and day_of(f["start"]) == day_of(a.start))
    return Question("temporal", text, options, gold_at, modes, tuple(sorted(proof)), {})


# --------------------------------------------------------------------------------------------------- retrieval

RETRIEVAL_FORMS = ("state", "ordering", "elimination", "streams")


def retrieval_question(bp: Blueprint, index: Index, rng: StableRng, position: int, form: str) -> Question:
    maker = {"state": state_question, "ordering": ordering_question, "elimination": elimination_question,
             "streams": streams_question}[form]
    return maker(bp, index, rng, position)


def state_question(bp: Blueprint, index: Index, rng: StableRng, position: int) -> Question:
    """Where an item was held at a given moment, among every place its custody history names."""
    moves = bp.custody.moves
    j, asked = bp.held
    last = len(moves) - 1
    wrong = [(place, "recency_bias" if k == last else "future_state" if k > j else "stale_state")
             for k, (_, place) in enumerate(moves) if k != j]
    options, modes, gold_at = place_options(moves[j][1], wrong, position, rng)
    thing = bp.custody.thing
    text = f"Where was {thing} held on {stamp(asked)}?"
    proof = index.find_kind("custody", lambda f: f["thing"] == thing)[j:j + 2]
    return Question("retrieval", text, options, gold_at, modes, tuple(proof), {"form": "state", "asked": asked,
                                                                              "move": j})


def ordering_question(bp: Blueprint, index: Index, rng: StableRng, position: int) -> Question:
    """Where an item went right after a named place: its history's other places are the options."""
    moves = bp.ordered.moves
    j = rng.below(len(moves) - 1)
    wrong = [(place, "skipped_step" if k > j + 1 else "reversed_order")
             for k, (_, place) in enumerate(moves) if k not in (j, j + 1)]
    options, modes, gold_at = place_options(moves[j + 1][1], wrong, position, rng)
    thing = bp.ordered.thing
    text = f"After {thing} was taken to {moves[j][1]}, where was it taken next?"
    proof = index.find_kind("custody", lambda f: f["thing"] == thing)[j:j + 2]
    return Question("retrieval", text, options, gold_at, modes, tuple(proof), {"form": "ordering", "move": j})


def elimination_question(bp: Blueprint, index: Index, rng: StableRng, position: int) -> Question:
    r = bp.absent
    wrong = [(p, "false_elimination") for p in r.people if p != r.gold]
    options, modes, gold_at = place_options(r.gold, wrong, position, rng)
    text = f"Which of these people does no record place at {r.place} on Day {r.day}?"
    proof = index.find_kind("record", lambda f: f["person"] in r.people and day_of(f["start"]) == r.day
                       and (f["place"] == r.place or f["person"] == r.gold))
    return Question("retrieval", text, options, gold_at, modes, tuple(proof), {"form": "elimination"})


def streams_question(bp: Blueprint, index: Index, rng: StableRng, position: int) -> Question:
    r = bp.matched
    pair = r.streams[r.people.index(r.gold)]
    wrong = [(p, "stream_confusion" if set(s) & set(pair) else "wrong_streams")
             for p, s in zip(r.people, r.streams, strict=True) if p != r.gold]
    options, modes, gold_at = place_options(r.gold, wrong, position, rng)
    types = {s.name: s.entry_type for s in bp.domain.streams}
    text = (f"Which of these people was recorded at {r.place} on Day {r.day} by both the {types[pair[0]]} and the "
            f"{types[pair[1]]}?")
    proof = index.find_kind("record", lambda f: f["person"] == r.gold and f["place"] == r.place)
    return Question("retrieval", text, options, gold_at, modes, tuple(proof), {"form": "streams",
                                                                              "streams": list(pair)})


# ------------------------------------------------------------------------------------------ abstention controls

# Paper App. D.1 scores an abstention 0; a question the case does not settle is asked with the same template,
# item and options as an answerable one, so only reading the case tells it apart. One case in ABSTAIN_EVERY (the
# last of each run, by sample index within its cell) asks its control slots this way: a fixed, recorded share
# small enough that answering ABSTAIN everywhere stays within the shortcut audit's margin over chance.
ABSTAIN_EVERY = 24


def is_control_sample(sample: int) -> bool:
    return sample % ABSTAIN_EVERY == ABSTAIN_EVERY - 1


def before_first_record(bp: Blueprint, rng: StableRng) -> int:
    """A moment in working hours on a day up to the held item's first custody entry and before it (custody starts
    on Day 2, so Day 1 always has room): not always Day 1, which would mark the control by its date alone."""
    first = bp.custody.moves[0][0]
    while True:
        minute = at(rng.integer(1, day_of(first)), 0) + rng.integer(7 * 60, 21 * 60)
        if minute <= first - 10:
            return minute


def unsettled_state_question(bp: Blueprint, index: Index, rng: StableRng, position: int) -> Question:
    """The state question asked of a moment before any record of the item: every place of its history is where it
    went only later, so no option is right."""
    moves, thing = bp.custody.moves, bp.custody.thing
    asked = before_first_record(bp, rng)
    chosen = rng.shuffled([(place, "future_state") for _, place in moves])
    text = f"Where was {thing} held on {stamp(asked)}?"
    proof = index.find_kind("custody", lambda f: f["thing"] == thing)[:1]
    return Question("retrieval", text, tuple(t for t, _ in chosen), -1, tuple(m for _, m in chosen), tuple(proof),
                    {"form": "state", "asked": asked, "move": -1, "abstain": True}, abstain=True)


def open_conflict_text(bp: Blueprint) -> str:
    c = bp.conflict
    return (f"Two accounts disagree about where {c.subject} was on Day {day_of(c.open_minute)} at about "
            f"{clock(c.open_minute)}.")


def open_conflict_proof(bp: Blueprint, index: Index) -> tuple[int, ...]:
    c = bp.conflict
    return tuple(index.find_kind("statement", lambda f: f["person"] == c.subject
                            and f["minute"] == c.open_minute))


def unsettled_conflict_question(bp: Blueprint, index: Index, rng: StableRng, position: int) -> Question:
    """The conflict question asked of the case's second disputed moment, which no record settles: the two
    accounts' places are the options the surface points at, and none is established."""
    c = bp.conflict
    places = [c.true_place, c.false_place, *c.other_places]
    chosen = rng.shuffled([(p, "unsettled_claim" if p in c.open_claims else "temporal_confusion") for p in places])
    text = f"{open_conflict_text(bp)} Where was {c.subject} at that time?"
    return Question("conflict", text, tuple(t for t, _ in chosen), -1, tuple(m for _, m in chosen),
                    open_conflict_proof(bp, index), {"abstain": True, "open_minute": c.open_minute}, abstain=True)


def build_question(category: str, bp: Blueprint, entries: Sequence[Entry], rng: StableRng, position: int,
                   sample: int) -> Question:
    index = Index(entries)
    if category == "counterfactual":
        return counterfactual_question(bp, index, rng, position)
    if category == "retrieval":
        return retrieval_question(bp, index, rng, position, RETRIEVAL_FORMS[sample % len(RETRIEVAL_FORMS)])
    maker = {"chain": chain_question, "cascade": cascade_question, "conflict": conflict_question,
             "temporal": temporal_question}[category]
    return maker(bp, index, rng, position)
