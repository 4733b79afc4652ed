"""Coverage of the LURCH GLM's 95% CIs on simulated data with known coefficients (``lurch_tasks.analysis.glm``).

    python scripts/glm_coverage.py [--reps 200] [--n 500] [--seed 0]

Two settings, each simulated ``--reps`` times with seeds ``derive_seed("glm-coverage", seed, setting, rep)``: a
depth main effect only (fitted with ``fit_main``) and a length x dispersion interaction only (``fit_interactions``).
Each rep has 4 tasks x N instances scored by 2 models; a row is correct with probability
``logistic(properties.linear_predictor(...))`` plus known task and model intercept shifts. Fits use the raw scale
(``standardize=False``), so every printed truth is the coefficient the data were drawn with. Per term: mean
estimate vs truth, mean SE vs the SD of the errors (estimate - truth), and the empirical coverage of the 95% CI
(should be near 0.95). The probability-scale contrasts (IQR contrasts; RQ2's length contrast at high minus low
property) are checked the same way against the true model's value on each sample, which depends on the sample
(their truth column is its mean over the reps).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from lurch_tasks.analysis.glm import GlmFit, Interval, fit_interactions, fit_main
from lurch_tasks.analysis.properties import PREDICTORS, linear_predictor, logistic
from lurch_tasks.core.rng import StableRng, derive_seed

TASK_SHIFTS: dict[str, float] = {"task0": 0.0, "task1": 0.6, "task2": -0.4, "task3": 0.3}  # task0 is the reference
MODEL_SHIFTS: dict[str, float] = {"model0": 0.0, "model1": -0.7}  # model0 is the reference
INTERCEPT = 0.4  # log-odds at the reference instance for task0 / model0


@dataclass(frozen=True)
class Setting:
    name: str
    coefficients: dict[str, float]
    fit: Callable[..., GlmFit]


SETTINGS: tuple[Setting, ...] = (
    Setting("depth only", {"depth": -1.2}, fit_main),
    Setting("length x dispersion only", {"length:dispersion": -0.4}, fit_interactions),
)


def draw_difficulty(rng: StableRng) -> dict[str, float]:
    """Realistic ranges: 1k-32k tokens and scope 0.1%-20% log-uniform, dispersion uniform, depth 1-8."""
    return {
        "context_tokens": float(round(1000.0 * 32.0 ** rng.uniform())),
        "evidence_scope": 0.001 * 200.0 ** rng.uniform(),
        "evidence_dispersion": rng.uniform(),
        "reasoning_depth": float(rng.integer(1, 8)),
    }


def simulate(seed: int, n_instances: int, coefficients: Mapping[str, float], *, intercept: float = INTERCEPT,
             tasks: Mapping[str, float] = TASK_SHIFTS, models: Mapping[str, float] = MODEL_SHIFTS) -> pd.DataFrame:
    """One row per (task, instance, model): Bernoulli outcomes from the model's own linear predictor."""
    rng = StableRng(seed)
    rows = []
    for task, task_shift in tasks.items():
        for i in range(n_instances):
            difficulty = draw_difficulty(rng)
            for model, model_shift in models.items():
                p = logistic(linear_predictor(intercept + task_shift + model_shift, coefficients, difficulty))
                rows.append({"outcome": 1.0 if rng.uniform() < p else 0.0, "model": model, "task": task,
                             "instance": f"{task}/{i}", **difficulty})
    return pd.DataFrame(rows)


def truths(setting: Setting) -> dict[str, float]:
    """The true value of every term the fit reports on the raw scale."""
    out = {"intercept": INTERCEPT}
    out.update({f"task[T.{t}]": shift for t, shift in TASK_SHIFTS.items() if t != "task0"})
    out.update({f"model[T.{m}]": shift for m, shift in MODEL_SHIFTS.items() if m != "model0"})
    out.update({p.name: setting.coefficients.get(p.name, 0.0) for p in PREDICTORS})
    if setting.fit is fit_interactions:
        out.update({term: setting.coefficients.get(term, 0.0) for term in ("length:scope", "length:dispersion",
                                                                             "length:depth")})
    return out


def true_mean_probability(frame: pd.DataFrame, coefficients: Mapping[str, float], fixed: Mapping[str, float]) -> float:
    """The data-generating model's mean P over the rows, with some properties' raw values fixed for every row."""
    raw = {p.name: np.array([p.raw(v) for v in frame[p.field]]) for p in PREDICTORS}
    raw.update({name: np.full(len(frame), value) for name, value in fixed.items()})
    logit = (INTERCEPT + frame["task"].map(TASK_SHIFTS) + frame["model"].map(MODEL_SHIFTS)).to_numpy()
    for term, beta in coefficients.items():
        logit = logit + beta * np.prod([raw[name] for name in term.split(":")], axis=0)
    return float(np.mean(1.0 / (1.0 + np.exp(-logit))))


