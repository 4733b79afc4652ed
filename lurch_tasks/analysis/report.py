"""``lurch report`` (first part): read lm-eval sample logs (``--log_samples``), re-score every raw output with the
current scorers, and tabulate RECON per category x domain and per category x format: score, strict accuracy,
abstain rate and prompt tokens per question; optionally re-grade free-form answers with an LLM judge
(``scoring.judge``) beside the deterministic key-fact grade. Tables are written as CSV and Markdown."""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from statistics import mean

from ..core.files import atomic_output
from ..core.registry import get_family
from ..scoring.judge import JudgeConfig, ask_judge

COLUMNS = ("score", "accuracy", "abstain_rate", "prompt_tokens")


@dataclass(frozen=True)
class Sample:
    model: str
    task: str
    doc: dict
    output: str


def _output(record: dict) -> str:
    """The raw model output of one logged sample (``resps`` before filters)."""
    resps = record.get("resps") or record.get("filtered_resps") or [""]
    first = resps[0]
    while isinstance(first, list):
        first = first[0] if first else ""
    return first if isinstance(first, str) else str(first)


def model_label(samples_file: Path) -> str:
    """The model of a run: lm-eval's ``config.model`` (with the ``pretrained=`` name, if any) from the results
    file written beside the samples, else the folder's name."""
    stamp = samples_file.stem.rsplit("_", 1)[-1]
    for results in sorted(samples_file.parent.glob(f"results_{stamp}*.json")) or sorted(
            samples_file.parent.glob("results_*.json")):
        try:
            config = json.loads(results.read_text(encoding="utf-8")).get("config", {})
        except (OSError, ValueError):
            continue
        model, args = str(config.get("model") or ""), config.get("model_args") or ""
        if isinstance(args, dict):
            pretrained = str(args.get("pretrained", ""))
        else:
            pretrained = next((a.split("=", 1)[1] for a in str(args).split(",") if a.startswith("pretrained=")), "")
        if model:
            return f"{model}:{Path(pretrained).name}" if pretrained else model
    return samples_file.parent.name


def read_samples(run_dirs: Iterable[Path]) -> list[Sample]:
    """Every logged sample of our tasks under the run folders (one model per folder holding results)."""
    samples: list[Sample] = []
    for run in run_dirs:
        if not run.is_dir():
            raise ValueError(f"RUN_DIR: {str(run)!r} is not a folder; allowed: an lm-eval --output_path folder")
        files = sorted(run.rglob("samples_*.jsonl"))
        if not files:
            raise ValueError(f"RUN_DIR: no samples_*.jsonl under {str(run)!r}; allowed: a run made with "
                             "--log_samples")
        for path in files:
            model = model_label(path)
            task = path.name[len("samples_"):].rsplit("_", 1)[0]
            with path.open(encoding="utf-8") as handle:
                for number, line in enumerate(handle, 1):
                    if not line.strip():
                        continue
                    try:
                        record = json.loads(line)
                    except json.JSONDecodeError:
                        raise ValueError(f"{path}: line {number} is not JSON (a truncated file?)") from None
                    doc = record.get("doc")
                    if isinstance(doc, dict) and "family" in doc and "answer_format" in doc:
                        samples.append(Sample(model, task, doc, _output(record)))
    if not samples:
        raise ValueError("RUN_DIR: the sample logs hold no lurch-tasks docs; allowed: runs of our tasks")
    return samples


def scored(samples: Iterable[Sample], judge: JudgeConfig | None = None,
           progress: Callable[[int], None] | None = None) -> list[dict]:
    """One row per sample: its keys and the current scorer's metrics (plus ``judge`` on free form)."""
    rows = []
    for sample in samples:
        doc = sample.doc
        metrics = get_family(doc["family"]).score(doc, sample.output)
        difficulty = doc.get("difficulty", {})
        row = {"model": sample.model, "task": sample.task, "family": doc["family"],
               "category": difficulty.get("category", ""), "domain": difficulty.get("domain", ""),
               "format": doc["answer_format"], **{k: float(metrics.get(k, 0.0)) for k in COLUMNS}}
        if judge is not None and doc["answer_format"] == "free_form":
            gold = json.loads(doc["answer"])
            verdict = ask_judge(judge, doc["question"], doc.get("answer_text", ""), gold.get("key_facts", []),
                                sample.output)
            row["judge"] = verdict
        rows.append(row)
        if progress is not None:
            progress(1)
    return rows


def table(rows: list[dict], keys: tuple[str, ...]) -> list[dict]:
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        groups[tuple(row[k] for k in keys)].append(row)
    out = []
    for key in sorted(groups):
        members = groups[key]
        entry = dict(zip(keys, key, strict=True))
        entry["n"] = len(members)
        for column in COLUMNS:
            entry[column] = round(mean(m[column] for m in members), 4)
        out.append(entry)
    return out


def judge_table(rows: list[dict]) -> list[dict]:
    """Free form per model and category: key-fact score, judge score, verdicts missing, agreement."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        if "judge" in row:
            groups[row["model"], row["category"]].append(row)
    out = []
    for (model, category), members in sorted(groups.items()):
        judged = [m for m in members if m["judge"] is not None]
        out.append({"model": model, "category": category, "n": len(members),
                    "key_fact_score": round(mean(m["score"] for m in members), 4),
                    "judge_score": round(mean(m["judge"] for m in judged), 4) if judged else None,
                    "no_verdict": len(members) - len(judged),
                    "agreement": round(mean(float(m["judge"] == m["score"]) for m in judged), 4) if judged else None})
    return out


def markdown(entries: list[dict]) -> str:
    if not entries:
        return "(none)"
    columns = list(entries[0])
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for entry in entries:
        lines.append("| " + " | ".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in
                                       (entry[c] for c in columns)) + " |")
    return "\n".join(lines)


def _csv(entries: list[dict]) -> str:
    buffer = io.StringIO()
    if entries:
        writer = csv.DictWriter(buffer, fieldnames=list(entries[0]))
        writer.writeheader()
        writer.writerows(entries)
    return buffer.getvalue()


TABLES = {"recon_category_domain": ("model", "category", "domain"),
          "recon_category_format": ("model", "category", "format"),
          "by_task": ("model", "task")}


def write_report(rows: list[dict], out: Path) -> str:
    """CSV per table and ``summary.md`` in ``out`` (a new folder, or one this command wrote before); returns
    the summary."""
    recon = [r for r in rows if r["family"] == "recon"]
    tables = {name: table(recon if name.startswith("recon") else rows, keys) for name, keys in TABLES.items()}
    if any("judge" in r for r in rows):
        tables["free_form_judge"] = judge_table(rows)
    out.mkdir(parents=True, exist_ok=True)
    sections = []
    for name, entries in tables.items():
        with atomic_output(out / f"{name}.csv") as handle:
            handle.write(_csv(entries))
        sections.append(f"## {name}\n\n{markdown(entries)}\n")
    summary = "# lurch report\n\n" + "\n".join(sections)
    with atomic_output(out / "summary.md") as handle:
        handle.write(summary)
    return summary
