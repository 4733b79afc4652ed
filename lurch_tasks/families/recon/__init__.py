"""RECON (our implementation of source paper 001): long case files whose facts change, with every answer
computed from the provenance DAG of a generated case and the narration written by templates. Six question
categories in five answer formats on a fixed quota matrix (``formats.QUOTA``), each with an explicit abstain."""

from __future__ import annotations

import json

from ...core.registry import Deferred, Family, Task, register_family, register_task
from ...scoring import score_items
from ...scoring.keyfacts import free_form_text, grade_free_form
from ...scoring.mcq import (
    ABSTAIN,
    integer_score,
    mcq_multi_score,
    mcq_score,
    parse_choice,
    parse_integer,
    parse_letters,
)
from ...scoring.ordering import adjacent_pairs, ordering_score, parse_order
from ...scoring.reasoning import reasoning_metrics, strip_doc_output
from .config import MIN_CONTEXT_TOKENS, ReconConfig
from .formats import FORMATS, quota_table
from .generate import COMPARED_KNOBS, FAMILY, VERSION, VOCABULARY, generate
from .prompt import letters_for
from .questions import CATEGORIES

CITATION = """@article{recon2025,
  title = {RECON: reasoning over evolving case files -- invalidation cascades, source conflicts and
           counterfactual timelines in long contexts},
  year  = {2025},
  note  = {lurch-tasks reimplements its generator from the paper's description; code and data are not public}
}"""
GROUP = "recon"
EXTRA_METRICS = ("accuracy", "abstain_rate", "prompt_tokens", "abstain_correct", "false_answer_rate")


def _format_score(doc: dict, output: str) -> tuple[dict[str, float], list[str], bool]:
    """The format's own rule (paper App. D.1), the predicted answer items and whether an answer was readable
    (an unreadable one scores 0, as an abstention: the paper records an abstention after retries)."""
    kind = doc["answer_format"]
    letters = letters_for(kind)[: len(doc["options"])]
    if kind == "mcq_single":
        choice = parse_choice(output, letters)
        picked = [choice] if choice not in (None, ABSTAIN) else []
        return mcq_score(doc["answer"], choice, len(doc["options"])), picked, choice is not None
    if kind == "mcq_multi":
        chosen = parse_letters(output, letters)
        picked = list(chosen) if isinstance(chosen, tuple) else []
        return mcq_multi_score(tuple(json.loads(doc["answer"])), chosen, len(doc["options"])), picked, bool(chosen)
    if kind == "ordering":
        order = parse_order(output, letters)
        picked = adjacent_pairs(order) if isinstance(order, tuple) else []
        return ordering_score(tuple(json.loads(doc["answer"])), order), picked, bool(order)
    if kind == "integer":
        number = parse_integer(output)
        return (integer_score(int(doc["answer"]), number), [str(number)] if isinstance(number, int) else [],
                number is not None)
    gold = json.loads(doc["answer"])
    graded = grade_free_form(output, gold["key_facts"], gold["contradicting"])
    return ({k: graded[k] for k in ("score", "accuracy", "abstain_rate")},
            graded["found"] + [f"not:{fact}" for fact in graded["against"]], bool(free_form_text(output)))


def read_answer(doc: dict, output: str):
    """The output's answer as its format reads it: a letter, letters, a number, ``ABSTAIN`` or None (free form:
    ``ABSTAIN``, the final answer's text, or None when there is none)."""
    kind = doc["answer_format"]
    letters = letters_for(kind)[: len(doc["options"])]
    if kind == "mcq_single":
        return parse_choice(output, letters)
    if kind == "mcq_multi":
        return parse_letters(output, letters)
    if kind == "ordering":
        return parse_order(output, letters)
    if kind == "integer":
        return parse_integer(output)
    # an abstention that still names a place the question is about asserts it: that is an answer
    graded = grade_free_form(output, [], json.loads(doc["answer"])["contradicting"])
    return ABSTAIN if graded["answer"] == ABSTAIN and not graded["against"] else (output.strip() or None)