def true_contrasts(fit: GlmFit, frame: pd.DataFrame, coefficients: Mapping[str, float]) -> dict[str, float]:
    """The estimands of the fit's probability-scale contrasts (pp) under the true model, at the sample's quartiles
    (the delta-method CIs condition on the analysed rows)."""
    quartiles = {s.name: (s.q1, s.q3) for s in fit.scales}

    def iqr(name: str, fixed: Mapping[str, float]) -> float:
        low, high = quartiles[name]
        return 100.0 * (true_mean_probability(frame, coefficients, {**fixed, name: high})
                        - true_mean_probability(frame, coefficients, {**fixed, name: low}))

    out = {f"IQR {name} (pp)": iqr(name, {}) for name in quartiles}
    for entry in fit.length_by_property:
        low, high = quartiles[entry.prop]
        out[f"length@{entry.prop} Q3-Q1"] = iqr("length", {entry.prop: high}) - iqr("length", {entry.prop: low})
    return out


def fitted_contrasts(fit: GlmFit) -> dict[str, Interval]:
    out = {f"IQR {t.name} (pp)": t.contrast for t in fit.terms if t.contrast is not None}
    out.update({f"length@{e.prop} Q3-Q1": e.difference for e in fit.length_by_property})
    return out


def run(setting: Setting, reps: int, n: int, seed: int) -> tuple[list[dict], int]:
    truth = truths(setting)
    # per term: (estimate, SE, estimate - truth, CI covers truth)
    estimates: dict[str, list[tuple[float, float, float, bool]]] = {term: [] for term in truth}
    truth_sums: dict[str, float] = {}
    failed = 0
    for rep in range(reps):
        frame = simulate(derive_seed("glm-coverage", seed, setting.name, rep), n, setting.coefficients)
        fit = setting.fit(frame, standardize=False)
        if not fit.fitted:
            failed += 1
            continue
        for term, value in truth.items():
            t = fit.term(term)
            if t is not None:
                estimates[term].append((t.coef, t.se, t.coef - value, t.ci_low <= value <= t.ci_high))
        # contrasts: the estimand depends on the sample, so its mean over reps is what the table prints as truth
        fitted = fitted_contrasts(fit)
        for name, value in true_contrasts(fit, frame, setting.coefficients).items():
            c = fitted[name]
            estimates.setdefault(name, []).append((c.estimate, c.se, c.estimate - value, c.low <= value <= c.high))
            truth_sums[name] = truth_sums.get(name, 0.0) + value
    truth.update({name: total / len(estimates[name]) for name, total in truth_sums.items()})
    rows = []
    for term, value in truth.items():
        got = estimates[term]
        if not got:
            continue
        errors = [e for _, _, e, _ in got]
        mean_error = sum(errors) / len(errors)
        sd = math.sqrt(sum((e - mean_error) ** 2 for e in errors) / max(len(errors) - 1, 1))
        rows.append({"setting": setting.name, "term": term, "truth": value,
                     "mean_est": sum(c for c, _, _, _ in got) / len(got),
                     "mean_se": sum(s for _, s, _, _ in got) / len(got), "sd_err": sd,
                     "coverage": sum(c for _, _, _, c in got) / len(got), "fits": len(got)})
    return rows, failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=200, help="simulated data sets per setting")
    parser.add_argument("--n", type=int, default=500, help="instances per task (rows = 4 tasks x n x 2 models)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    # binomial SE of a coverage of 0.95 over the reps: the band a calibrated CI lands in ~95% of the time
    band = 1.96 * math.sqrt(0.95 * 0.05 / args.reps)
    print(f"reps={args.reps}  rows/rep={4 * args.n * 2}  seed={args.seed}  "
          f"(coverage of a calibrated 95% CI: 0.95 +- {band:.3f})")
    header = f"{'setting':<26} {'term':<24} {'truth':>7} {'mean est':>9} {'mean SE':>8} {'SD err':>7} {'coverage':>8}"
    print(header)
    print("-" * len(header))
    for setting in SETTINGS:
        start = time.perf_counter()
        rows, failed = run(setting, args.reps, args.n, args.seed)
        for r in rows:
            print(f"{r['setting']:<26} {r['term']:<24} {r['truth']:>7.3f} {r['mean_est']:>9.4f} {r['mean_se']:>8.4f} "
                  f"{r['sd_err']:>7.4f} {r['coverage']:>8.3f}")
        print(f"  ({args.reps - failed}/{args.reps} fits, {time.perf_counter() - start:.1f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
