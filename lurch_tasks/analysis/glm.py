"""The LURCH fractional-logit GLM ("Beyond Context Length", §5): how much each difficulty property moves a score.

The model, for row i (one model's score on one instance):

    logit E[outcome_i] = a_task(i) + a_model(i) + sum_k b_k z_ik  [+ sum_k c_k z_i,length z_ik   (RQ2)]

``outcome`` is a score in [0, 1] (0/1 accuracy or a fractional score), fitted by Bernoulli quasi-likelihood
(statsmodels ``GLM``, binomial family, logit link; the fractional logit of Papke and Wooldridge). ``z_ik`` is the
raw value of property k (``properties.Predictor.raw``: a natural log centred at a reference instance), standardised
to mean 0 / SD 1 (sample SD) over the analysed rows, or left raw with ``standardize=False`` so a slope is per e-fold
of the property and the intercept is the log-odds at the reference instance; that is the scale on which the
simulated model's coefficients are set and recovered. Task and model intercepts are treatment-coded (reference =
the first level in sorted order, absorbed in ``intercept``). The same instance is scored once per model, so standard
errors are cluster-robust by instance; the quasi-likelihood needs no dispersion parameter under that sandwich.

Effects are also reported on the probability scale: a property's interquartile contrast is the mean over the
analysed rows of P(property at its Q3) - P(property at its Q1), every other term at the row's own values, in
percentage points, with a delta-method 95% CI from the cluster-robust covariance. For RQ2, the length contrast is
evaluated with a property fixed at its Q1 for every row and at its Q3, and the two are differenced.

Degenerate data never raise: a constant or collinear property is dropped, a task or model whose every score is 0
(or every score 1) has no finite intercept and is dropped, and too few rows, separation, non-convergence or a
statsmodels failure leave the fit without terms. Each of these is a one-line note on the fit.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.genmod import families
from statsmodels.genmod.generalized_linear_model import GLM
from statsmodels.stats.multitest import multipletests
from statsmodels.tools.sm_exceptions import PerfectSeparationWarning

from .properties import BY_NAME, INTERACTIONS, PREDICTORS

OUTCOME, MODEL, TASK, INSTANCE = "outcome", "model", "task", "instance"
REQUIRED: tuple[str, ...] = (OUTCOME, MODEL, TASK, INSTANCE, *(p.field for p in PREDICTORS))
INTERCEPT = "intercept"
Z95 = float(stats.norm.ppf(0.975))
SPARE_ROWS = 5  # a fit needs at least this many rows beyond its parameter count
# |log-odds| beyond this (P within 3e-7 of the bound) on a row scored at that bound means an estimate ran off to
# infinity while IRLS still reported convergence: quasi-complete separation
SEPARATION_LOGIT = 15.0
IRLS_TOL = 1e-10


@dataclass(frozen=True)
class Interval:
    """An estimate with its delta-method standard error and 95% CI."""

    estimate: float
    se: float
    low: float
    high: float


@dataclass(frozen=True)
class Term:
    name: str  # "intercept", "task[T.x]", "model[T.y]", a property ("depth") or an interaction ("length:depth")
    kind: str  # "intercept", "property" or "interaction"
    coef: float
    se: float  # cluster-robust
    ci_low: float
    ci_high: float
    p: float
    p_holm: float | None = None  # interaction terms: Holm-adjusted over the fit's interaction tests
    contrast: Interval | None = None  # property terms: interquartile contrast in percentage points


@dataclass(frozen=True)
class LengthByProperty:
    """RQ2 on the probability scale: the length IQR contrast (pp) with ``prop`` at its Q1 and at its Q3."""

    prop: str
    at_low: Interval
    at_high: Interval
    difference: Interval  # at_high - at_low


@dataclass(frozen=True)
class Doubling:
    """A property doubled (paper 004, table 7): the mean change in predicted score, in percentage points, over the
    rows whose doubled value stays inside the analysed range (``share`` of the rows)."""

    prop: str
    contrast: Interval
    share: float


@dataclass(frozen=True)
class CalibrationBin:
    """Rows whose predicted score falls in [low, high): their mean prediction and mean observed outcome (G.1)."""

    low: float
    high: float
    n: int
    predicted: float
    observed: float


@dataclass(frozen=True)
class Scale:
    """A property's raw (centred log) distribution over the analysed rows."""

    name: str
    mean: float
    sd: float  # sample SD (ddof=1): a standardised slope is the raw slope times this
    q1: float
    q3: float


