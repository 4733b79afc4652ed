"""The LURCH GLM (analysis.glm) on simulated data with known coefficients, and on degenerate inputs.

Data come from scripts/glm_coverage.py's simulator (StableRng, fixed seeds): 4 tasks x N instances x 2 models, each
row correct with probability logistic(properties.linear_predictor(...)). Calibration over many seeds is the
script's job; here one fixed seed per setting checks recovery, reparametrisation, contrasts, Holm and clustering.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from statsmodels.genmod import families
from statsmodels.genmod.generalized_linear_model import GLM
from statsmodels.stats.multitest import multipletests
from statsmodels.tools.sm_exceptions import ConvergenceWarning

import lurch_tasks.analysis.glm as glm_module
from lurch_tasks.analysis.glm import (
    INTERACTION_COLUMNS,
    TERM_COLUMNS,
    GlmFit,
    build_design,
    fit_interactions,
    fit_main,
    lurch_glm,
    per_model,
)
from lurch_tasks.analysis.properties import BY_NAME, INTERACTIONS, PREDICTORS, linear_predictor, logistic
from lurch_tasks.core.rng import StableRng

_SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "glm_coverage.py"
_spec = importlib.util.spec_from_file_location("glm_coverage", _SCRIPT)
coverage = importlib.util.module_from_spec(_spec)
sys.modules["glm_coverage"] = coverage  # dataclasses resolve the module by name
_spec.loader.exec_module(coverage)

SLOPES = tuple(p.name for p in PREDICTORS)
DEPTH_ONLY = {"depth": -1.2}
LENGTH_BY_DISPERSION = {"length:dispersion": -0.4}


@pytest.fixture(scope="module")
def depth_frame() -> pd.DataFrame:
    return coverage.simulate(11, 500, DEPTH_ONLY)  # 4,000 rows


@pytest.fixture(scope="module")
def interaction_frame() -> pd.DataFrame:
    return coverage.simulate(12, 500, LENGTH_BY_DISPERSION)


@pytest.fixture(scope="module")
def depth_fit(depth_frame) -> GlmFit:
    return fit_main(depth_frame, standardize=False)


def _covers(fit: GlmFit, term: str, value: float) -> bool:
    t = fit.term(term)
    return t is not None and t.ci_low <= value <= t.ci_high


# ---------------------------------------------------------------- recovery and reparametrisation


def test_depth_effect_is_recovered_on_the_raw_scale(depth_fit):
    assert depth_fit.fitted and depth_fit.notes == ()
    assert (depth_fit.n_rows, depth_fit.n_clusters, depth_fit.n_models, depth_fit.n_tasks) == (4000, 2000, 2, 4)
    for name in SLOPES:
        assert _covers(depth_fit, name, DEPTH_ONLY.get(name, 0.0)), depth_fit.term(name)
    assert depth_fit.term("depth").p < 1e-10
    # the intercepts are the reference (task0, model0) log-odds and the known shifts (9 CIs need not all cover)
    for term, value in coverage.truths(coverage.SETTINGS[0]).items():
        assert abs(depth_fit.term(term).coef - value) < 3 * depth_fit.term(term).se, term
    kinds = {t.name: t.kind for t in depth_fit.terms}
    assert kinds == {"intercept": "intercept", "task[T.task1]": "intercept", "task[T.task2]": "intercept",
                     "task[T.task3]": "intercept", "model[T.model1]": "intercept", **dict.fromkeys(SLOPES, "property")}


def test_length_by_dispersion_interaction_is_recovered(interaction_frame):
    fit = fit_interactions(interaction_frame, standardize=False)
    assert fit.fitted and fit.notes == () and fit.spec == "interactions"
    assert _covers(fit, "length:dispersion", -0.4) and fit.term("length:dispersion").p_holm < 1e-6
    for term in ("length:scope", "length:depth"):
        assert _covers(fit, term, 0.0)
    for name in SLOPES:
        assert _covers(fit, name, 0.0)
    assert {t.name for t in fit.terms if t.kind == "interaction"} == set(INTERACTIONS)
    # negative interaction: length costs more where dispersion is high
    by_prop = {e.prop: e for e in fit.length_by_property}
    assert set(by_prop) == {"scope", "dispersion", "depth"}
    dispersion = by_prop["dispersion"]
    assert dispersion.at_high.estimate < dispersion.at_low.estimate
    assert dispersion.difference.high < 0
    assert dispersion.difference.estimate == pytest.approx(dispersion.at_high.estimate - dispersion.at_low.estimate)
    for prop in ("scope", "depth"):
        assert by_prop[prop].difference.low <= 0 <= by_prop[prop].difference.high


def test_standardized_coefficient_is_raw_coefficient_times_sd(depth_frame, depth_fit):
    standard = fit_main(depth_frame)
    assert standard.standardized and not depth_fit.standardized
    sd = {s.name: s.sd for s in depth_fit.scales}
    for name in SLOPES:
        raw, std = depth_fit.term(name), standard.term(name)
        assert std.coef == pytest.approx(raw.coef * sd[name], abs=1e-6)
        assert std.se == pytest.approx(raw.se * sd[name], abs=1e-6)
        assert std.p == pytest.approx(raw.p, abs=1e-6)
        # the same model: probability-scale contrasts do not depend on the parametrisation
        assert std.contrast.estimate == pytest.approx(raw.contrast.estimate, abs=1e-6)
        assert std.contrast.se == pytest.approx(raw.contrast.se, abs=1e-6)
    for s, expected in zip(standard.scales, PREDICTORS, strict=True):
        column = np.array([expected.raw(v) for v in depth_frame[expected.field]])
        assert s.name == expected.name and s.sd == pytest.approx(column.std(ddof=1))


def test_standardized_interaction_is_raw_interaction_times_both_sds(interaction_frame):
    raw, std = fit_interactions(interaction_frame, standardize=False), fit_interactions(interaction_frame)
    sd = {s.name: s.sd for s in raw.scales}
    for term in INTERACTIONS:
        left, right = term.split(":")
        assert std.term(term).coef == pytest.approx(raw.term(term).coef * sd[left] * sd[right], abs=1e-6)
    for a, b in zip(raw.length_by_property, std.length_by_property, strict=True):
        assert a.difference.estimate == pytest.approx(b.difference.estimate, abs=1e-6)


# ---------------------------------------------------------------- contrasts, Holm, clustering


def _mean_probability(frame: pd.DataFrame, intercepts: np.ndarray, coefficients: dict[str, float],
                      fixed: dict[str, float]) -> float:
    """Mean P over rows with some fields fixed, through properties.linear_predictor itself."""
    total = 0.0
    for intercept, row in zip(intercepts, frame.to_dict("records"), strict=True):
        difficulty = {p.field: row[p.field] for p in PREDICTORS} | fixed
        total += logistic(linear_predictor(float(intercept), coefficients, difficulty))
    return total / len(frame)


def _row_intercepts(fit: GlmFit, frame: pd.DataFrame) -> np.ndarray:
    out = np.full(len(frame), fit.term("intercept").coef)
    for t in fit.terms:
        if t.name.startswith(("task[T.", "model[T.")):
            factor, level = t.name[:-1].split("[T.")
            out += t.coef * (frame[factor] == level).to_numpy()
    return out


def test_iqr_contrast_matches_a_direct_computation(depth_frame, depth_fit):
    intercepts = _row_intercepts(depth_fit, depth_frame)
    slopes = {name: depth_fit.term(name).coef for name in SLOPES}
    for name in SLOPES:
        field = BY_NAME[name].field
        q1, q3 = np.percentile(depth_frame[field], [25, 75])  # a log is monotone: quartiles of the field map over
        direct = 100 * (_mean_probability(depth_frame, intercepts, slopes, {field: q3})
                        - _mean_probability(depth_frame, intercepts, slopes, {field: q1}))
        contrast = depth_fit.term(name).contrast
        assert contrast.estimate == pytest.approx(direct, abs=1e-6)
        assert contrast.low < contrast.estimate < contrast.high
    # sign and rough size against the truth: depth 3 -> 7 (its quartiles) at -1.2 per e-fold
    assert np.percentile(depth_frame["reasoning_depth"], [25, 75]).tolist() == [3.0, 7.0]
    truth_intercepts = _truth_intercepts(depth_frame)
    true_drop = 100 * (_mean_probability(depth_frame, truth_intercepts, DEPTH_ONLY, {"reasoning_depth": 7.0})
                       - _mean_probability(depth_frame, truth_intercepts, DEPTH_ONLY, {"reasoning_depth": 3.0}))
    depth = depth_fit.term("depth").contrast
    assert -35 < true_drop < -15 and depth.low - 1 < true_drop < depth.high + 1
    for name in ("length", "scope", "dispersion"):
        assert abs(depth_fit.term(name).contrast.estimate) < 3


def _truth_intercepts(frame: pd.DataFrame) -> np.ndarray:
    return (coverage.INTERCEPT + frame["task"].map(coverage.TASK_SHIFTS) + frame["model"].map(coverage.MODEL_SHIFTS)
            ).to_numpy()


def test_holm_p_values_are_adjusted_and_monotone(interaction_frame):
    for fit in (fit_interactions(interaction_frame), fit_interactions(interaction_frame.iloc[:1200])):
        tests = [fit.term(term) for term in INTERACTIONS]
        raw = [t.p for t in tests]
        adjusted = [t.p_holm for t in tests]
        assert adjusted == pytest.approx(list(multipletests(raw, method="holm")[1]))
        assert all(a >= p for a, p in zip(adjusted, raw, strict=True))
        order = np.argsort(raw)
        assert all(adjusted[i] <= adjusted[j] for i, j in zip(order, order[1:], strict=False))
        assert all(t.p_holm is None for t in fit.terms if t.kind != "interaction")


def test_cluster_se_counts_instances_not_rows():
    one = coverage.simulate(21, 500, DEPTH_ONLY, models={"model0": 0.0})
    twice = pd.concat([one, one.assign(model="model1")], ignore_index=True)  # same outcomes under a second model
    # raw scale: standardising would divide by a sample SD that differs with n (ddof=1) by a factor ~1 + 1/4n
    fit_one, fit_twice = fit_main(one, standardize=False), fit_main(twice, standardize=False)
    assert fit_twice.n_clusters == fit_one.n_clusters == 2000 and fit_twice.n_rows == 4000
    assert fit_twice.term("model[T.model1]").coef == pytest.approx(0.0, abs=1e-8)
    naive = {}
    for label, frame in (("one", one), ("twice", twice)):
        design = build_design(frame, standardize=False)
        result = GLM(design.y, design.x, family=families.Binomial()).fit()
        naive[label] = dict(zip(design.x.columns, np.asarray(result.bse), strict=True))
    for name in SLOPES:
        cluster_ratio = fit_twice.term(name).se / fit_one.term(name).se
        assert cluster_ratio == pytest.approx(1.0, abs=0.01)
        assert naive["twice"][name] / naive["one"][name] == pytest.approx(1 / math.sqrt(2), abs=0.01)
        assert fit_twice.term(name).coef == pytest.approx(fit_one.term(name).coef, abs=1e-8)


def test_fractional_outcomes_and_extra_columns(depth_frame):
    # a score in [0, 1]: the mean of two draws per row; extra columns are ignored
    rng = StableRng(5)
    frame = depth_frame.assign(outcome=[(o + (rng.uniform() < 0.5)) / 2 for o in depth_frame["outcome"]],
                               doc_id=range(len(depth_frame)), prompt="text", reasoning_depth_label="deep")
    assert set(frame["outcome"]) == {0.0, 0.5, 1.0}
    fit = fit_main(frame, standardize=False)
    assert fit.fitted and fit.notes == () and fit.n_rows == len(frame)
    # halfway to a coin flip: the depth slope shrinks toward 0 but keeps its sign
    assert -1.2 < fit.term("depth").coef < -0.3 and fit.term("depth").ci_high < 0


# ---------------------------------------------------------------- degenerate inputs


def _small(seed: int = 31, n: int = 60, **kwargs) -> pd.DataFrame:
    return coverage.simulate(seed, n, DEPTH_ONLY, **kwargs)


def _notes(fit: GlmFit) -> str:
    assert all(note and "\n" not in note for note in fit.notes)  # one line each
    return " | ".join(fit.notes)


def _strict(fn, *args, **kwargs):
    """Run with every warning an error: a degenerate fit must turn statsmodels' warnings into notes."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args, **kwargs)


