"""RECON generator: a case per (domain, length, sample) fitted to its token budget with routine filler, and one
question per category on it. Instance i picks its cell's question; the case is cached, so the six questions of
a case build it once."""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from ...core.budget import LineSum, joined_costs, newline_costs, prompt_meter, sums_over_lines
from ...core.cells import pair_hash, setup_instance
from ...core.config import config_to_dict
from ...core.context import evidence_measures, line_char_spans, line_token_ranges, lurch_difficulty
from ...core.difficulty import reasoning_depth
from ...core.disk_cache import tokenizer_table
from ...core.instance import Instance, instance_id
from ...core.rng import StableRng, canonical_json, derive_seed
from ...core.tokens import REFERENCE_TOKENIZER, reference_counter, within_budget_tolerance
from ...scoring.ordering import adjacent_pairs
from .blueprint import COUNTED_HOPS, IMPLICATED, Blueprint, Names, build_blueprint, filler_units
from .case import Entry, Provenance, RuleError, fire, node_depths, still_implicated
from .catalog import DOMAIN_MAX_HOPS, domain
from .config import Cell, ReconConfig
from .formats import FORMATS, build_formatted, quota_slots
from .narrate import narrate, oracle_lines
from .prompt import ABSTAIN, QUESTION_SEPARATOR, letters_for, prompt_head, render_prompt, render_question
from .questions import CATEGORIES, NUM_OPTIONS, Question, is_control_sample

FAMILY = "recon"
VERSION = "0.8.0"  # 0.8.0: reasoning_depth is the proof graph's (provenance_depth keeps the case-wide one); 0.7.0:
# a step per proof entry in the graph, reasoning_width and step_count
VOCABULARY = ("recon_catalog.json", "english_words.txt", "last_names.txt", "first_names.txt", "cities.txt")
COMPARED_KNOBS = ("variant",)
# what a case does not depend on: every category, format and variant shares it
CASE_KNOBS = ("categories", "formats", "variant")
LINE_SEPARATOR = "\n"
FIT_ROUNDS = 8
MAX_SKIPS = 24  # routine units tried in a row that are too large for the room left, before the fit stops


@dataclass(frozen=True)
class CaseFile:
    blueprint: Blueprint
    entries: tuple[Entry, ...]  # in case order (time, then rule order)
    trace: Provenance
    depths: tuple[int, ...]  # longest provenance path ending at each entry
    lines: tuple[str, ...]  # narrative, one per entry
    questions: Mapping[tuple[str, str], Question]  # (category, format) -> question
    seed: int
    fitted_tokens: int  # the longest question's prompt, in the config's tokenizer
    # each narrative line's tokens with its newline in the config's tokenizer, when prompts are their sums
    line_costs: tuple[int, ...] | None

    @cached_property
    def oracle(self) -> tuple[str, ...]:
        """JSON, one per entry (built on first use: only the oracle variant shows it)."""
        return tuple(oracle_lines(list(self.entries), self.blueprint.domain, self.blueprint.incident))


def trail_hops(config: ReconConfig, domain_name: str, rng: StableRng) -> tuple[list[int], int]:
    """Each trail's link count, and the trail the integer chain question counts: its count drawn uniformly over
    ``COUNTED_HOPS`` (within the config's and domain's hops), the same range in every domain, so its answer's
    distribution is the same whatever the domain (the guess draws over that range)."""
    high = max(config.min_hops, min(config.max_hops, DOMAIN_MAX_HOPS[domain_name]))
    hops = [rng.integer(config.min_hops, high) for _ in range(IMPLICATED + 1)]
    counted = rng.below(len(hops))
    low = max(config.min_hops, COUNTED_HOPS[0])
    hops[counted] = rng.integer(low, max(low, min(high, COUNTED_HOPS[1])))
    return hops, counted


