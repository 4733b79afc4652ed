"""The performance referee: generation against one tokenizer pass, and against lm-eval's RULER port.

    python scripts/bench.py [--lengths 4096 16384 32768 131072] [--samples 8] [--repeats N] [--skip-ruler]
                            [--json FILE]

In one process and one run it measures, per prompt length:
  * ``ours / pass``: generating N instances of each family (reference tokenizer, tiktoken cl100k) divided
    by tokenizing each produced prompt once with the same tokenizer: the floor is one pass plus writing.
  * ``s / 1M tokens``: the same N instances built in an HF copy of cl100k (converted offline from the
    bundled tiktoken file with transformers' converter), next to lm-eval's RULER ``niah_single_1`` and
    ``ruler_vt`` generators with the same HF tokenizer and the same N, in seconds per million prompt tokens.
Every figure is the median of several runs (ours on disjoint instances), ours and RULER's interleaved, in CPU
seconds of this process; the speedup is taken within each run. N is per run, as a user's run of N samples
pays it: RULER searches its haystack size once per run, which weighs on small N at short lengths.
RULER needs ``wonderwords`` (PyPI) and looks for NLTK's ``punkt_tab``; an empty folder satisfies that check
(the ``repeat`` haystack never splits sentences), so nothing is downloaded.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from lurch_tasks.core.files import atomic_output
from lurch_tasks.core.generation import resolve_task
from lurch_tasks.core.registry import get_family
from lurch_tasks.core.tokens import get_token_counter

FAMILIES = {"find_the_origin": "find_the_origin", "graph": "memory_drift_edge"}
HF_CL100K = Path(tempfile.gettempdir()) / "lurch-bench-cl100k-hf"


@dataclass(frozen=True)
class Timing:
    seconds: float
    prompt_tokens: int

    @property
    def per_million(self) -> float:
        return self.seconds / self.prompt_tokens * 1e6


def build_hf_cl100k(folder: Path = HF_CL100K) -> Path:
    """An HF fast-tokenizer copy of cl100k_base, converted offline from the bundled tiktoken file."""
    if (folder / "tokenizer.json").is_file():
        return folder
    import tiktoken_ext
    from transformers import PreTrainedTokenizerFast
    from transformers.convert_slow_tokenizer import TikTokenConverter

    vocab = Path(tiktoken_ext.__path__[0]) / "data" / "cl100k_base.tiktoken"
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=TikTokenConverter(vocab_file=str(vocab)).converted())
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    tokenizer.save_pretrained(str(staging))
    try:
        staging.rename(folder)  # whole or absent: an interrupted conversion leaves only a staging folder
    except OSError:  # another run got there first
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def task_at(config: str, length: int, samples: int, tokenizer: str | None = None):
    overrides: dict = {"context_tokens": [length]}
    if tokenizer:
        overrides["tokenizer"] = tokenizer
    task = resolve_task(config, overrides)
    cells = len(task.config.cells())
    return resolve_task(config, {**overrides, "num_samples": -(-samples // cells)})


RULER_TASKS = ("niah_single_1", "ruler_vt")


def clock() -> float:
    """CPU seconds of this process: what the work costs, without the time other tenants of a shared machine
    take (wall-clock figures on a 2-core VM moved by 30-50% between identical runs). Every timed step here is
    single-threaded, ours and RULER's alike."""
    return time.process_time()


MIN_TOKENS_PER_FIGURE = 262_144  # enough runs that a figure spans a few hundred milliseconds of work at least


