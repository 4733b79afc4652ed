"""``lurch report``: lm-eval sample logs -> the source papers' tables and figures, drift onset, effective length
and the LURCH GLM, as CSV files, PNG figures, ``summary.md`` and one self-contained ``report.html``.

The report is built from one table of re-scored docs (``analysis.frame``). Each section exists only when its family
is in the runs. Every mean carries a seeded bootstrap 95% CI (``analysis.stats``); the same runs and options give
the same files. The page opens with "Key findings", one short block per model read off the other sections' tables
(``findings``): its headline, effective length and strongest property effects, or "chance" for a chance baseline,
from which no onset, effective length or effect is drawn (its trends are noise). Wherever a curve, bin or contrast
rests on fewer than ``FEW_DOCS`` docs per bin, the section and the figure say so.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from . import headline, plots
from .curves import DEFAULT_EFFECTIVE_FRACTION, DEFAULT_ONSET_MARGIN, drift_onset, effective_length
from .frame import CONTROL_METRICS, Loaded
from .stats import DEFAULT_REPS, DEFAULT_SEED, bootstrap_statistic, summarize

HEADLINE = ("score", "memory_drift", "precision", "recall", "f1")
GRAPH_FAMILY, FIND_ORIGIN, RECON, IMPLICIT_HOP = "graph_reconstruction", "find_the_origin", "recon", "implicit_hop"
DISCOVERY = "discovery"
IMPLICIT_HOP_AXES = (("depth", "reasoning depth (hops)"), ("facts", "required facts (scope)"),
                     ("dispersion_target", "evidence dispersion (target)"), ("length", "context length (tokens)"))
FEW_DOCS = 10  # docs per bin below which a curve, bin or contrast is flagged: its interval is wide, its shape noise
CHANCE = "chance"  # what a chance baseline's onset and effective length cells read


@dataclass(frozen=True)
class Options:
    reps: int = DEFAULT_REPS
    seed: int = DEFAULT_SEED
    onset_margin: float = DEFAULT_ONSET_MARGIN
    effective_fraction: float = DEFAULT_EFFECTIVE_FRACTION


@dataclass(frozen=True)
class Figure:
    name: str  # file stem under figures/
    caption: str
    png: bytes
    warning: str = ""  # shown beside the caption (few docs per bin)


@dataclass(frozen=True)
class Block:
    """One model's key findings: a title, a tag ("chance" for a chance baseline) and a few lines."""

    title: str
    lines: tuple[str, ...]
    tag: str = ""


@dataclass(frozen=True)
class Section:
    key: str
    title: str
    intro: str
    tables: tuple[tuple[str, pd.DataFrame], ...] = ()
    figures: tuple[Figure, ...] = ()
    notes: tuple[str, ...] = field(default=())
    warnings: tuple[str, ...] = ()  # shown above the figures: few docs per bin
    blocks: tuple[Block, ...] = ()


def chance_models(frame: pd.DataFrame) -> set[str]:
    """The models the runs record as chance baselines (``frame.chance``, from ``runs.CHANCE_MODELS``)."""
    if "chance" not in frame:
        return set()
    return {str(m) for m in frame.loc[frame["chance"].astype(bool), "model"].unique()}


def few_docs(table: pd.DataFrame, what: str = "", short: bool = False) -> str:
    """A one-line warning when some bin of ``table`` (its ``n`` column) holds fewer than ``FEW_DOCS`` docs, else
    "". ``short``: the figure-caption form, without ``what``."""
    if table.empty or "n" not in table:
        return ""
    counts = table["n"].astype(int)
    small = counts[counts < FEW_DOCS]
    if small.empty:
        return ""
    low, high = int(counts.min()), int(counts.max())
    spread = f"{low}" if low == high else f"{low} to {high}"
    if short:
        return f"few docs per bin ({spread}; under {FEW_DOCS} in {len(small)} of {len(counts)} bins)"
    return (f"few docs per bin in {what}: {spread} per bin, under {FEW_DOCS} in {len(small)} of {len(counts)} "
            "bins; the intervals are wide and the shapes may be noise")


# ---------------------------------------------------------------------------------------------------- tables


def model_summary(frame: pd.DataFrame, options: Options) -> pd.DataFrame:
    """Per model: every doc, then per family (family ``all`` first)."""
    overall = summarize(frame.assign(family="all"), ["model", "family"], HEADLINE, reps=options.reps,
                        seed=options.seed)
    per_family = summarize(frame, ["model", "family"], HEADLINE, reps=options.reps, seed=options.seed)
    return pd.concat([overall, per_family], ignore_index=True).sort_values(["model", "family"], key=_all_first,
                                                                         kind="stable", ignore_index=True)


def _all_first(column: pd.Series) -> pd.Series:
    return column.map(lambda v: ("" if v == "all" else "~") + str(v))


