"""The same slice through lm-eval, Inspect and lighteval, each with its own runner, compared doc by doc.

For every task and model: lm-eval through ``lurch eval`` (the real CLI: lm-eval's TaskManager and evaluator), Inspect
through ``inspect_ai.eval`` (``lurch_tasks/<task>``, ``<model>/x``) and lighteval through its Pipeline (custom tasks
and the custom baseline model, docs read from a ``lurch materialize`` folder of the same slice). Then every log is
read back with the readers `lurch report` uses, and per doc the prompt each harness sent, the doc, the output and the
per-doc metrics each harness logged are compared, and per task the aggregate each harness reports.

    python scripts/harness_parity.py --out /tmp/parity                    # every default task, 2 docs each
    python scripts/harness_parity.py --out /tmp/parity --tasks discovery_code,recon_chain --limit 4

Prints one line per (model, task) and a summary; exits 1 when anything differs.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

from lurch_tasks.core.registry import all_tasks, get_task

MODELS = ("lurch-solver", "lurch-random")
HARNESSES = ("lm-eval", "inspect", "lighteval")
RECON_CASE = 16  # a RECON case's questions: recon_all is materialized a whole case at a time


def default_tasks() -> list[str]:
    return [task.name for task in all_tasks() if task.in_suite]


def materialize(tasks: list[str], limit: int, out: Path) -> None:
    """The slice every harness reads or generates: the first ``limit`` docs of every task; a view's stored config
    holds one whole case (its questions of each view's kind). lighteval reads the whole folder: its own
    ``max_samples`` takes a shuffled subset (seed 42), not the first docs."""
    from lurch_tasks.cli import main

    stored = sorted({get_task(t).stored_as or t for t in tasks})
    for name in stored:
        views = any(get_task(t).stored_as == name for t in tasks)
        rows = RECON_CASE if views else limit  # a view reads its stored config's rows: one whole RECON case
        with contextlib.redirect_stderr(io.StringIO()):
            code = main(["materialize", "--quiet", "--limit", str(rows), "--out", str(out), "--config", name])
        if code:
            raise SystemExit(f"materialize {name} failed ({code})")


def views_apart(tasks: list[str]) -> list[tuple[list[str], dict]]:
    """The tasks in two runs: those generated on the fly, and the views (``recon_chain``: rows of a stored config),
    read from the materialized folder by every harness, since a view's docs are its stored config's rows."""
    views = [t for t in tasks if get_task(t).stored_as]
    generated = [t for t in tasks if t not in views]
    return [(names, extra) for names, extra in ((generated, {}), (views, {"dataset_path": None})) if names]


def run_lm_eval(tasks: list[str], model: str, limit: int, data: Path, out: Path) -> None:
    from lurch_tasks.cli import main

    for names, extra in views_apart(tasks):
        sliced = ["--metadata", json.dumps({"dataset_path": str(data)})] if extra else ["--limit", str(limit)]
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            code = main(["eval", "--model", model, "--tasks", ",".join(names), "--output_path", str(out),
                         "--log_samples", *sliced])
        if code:
            raise SystemExit(f"lurch eval {model} failed ({code})")


def run_inspect(tasks: list[str], model: str, limit: int, data: Path, out: Path) -> None:
    from inspect_ai import eval as inspect_eval

    for names, extra in views_apart(tasks):
        task_args = {"dataset_path": str(data)} if extra else {"limit": limit}
        logs = inspect_eval([f"lurch_tasks/{t}" for t in names], model=f"{model}/x", task_args=task_args,
                            log_dir=str(out), display="none", max_tasks=1)
        failed = [log.eval.task for log in logs if log.status != "success"]
        if failed:
            raise SystemExit(f"inspect eval {model} failed on {', '.join(failed)}")


def run_lighteval(tasks: list[str], model: str, data: Path, out: Path) -> None:
    from lighteval.logging.evaluation_tracker import EvaluationTracker
    from lighteval.models.custom.custom_model import CustomModelConfig
    from lighteval.pipeline import ParallelismManager, Pipeline, PipelineParameters

    from lurch_tasks.harness import lighteval_model, lighteval_run, lighteval_tasks

    tracker = EvaluationTracker(output_dir=str(out), save_details=True)
    params = PipelineParameters(launcher_type=ParallelismManager.CUSTOM,
                                custom_tasks_directory=lighteval_tasks.tasks_module(str(data)))
    config = CustomModelConfig(model_name=model, model_definition_file_path=lighteval_model.__file__)
    with lighteval_run.custom_tasks_only(), contextlib.redirect_stdout(io.StringIO()):
        pipeline = Pipeline(tasks=",".join(tasks), pipeline_parameters=params, evaluation_tracker=tracker,
                            model_config=config)
        pipeline.evaluate()
        pipeline.save_and_push_results()


@dataclass
class Logged:
    """What one harness logged for one doc."""

    sent: str
    doc_prompt: str
    output: str
    claimed: dict[str, float]
    rescored: dict[str, float]


@dataclass
class Harvest:
    docs: dict[tuple[str, str], Logged] = field(default_factory=dict)  # (task, doc id) -> logged
    aggregates: dict[str, dict[str, float]] = field(default_factory=dict)  # task -> metric -> value


def _rescored(doc: dict, output: str, task: str) -> dict[str, float]:
    from lurch_tasks.harness.tasks import process_results

    out = process_results(doc, [output], task)
    return {k: (v[1] if isinstance(v, list) else (math.nan if v is None else float(v))) for k, v in out.items()}


def read_lm_eval(folder: Path) -> Harvest:
    from lurch_tasks.analysis.runs import find_runs, read_jsonl, read_results

    harvest = Harvest()
    for run in find_runs([folder]):
        for path in run.samples:
            task = path.stem.split("samples_", 1)[1].rsplit("_", 1)[0]
            for _, record in read_jsonl(path):
                doc = record["doc"]
                output = record["resps"][0][0]
                claimed = {k: (v[1] if isinstance(v, list) else (math.nan if v is None else float(v)))
                           for k, v in record.items() if k in _rescored(doc, output, task)}
                harvest.docs[(task, doc["id"])] = Logged(record["arguments"]["gen_args_0"]["arg_0"], doc["prompt"],
                                                         output, claimed, _rescored(doc, output, task))
        for task, values in read_results(run.results)["results"].items():
            harvest.aggregates[task] = {k.split(",")[0]: v for k, v in values.items()
                                        if "," in k and "_stderr" not in k and isinstance(v, (int, float))}
    return harvest


def read_harness(folder: Path, harness: str) -> Harvest:
    from lurch_tasks.analysis import harness_logs
    from lurch_tasks.analysis.runs import find_runs, harness_docs, read_results

    harvest = Harvest()
    for run in find_runs([folder]):
        for logged in harness_docs(run):
            doc = logged.doc
            harvest.docs[(logged.task, doc["id"])] = Logged(logged.sent, doc["prompt"], logged.output,
                                                            logged.claimed, _rescored(doc, logged.output,
                                                                                      logged.task))
        if harness == "inspect":
            for path in run.samples:
                header = harness_logs.inspect_header(path)
                harvest.aggregates[header["eval"]["task"]] = {
                    score["name"]: next(iter(score["metrics"].values()))["value"]
                    for score in header["results"]["scores"]}
        else:
            for key, values in read_results(run.results)["results"].items():
                if key != "all":
                    harvest.aggregates[key.split("|")[0]] = {k: v for k, v in values.items()
                                                             if not k.endswith("_stderr")}
    return harvest


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def _same_metrics(a: dict[str, float], b: dict[str, float]) -> bool:
    shared = set(a) & set(b)
    return bool(shared) and all(_same(a[k], b[k]) for k in shared)


def compare(harvests: dict[str, Harvest], tasks: list[str]) -> list[dict]:
    """Per task: docs, identical prompts, identical per-doc scores, identical aggregates, across the harnesses."""
    rows = []
    base = harvests["lm-eval"]
    for task in tasks:
        ids = sorted(doc_id for t, doc_id in base.docs if t == task)
        row = {"task": task, "docs": len(ids), "same_ids": True, "same_prompts": True, "same_scores": True,
               "same_aggregates": True, "problems": []}
        for name, harvest in harvests.items():
            other = sorted(doc_id for t, doc_id in harvest.docs if t == task)
            if other != ids:
                row["same_ids"] = False
                row["problems"].append(f"{name}: doc ids {other} vs lm-eval {ids}")
        for doc_id in ids:
            ref = base.docs[(task, doc_id)]
            for name, harvest in harvests.items():
                got = harvest.docs.get((task, doc_id))
                if got is None:
                    continue
                if not (got.sent == ref.sent == got.doc_prompt == ref.doc_prompt):
                    row["same_prompts"] = False
                    row["problems"].append(f"{name}: prompt of {doc_id} differs")
                scored_alike = (_same_metrics(got.claimed, ref.claimed) and _same_metrics(got.rescored, ref.rescored)
                                and _same_metrics(got.claimed, got.rescored))
                if got.output != ref.output or not scored_alike:
                    row["same_scores"] = False
                    row["problems"].append(f"{name}: scores of {doc_id} differ: {got.claimed} vs {ref.claimed}")
        ref_agg = base.aggregates.get(task, {})
        for name, harvest in harvests.items():
            agg = harvest.aggregates.get(task, {})
            shared = set(agg) & set(ref_agg)
            if "score" not in shared or not all(_same(float(agg[k]), float(ref_agg[k])) for k in shared):
                row["same_aggregates"] = False
                row["problems"].append(f"{name}: aggregates {agg} vs lm-eval {ref_agg}")
        row["aggregate"] = {name: harvests[name].aggregates.get(task, {}).get("score") for name in harvests}
        row["headline"] = {name: harvests[name].aggregates.get(task, {}).get("headline") for name in harvests}
        rows.append(row)
    return rows


def run_all(tasks: list[str], models: tuple[str, ...], limit: int, out: Path) -> dict[str, list[dict]]:
    materialize(tasks, limit, out / "data")
    report = {}
    for model in models:
        run_lm_eval(tasks, model, limit, out / "data", out / "lm-eval" / model)
        run_inspect(tasks, model, limit, out / "data", out / "inspect" / model)
        run_lighteval(tasks, model, out / "data", out / "lighteval" / model)
        harvests = {"lm-eval": read_lm_eval(out / "lm-eval" / model),
                    "inspect": read_harness(out / "inspect" / model, "inspect"),
                    "lighteval": read_harness(out / "lighteval" / model, "lighteval")}
        report[model] = compare(harvests, tasks)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path, help="a new folder for the data and the three logs")
    parser.add_argument("--tasks", default=",".join(default_tasks()), help="comma-separated (default: every "
                        "default task)")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--limit", type=int, default=2, help="docs per task (default 2)")
    parser.add_argument("--json", type=Path, help="also write the comparison as JSON here")
    args = parser.parse_args(argv)
    if args.out.exists() and any(args.out.iterdir()):
        parser.error(f"--out {args.out} is not empty")
    tasks = [t for t in args.tasks.split(",") if t]
    report = run_all(tasks, tuple(args.models.split(",")), args.limit, args.out)
    bad = 0
    print(f"{'model':14} {'task':28} {'docs':>4}  ids prompts scores aggregates   score lm-eval/inspect/lighteval")
    for model, rows in report.items():
        for row in rows:
            ok = all(row[k] for k in ("same_ids", "same_prompts", "same_scores", "same_aggregates"))
            bad += not ok
            scores = " / ".join("-" if v is None else f"{v:.3f}" for v in row["aggregate"].values())
            print(f"{model:14} {row['task']:28} {row['docs']:>4}  {'yes' if row['same_ids'] else 'NO ':3} "
                  f"{'yes' if row['same_prompts'] else 'NO ':7} {'yes' if row['same_scores'] else 'NO ':6} "
                  f"{'yes' if row['same_aggregates'] else 'NO ':10}   {scores}")
            for problem in row["problems"][:3]:
                print(f"    {problem}")
    cells = sum(len(rows) for rows in report.values())
    docs = sum(row["docs"] for rows in report.values() for row in rows)
    print(f"{cells - bad} of {cells} (model, task) cells identical across {', '.join(HARNESSES)} ({docs} docs in "
          "each harness)")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
