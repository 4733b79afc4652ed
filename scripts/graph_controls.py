"""Graph negative controls (issue 28) on the default configs: per length, the false-positive rate of the reference
solver, of models that always list pairs (the random baseline, a nearest-neighbours lister) and of every registered
shortcut, and how often each shortcut says none on grid rows vs controls (a control is only a hole if they differ).

    python scripts/graph_controls.py [--config NAME ...]
"""

from __future__ import annotations

import argparse
import json

from lurch_tasks.core.generation import generate_row, resolve_task
from lurch_tasks.core.registry import get_family
from lurch_tasks.families.graph.prompt import split_prompt
from lurch_tasks.families.graph.shortcuts import SHORTCUTS
from lurch_tasks.scoring.pairs import parse_edges

FAMILY = get_family("graph_reconstruction")
DEFAULT = ("memory_drift_edge", "memory_drift_subgraph", "memory_drift_clique",
           "memory_drift_edge_long", "memory_drift_subgraph_long", "memory_drift_clique_long")


def nearest_pairs(prompt: str, k: int = 3) -> str:
    """Always lists k plausible pairs: neighbouring profiles."""
    names = [p.split(":", 1)[0] for p in split_prompt(prompt)]
    return "CONNECTIONS:\n" + "\n".join(f"{a} -- {b}" for a, b in list(zip(names, names[1:], strict=False))[:k])


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", action="append")
    args = parser.parse_args()
    for name in args.config or DEFAULT:
        task = resolve_task(name)
        config = task.config
        grid_size = len(config.grid_cells()) * config.num_samples
        controls = [generate_row(task, i) for i in range(grid_size, config.size())]
        grid = [generate_row(task, i) for i in range(0, grid_size, max(1, grid_size // 24))]  # a spread slice
        print(f"== {name}: {len(controls)} controls of {config.size()} rows (grid slice {len(grid)} rows)")
        models = {"solver": lambda p: FAMILY.solve(p), "random": lambda p: FAMILY.guess(p, 0),
                  "nearest_pairs": nearest_pairs}
        lengths = sorted({r["difficulty"]["target_tokens"] for r in controls})
        print("model          | " + " | ".join(f"FPR@{n}" for n in lengths) + " | FPR all | score all")
        for label, model in models.items():
            by_length = {n: [] for n in lengths}
            scores = []
            for row in controls:
                scored = FAMILY.score(row, model(row["prompt"]) or "")
                by_length[row["difficulty"]["target_tokens"]].append(scored["false_positive_rate"])
                scores.append(scored["score"])
            cells = " | ".join(f"{mean(by_length[n]):.3f}" for n in lengths)
            print(f"{label:14s} | {cells} | {mean(sum(by_length.values(), [])):.3f} | {mean(scores):.3f}")
        print("shortcut             | none-rate grid | none-rate controls | control score")
        for shortcut in SHORTCUTS:
            rates = []
            for part in (grid, controls):
                empty = [not parse_edges(shortcut.answer(r["prompt"], v), json.loads(r["params"])["people"],
                                         groups=True) for r in part for v in shortcut.variants]
                rates.append(mean([float(e) for e in empty]))
            print(f"{shortcut.name:20s} | {rates[0]:.3f} | {rates[1]:.3f} | {rates[1]:.3f}")


if __name__ == "__main__":
    main()
