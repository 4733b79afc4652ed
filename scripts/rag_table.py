"""Family x retriever pipeline x k table for `lurch-rag` with the reference solver as the inner model (no model
needed): coverage (share of gold evidence units retrieved), full coverage (all of them), the solver's score on the
retrieval-augmented prompt, prompt and completion tokens per question (reference tokenizer, cl100k_base) and CPU
seconds per question for the ranking (the dense embeddings of a context computed once and shared by its questions).

    python scripts/rag_table.py                  # the default small slice, markdown to stdout
    python scripts/rag_table.py --docs 4 --ks 5,20 --pipelines bm25,hybrid --json table.json
"""

from __future__ import annotations

import argparse
import json
import time
from statistics import mean

from lurch_tasks.analysis.retrieval import clear_dense_cache
from lurch_tasks.core.generation import iter_rows, resolve_task
from lurch_tasks.core.registry import get_family
from lurch_tasks.core.tokens import reference_counter
from lurch_tasks.harness.models import solve_prompt
from lurch_tasks.harness.rag import RagSettings, account, queries_for, rank_units
from lurch_tasks.harness.rag_units import render, units_of

SLICES = {  # family -> (task, overrides): short contexts, every family
    "find_the_origin": ("find_the_origin", {"context_tokens": [2048, 8192]}),
    "implicit_hop": ("implicit_hop_dispersion", {"facts": [3], "context_tokens": [4096]}),
    "graph": ("memory_drift_edge", {"context_tokens": [4096, 8192], "zero_gold": False}),
    "recon": ("recon_all", {"context_tokens": [16384], "domains": ["criminal"], "num_samples": 1}),
}
PIPELINES = {  # RECON's RAG variants: dense; + rerank; hybrid + rerank; + multi-query (and plain BM25, hybrid)
    "bm25": {"retriever": "bm25"},
    "dense": {"retriever": "dense"},
    "hybrid": {"retriever": "hybrid"},
    "dense+rerank": {"retriever": "dense", "rerank": "dense"},
    "hybrid+rerank": {"retriever": "hybrid", "rerank": "dense"},
    "hybrid+rerank+mq": {"retriever": "hybrid", "rerank": "dense", "multi_query": "template"},
    "gold": {"retriever": "gold"},  # the Oracle: exactly the gold evidence units, k ignored (one row, k "gold")
}


def slice_rows(family: str, docs: int) -> list[dict]:
    task_name, overrides = SLICES[family]
    task = resolve_task(task_name, overrides)
    return list(iter_rows(task, range(min(docs, task.config.size()))))


def measure(rows: list[dict], pipeline: str, ks: list[int | None]) -> list[dict]:
    """One row per k. Each doc is ranked once (every unit, timed cold: the dense embeddings are dropped first and
    shared only by the questions of one context, as a RAG index per case would be), then cut at each k."""
    counter = reference_counter()
    settings = RagSettings(inner="lurch-solver", k=None, **PIPELINES[pipeline])
    clear_dense_cache()
    ranked, seconds = [], 0.0
    for row in rows:
        started = time.process_time()
        units = units_of(row, settings.chunk_words)
        if settings.retriever == "gold":
            ranked.append((units, units.gold(row["evidence"])))
        else:
            ranked.append((units, rank_units(list(units.texts), queries_for(row, settings), settings)))
        seconds += time.process_time() - started
    table = []
    for k in [None] if settings.retriever == "gold" else ks:
        scores, coverage, full, tokens, written = [], [], [], [], []
        for row, (units, ranking) in zip(rows, ranked, strict=True):
            top = ranking if k is None else ranking[:k]
            prompt = render(row, units.join(top))
            answer = solve_prompt(prompt)
            scores.append(get_family(row["family"]).score(row, answer)["score"])
            tokens.append(counter.count(prompt))
            written.append(counter.count(answer))
            accounted = account(row, units, sorted(top))
            if "coverage" in accounted:
                coverage.append(accounted["coverage"])
                full.append(accounted["full_coverage"])
        label = "gold" if settings.retriever == "gold" else "all" if k is None else k
        table.append({"pipeline": pipeline, "k": label, "docs": len(rows),
                      "coverage": mean(coverage), "full_coverage": mean(full), "score": mean(scores),
                      "prompt_tokens": mean(tokens), "completion_tokens": mean(written),
                      "retrieval_cpu_s_per_q": seconds / len(rows)})
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=6, help="docs per family (default 6; RECON: 16, one case)")
    parser.add_argument("--ks", default="5,20,50", help="comma-separated k (default 5,20,50; 'all' allowed)")
    parser.add_argument("--pipelines", default=",".join(PIPELINES), help=f"default {','.join(PIPELINES)}")
    parser.add_argument("--families", default=",".join(SLICES), help=f"default {','.join(SLICES)}")
    parser.add_argument("--json", help="also write the rows here")
    args = parser.parse_args()
    ks = [None if k == "all" else int(k) for k in args.ks.split(",")]
    table = []
    for family in args.families.split(","):
        rows = slice_rows(family, 16 if family == "recon" else args.docs)
        for pipeline in args.pipelines.split(","):
            for line in measure(rows, pipeline, ks):
                table.append({"family": family, **line})
                print(json.dumps(table[-1]), flush=True)
    columns = ["family", "pipeline", "k", "docs", "coverage", "full_coverage", "score", "prompt_tokens",
               "completion_tokens", "retrieval_cpu_s_per_q"]
    print("\n| " + " | ".join(columns) + " |\n|" + "---|" * len(columns))
    for row in table:
        cells = [f"{row[c]:.0f}" if c.endswith("_tokens") else f"{row[c]:.3f}" if isinstance(row[c], float) else
                 str(row[c]) for c in columns]
        print("| " + " | ".join(cells) + " |")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(table, handle, indent=1)


if __name__ == "__main__":
    main()
