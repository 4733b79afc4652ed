"""The performance referee runs (its figures are read from `make bench`, never asserted here)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_bench_script_runs_and_reports_ratios(tmp_path):
    out = tmp_path / "bench.json"
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench.py"), "--skip-ruler", "--lengths", "2048",
                             "--samples", "2", "--repeats", "2", "--json", str(out)],
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    figures = json.loads(out.read_text())
    entry = figures["lengths"]["2048"]
    assert set(entry["ours_over_one_pass"]) == {"find_the_origin", "graph"}
    assert all(ratio > 1.0 for ratio in entry["ours_over_one_pass"].values())  # one pass is the floor
    assert "| 2048 | 2 |" in result.stdout and entry["runs"] == 2
