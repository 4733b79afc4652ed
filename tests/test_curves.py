"""Drift onset and effective length on hand-made curves, and the seeded bootstrap behind every interval."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from lurch_tasks.analysis.curves import drift_onset, effective_length
from lurch_tasks.analysis.stats import bootstrap_statistic, interval, summarize

BINS = [1024, 2048, 4096, 8192, 16384]


@pytest.mark.parametrize(("drift", "margin", "onset"), [
    ([0.10, 0.12, 0.18, 0.35, 0.60], 0.1, 8192),   # 0.35 is the first above 0.10 + 0.1 (0.18 is not)
    ([0.10, 0.25, 0.18, 0.35, 0.60], 0.1, 2048),   # the first exceedance counts, even if the curve dips after
    ([0.10, 0.20, 0.20, 0.20, 0.20], 0.1, None),   # exactly at the margin is not above it
    ([0.30, 0.10, 0.05, 0.00, 0.00], 0.1, None),   # improving with length: no onset
    ([0.00, 0.01, 0.02, 0.03, 0.06], 0.05, 16384),
    ([0.00, 0.01, 0.02, 0.03, 0.06], 0.0, 2048),   # margin 0: any rise
])
def test_drift_onset_on_hand_made_curves(drift, margin, onset):
    assert drift_onset(BINS, drift, margin) == onset


def test_drift_onset_reads_the_curve_in_length_order_and_skips_empty_bins():
    assert drift_onset(list(reversed(BINS)), [0.6, 0.35, 0.18, 0.12, 0.10], 0.1) == 8192
    assert drift_onset(BINS, [0.1, math.nan, 0.3, 0.3, 0.3], 0.1) == 4096
    assert drift_onset([4096], [0.9]) is None and drift_onset([], []) is None
    with pytest.raises(ValueError, match="one value per length bin"):
        drift_onset(BINS, [0.1])


@pytest.mark.parametrize(("scores", "fraction", "effective"), [
    ([0.80, 0.78, 0.70, 0.60, 0.20], 0.85, 4096),   # 0.68 is the floor: 0.70 stays, 0.60 does not
    ([0.80, 0.60, 0.79, 0.80, 0.80], 0.85, 1024),   # a dip ends it: a recovery after it does not count
    ([0.80, 0.80, 0.80, 0.80, 0.80], 0.85, 16384),  # never falls: the longest bin
    ([0.80, 0.68, 0.50, 0.40, 0.30], 0.85, 2048),   # exactly at the floor stays
    ([0.00, 0.00, 0.00, 0.00, 0.00], 0.85, None),   # no short-context level to keep
    ([0.50, 0.30, 0.26, 0.25, 0.10], 0.5, 8192),
])
def test_effective_length_on_hand_made_curves(scores, fraction, effective):
    assert effective_length(BINS, scores, fraction) == effective


def test_bootstrap_intervals_are_seeded_per_group_and_cover_the_mean():
    frame = pd.DataFrame({"model": ["a"] * 40 + ["b"] * 40,
                          "score": [1.0] * 30 + [0.0] * 10 + [1.0] * 40})
    first = summarize(frame, ["model"], ["score"], reps=500, seed=3)
    again = summarize(frame, ["model"], ["score"], reps=500, seed=3)
    alone = summarize(frame[frame["model"] == "a"], ["model"], ["score"], reps=500, seed=3)
    pd.testing.assert_frame_equal(first, again)
    assert first.iloc[0].to_dict() == alone.iloc[0].to_dict()  # a group's interval ignores the other groups
    a = first.iloc[0]
    assert a["score"] == 0.75 and a["score_lo"] < 0.75 < a["score_hi"] and 0.05 < a["score_hi"] - a["score_lo"] < 0.4
    assert (first.iloc[1]["score_lo"], first.iloc[1]["score_hi"]) == (1.0, 1.0)
    seeds = {tuple(summarize(frame, ["model"], ["score"], reps=50, seed=s).iloc[0][["score_lo", "score_hi"]])
             for s in range(8)}
    assert len(seeds) > 1  # the seed is used: 50 resamples of 40 docs do not land on one interval for 8 seeds
    none = summarize(frame, ["model"], ["score"], reps=0, seed=3)
    assert none["score_lo"].isna().all()


def test_bootstrap_statistic_of_a_curve_keeps_none_as_infinity():
    flat = [np.zeros(20), np.zeros(20), np.zeros(20)]

    def onset(means):
        found = drift_onset([1, 2, 3], means, 0.1)
        return math.inf if found is None else float(found)

    value, low, high = bootstrap_statistic(flat, onset, 200, ("t",), 0)
    assert (value, low, high) == (math.inf, math.inf, math.inf)
    rising = [np.zeros(20), np.full(20, 0.5), np.ones(20)]
    assert bootstrap_statistic(rising, onset, 200, ("t",), 0) == (2.0, 2.0, 2.0)
    assert interval(np.array([math.nan, math.nan])) != interval(np.array([1.0, 2.0]))
