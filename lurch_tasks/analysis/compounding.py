"""RQ3, compounding difficulty (paper 004, §5.5 and G.4): are questions moderately high on several properties
harder than those extreme on one? Each row's scope, dispersion and depth are compared with its task's median and 90th
percentile; rows are grouped by how many of the three are above the median, and by whether any is above the 90th
percentile; each group's score is read against its (task, model, length) mean, so length and task are held fixed."""

from __future__ import annotations

import math

import pandas as pd

PROPERTIES = (("scope", "evidence_scope"), ("dispersion", "evidence_dispersion"), ("depth", "reasoning_depth"))
REQUIRED = ("outcome", "task", "model", "length", *(field for _, field in PROPERTIES))
Z95 = 1.959963984540054


def with_levels(frame: pd.DataFrame, predicted: pd.Series | None = None) -> pd.DataFrame:
    """The rows with ``high`` (how many properties are above their task's median), ``extreme`` (any above its
    task's 90th percentile) and ``deviation`` (the outcome minus its task-model-length mean); with the GLM's
    ``predicted`` scores, ``predicted_deviation`` likewise."""
    data = frame[list(REQUIRED)].dropna().copy()
    high = pd.Series(0, index=data.index)
    extreme = pd.Series(False, index=data.index)
    for _, field in PROPERTIES:
        by_task = data.groupby("task")[field]
        high += (data[field] > by_task.transform("median")).astype(int)
        extreme |= data[field] > by_task.transform(lambda v: v.quantile(0.9))
    data["high"], data["extreme"] = high, extreme
    cell = ["task", "model", "length"]
    data["deviation"] = data["outcome"] - data.groupby(cell)["outcome"].transform("mean")
    if predicted is not None and len(predicted):
        data["predicted"] = predicted.reindex(data.index)
        data["predicted_deviation"] = data["predicted"] - data.groupby(cell)["predicted"].transform("mean")
    return data


def compounding_table(frame: pd.DataFrame, predicted: pd.Series | None = None) -> pd.DataFrame:
    """One row per group: properties above their task median (0-3), whether any is above the 90th percentile, the
    rows, and their mean deviation from the task-model-length mean in percentage points with a normal 95% CI (the
    paper's cell is 3 above the median, none above the 90th percentile). With the additive GLM's ``predicted``
    scores (``glm.fitted_scores``), ``glm_pp`` is what the GLM expects of the same group, read the same way: a group
    the GLM cannot track shows difficulty that compounds beyond the properties' separate effects. Empty without the
    columns."""
    if any(column not in frame.columns for column in REQUIRED) or frame.empty:
        return pd.DataFrame()
    data = with_levels(frame, predicted)
    rows = []
    for (high, extreme), group in data.groupby(["high", "extreme"], sort=True):
        label = f"{high} above the median, {'some' if extreme else 'none'} above the 90th percentile"
        rows.append(_row(label, int(high), bool(extreme), group))
    return pd.DataFrame(rows)


def _row(group: str, high: int, extreme: bool, rows: pd.DataFrame) -> dict:
    n = len(rows)
    mean = float(rows["deviation"].mean()) * 100.0
    sd = float(rows["deviation"].std(ddof=1)) * 100.0 if n > 1 else math.nan
    half = Z95 * sd / math.sqrt(n) if n > 1 else math.nan
    out = {"group": group, "properties_high": high, "any_extreme": extreme, "n": n,
           "deviation_pp": round(mean, 2), "low": round(mean - half, 2) if n > 1 else None,
           "high": round(mean + half, 2) if n > 1 else None, "observed": round(float(rows["outcome"].mean()), 4)}
    if "predicted_deviation" in rows.columns:
        expected = rows["predicted_deviation"].mean()
        out["glm_pp"] = None if pd.isna(expected) else round(float(expected) * 100.0, 2)
    return out
