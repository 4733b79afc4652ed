"""``lurch report``: lm-eval sample logs -> the source papers' tables and figures, drift onset, effective length
and the LURCH GLM, as CSV files, PNG figures, ``summary.md`` and one self-contained ``report.html``.

The report is built from one table of re-scored docs (``analysis.frame``). Each section exists only when its family
is in the runs. Every mean carries a seeded bootstrap 95% CI (``analysis.stats``); the same runs and options give
the same files.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
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
IMPLICIT_HOP_AXES = (("depth", "reasoning depth (hops)"), ("facts", "required facts (scope)"),
                     ("dispersion_target", "evidence dispersion (target)"), ("length", "context length (tokens)"))


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


@dataclass(frozen=True)
class Section:
    key: str
    title: str
    intro: str
    tables: tuple[tuple[str, pd.DataFrame], ...] = ()
    figures: tuple[Figure, ...] = ()
    notes: tuple[str, ...] = field(default=())


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
    intervals over each bin's docs. Onsets and lengths are bins in tokens; +inf in an interval means 'none'."""
    rows = []
    for (model, task), group in frame.groupby(["model", "task"], sort=True):
        bins = sorted(group["length"].unique())
        if len(bins) < 2:
            continue
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
        rows.append({"model": model, "task": task, "bins": len(bins), "shortest": int(bins[0]),
                     "longest": int(bins[-1]), "drift_at_shortest": float(np.mean(drift[0])),
                     "drift_at_longest": float(np.mean(drift[-1])),
                     "drift_onset": None if math.isinf(onset_value) else onset_value,
                     "drift_onset_lo": onset_low, "drift_onset_hi": onset_high,
                     "score_at_shortest": float(np.mean(score[0])), "score_at_longest": float(np.mean(score[-1])),
                     "effective_length": None if math.isnan(eff_value) else eff_value,
                     "effective_length_lo": eff_low, "effective_length_hi": eff_high})
    return pd.DataFrame(rows)


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
    figures = (Figure("length_memory_drift", "Memory drift against context length, per task; dotted: drift onset.",
                      plots.length_curves(curves, "memory_drift", _colors(frame), lengths)),
               Figure("length_score", "Score against context length, per task.",
                      plots.length_curves(curves, "score", _colors(frame))))
    return Section("length", "Drift onset and effective length",
                   f"Drift onset: the first length bin whose memory drift exceeds the shortest bin's by more than "
                   f"{options.onset_margin:g}. Effective length: the longest bin up to which the score stays at or "
                   f"above {options.effective_fraction:.0%} of the shortest bin's. Intervals resample each bin's "
                   "docs (inf: no onset in that share of resamples).",
                   tables=(("length_onset", lengths), ("length_curves", curves)), figures=figures)


def graph_section(frame: pd.DataFrame, options: Options) -> Section | None:
    rows = frame[frame["family"] == GRAPH_FAMILY]
    if rows.empty:
        return None
    curves = summarize(rows, ["model", "task", "connections", "length"], HEADLINE, reps=options.reps,
                       seed=options.seed)
    summary = summarize(rows, ["model", "task"], HEADLINE, reps=options.reps, seed=options.seed)
    figures = [Figure(f"graph_{_slug(task)}_{_slug(model)}", f"{task}, {model}: memory drift, precision, recall and F1 "
                      "vs context length, one line per density (connections per prompt).",
                      plots.graph_panels(curves, task, model))
               for task in sorted(rows["task"].unique()) for model in sorted(rows["model"].unique())
               if not curves[(curves["task"] == task) & (curves["model"] == model)].empty]
    figures += [Figure(f"radar_{_slug(task)}", f"{task}: the four edge metrics of every model.",
                       plots.radar(summary, task, _colors(frame))) for task in sorted(rows["task"].unique())]
    return Section("graph", "Graph reconstruction (memory drift)",
                   "Memory drift, precision, recall and F1 of the listed connections against context length, per "
                   "density (the graph paper's figures 4-7).",
                   tables=(("graph_curves", curves), ("graph_summary", summary)), figures=tuple(figures))


