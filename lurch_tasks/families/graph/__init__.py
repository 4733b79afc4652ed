"""Graph reconstruction / memory drift (source paper 000): recover the hidden graph linking people."""

from __future__ import annotations

import json
from functools import lru_cache

from ...core.registry import Deferred, Family, Task, register_family, register_task
from .config import GraphConfig
from .generate import COMPARED_KNOBS, FAMILY, VERSION, generate
from .world import VOCABULARY

CITATION = """@article{memorydrift2025,
  title   = {Can an LLM Induce a Graph? Investigating Memory Drift and Context Length},
  year    = {2025},
  note    = {Graph reconstruction benchmark: edge, subgraph and clique discovery; memory drift metric}
}"""
GROUP = "memory_drift_graph"
# Reported by the zero-gold controls only (None on the other docs, averaged over the controls by bin_mean).
EXTRA_METRICS = ("false_positive_rate",)


def score(doc: dict, output: str) -> dict[str, float]:
    """Edge-level TP/FP/FN against the gold graph; ``score`` is 1 - memory drift (the paper's "Score")."""
    from ...scoring import score_items  # scoring is imported when a process scores
    from ...scoring.pairs import parse_edges
    from ...scoring.reasoning import reasoning_metrics, states_empty_answer, strip_doc_output

    people, groups = _roster_of(doc["params"])
    stripped = strip_doc_output(doc, output)
    predicted = parse_edges(stripped.answer, people, groups=groups)
    items = score_items(doc["answer_items"], predicted)
    readable = bool(predicted) or states_empty_answer(stripped.answer)
    metrics = {"score": 1.0 - items.memory_drift, "memory_drift": items.memory_drift, "precision": items.precision,
               "recall": items.recall, "f1": items.f1, **reasoning_metrics(stripped, readable)}
    if not doc["answer_items"]:  # a zero-gold control: every listed pair is a false positive
        metrics["false_positive_rate"] = false_positive_rate(items.fp, items.tp + items.fp)
        # precision, recall and F1 are 0/0 with no gold: 1 for the right answer (none), 0 otherwise, like score,
        # so a perfect model is 1.0 on every metric of a config with controls
        metrics.update(precision=metrics["score"], recall=metrics["score"], f1=metrics["score"])
    return metrics


def false_positive_rate(false: int, listed: int) -> float:
    """Listed pairs that are false / max(listed, 1): on a zero-gold control 1 as soon as anything is listed, 0
    for an answer that says none (in any words the parser reads as no pair)."""
    return false / max(listed, 1)


@lru_cache(maxsize=64)
def _roster_of(params: str) -> tuple[tuple[str, ...], bool]:
    """(people, groups?) of a doc's params, decoded once per doc: a 128k doc's params take ~0.1 ms to decode,
    more than scoring a typical answer. The same people tuple each time also keeps parse_edges' roster lookup
    cheap."""
    decoded = json.loads(params)
    return tuple(decoded["people"]), decoded["task"] == "clique"


CONTROL_SLOT = "zero-gold"


def audit_slot(row: dict) -> str:
    """Shortcut-audit slot: the grid's rows together (as before controls existed), the zero-gold controls apart."""
    return CONTROL_SLOT if not row["answer_items"] else "grid"


def slot_chance(slot: str) -> float | None:
    """On a control the prompt-blind answer "none" is right (score 1), so no strategy can beat it there: a control
    is only a hole if it can be told from a grid row without reasoning, which tests/test_graph_controls.py measures
    (every registered shortcut says none as often on grid rows as on controls). Grid rows: the random baseline."""
    return 1.0 if slot == CONTROL_SLOT else None


def bin_keys(doc: dict) -> dict[str, str]:
    """Per-bin suffixes: the context-length bin and the density (connections per prompt)."""
    difficulty = doc["difficulty"]
    return {"length": str(difficulty["target_tokens"]), "density": f"k={difficulty['connections']}"}


def bin_names(config: GraphConfig) -> list[str]:
    cells = config.cells()
    return [str(n) for n in sorted({c.context_tokens for c in cells})] + [
        f"k={k}" for k in sorted({c.connections for c in cells})]


LIST_LINE_TOKENS = 16  # "Firstname Lastname -- Firstname Lastname" is 9-14 tokens in common tokenizers
LIST_SLACK = 64  # room for a heading, a few wrong guesses, the end of the turn
REASONING_TOKENS = 1024  # the cot styles ask for reasoning before the CONNECTIONS list


