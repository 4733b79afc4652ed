"""Grouped means with seeded percentile-bootstrap 95% confidence intervals.

Docs are resampled with replacement within each group. Every group's resampling stream is seeded from (seed, the
group's key), so a group's interval does not depend on which other groups, models or tasks are in the report, and a
report is reproducible byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from ..core.rng import numpy_generator

DEFAULT_REPS = 1000
DEFAULT_SEED = 0
LEVEL = 0.95


def resample_means(values: np.ndarray, reps: int, key: Sequence[object], seed: int) -> np.ndarray:
    """``reps`` bootstrap means of each column of ``values`` (rows = docs): shape (reps, columns)."""
    values = np.asarray(values, dtype=float).reshape(len(values), -1)
    if len(values) == 0 or reps <= 0:
        return np.full((max(reps, 0), values.shape[1]), np.nan)
    draws = numpy_generator("bootstrap", seed, *[str(k) for k in key]).integers(0, len(values),
                                                                             size=(reps, len(values)))
    return values[draws].mean(axis=1)


def interval(samples: np.ndarray) -> tuple[float, float]:
    """The percentile interval of bootstrap samples: NaN draws are left out, infinite ones kept (a statistic such as
    drift onset is +inf when a draw has none), and percentiles are taken without interpolation so that discrete
    statistics (a length bin) stay on their values. NaN when no draw is left."""
    kept = samples[~np.isnan(samples)]
    if kept.size == 0:
        return float("nan"), float("nan")
    tail = 100 * (1 - LEVEL) / 2
    low, high = np.percentile(kept, [tail, 100 - tail], method="inverted_cdf")
    return float(low), float(high)


def summarize(frame: pd.DataFrame, by: Sequence[str], metrics: Sequence[str], *, reps: int = DEFAULT_REPS,
              seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """One row per group of ``by``: ``n``, and per metric its mean with ``<metric>_lo`` / ``<metric>_hi``."""
    rows = []
    if frame.empty:
        return pd.DataFrame(columns=[*by, "n", *[f"{m}{s}" for m in metrics for s in ("", "_lo", "_hi")]])
    for key, group in frame.groupby(list(by), sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        values = group[list(metrics)].to_numpy(dtype=float)
        boot = resample_means(values, reps, (*by, *key), seed)
        row = dict(zip(by, key, strict=True))
        row["n"] = len(group)
        for column, metric in enumerate(metrics):
            low, high = interval(boot[:, column])
            row.update({metric: float(values[:, column].mean()), f"{metric}_lo": low, f"{metric}_hi": high})
        rows.append(row)
    return pd.DataFrame(rows)


def bootstrap_statistic(groups: Sequence[np.ndarray], statistic: Callable[[np.ndarray], float], reps: int,
                        key: Sequence[object], seed: int) -> tuple[float, float, float]:
    """A statistic of several groups' means (a curve's bins, two signs of d): its value on the data and a bootstrap
    interval, each group resampled on its own. ``statistic`` maps a vector of group means to a number (+inf for
    "none", e.g. no drift onset; NaN for undefined, left out of the interval)."""
    means = np.array([np.mean(g) if len(g) else np.nan for g in groups])
    draws = np.column_stack([resample_means(np.asarray(g, dtype=float), reps, (*key, i), seed)[:, 0]
                             for i, g in enumerate(groups)]) if groups else np.empty((reps, 0))
    values = np.array([statistic(row) for row in draws]) if reps > 0 else np.array([])
    low, high = interval(values) if values.size else (float("nan"), float("nan"))
    return float(statistic(means)), low, high