def repeats_for(length: int, samples: int) -> int:
    """Runs per figure: at least three, more at short lengths, where one run is a few dozen milliseconds."""
    return max(3, -(-MIN_TOKENS_PER_FIGURE // (samples * length)))


def generate(config: str, length: int, samples: int, repeats: int, repeat: int,
             tokenizer: str | None = None) -> tuple[float, list[str]]:
    """Seconds to generate instances [repeat * samples, (repeat + 1) * samples), and their prompts."""
    task = task_at(config, length, samples * repeats + 1, tokenizer)
    family = get_family(task.family)
    start = clock()
    prompts = [family.generate(task.config, task.seed, "test", i, task.name).prompt
               for i in range(repeat * samples, (repeat + 1) * samples)]
    return clock() - start, prompts


def one_pass_seconds(prompts: list[str], tokenizer: str) -> tuple[float, int]:
    """Seconds to tokenize every prompt once (best of three: the same work, so noise only adds), and tokens."""
    counter = get_token_counter(tokenizer)
    best, tokens = float("inf"), 0
    for _ in range(3):
        start = clock()
        tokens = sum(counter.count(p) for p in prompts)
        best = min(best, clock() - start)
    return best, tokens


def warm(config: str, length: int, samples: int, repeats: int, tokenizer: str | None = None) -> float:
    """Pay the once-per-process costs first (vocabulary tables, the world of the config, the tokenizer);
    returns their seconds."""
    start = clock()
    task = task_at(config, length, samples * repeats + 1, tokenizer)
    last = task.config.size() - 1  # same config and split (one graph world per split), never measured
    get_family(task.family).generate(task.config, task.seed, "test", last, task.name)
    return clock() - start


def ours_vs_pass(length: int, samples: int, repeats: int) -> tuple[dict, dict]:
    """Median ratio per family, and the once-per-process setup seconds (first instance: vocabulary cost
    table, the graph world of the config and split, the tokenizer)."""
    row, setup = {}, {}
    for label, config in FAMILIES.items():
        setup[label] = round(warm(config, length, samples, repeats), 2)
        ratios = []
        for repeat in range(repeats):
            seconds, prompts = generate(config, length, samples, repeats, repeat)
            ratios.append(seconds / one_pass_seconds(prompts, "cl100k_base")[0])
        row[label] = round(statistics.median(ratios), 2)
    return row, setup


def ours_hf_once(length: int, samples: int, repeats: int, repeat: int, tokenizer: str) -> dict[str, Timing]:
    out = {}
    for label, config in FAMILIES.items():
        seconds, prompts = generate(config, length, samples, repeats, repeat, tokenizer)
        out[label] = Timing(seconds, sum(get_token_counter(tokenizer).count_many(prompts)))
    return out


@dataclass(frozen=True)
class HeadToHead:
    per_million: dict[str, float]  # per generator, the median over runs
    speedup: float  # median over runs of (RULER's faster generator / our slower family), per token


def head_to_head(length: int, samples: int, repeats: int, tokenizer_dir: Path) -> HeadToHead:
    """Ours (in the HF tokenizer) against RULER's, in interleaved runs (ours, RULER's, ours again, ...), so
    that a slow spell of the machine hits both sides alike; the speedup is taken within each run. Our runs
    use disjoint instances; RULER seeds its own generators, so each of its runs repeats the same work,
    including the haystack search it does once per run."""
    for config in FAMILIES.values():
        warm(config, length, samples, repeats, str(tokenizer_dir))
    runs = [{**ours_hf_once(length, samples, repeats, repeat, str(tokenizer_dir)),
             **ruler_once(length, samples, tokenizer_dir)} for repeat in range(repeats)]
    speedups = [min(run[k].per_million for k in RULER_TASKS) / max(run[k].per_million for k in FAMILIES)
                for run in runs]
    return HeadToHead({key: statistics.median(run[key].per_million for run in runs) for key in runs[0]},
                      statistics.median(speedups))


def ruler_once(length: int, samples: int, tokenizer_dir: Path) -> dict[str, Timing]:
    nltk_data = Path(tempfile.gettempdir()) / "lurch-bench-nltk"
    (nltk_data / "tokenizers" / "punkt_tab").mkdir(parents=True, exist_ok=True)
    os.environ["NLTK_DATA"] = str(nltk_data)
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_dir))
    from lm_eval.tasks.ruler import niah_utils, prepare_niah, vt_utils

    def count(rows: list[dict]) -> int:
        return sum(len(tokenizer(r["input"]).input_ids) for r in rows)

    with contextlib.redirect_stdout(io.StringIO()):  # RULER prints every step of its length search
        start = clock()
        niah = prepare_niah.generate_samples(prepare_niah.get_haystack(type_haystack="repeat"), TOKENIZER=tokenizer,
                                             max_seq_length=length, template=niah_utils.TEMPLATE,
                                             type_haystack="repeat", type_needle_k="words", type_needle_v="numbers",
                                             num_samples=samples)
        niah_s = clock() - start
        start = clock()
        icl = vt_utils.sys_vartrack_w_noise_random(tokenizer=tokenizer, num_samples=1, max_seq_length=500,
                                                   incremental=5)[0]
        vt = vt_utils.sys_vartrack_w_noise_random(tokenizer=tokenizer, num_samples=samples, max_seq_length=length,
                                                  icl_example=icl)
        vt_s = clock() - start
    return {"niah_single_1": Timing(niah_s, count(niah)), "ruler_vt": Timing(vt_s, count(vt))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[4096, 16384, 32768, 131072])
    parser.add_argument("--samples", type=int, default=8,
                        help="instances per generator and run, the same for ours and RULER's (default 8)")
    parser.add_argument("--repeats", type=int, default=None,
                        help="runs per figure (default: at least 3, and enough for 256k tokens per figure)")
    parser.add_argument("--skip-ruler", action="store_true", help="only generation against one tokenizer pass")
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    args = parser.parse_args()
    if args.samples < 1 or (args.repeats is not None and args.repeats < 1):
        parser.error("--samples and --repeats: allowed: integers >= 1")
    figures: dict = {"samples": args.samples, "lengths": {}}
    print(f"{args.samples} instances per generator and run; CPU seconds; medians over runs, ratios within a run\n")
    print("| length | runs | FtO / pass | graph / pass |" + ("" if args.skip_ruler else
          " FtO s/1M | graph s/1M | niah s/1M | vt s/1M | RULER best / ours worst |"))
    print("|---:|---:|---:|---:|" + ("" if args.skip_ruler else "---:|---:|---:|---:|---:|"))
    hf_dir = None if args.skip_ruler else build_hf_cl100k()
    for length in args.lengths:
        repeats = args.repeats or repeats_for(length, args.samples)
        ratios, setup = ours_vs_pass(length, args.samples, repeats)
        entry: dict = {"runs": repeats, "ours_over_one_pass": ratios, "setup_seconds": setup}
        line = f"| {length} | {repeats} | {ratios['find_the_origin']} | {ratios['graph']} |"
        if hf_dir is not None:
            result = head_to_head(length, args.samples, repeats, hf_dir)
            per = {k: round(v, 2) for k, v in result.per_million.items()}
            entry["seconds_per_million_tokens"] = per
            entry["ruler_best_over_ours_worst"] = round(result.speedup, 2)
            line += (f" {per['find_the_origin']} | {per['graph']} | {per['niah_single_1']} | {per['ruler_vt']} |"
                     f" {result.speedup:.2f}x |")
        figures["lengths"][length] = entry
        print(line, flush=True)
    print("\nsetup, once per process (FtO: word cost table; graph: the world of the config and split), seconds:")
    for length, entry in figures["lengths"].items():
        print(f"  {length}: " + ", ".join(f"{k} {v}" for k, v in entry["setup_seconds"].items()))
    if args.json:
        with atomic_output(Path(args.json)) as out:
            out.write(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