def max_gen_toks(config: GraphConfig) -> int:
    """Sized to the answer: a line per gold edge of the densest cell (plus slack), and room to reason for the
    chain-of-thought styles; "regular" asks for the list and nothing else."""
    per_unit = {"edge": 1, "subgraph": config.star_degree, "clique": config.clique_size * (config.clique_size - 1) // 2}
    lines = max(config.connections) * per_unit[config.task]
    answer = LIST_LINE_TOKENS * lines + LIST_SLACK
    answer = -(-answer // 32) * 32  # a round number in the YAML
    return answer + (REASONING_TOKENS if config.prompt_style != "regular" else 0)


def token_target(cell) -> int:
    return cell.context_tokens


register_family(
    Family(
        rag_units=Deferred(f"{__name__}.prompt:RAG_UNITS"),
        name=FAMILY, version=VERSION, config_type=GraphConfig, generate=generate,
        audit=Deferred(f"{__name__}.audit:audit"), solve=Deferred(f"{__name__}.baselines:solve"),
        guess=Deferred(f"{__name__}.baselines:guess"), score=score, bin_keys=bin_keys, bin_names=bin_names,
        group=GROUP, source_files=VOCABULARY, citation=CITATION,
        description=(
            "Graph reconstruction (memory drift): intelligence-style profiles of people, some linked by a "
            "specific shared detail (phone, plate, account, event, flight, named group), interleaved with "
            "unlinked distractors; the model lists every connection. Scored on edges with memory drift, "
            "precision, recall and F1."
        ),
        compared_knobs=COMPARED_KNOBS, shortcuts=Deferred(f"{__name__}.shortcuts:SHORTCUTS"),
        probes=Deferred(f"{__name__}.shortcuts:PROBES"), learned_probe=Deferred(f"{__name__}.shortcuts:LEARNED_PROBE"),
        max_gen_toks=max_gen_toks,
        token_target=token_target, extra_metrics=EXTRA_METRICS, audit_slot=audit_slot, slot_chance=slot_chance,
        knob_properties=(
            ("placement / separation", "`separation_tokens`, `min_separation_tokens`, `max_separation_tokens` and "
             "per edge `params.edge_separation_tokens`. LURCH `evidence_dispersion` does not tell placements apart "
             "once several units are spread (0.90 for both spread and adjacent at 3 edges, 8k tokens)."),
            ("connections", "`connections` (units per prompt), `gold_edges`, `evidence_scope`."),
            ("context_tokens", "`context_tokens`, `num_people`."),
            ("decoys / prompt_style", "matched pairs: rows with equal `pair_key` share people, gold graph and "
             "distractors; `params.decoys` lists the near misses."),
        ),
    )
)

_LONG = (32768, 65536, 131072)
for _task in ("edge", "subgraph", "clique"):
    _name = f"memory_drift_{_task}"
    register_task(Task(_name, FAMILY, GraphConfig(task=_task, zero_gold=True),
                       f"{_task} discovery, densities 1-7 x prompts of 2k-16k tokens, scattered placement, and a "
                       "zero-gold control per length", in_suite=True))
    register_task(Task(f"{_name}_long", FAMILY, GraphConfig(task=_task, context_tokens=_LONG, num_samples=1,
                                                           zero_gold=True),
                       f"{_task} discovery, contexts of 32k-128k tokens, and a zero-gold control per length"))
    register_task(Task(f"{_name}_paper", FAMILY, GraphConfig(task=_task, placement="spread"),
                       f"paper-faithful: {_task} discovery with the source code's dispersion (the i-th member of "
                       "every unit at the i-th evenly spaced cut point), whose gold positions follow from the layout",
                       paper_faithful=True))
register_task(Task("memory_drift_edge_segments", FAMILY, GraphConfig(task="edge", placement="segments"),
                   "paper-faithful: edge discovery with Algorithm 2 as the paper writes it (connection j inside "
                   "segment j of the distractors)", paper_faithful=True))
register_task(Task("memory_drift_edge_decoys", FAMILY, GraphConfig(task="edge", decoys="near_miss"),
                   "edge discovery with a near-miss decoy of every gold cue (matched pairs with memory_drift_edge)"))
for _style in ("cot", "cot_expanded"):
    register_task(Task(f"memory_drift_edge_{_style}", FAMILY, GraphConfig(task="edge", prompt_style=_style),
                       f"edge discovery with the {_style.replace('_', ' ')} prompt (paper IV-D)"))

__all__ = ["GraphConfig", "generate", "score"]