def test_constant_depth_is_dropped_with_its_interaction():
    frame = _small().assign(reasoning_depth=1)
    main, inter = _strict(fit_main, frame), _strict(fit_interactions, frame)
    assert main.fitted and main.term("depth") is None and main.term("length") is not None
    assert "depth is constant (reasoning_depth = 1) in the data; term dropped" in _notes(main)
    assert inter.term("length:depth") is None and inter.term("length:scope") is not None
    assert "with length:depth" in _notes(inter)
    assert [e.prop for e in inter.length_by_property] == ["scope", "dispersion"]


def test_one_model_and_one_task_have_no_dummies():
    one_model = _strict(fit_main, _small(models={"only": 0.0}))
    assert one_model.fitted and "only one model (only); no model intercepts" in one_model.notes
    assert not any(t.name.startswith("model[") for t in one_model.terms)
    one_task = _strict(fit_main, _small(n=200, tasks={"solo": 0.0}))
    assert one_task.fitted and "only one task (solo); no task intercepts" in one_task.notes
    assert not any(t.name.startswith("task[") for t in one_task.terms)


@pytest.mark.parametrize("rows", [0, 3, 12])
def test_too_few_rows_give_no_fit(rows):
    frame = _small().iloc[:rows]
    for fit in (_strict(fit_main, frame), _strict(fit_interactions, frame)):
        assert not fit.fitted and fit.terms == () and fit.length_by_property == () and fit.notes


