"""Concurrent writers, N times over (issue 26: "passing 20 times in a row"): real `lurch` processes started together.

Cases (each trial in a fresh folder; small configs, so a trial takes seconds):

- ``materialize x2``: two runs of different configs into one --out; both exit 0, manifest and card list both,
  `lurch validate` passes.
- ``finalize x2``: two `--finalize` of one sharded run; one finalizes, the other exits 0 or says in one line that
  there is nothing left to finalize; the folder validates and no staging folder or lock file is left.
- ``materialize + validate``: a run replacing a config (4 -> 6 rows) while `lurch validate` runs back to back; every
  validate passes and reports the old or the new rows, never a mixture.
- ``shard x2``: two `--shard 0` processes of one run; each exits 0 or fails with one line naming the other's PID;
  after shard 1 and the finalize the folder validates.

    python scripts/stress_writers.py [--trials 20] [--cases ...] [--python PYTHON]

``--python`` runs another interpreter's lurch-tasks (e.g. a checkout before the locks, for the before numbers).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
SMALL = ["--limit", "4", "--quiet"]
SHARD = ["--config", "memory_drift_edge", "--limit", "4", "--max-rows-per-file", "2", "--quiet"]
PYTHON = [sys.executable]


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([*PYTHON, "-m", "lurch_tasks.cli", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=ENV)


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*PYTHON, "-m", "lurch_tasks.cli", *args], capture_output=True, text=True, env=ENV,
                          timeout=600)


def together(*commands: list[str]) -> list[tuple[int, str, str]]:
    processes = [start(*command) for command in commands]
    outputs = [p.communicate(timeout=600) for p in processes]
    return [(p.returncode, out, err) for p, (out, err) in zip(processes, outputs, strict=True)]


def one_line_or_ok(code: int, stderr: str) -> bool:
    lines = stderr.strip().splitlines()
    errors = [line for line in lines if not line.startswith("lurch: waiting for ")]
    return code == 0 or (len(errors) == 1 and errors[0].startswith("lurch: error: ") and "Traceback" not in stderr)


def validates(out: Path) -> str | None:
    """Why `lurch validate` fails on ``out`` (None when it passes)."""
    result = run("validate", str(out), "--quiet")
    return None if result.returncode == 0 else f"validate: {result.stdout.strip()[-300:]} {result.stderr[-300:]}"


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name != "out")


def configs(out: Path) -> list[str]:
    return sorted(json.loads((out / "lurch-manifest.json").read_text(encoding="utf-8"))["configs"])


def two_materializes(folder: Path) -> str | None:
    out = folder / "out"
    results = together(*(["materialize", "--config", name, "--out", str(out), *SMALL]
                         for name in ("memory_drift_edge", "find_the_origin")))
    if any(code != 0 for code, _, _ in results):
        return f"exit codes {[r[0] for r in results]}: {[r[2][-300:] for r in results]}"
    if configs(out) != ["find_the_origin", "memory_drift_edge"]:
        return f"manifest lists {configs(out)}"
    card = (out / "README.md").read_text(encoding="utf-8")
    if "config_name: find_the_origin" not in card or "config_name: memory_drift_edge" not in card:
        return "the card does not list both configs"
    return validates(out) or (f"left {leftovers(folder)}" if leftovers(folder) else None)


def two_finalizes(folder: Path) -> str | None:
    out = folder / "out"
    for shard in ("0", "1"):
        made = run("materialize", *SHARD, "--out", str(out), "--shard", shard, "--num-shards", "2")
        if made.returncode != 0:
            return f"shard {shard}: {made.stderr[-300:]}"
    results = together(*(["materialize", "--finalize", str(out), "--quiet"] for _ in range(2)))
    codes = sorted(code for code, _, _ in results)
    if codes[0] != 0 or not all(one_line_or_ok(code, err) for code, _, err in results):
        return f"exit codes {[r[0] for r in results]}: {[r[2][-300:] for r in results]}"
    return validates(out) or (f"left {leftovers(folder)}" if leftovers(folder) else None)


def materialize_and_validate(folder: Path) -> str | None:
    out = folder / "out"
    if run("materialize", "--config", "memory_drift_edge", "--out", str(out), *SMALL).returncode != 0:
        return "the first materialize failed"
    writer = start("materialize", "--config", "memory_drift_edge", "--out", str(out), "--limit", "6", "--quiet")
    seen = []
    while True:
        running = writer.poll() is None
        result = run("validate", str(out), "--quiet")
        seen.append(result.stdout.strip())
        if result.returncode != 0 or result.stdout.strip() not in ("memory_drift_edge: 4 rows, ok",
                                                                   "memory_drift_edge: 6 rows, ok"):
            writer.communicate(timeout=600)
            return f"validate during the run: exit {result.returncode}: {result.stdout[-300:]} {result.stderr[-300:]}"
        if not running:
            break
    _, err = writer.communicate(timeout=600)
    if writer.returncode != 0:
        return f"materialize: exit {writer.returncode}: {err[-300:]}"
    return None if seen[-1].startswith("memory_drift_edge: 6 rows") else f"after the run: {seen[-1]}"


def two_shards(folder: Path) -> str | None:
    out = folder / "out"
    results = together(*(["materialize", *SHARD, "--out", str(out), "--shard", "0", "--num-shards", "2"]
                         for _ in range(2)))
    if min(code for code, _, _ in results) != 0 or not all(one_line_or_ok(c, e) for c, _, e in results):
        return f"exit codes {[r[0] for r in results]}: {[r[2][-300:] for r in results]}"
    for code, _, err in results:
        if code != 0 and "is being written by PID" not in err:
            return f"the refused shard does not name the other's PID: {err[-300:]}"
    rest = run("materialize", *SHARD, "--out", str(out), "--shard", "1", "--num-shards", "2")
    done = run("materialize", "--finalize", str(out), "--quiet")
    if rest.returncode != 0 or done.returncode != 0:
        return f"shard 1 / finalize: {rest.stderr[-300:]} {done.stderr[-300:]}"
    return validates(out) or (f"left {leftovers(folder)}" if leftovers(folder) else None)


CASES: dict[str, Callable[[Path], str | None]] = {
    "materialize x2": two_materializes,
    "finalize x2": two_finalizes,
    "materialize + validate": materialize_and_validate,
    "shard x2": two_shards,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--cases", nargs="*", default=list(CASES), choices=list(CASES))
    parser.add_argument("--python", default=sys.executable, help="the interpreter whose lurch-tasks to run")
    args = parser.parse_args()
    PYTHON[0] = args.python
    failed = 0
    for name in args.cases:
        passes, began = 0, time.perf_counter()
        for trial in range(args.trials):
            with tempfile.TemporaryDirectory(prefix="lurch-stress-") as folder:
                problem = CASES[name](Path(folder))
            if problem is None:
                passes += 1
            else:
                print(f"  {name} trial {trial + 1}: {problem}", flush=True)
        failed += args.trials - passes
        print(f"{name}: {passes}/{args.trials} passed ({time.perf_counter() - began:.0f} s)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