def is_control(doc: dict) -> bool:
    """An abstention control: a question the case does not settle (``difficulty.control``)."""
    return doc["difficulty"].get("control") == "abstain"


def _control_score(doc: dict, output: str) -> dict[str, float | None]:
    """An abstention control (``answer`` is ABSTAIN): the case does not settle the question, so ABSTAIN scores 1
    and any answer 0 (an unreadable output is neither an abstention nor a false answer)."""
    read = read_answer(doc, output)
    abstained, answered = float(read == ABSTAIN), float(read not in (None, ABSTAIN))
    # memory drift: an answer here is wholly a hallucinated item; an abstention matches the empty gold exactly
    return {"score": abstained, "accuracy": abstained, "abstain_rate": abstained, "memory_drift": answered,
            "precision": abstained, "recall": abstained, "f1": abstained, "abstain_correct": abstained,
            "false_answer_rate": answered}


def score(doc: dict, output: str) -> dict[str, float]:
    """The format's rule (``score``: MCQ single +1 / -1/5 / abstain 0, MCQ multiple c/k - w/(n-k), integer exact,
    ordering Kendall tau, free form key facts), strict ``accuracy``, ``abstain_rate`` and ``prompt_tokens``; memory
    drift, precision, recall and F1 over the answer items (options chosen, ordered adjacent pairs, key facts).
    Reasoning is stripped first; ``truncated`` / ``unparsed`` say whether the output ended thinking or had no
    readable answer (which scores 0, not the wrong-answer penalty)."""
    stripped = strip_doc_output(doc, output)
    prompt_tokens = float(doc["difficulty"]["prompt_tokens"])
    if is_control(doc):
        control = _control_score(doc, stripped.answer)
        readable = read_answer(doc, stripped.answer) is not None
        return {**control, "prompt_tokens": prompt_tokens, **reasoning_metrics(stripped, readable)}
    metrics, predicted, readable = _format_score(doc, stripped.answer)
    items = score_items(doc["answer_items"], predicted)
    # abstain_correct / false_answer_rate are defined on the abstention controls only (None elsewhere)
    return {**metrics, "prompt_tokens": prompt_tokens, "memory_drift": items.memory_drift,
            "precision": items.precision, "recall": items.recall, "f1": items.f1, "abstain_correct": None,
            "false_answer_rate": None, **reasoning_metrics(stripped, readable)}


def failure_modes(doc: dict, output: str) -> tuple[list[str], list[str]]:
    """(failure modes of the wrong options the output chose, failure modes the question offered): MCQ formats only;
    an abstention or an unreadable answer chooses nothing."""
    kind = doc["answer_format"]
    if kind not in ("mcq_single", "mcq_multi"):
        return [], []
    modes = json.loads(doc["params"]).get("failure_modes") or []
    letters = letters_for(kind)[: len(doc["options"])]
    output = strip_doc_output(doc, output).answer
    chosen = parse_choice(output, letters) if kind == "mcq_single" else parse_letters(output, letters)
    if isinstance(chosen, tuple):
        picked = list(chosen)
    else:
        picked = [chosen] if chosen not in (None, ABSTAIN) else []
    by_letter = dict(zip(letters, modes, strict=False))
    return ([by_letter[letter] for letter in picked if by_letter.get(letter)],
            [mode for mode in modes if mode])


def bin_keys(doc: dict) -> dict[str, str]:
    difficulty = doc["difficulty"]
    category, domain_name = difficulty["category"], difficulty["domain"]
    return {"length": str(difficulty["target_tokens"]), "domain": f"domain={domain_name}",
            "category": f"category={category}", "format": f"format={difficulty['format']}",
            "category_domain": f"{category}/{domain_name}"}