def length_table(frame: pd.DataFrame, options: Options) -> pd.DataFrame:
    """Drift onset and effective length per model and task (tasks with two or more length bins), with bootstrap
    intervals over each bin's docs. Onsets and lengths are bins in tokens; +inf in an interval means 'none'.
    ``min_docs``: the fewest docs in any of the curve's bins."""
    rows = []
    for (model, task), group in frame.groupby(["model", "task"], sort=True):
        bins = sorted(group["length"].unique())
        if len(bins) < 2:
            continue
        min_docs = int(group.groupby("length").size().min())
        drift = [group.loc[group["length"] == b, "memory_drift"].to_numpy(float) for b in bins]
        score = [group.loc[group["length"] == b, "score"].to_numpy(float) for b in bins]

        def onset(means: np.ndarray, bins=bins) -> float:
            found = drift_onset(bins, means, options.onset_margin)
            return math.inf if found is None else float(found)

        def effective(means: np.ndarray, bins=bins) -> float:
            found = effective_length(bins, means, options.effective_fraction)
            return math.nan if found is None else float(found)

        onset_value, onset_low, onset_high = bootstrap_statistic(drift, onset, options.reps, ("onset", model, task),
                                                                 options.seed)
        eff_value, eff_low, eff_high = bootstrap_statistic(score, effective, options.reps,
                                                           ("effective", model, task), options.seed)
        rows.append({"model": model, "task": task, "bins": len(bins), "min_docs": min_docs,
                     "shortest": int(bins[0]), "longest": int(bins[-1]), "drift_at_shortest": float(np.mean(drift[0])),
                     "drift_at_longest": float(np.mean(drift[-1])),
                     "drift_onset": None if math.isinf(onset_value) else onset_value,
                     "drift_onset_lo": onset_low, "drift_onset_hi": onset_high,
                     "score_at_shortest": float(np.mean(score[0])), "score_at_longest": float(np.mean(score[-1])),
                     "effective_length": None if math.isnan(eff_value) else eff_value,
                     "effective_length_lo": eff_low, "effective_length_hi": eff_high})
    return pd.DataFrame(rows)


def chance_marked(lengths: pd.DataFrame, chance: set[str]) -> pd.DataFrame:
    """The length table with a chance baseline's onset and effective length (and their intervals) replaced by
    "chance": its curve has no level to keep, so any onset it shows is noise."""
    if lengths.empty or not chance:
        return lengths
    marked = lengths.astype({"drift_onset": object, "effective_length": object}).copy()
    rows = marked["model"].isin(chance)
    for column in ("drift_onset", "effective_length"):
        marked.loc[rows, column] = CHANCE
        marked.loc[rows, [f"{column}_lo", f"{column}_hi"]] = math.nan
    return marked


def sign_asymmetry(frame: pd.DataFrame, options: Options) -> pd.DataFrame:
    """Find the Origin: accuracy at d and at -d for every |d| both signs of which were run, and their difference."""
    rows = []
    for (model, task), group in frame.groupby(["model", "task"], sort=True):
        for size in sorted({abs(int(d)) for d in group["d"]}):
            above = group.loc[group["d"] == size, "accuracy"].to_numpy(float)
            below = group.loc[group["d"] == -size, "accuracy"].to_numpy(float)
            if not len(above) or not len(below):
                continue
            diff, low, high = bootstrap_statistic([above, below], lambda m: float(m[0] - m[1]), options.reps,
                                                  ("sign", model, task, size), options.seed)
            rows.append({"model": model, "task": task, "abs_d": size, "n_pos": len(above), "n_neg": len(below),
                         "accuracy_pos": float(above.mean()), "accuracy_neg": float(below.mean()),
                         "difference": diff, "difference_lo": low, "difference_hi": high})
    return pd.DataFrame(rows)