@dataclass(frozen=True, eq=False)  # holds arrays: identity, not element-wise, equality
class Design:
    """The analysed rows as a model matrix, with what was dropped on the way."""

    x: pd.DataFrame  # columns: intercept, task dummies, model dummies, properties, interactions
    kinds: tuple[str, ...]  # per column of x
    y: np.ndarray
    groups: np.ndarray  # integer cluster codes of the instance column
    scales: tuple[Scale, ...]  # the properties kept in x
    values: Mapping[str, np.ndarray]  # per kept property: its recorded value on each analysed row (doubling)
    standardized: bool
    n_models: int
    n_tasks: int
    notes: tuple[str, ...]


@dataclass(frozen=True)
class GlmFit:
    label: str
    spec: str  # "main" (RQ1, Table 1) or "interactions" (RQ2, Table 2)
    standardized: bool
    n_rows: int
    n_clusters: int
    n_models: int
    n_tasks: int
    terms: tuple[Term, ...]  # empty when no sound fit was possible (see notes)
    length_by_property: tuple[LengthByProperty, ...]
    scales: tuple[Scale, ...]
    notes: tuple[str, ...]
    doublings: tuple[Doubling, ...] = ()  # main fits: each property doubled
    calibration: tuple[CalibrationBin, ...] = ()  # main fits: predicted vs observed, by predicted decile bin

    @property
    def fitted(self) -> bool:
        return bool(self.terms)

    def term(self, name: str) -> Term | None:
        return next((t for t in self.terms if t.name == name), None)


@dataclass(frozen=True)
class GlmReport:
    main: GlmFit
    interactions: GlmFit
    per_model: tuple[GlmFit, ...]

    def tables(self) -> dict[str, list[dict]]:
        """Plain rows for CSV/HTML: ``glm_fits``, ``glm_main``, ``glm_interactions``, ``glm_per_model``,
        ``glm_notes``."""
        fits = [("main", self.main), ("interactions", self.interactions)]
        fits += [("per_model", f) for f in self.per_model]
        return {
            "glm_fits": [_fit_row(name, f) for name, f in fits],
            "glm_main": _term_rows(self.main, holm=False),
            "glm_interactions": _term_rows(self.interactions, holm=True) + _length_rows(self.interactions),
            "glm_per_model": [row for f in self.per_model for row in _term_rows(f, holm=False)],
            "glm_notes": [{"label": f.label, "fit": name, "note": note} for name, f in fits for note in f.notes],
        }


TERM_COLUMNS: tuple[str, ...] = ("label", "term", "kind", "coef", "se", "ci_low", "ci_high", "p", "contrast_pp",
                                 "contrast_low", "contrast_high")
INTERACTION_COLUMNS: tuple[str, ...] = (*TERM_COLUMNS[:8], "p_holm", *TERM_COLUMNS[8:])


# ---------------------------------------------------------------- public API


def fit_main(frame: pd.DataFrame, *, standardize: bool = True, label: str = "all") -> GlmFit:
    """RQ1 (Table 1): main effects of the four properties, task and model intercepts, cluster-robust SEs."""
    return _fit(frame, standardize=standardize, label=label, interactions=False, single_model_note=True)


def fit_interactions(frame: pd.DataFrame, *, standardize: bool = True, label: str = "all") -> GlmFit:
    """RQ2 (Table 2): main effects plus length x scope / dispersion / depth, Holm-adjusted over the three tests."""
    return _fit(frame, standardize=standardize, label=label, interactions=True, single_model_note=True)


def per_model(frame: pd.DataFrame, *, standardize: bool = True) -> list[GlmFit]:
    """``fit_main`` on each model's rows (sorted by model name; label = model). Properties are standardised within
    the model's rows."""
    names = sorted(set(frame[MODEL].dropna().astype(str))) if MODEL in frame.columns else []
    return [_fit(frame[frame[MODEL].astype(str) == name], standardize=standardize, label=name, interactions=False,
                 single_model_note=False) for name in names]


def lurch_glm(frame: pd.DataFrame, *, standardize: bool = True) -> GlmReport:
    return GlmReport(main=fit_main(frame, standardize=standardize),
                     interactions=fit_interactions(frame, standardize=standardize),
                     per_model=tuple(per_model(frame, standardize=standardize)))