def bin_names(config: ReconConfig) -> list[str]:
    formats = [f for f in FORMATS if any(f == g for _, g in config.slots())]
    categories = [c for c in config.categories if any(c == d for d, _ in config.slots())]
    return ([str(n) for n in sorted(config.context_tokens)] + [f"domain={d}" for d in config.domains]
            + [f"category={c}" for c in categories] + [f"format={f}" for f in formats]
            + [f"{c}/{d}" for c in categories for d in config.domains])


CARD_SECTION = f"""Questions per case (the quota matrix; `lurch validate` checks every case has exactly these):

{quota_table()}

Scoring (`score`; every prompt states its format and that `ABSTAIN` scores 0): MCQ single +1 / -1/5 / 0; MCQ
multiple c/k - w/(n-k) over the six options (selecting all = abstaining = 0); integer exact; ordering Kendall's
tau over the listed items (a wrong item or count scores 0; a reversal -1); free form 1 when every key fact is
stated and no contradicting fact asserted (deterministic, offline). Also `accuracy` (strict), `abstain_rate`
and `prompt_tokens`, per category x domain and per format.

Abstention controls (`difficulty.control` = `abstain`): one case in 24 (the last of each run of 24 cases of a
(domain, length) cell) asks its conflict and retrieval questions, MCQ single and free form, of something the
case does not settle: a second disputed moment of the conflict's subject that no record covers (two accounts,
reports naming the other places, no record), and where the held item was at a moment before any record of it.
Same templates, items and options as the answerable questions; the honest answer is `ABSTAIN` (written
`ANSWER: ABSTAIN` in every format; a free-form answer that names one of the places is an answer, not an
abstention). On them `ANSWER: ABSTAIN` scores 1 and any answer 0 (an unreadable output 0, and no false answer);
`abstain_correct` and `false_answer_rate` are their own metrics (undefined on answerable rows). Answering
`ABSTAIN` everywhere scores the controls' share of a control slot, 1/24 (registered as the `always_abstain`
shortcut, within the audit's margin)."""

REASONING_TOKENS = 1024  # room to trace a trail or replay a timeline before the answer line


def max_gen_toks(config: ReconConfig) -> int:
    return REASONING_TOKENS


def token_target(cell) -> int:
    return cell.context_tokens


def chance(config: ReconConfig) -> float | None:
    """A uniform pick among six options scores +1 one time in six and -1/5 otherwise: 0 exactly; so does a
    random subset for MCQ multiple (E[c/k] = E[w/(n-k)] for any subset size) and a uniform permutation
    (E[tau] = 0). An integer or free-form guess can hit and nothing penalises a miss, so with those formats the
    seeded random baseline (``baselines.guess``) measures chance instead (None)."""
    return None if any(f in ("integer", "free_form") for _, f in config.slots()) else 0.0


def _tasks(prefix: str) -> tuple[str, ...]:
    return tuple(f"{prefix}_{category}" for category in CATEGORIES)


