"""`lurch report` against hostile lm-eval logs (issue 26, items 3, 11, 13): one table row per attack.

    python scripts/attack_report.py [--lurch PATH/TO/lurch] [--base RUN_FOLDER] [--big-mb 200] [--json FILE]

Every case starts from a real lm-eval run (``--base``, or one ``lurch eval --model lurch-solver`` makes of
``find_the_origin``), changes one thing in its logs or around its ``--out`` folder, runs ``lurch report`` and records
the exit code, how many lines it printed on stderr, whether a traceback escaped, whether anything was written where
it must not be, and the child's peak RSS. ``--lurch`` picks the build to attack (run it once against the old one and
once against the new one for a before / after table).
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
from collections.abc import Callable
from pathlib import Path

STAMP = "2026-01-01T00-00-00.000000"
METADATA = json.dumps({"max_seq_lengths": [1024], "num_samples": 1})


def base_run(lurch: str, where: Path) -> Path:
    out = where / "base"
    done = subprocess.run([lurch, "eval", "--model", "lurch-solver", "--tasks", "find_the_origin", "--limit", "2",
                           "--metadata", METADATA, "--log_samples", "--output_path", str(out)],
                          capture_output=True, text=True)
    if done.returncode:
        sys.exit(done.stderr[-2000:])
    return next(out.rglob("results_*.json")).parent


def _pieces(base: Path) -> tuple[list[dict], dict]:
    samples = next(base.glob("samples_find_the_origin_2*.jsonl"))
    records = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines() if line.strip()]
    results = json.loads(next(base.glob("results_*.json")).read_text(encoding="utf-8"))
    return records, results


def _lines(records: list) -> bytes:
    return b"".join(json.dumps(r).encode("utf-8") + b"\n" for r in records)


def _edit(change: Callable[[dict], object]) -> Callable[[list[dict], dict], tuple[bytes, bytes]]:
    """A case that changes the first record (in place) and keeps the rest."""
    def build(records: list[dict], results: dict) -> tuple[bytes, bytes]:
        change(records[0])
        return _lines(records), json.dumps(results).encode()
    return build


def _label(label: str) -> Callable[[list[dict], dict], tuple[bytes, bytes]]:
    def build(records: list[dict], results: dict) -> tuple[bytes, bytes]:
        results["config"]["model"] = label
        return _lines(records), json.dumps(results).encode()
    return build


def _raw(first: bytes) -> Callable[[list[dict], dict], tuple[bytes, bytes]]:
    def build(records: list[dict], results: dict) -> tuple[bytes, bytes]:
        return first + b"\n" + _lines(records), json.dumps(results).encode()
    return build


def _results(text: bytes) -> Callable[[list[dict], dict], tuple[bytes, bytes]]:
    return lambda records, results: (_lines(records), text)


def _set(path: tuple, value: object) -> Callable[[dict], object]:
    def change(record: dict) -> None:
        target = record
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return change


def _drop(*path: str) -> Callable[[dict], object]:
    def change(record: dict) -> None:
        target = record
        for key in path[:-1]:
            target = target[key]
        target.pop(path[-1])
    return change


DEEP = b"[" * 200_000 + b"]" * 200_000
BAD_LOGS: dict[str, Callable[[list[dict], dict], tuple[bytes, bytes]]] = {
    "doc without id": _edit(_drop("doc", "id")),
    "doc without index": _edit(_drop("doc", "index")),
    "doc without answer": _edit(_drop("doc", "answer")),
    "doc without answer_items": _edit(_drop("doc", "answer_items")),
    "difficulty a string": _edit(_set(("doc", "difficulty"), "hard")),
    "difficulty.d NaN": _edit(_set(("doc", "difficulty", "d"), float("nan"))),
    "context_tokens Infinity": _edit(_set(("doc", "difficulty", "context_tokens"), float("inf"))),
    "index a string": _edit(_set(("doc", "index"), "x")),
    "index 5000 digits": _raw(b'{"doc": {"family": "find_the_origin", "answer_format": "entity", '
                              b'"family_version": "1", "difficulty": {}, "index": ' + b"9" * 5000 + b"}}"),
    "resps an int": _edit(_set(("resps",), 5)),
    "resps [[{}]]": _edit(_set(("resps",), [[{}]])),
    "params a list": _edit(_set(("doc", "params"), [1, 2])),
    "params deeply nested JSON": _edit(_set(("doc", "params"), "[" * 100_000 + "]" * 100_000)),
    "answer_items a string": _edit(_set(("doc", "answer_items"), "abc")),
    "record nested 200k deep": _raw(DEEP),
    "bad UTF-8": _raw(b'{"doc": "\xff\xfe"}'),
    "record a list": _raw(b"[1, 2]"),
    "results a list": _results(b"[1, 2]"),
    "results config a string": _results(b'{"config": "x"}'),
    "results not JSON": _results(b"{"),
    "results nested 200k deep": _results(DEEP),
}
LABELS = {
    "label $\\frac{a}{b}$ (mathtext)": "$\\frac{a}{b}$",
    "label $x^{$ (broken mathtext)": "$x^{$ and $\\undefined{y}$",
    "label deep mathtext (95 braces)": "$" + "{" * 95 + "x" + "}" * 95 + "$",
    "label with |, newline, =, ANSI": "evil|x\n| forged | row |\x1b[31m=HYPERLINK(\"http://x\")",
    "label _leading underscore": "_hidden",
}


def run_report(lurch: str, run_dir: Path, out: Path, *extra: str, timeout: float = 600) -> dict:
    """One ``lurch report`` in a child whose own rusage (peak RSS) is read with wait4."""
    started = time.monotonic()
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        child = subprocess.Popen([lurch, "report", str(run_dir), "--out", str(out), "--quiet", "--bootstrap", "20",
                                  *extra], stdout=stdout, stderr=stderr)
        timer = threading.Timer(timeout, child.kill)
        timer.start()
        _, status, usage = os.wait4(child.pid, 0)
        timer.cancel()
        child.returncode = os.waitstatus_to_exitcode(status)
        stdout.seek(0)
        stderr.seek(0)
        output, text = stdout.read().decode("utf-8", "replace"), stderr.read().decode("utf-8", "replace")
    return {"exit": child.returncode, "stderr_lines": len(text.strip().splitlines()),
            "traceback": "Traceback" in text, "last": text.strip().splitlines()[-1][:150] if text.strip() else "",
            "seconds": round(time.monotonic() - started, 1), "stdout": output, "peak_mb": round(usage.ru_maxrss / 1024)}


def _write_case(folder: Path, samples: bytes, results: bytes) -> Path:
    run = folder / "run"
    run.mkdir(parents=True)
    (run / f"results_{STAMP}.json").write_bytes(results)
    (run / f"samples_find_the_origin_{STAMP}.jsonl").write_bytes(samples)
    return run


def bad_log_cases(lurch: str, base: Path, work: Path) -> list[dict]:
    rows = []
    for name, build in BAD_LOGS.items():
        records, results = _pieces(base)
        run = _write_case(work / f"bad{len(rows)}", *build(records, results))
        out = work / f"bad{len(rows)}" / "out"
        row = run_report(lurch, run, out)
        named = f"{run}/samples_" in row["last"] or f"{run}/results_" in row["last"]  # the file is named
        row.update(case=name, written=out.exists(), ok=row["exit"] == 2 and row["stderr_lines"] == 1 and named
                   and not row["traceback"] and not out.exists())
        rows.append(row)
    return rows


def label_cases(lurch: str, base: Path, work: Path) -> list[dict]:
    rows = []
    for name, label in LABELS.items():
        records, results = _pieces(base)
        run = _write_case(work / f"label{len(rows)}", *_label(label)(records, results))
        out = work / f"label{len(rows)}" / "out"
        row = run_report(lurch, run, out)
        summary = (out / "summary.md").read_text(encoding="utf-8") if (out / "summary.md").exists() else ""
        forged = any(line.startswith("| forged") for line in summary.splitlines()) or "\x1b" in summary + row["stdout"]
        formula = any(line.startswith(("=", '"=')) or ",=" in line or ',"=' in line
                      for csv in out.glob("*.csv") for line in csv.read_text(encoding="utf-8").splitlines())
        row.update(case=name, written=out.exists(), ok=row["exit"] == 0 and not forged and not formula)
        row["last"] = row["last"] if row["exit"] else f"forged row: {forged}, CSV formula: {formula}"
        rows.append(row)
    return rows


def big_line_case(lurch: str, base: Path, work: Path, megabytes: int) -> dict:
    """One sample line of ``megabytes`` MB (a huge output), written in chunks: this process never holds it, so the
    child's peak RSS (inherited pages of a fork count until exec) is the child's own."""
    records, results = _pieces(base)
    records[0]["resps"] = [["@BIG@"]]
    head, tail = json.dumps(records[0]).encode().split(b"@BIG@")
    run = _write_case(work / "big", b"", json.dumps(results).encode())
    with (run / f"samples_find_the_origin_{STAMP}.jsonl").open("wb") as handle:
        handle.write(head)
        for _ in range(megabytes):
            handle.write(b"x" * (1 << 20))
        handle.write(tail + b"\n" + _lines(records[1:]))
    del records, head, tail
    row = run_report(lurch, run, work / "big" / "out")
    row.update(case=f"one {megabytes} MB line", written=(work / "big" / "out").exists(),
               ok=row["exit"] == 2 and row["stderr_lines"] == 1 and not row["traceback"])
    return row


def folder_cases(lurch: str, base: Path, work: Path) -> list[dict]:
    """--overwrite with a planted manifest (``../victim``, a symlink out) and a read-only --out (needs root)."""
    rows = []
    for name, listed, link in (("--overwrite, manifest lists ../victim", "../victim", False),
                               ("--overwrite, manifest lists a symlink out", "link/victim", True)):
        case = work / f"folder{len(rows)}"
        (case / "out").mkdir(parents=True)
        victim = case / "victim"
        victim.write_text("precious\n")
        if link:
            (case / "out" / "link").symlink_to(case)
        (case / "out" / ".lurch-report.json").write_text(json.dumps(
            {"written_by": "lurch report (0)", "files": [listed, ".lurch-report.json"]}))
        row = run_report(lurch, base, case / "out", "--overwrite")
        row.update(case=name, written=not victim.exists(),
                   ok=victim.exists() and row["exit"] == 2 and row["stderr_lines"] == 1 and not row["traceback"])
        rows.append(row)
    mount = work / "readonly"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(mount)]).returncode == 0:
        try:
            row = run_report(lurch, base, mount / "out")
            row.update(case="--out on a read-only mount", written=any(mount.iterdir()),
                       ok=row["exit"] not in (0, None) and row["stderr_lines"] == 1 and not row["traceback"])
            rows.append(row)
        finally:
            subprocess.run(["umount", str(mount)])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lurch", default=str(Path(sys.executable).parent / "lurch"))
    parser.add_argument("--base", type=Path, help="a run folder (results_*.json + samples_find_the_origin_*.jsonl)")
    parser.add_argument("--big-mb", type=int, default=200)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lurch-attack-") as temporary:
        work = Path(temporary)
        base = args.base or base_run(args.lurch, work)
        rows = bad_log_cases(args.lurch, base, work) + label_cases(args.lurch, base, work)
        rows += folder_cases(args.lurch, base, work)
        if args.big_mb:
            rows.append(big_line_case(args.lurch, base, work, args.big_mb))
        shutil.rmtree(work / "big", ignore_errors=True)
    print(f"{'case':45} {'ok':3} {'exit':>4} {'lines':>5} {'tb':3} {'MB':>5} {'s':>6}  last line")
    for row in rows:
        print(f"{row['case'][:45]:45} {'yes' if row['ok'] else 'NO':3} {row['exit']!s:>4} {row['stderr_lines']:5} "
              f"{'TB' if row['traceback'] else '':3} {row['peak_mb']!s:>5} {row['seconds']:6}  {row['last']}")
    print(f"{sum(r['ok'] for r in rows)} of {len(rows)} cases handled")
    if args.json:
        args.json.write_text(json.dumps([{k: v for k, v in r.items() if k != "stdout"} for r in rows], indent=2))


if __name__ == "__main__":
    main()
