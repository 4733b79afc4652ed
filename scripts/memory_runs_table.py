"""Summarise `lurch eval --log_samples` result folders of RECON runs (lurch-rag with a memory or a retriever, or a
plain model on recon_oracle_*) into one Markdown table: score per RECON category, score, accuracy, coverage, full
coverage, prompt tokens per question, ingest seconds per case (CPU / wall), docs.

    python scripts/memory_runs_table.py RUN_FOLDER [RUN_FOLDER ...]
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from statistics import mean

CATEGORIES = ("retrieval", "chain", "cascade", "conflict", "temporal", "counterfactual")


def category_of(doc: dict) -> str:
    params = doc.get("params")
    params = json.loads(params) if isinstance(params, str) else params or {}
    return str(params.get("cell", {}).get("category", "?"))


def samples_of(folder: Path) -> list[dict]:
    return [json.loads(line) for path in sorted(folder.rglob("samples_*.jsonl"))
            for line in path.read_text().splitlines() if line.strip()]


def ingest_per_case(samples: list[dict], field: str) -> float | None:
    """Each doc carries its case's ingest cost: one value per distinct case (context)."""
    per_case = {s["doc"]["context"][:200]: s[field] for s in samples if field in s}
    return mean(per_case.values()) if per_case else None


def row(folder: Path) -> str:
    samples = samples_of(folder)
    by_category: dict[str, list[float]] = defaultdict(list)
    for sample in samples:
        by_category[category_of(sample["doc"])].append(sample["score"])

    def avg(field: str) -> str:
        values = [s[field] for s in samples if isinstance(s.get(field), (int, float))]
        return f"{mean(values):.3f}" if values else "—"

    cats = " | ".join(f"{mean(by_category[c]):.2f} ({len(by_category[c])})" if by_category[c] else "—"
                      for c in CATEGORIES)
    tokens = avg("prompt_tokens").split(".")[0]
    cpu, wall = ingest_per_case(samples, "ingest_cpu_seconds"), ingest_per_case(samples, "ingest_wall_seconds")
    ingest = f"{cpu:.3f} / {wall:.3f}" if cpu is not None else "—"
    return (f"| {folder.name} | {len(samples)} | {cats} | {avg('score')} | {avg('accuracy')} | {avg('coverage')} | "
            f"{avg('full_coverage')} | {avg('unparsed')} | {tokens} | {ingest} |")


def main(folders: list[str]) -> None:
    print("| run | docs | " + " | ".join(CATEGORIES) + " | score | accuracy | coverage | full coverage | "
          "unparsed | prompt tokens / q | ingest s / case (CPU / wall) |")
    print("|---" * (9 + len(CATEGORIES)) + "|")
    for folder in folders:
        print(row(Path(folder)))


if __name__ == "__main__":
    main(sys.argv[1:])