def failure_mode_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per model and failure mode: how often a wrong option of that kind was offered and how often it was taken."""
    rows = []
    for model, group in frame.groupby("model", sort=True):
        offered = _counts(group["offered_failure_modes"])
        chosen = _counts(group["failure_modes"])
        wrong = sum(chosen.values())
        for mode in sorted(offered):
            rows.append({"model": model, "failure_mode": mode, "offered": offered[mode],
                         "chosen": chosen.get(mode, 0), "pick_rate": chosen.get(mode, 0) / offered[mode],
                         "share_of_wrong_picks": chosen.get(mode, 0) / wrong if wrong else 0.0})
    return pd.DataFrame(rows)


def _counts(column: pd.Series) -> dict[str, int]:
    counts: dict[str, int] = {}
    for text in column.fillna(""):
        for mode in filter(None, str(text).split(";")):
            counts[mode] = counts.get(mode, 0) + 1
    return counts


def implicit_hop_axes(frame: pd.DataFrame, options: Options) -> pd.DataFrame:
    """Score against each ImplicitHop property in the tasks that vary only that property (the others fixed)."""
    parts = []
    for task, group in frame.groupby("task", sort=True):
        varying = [axis for axis, _ in IMPLICIT_HOP_AXES if group[axis].nunique() > 1]
        if len(varying) != 1:
            continue  # a grid varies several at once: that is the GLM's job
        axis = varying[0]
        table = summarize(group, ["model", axis], HEADLINE, reps=options.reps, seed=options.seed)
        parts.append(table.rename(columns={axis: "value"}).assign(task=task, axis=axis))
    if not parts:
        return pd.DataFrame()
    table = pd.concat(parts, ignore_index=True)
    return table[["model", "task", "axis", "value", *[c for c in table.columns
                                                       if c not in ("model", "task", "axis", "value")]]]


# -------------------------------------------------------------------------------------------------- sections


def controls_table(frame: pd.DataFrame, options: Options) -> pd.DataFrame:
    """The negative controls (graph zero-gold cells, ImplicitHop broken chains, RECON abstention controls) per model,
    task and length, each with its own metric: false_positive_rate (every listed pair is false), not_found_accuracy,
    abstain_correct / false_answer_rate. Empty when no control doc was run."""
    tables = []
    for metric in CONTROL_METRICS:
        if metric not in frame:
            continue
        rows = frame[frame[metric].notna()]
        if not rows.empty:
            tables.append(summarize(rows, ["model", "task", "length"], (metric,), reps=options.reps,
                                    seed=options.seed))
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()


def overview_section(frame: pd.DataFrame, options: Options) -> Section:
    summary = model_summary(frame, options)
    by_task = summarize(frame, ["model", "task"], (*HEADLINE, "accuracy", "normalized_score", "truncated", "unparsed"),
                        reps=options.reps, seed=options.seed)
    controls = controls_table(frame, options)
    extra = (("negative_controls", controls),) if not controls.empty else ()
    headlines = headline.table(frame, options.reps, options.seed)
    # The models are named in the table below (their labels are outside text, escaped per cell), not in the prose.
    return Section("overview", "Per-model summary",
                   f"{len(frame)} docs re-scored from the sample logs of {frame['model'].nunique()} model(s) "
                   f"over {frame['task'].nunique()} task(s). Means with seeded bootstrap 95% CIs "
                   f"({options.reps} resamples of the docs). headline: the mean normalised score with equal weight per "
                   "task (RECON: per question category) inside each family, and per family overall (the lm-eval "
                   "umbrella's number). normalized_score: 0 = chance, 1 = perfect; truncated: "
                   "the output ended while thinking or filled its budget without an answer; unparsed: no readable "
                   "answer." + (" negative_controls: each control's own metric per length." if extra else ""),
                   tables=(("headline", headlines), ("summary_models", summary), ("by_task", by_task), *extra))


def length_section(frame: pd.DataFrame, options: Options) -> Section | None:
    lengths = length_table(frame, options)
    if lengths.empty:
        return None
    curves = summarize(frame[frame["task"].isin(lengths["task"])], ["model", "task", "length"], HEADLINE,
                       reps=options.reps, seed=options.seed)
    chance = chance_models(frame)
    warning, short = few_docs(curves, "the length curves"), few_docs(curves, short=True)
    figures = (Figure("length_memory_drift", "Memory drift against context length, per task; dotted: drift onset.",
                      plots.length_curves(curves, "memory_drift", _colors(frame), lengths), short),
               Figure("length_score", "Score against context length, per task.",
                      plots.length_curves(curves, "score", _colors(frame)), short))
    chance_note = (f" {_names(chance)}: the chance baseline; its onset and effective length read \"chance\" (its "
                   "curve has no level to lose)." if chance else "")
    return Section("length", "Drift onset and effective length",
                   f"Drift onset: the first length bin whose memory drift exceeds the shortest bin's by more than "
                   f"{options.onset_margin:g}. Effective length: the longest bin up to which the score stays at or "
                   f"above {options.effective_fraction:.0%} of the shortest bin's. Intervals resample each bin's "
                   "docs (none: no onset in that share of resamples); min_docs: the fewest docs in a bin of the "
                   "curve." + chance_note,
                   tables=(("length_onset", chance_marked(lengths, chance)), ("length_curves", curves)),
                   figures=figures, warnings=(warning,) if warning else ())


def graph_section(frame: pd.DataFrame, options: Options) -> Section | None:
    rows = frame[frame["family"] == GRAPH_FAMILY]
    if rows.empty:
        return None
    curves = summarize(rows, ["model", "task", "connections", "length"], HEADLINE, reps=options.reps,
                       seed=options.seed)
    summary = summarize(rows, ["model", "task"], HEADLINE, reps=options.reps, seed=options.seed)
    warning = few_docs(curves, "the graph curves")
    figures = [Figure(f"graph_{_slug(task)}", f"{task}: memory drift, precision, recall and F1 vs context length; "
                      "colour: model, line style: density (connections per prompt).",
                      plots.graph_panels(curves, task, _colors(frame)),
                      few_docs(curves[curves["task"] == task], short=True))
               for task in sorted(curves["task"].unique())]
    figures.append(Figure("graph_radar", "The four edge metrics of every model, per task.",
                          plots.radar(summary, _colors(frame))))
    return Section("graph", "Graph reconstruction (memory drift)",
                   "Memory drift, precision, recall and F1 of the listed connections against context length, per "
                   "density (the graph paper's figures 4-7).",
                   tables=(("graph_curves", curves), ("graph_summary", summary)), figures=tuple(figures),
                   warnings=(warning,) if warning else ())


def find_origin_section(frame: pd.DataFrame, options: Options) -> Section | None:
    rows = frame[frame["family"] == FIND_ORIGIN]
    if rows.empty:
        return None
    cells = summarize(rows, ["model", "task", "d", "length"], ("accuracy",), reps=options.reps, seed=options.seed)
    signs = sign_asymmetry(rows, options)
    warning = few_docs(cells, "the d x length cells")
    figures = tuple(Figure(f"fto_{_slug(task)}", f"{task}: accuracy over d x context length, one panel per model.",
                           plots.heatmap(group, str(task)), few_docs(group, short=True))
                    for task, group in cells.groupby("task", sort=True))
    return Section("find_the_origin", "Find the Origin",
                   "Accuracy over the signed line distance d and context length (paper 003, figures 1-3), and the "
                   "sign asymmetry: accuracy at +d (the later link below) minus at -d.",
                   tables=(("fto_d_length", cells), ("fto_sign_asymmetry", signs)), figures=figures,
                   warnings=(warning,) if warning else ())


def recon_section(frame: pd.DataFrame, options: Options) -> Section | None:
    rows = frame[frame["family"] == RECON]
    if rows.empty:
        return None
    metrics = ("score", "accuracy", "abstain_rate", "prompt_tokens")
    by_domain = summarize(rows, ["model", "category", "domain"], metrics, reps=options.reps, seed=options.seed)
    by_format = summarize(rows, ["model", "category", "format"], metrics, reps=options.reps, seed=options.seed)
    chains = rows[rows["category"] == "chain"]
    tables = [("recon_category_domain", by_domain), ("recon_category_format", by_format)]
    figures = []
    if not chains.empty:
        chain_curve = summarize(chains, ["model", "chain_hops"], ("score", "accuracy"), reps=options.reps,
                                seed=options.seed)
        tables.append(("recon_chain_length", chain_curve))
        figures.append(Figure("recon_chain_length", "Chain reconstruction: accuracy against chain length (links).",
                              plots.axis_curves(chain_curve, "chain_hops", "accuracy", "RECON chain length",
                                                "chain length (links)", _colors(frame)),
                              few_docs(chain_curve, short=True)))
    modes = failure_mode_table(rows) if "offered_failure_modes" in rows else pd.DataFrame()
    if not modes.empty:
        tables.append(("recon_failure_modes", modes))
        figures.append(Figure("recon_failure_modes", "How often a wrong option of each failure mode was taken when "
                              "offered.", plots.bars(modes, "failure_mode", "pick_rate", "RECON failure modes",
                                                _colors(frame)),
                              few_docs(modes.rename(columns={"offered": "n"}), short=True)))
    warning = few_docs(by_domain, "the category x domain cells")
    return Section("recon", "RECON case files",
                   "Score (the paper's rules: MCQ single +1 / -1/5 / abstain 0, MCQ multiple c/k - w/(n-k), ...), "
                   "strict accuracy and abstain rate per category x domain and per category x format (paper 001, "
                   "table 2), the chain-length curve (figure 5), and the failure modes of wrong choices.",
                   tables=tuple(tables), figures=tuple(figures), warnings=(warning,) if warning else ())


def not_found_table(frame: pd.DataFrame, options: Options) -> pd.DataFrame:
    """``not_found_accuracy`` per model and task: the score on the broken-chain rows (1 = the answer said NOT FOUND,
    0 = it named an entity: a hallucinated answer); empty when no row's chain breaks."""
    if "broken" not in frame:
        return pd.DataFrame()
    broken = frame[frame["broken"].eq(True)]
    if broken.empty:
        return pd.DataFrame()
    return summarize(broken.assign(not_found_accuracy=broken["score"]), ["model", "task"], ("not_found_accuracy",),
                     reps=options.reps, seed=options.seed)