register_family(
    Family(
        rag_units=Deferred(f"{__name__}.prompt:RAG_UNITS"),
        name=FAMILY, version=VERSION, config_type=ReconConfig, generate=generate,
        audit=Deferred(f"{__name__}.audit:audit"), solve=Deferred(f"{__name__}.baselines:solve"),
        guess=Deferred(f"{__name__}.baselines:guess"), score=score, bin_keys=bin_keys, bin_names=bin_names,
        group=GROUP, source_files=VOCABULARY,
        citation=CITATION,
        description=(
            "RECON: a long case file of timestamped entries (criminal, medical or financial) in which findings "
            "are reached along evidence trails, later withdrawn, disputed by witnesses and settled by data "
            "streams. Sixteen questions per case (a fixed quota of categories x formats) on chains, invalidation "
            "cascades, source conflicts, counterfactual timelines, temporal constraints and temporal retrieval, in "
            "five formats (MCQ single and multiple, integer, ordering, free form), each with an explicit abstain "
            "and each answer derived from the case's provenance DAG."
        ),
        compared_knobs=COMPARED_KNOBS, shortcuts=Deferred(f"{__name__}.shortcuts:SHORTCUTS"),
        probes=Deferred(f"{__name__}.shortcuts:PROBES"), learned_probe=Deferred(f"{__name__}.learned:LEARNED_PROBE"),
        audit_slot=Deferred(f"{__name__}.learned:audit_slot"), slot_chance=Deferred(f"{__name__}.learned:slot_chance"),
        balance_key=lambda doc: doc["difficulty"]["category"],
        max_gen_toks=max_gen_toks,
        token_target=token_target,
        knob_properties=(
            ("context_tokens", "`target_tokens`; `params.case_tokens` (the longest of the case's sixteen prompts)."),
            ("min_hops / max_hops", "`chain_hops` (chain questions) and `provenance_depth` (provenance depth)."),
            ("variant", "`variant`: narrative, oracle (JSON entries) or closedbook (no case); same questions."),
            ("formats", "`format` (and `answer_format`): which quota slots each case asks."),
            ("(none)", "`header_anchor_uniqueness` / `timestamp_anchor_uniqueness`: the share of the question's gold "
                       "entries whose `[Day X, HH:MM] [TYPE] [AUTHOR]` header (or timestamp alone) is unique in the "
                       "case (retrieval-coverage anchors, paper §4.3)."),
            ("domains / categories", "`domain`, `category`."),
        ),
        extra_metrics=EXTRA_METRICS, chance=chance, min_context_tokens=MIN_CONTEXT_TOKENS,
        extra_groups=(("recon_oracle", _tasks("recon_oracle")),
                      ("recon_closedbook", _tasks("recon_closedbook"))),
        stored_filter=lambda config, row: (row["difficulty"]["category"] in config.categories
                                           and row["difficulty"]["format"] in config.formats),
        row_summary=Deferred(f"{__name__}.audit:row_summary"), audit_rows=Deferred(f"{__name__}.audit:audit_rows"),
        card_section=CARD_SECTION, failure_modes=failure_modes,
        regeneration_key=lambda doc: (json.loads(doc["params"])["case_seed"],),
    )
)

_DESCRIPTIONS = {
    "chain": "which ordered trail of findings led to a conclusion (3-15 links)",
    "cascade": "which conclusion lost all support when a finding was withdrawn",
    "conflict": "where someone was when two accounts disagree and a data stream settles it",
    "counterfactual": "which actions change if a result had come in earlier or later",
    "temporal": "who is not accounted for during the incident window by two parallel streams",
    "retrieval": "where an item was held at a given moment of its custody history",
}
_VARIANTS = {
    "recon": ("narrative", "16k-32k-token case files"),
    "recon_oracle": ("oracle", "the structured case as JSON entries: the reasoning without the reading"),
    "recon_closedbook": ("closedbook", "no case at all (contamination filter: a model should stay at 0)"),
}
for _prefix, (_variant, _what_variant) in _VARIANTS.items():
    _stored = f"{_prefix}_all"
    register_task(Task(_stored, FAMILY, ReconConfig(variant=_variant),
                       f"RECON, all six categories, {_what_variant}; a case's questions on consecutive rows (the "
                       f"stored config its six {_prefix}_<category> tasks read)"))
    for _category, _what in _DESCRIPTIONS.items():
        register_task(Task(f"{_prefix}_{_category}", FAMILY, ReconConfig(categories=(_category,), variant=_variant),
                           f"RECON {_category}: {_what}; {_what_variant}", in_suite=_prefix == GROUP,
                           stored_as=_stored))
register_task(Task("recon_long", FAMILY, ReconConfig(context_tokens=(65_536, 131_072), num_samples=2),
                   "RECON at paper scale: every category on 64k-128k-token case files (opt-in)"))

__all__ = ["ReconConfig", "generate", "score"]
