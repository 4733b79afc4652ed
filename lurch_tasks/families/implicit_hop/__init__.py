"""ImplicitHop (our design, after source paper 004): implicit multi-hop questions over an invented knowledge
base, with reasoning depth, evidence scope, evidence dispersion and length set one at a time."""

from __future__ import annotations

from ...core.registry import Deferred, Family, Task, register_family, register_task
from ...scoring import normalize_name, score_items
from ...scoring.lists import parse_name_list
from ...scoring.not_found import NOT_FOUND, says_not_found
from ...scoring.reasoning import reasoning_metrics, states_empty_answer, strip_doc_output
from ...scoring.single import normalize_entity_name, parse_count, token_scores
from .config import ImplicitHopConfig
from .generate import COMPARED_KNOBS, FAMILY, VERSION, VOCABULARY, generate

CITATION = """@article{lurch2025,
  title   = {LURCH: evidence scope, evidence dispersion and reasoning depth in long-context question answering},
  year    = {2025},
  note    = {ImplicitHop varies these properties one at a time, the controlled experiment the paper calls for}
}"""
GROUP = "implicit_hop"
EXTRA_METRICS = ("not_found_accuracy",)


def _broken_score(answer: str) -> tuple[dict[str, float], bool]:
    """A broken chain's question: 1 for NOT FOUND in any wording (``says_not_found``), 0 for any entity."""
    said = float(says_not_found(answer))
    return ({"score": said, "memory_drift": 1.0 - said, "precision": said, "recall": said, "f1": said,
             "not_found_accuracy": said}, bool(said) or bool(parse_name_list(answer)))


def score(doc: dict, output: str) -> dict[str, float | None]:
    """Every doc reports the umbrella's five metrics. An entity set (a list question) scores 1 - memory drift
    over its answers' names; one entity scores 1 for exactly the gold name (normalised), with precision /
    recall / F1 over the name's words (partial credit for part of a name); a count scores 1 for exactly
    the gold number, its items being that one number. A broken chain (gold NOT FOUND) scores ``_broken_score``;
    ``not_found_accuracy`` is its score there and None on every other doc (averaged over the broken docs only). NOT
    FOUND on an intact question names no entity, so it scores 0 there like any wrong answer. Reasoning is stripped
    first (``truncated`` / ``unparsed``)."""
    stripped = strip_doc_output(doc, output)
    if doc["answer_items"] == [NOT_FOUND]:
        metrics, readable = _broken_score(stripped.answer)
    else:
        metrics, readable = _score_answer(doc, stripped.answer)
        metrics = {**metrics, "not_found_accuracy": None}
    return {**metrics, **reasoning_metrics(stripped, readable)}


def _score_answer(doc: dict, output: str) -> tuple[dict[str, float], bool]:
    if doc["answer_format"] == "integer":
        predicted = parse_count(output)
        items = score_items(doc["answer_items"], [] if predicted is None else [str(predicted)])
        return {"score": float(items.tp == 1), "memory_drift": items.memory_drift, "precision": items.precision,
                "recall": items.recall, "f1": items.f1}, predicted is not None
    if doc["answer_format"] == "entity":
        gold, named = normalize_entity_name(doc["answer_items"][0]), parse_name_list(output)
        predicted = [normalize_entity_name(name) for name in named]
        items = score_items([gold], predicted)
        precision, recall, f1 = token_scores(gold, " ".join(predicted))
        return {"score": float(items.tp == 1 and items.fp == 0), "memory_drift": items.memory_drift,
                "precision": precision, "recall": recall, "f1": f1}, bool(named) or states_empty_answer(output)
    named = parse_name_list(output)
    items = score_items([normalize_name(a) for a in doc["answer_items"]], named)
    return {"score": 1.0 - items.memory_drift, "memory_drift": items.memory_drift, "precision": items.precision,
            "recall": items.recall, "f1": items.f1}, bool(named) or states_empty_answer(output)


AXES = (("depth", "depth", "depths"), ("facts", "facts", "facts"), ("dispersion", "dispersion_target", "dispersions"))


def bin_keys(doc: dict) -> dict[str, str]:
    """Per-bin suffixes: the prompt length and every axis (``score@depth=3``, ``score@dispersion=0.5``)."""
    difficulty = doc["difficulty"]
    keys = {"length": str(difficulty["target_tokens"])}
    keys.update({axis: f"{axis}={difficulty[field]}" for axis, field, _ in AXES})
    return keys


def bin_names(config: ImplicitHopConfig) -> list[str]:
    cells = config.cells()
    names = [str(n) for n in sorted({c.context_tokens for c in cells})]
    for axis, _, _ in AXES:
        names += [f"{axis}={v}" for v in sorted({getattr(c, axis) for c in cells})]
    return names


REASONING_TOKENS = 768
TOKENS_PER_QUESTION = 96


def max_gen_toks(config: ImplicitHopConfig) -> int:
    """Room to reason and one answer line: more questions (branches) need more."""
    from .config import branch_lengths

    branches = max(len(branch_lengths(c.depth, c.facts)) for c in config.cells())
    return REASONING_TOKENS + TOKENS_PER_QUESTION * branches


def token_target(cell) -> int:
    return cell.context_tokens


