"""The report's further analyses of the LURCH paper: doubling contrasts (table 7), calibration (G.1), leave-one-task-out
stability (G.4) and RQ3 compounding. On rows drawn from a known logistic model the estimates recover the truth; a
hand-made frame gives the compounding table's groups exactly; and scripts/glm_recovery.py does the same through
`lurch eval` with lurch-simulated."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lurch_tasks.analysis.compounding import compounding_table
from lurch_tasks.analysis.glm import fit_main
from lurch_tasks.analysis.properties import linear_predictor, logistic
from lurch_tasks.analysis.stability import leave_one_task_out
from lurch_tasks.core.rng import StableRng

ROOT = Path(__file__).resolve().parents[1]
TRUTH = {"length": -0.5, "dispersion": -0.6, "depth": -1.0}
INTERCEPT = 0.4
Z_TEST = 3.29  # a true value must lie within 3.29 SE (99.9%): the draws are random, the check must not be flaky


def _drawn(rows: int = 4000, tasks: int = 4, seed: int = 11) -> pd.DataFrame:
    """Rows whose outcome is a Bernoulli draw with the probability the raw-scale model gives (no task effects)."""
    rng = StableRng(seed)
    frame = pd.DataFrame({
        "model": "m", "task": [f"t{i % tasks}" for i in range(rows)], "instance": [f"d{i}" for i in range(rows)],
        "context_tokens": [rng.choice([1024, 2048, 4096, 8192, 16384]) for _ in range(rows)],
        "evidence_scope": [0.002 + 0.198 * rng.uniform() for _ in range(rows)],
        "evidence_dispersion": [rng.uniform() for _ in range(rows)],
        "reasoning_depth": [rng.integer(1, 8) for _ in range(rows)],
    })
    probability = np.array([logistic(linear_predictor(INTERCEPT, TRUTH, row)) for row in frame.to_dict("records")])
    frame["outcome"] = [float(rng.uniform() < p) for p in probability]
    frame["probability"] = probability
    return frame


@pytest.fixture(scope="module")
def drawn() -> pd.DataFrame:
    return _drawn()


def _true_doubling(frame: pd.DataFrame, field: str) -> float:
    values = frame[field].to_numpy(dtype=float)
    eligible = frame[(values > 0) & (2 * values <= values.max())]
    doubled = eligible.assign(**{field: 2 * eligible[field]})
    after = [logistic(linear_predictor(INTERCEPT, TRUTH, row)) for row in doubled.to_dict("records")]
    return 100 * float(np.mean(after) - eligible["probability"].mean())


def test_doubling_contrasts_cover_the_true_ones(drawn):
    fit = fit_main(drawn)
    fields = {"length": "context_tokens", "scope": "evidence_scope", "dispersion": "evidence_dispersion",
              "depth": "reasoning_depth"}
    assert [d.prop for d in fit.doublings] == list(fields)
    for doubling in fit.doublings:
        truth = _true_doubling(drawn, fields[doubling.prop])
        assert abs(doubling.contrast.estimate - truth) <= Z_TEST * doubling.contrast.se, (doubling, truth)
        assert 0 < doubling.share <= 1
    scope = next(d for d in fit.doublings if d.prop == "scope")
    assert scope.contrast.low < 0 < scope.contrast.high  # no scope effect planted
    depth = next(d for d in fit.doublings if d.prop == "depth")
    assert depth.contrast.high < -5  # doubling depth costs well over 5 points here
    # the same probabilities whatever the scale: the raw fit's doubling contrasts are the standardised fit's
    raw = fit_main(drawn, standardize=False)
    for a, b in zip(fit.doublings, raw.doublings, strict=True):
        assert a.contrast.estimate == pytest.approx(b.contrast.estimate, abs=1e-6)


def test_the_fit_is_calibrated_on_data_from_its_own_model(drawn):
    bins = fit_main(drawn).calibration
    assert sum(b.n for b in bins) == len(drawn)
    for b in bins:
        assert b.low <= b.predicted < b.high
        if b.n >= 100:
            assert abs(b.observed - b.predicted) < 0.06, b


def test_leaving_out_a_task_keeps_the_coefficients(drawn):
    table = leave_one_task_out(drawn)
    assert len(table) == 4 * 4  # four tasks, four properties
    assert table["full_within_ci"].all()
    truth = {"length": -0.5, "scope": 0.0, "dispersion": -0.6, "depth": -1.0}
    for row in table.itertuples():  # the 95% CI's half width is 1.96 SE
        se = (row.ci_high - row.ci_low) / (2 * 1.959964)
        assert abs(row.coef - truth[row.term]) <= Z_TEST * se, row
    assert leave_one_task_out(drawn[drawn["task"].isin(["t0", "t1"])]).empty  # two tasks: nothing to leave out


def test_compounding_groups_by_properties_above_the_task_median():
    # one task, one model, one length; scope, dispersion and depth each above the median (0.5 / 0.5 / 3) or not
    cells = [(0.1, 0.1, 1, 1.0), (0.1, 0.1, 2, 1.0), (0.9, 0.1, 2, 1.0), (0.9, 0.9, 2, 0.0), (0.9, 0.9, 5, 0.0),
             (0.1, 0.9, 1, 1.0), (0.2, 0.2, 3, 1.0), (0.8, 0.8, 4, 0.0), (0.3, 0.6, 3, 1.0), (0.7, 0.4, 4, 0.0)]
    frame = pd.DataFrame([{"task": "t", "model": "m", "length": 1024, "evidence_scope": s, "evidence_dispersion": d,
                           "reasoning_depth": k, "outcome": y} for s, d, k, y in cells])
    table = compounding_table(frame).set_index(["properties_high", "any_extreme"])
    mean = frame["outcome"].mean()  # 0.6: every row's task-model-length mean
    # scope and dispersion medians 0.5, depth median 2.5; 90th percentiles 0.9, 0.9, 4.1
    assert table.loc[(3, False), "n"] == 1 and table.loc[(3, False), "deviation_pp"] == pytest.approx(-100 * mean)
    assert table.loc[(0, False), "n"] == 2 and table.loc[(0, False), "deviation_pp"] == pytest.approx(
        100 * (1 - mean))
    assert table["n"].sum() == len(frame)
    assert compounding_table(frame.drop(columns="length")).empty


@pytest.mark.slow
def test_recovery_script_through_lurch_simulated(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("glm_recovery", ROOT / "scripts" / "glm_recovery.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["glm_recovery"] = module
    spec.loader.exec_module(module)
    assert module.main(["--out", str(tmp_path / "run"), "--num-samples", "6"]) == 0  # every doubling CI covers
    printed = capsys.readouterr().out
    assert "doubling contrasts" in printed and "calibration" in printed
    assert "20 of 20 hold the true coefficient in their 95% CI" in printed


def test_the_additive_glm_tracks_compounding_when_effects_only_add(drawn):
    """The rows' outcomes come from an additive model: in every well-populated group the GLM's expected deviation lies
    inside the observed deviation's 95% CI (nothing compounds beyond the separate effects)."""
    from lurch_tasks.analysis.glm import fitted_scores

    frame = drawn.assign(length=drawn["context_tokens"])
    predicted = fitted_scores(frame)
    assert len(predicted) == len(frame) and predicted.between(0, 1).all()
    table = compounding_table(frame, predicted)
    assert "glm_pp" in table.columns and table["n"].sum() == len(frame)
    for row in table.itertuples():
        if row.n >= 200:
            assert row.low <= row.glm_pp <= row.high, row