def counterfactual_form(sample: int) -> str:
    """The counterfactual questions' direction: it alternates over blocks of six cases (as the retrieval forms
    rotate)."""
    return "later" if (sample // NUM_OPTIONS) % 2 == 0 else "earlier"


def case_seed(config: ReconConfig, seed: int, split: str, domain_name: str, tokens: int, sample: int) -> int:
    return derive_seed(FAMILY, "case", pair_hash(config, CASE_KNOBS), seed, split, domain_name, tokens, sample)


def case_config(config: ReconConfig) -> ReconConfig:
    """The config with the knobs a case ignores reset: the cache key shared by every category and variant."""
    defaults = {f.name: f.default for f in dataclasses.fields(config) if f.name in CASE_KNOBS}
    return dataclasses.replace(config, **defaults)


def time_order(entries: list[Entry]) -> list[int]:
    """Indices of ``entries`` in case order: by time, ties in rule order."""
    return sorted(range(len(entries)), key=lambda k: (entries[k].minute, k))


def gold_position(block_seed: int, category: str, sample: int) -> int:
    """The gold's letter: over each block of six cases of a cell a seeded permutation of the six letters, so
    every letter is gold equally often in full blocks and no stride through the rows lines up with it."""
    letters = StableRng(derive_seed(block_seed, "letters", category)).shuffled(range(NUM_OPTIONS))
    return letters[sample % NUM_OPTIONS]


ALL_SLOTS = tuple(quota_slots(CATEGORIES, FORMATS))


def slot_seed(seed: int, category: str, answer_format: str) -> int:
    # MCQ single keeps the seed it had before the other formats existed
    if answer_format == "mcq_single":
        return derive_seed(seed, "question", category)
    return derive_seed(seed, "question", category, answer_format)


def question_for(bp: Blueprint, entries: list[Entry], seed: int, sample: int, block_seed: int, category: str,
                 answer_format: str) -> Question:
    """One question of the quota matrix (forms rotate over blocks of six cases); each slot has its own seed, so
    a question does not depend on which others were built."""
    return build_formatted(category, answer_format, bp, entries, StableRng(slot_seed(seed, category, answer_format)),
                           gold_position(block_seed, category, sample), sample // NUM_OPTIONS,
                           is_control_sample(sample))


def questions_for(bp: Blueprint, entries: list[Entry], seed: int, sample: int, block_seed: int
                  ) -> dict[tuple[str, str], Question]:
    """Every question of the quota matrix."""
    return {slot: question_for(bp, entries, seed, sample, block_seed, *slot) for slot in ALL_SLOTS}


class CaseQuestions(Mapping):
    """Every question of the quota matrix, each built on first use: a config asks a few of them, and a question
    costs passes over the case."""

    def __init__(self, bp: Blueprint, entries: list[Entry], seed: int, sample: int, block_seed: int) -> None:
        self._args = (bp, entries, seed, sample, block_seed)
        self._built: dict[tuple[str, str], Question] = {}

    def __getitem__(self, slot: tuple[str, str]) -> Question:
        if slot not in self._built:
            if slot not in ALL_SLOTS:
                raise KeyError(slot)
            self._built[slot] = question_for(*self._args, *slot)
        return self._built[slot]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(ALL_SLOTS)

    def __len__(self) -> int:
        return len(ALL_SLOTS)


def line_of(entry: Entry, seq: int, seed: int, bp: Blueprint) -> str:
    """An entry's narrative line, seeded by its own rule number (independent of which filler is kept)."""
    return narrate([entry], bp.domain, bp.incident, StableRng(derive_seed(seed, "line", seq)))[0]


ContextCounter = Callable[[list[str], list[int]], int]  # the prompt's tokens, from its context lines and their counts


def fit_filler(structural: list[Entry], lines: list[str], counts: list[int], filler: Iterator[list[Entry]],
               line: Callable[[Entry, int], str], count_lines: Callable[[list[str]], list[int]],
               count_prompt: ContextCounter, room: int, tokens: int
               ) -> tuple[list[Entry], list[str], list[int], list[int], int]:
    """Routine units after the structural entries until the prompt (``count_prompt`` of the context lines in case
    order, with each line's count alone) is within tolerance of ``tokens``: units are added by their lines'
    estimated cost, then each round's one exact count says whether to add more or drop the last ones. Returns
    the entries, their lines and counts, the case order and the exact count."""
    entries, lines, counts = list(structural), list(lines), list(counts)
    units: list[tuple[int, int]] = []  # (first entry, estimated cost) per kept routine unit

    def add_units(room: int) -> None:
        """Routine units while their estimated cost fits ``room``; a unit too large is skipped for the next."""
        skipped = 0
        while skipped < MAX_SKIPS:
            unit = next(filler)
            unit_lines = [line(e, len(entries) + k) for k, e in enumerate(unit)]
            unit_counts = count_lines(unit_lines)
            cost = sum(unit_counts) + len(unit_lines)
            if cost > room:
                skipped += 1
                continue
            units.append((len(entries), cost))
            entries.extend(unit)
            lines.extend(unit_lines)
            counts.extend(unit_counts)
            room -= cost

    add_units(room)
    for _ in range(FIT_ROUNDS):
        order = time_order(entries)
        exact = count_prompt([lines[k] for k in order], [counts[k] for k in order])
        if within_budget_tolerance(exact, tokens):
            break
        if exact < tokens:
            add_units(tokens - exact)
            continue
        over = exact - tokens
        while over > 0 and units:  # drop the last units until the overshoot is paid
            first, cost = units.pop()
            over -= cost
            del entries[first:], lines[first:], counts[first:]
    return entries, lines, counts, order, exact


class NarrativeMeter:
    """Counts the narrative prompt of one question from its context lines and their own counts: summed from each
    line's count with its newline when the tokenizer ends a piece at every newline before a line (no pass over
    the prompt), else one pass over the prompt."""

    def __init__(self, tokenizer: str, chat_template: bool, domain_name: str, question: str) -> None:
        self.meter = prompt_meter(tokenizer, chat_template)
        self.counter = self.meter.counter
        self.chat_template, self.domain_name, self.question = chat_template, domain_name, question
        self.head = prompt_head("narrative", domain_name)
        self._known: dict[str, int] = {}  # line -> its count with its newline, when that takes a pass of its own

    @cached_property
    def line_sum(self) -> LineSum:
        return LineSum(self.counter, self.head)

    def summable(self, lines: list[str]) -> bool:
        return not self.chat_template and bool(lines) and sums_over_lines(self.counter, self.head, lines)

    def line_costs(self, lines: list[str], counts: list[int]) -> list[int]:
        """Each line's tokens with its newline (``core.budget.newline_costs``), each line counted once."""
        if self.counter.newline_separates:
            return newline_costs(self.counter, lines, counts)
        missing = {line: count for line, count in zip(lines, counts, strict=True) if line not in self._known}
        self._known.update(zip(missing, newline_costs(self.counter, list(missing), list(missing.values())),
                               strict=True))
        return [self._known[line] for line in lines]

    def count(self, lines: list[str], counts: list[int]) -> int:
        if self.summable(lines):
            tail = QUESTION_SEPARATOR + self.question
            return self.line_sum.prompt(lines, self.line_costs(lines, counts), tail).tokens
        return self.meter.count(render_prompt("narrative", self.domain_name, LINE_SEPARATOR.join(lines),
                                              self.question))


@lru_cache(maxsize=32)
def build_case(config: ReconConfig, seed: int, split: str, domain_name: str, tokens: int, sample: int) -> CaseFile:
    """The case of one cell and sample: the blueprint, then routine units until the longest of its questions'
    prompts meets the budget (one count per line, then one exact count per fitting round)."""
    the_seed = case_seed(config, seed, split, domain_name, tokens, sample)
    rng = StableRng(the_seed)
    the_domain = domain(domain_name)
    names = Names(the_domain, StableRng(derive_seed(the_seed, "names")), people=30 + tokens // 2000,
                  places=40 + tokens // 1200)
    hops, counted = trail_hops(config, domain_name, rng)
    bp = build_blueprint(names, hops, counterfactual_form(sample), counted, is_control_sample(sample))
    structural = list(bp.entries)
    lines = [line_of(e, k, the_seed, bp) for k, e in enumerate(structural)]
    block_seed = derive_seed(FAMILY, "letters", pair_hash(config, CASE_KNOBS), seed, split, domain_name, tokens,
                             sample // NUM_OPTIONS)
    draft = questions_for(bp, [structural[k] for k in time_order(structural)], the_seed, sample, block_seed)
    meter = prompt_meter(config.tokenizer, config.chat_template)
    counter = meter.counter
    longest = max((render_question(q.text, q.options, q.format) for q in draft.values()), key=counter.count)
    frame = meter.count(render_prompt("narrative", domain_name, "x", longest)) - 1
    budget = tokens - frame
    counts = counter.count_many(lines)
    used = sum(counts) + len(lines)
    if used > budget:
        raise ValueError(f"context_tokens: {tokens} cannot hold this case's structure ({used + frame} tokens); "
                         "allowed: a larger target or a smaller max_hops")
    filler = filler_units(names, StableRng(derive_seed(the_seed, "filler")))
    narrative = NarrativeMeter(config.tokenizer, config.chat_template, domain_name, longest)
    entries, lines, counts, order, exact = fit_filler(
        structural, lines, counts, filler, lambda e, k: line_of(e, k, the_seed, bp), counter.count_many,
        narrative.count, budget - used, tokens)
    if exact > tokens:
        raise ValueError(f"context_tokens: {tokens} cannot hold this case's structure; allowed: a larger target")
    case_entries = [entries[k] for k in order]
    trace = fire(case_entries)  # temporal monotonicity: every rule fires after what it requires
    if still_implicated(case_entries) != {bp.culprit}:
        raise RuleError("invariant: exactly one culprit is still implicated when the case closes")
    case_lines = [lines[k] for k in order]
    line_costs = (tuple(narrative.line_costs(case_lines, [counts[k] for k in order]))
                  if narrative.summable(case_lines) else None)
    return CaseFile(bp, tuple(case_entries), trace, tuple(node_depths(trace)), tuple(case_lines),
                    CaseQuestions(bp, case_entries, the_seed, sample, block_seed), the_seed, exact, line_costs)


def generate(config: ReconConfig, seed: int, split: str, index: int, config_name: str) -> Instance:
    setup = setup_instance(FAMILY, config, VOCABULARY, seed, split, index, COMPARED_KNOBS)
    cell: Cell = setup.cell
    case = build_case(case_config(config), seed, split, cell.domain, cell.context_tokens, setup.sample)
    question = case.questions[cell.category, cell.format]
    variant = config.variant
    lines = case.lines if variant == "narrative" else case.oracle if variant == "oracle" else ()
    context = LINE_SEPARATOR.join(lines)
    question_text = render_question(question.text, question.options, question.format)
    prompt = render_prompt(variant, cell.domain, context, question_text)
    head = prompt_head(variant, cell.domain)
    context_start = len(head)
    meter = prompt_meter(config.tokenizer, config.chat_template)
    summed = variant == "narrative" and case.line_costs is not None
    if summed:  # from the fit's line counts: no pass over the prompt
        encoding = LineSum(meter.counter, head).prompt(lines, case.line_costs, QUESTION_SEPARATOR + question_text)
    else:
        encoding = meter.encode(prompt)
    proof_rows = sorted(question.proof) if lines else []
    if summed and meter.counter.name == REFERENCE_TOKENIZER:  # the same costs: no reference pass either
        reference_costs = list(case.line_costs)
    else:
        reference_costs = reference_line_costs(lines) if lines else []
    token_ranges, total = line_token_ranges(reference_costs, proof_rows)
    chars = line_char_spans(lines, proof_rows, LINE_SEPARATOR)
    evidence = evidence_measures(token_ranges, total, len(context), chars)
    nodes, edges = proof_graph(case, question, lines)
    difficulty = {
        **lurch_difficulty(encoding, context_start, context, cell.context_tokens, evidence,
                           reasoning_depth(nodes, edges), (nodes, edges)),
        # RECON's own measure: how far the proof's entries lie down the case's provenance chains (the whole case)
        "provenance_depth": max((case.depths[row] for row in question.proof), default=0) + 1,
        "domain": cell.domain, "category": cell.category, "format": question.format, "variant": variant,
        "case_entries": len(case.entries), "chain_hops": question.params.get("hops", 0),
        "control": "abstain" if question.abstain else "none",
        **anchor_uniqueness(case.lines, question.proof),
    }
    gold = gold_fields(question)
    params = {
        "case_seed": case.seed, "cell": cell._asdict(), "sample": setup.sample, "rng_seed": setup.rng_seed,
        "question": question.params, "failure_modes": list(question.failure_modes),
        "culprit": case.blueprint.culprit, "case_tokens": case.fitted_tokens,
        "tokenizer": config.tokenizer, "chat_template": config.chat_template, "config": config_to_dict(config),
    }
    return Instance(
        id=instance_id(config_name, split, index, FAMILY), family=FAMILY, task=config_name, config_name=config_name,
        split=split, index=index, seed=seed, family_version=VERSION, config_hash=setup.config_hash,
        source_hash=setup.source_hash, context=context, question=question_text, prompt=prompt,
        answer_format=question.format, answer=gold["answer"], answer_text=gold["answer_text"],
        options=list(question.options), answer_items=gold["answer_items"], evidence=list(evidence.spans),
        reasoning_graph={"nodes": nodes, "edges": edges},
        difficulty=difficulty, params=canonical_json(params), pair_key=setup.pair_key,
    )


@lru_cache(maxsize=64)
def header_counts(lines: tuple[str, ...]) -> tuple[Counter, Counter]:
    """How often each composite header ``[Day X, HH:MM] [TYPE] [AUTHOR]`` and each bare timestamp occurs."""
    headers = [line.split("] ", 3) for line in lines]
    return Counter("] ".join(h[:3]) for h in headers), Counter(h[0] for h in headers)


def anchor_uniqueness(lines: tuple[str, ...], proof: tuple[int, ...]) -> dict[str, float]:
    """Shares of the question's gold entries whose composite header, and whose timestamp alone, occurs once in
    the case (RECON paper §4.3: a header anchors an entry for retrieval-coverage checks only when unique)."""
    composite, stamps = header_counts(lines)
    heads = [lines[row].split("] ", 3) for row in proof]
    if not heads:
        return {"header_anchor_uniqueness": 1.0, "timestamp_anchor_uniqueness": 1.0}
    return {"header_anchor_uniqueness": sum(composite["] ".join(h[:3])] == 1 for h in heads) / len(heads),
            "timestamp_anchor_uniqueness": sum(stamps[h[0]] == 1 for h in heads) / len(heads)}


def gold_fields(question: Question) -> dict:
    """``answer`` (canonical: a letter; JSON for letter lists and free form; the number), ``answer_text`` and
    ``answer_items`` (the unit of memory drift: options, ordered adjacent pairs, key facts)."""
    kind = question.format
    letters = letters_for(kind)
    if question.abstain:  # an abstention control: no option, number or fact is the answer
        answer = ABSTAIN if kind != "free_form" else canonical_json({"contradicting": list(question.contradicting),
                                                                     "key_facts": []})
        return {"answer": answer, "answer_text": ABSTAIN, "answer_items": []}
    if kind == "mcq_single":
        letter = letters[question.gold]
        return {"answer": letter, "answer_text": letter, "answer_items": [letter]}
    if kind in ("mcq_multi", "ordering"):
        chosen = [letters[k] for k in question.gold]
        items = chosen if kind == "mcq_multi" else adjacent_pairs(tuple(chosen))
        return {"answer": canonical_json(chosen), "answer_text": ", ".join(chosen), "answer_items": items}
    if kind == "integer":
        return {"answer": str(question.gold), "answer_text": str(question.gold), "answer_items": [str(question.gold)]}
    return {"answer": canonical_json({"contradicting": list(question.contradicting),
                                      "key_facts": list(question.key_facts)}),
            "answer_text": question.reference, "answer_items": list(question.key_facts)}


@lru_cache(maxsize=64)
def reference_line_costs(lines: tuple[str, ...]) -> list[int]:
    """Reference tokens per line of a case (one tokenization, shared by its six questions). No token crosses
    a line junction: every line starts with '[' or '{' after the newline.

    Cached on disk under a digest of the lines: a fresh process that meets the case again (another run of
    the same config) neither loads the reference tokenizer (~0.2 s) nor tokenizes the case."""
    counter = reference_counter()

    def build() -> dict[str, np.ndarray]:
        return {"costs": np.array(joined_costs(list(lines), counter, LINE_SEPARATOR), dtype=np.int64)}

    digest = hashlib.sha256("\0".join(lines).encode("utf-8")).hexdigest()
    key = {"lines": digest, "count": len(lines), "separator": LINE_SEPARATOR}
    return tokenizer_table("recon-reference-line-costs", counter.table_stamp, key, build)["costs"].tolist()


def proof_graph(case: CaseFile, question: Question, lines) -> tuple[list[dict], list[list[str]]]:
    """The proof trace: one evidence node per entry the answer needs (its line as written, or its narrative
    line for the closed-book variant), read by one step each; the steps follow the provenance edges among the
    entries, and the last ones give the answer; its depth is ``reasoning_depth``. (``provenance_depth`` is the
    entries' depth in the whole case, which may reach past the proof: docs/recon.md.)"""
    proof = sorted(question.proof)
    texts = lines if lines else case.lines
    nodes = [{"id": f"e{row}", "kind": "evidence", "text": texts[row]} for row in proof]
    nodes += [{"id": f"s{row}", "kind": "step", "text": f"read entry {row}"} for row in proof]
    members = set(proof)
    edges = [[f"e{row}", f"s{row}"] for row in proof]
    edges += [[f"s{u}", f"s{v}"] for u, v, _ in case.trace.edges if u in members and v in members]
    sinks = [row for row in proof if not any(u == row and v in members for u, v, _ in case.trace.edges)]
    edges += [[f"s{row}", "answer"] for row in sinks]
    nodes.append({"id": "answer", "kind": "answer", "text": answer_node_text(question)})
    return nodes, edges


def answer_node_text(question: Question) -> str:
    if question.abstain:
        return ABSTAIN
    if question.format == "mcq_single":
        return question.options[question.gold]
    if question.format in ("mcq_multi", "ordering"):
        return "; ".join(question.options[k] for k in question.gold)
    if question.format == "integer":
        return str(question.gold)
    return question.reference
