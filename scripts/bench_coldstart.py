"""Cold start: what a fresh process pays before its first instance of each family.

    python scripts/bench_coldstart.py [--tasks find_the_origin implicit_hop_depth memory_drift_edge recon_all]
                                      [--repeats 3] [--json FILE]

Per task, in fresh processes (``python -c``), CPU seconds of that process (``time.process_time``) for:
  * ``import``: ``import lurch_tasks.cli``;
  * ``registry``: loading every family (the entry points) and resolving the task;
  * ``first``: generating instance 0 of the test split (tokenizer, word lists, derived tables, the instance).
Two cache states: ``first ever`` (an empty cache folder: every derived table is built, then saved) and
``cached cold`` (the folder the first run filled: a new process, tables read back). Each figure is the best of
``--repeats`` runs (the machine is shared; the best is the least disturbed). The doc cache plays no part here.
Python's own start-up is not counted; bytecode is written (``PYTHONDONTWRITEBYTECODE`` is unset) as in an
installed package.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

PROBE = """
import json, sys, time
c0 = time.process_time()
import lurch_tasks.cli  # noqa: F401
c1 = time.process_time()
from lurch_tasks.core.generation import generate_row, resolve_task
from lurch_tasks.core.registry import get_family
task = resolve_task(sys.argv[1])
get_family(task.family)
c2 = time.process_time()
generate_row(task, 0, "test")
c3 = time.process_time()
print(json.dumps({"import": c1 - c0, "registry": c2 - c1, "first": c3 - c2}))
"""
TASKS = ("find_the_origin", "implicit_hop_depth", "memory_drift_edge", "recon_all")


def probe(task: str, env: dict[str, str]) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", PROBE, task], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def best(runs: list[dict[str, float]]) -> dict[str, float]:
    total = min(runs, key=lambda run: sum(run.values()))
    return {**{k: round(v, 3) for k, v in total.items()}, "total": round(sum(total.values()), 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=list(TASKS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
                   XDG_CONFIG_HOME=str(Path(scratch) / "config"))
        probe(TASKS[1], {**env, "LURCH_CACHE_DIR": "off"})  # bytecode written once, outside the figures
        for task in args.tasks:
            first_ever = []
            for k in range(args.repeats):
                first_ever.append(probe(task, {**env, "LURCH_CACHE_DIR": str(Path(scratch) / f"{task}-{k}")}))
            cached = [probe(task, {**env, "LURCH_CACHE_DIR": str(Path(scratch) / f"{task}-0")})
                      for _ in range(args.repeats)]
            results[task] = {"first ever": best(first_ever), "cached cold": best(cached)}
    print(f"{'task':22} {'state':12} {'import':>7} {'registry':>9} {'first':>7} {'total':>7}   (CPU s, best of "
          f"{args.repeats})")
    for task, states in results.items():
        for state, row in states.items():
            print(f"{task:22} {state:12} {row['import']:7.3f} {row['registry']:9.3f} {row['first']:7.3f} "
                  f"{row['total']:7.3f}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