def implicit_hop_section(frame: pd.DataFrame, options: Options) -> Section | None:
    rows = frame[frame["family"] == IMPLICIT_HOP]
    if rows.empty:
        return None
    axes = implicit_hop_axes(rows, options)
    not_found = not_found_table(rows, options)
    extra = (("implicit_hop_not_found", not_found),) if not not_found.empty else ()
    note = (" Broken chains (a required fact absent, the honest answer NOT FOUND): `not_found_accuracy` per task."
            if extra else "")
    if axes.empty:
        return Section("implicit_hop", "ImplicitHop",
                       "No ImplicitHop task in these runs varies one property alone." + note, tables=extra)
    labels = dict(IMPLICIT_HOP_AXES)
    figures = tuple(Figure(f"implicit_hop_{axis}", f"Score against {labels[axis]}, the other properties fixed "
                           f"({', '.join(sorted(group['task'].unique()))}).",
                           plots.axis_curves(group, "value", "score", f"ImplicitHop: {labels[axis]}", labels[axis],
                                             _colors(frame), log_x=axis == "length"),
                           few_docs(group, short=True))
                    for axis, group in axes.groupby("axis", sort=True))
    warning = few_docs(axes, "the property curves")
    return Section("implicit_hop", "ImplicitHop",
                   "Score against each property in the tasks that vary it alone, the others held fixed." + note,
                   tables=(("implicit_hop_axes", axes), *extra), figures=figures,
                   warnings=(warning,) if warning else ())