def test_single_cluster_gives_no_fit():
    fit = _strict(fit_main, _small().assign(instance="one"))
    assert not fit.fitted and "cluster" in _notes(fit)


@pytest.mark.parametrize("value", [0.0, 1.0])
def test_constant_outcome_gives_no_fit(value):
    fit = _strict(fit_main, _small().assign(outcome=value))
    assert not fit.fitted and f"every outcome is {value:g}" in _notes(fit)


def test_perfect_separation_gives_no_fit():
    frame = _small()
    frame = frame.assign(outcome=(frame["reasoning_depth"] <= 3).astype(float))
    fit = _strict(fit_main, frame)
    assert not fit.fitted and "separation" in _notes(fit)


def test_quasi_complete_separation_gives_no_fit():
    frame = _small(n=200)
    mixed = frame["outcome"].where(frame["reasoning_depth"] == 4)
    frame = frame.assign(outcome=mixed.fillna((frame["reasoning_depth"] < 4).astype(float)))
    fit = _strict(fit_main, frame)
    assert not fit.fitted and "separation" in _notes(fit)


def test_a_model_scoring_zero_everywhere_is_dropped():
    frame = _small(n=200)
    frame = frame.assign(outcome=frame["outcome"].where(frame["model"] != "model1", 0.0))
    fit = _strict(fit_main, frame)
    assert fit.fitted and fit.n_models == 1 and fit.n_rows == 800
    assert "model model1: every outcome is 0 (800 rows); its intercept is infinite, rows dropped" in fit.notes


