"""RECON's numbers: the quota matrix per case, the chain-length distribution, mean provenance depth per domain,
tokens per case against the target, the reference solver and the random baseline per category x format (narrative
and oracle), Parquet bytes per case against the raw text, the validator on every row of a slice and its detection
rate per injected fault kind.

    python scripts/recon_table.py [--cases N] [--rows N] [--score-cases N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path
from statistics import mean

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from lurch_tasks.core.generation import iter_rows, resolve_task  # noqa: E402
from lurch_tasks.families.recon.audit import audit  # noqa: E402
from lurch_tasks.families.recon.catalog import DOMAINS  # noqa: E402
from lurch_tasks.families.recon.config import ReconConfig  # noqa: E402
from lurch_tasks.families.recon.generate import build_case, case_config  # noqa: E402


def case_numbers(cases: int) -> None:
    config = case_config(ReconConfig())
    hops: Counter[int] = Counter()
    print("| domain | length | cases | entries / case | case tokens / target (min-max) | mean provenance depth "
          "(links to a conclusion) | longest DAG path to a conclusion |")
    print("|---|---|---|---|---|---|---|")
    for domain_name in DOMAINS:
        for tokens in config.context_tokens:
            built = [build_case(config, 0, "test", domain_name, tokens, s) for s in range(cases)]
            ratios = [c.fitted_tokens / tokens for c in built]
            links = [len(t.clues) for c in built for t in c.blueprint.trails]
            hops.update(links)
            longest = [c.depths[k] for c in built for k, e in enumerate(c.entries)
                       if e.structural and e.kind == "conclude"]
            print(f"| {domain_name} | {tokens} | {cases} | {mean(len(c.entries) for c in built):.0f} | "
                  f"{mean(ratios):.4f} ({min(ratios):.4f}-{max(ratios):.4f}) | {mean(links):.2f} | "
                  f"{mean(longest):.2f} |")
    print("\nchain length (links per trail):", dict(sorted(hops.items())))
    one = build_case(config, 0, "test", "criminal", config.context_tokens[0], 0)
    print("questions per case by (category, format):", dict(Counter(one.questions.keys())))


def formats_table(cases: int) -> None:
    """Solver and random mean score per category x format, and the quota counts per case, on ``cases`` cases
    per variant (a prefix of recon_all: every domain and length)."""
    from lurch_tasks.core.registry import get_family
    from lurch_tasks.families.recon.baselines import guess, solve

    family = get_family("recon")
    print("\n| variant | category | format | questions | solver score | random score | random accuracy |")
    print("|---|---|---|---|---|---|---|")
    for name in ("recon_all", "recon_oracle_all"):
        task = resolve_task(name)
        per_case = len(task.config.slots())
        cells: dict = {}
        quota: dict = {}
        for row in iter_rows(task, range(cases * per_case)):
            key = (row["difficulty"]["category"], row["answer_format"])
            solver = family.score(row, solve(row["prompt"]))["score"]
            chance = family.score(row, guess(row["prompt"], row["index"]))
            cells.setdefault(key, []).append((solver, chance["score"], chance["accuracy"]))
            quota.setdefault(row["params"], None)
        for (category, answer_format), values in sorted(cells.items()):
            print(f"| {name.split('_')[1] if 'oracle' in name else 'narrative'} | {category} | {answer_format} | "
                  f"{len(values)} | {mean(v[0] for v in values):.3f} | {mean(v[1] for v in values):+.3f} | "
                  f"{mean(v[2] for v in values):.3f} |")
        counts = Counter(len(v) for v in cells.values())
        print(f"({name}: {cases} cases; questions per slot: {dict(counts)})")


def validation(rows: int) -> None:
    from test_recon import FAULTS, inject

    task = resolve_task("recon_all", {"num_samples": max(1, rows // 96)})
    generated = list(iter_rows(task, range(task.config.size())))
    clean = sum(not audit(r) for r in generated)
    print(f"\nvalidator: {clean} of {len(generated)} default rows clean")
    for fault in FAULTS:
        caught = sum(bool(audit(inject(r, fault))) for r in generated)
        print(f"  {fault}: caught {caught} of {len(generated)} ({caught / len(generated):.0%})")


def parquet_size() -> None:
    import datasets

    from lurch_tasks.hub import materialize

    with tempfile.TemporaryDirectory() as tmp:
        for tokens in (16_384, 32_768, 131_072):
            overrides = {"context_tokens": [tokens], "num_samples": 2, "domains": ["criminal"]}
            folder = materialize(["recon_all"], Path(tmp) / str(tokens), overrides=overrides, progress=False)
            loaded = datasets.load_dataset(str(folder), "recon_all", split="test")
            cases = {row["context"] for row in loaded}
            stored = sum(p.stat().st_size for p in (folder / "recon_all").glob("*.parquet"))
            raw_case = sum(len(c.encode()) for c in cases)
            raw_rows = sum(len(r["context"].encode()) + len(r["prompt"].encode()) for r in loaded)
            per_case = stored / len(cases) / 1e3
            print(f"{tokens}-token cases: {len(cases)} cases, {len(loaded)} rows; Parquet {per_case:.0f} KB per case vs"
                  f" raw case text {raw_case / len(cases) / 1e3:.0f} KB (rows' context + prompt: "
                  f"{raw_rows / len(cases) / 1e3:.0f} KB)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=24, help="cases per (domain, length)")
    parser.add_argument("--rows", type=int, default=288, help="rows of recon_all for the validator")
    parser.add_argument("--score-cases", type=int, default=60, help="cases per variant for the format table")
    args = parser.parse_args()
    case_numbers(args.cases)
    formats_table(args.score_cases)
    validation(args.rows)
    print()
    parquet_size()
