"""Logged samples re-scored into one table: a row per (model, doc) with the current scorers' metrics and the doc's
recorded properties.

Columns: ``model``, ``task``, ``family``, ``instance`` (the doc id), ``index``, ``answer_format``; the metrics
``score`` (family-native; RECON's can be negative), ``normalized_score`` (chance 0, perfect 1:
``scoring.headline``) and ``balance_key`` (the unit it is averaged over with equal weight), ``outcome`` (score
clipped to [0, 1]: the GLM's response),
``memory_drift``, ``precision``, ``recall``, ``f1``, ``accuracy`` (strict correctness; for families without their own
it is ``score == 1``), ``abstain_rate``; ``truncated`` / ``unparsed`` (issue 28: the output ended while thinking /
had no readable answer after its reasoning was stripped); ``length`` (the doc's length bin in tokens, as its lm-eval
task bins it);
every scalar field of the doc's ``difficulty`` record under its own name (``context_tokens``, ``evidence_scope``,
``d``, ``connections``, ``category`` …); ``failure_modes`` / ``offered_failure_modes`` (';'-joined, families with a
distractor taxonomy); ``judge`` when free-form answers were re-graded by an LLM judge; ``chance`` (the model is a chance
baseline, ``runs.CHANCE_MODELS``, as its run's results file records).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import pandas as pd

from ..core.registry import get_family
from ..core.text import printable
from ..scoring import headline
from ..scoring.judge import JudgeConfig, ask_judge
from ..scoring.repeats import mean_scores
from .runs import Run, Sample, iter_samples, version_problem

# The negative controls' metrics (harness.metrics.SPARSE_METRICS): reported by the control docs only.
CONTROL_METRICS = ("false_positive_rate", "not_found_accuracy", "abstain_correct", "false_answer_rate")
METRICS = ("score", "memory_drift", "precision", "recall", "f1", "accuracy", "abstain_rate", "truncated", "unparsed")


@dataclass(frozen=True)
class Loaded:
    frame: pd.DataFrame
    notes: tuple[str, ...]  # one line each: what was skipped, replaced or allowed
    headlines: tuple[str, ...] = ()  # one line per model: its headline and what it covers (``model_coverage``)
    coverage: tuple[tuple[str, str], ...] = ()  # (model, "3 of 4 families (...); lengths ...") for its findings card


def _with_accuracy(metrics: dict) -> dict:
    """A family without its own ``accuracy`` counts an answer right when its score is 1."""
    return metrics if "accuracy" in metrics else {**metrics, "accuracy": 1.0 if float(metrics["score"]) >= 1 else 0.0}


def score_sample(sample: Sample, judge: JudgeConfig | None = None) -> dict:
    """One row: the sample's keys, the current scorer's metrics and the doc's recorded properties. A doc answered
    several times (``repeats``) is one row: its metrics, and the GLM's outcome, are the mean over its answers (as the
    LURCH paper averages three sampled answers per question); the failure modes are the first answer's."""
    doc = sample.doc
    family = get_family(doc["family"])
    answers = sample.outputs or (sample.output,)  # several answers (``repeats``): each scored, the metrics averaged
    scored = [_with_accuracy(family.score(doc, answer)) for answer in answers]
    metrics = mean_scores(scored)
    score = float(metrics["score"])
    row: dict = {"model": sample.model, "task": sample.task, "family": doc["family"], "instance": doc["id"],
                 "index": int(doc["index"]), "answer_format": doc["answer_format"],
                 "pair_key": str(doc.get("pair_key", ""))}  # matched pairs: rows of configs that differ in one knob
    for name in METRICS:
        row[name] = float(metrics[name]) if name in metrics else 0.0
    for name in CONTROL_METRICS:  # the negative controls' own metrics: NaN on every other doc
        value = metrics.get(name)
        row[name] = float(value) if value is not None else float("nan")
    row["outcome"] = sum(min(1.0, max(0.0, float(m["score"]))) for m in scored) / len(scored)
    row["answers"] = len(answers)
    row["normalized_score"] = headline.normalized(doc, score)
    row["balance_key"] = headline.balance_key(doc)
    row["length"] = int(float(family.bin_keys(doc)["length"]))
    for key, value in doc.get("difficulty", {}).items():
        if isinstance(value, (int, float, str, bool)) and key not in row:
            row[key] = value
    if family.failure_modes is not None:
        chosen, offered = family.failure_modes(doc, sample.output)
        row["failure_modes"], row["offered_failure_modes"] = ";".join(chosen), ";".join(offered)
    for key, value in sample.account or ():  # a lurch-rag doc's account (none for other models)
        row[f"sys_{key}"] = value
    if judge is not None and doc["answer_format"] == "free_form":
        gold = json.loads(doc["answer"])
        row["judge"] = ask_judge(judge, doc["question"], doc.get("answer_text", ""), gold.get("key_facts", []),
                                 sample.output)
    return row


