"""The performance referee: generation against one tokenizer pass, and against lm-eval's RULER port.

    python scripts/bench.py [--lengths 4096 16384 32768 131072] [--samples 8] [--skip-ruler] [--json FILE]

In one process and one run it measures, per prompt length:
  * ``ours / pass``: generating N instances of each family (reference tokenizer, tiktoken cl100k) divided
    by tokenizing each produced prompt once with the same tokenizer: the floor is one pass plus writing.
  * ``s / 1M tokens``: the same N instances built in an HF copy of cl100k (converted offline from the
    bundled tiktoken file with transformers' converter), next to lm-eval's RULER ``niah_single_1`` and
    ``ruler_vt`` generators with the same HF tokenizer and the same N, in seconds per million prompt tokens.
RULER needs ``wonderwords`` (PyPI) and looks for NLTK's ``punkt_tab``; an empty folder satisfies that check
(the ``repeat`` haystack never splits sentences), so nothing is downloaded.
"""

from __future__ import annotations

import argparse
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


REPEATS = 3  # runs per figure, each on its own instances (no cache sees an instance twice); the median is kept


def generate(config: str, length: int, samples: int, tokenizer: str | None = None,
             repeat: int = 0) -> tuple[float, list[str]]:
    """Seconds to generate instances [repeat * samples, (repeat + 1) * samples), and their prompts."""
    task = task_at(config, length, samples * REPEATS + 1, tokenizer)
    family = get_family(task.family)
    start = time.perf_counter()
    prompts = [family.generate(task.config, task.seed, "test", i, task.name).prompt
               for i in range(repeat * samples, (repeat + 1) * samples)]
    return time.perf_counter() - start, prompts


def one_pass_seconds(prompts: list[str], tokenizer: str) -> tuple[float, int]:
    """Seconds to tokenize every prompt once (best of three: the same work, so noise only adds), and tokens."""
    counter = get_token_counter(tokenizer)
    best, tokens = float("inf"), 0
    for _ in range(3):
        start = time.perf_counter()
        tokens = sum(counter.count(p) for p in prompts)
        best = min(best, time.perf_counter() - start)
    return best, tokens


def warm(config: str, length: int, samples: int, tokenizer: str | None = None) -> float:
    """Pay the once-per-process costs first (vocabulary tables, the world of the config, the tokenizer);
    returns their seconds."""
    start = time.perf_counter()
    task = task_at(config, length, samples * REPEATS + 1, tokenizer)
    last = task.config.size() - 1  # same config and split (one graph world per split), never measured
    get_family(task.family).generate(task.config, task.seed, "test", last, task.name)
    return time.perf_counter() - start


def ours_vs_pass(length: int, samples: int) -> tuple[dict, dict]:
    """Median ratio per family, and the once-per-process setup seconds (first instance: vocabulary cost
    table, the graph world of the config and split, the tokenizer)."""
    row, setup = {}, {}
    for label, config in FAMILIES.items():
        setup[label] = round(warm(config, length, samples), 2)
        ratios = []
        for repeat in range(REPEATS):
            seconds, prompts = generate(config, length, samples, repeat=repeat)
            ratios.append(seconds / one_pass_seconds(prompts, "cl100k_base")[0])
        row[label] = round(statistics.median(ratios), 2)
    return row, setup


def ours_hf(length: int, samples: int, tokenizer: str) -> dict[str, Timing]:
    out = {}
    for label, config in FAMILIES.items():
        warm(config, length, samples, tokenizer)
        seconds, prompts = generate(config, length, samples, tokenizer)
        out[label] = Timing(seconds, sum(get_token_counter(tokenizer).count_many(prompts)))
    return out


def ruler(length: int, samples: int, tokenizer_dir: Path) -> dict[str, Timing]:
    nltk_data = Path(tempfile.gettempdir()) / "lurch-bench-nltk"
    (nltk_data / "tokenizers" / "punkt_tab").mkdir(parents=True, exist_ok=True)
    os.environ["NLTK_DATA"] = str(nltk_data)
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_dir))
    from lm_eval.tasks.ruler import niah_utils, prepare_niah, vt_utils

    def count(rows: list[dict]) -> int:
        return sum(len(tokenizer(r["input"]).input_ids) for r in rows)

    start = time.perf_counter()
    niah = prepare_niah.generate_samples(prepare_niah.get_haystack(type_haystack="repeat"), TOKENIZER=tokenizer,
                                         max_seq_length=length, template=niah_utils.TEMPLATE, type_haystack="repeat",
                                         type_needle_k="words", type_needle_v="numbers", num_samples=samples)
    niah_s = time.perf_counter() - start
    start = time.perf_counter()
    icl = vt_utils.sys_vartrack_w_noise_random(tokenizer=tokenizer, num_samples=1, max_seq_length=500, incremental=5)[0]
    vt = vt_utils.sys_vartrack_w_noise_random(tokenizer=tokenizer, num_samples=samples, max_seq_length=length,
                                              icl_example=icl)
    vt_s = time.perf_counter() - start
    return {"niah_single_1": Timing(niah_s, count(niah)), "ruler_vt": Timing(vt_s, count(vt))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[4096, 16384, 32768, 131072])
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--skip-ruler", action="store_true", help="only generation against one tokenizer pass")
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    args = parser.parse_args()
    figures: dict = {"samples": args.samples, "lengths": {}}
    print(f"{args.samples} instances per family and length; ratios within this run\n")
    print("| length | FtO / pass | graph / pass |" + ("" if args.skip_ruler else
          " FtO s/1M | graph s/1M | niah s/1M | vt s/1M | RULER best / ours worst |"))
    print("|---:|---:|---:|" + ("" if args.skip_ruler else "---:|---:|---:|---:|---:|"))
    hf_dir = None if args.skip_ruler else build_hf_cl100k()
    for length in args.lengths:
        ratios, setup = ours_vs_pass(length, args.samples)
        entry: dict = {"ours_over_one_pass": ratios, "setup_seconds": setup}
        line = f"| {length} | {ratios['find_the_origin']} | {ratios['graph']} |"
        if hf_dir is not None:
            ours = ours_hf(length, args.samples, str(hf_dir))
            theirs = ruler(length, args.samples, hf_dir)
            per = {k: round(v.per_million, 2) for k, v in {**ours, **theirs}.items()}
            speedup = min(theirs[k].per_million for k in theirs) / max(ours[k].per_million for k in ours)
            entry["seconds_per_million_tokens"] = per
            entry["ruler_best_over_ours_worst"] = round(speedup, 2)
            line += (f" {per['find_the_origin']} | {per['graph']} | {per['niah_single_1']} | {per['ruler_vt']} |"
                     f" {speedup:.2f}x |")
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