def test_rows_with_missing_values_are_dropped_with_a_note():
    frame = _small(n=200).copy()
    frame.loc[[0, 5, 9], "evidence_scope"] = np.nan
    frame.loc[11, "outcome"] = None
    frame.loc[12, "model"] = None
    frame.loc[13, "outcome"] = 1.5
    fit = _strict(fit_main, frame)
    assert fit.fitted and fit.n_rows == len(frame) - 6
    assert f"5 of {len(frame)} rows dropped: missing outcome, predictor or id" in fit.notes
    assert "1 rows dropped: outcome outside [0, 1]" in fit.notes


def test_length_collinear_with_task_intercepts_is_dropped():
    frame = _small(n=150)
    per_task = {"task0": 2000, "task1": 4000, "task2": 8000, "task3": 16000}
    frame = frame.assign(context_tokens=frame["task"].map(per_task))
    main, inter = _strict(fit_main, frame), _strict(fit_interactions, frame)
    for fit in (main, inter):
        assert fit.fitted and fit.term("length") is None and fit.term("depth") is not None
        assert any(note.startswith("length is collinear with the task/model intercepts") for note in fit.notes)
    assert not any(t.kind == "interaction" for t in inter.terms) and inter.length_by_property == ()


def test_a_property_collinear_with_another_is_dropped():
    frame = _small(n=150)
    frame = frame.assign(evidence_scope=frame["context_tokens"] / 4096 * 0.01)  # raw scope == raw length
    fit = _strict(fit_main, frame)
    assert fit.term("length") is not None and fit.term("scope") is None
    assert any(note.startswith("scope is collinear") for note in fit.notes)


