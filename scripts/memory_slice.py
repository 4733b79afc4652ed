"""Measure a memory system on one RECON case: ingest its entries once (time per entry), then recall for each of its
questions and report the coverage of the gold entries (share of the question's evidence entries whose text, or for
a memory that rewrites what it read, whose source entry, is among the k recalled) and full coverage.

    python scripts/memory_slice.py --rows recon16.jsonl --memory facts
    python scripts/memory_slice.py --rows recon16.jsonl --memory mem0 --set infer=false
    python scripts/memory_slice.py --rows recon16.jsonl --memory mem0 --set base_url=http://127.0.0.1:8089/v1 \\
        --set extraction_prompt=short --slice 40

``--rows`` is ``lurch generate --config recon_all --n 16 --out …`` (the 16 questions of one case). ``--slice N``
ingests only the gold entries of the questions whose evidence fits, padded with the case's first entries to N, in
time order (an LLM memory reads ~5 s per entry with SmolLM2 on 2 cores); questions with evidence outside the slice
are left out of the coverage.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from lurch_tasks.memory import make_memory


def gold_units(row: dict[str, Any], units: list[str]) -> set[int]:
    """The entries (lines) the question's evidence spans touch."""
    starts, offset = [], 0
    for unit in units:
        starts.append(offset)
        offset += len(unit) + 1
    return {i for span in row["evidence"] for i, start in enumerate(starts)
            if start < span["end"] and start + len(units[i]) > span["start"]}


def choose_slice(rows: list[dict[str, Any]], units: list[str], size: int) -> list[int]:
    """Whole gold sets of the questions with the fewest gold entries first, then the first entries, up to size."""
    chosen: set[int] = set()
    for row in sorted(rows, key=lambda r: (len(gold_units(r, units)), r["index"])):
        gold = gold_units(row, units)
        if len(chosen | gold) <= size:
            chosen |= gold
    for position in range(len(units)):
        if len(chosen) >= size:
            break
        chosen.add(position)
    return sorted(chosen)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", required=True)
    parser.add_argument("--memory", default="facts")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--k", default="5,10,20,50")
    parser.add_argument("--slice", type=int, default=0)
    args = parser.parse_args()
    rows = [json.loads(line) for line in open(args.rows, encoding="utf-8")]
    units = rows[0]["context"].splitlines()
    assert all(r["context"] == rows[0]["context"] for r in rows), "the rows must be one case's questions"
    positions = choose_slice(rows, units, args.slice) if args.slice else list(range(len(units)))
    kept = [units[p] for p in positions]
    memory = make_memory(args.memory, **dict(item.split("=", 1) for item in args.set))
    wall, cpu = time.perf_counter(), time.process_time()
    memory.ingest(kept)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    asked = [r for r in rows if gold_units(r, units) <= set(positions)]
    report: dict[str, Any] = {"memory": memory.describe(), "entries": len(kept), "questions": len(asked),
                              "ingest_wall_s_per_entry": round(wall / len(kept), 4),
                              "ingest_cpu_s_per_entry": round(cpu / len(kept), 4), "coverage": {}}
    for k in (int(v) for v in args.k.split(",")):
        coverages = []
        for row in asked:
            if hasattr(memory, "recall_with_origins"):
                got = {positions[o] for o, _ in memory.recall_with_origins(row["question"], k) if o >= 0}
            else:
                got = {positions[kept.index(text)] for text in memory.recall(row["question"], k)}
            gold = gold_units(row, units)
            coverages.append(len(gold & got) / len(gold))
        report["coverage"][k] = {"mean": round(sum(coverages) / max(len(coverages), 1), 3),
                                 "full": sum(c == 1 for c in coverages),
                                 "per_question": [round(c, 2) for c in coverages]}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