def matched_requests(frame: pd.DataFrame, options: Options, by: tuple[str, ...] = ()) -> pd.DataFrame:
    """Attention by discovery: per model and kind (and ``by``), the score of the rows whose request says nothing
    (discovery) next to their matched twins whose request says what to look for, over the pairs both runs hold;
    ``gap`` = request - discovery, its interval from resampling the pairs."""
    keys = ["model", "kind", *by]
    wide = frame.pivot_table(index=[*keys, "pair_key"], columns="request", values="score", aggfunc="first")
    if not {"discovery", "request"} <= set(wide.columns):
        return pd.DataFrame()
    pairs = wide.dropna(subset=["discovery", "request"]).reset_index()
    if pairs.empty:
        return pd.DataFrame()
    pairs["gap"] = pairs["request"] - pairs["discovery"]
    table = summarize(pairs, keys, ("discovery", "request", "gap"), reps=options.reps, seed=options.seed)
    return table.rename(columns={"n": "pairs"})


def discovery_section(frame: pd.DataFrame, options: Options) -> Section | None:
    rows = frame[frame["family"] == DISCOVERY]
    if rows.empty:
        return None
    pairs = matched_requests(rows, options)
    if pairs.empty:
        return Section("discovery", "Attention by discovery",
                       "These runs hold no matched pair (a discovery task with its `_request` twin) to compare.")
    by_length = matched_requests(rows, options, ("length",))
    warning = few_docs(by_length.rename(columns={"pairs": "n"}), "the pairs per length")
    return Section("discovery", "Attention by discovery",
                   "Each kind's score when the request says nothing about what is hidden (discovery) next to its "
                   "matched twin whose request says what to look for (request): the same text and answer, only the "
                   "request differs (seed 003, section 6). The gap is request minus discovery over the pairs both runs "
                   "hold; a model that finds what it is asked for but does not notice it unasked has a positive gap.",
                   tables=(("discovery_pairs", pairs), ("discovery_pairs_length", by_length)),
                   warnings=(warning,) if warning else ())


def judge_section(frame: pd.DataFrame, options: Options) -> Section | None:
    """Free-form answers re-graded by an LLM judge (``--judge``) beside the deterministic key-fact grade."""
    if "judge" not in frame:
        return None
    rows = frame[frame["answer_format"] == "free_form"]
    table = []
    for (model, category), group in rows.groupby(["model", "category"], sort=True):
        judged = group[group["judge"].notna()]
        table.append({"model": model, "category": category, "n": len(group),
                      "key_fact_score": float(group["score"].mean()),
                      "judge_score": float(judged["judge"].astype(float).mean()) if len(judged) else None,
                      "no_verdict": len(group) - len(judged),
                      "agreement": float((judged["judge"].astype(float) == judged["score"]).mean())
                      if len(judged) else None})
    return Section("judge", "Free form: key facts vs an LLM judge",
                   "Free-form answers graded by the deterministic key-fact rule and by the LLM judge of --judge.",
                   tables=(("free_form_judge", pd.DataFrame(table)),))


