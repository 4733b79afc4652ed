"""Does the LURCH GLM recover known effects? `lurch-simulated` answers with a known probability per doc, and this
script compares what `lurch report`'s analyses estimate from its answers with the truth:

* doubling contrasts (paper table 7): for each property, the true mean change in the probability of a right answer
  when the property doubles, over the same rows, against the estimate and its 95% CI;
* calibration (G.1): per predicted-score bin, the mean prediction, the mean observed outcome and the mean true
  probability;
* leave-one-task-out stability (G.4): how many refitted coefficients stay inside the full fit's 95% CI.

    python scripts/glm_recovery.py --out /tmp/recovery                  # the ImplicitHop group, 12 docs per cell
    python scripts/glm_recovery.py --out /tmp/recovery --coefficients intercept=0.5,depth=-1.2 --num-samples 6
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from lurch_tasks.analysis.frame import load_runs
from lurch_tasks.analysis.glm import BY_NAME, CALIBRATION_BINS, build_design, fit_main
from lurch_tasks.analysis.properties import linear_predictor, logistic
from lurch_tasks.analysis.runs import find_runs
from lurch_tasks.analysis.stability import leave_one_task_out

TASKS = "implicit_hop_depth,implicit_hop_scope,implicit_hop_dispersion,implicit_hop_length,implicit_hop_grid"
COEFFICIENTS = "intercept=0.3,length=-0.4,dispersion=-0.5,depth=-0.9"


def simulate(out: Path, coefficients: str, tasks: str, num_samples: int, seed: int) -> pd.DataFrame:
    """`lurch eval` with lurch-simulated, then the report's re-scored frame of its logs."""
    from lurch_tasks.cli import main

    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        code = main(["eval", "--model", "lurch-simulated", "--model_args", f"{coefficients},answer_seed={seed}",
                     "--tasks", tasks, "--metadata", json.dumps({"num_samples": num_samples}), "--log_samples",
                     "--output_path", str(out)])
    if code:
        raise SystemExit(f"lurch eval failed ({code})")
    return load_runs(find_runs([out])).frame


def parse(coefficients: str) -> tuple[float, dict[str, float]]:
    pairs = dict(item.split("=", 1) for item in coefficients.split(",") if item)
    intercept = float(pairs.pop("intercept", 0.0))
    return intercept, {term: float(value) for term, value in pairs.items()}


def true_probability(frame: pd.DataFrame, intercept: float, coefficients: dict[str, float]) -> np.ndarray:
    fields = {p.field for p in BY_NAME.values()}
    return np.array([logistic(linear_predictor(intercept, coefficients, {f: row[f] for f in fields}))
                     for _, row in frame.iterrows()])


def doubling_table(frame: pd.DataFrame, intercept: float, coefficients: dict[str, float]) -> pd.DataFrame:
    fit = fit_main(frame)
    rows = []
    for doubling in fit.doublings:
        field = BY_NAME[doubling.prop].field
        values = frame[field].to_numpy(dtype=float)
        eligible = (values > 0) & (2 * values <= values.max())  # as the GLM's doubling contrast
        doubled = frame[eligible].copy()
        doubled[field] = 2 * doubled[field]
        truth = 100 * float((true_probability(doubled, intercept, coefficients)
                             - true_probability(frame[eligible], intercept, coefficients)).mean())
        contrast = doubling.contrast
        rows.append({"property": doubling.prop, "share": round(doubling.share, 3), "true_pp": round(truth, 2),
                     "estimate_pp": round(contrast.estimate, 2), "low": round(contrast.low, 2),
                     "high": round(contrast.high, 2), "covered": bool(contrast.low <= truth <= contrast.high)})
    return pd.DataFrame(rows)


def calibration_table(frame: pd.DataFrame, intercept: float, coefficients: dict[str, float]) -> pd.DataFrame:
    """The GLM's calibration bins, each with the mean true probability of its rows (binned as the GLM bins them)."""
    fit, design = fit_main(frame), build_design(frame)
    params = np.array([fit.term(column).coef for column in design.x.columns])
    predicted = 0.5 * (1 + np.tanh(0.5 * (design.x.to_numpy() @ params)))
    truth = true_probability(frame.loc[design.x.index], intercept, coefficients)
    which = np.clip(np.searchsorted(np.linspace(0, 1, CALIBRATION_BINS + 1), predicted, side="right") - 1, 0,
                    CALIBRATION_BINS - 1)
    rows = []
    for b in fit.calibration:
        members = which == int(round(b.low * CALIBRATION_BINS))
        rows.append({"bin": f"[{b.low:.1f}, {b.high:.1f})", "n": b.n, "predicted": round(b.predicted, 3),
                     "observed": round(b.observed, 3), "true": round(float(truth[members].mean()), 3)})
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path, help="a new folder for the simulated run")
    parser.add_argument("--coefficients", default=COEFFICIENTS, help=f"lurch-simulated's (default {COEFFICIENTS})")
    parser.add_argument("--tasks", default=TASKS, help="the tasks (default: the ImplicitHop property tasks)")
    parser.add_argument("--num-samples", type=int, default=12, help="docs per knob cell (default 12)")
    parser.add_argument("--seed", type=int, default=7, help="lurch-simulated's answer_seed")
    args = parser.parse_args(argv)
    frame = simulate(args.out, args.coefficients, args.tasks, args.num_samples, args.seed)
    intercept, coefficients = parse(args.coefficients)
    pd.set_option("display.width", 160)
    print(f"{len(frame)} docs, {frame['task'].nunique()} tasks; truth: intercept {intercept}, {coefficients}\n")
    doubling = doubling_table(frame, intercept, coefficients)
    print("doubling contrasts (percentage points)\n" + doubling.to_string(index=False) + "\n")
    print("calibration\n" + calibration_table(frame, intercept, coefficients).to_string(index=False) + "\n")
    loto = leave_one_task_out(frame)
    truth = {name: coefficients.get(name, 0.0) for name in BY_NAME}
    loto["truth_within_ci"] = [bool(row.ci_low <= truth[row.term] <= row.ci_high) for row in loto.itertuples()]
    print(f"leave-one-task-out ({len(loto)} refitted coefficients, raw scale):")
    for column, what in (("full_within_ci", "hold the full fit's coefficient in their 95% CI"),
                         ("truth_within_ci", "hold the true coefficient in their 95% CI"),
                         ("within_full_ci", "lie inside the full fit's 95% CI")):
        print(f"  {int(loto[column].sum())} of {len(loto)} {what}")
    print(loto.to_string(index=False))
    return 0 if doubling["covered"].all() else 1


if __name__ == "__main__":
    sys.exit(main())