register_family(
    Family(
        rag_units=Deferred(f"{__name__}.prompt:RAG_UNITS"),
        name=FAMILY, version=VERSION, config_type=ImplicitHopConfig, generate=generate,
        audit=Deferred(f"{__name__}.audit:audit"), solve=Deferred(f"{__name__}.baselines:solve"),
        guess=Deferred(f"{__name__}.baselines:guess"), score=score, bin_keys=bin_keys, bin_names=bin_names,
        group=GROUP, source_files=VOCABULARY, citation=CITATION,
        description=(
            "ImplicitHop: facts about invented people, organisations, cities, regions and artefacts, one per "
            "line; each question names only a start entity and a path of relations ('the birthplace of the "
            "founder of ...'), so the bridge entities must be found. Depth, required facts (scope), dispersion "
            "and length are knobs, each verified on the instance."
        ),
        compared_knobs=COMPARED_KNOBS, shortcuts=Deferred(f"{__name__}.shortcuts:SHORTCUTS"),
        probes=Deferred(f"{__name__}.shortcuts:PROBES"), learned_probe=Deferred(f"{__name__}.shortcuts:LEARNED_PROBE"),
        audit_slot=Deferred(f"{__name__}.shortcuts:audit_slot"), max_gen_toks=max_gen_toks, extra_metrics=EXTRA_METRICS,
        token_target=token_target,
        knob_properties=(
            ("depths", "`depth` (requested) and `reasoning_depth` (achieved, equal); also `questions` and "
                       "`branches` (a list of 8 facts: 8 questions at depth 1, 1 at depth 8) and `competitor_lines`."),
            ("facts", "`facts` and `evidence_scope`; also `questions` / `branches` and `competitor_lines`."),
            ("dispersions", "`dispersion_target` and `evidence_dispersion` (within 0.02)."),
            ("context_tokens", "`context_tokens`, `num_facts`; `evidence_scope` too (a ratio to length: the "
                               "facts are held, not the scope)."),
            ("competitors_per_hop", "`competitors_per_hop`: exact on every hop of every row, flat across every "
                                    "other knob; `competitor_lines`."),
            ("join", "`params.join` (kind, relation, answer); `answer_format` entity_set, entity or integer."),
            ("broken", "`broken` (a chain whose hop fact is absent: answer NOT FOUND) and `params.broken` (hop, "
                       "relation, subject, the left-out value); the same share in every cell."),
        ),
    )
)

_SLICES = {
    "implicit_hop_depth": (ImplicitHopConfig(), "depth 1-8 with 8 required facts, dispersion 0.5, 4k tokens"),
    "implicit_hop_scope": (ImplicitHopConfig(depths=(3,), facts=(4, 8, 16, 24)),
                           "4-24 required facts at depth 3, dispersion 0.5, 4k tokens"),
    "implicit_hop_dispersion": (ImplicitHopConfig(depths=(3,), dispersions=(0.0, 0.25, 0.5, 0.75, 1.0)),
                                "dispersion 0-1 at depth 3, 8 required facts, 4k tokens"),
    "implicit_hop_length": (ImplicitHopConfig(depths=(3,), context_tokens=(1024, 2048, 4096, 8192, 16384, 32768)),
                            "contexts of 1k-32k tokens at depth 3, 8 required facts, dispersion 0.5"),
    "implicit_hop_compare": (ImplicitHopConfig(depths=(3, 4, 5, 6, 7), join="compare", num_samples=48),
                             "which of 2-4 chains' ends was born or founded earliest / latest: depth 3-7 (the "
                             "comparison is the last step), 8 required facts, dispersion 0.5, 4k tokens"),
    "implicit_hop_count": (ImplicitHopConfig(depths=(2, 3, 4, 5, 6, 7, 8), join="count"),
                           "how many of 2-8 chains' ends were born in / live in a named city: depth 2-8 (the count "
                           "is the last step), 8 required facts, dispersion 0.5, 4k tokens"),
    "implicit_hop_grid": (ImplicitHopConfig(depths=(1, 2, 4, 8), facts=(8, 16), dispersions=(0.0, 0.5, 1.0),
                                            context_tokens=(2048, 8192), num_samples=3),
                          "a factorial grid over depth, facts, dispersion and length (for a GLM analysis)"),
}
for _name, (_config, _description) in _SLICES.items():
    register_task(Task(_name, FAMILY, _config, _description, in_suite=True))
register_task(Task("implicit_hop_near_miss", FAMILY,
                   ImplicitHopConfig(depths=(3,), dispersions=(0.0, 0.5, 1.0), distractors="near_miss", num_samples=24),
                   "depth 3, 8 required facts, 4k tokens, with a near miss of every bridge (a look-alike name whose "
                   "next fact leads elsewhere)"))
register_task(Task("implicit_hop_broken", FAMILY,
                   ImplicitHopConfig(depths=(5,), facts=(5,), num_samples=128, broken=0.125, competitors_per_hop=2),
                   "negative control: one question of 5 hops, 4k tokens, dispersion 0.5, 2 competitors per hop; in a "
                   "eighth of the rows "
                   "(16 of 128, a seeded draw) one hop's fact is absent, its competitors kept, and the answer is "
                   "NOT FOUND (not_found_accuracy); the broken hop's subject keeps 3 lines of its signature, as every "
                   "hop's does", in_suite=True))
register_task(Task("implicit_hop_long", FAMILY,
                   ImplicitHopConfig(depths=(3,), context_tokens=(65536, 131072), num_samples=4),
                   "contexts of 64k-128k tokens at depth 3, 8 required facts, dispersion 0.5"))

__all__ = ["ImplicitHopConfig", "generate", "score"]