def glm_section(frame: pd.DataFrame, options: Options) -> Section:
    chance = chance_models(frame)
    tables, notes = glm_tables(frame[~frame["model"].isin(chance)] if chance else frame)
    if chance:
        notes.insert(0, f"{_names(chance)}: the chance baseline, left out of every fit (its scores carry no "
                        "property effect to estimate)")
    warnings = []
    fits = tables["glm_fits"]
    if not fits.empty:
        fitted = fits[fits["fitted"].astype(bool)]
        per_task = fitted["n_rows"] / fitted["n_tasks"].clip(lower=1)
        if (per_task < FEW_DOCS).any():
            warnings.append(f"few docs per bin: {int((per_task < FEW_DOCS).sum())} of {len(fitted)} fits rest on "
                            f"fewer than {FEW_DOCS} docs per task (as few as {int(per_task.min())}); their contrasts "
                            "are wide, and one whose CI excludes 0 may still be noise")
    figures = []
    contrasts = pd.concat([tables["glm_main"], tables["glm_per_model"]], ignore_index=True)
    if not contrasts.empty:
        properties = contrasts[contrasts["kind"] == "property"]
        if properties["contrast_pp"].notna().any():
            figures.append(Figure("glm_contrasts", "Interquartile contrasts of each property (percentage points, "
                                  "95% CI): all models together, and each model alone.",
                                  plots.forest(properties, "LURCH GLM: interquartile contrasts (black: all models)",
                                               _colors(frame)),
                                  "few docs per task: see the warning above" if warnings else ""))
    calibration = tables.get("glm_calibration")
    if calibration is not None and not calibration.empty:
        figures.append(Figure("glm_calibration", "Calibration of the GLM (all models): the mean observed outcome "
                              "against the mean predicted score in each tenth of [0, 1]; a calibrated model lies on "
                              "the diagonal.", plots.calibration(calibration, "LURCH GLM: calibration")))
    return Section("glm", "LURCH GLM",
                   "Fractional logit (binomial family, logit link; the response is the score clipped to [0, 1]) with "
                   "standardised log predictors (context length, evidence scope, evidence dispersion, reasoning "
                   "depth), task and model intercepts and standard errors clustered by instance (paper 004, table "
                   "1); a second fit adds length x property interactions with Holm-adjusted tests (table 2). "
                   "Contrasts are the mean change in predicted score between a property's 75th and 25th "
                   "percentile, in percentage points. The raw-scale fits (per e-fold of each property, centred at "
                   "4,096 tokens, scope 1%, dispersion 0.5, depth 2) give coefficients on the scale lurch-simulated "
                   "takes. Doubling contrasts (glm_doubling, paper table 7) are the mean change in predicted score "
                   "when a property doubles, over the rows where twice its value is still inside the analysed range "
                   "(share). glm_calibration bins the predictions (appendix G.1); glm_leave_one_task_out refits the "
                   "raw-scale model without each task and says whether each coefficient stays inside the full "
                   "fit's 95% CI (G.4); rq3_compounding groups the docs by how many of scope, dispersion and depth "
                   "are above their task's median and whether any is above its 90th percentile, each group's score "
                   "read against its task-model-length mean, beside what the additive GLM expects (glm_pp) (RQ3). "
                   "Notes: one line per fit, what it could not estimate and why.",
                   tables=tuple(tables.items()), figures=tuple(figures), notes=tuple(notes),
                   warnings=tuple(warnings))


def glm_tables(frame: pd.DataFrame) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """The paper's standardised fits (all models, interactions, per model) and the raw-scale fits, as tables; and
    every fit's notes folded into one line per fit (``fold_notes``), also the ``note`` column of ``glm_fits``."""
    from .compounding import compounding_table
    from .glm import calibration_rows, doubling_rows, fit_interactions, fit_main, fit_table, fitted_scores, lurch_glm
    from .stability import leave_one_task_out

    report = lurch_glm(frame)
    raw_main, raw_interactions = fit_main(frame, standardize=False), fit_interactions(frame, standardize=False)
    rows = report.tables()
    tables = {name: pd.DataFrame(rows[name]) for name in ("glm_main", "glm_interactions", "glm_per_model", "glm_fits")}
    tables["glm_raw_main"] = pd.DataFrame(fit_table(raw_main))
    tables["glm_raw_interactions"] = pd.DataFrame(fit_table(raw_interactions))
    tables["glm_doubling"] = pd.DataFrame([row for fit in (report.main, *report.per_model)
                                           for row in doubling_rows(fit)])
    tables["glm_calibration"] = pd.DataFrame(calibration_rows(report.main))
    tables["glm_leave_one_task_out"] = leave_one_task_out(frame)
    tables["rq3_compounding"] = compounding_table(frame, fitted_scores(frame, report.main))
    grouped: dict[tuple[str, str], list[str]] = {}
    for row in rows["glm_notes"]:
        grouped.setdefault((str(row["label"]), str(row["fit"])), []).append(str(row["note"]))
    folded = {key: fold_notes(lines) for key, lines in grouped.items()}
    if not tables["glm_fits"].empty:
        tables["glm_fits"]["note"] = [folded.get((str(label), str(fit)), "") for label, fit in
                                      zip(tables["glm_fits"]["label"], tables["glm_fits"]["fit"], strict=True)]
    notes = [f"{label} ({fit.replace('_', ' ')}): {note}" for (label, fit), note in folded.items()]
    return tables, notes


_LEVEL_NOTE = re.compile(r"^(task|model) (.+): every outcome is (\S+) \((\d+) rows\); its intercept is infinite, "
                         r"rows dropped$")
_TERM_NOTE = re.compile(r"^([\w:]+) is (constant|collinear)\b")
_NO_FIT = "no fit"