def load_runs(runs: list[Run], *, allow_version_mismatch: bool = False, judge: JudgeConfig | None = None,
              progress: Callable[[int], None] | None = None) -> Loaded:
    """Every sample of our tasks in ``runs`` re-scored. A doc this package would not generate the same way
    (``runs.version_problem``) is an error naming it, unless ``allow_version_mismatch``. When two runs of one model
    logged the same doc, the later run's answer is kept (a note says how many)."""
    foreign: set[str] = set()
    rows: dict[tuple[str, str], dict] = {}
    mismatched: list[str] = []
    replaced = 0
    for sample in iter_samples(sorted(runs, key=lambda r: r.stamp), foreign):
        problem = version_problem(sample.doc)
        if problem is not None:
            mismatched.append(f"{sample.doc.get('id', '?')} ({sample.source}): {problem}")
            if not allow_version_mismatch:
                raise ValueError(f"{mismatched[0]}; allowed: runs of this lurch-tasks version, or "
                                 "--allow-version-mismatch to re-score them anyway")
        key = (sample.model, sample.doc["id"])
        replaced += key in rows
        rows[key] = _scored(sample, judge)
        if progress is not None:
            progress(1)
    if not rows:
        folders = sorted({str(run.folder) for run in runs})
        raise ValueError(printable(f"RUN_DIR: the sample logs in {', '.join(folders[:3])}"
                                   f"{' ...' if len(folders) > 3 else ''} hold no lurch-tasks docs; allowed: runs of "
                                   f"our tasks (found only: {', '.join(sorted(foreign)) or 'nothing'})"))
    notes = []
    if foreign:
        notes.append(printable("skipped samples of tasks that are not lurch-tasks tasks: "
                               + ", ".join(sorted(foreign))))
    if replaced:
        notes.append(f"{replaced} docs were logged by two runs of the same model; the later run's answers are used")
    if mismatched:
        notes.append(printable(f"{len(mismatched)} docs were made by another lurch-tasks version "
                               f"(--allow-version-mismatch); first: {mismatched[0]}"))
    chance = {run.model for run in runs if run.chance}
    frame = _frame(rows.values(), chance)
    frame = with_systems(frame, runs)
    from .headline import covered_headline

    coverage = model_coverage(frame, runs)
    headlines = tuple(f"{model}: {covered_headline(score, text)}" for model, score, text in coverage)
    return Loaded(frame, tuple(notes), headlines, tuple((model, text) for model, _, text in coverage))


def model_coverage(frame: pd.DataFrame, runs: list[Run]) -> tuple[tuple[str, float, str], ...]:
    """Per model: (model, the umbrella headline over the families its logs hold, what it covers: the families and
    lengths evaluated, and those its runs skipped (their results files: ``runs.read_coverage``))."""
    from . import harness_logs
    from .headline import coverage_text, overall
    from .runs import LM_EVAL, read_coverage

    skipped: dict[str, dict[str, str]] = {}
    dropped: dict[str, set[int]] = {}
    for run in runs:
        if run.harness == harness_logs.INSPECT:
            skipped.setdefault(run.model, {}).update(harness_logs.inspect_coverage(run.samples))
            continue
        if run.results is None or run.harness != LM_EVAL:
            continue
        found, lengths = read_coverage(run.results)
        skipped.setdefault(run.model, {}).update(found)
        dropped.setdefault(run.model, set()).update(lengths)
    lines = []
    for model, docs in frame.groupby("model", sort=True):
        text = coverage_text(docs["family"].unique(), skipped.get(model, {}), docs["length"].unique(),
                             dropped.get(model, ()))
        lines.append((str(model), overall(docs), text))
    return tuple(lines)


def _scored(sample: Sample, judge: JudgeConfig | None) -> dict:
    """``score_sample`` for a doc read from a log: ``runs.check_doc`` vouches for its shape, but the family's own
    reading of it (its params, answer, options) may still find a value no generator writes. That is bad input in
    that line, reported as one, not a traceback."""
    try:
        return score_sample(sample, judge)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, ArithmeticError, RecursionError) as error:
        raise ValueError(f"{sample.source}: doc {printable(sample.doc.get('id'))[:80]} cannot be scored "
                         f"({type(error).__name__}: {printable(error)[:120]}); allowed: the Instance record "
                         "lurch-tasks logs") from None


def with_systems(frame: pd.DataFrame, runs: list[Run]) -> pd.DataFrame:
    """The frame with ``system_family`` and ``answering_model`` per row when a run is a lurch-rag system
    (``runs.Run.system_family``); unchanged otherwise, so a report without one is the same as before."""
    from .systems import LONG_CONTEXT

    systems = {run.model: (run.system_family, run.answering or run.model) for run in runs}
    if all(family == LONG_CONTEXT for family, _ in systems.values()):
        return frame
    known = frame["model"].map(lambda model: systems.get(model, (LONG_CONTEXT, model)))
    return frame.assign(system_family=[family for family, _ in known], answering_model=[who for _, who in known])


def _frame(rows: Iterable[dict], chance: set[str] = frozenset()) -> pd.DataFrame:
    frame = pd.DataFrame(list(rows))
    frame["chance"] = frame["model"].isin(chance)
    return frame.sort_values(["model", "task", "index"], kind="stable").reset_index(drop=True)
