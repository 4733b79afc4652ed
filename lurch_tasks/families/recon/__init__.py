"""RECON (our implementation of source paper 001): long case files whose facts change, with every answer
computed from the provenance DAG of a generated case and the narration written by templates. Six question
categories as six-option multiple choice with an explicit abstain."""

from __future__ import annotations

from ...core.registry import Family, Task, register_family, register_task
from ...scoring import score_items
from ...scoring.mcq import ABSTAIN, mcq_score, parse_choice
from .audit import audit
from .baselines import guess, solve
from .config import MIN_CONTEXT_TOKENS, ReconConfig
from .generate import COMPARED_KNOBS, FAMILY, VERSION, VOCABULARY, generate
from .prompt import LETTERS
from .questions import CATEGORIES
from .shortcuts import PROBES, SHORTCUTS

CITATION = """@article{recon2025,
  title = {RECON: reasoning over evolving case files -- invalidation cascades, source conflicts and
           counterfactual timelines in long contexts},
  year  = {2025},
  note  = {lurch-tasks reimplements its generator from the paper's description; code and data are not public}
}"""
GROUP = "recon"
EXTRA_METRICS = ("accuracy", "abstain_rate")


def score(doc: dict, output: str) -> dict[str, float]:
    """The penalised MCQ rule (``score``), strict ``accuracy`` and ``abstain_rate``; memory drift, precision,
    recall and F1 over the one answer item (the letter), so RECON joins the umbrella's metrics."""
    choice = parse_choice(output, LETTERS[: len(doc["options"])])
    metrics = mcq_score(doc["answer"], choice, len(doc["options"]))
    items = score_items(doc["answer_items"], [choice] if choice not in (None, ABSTAIN) else [])
    return {**metrics, "memory_drift": items.memory_drift, "precision": items.precision, "recall": items.recall,
            "f1": items.f1}


def bin_keys(doc: dict) -> dict[str, str]:
    difficulty = doc["difficulty"]
    return {"length": str(difficulty["target_tokens"]), "domain": f"domain={difficulty['domain']}",
            "category": f"category={difficulty['category']}"}


def bin_names(config: ReconConfig) -> list[str]:
    return ([str(n) for n in sorted(config.context_tokens)] + [f"domain={d}" for d in config.domains]
            + [f"category={c}" for c in config.categories])


REASONING_TOKENS = 1024  # room to trace a trail or replay a timeline before the answer line


def max_gen_toks(config: ReconConfig) -> int:
    return REASONING_TOKENS


def token_target(cell) -> int:
    return cell.context_tokens


def chance(config: ReconConfig) -> float:
    """A uniform pick among six options scores +1 one time in six and -1/5 otherwise: 0 exactly."""
    return 0.0


def _tasks(prefix: str) -> tuple[str, ...]:
    return tuple(f"{prefix}_{category}" for category in CATEGORIES)


register_family(
    Family(
        name=FAMILY, version=VERSION, config_type=ReconConfig, generate=generate, audit=audit, solve=solve,
        guess=guess, score=score, bin_keys=bin_keys, bin_names=bin_names, group=GROUP, source_files=VOCABULARY,
        citation=CITATION,
        description=(
            "RECON: a long case file of timestamped entries (criminal, medical or financial) in which findings "
            "are reached along evidence trails, later withdrawn, disputed by witnesses and settled by data "
            "streams. Six-option questions (with abstain) on chains, invalidation cascades, source conflicts, "
            "counterfactual timelines, temporal constraints and temporal retrieval, each answer derived from the "
            "case's provenance DAG."
        ),
        compared_knobs=COMPARED_KNOBS, shortcuts=SHORTCUTS, probes=PROBES, max_gen_toks=max_gen_toks,
        token_target=token_target,
        knob_properties=(
            ("context_tokens", "`target_tokens`; `params.case_tokens` (the longest of the case's six prompts)."),
            ("min_hops / max_hops", "`chain_hops` (chain questions) and `reasoning_depth` (provenance depth)."),
            ("variant", "`variant`: narrative, oracle (JSON entries) or closedbook (no case); same questions."),
            ("domains / categories", "`domain`, `category`."),
        ),
        extra_metrics=EXTRA_METRICS, chance=chance, min_context_tokens=MIN_CONTEXT_TOKENS,
        extra_groups=(("recon_oracle", _tasks("recon_oracle")),
                      ("recon_closedbook", _tasks("recon_closedbook"))),
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
for _category, _what in _DESCRIPTIONS.items():
    register_task(Task(f"recon_{_category}", FAMILY, ReconConfig(categories=(_category,)),
                       f"RECON {_category}: {_what}; 16k-32k-token case files", in_suite=True))
    register_task(Task(f"recon_oracle_{_category}", FAMILY, ReconConfig(categories=(_category,), variant="oracle"),
                       f"RECON {_category} on the structured case (JSON entries): the reasoning without the reading"))
    register_task(Task(f"recon_closedbook_{_category}", FAMILY,
                       ReconConfig(categories=(_category,), variant="closedbook"),
                       f"RECON {_category} without the case (contamination filter: should stay at 0)"))
register_task(Task("recon_long", FAMILY, ReconConfig(context_tokens=(65_536, 131_072), num_samples=2),
                   "RECON at paper scale: every category on 64k-128k-token case files (opt-in)"))

__all__ = ["ReconConfig", "generate", "score"]
