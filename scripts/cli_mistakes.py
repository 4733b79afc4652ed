"""Run 26 typical new-user mistakes against the installed `lurch` (and `lm_eval --include_path $(lurch tasks-path)`)
and print one table row each: the mistake, the exit code, the wall time until the first error line, that line.

Every mistake should end with exactly one line `lurch: error: <field>: <value> ...; allowed: ...` (or, for lm-eval's
own flags under plain `lm_eval`, lm-eval's one clear message), exit != 0, no traceback, within 5 s. A row that
breaks one of these is marked in the last column; the script exits 1 when any row does.

    python scripts/cli_mistakes.py              # the table (Markdown)
    python scripts/cli_mistakes.py --only hf    # the mistakes whose name contains "hf"

Timing lives here, never in the tests (tests/test_no_clock.py): on a busy machine wall times are inflated.
Nothing here downloads anything: the Hugging Face libraries run offline.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

LIMIT_S = 5.0  # a user should see the error within this many seconds
TIMEOUT_S = 120.0
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
EVAL = ["eval", "--model", "lurch-solver", "--tasks", "find_the_origin", "--limit", "1"]
GEN = ["generate", "--config", "find_the_origin", "--n", "1"]
ALLOWED_WORDS = ("allowed:", "choose from")  # ours, and argparse's list of choices


@dataclass(frozen=True)
class Mistake:
    name: str
    argv: tuple[str, ...]  # after the program name
    program: str = "lurch"  # or "lm_eval"


@dataclass(frozen=True)
class Outcome:
    mistake: Mistake
    code: int | None  # None: killed at the timeout
    first_error_s: float | None  # wall seconds until the error line appeared
    line: str
    error_lines: int  # how many `lurch: error` lines
    traceback: bool

    def problems(self) -> list[str]:
        found = []
        if self.code in (0, None):
            found.append("exit 0" if self.code == 0 else "timeout")
        if self.traceback:
            found.append("traceback" + (" (lm-eval's own)" if self.mistake.program != "lurch" else ""))
        if self.mistake.program == "lurch" and self.error_lines != 1:
            found.append(f"{self.error_lines} error lines")
        if self.mistake.program == "lurch" and self.line and not any(word in self.line for word in ALLOWED_WORDS):
            found.append("does not say what is allowed")
        if self.first_error_s is None or self.first_error_s > LIMIT_S:
            found.append("slow" if self.first_error_s is not None else "no error line")
        return found


def fixtures(root: Path) -> dict[str, str]:
    """Paths the mistakes point at: a user's file, empty folders, a run without samples, a bad submission."""
    (root / "notes.txt").write_text("my notes\n", encoding="utf-8")
    (root / "empty").mkdir()
    (root / "results-only").mkdir()
    (root / "results-only" / "results_2026-01-01T00-00-00.000000.json").write_text("{}", encoding="utf-8")
    (root / "photos").mkdir()
    (root / "photos" / "cat.jpg").write_bytes(b"\xff\xd8\xff not really a picture")
    (root / "submission").mkdir()
    (root / "submission" / "submission.json").write_text(json.dumps({"schema_version": 1, "model": "my-model"}),
                                                         encoding="utf-8")
    return {name: str(root / name) for name in ("notes.txt", "empty", "results-only", "photos", "submission")}


