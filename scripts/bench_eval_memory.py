"""Benchmark: peak memory of `lurch eval` as --limit grows (our part must stay flat), beside lm-eval's own.

    python scripts/bench_eval_memory.py [--limits 10 40 160] [--tasks memory_drift] [--model lurch-solver]
                                        [--cold] [--log-samples] [--dummy]

Each run is a fresh process; its peak RSS is read with getrusage(RUSAGE_CHILDREN) after it exits. By default the
doc cache is warmed by a first run of the largest limit (so the figures are about holding docs, not generating
them); --cold gives every run an empty cache folder. --dummy adds `lm_eval run --model dummy` on the same tasks
and limits (lm-eval's own CLI and model with our YAMLs): the growth both share is the requests lm-eval builds,
one Python copy of every doc, before it runs the model.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LURCH = "import sys; from lurch_tasks.cli import run; sys.argv = ['lurch', *sys.argv[1:]]; run()"
LM_EVAL = "import sys; from lm_eval.__main__ import cli_evaluate; sys.argv = ['lm-eval', *sys.argv[1:]]; cli_evaluate()"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limits", type=int, nargs="+", default=[10, 40, 160])
    parser.add_argument("--tasks", default="memory_drift")
    parser.add_argument("--model", default="lurch-solver")
    parser.add_argument("--cold", action="store_true", help="an empty doc cache for every run")
    parser.add_argument("--log-samples", action="store_true", help="also keep and write per-sample logs")
    parser.add_argument("--dummy", action="store_true", help="also run lm_eval --model dummy on the same tasks")
    args = parser.parse_args()
    yamls = Path(__file__).resolve().parent.parent / "yaml_tasks"
    rows = []
    with tempfile.TemporaryDirectory(prefix="lurch-evalmem-") as tmp:
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "LURCH_CACHE_DIR": f"{tmp}/cache"}
        logs = ["--log_samples"] if args.log_samples else []

        def command(script: str, model: str, limit: int, kind: str) -> list[str]:
            head = [sys.executable, "-c", script] + (["eval"] if script is LURCH else ["run", "--include_path",
                                                                                       str(yamls)])
            return [*head, "--model", model, "--tasks", args.tasks, "--limit", str(limit),
                    "--output_path", f"{tmp}/out-{kind}-{limit}", *logs]

        if not args.cold:  # warm the doc cache once (its RSS is not reported)
            subprocess.run(command(LURCH, args.model, max(args.limits), "warm"), env=env, capture_output=True,
                           check=True)
        print(f"{args.tasks}, {'cold' if args.cold else 'warm'} doc cache"
              f"{', --log_samples' if args.log_samples else ''}; each child's peak RSS")
        print("| command | --limit | peak RSS (MiB) | CPU s | wall s |\n|---|---:|---:|---:|---:|")
        for kind, script, model in [("lurch eval", LURCH, args.model)] + (
                [("lm_eval dummy", LM_EVAL, "dummy")] if args.dummy else []):
            for limit in args.limits:
                if args.cold:
                    env["LURCH_CACHE_DIR"] = f"{tmp}/cache-{kind.replace(' ', '-')}-{limit}"
                # RUSAGE_CHILDREN keeps the largest child's peak: measure each run in its own wrapper process
                wrapper = [sys.executable, "-c", "import resource, subprocess, sys; "
                           "subprocess.run(sys.argv[1:], check=True); "
                           "u = resource.getrusage(resource.RUSAGE_CHILDREN); "
                           "print(u.ru_maxrss, u.ru_utime + u.ru_stime)",
                           *command(script, model, limit, kind.replace(" ", "-"))]
                start = time.perf_counter()
                proc = subprocess.run(wrapper, env=env, capture_output=True, text=True, check=False)
                wall = time.perf_counter() - start
                if proc.returncode:
                    sys.stderr.write(proc.stderr[-3000:])
                    return proc.returncode
                maxrss, cpu = proc.stdout.strip().splitlines()[-1].split()
                peak = int(maxrss) / 1024
                rows.append((kind, limit, peak))
                print(f"| {kind} | {limit} | {peak:.0f} | {float(cpu):.1f} | {wall:.0f} |", flush=True)
    for kind in dict.fromkeys(r[0] for r in rows):
        own = [r for r in rows if r[0] == kind]
        if len(own) > 1:
            print(f"{kind}: peak RSS at --limit {own[-1][1]} / at --limit {own[0][1]}: {own[-1][2] / own[0][2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
