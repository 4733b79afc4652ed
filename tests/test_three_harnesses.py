"""The same tasks in lm-eval, Inspect and lighteval, each run by its own runner: byte-identical prompts, identical
per-doc scores and aggregates for every default task (scripts/harness_parity.py); Inspect's CLI and groups;
lighteval's CLI offline; `lurch report` and `lurch leaderboard validate` on Inspect and lighteval logs."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from lurch_tasks import __version__
from lurch_tasks.analysis.runs import find_runs, iter_samples
from lurch_tasks.leaderboard.validate import validate

pytestmark = pytest.mark.slow
inspect_ai = pytest.importorskip("inspect_ai")
pytest.importorskip("lighteval")

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SPEC = importlib.util.spec_from_file_location("harness_parity", ROOT / "scripts" / "harness_parity.py")
PARITY = importlib.util.module_from_spec(SPEC)
sys.modules["harness_parity"] = PARITY  # its dataclasses look their module up
SPEC.loader.exec_module(PARITY)
MODELS = ("lurch-solver", "lurch-random", "lurch-simulated")
SUBMISSION = {"schema_version": 1, "model": {"name": "lurch-solver", "revision": __version__},
              "run": {"lm_eval_model": "lurch-solver", "model_args": "", "chat_template": False, "generation": {}},
              "date": "2026-12-05", "lurch_tasks_version": __version__, "tasks": ["discovery"], "seed": 0,
              "subset": True, "contact": "maintainers@example.org"}


def _declared(harness: str) -> dict:
    return {**SUBMISSION, "run": {**SUBMISSION["run"], "lm_eval_model": "lurch-solver", "harness": harness}}


@pytest.fixture(scope="module")
def parity(tmp_path_factory) -> tuple[Path, dict]:
    """Every default task, the first doc of each (a RECON view: its rows of one case), through the three harnesses
    for the solver, the chance baseline and the simulated model."""
    out = tmp_path_factory.mktemp("parity")
    return out, PARITY.run_all(PARITY.default_tasks(), MODELS, 1, out)


def test_every_default_task_has_identical_prompts_and_scores_in_three_harnesses(parity):
    _, report = parity
    assert set(report) == set(MODELS)
    for model, rows in report.items():
        assert [row["task"] for row in rows] == PARITY.default_tasks()
        for row in rows:
            assert row["docs"] >= 1, (model, row["task"])
            assert row["problems"] == [], (model, row["task"], row["problems"][:3])
            assert row["same_ids"] and row["same_prompts"] and row["same_scores"] and row["same_aggregates"]
            scores = set(row["aggregate"].values())
            assert len(scores) == 1 and None not in scores, (model, row["task"], row["aggregate"])
    solver = {row["task"]: row["aggregate"]["inspect"] for row in report["lurch-solver"]}
    assert set(solver.values()) == {1.0}  # the reference solver answers every doc in every harness


def test_the_logs_of_three_harnesses_read_back_as_runs(parity):
    out, _ = parity
    runs = find_runs([out / "lm-eval" / "lurch-random", out / "inspect" / "lurch-solver",
                      out / "lighteval" / "lurch-simulated"])
    assert {run.harness for run in runs} == {"lm-eval", "inspect", "lighteval"}
    labels = {run.model for run in runs}
    assert {"lurch-random", "lurch-solver/x [inspect]", "lurch-simulated [lighteval]"} <= labels
    assert [run.chance for run in runs if run.harness == "lm-eval"] == [True, True]
    samples = list(iter_samples(runs))
    assert {s.task for s in samples} == set(PARITY.default_tasks())


def test_report_reads_an_lm_eval_run_and_an_inspect_run_of_different_models(parity, tmp_path):
    out, _ = parity
    report = tmp_path / "report"
    done = subprocess.run([str(BIN / "lurch"), "report", str(out / "lm-eval" / "lurch-simulated"),
                           str(out / "inspect" / "lurch-solver"), "--out", str(report), "--bootstrap", "20",
                           "--quiet"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = (report / "summary_models.csv").read_text(encoding="utf-8")
    assert "lurch-simulated" in summary and "lurch-solver/x [inspect]" in summary
    html = (report / "report.html").read_text(encoding="utf-8")
    assert "lurch-solver/x [inspect]" in html


def _inspect_json(args: list[str], log_dir: Path) -> dict:
    done = subprocess.run([str(BIN / "inspect"), "eval", *args, "--log-dir", str(log_dir), "--display", "none"],
                          capture_output=True, text=True, timeout=900, env={**os.environ, "NO_COLOR": "1"})
    assert done.returncode == 0, done.stdout[-1500:] + done.stderr[-1500:]
    (path,) = sorted(log_dir.glob("*.eval"))
    with zipfile.ZipFile(path) as archive:
        return json.loads(archive.read("header.json"))


def test_inspect_cli_runs_the_umbrella_as_lm_eval_aggregates_it(tmp_path):
    """`inspect eval lurch_tasks/memory_drift` (the entry point, the real CLI): the headline balanced per family and
    the score with equal weight per family, as lm-eval's group reports them for the same docs."""
    knobs = {"max_seq_lengths": [2048]}
    header = _inspect_json(["lurch_tasks/memory_drift", "--model", "lurch-random/x", "-T", "limit=4",
                            "-T", f"max_seq_lengths={knobs['max_seq_lengths']}"], tmp_path / "inspect")
    inspect_scores = {s["name"]: next(iter(s["metrics"].values()))["value"] for s in header["results"]["scores"]}
    done = subprocess.run([str(BIN / "lurch"), "eval", "--model", "lurch-random", "--tasks", "memory_drift",
                           "--limit", "4", "--metadata", json.dumps(knobs), "--output_path", str(tmp_path / "lm")],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    (results,) = sorted((tmp_path / "lm").rglob("results_*.json"))
    group = json.loads(results.read_text())["results"]["memory_drift"]
    assert inspect_scores["headline"] == pytest.approx(group["headline,none"], abs=1e-12)
    assert inspect_scores["score"] == pytest.approx(group["score,none"], abs=1e-12)
    assert header["results"]["total_samples"] == 5 * 4  # the first four docs of each family task


def test_inspect_task_parameters_are_checked_like_metadata(tmp_path):
    done = subprocess.run([str(BIN / "inspect"), "eval", "lurch_tasks/discovery_code", "--model", "lurch-solver/x",
                           "-T", "max_seq_length=[1024]", "--log-dir", str(tmp_path), "--display", "none"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode != 0
    assert "max_seq_length: unknown metadata key" in done.stdout + done.stderr


def _lighteval(data: Path, out: Path, model: str, tasks: str) -> subprocess.CompletedProcess:
    from lurch_tasks.harness import lighteval_model

    return subprocess.run([sys.executable, "-m", "lurch_tasks.harness.lighteval_run", "custom", model,
                           lighteval_model.__file__, tasks, "--custom-tasks", "lurch_tasks.harness.lighteval_tasks",
                           "--output-dir", str(out), "--save-details"],
                          capture_output=True, text=True, timeout=900, env={**os.environ, "LURCH_DATA": str(data)})


@pytest.fixture(scope="module")
def lighteval_submission(tmp_path_factory) -> Path:
    """lighteval's own CLI (offline: custom tasks only) on the first three docs of every discovery task."""
    root = tmp_path_factory.mktemp("lighteval")
    configs = [arg for name in PARITY.default_tasks() if name.startswith("discovery") for arg in ("--config", name)]
    done = subprocess.run([str(BIN / "lurch"), "materialize", "--quiet", "--limit", "3", "--out", str(root / "data"),
                           *configs], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    tasks = ",".join(name for name in PARITY.default_tasks() if name.startswith("discovery"))
    done = _lighteval(root / "data", root / "sub", "lurch-solver", tasks)
    assert done.returncode == 0, done.stderr[-3000:]
    (root / "sub" / "submission.json").write_text(json.dumps(_declared("lighteval")))
    return root / "sub"


def test_lighteval_cli_runs_offline_and_its_submission_validates(lighteval_submission):
    (results,) = sorted(lighteval_submission.rglob("results_*.json"))
    claimed = json.loads(results.read_text())["results"]
    assert claimed["discovery_code|0"]["headline"] == 1.0 and claimed["discovery_cipher|0"]["score"] == 1.0
    verdict = validate(lighteval_submission)
    assert verdict.ok, verdict.problems
    assert verdict.docs == 6 * 3


def test_a_lighteval_results_file_that_lies_is_refused(lighteval_submission, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(lighteval_submission, copy)
    (results,) = sorted(copy.rglob("results_*.json"))
    document = json.loads(results.read_text())
    document["results"]["discovery_code|0"]["score"] = 0.5
    results.write_text(json.dumps(document))
    verdict = validate(copy)
    assert not verdict.ok
    assert any("discovery_code: results claim score = 0.5, the logged outputs score 1.0" in p for p in verdict.problems)


@pytest.fixture(scope="module")
def inspect_submission(tmp_path_factory) -> Path:
    """One `inspect eval` call (one run id) over the discovery group: the first three docs of each task."""
    root = tmp_path_factory.mktemp("inspect-sub")
    logs = inspect_ai.eval(["lurch_tasks/discovery"], model="lurch-solver/x", task_args={"limit": 3},
                           log_dir=str(root), display="none")
    assert [log.status for log in logs] == ["success"]
    (root / "submission.json").write_text(json.dumps(_declared("inspect")))
    return root


def test_an_inspect_submission_validates(inspect_submission):
    verdict = validate(inspect_submission)
    assert verdict.ok, verdict.problems
    assert verdict.docs == 6 * 3 and verdict.model == "lurch-solver/x [inspect]"


def test_a_submission_must_declare_its_harness(inspect_submission, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(inspect_submission, copy)
    (copy / "submission.json").write_text(json.dumps(SUBMISSION))  # no run.harness: lm-eval
    verdict = validate(copy)
    assert verdict.problems == ("submission.json: run.harness is 'lm-eval', but the logs are inspect's",)


def _rewrite_eval(path: Path, edit) -> None:
    """Rewrite one .eval file with ``edit(name, data) -> data`` applied to every entry (zstd, as Inspect writes)."""
    import zipfile_zstd  # noqa: F401

    with zipfile.ZipFile(path) as archive:
        entries = [(info.filename, archive.read(info.filename)) for info in archive.infolist()]
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_ZSTANDARD) as archive:
        for name, data in entries:
            archive.writestr(name, edit(name, data))


def test_an_inspect_log_whose_outputs_were_changed_is_refused(inspect_submission, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(inspect_submission, copy)
    (log,) = sorted(copy.glob("*.eval"))

    def blank_first_code_answer(name: str, data: bytes) -> bytes:
        if not name.startswith("samples/discovery/discovery_code/test/0_"):
            return data
        record = json.loads(data)
        record["output"]["completion"] = "FINAL ANSWER: none"
        return json.dumps(record).encode()

    _rewrite_eval(log, blank_first_code_answer)
    verdict = validate(copy)
    assert not verdict.ok
    assert any(p.startswith("discovery_code: results claim score = 1.0, the logged outputs score 0.66")
               for p in verdict.problems), verdict.problems


@pytest.mark.parametrize("content, reason", [
    (b"not a zip", "not an Inspect log (BadZipFile"),
    (None, "has no header.json (an unfinished or interrupted run)"),
])
def test_a_broken_inspect_log_is_one_line(tmp_path, content, reason):
    path = tmp_path / "run.eval"
    if content is None:
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("_journal/start.json", "{}")
    else:
        path.write_bytes(content)
    with pytest.raises(ValueError, match=re.escape(reason)):
        find_runs([tmp_path])


def test_broken_lighteval_details_are_one_line(tmp_path):
    folder = tmp_path / "details" / "m" / "2026-12-05T00-00-00.000000"
    folder.mkdir(parents=True)
    (folder / "details_discovery_code|0_2026-12-05T00-00-00.000000.parquet").write_bytes(b"PAR1 garbage")
    (run,) = find_runs([tmp_path])
    with pytest.raises(ValueError, match="not lighteval details"):
        list(iter_samples([run]))


def test_inspect_generates_each_doc_with_the_budget_lm_eval_gives_it():
    """A group mixes budgets: each sample gets its leaf's YAML max_gen_toks (a family task's is its members'
    largest), unless the run sets one."""
    from lurch_tasks.harness.family_tasks import family_of
    from lurch_tasks.harness.inspect_tasks import BUDGET_KEY, LEAF_KEY, build_task
    from lurch_tasks.harness.yamls import family_task_yaml

    task = build_task("memory_drift", limit=2, max_seq_lengths=[2048])
    budgets = {}
    for sample in task.dataset:
        leaf = sample.metadata[LEAF_KEY]
        expected = family_task_yaml(family_of(leaf))["generation_kwargs"]["max_gen_toks"]
        assert sample.metadata[BUDGET_KEY] == expected, leaf
        budgets[leaf] = expected
    assert len(set(budgets.values())) > 1  # the families' budgets differ: one task-wide budget would be wrong
    fixed = build_task("memory_drift", limit=2, max_seq_lengths=[2048], max_gen_toks=300)
    assert {sample.metadata[BUDGET_KEY] for sample in fixed.dataset} == {300}


def test_a_family_the_window_cannot_hold_is_left_out_and_the_report_says_so(tmp_path):
    """As lm-eval skips family_recon for an 8k window (tests/test_window_skip.py), so does Inspect; its log records
    why, and the report's headline names it."""
    from lurch_tasks.analysis.frame import load_runs

    logs = inspect_ai.eval(["lurch_tasks/memory_drift"], model="lurch-solver/x", log_dir=str(tmp_path),
                           task_args={"limit": 1, "max_seq_lengths": [2048], "max_model_len": 8192}, display="none")
    assert [log.status for log in logs] == ["success"]
    assert logs[0].eval.metadata["lurch_skipped"] == {"family_recon": "window 8192 < 16384+1024"}
    (headline,) = load_runs(find_runs([tmp_path])).headlines
    assert headline.startswith("lurch-solver/x [inspect]: memory_drift = 1.000 over 4 of 5 families (recon skipped: "
                               "window 8192 < 16384+1024)"), headline


def test_repeats_in_inspect_are_epochs_with_lm_evals_answers_and_scores(tmp_path):
    """`--metadata '{"repeats": 3}'` in lm-eval and `-T repeats=3` (three epochs) in Inspect: lurch-simulated draws the
    same three answers per doc in both, each doc's metrics are their mean, and the readers see three answers."""
    from lurch_tasks.analysis.frame import load_runs

    done = subprocess.run([str(BIN / "lurch"), "eval", "--model", "lurch-simulated", "--tasks", "implicit_hop_depth",
                           "--limit", "6", "--metadata", json.dumps({"repeats": 3}), "--log_samples",
                           "--output_path", str(tmp_path / "lm")], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    logs = inspect_ai.eval(["lurch_tasks/implicit_hop_depth"], model="lurch-simulated/x", display="none",
                           task_args={"limit": 6, "repeats": 3}, log_dir=str(tmp_path / "inspect"))
    assert [log.status for log in logs] == ["success"] and logs[0].eval.config.epochs == 3
    frames = {name: load_runs(find_runs([tmp_path / name])).frame.set_index("instance") for name in ("lm", "inspect")}
    lm, inspect = frames["lm"], frames["inspect"]
    assert (lm["answers"] == 3).all() and (inspect["answers"] == 3).all() and len(lm) == 6
    assert lm["score"].sort_index().tolist() == inspect["score"].sort_index().tolist()
    assert set(lm["score"]) - {0.0, 1.0}  # some doc has both right and wrong answers: the three draws differ
    (results,) = (tmp_path / "lm").rglob("results_*.json")
    claimed = json.loads(results.read_text())["results"]["implicit_hop_depth"]
    inspect_scores = {s.name: next(iter(s.metrics.values())).value for s in logs[0].results.scores}
    assert inspect_scores["score"] == pytest.approx(claimed["score,none"], abs=1e-12)
    assert inspect_scores["headline"] == pytest.approx(claimed["headline,none"], abs=1e-12)
    submission = {**_declared("inspect"), "model": {"name": "lurch-simulated", "revision": __version__},
                  "tasks": ["implicit_hop_depth"]}
    (tmp_path / "inspect" / "submission.json").write_text(json.dumps(submission))
    verdict = validate(tmp_path / "inspect")
    assert verdict.ok and verdict.docs == 6, verdict.problems