class _FailingGlm:
    """Stands in for statsmodels' GLM: raises, or returns a fit that did not converge."""

    def __init__(self, y, x, family, *, error: Exception | None = None):
        self.k, self.error = x.shape[1], error

    def fit(self, **kwargs):
        if self.error is not None:
            raise self.error
        warnings.warn("iteration limit reached", ConvergenceWarning, stacklevel=2)
        return SimpleNamespace(params=np.zeros(self.k), bse=np.ones(self.k), pvalues=np.ones(self.k),
                               cov_params=lambda: np.eye(self.k), converged=False)


@pytest.mark.parametrize(("error", "expected"), [
    (np.linalg.LinAlgError("Singular matrix"), "fit failed (LinAlgError: Singular matrix); no fit"),
    (ValueError("NaN, inf or invalid value detected in weights"), "fit failed (ValueError: NaN, inf"),
    (None, "IRLS did not converge; no fit"),
])
def test_statsmodels_failures_become_notes(monkeypatch, error, expected):
    monkeypatch.setattr(glm_module, "GLM", lambda y, x, family: _FailingGlm(y, x, family, error=error))
    fit = _strict(fit_interactions, _small())
    assert not fit.fitted and fit.length_by_property == () and expected in _notes(fit)
    if error is None:
        assert "ConvergenceWarning: iteration limit reached" in fit.notes


def test_missing_column_is_a_value_error():
    with pytest.raises(ValueError, match="evidence_scope"):
        fit_main(_small().drop(columns=["evidence_scope"]))


# ---------------------------------------------------------------- report tables


def test_report_tables_are_plain_rows(depth_frame):
    report = lurch_glm(depth_frame)
    assert [f.label for f in report.per_model] == ["model0", "model1"]
    assert all(f.notes == () and f.n_models == 1 for f in report.per_model)
    assert [f.label for f in per_model(depth_frame)] == ["model0", "model1"]
    tables = report.tables()
    assert set(tables) == {"glm_fits", "glm_main", "glm_interactions", "glm_per_model", "glm_notes"}
    assert all(tuple(row) == TERM_COLUMNS for row in tables["glm_main"] + tables["glm_per_model"])
    assert all(tuple(row) == INTERACTION_COLUMNS for row in tables["glm_interactions"])
    depth = next(row for row in tables["glm_main"] if row["term"] == "depth")
    assert depth["kind"] == "property" and depth["contrast_pp"] < 0 and depth["p"] > 0
    intercept = next(row for row in tables["glm_main"] if row["term"] == "intercept")
    assert intercept["contrast_pp"] is None
    lengths = [row["term"] for row in tables["glm_interactions"] if row["kind"] == "length_contrast"]
    assert lengths == [f"length@{p}={q}" for p in ("scope", "dispersion", "depth") for q in ("Q1", "Q3", "Q3-Q1")]
    assert tables["glm_notes"] == []
    assert len(tables["glm_fits"]) == 4 and all(row["fitted"] for row in tables["glm_fits"])
    json.dumps(tables)  # plain types only


def test_report_on_degenerate_data_still_tabulates():
    tables = _strict(lurch_glm, _small().assign(outcome=1.0)).tables()
    assert tables["glm_main"] == [] and tables["glm_interactions"] == [] and tables["glm_per_model"] == []
    assert {row["fit"] for row in tables["glm_notes"]} == {"main", "interactions", "per_model"}