def fit_table(fit: GlmFit) -> list[dict]:
    """Plain rows of one fit's terms; an interaction fit adds ``p_holm`` and its length-by-property rows."""
    if fit.spec == "interactions":
        return _term_rows(fit, holm=True) + _length_rows(fit)
    return _term_rows(fit, holm=False)


def fitted_scores(frame: pd.DataFrame, fit: GlmFit | None = None) -> pd.Series:
    """The main fit's predicted score for each analysed row, indexed as ``frame`` (empty without a fit)."""
    fit = fit if fit is not None else fit_main(frame)
    if not fit.fitted:
        return pd.Series(dtype=float)
    design = build_design(frame, standardize=fit.standardized)
    params = np.array([fit.term(column).coef for column in design.x.columns])
    return pd.Series(_logistic(design.x.to_numpy() @ params), index=design.x.index)


def build_design(frame: pd.DataFrame, *, standardize: bool = True, interactions: bool = False) -> Design:
    """The model matrix the fits use: cleaned rows, kept columns and the notes on what was dropped.

    Raises ValueError only when a required column is missing (a caller's bug, not a property of the data)."""
    return _design(frame, standardize=standardize, interactions=interactions, single_model_note=True)


# ---------------------------------------------------------------- design


def _design(frame: pd.DataFrame, *, standardize: bool, interactions: bool, single_model_note: bool) -> Design:
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        raise ValueError(f"GLM input lacks column(s) {', '.join(missing)}; needs {', '.join(REQUIRED)}")
    data, notes = _clean(frame)
    data, level_notes = _drop_separated_levels(data)
    notes += level_notes
    y = data[OUTCOME].to_numpy(dtype=float)
    columns: dict[str, np.ndarray] = {INTERCEPT: np.ones(len(data))}
    kinds: dict[str, str] = {INTERCEPT: "intercept"}
    n_levels = {}
    for factor in (TASK, MODEL):
        levels = sorted(set(data[factor]))
        n_levels[factor] = len(levels)
        if len(levels) == 1 and (factor == TASK or single_model_note):
            notes.append(f"only one {factor} ({levels[0]}); no {factor} intercepts")
        for level in levels[1:]:  # treatment coding: the first level is the reference
            columns[f"{factor}[T.{level}]"] = (data[factor] == level).to_numpy(dtype=float)
            kinds[f"{factor}[T.{level}]"] = "intercept"
    scales: list[Scale] = []
    for predictor in PREDICTORS:
        values = data[predictor.field].to_numpy(dtype=float)
        raw = np.fromiter((predictor.raw(v) for v in values), dtype=float, count=len(values))
        if len(raw) == 0:
            continue
        if np.ptp(raw) < 1e-12:
            notes.append(f"{predictor.name} is constant ({predictor.field} = {values[0]:g}) in the data; term dropped"
                         + _with_interactions(predictor.name, interactions))
            continue
        q1, q3 = (float(q) for q in np.percentile(raw, [25, 75]))
        scale = Scale(predictor.name, float(raw.mean()), float(raw.std(ddof=1)), q1, q3)
        scales.append(scale)
        columns[predictor.name] = (raw - scale.mean) / scale.sd if standardize else raw
        kinds[predictor.name] = "property"
    if interactions:
        for term in INTERACTIONS:
            left, right = term.split(":")
            if left in columns and right in columns:
                columns[term] = columns[left] * columns[right]
                kinds[term] = "interaction"
    keep, rank_notes = _independent(columns, kinds, interactions)
    notes += rank_notes
    x = pd.DataFrame({name: columns[name] for name in keep}, index=data.index)
    return Design(x=x, kinds=tuple(kinds[name] for name in keep), y=y,
                  groups=pd.factorize(data[INSTANCE])[0].astype(np.int64),
                  scales=tuple(s for s in scales if s.name in keep),
                  values={s.name: data[BY_NAME[s.name].field].to_numpy(dtype=float) for s in scales if s.name in keep},
                  standardized=standardize,
                  n_models=n_levels[MODEL], n_tasks=n_levels[TASK], notes=tuple(notes))