def find_origin_section(frame: pd.DataFrame, options: Options) -> Section | None:
    rows = frame[frame["family"] == FIND_ORIGIN]
    if rows.empty:
        return None
    cells = summarize(rows, ["model", "task", "d", "length"], ("accuracy",), reps=options.reps, seed=options.seed)
    signs = sign_asymmetry(rows, options)
    figures = tuple(Figure(f"fto_{_slug(task)}_{_slug(model)}", f"{task}, {model}: accuracy over d x context length.",
                           plots.heatmap(group, f"{task} — {model}"))
                    for (task, model), group in cells.groupby(["task", "model"], sort=True))
    return Section("find_the_origin", "Find the Origin",
                   "Accuracy over the signed line distance d and context length (paper 003, figures 1-3), and the "
                   "sign asymmetry: accuracy at +d (the later link below) minus at -d.",
                   tables=(("fto_d_length", cells), ("fto_sign_asymmetry", signs)), figures=figures)


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
                                                "chain length (links)", _colors(frame))))
    modes = failure_mode_table(rows) if "offered_failure_modes" in rows else pd.DataFrame()
    if not modes.empty:
        tables.append(("recon_failure_modes", modes))
        figures.append(Figure("recon_failure_modes", "How often a wrong option of each failure mode was taken when "
                              "offered.", plots.bars(modes, "failure_mode", "pick_rate", "RECON failure modes",
                                                _colors(frame))))
    return Section("recon", "RECON case files",
                   "Score (the paper's rules: MCQ single +1 / -1/5 / abstain 0, MCQ multiple c/k - w/(n-k), ...), "
                   "strict accuracy and abstain rate per category x domain and per category x format (paper 001, "
                   "table 2), the chain-length curve (figure 5), and the failure modes of wrong choices.",
                   tables=tuple(tables), figures=tuple(figures))


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
                                             _colors(frame), log_x=axis == "length"))
                    for axis, group in axes.groupby("axis", sort=True))
    return Section("implicit_hop", "ImplicitHop",
                   "Score against each property in the tasks that vary it alone, the others held fixed." + note,
                   tables=(("implicit_hop_axes", axes), *extra), figures=figures)


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
    tables, notes = glm_tables(frame)
    figures = []
    contrasts = pd.concat([tables["glm_main"], tables["glm_per_model"]], ignore_index=True)
    if not contrasts.empty:
        properties = contrasts[contrasts["kind"] == "property"]
        if properties["contrast_pp"].notna().any():
            figures.append(Figure("glm_contrasts", "Interquartile contrasts of each property (percentage points, "
                                  "95% CI): all models together, and each model alone.",
                                  plots.forest(properties, "LURCH GLM: interquartile contrasts (black: all models)",
                                               _colors(frame))))
    return Section("glm", "LURCH GLM",
                   "Fractional logit (binomial family, logit link; the response is the score clipped to [0, 1]) with "
                   "standardised log predictors (context length, evidence scope, evidence dispersion, reasoning "
                   "depth), task and model intercepts and standard errors clustered by instance (paper 004, table "
                   "1); a second fit adds length x property interactions with Holm-adjusted tests (table 2). "
                   "Contrasts are the mean change in predicted score between a property's 75th and 25th "
                   "percentile, in percentage points. The raw-scale fits (per e-fold of each property, centred at "
                   "4,096 tokens, scope 1%, dispersion 0.5, depth 2) give coefficients on the scale lurch-simulated "
                   "takes.",
                   tables=tuple(tables.items()), figures=tuple(figures), notes=tuple(notes))


def glm_tables(frame: pd.DataFrame) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """The paper's standardised fits (all models, interactions, per model) and the raw-scale fits, as tables; and
    every fit's notes (terms dropped, fits skipped), one line each."""
    from .glm import fit_interactions, fit_main, fit_table, lurch_glm

    report = lurch_glm(frame)
    raw_main, raw_interactions = fit_main(frame, standardize=False), fit_interactions(frame, standardize=False)
    rows = report.tables()
    tables = {name: pd.DataFrame(rows[name]) for name in ("glm_main", "glm_interactions", "glm_per_model", "glm_fits")}
    tables["glm_raw_main"] = pd.DataFrame(fit_table(raw_main))
    tables["glm_raw_interactions"] = pd.DataFrame(fit_table(raw_interactions))
    notes = [f"{row['label']} ({row['fit']}): {row['note']}" for row in rows["glm_notes"]]
    return tables, notes


SECTIONS: tuple[Callable[[pd.DataFrame, Options], Section | None], ...] = (
    overview_section, length_section, graph_section, find_origin_section, recon_section, judge_section,
    implicit_hop_section, glm_section)


def build_sections(frame: pd.DataFrame, options: Options,
                   progress: Callable[[str], None] | None = None) -> list[Section]:
    sections = []
    for build in SECTIONS:
        if progress is not None:
            progress(build.__name__.removesuffix("_section"))
        section = build(frame, options)
        if section is not None:
            sections.append(section)
    return sections


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

    sections = build_sections(loaded.frame, options, progress)
    write_files(out, sections, render_markdown(sections, loaded.notes, loaded.headlines),
                render_html(sections, loaded.notes, options, loaded.headlines))
    return "\n".join([short_summary(sections), *(f"headline: {line}" for line in loaded.headlines)])