def mistakes(paths: dict[str, str], tasks_path: str) -> list[Mistake]:
    out = str(Path(paths["empty"]).parent / "out")
    simulated = ["eval", "--model", "lurch-simulated", "--tasks", "find_the_origin", "--limit", "1"]
    hf = ["eval", "--model", "hf", "--tasks", "find_the_origin", "--limit", "1"]
    return [
        Mistake("misspelled task", ("eval", "--model", "lurch-solver", "--tasks", "memory_drfit", "--limit", "1")),
        Mistake("misspelled model", ("eval", "--model", "lurch-solvr", "--tasks", "find_the_origin", "--limit", "1")),
        Mistake("misspelled config in materialize", ("materialize", "--config", "find_the_orign", "--out", out)),
        Mistake("misspelled --set key", (*GEN, "--set", "num_sample=2")),
        Mistake("misspelled --metadata key", (*EVAL, "--metadata", '{"context_token": [512]}')),
        Mistake("--set context_tokens=[abc]", (*GEN, "--set", "context_tokens=[abc]")),
        Mistake("--set a string where a list is expected", (*GEN, "--set", "context_tokens=4096")),
        Mistake("negative --limit", (*EVAL[:-1], "-1")),
        Mistake("unknown subcommand", ("evaluate", "--model", "lurch-solver")),
        Mistake("materialize without --out", ("materialize", "--config", "find_the_origin")),
        Mistake("--out is a user's file", ("materialize", "--config", "find_the_origin", "--out",
                                          paths["notes.txt"])),
        Mistake("report on a missing folder", ("report", str(Path(paths["empty"]).parent / "no-such-runs"),
                                               "--out", out)),
        Mistake("report on an empty folder", ("report", paths["empty"], "--out", out)),
        Mistake("report on a folder without samples", ("report", paths["results-only"], "--out", out)),
        Mistake("validate a folder that is not a dataset", ("validate", paths["photos"])),
        Mistake("leaderboard validate a bad submission", ("leaderboard", "validate", paths["submission"])),
        Mistake("--model hf without pretrained", tuple(hf)),
        Mistake("tokenizer path that does not exist", (*EVAL, "--metadata", '{"tokenizer": "/no/such/tokenizer"}')),
        Mistake("max_model_len=abc", (*EVAL, "--metadata", '{"max_model_len": "abc"}')),
        Mistake("dataset_path that does not exist", (*EVAL, "--metadata", '{"dataset_path": "/no/such/dataset"}')),
        Mistake("--tasks empty", ("eval", "--model", "lurch-solver", "--tasks", "", "--limit", "1")),
        Mistake("seed not an integer", (*GEN, "--seed", "abc")),
        Mistake("split unknown", (*GEN, "--split", "dev")),
        Mistake("--gen_kwargs malformed", (*EVAL, "--gen_kwargs", "max_gen_toks")),
        Mistake("--model_args malformed for lurch-simulated", (*simulated, "--model_args", "intercept=high")),
        Mistake("lm_eval: misspelled task", ("--include_path", tasks_path, "--model", "lurch-solver", "--tasks",
                                             "memory_drfit", "--limit", "1"), program="lm_eval"),
    ]


def executable(name: str) -> str:
    """The console script next to this Python (the venv's), else on PATH."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        raise SystemExit(f"cli_mistakes: error: {name!r} is not installed here; allowed: run from the venv that has "
                         "lurch-tasks installed")
    return found


def error_line(line: str, program: str) -> bool:
    """The line a user reads as the error: ours, or (plain lm_eval) lm-eval's own."""
    if program == "lurch":
        return line.startswith("lurch: error")
    return "error" in line.lower() and not line.startswith(" ")


def run(mistake: Mistake, cwd: Path) -> Outcome:
    """Run one mistake, reading stderr as it comes, to time the first error line."""
    env = {**os.environ, **OFFLINE}
    start = time.monotonic()
    proc = subprocess.Popen([executable(mistake.program), *mistake.argv], cwd=cwd, env=env, text=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, errors="replace")
    killer = threading.Timer(TIMEOUT_S, proc.kill)
    killer.start()
    lines: list[str] = []
    first: tuple[float, str] | None = None
    assert proc.stderr is not None
    for raw in proc.stderr:
        line = raw.rstrip("\n")
        lines.append(line)
        if first is None and error_line(line, mistake.program):
            first = (time.monotonic() - start, line)
    code = proc.wait()
    killer.cancel()
    if first is None and mistake.program != "lurch":  # lm-eval's last word, if it never says "error"
        text = [line for line in lines if line.strip()]
        first = (time.monotonic() - start, text[-1]) if text else None
    errors = sum(line.startswith("lurch: error") for line in lines)
    return Outcome(mistake, None if code < 0 else code, first[0] if first else None, first[1] if first else "",
                   errors, any("Traceback" in line for line in lines))


def table(outcomes: list[Outcome]) -> str:
    rows = ["| # | mistake | exit | first error (s) | error line | problems |", "|---|---|---|---|---|---|"]
    for number, outcome in enumerate(outcomes, start=1):
        seconds = f"{outcome.first_error_s:.1f}" if outcome.first_error_s is not None else "-"
        line = outcome.line.replace("|", "\\|")
        rows.append(f"| {number} | {outcome.mistake.name} | {outcome.code} | {seconds} | {line} | "
                    f"{', '.join(outcome.problems()) or 'ok'} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="run only the mistakes whose name contains this text")
    args = parser.parse_args(argv)
    tasks_path = subprocess.run([executable("lurch"), "tasks-path"], capture_output=True, text=True,
                                check=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="lurch-mistakes-") as folder:
        root = Path(folder)
        chosen = [m for m in mistakes(fixtures(root), tasks_path) if args.only in m.name]
        outcomes = []
        for mistake in chosen:
            outcomes.append(run(mistake, root))
            print(f"{len(outcomes)}/{len(chosen)} {mistake.name}", file=sys.stderr, flush=True)
    print(table(outcomes))
    bad = [o for o in outcomes if o.problems()]
    print(f"\n{len(outcomes) - len(bad)} of {len(outcomes)} mistakes: one clear error line, exit != 0, no traceback, "
          f"within {LIMIT_S:g} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