def _clean(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Required columns only; rows with a missing id, outcome or predictor, or an outcome outside [0, 1], dropped."""
    data = pd.DataFrame(index=frame.index)
    for column in (OUTCOME, *(p.field for p in PREDICTORS)):
        data[column] = pd.to_numeric(frame[column], errors="coerce").astype(float)
    ids_missing = frame[[MODEL, TASK, INSTANCE]].isna().any(axis=1).to_numpy()
    for column in (MODEL, TASK, INSTANCE):
        data[column] = frame[column].astype(str)
    numeric = data[[OUTCOME, *(p.field for p in PREDICTORS)]].to_numpy()
    missing = ids_missing | ~np.isfinite(numeric).all(axis=1)
    outside = ~missing & ((data[OUTCOME] < 0) | (data[OUTCOME] > 1)).to_numpy()
    notes = []
    if missing.any():
        notes.append(f"{int(missing.sum())} of {len(data)} rows dropped: missing outcome, predictor or id")
    if outside.any():
        notes.append(f"{int(outside.sum())} rows dropped: outcome outside [0, 1]")
    return data[~(missing | outside)], notes


def _drop_separated_levels(data: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Drop each task or model whose every outcome is 0 (or every one 1) while the others vary: its intercept has
    no finite estimate, and its rows carry no information on the slopes at that limit, so dropping them gives the
    other estimates' limit. Repeated, since dropping one level can leave another at a bound."""
    notes: list[str] = []
    while data[OUTCOME].nunique() > 1:
        dropped = False
        for factor in (TASK, MODEL):
            if data[factor].nunique() < 2:
                continue
            bounds = data.groupby(factor)[OUTCOME].agg(["min", "max", "size"])
            for level, row in bounds.sort_index().iterrows():
                if row["min"] == row["max"] and row["min"] in (0.0, 1.0):
                    notes.append(f"{factor} {level}: every outcome is {row['min']:g} ({int(row['size'])} rows); "
                                 f"its intercept is infinite, rows dropped")
                    data = data[data[factor] != level]
                    dropped = True
                    break
            if dropped:
                break
        if not dropped:
            break
    return data, notes


def _with_interactions(name: str, interactions: bool) -> str:
    gone = [t for t in INTERACTIONS if name in t.split(":")] if interactions else []
    return f" (with {', '.join(gone)})" if gone else ""


def _independent(columns: Mapping[str, np.ndarray], kinds: Mapping[str, str],
                 interactions: bool) -> tuple[list[str], list[str]]:
    """Columns kept in order, each only if it raises the rank (intercepts first, so a property that is a function
    of the task, e.g. one length per task, is the one dropped); a dropped property takes its interactions along."""
    if not len(columns[INTERCEPT]):
        return list(columns), []
    keep: list[str] = []
    notes: list[str] = []
    dropped: set[str] = set()
    for name in columns:
        if kinds[name] == "interaction" and any(part in dropped for part in name.split(":")):
            continue
        candidate = keep + [name]
        # unit-norm columns, so the rank tolerance does not depend on a property's scale
        matrix = np.column_stack([columns[c] / max(np.linalg.norm(columns[c]), 1e-300) for c in candidate])
        if np.linalg.matrix_rank(matrix) == len(candidate):
            keep.append(name)
            continue
        dropped.add(name)
        if kinds[name] == "property":
            notes.append(f"{name} is collinear with the task/model intercepts or other properties; term dropped"
                         + _with_interactions(name, interactions))
        else:
            notes.append(f"{name} is collinear with the terms before it; dropped")
    return keep, notes


# ---------------------------------------------------------------- fit


@dataclass(frozen=True, eq=False)
class _Estimate:
    params: np.ndarray
    se: np.ndarray
    p: np.ndarray
    cov: np.ndarray


def _fit(frame: pd.DataFrame, *, standardize: bool, label: str, interactions: bool,
         single_model_note: bool) -> GlmFit:
    design = _design(frame, standardize=standardize, interactions=interactions, single_model_note=single_model_note)
    estimate, fit_notes = _estimate(design)
    terms: tuple[Term, ...] = ()
    by_property: tuple[LengthByProperty, ...] = ()
    doublings: tuple[Doubling, ...] = ()
    calibration: tuple[CalibrationBin, ...] = ()
    if estimate is not None:
        terms = _terms(design, estimate)
        by_property = _length_by_property(design, estimate) if interactions else ()
        if not interactions:
            doublings, calibration = _doublings(design, estimate), _calibration(design, estimate)
    return GlmFit(label=label, spec="interactions" if interactions else "main", standardized=standardize,
                  n_rows=len(design.y), n_clusters=len(np.unique(design.groups)), n_models=design.n_models,
                  n_tasks=design.n_tasks, terms=terms, length_by_property=by_property, scales=design.scales,
                  notes=design.notes + tuple(fit_notes), doublings=doublings, calibration=calibration)


def _estimate(design: Design) -> tuple[_Estimate | None, list[str]]:
    """The cluster-robust fit, or None with the reason; statsmodels' warnings become notes."""
    y, x = design.y, design.x.to_numpy()
    n, k = x.shape
    n_clusters = len(np.unique(design.groups))
    if n == 0:
        return None, ["no rows to analyse; no fit"]
    if np.all(y == y[0]):
        return None, [f"every outcome is {y[0]:g} ({n} rows): the log-odds are not identified; no fit"]
    if n_clusters < 2:
        return None, [f"{n_clusters} instance cluster(s): cluster-robust SEs need at least 2; no fit"]
    if n < k + SPARE_ROWS:
        return None, [f"{n} rows for {k} parameters (need at least {k + SPARE_ROWS}); no fit"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            # tol tighter than the default 1e-8, so reparametrised fits agree to ~1e-8 rather than ~1e-6
            result = GLM(y, x, family=families.Binomial()).fit(tol=IRLS_TOL, cov_type="cluster",
                                                               cov_kwds={"groups": design.groups})
            params, se, p = (np.asarray(v, dtype=float) for v in (result.params, result.bse, result.pvalues))
            cov, converged = np.asarray(result.cov_params(), dtype=float), bool(result.converged)
        except Exception as err:  # any statsmodels/numpy failure is a note, never a crash
            return None, [f"fit failed ({type(err).__name__}: {_one_line(err)}); no fit"]
    notes = _warning_notes(caught)
    if any(issubclass(w.category, PerfectSeparationWarning) for w in caught):
        return None, notes + ["perfect separation: the outcome is predicted exactly; estimates not identified; no fit"]
    if np.isfinite(params).all():  # checked first: separation is the usual cause of the failures below
        logit = x @ params
        separated = ((logit > SEPARATION_LOGIT) & (y == 1)) | ((logit < -SEPARATION_LOGIT) & (y == 0))
        if separated.any():
            return None, notes + [f"quasi-complete separation: {int(separated.sum())} rows fitted within 3e-7 of "
                                  f"their 0/1 outcome; estimates not identified; no fit"]
    if not converged:
        return None, notes + ["IRLS did not converge; no fit"]
    if not (np.isfinite(params).all() and np.isfinite(se).all() and np.isfinite(cov).all()):
        return None, notes + ["non-finite estimates or standard errors; no fit"]
    if n_clusters - 1 < k:
        notes.append(f"{n_clusters} instance clusters for {k} parameters: the cluster-robust covariance is "
                     f"singular; SEs unreliable")
    return _Estimate(params=params, se=se, p=p, cov=cov), notes


def _warning_notes(caught: Sequence[warnings.WarningMessage]) -> list[str]:
    seen: list[str] = []
    for w in caught:
        if issubclass(w.category, PerfectSeparationWarning):
            continue  # reported by the caller with its consequence
        note = f"{w.category.__name__}: {_one_line(w.message)}"
        if note not in seen:
            seen.append(note)
    return seen


def _one_line(message: object) -> str:
    return " ".join(str(message).split())[:200]


# ---------------------------------------------------------------- terms and contrasts


def _terms(design: Design, est: _Estimate) -> tuple[Term, ...]:
    names = list(design.x.columns)
    interaction_idx = [i for i, kind in enumerate(design.kinds) if kind == "interaction"]
    holm: dict[int, float] = {}
    if interaction_idx:
        adjusted = multipletests(est.p[interaction_idx], method="holm")[1]
        holm = dict(zip(interaction_idx, map(float, adjusted), strict=True))
    scales = {s.name: s for s in design.scales}
    terms = []
    for i, (name, kind) in enumerate(zip(names, design.kinds, strict=True)):
        contrast = None
        if kind == "property":
            low, high = _quartiles(scales[name], design.standardized)
            contrast = _contrast(design, est, [(1.0, {name: high}), (-1.0, {name: low})])
        coef, se = float(est.params[i]), float(est.se[i])
        terms.append(Term(name=name, kind=kind, coef=coef, se=se, ci_low=coef - Z95 * se, ci_high=coef + Z95 * se,
                          p=float(est.p[i]), p_holm=holm.get(i), contrast=contrast))
    return tuple(terms)


def _length_by_property(design: Design, est: _Estimate) -> tuple[LengthByProperty, ...]:
    scales = {s.name: s for s in design.scales}
    if "length" not in scales:
        return ()
    length_low, length_high = _quartiles(scales["length"], design.standardized)
    out = []
    for term in INTERACTIONS:
        prop = term.split(":")[1]
        if term not in design.x.columns:
            continue  # without the product term the difference would be the link's curvature alone
        low, high = _quartiles(scales[prop], design.standardized)

        def length_iqr(at: float, sign: float = 1.0, prop: str = prop) -> list[tuple[float, dict[str, float]]]:
            return [(sign, {"length": length_high, prop: at}), (-sign, {"length": length_low, prop: at})]

        out.append(LengthByProperty(prop=prop, at_low=_contrast(design, est, length_iqr(low)),
                                    at_high=_contrast(design, est, length_iqr(high)),
                                    difference=_contrast(design, est, length_iqr(high) + length_iqr(low, -1.0))))
    return tuple(out)


def _quartiles(scale: Scale, standardized: bool) -> tuple[float, float]:
    """A property's Q1 and Q3 on the design's scale (the standardisation is affine, so quantiles map across)."""
    if not standardized:
        return scale.q1, scale.q3
    return (scale.q1 - scale.mean) / scale.sd, (scale.q3 - scale.mean) / scale.sd


def _contrast(design: Design, est: _Estimate, parts: Sequence[tuple[float, Mapping[str, float]]]) -> Interval:
    """``100 * sum(weight * mean_i P_i(properties set))`` and its delta-method interval: the gradient of a mean
    logistic probability is the mean of p(1-p) x."""
    value, gradient = 0.0, np.zeros(len(est.params))
    for weight, setting in parts:
        x = _set_properties(design.x, setting)
        prob = _logistic(x @ est.params)
        value += weight * float(prob.mean())
        gradient += weight * (prob * (1.0 - prob)) @ x / len(prob)
    se = math.sqrt(max(float(gradient @ est.cov @ gradient), 0.0)) * 100.0
    return Interval(estimate=100.0 * value, se=se, low=100.0 * value - Z95 * se, high=100.0 * value + Z95 * se)


CALIBRATION_BINS = 10


def _doublings(design: Design, est: _Estimate) -> tuple[Doubling, ...]:
    """Each property doubled on every row where twice its value is still inside the analysed range (the paper's
    doubling contrasts cover such rows only), every other term at the row's own values."""
    out = []
    for scale in design.scales:
        predictor, values = BY_NAME[scale.name], design.values[scale.name]
        eligible = (values > 0) & (2.0 * values <= values.max())  # doubling 0 changes nothing
        if not eligible.any():
            continue
        doubled = np.fromiter((predictor.raw(2.0 * v) for v in values[eligible]), dtype=float)
        column = (doubled - scale.mean) / scale.sd if design.standardized else doubled
        base = design.x[eligible]
        changed = base.copy()
        changed[scale.name] = column
        for name in changed.columns:  # interaction columns follow the doubled property
            parts = name.split(":")
            if len(parts) == 2 and scale.name in parts:
                changed[name] = changed[parts[0]] * changed[parts[1]]
        out.append(Doubling(scale.name, _paired_contrast(base.to_numpy(), changed.to_numpy(), est),
                            float(eligible.mean())))
    return tuple(out)


def _paired_contrast(before: np.ndarray, after: np.ndarray, est: _Estimate) -> Interval:
    """``100 * mean_i (P(after_i) - P(before_i))`` with its delta-method interval."""
    p_before, p_after = _logistic(before @ est.params), _logistic(after @ est.params)
    value = float((p_after - p_before).mean())
    gradient = ((p_after * (1 - p_after)) @ after - (p_before * (1 - p_before)) @ before) / len(p_before)
    se = math.sqrt(max(float(gradient @ est.cov @ gradient), 0.0)) * 100.0
    return Interval(estimate=100.0 * value, se=se, low=100.0 * value - Z95 * se, high=100.0 * value + Z95 * se)


def _calibration(design: Design, est: _Estimate) -> tuple[CalibrationBin, ...]:
    """Predicted scores in ten equal-width bins of [0, 1], each with its rows' mean prediction and outcome."""
    predicted = _logistic(design.x.to_numpy() @ est.params)
    edges = np.linspace(0.0, 1.0, CALIBRATION_BINS + 1)
    which = np.clip(np.searchsorted(edges, predicted, side="right") - 1, 0, CALIBRATION_BINS - 1)
    out = []
    for b in range(CALIBRATION_BINS):
        rows = which == b
        if rows.any():
            out.append(CalibrationBin(float(edges[b]), float(edges[b + 1]), int(rows.sum()),
                                      float(predicted[rows].mean()), float(design.y[rows].mean())))
    return tuple(out)


def _set_properties(x: pd.DataFrame, setting: Mapping[str, float]) -> np.ndarray:
    """The design with the given properties at fixed values for every row and its interaction columns recomputed."""
    out = x.copy()
    for name, value in setting.items():
        out[name] = value
    for name in out.columns:
        parts = name.split(":")
        if len(parts) == 2 and (parts[0] in setting or parts[1] in setting):
            out[name] = out[parts[0]] * out[parts[1]]
    return out.to_numpy()


def _logistic(eta: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * eta))  # overflow-free


# ---------------------------------------------------------------- tables


def _num(value: float | None, digits: int) -> float | None:
    return None if value is None or not math.isfinite(value) else round(float(value), digits)


def _sig(value: float | None, digits: int = 3) -> float | None:
    """p-values keep significant digits, not decimals (1e-30 must not round to 0)."""
    return None if value is None or not math.isfinite(value) else float(f"{value:.{digits}g}")


def _term_rows(fit: GlmFit, *, holm: bool) -> list[dict]:
    rows = []
    for t in fit.terms:
        row = {"label": fit.label, "term": t.name, "kind": t.kind, "coef": _num(t.coef, 4), "se": _num(t.se, 4),
               "ci_low": _num(t.ci_low, 4), "ci_high": _num(t.ci_high, 4), "p": _sig(t.p)}
        if holm:
            row["p_holm"] = _sig(t.p_holm)
        row.update(_interval_cells(t.contrast))
        rows.append(row)
    return rows


def _interval_cells(interval: Interval | None) -> dict[str, float | None]:
    if interval is None:
        return {"contrast_pp": None, "contrast_low": None, "contrast_high": None}
    return {"contrast_pp": _num(interval.estimate, 2), "contrast_low": _num(interval.low, 2),
            "contrast_high": _num(interval.high, 2)}


def _length_rows(fit: GlmFit) -> list[dict]:
    """Per property: the length IQR contrast (pp) with it at Q1, at Q3, and Q3 - Q1, as ``kind=length_contrast``."""
    rows = []
    for entry in fit.length_by_property:
        for suffix, interval in (("Q1", entry.at_low), ("Q3", entry.at_high), ("Q3-Q1", entry.difference)):
            rows.append({"label": fit.label, "term": f"length@{entry.prop}={suffix}", "kind": "length_contrast",
                         "coef": None, "se": None, "ci_low": None, "ci_high": None, "p": None, "p_holm": None,
                         **_interval_cells(interval)})
    return rows


def doubling_rows(fit: GlmFit) -> list[dict]:
    """One row per property of a main fit: the doubling contrast (pp, 95% CI) and the share of rows it covers."""
    return [{"label": fit.label, "term": d.prop, "share": _num(d.share, 3), "doubling_pp": _num(d.contrast.estimate, 2),
             "doubling_low": _num(d.contrast.low, 2), "doubling_high": _num(d.contrast.high, 2)}
            for d in fit.doublings]


def calibration_rows(fit: GlmFit) -> list[dict]:
    return [{"label": fit.label, "bin_low": _num(b.low, 2), "bin_high": _num(b.high, 2), "n": b.n,
             "predicted": _num(b.predicted, 4), "observed": _num(b.observed, 4)} for b in fit.calibration]


def _fit_row(name: str, fit: GlmFit) -> dict:
    return {"label": fit.label, "fit": name, "standardized": fit.standardized, "n_rows": fit.n_rows,
            "n_clusters": fit.n_clusters, "n_models": fit.n_models, "n_tasks": fit.n_tasks, "fitted": fit.fitted}
