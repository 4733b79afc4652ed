"""Run several `lurch eval` command lines in ONE Python process, loading each Hugging Face model and tokenizer once.

Usage: python lurch_evals_one_process.py ARGV_JSON [ARGV_JSON ...] (each a JSON list: the arguments after
``lurch eval``). Every run goes through the real CLI entry (``lurch_tasks.cli.main``) and lm-eval; only
``from_pretrained`` is memoized, so a second run with other model arguments (e.g. ``think_end_token``) reuses the
weights the first one read from disk instead of importing everything and dequantizing the GGUF again. Before each
run a line ``RUN_MARK <i>`` goes to stdout and stderr, so a test can split the logs per run. Exit code: the first
non-zero run's, else 0.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

RUN_MARK = "=== lurch-evals-one-process run"


def memoized(load: Callable[..., Any]) -> Callable[..., Any]:
    """``load`` called once per distinct arguments (repr of args and kwargs: paths, dtypes, strings)."""
    cache: dict[str, Any] = {}

    def once(*args: Any, **kwargs: Any) -> Any:
        key = repr((args, sorted(kwargs.items())))
        if key not in cache:
            cache[key] = load(*args, **kwargs)
        else:
            print(f"{RUN_MARK}: reused {getattr(load, '__qualname__', load)}", file=sys.stderr)
        return cache[key]

    return once


def share_loaded_models() -> None:
    import transformers

    # Plain functions on the class: looked up through the class they stay unbound, so callers pass the same
    # arguments as before and get the bound classmethod's result.
    for cls in (transformers.AutoModelForCausalLM, transformers.AutoTokenizer):
        cls.from_pretrained = memoized(cls.from_pretrained)


def main(runs: list[list[str]]) -> int:
    from lurch_tasks.cli import main as lurch_main

    share_loaded_models()
    for i, argv in enumerate(runs):
        for stream in (sys.stdout, sys.stderr):
            print(f"{RUN_MARK} {i}", file=stream, flush=True)
        code = lurch_main(["eval", *argv])
        sys.stdout.flush()
        sys.stderr.flush()
        if code:
            return code  # the failing run's log is the last part
    return 0


def split_log(text: str, runs: int) -> list[str]:
    """One process's stdout or stderr cut into the runs' parts (what came before the first run is dropped)."""
    parts = text.split(f"{RUN_MARK} ")[1:]
    assert len(parts) == runs, f"expected {runs} runs in the log, found {len(parts)}"
    return [part.split("\n", 1)[1] if "\n" in part else "" for part in parts]


def lurch_evals(runs: list[list[str]], env: Mapping[str, str] | None = None, timeout: float = 1800,
                cwd: Path | None = None) -> list[subprocess.CompletedProcess]:
    """Every `lurch eval` argument list run in one process (see the module docstring), which must succeed; one
    CompletedProcess per run with that run's part of stdout and stderr."""
    script = Path(__file__).resolve()
    proc = subprocess.run([sys.executable, str(script), *map(json.dumps, runs)], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=timeout, cwd=cwd)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    stdouts, stderrs = split_log(proc.stdout, len(runs)), split_log(proc.stderr, len(runs))
    return [subprocess.CompletedProcess([*proc.args[:2], json.dumps(argv)], 0, out, err)
            for argv, out, err in zip(runs, stdouts, stderrs, strict=True)]


if __name__ == "__main__":
    sys.exit(main([json.loads(arg) for arg in sys.argv[1:]]))
