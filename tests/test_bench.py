"""The performance referee runs its code paths at tiny sizes (its figures are read from `make bench`; no time is
asserted here, only the structure of what it reports)."""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "bench.py"
FAMILIES = {"find_the_origin", "graph", "implicit_hop", "recon"}


def positive(value) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value) and value > 0


def test_bench_quick_reports_every_family(tmp_path):
    out = tmp_path / "bench.json"
    ruler = importlib.util.find_spec("wonderwords") is not None  # the [bench] extra
    cmd = [sys.executable, str(SCRIPT), "--quick", "--skip-eval", "--skip-rss", "--json", str(out)]
    result = subprocess.run(cmd + ([] if ruler else ["--skip-ruler"]), capture_output=True, text=True,
                            timeout=900, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    figures = json.loads(out.read_text())
    rows = {row["generator"]: row for row in figures["rows"]}
    assert set(rows) == FAMILIES | ({"niah_single_1", "ruler_vt"} if ruler else set())
    for name in FAMILIES:
        row = rows[name]
        assert (row["tokens_per_prompt"], row["samples"], row["runs"]) == (16384, 2, 1)
        for key in ("seconds", "prompt_tokens", "seconds_per_million_tokens", "warm_ratio", "cold_ratio"):
            assert positive(row[key]), (name, key, row[key])
        assert row["setup_seconds"] >= 0
    assert figures["eval_overhead"] == {} and figures["rss"] == {}
    table = [line for line in result.stdout.splitlines() if line.startswith("|")]
    assert table[0].startswith("| generator | tokens | N |") and len(table) == 2 + len(rows)
    assert all(any(line.startswith(f"| {name} | 16384 | 2 |") for line in table) for name in rows)


def load_bench():
    spec = importlib.util.spec_from_file_location("bench_script", SCRIPT)
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench  # its dataclasses look their module up
    try:
        spec.loader.exec_module(bench)
    finally:
        del sys.modules[spec.name]
    return bench


def test_peak_rss_is_read_from_a_materialize_process():
    """The RSS column (one family, one row: the quick run above skips it, as each figure is a materialize run)."""
    assert positive(load_bench().peak_rss_mib("memory_drift_edge", 1, 16384))


def test_eval_overhead_times_both_harness_runs():
    bench = load_bench()
    ours, dummy = bench.eval_overhead("find_the_origin", 1)
    assert positive(ours) and positive(dummy)
    assert set(bench.FAMILIES) == FAMILIES
