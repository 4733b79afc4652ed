"""Generation against one tokenizer pass, per family and length (bench.py's "ours / pass", for every family).

    python scripts/bench_family_ratio.py [--lengths 4096 32768 131072] [--samples 4] [--repeats 3]
                                         [--configs implicit_hop_length ...]

The ratio is the CPU seconds of this process to generate ``samples`` instances (after one warm-up instance of
the same config and split, never measured) over the best of three passes of the reference tokenizer over
the prompts produced; the figure printed is the median over ``repeats`` runs on disjoint instances. Importable:
``warm_ratio(config, length, samples)``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from lurch_tasks.core.generation import resolve_task
from lurch_tasks.core.registry import get_family
from lurch_tasks.core.tokens import REFERENCE_TOKENIZER, get_token_counter

CONFIGS = {"find_the_origin": "find_the_origin", "graph": "memory_drift_edge",
           "implicit_hop": "implicit_hop_length", "recon": "recon_all"}


def task_at(config: str, length: int, samples: int):
    """The task with ``context_tokens`` set to ``length`` and enough samples per cell for ``samples`` rows."""
    task = resolve_task(config, {"context_tokens": [length]})
    cells = len(task.config.cells())
    return resolve_task(config, {"context_tokens": [length], "num_samples": -(-samples // cells)})


def fits(config: str, length: int) -> bool:
    """Whether the config takes this length (RECON starts at 16k)."""
    try:
        task_at(config, length, 1)
    except ValueError:
        return False
    return True


def one_pass_seconds(prompts: list[str]) -> float:
    """Best of three CPU-second passes of the reference tokenizer over every prompt (the same work each
    time, so noise only adds)."""
    counter = get_token_counter(REFERENCE_TOKENIZER)
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        for prompt in prompts:
            counter.count(prompt)
        best = min(best, time.process_time() - start)
    return best


def warm_ratio(config: str, length: int, samples: int, first: int = 0) -> float:
    """CPU seconds to generate instances ``first .. first + samples - 1`` of the test split over one tokenizer
    pass of their prompts, after a warm-up instance (the split's last) of the same config."""
    task = task_at(config, length, first + samples + 1)
    family = get_family(task.family)
    family.generate(task.config, task.seed, "test", task.config.size() - 1, task.name)
    start = time.process_time()
    prompts = [family.generate(task.config, task.seed, "test", i, task.name).prompt
               for i in range(first, first + samples)]
    return (time.process_time() - start) / one_pass_seconds(prompts)


def median_ratio(config: str, length: int, samples: int, repeats: int) -> float:
    return statistics.median(warm_ratio(config, length, samples, r * samples) for r in range(repeats))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[4096, 32768, 131072])
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS.values()))
    args = parser.parse_args()
    print("| config | " + " | ".join(str(n) for n in args.lengths) + " |")
    print("|---|" + "---:|" * len(args.lengths))
    for config in args.configs:
        cells = [f"{median_ratio(config, n, args.samples, args.repeats):.2f}" if fits(config, n) else "-"
                 for n in args.lengths]
        print(f"| {config} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