def fold_notes(notes: list[str]) -> str:
    """One fit's notes as one line: why there is no fit (if so) first, then the properties not estimable, the tasks
    or models left out for a score that never varies, and a count of numerical warnings."""
    levels: dict[tuple[str, str], list[str]] = {}
    terms: list[str] = []
    numeric = 0
    other: list[str] = []
    for note in notes:
        level, term = _LEVEL_NOTE.match(note), _TERM_NOTE.match(note)
        if level:
            levels.setdefault((level[1], level[3]), []).append(level[2])
        elif term:
            terms.append(f"{term[1]} ({term[2]})")
        elif note.startswith(("RuntimeWarning", "ConvergenceWarning", "DomainWarning", "UserWarning")):
            numeric += 1
        else:
            other.append(note)
    other.sort(key=lambda note: not note.endswith(_NO_FIT))  # the reason there is no fit leads
    parts = [note.removesuffix(f"; {_NO_FIT}") + " (not fitted)" if note.endswith(f"; {_NO_FIT}") else note
             for note in other]
    if terms:
        parts.append(f"{len(terms)} propert{'y' if len(terms) == 1 else 'ies'} not estimable: {', '.join(terms)}")
    for (factor, value), names in sorted(levels.items()):
        parts.append(f"{len(names)} {factor}{'' if len(names) == 1 else 's'} left out, every score {value} (no "
                     f"finite intercept): {', '.join(names)}")
    if numeric:
        parts.append(f"{numeric} numerical warning{'' if numeric == 1 else 's'}")
    return "; ".join(parts)


def systems_section(frame: pd.DataFrame, options: Options) -> Section | None:
    """Long-context, RAG, memory and Oracle systems side by side (``analysis.systems``): only with a lurch-rag run."""
    from .systems import systems_section as build

    return build(frame, options)  # type: ignore[return-value]


SECTIONS: tuple[Callable[[pd.DataFrame, Options], Section | None], ...] = (
    overview_section, length_section, graph_section, find_origin_section, recon_section, judge_section,
    implicit_hop_section, discovery_section, systems_section, glm_section)


def build_sections(frame: pd.DataFrame, options: Options, progress: Callable[[str], None] | None = None,
                   coverage: Mapping[str, str] | None = None) -> list[Section]:
    """Every section whose family is in the runs, led by the key findings read off their tables (and each model's
    ``coverage``: the families and lengths its headline covers and skipped)."""
    sections = []
    for build in SECTIONS:
        if progress is not None:
            progress(build.__name__.removesuffix("_section"))
        section = build(frame, options)
        if section is not None:
            sections.append(section)
    return [findings_section(sections, frame, coverage or {}), *sections]


# -------------------------------------------------------------------------------------------------- findings


def findings_section(sections: list[Section], frame: pd.DataFrame, coverage: Mapping[str, str]) -> Section:
    """One short block per model: its headline with CI, effective length and drift onset over the length tasks,
    and its strongest property effects from its own GLM fit (or why they are not estimable); a chance baseline
    gets its headline and the tag "chance" only. Above them, one line per section that rests on few docs."""
    tables = {name: table for section in sections for name, table in section.tables}
    chance = chance_models(frame)
    models = sorted(frame["model"].astype(str).unique(), key=lambda m: (m in chance, m))  # baselines last
    blocks = tuple(_model_block(model, tables, model in chance, coverage.get(model, "")) for model in models)
    thin = [section.title for section in sections if section.warnings]
    warnings = (f"few docs per bin (fewer than {FEW_DOCS}) in: {', '.join(thin)}; treat their curves, onsets and "
                "contrasts as a smoke test, not a measurement",) if thin else ()
    return Section("findings", "Key findings",
                   "Per model: the headline (chance-normalised, 0 = chance, 1 = perfect; 95% bootstrap CI), the "
                   "effective length and drift onset over the tasks with several length bins, and the strongest "
                   "property effects of the model's own GLM fit (interquartile contrast in percentage points, 95% "
                   "CI). The sections below hold the tables and figures.", blocks=blocks, warnings=warnings)


def _model_block(model: str, tables: dict[str, pd.DataFrame], chance: bool, covered: str = "") -> Block:
    lines = [_headline_line(model, tables.get("headline")) + (f" over {covered}" if covered else "")]
    if chance:
        lines.append("chance baseline (its run records a model that answers at random): the headline should be "
                     "near 0; no drift onset, effective length or property effect is drawn from it")
        return Block(model, tuple(line for line in lines if line), CHANCE)
    lines += _length_lines(model, tables.get("length_onset"))
    lines.append(_effects_line(model, tables.get("glm_fits"), tables.get("glm_per_model")))
    return Block(model, tuple(line for line in lines if line))


def _headline_line(model: str, table: pd.DataFrame | None) -> str:
    if table is None or table.empty or model not in set(table["model"].astype(str)):
        return ""
    row = table[table["model"].astype(str) == model].iloc[0]
    return f"headline {_ci(row['headline'], row['headline_lo'], row['headline_hi'], '.3f')}"


