"""The report's attention-by-discovery section: each kind's discovery rows next to their matched request twins,
over the pairs both runs hold, with the gap's bootstrap interval."""

from __future__ import annotations

import pandas as pd
import pytest

from lurch_tasks.analysis.report import Options, discovery_section, matched_requests


def _frame(rows: list[tuple[str, str, str, str, int, float]]) -> pd.DataFrame:
    return pd.DataFrame([{"model": m, "family": "discovery", "kind": k, "request": r, "pair_key": p, "length": n,
                          "score": s} for m, k, r, p, n, s in rows])


ROWS = [
    ("m", "code", "discovery", "a", 1024, 0.0), ("m", "code", "request", "a", 1024, 1.0),
    ("m", "code", "discovery", "b", 2048, 0.5), ("m", "code", "request", "b", 2048, 1.0),
    ("m", "code", "discovery", "c", 2048, 1.0),  # no twin in the runs: left out
    ("m", "cipher", "discovery", "d", 1024, 0.0), ("m", "cipher", "request", "d", 1024, 0.0),
]


def test_pairs_are_joined_on_pair_key_and_the_gap_is_request_minus_discovery():
    table = matched_requests(_frame(ROWS), Options(reps=200)).set_index(["model", "kind"])
    assert table.loc[("m", "code"), "pairs"] == 2
    assert table.loc[("m", "code"), "discovery"] == pytest.approx(0.25)
    assert table.loc[("m", "code"), "request"] == pytest.approx(1.0)
    assert table.loc[("m", "code"), "gap"] == pytest.approx(0.75)
    assert table.loc[("m", "code"), "gap_lo"] <= 0.75 <= table.loc[("m", "code"), "gap_hi"]
    assert table.loc[("m", "cipher"), "gap"] == 0.0
    by_length = matched_requests(_frame(ROWS), Options(reps=200), ("length",))
    assert sorted(by_length.loc[by_length["kind"] == "code", "length"]) == [1024, 2048]


def test_the_section_says_so_when_no_pair_was_run():
    section = discovery_section(_frame([r for r in ROWS if r[2] == "discovery"]), Options(reps=50))
    assert section is not None and not section.tables and "no matched pair" in section.intro
    assert discovery_section(_frame(ROWS).assign(family="recon"), Options(reps=50)) is None