def _length_lines(model: str, table: pd.DataFrame | None) -> list[str]:
    if table is None or table.empty:
        return []
    rows = table[table["model"].astype(str) == model]
    if rows.empty:
        return []
    few = int(rows["min_docs"].min()) if "min_docs" in rows else FEW_DOCS
    caveat = f" (few docs: as few as {few} per bin)" if few < FEW_DOCS else ""
    effective = rows[rows["effective_length"].notna()]
    kept = effective[pd.to_numeric(effective["effective_length"]) >= effective["longest"]]
    if effective.empty:
        length_line = f"effective length: no task scores above 0 at its shortest bin ({len(rows)} length tasks)"
    elif len(kept) == len(effective):
        length_line = f"effective length: the longest bin on all {len(effective)} length tasks"
    else:
        worst = effective.loc[pd.to_numeric(effective["effective_length"]).idxmin()]
        shortest = _ci(worst["effective_length"], worst["effective_length_lo"], worst["effective_length_hi"], "tokens")
        length_line = (f"effective length: the longest bin on {len(kept)} of {len(effective)} length tasks; "
                       f"shortest {shortest} tokens on {worst['task']}")
    onsets = rows[rows["drift_onset"].notna()]
    if onsets.empty:
        onset_line = f"drift onset: none on {len(rows)} length tasks"
    else:
        first = onsets.loc[pd.to_numeric(onsets["drift_onset"]).idxmin()]
        onset_line = (f"drift onset on {len(onsets)} of {len(rows)} length tasks; earliest "
                      f"{_ci(first['drift_onset'], first['drift_onset_lo'], first['drift_onset_hi'], 'tokens')} "
                      f"tokens on {first['task']}")
    return [length_line + caveat, onset_line + caveat]


def _effects_line(model: str, fits: pd.DataFrame | None, terms: pd.DataFrame | None) -> str:
    if fits is None or fits.empty:
        return ""
    fit = fits[(fits["label"].astype(str) == model) & (fits["fit"] == "per_model")]
    if fit.empty:
        return ""
    fit = fit.iloc[0]
    if not bool(fit["fitted"]) or terms is None or terms.empty:
        reason = str(fit.get("note", "") or "").split("; ")[0].removesuffix(" (not fitted)").replace(": ", ", ")
        return "property effects not estimable" + (f": {reason}" if reason else "")
    rows = terms[(terms["label"].astype(str) == model) & (terms["kind"] == "property")
                 & terms["contrast_pp"].notna()]
    if rows.empty:
        return "property effects: not estimable (no property varies in this model's docs)"
    rows = rows.assign(size=rows["contrast_pp"].abs()).sort_values(["size", "term"], ascending=[False, True])
    shown = [f"{row.term} {_ci(row.contrast_pp, row.contrast_low, row.contrast_high, 'pp')} pp"
             for row in rows.head(2).itertuples()]
    clear = [row.term for row in rows.itertuples() if row.contrast_low > 0 or row.contrast_high < 0]
    from .properties import PREDICTORS

    missing = [p.name for p in PREDICTORS if p.name not in set(rows["term"])]
    verdict = (f"CI excludes 0 for {', '.join(clear)}" if clear else "every CI includes 0")
    tail = f"; not estimable: {', '.join(missing)}" if missing else ""
    return f"strongest property effects: {', '.join(shown)} ({verdict}){tail}"


def _ci(value: object, low: object, high: object, unit: str) -> str:
    """``value [low, high]``; bins in tokens as integers with thousands separators, +inf as "none"."""
    def shown(number: object) -> str:
        if number is None or (isinstance(number, float) and math.isnan(number)):
            return "?"
        number = float(number)  # type: ignore[arg-type]
        if math.isinf(number):
            return "none"
        if unit == "tokens":
            return f"{number:,.0f}"
        if unit == "pp":
            return f"{number:+.1f}"
        return format(number, unit)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "none"
    if unit == "tokens" and shown(low) == shown(high) == shown(value):
        return shown(value)  # every resample agrees: the interval adds nothing
    return f"{shown(value)} [{shown(low)}, {shown(high)}]"


def _names(models: set[str]) -> str:
    return ", ".join(sorted(models))


def _colors(frame: pd.DataFrame) -> dict[str, str]:
    return plots.palette(frame["model"].unique())


def _slug(text: str) -> str:
    """A file-name part for a label from the logs: ASCII letters, digits, ``-`` and ``_``, at most 48 characters;
    a label that had to be changed gets a hash of itself, so two labels never share a figure file."""
    text = str(text)
    slug = "".join(c if (c.isascii() and c.isalnum()) or c in "-_" else "-" for c in text).strip("-")[:48]
    if slug == text:
        return slug
    return f"{slug or 'model'}-{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


# ---------------------------------------------------------------------------------------------------- output


def write_report(loaded: Loaded, out: Path, options: Options = Options(),
                 progress: Callable[[str], None] | None = None) -> str:
    """Write every table as CSV, every figure as PNG under ``figures/``, ``summary.md`` and ``report.html`` into
    ``out``; return the short summary (per-model table) for the terminal."""
    from .render import render_html, render_markdown, short_summary, write_files

    sections = build_sections(loaded.frame, options, progress, dict(loaded.coverage))
    write_files(out, sections, render_markdown(sections, loaded.notes, loaded.headlines),
                render_html(sections, loaded.notes, options))
    return "\n".join([short_summary(sections), *(f"headline: {line}" for line in loaded.headlines)])
