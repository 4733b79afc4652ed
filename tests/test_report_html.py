"""`lurch report` end to end on real lm-eval runs of three different models over the umbrella `memory_drift` (the
reference solver, the chance baseline) and a real HF model (the tiny offline GPT-2): every section and file, the page
in headless Chromium (no console error, every figure loaded, a screenshot), byte-identical reruns, re-scoring from
the raw outputs, and the one-line refusals (another family_version, a truncated log, a run without --log_samples,
runs of other tasks only, a folder the report did not write)."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from browser import check_page, leftover_browser_processes, require_browser
from hf_tiny import build_tiny_gpt2
from lurch_evals_one_process import lurch_evals

pytestmark = pytest.mark.slow

LURCH = str(Path(sys.executable).parent / "lurch")
SECTIONS = ("findings", "overview", "length", "graph", "find_the_origin", "recon", "implicit_hop", "glm")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([LURCH, *args], capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("runs")
    tiny = build_tiny_gpt2(root / "tiny_gpt2")
    # memory_drift's tasks through their family groups: --limit 8 per task (the umbrella counts per family). The
    # three runs share one process (lurch_evals_one_process): lm-eval is imported once, not three times.
    lurch_evals([
        *(["--model", model, "--tasks", "find_the_origin_suite,memory_drift_graph,implicit_hop,recon",
           "--limit", "8", "--log_samples", "--output_path", str(root / model)]
          for model in ("lurch-solver", "lurch-random")),
        ["--model", "hf", "--model_args", f"pretrained={tiny},tokenizer={tiny},dtype=float32",
         "--device", "cpu", "--tasks", "find_the_origin", "--limit", "4", "--gen_kwargs", "max_gen_toks=8",
         "--metadata", json.dumps({"max_seq_lengths": [768, 1024], "num_samples": 1}), "--log_samples",
         "--output_path", str(root / "hf")],
    ], timeout=900)
    return root


@pytest.fixture(scope="module")
def report(runs, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report") / "r"
    done = run("report", str(runs / "lurch-solver"), str(runs / "lurch-random"), str(runs / "hf"), "--out", str(out),
               "--bootstrap", "200", "--quiet")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "lurch-solver" in done.stdout and "report.html" in done.stdout
    return out


def _csv(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_report_has_every_section_table_and_figure(report):
    html = (report / "report.html").read_text(encoding="utf-8")
    for key in SECTIONS:
        assert f'<section id="{key}">' in html, key
    assert "http://" not in html and "https://" not in html  # nothing to fetch
    summary = {(r["model"], r["family"]): r for r in _csv(report / "summary_models.csv")}
    models = {model for model, _ in summary}
    assert len(models) == 3 and "lurch-solver" in models and "lurch-random" in models
    assert any(model.startswith("hf") for model in models)
    solver = summary["lurch-solver", "all"]
    tasks = {r["task"] for r in _csv(report / "by_task.csv")}
    assert float(solver["score"]) == 1.0 and float(solver["memory_drift"]) == 0.0 and int(solver["n"]) == 8 * len(tasks)
    headlines = {r["model"]: r for r in _csv(report / "headline.csv")}  # family-balanced, chance-normalised
    assert float(headlines["lurch-solver"]["headline"]) == 1.0
    assert abs(float(headlines["lurch-random"]["headline"])) < 0.1
    families = [float(v) for k, v in headlines["lurch-random"].items() if k.startswith("headline:")
                and not k.endswith(("_lo", "_hi"))]
    assert len(families) == 4 and float(headlines["lurch-random"]["headline"]) == pytest.approx(sum(families) / 4)
    random = summary["lurch-random", "all"]
    assert float(random["score_lo"]) <= float(random["score"]) <= float(random["score_hi"]) < 0.5
    onsets = _csv(report / "length_onset.csv")
    assert {r["model"] for r in onsets} >= {"lurch-solver", "lurch-random"}
    assert all(r["drift_onset"] == "" for r in onsets if r["model"] == "lurch-solver")  # never drifts
    # the chance baseline, known from its results file: no onset or effective length, and no GLM fit
    assert all(r["drift_onset"] == r["effective_length"] == "chance" for r in onsets if r["model"] == "lurch-random")
    assert "lurch-random" not in {r["label"] for r in _csv(report / "glm_fits.csv")}
    assert html.index('<section id="findings">') < html.index('<section id="overview">')
    assert '<h3>lurch-random<span class="tag">chance</span></h3>' in html and "[none, none]" not in html
    assert all(float(r["effective_length"]) == float(r["longest"]) for r in onsets if r["model"] == "lurch-solver")
    figures = sorted(p.name for p in (report / "figures").glob("*.png"))
    # glm_contrasts.png is not asked for: the solver never errs and the chance baseline is left out of the GLM, so
    # these runs may have no estimable property effect (the fits' notes say why)
    assert {"length_memory_drift.png", "length_score.png", "recon_failure_modes.png"} <= set(figures)
    assert "lurch-random: the chance baseline, left out of every fit" in html
    assert "graph_memory_drift_edge.png" in figures and "fto_find_the_origin.png" in figures  # one per task
    assert not [f for f in figures if "lurch-" in f or f.startswith(("fto_find_the_origin_hf", "radar_"))]
    glm = _csv(report / "glm_main.csv")
    assert {r["term"] for r in glm if r["kind"] == "property"} <= {"length", "scope", "dispersion", "depth"}
    manifest = json.loads((report / ".lurch-report.json").read_text())
    assert "report.html" in manifest["files"] and "figures/length_score.png" in manifest["files"]


def test_report_renders_in_headless_chromium(report, tmp_path):
    require_browser()
    shot = tmp_path / "report.png"
    check = check_page(report / "report.html", shot, width=1280, height=1600, full_page=True)
    assert check.console_errors == []
    assert check.images_broken == []
    assert check.images_total == len(list((report / "figures").glob("*.png"))) > 10
    assert check.title == "lurch report" and "Per-model summary" in check.text and "LURCH GLM" in check.text
    assert check.text.index("Key findings") < check.text.index("Per-model summary")
    width, height = check.screenshot_size
    assert width >= 1280 and height > 3000  # the whole page: every section below the first screen
    assert leftover_browser_processes() == []


def test_rerun_gives_the_same_bytes_and_keeps_other_files(runs, report, tmp_path):
    copy = tmp_path / "r"
    shutil.copytree(report, copy)
    (copy / "my-notes.txt").write_text("mine")
    done = run("report", str(runs / "lurch-solver"), str(runs / "lurch-random"), str(runs / "hf"), "--out", str(copy),
               "--bootstrap", "200", "--quiet", "--overwrite")
    assert done.returncode == 0, done.stderr
    for path in sorted(report.rglob("*")):
        if path.is_file():
            assert (copy / path.relative_to(report)).read_bytes() == path.read_bytes(), path.name
    assert (copy / "my-notes.txt").read_text() == "mine"
    foreign = tmp_path / "theirs"
    foreign.mkdir()
    (foreign / "data.csv").write_text("x")
    refused = run("report", str(runs / "lurch-solver"), "--out", str(foreign), "--overwrite")
    assert refused.returncode == 2 and "was not written by lurch report" in refused.stderr
    assert (foreign / "data.csv").read_text() == "x" and sorted(p.name for p in foreign.iterdir()) == ["data.csv"]


def _copy_run(runs: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(runs / "lurch-solver", copy)
    return copy


def _samples_file(run_dir: Path, task: str) -> Path:
    return next(p for p in run_dir.rglob(f"samples_{task}_2*.jsonl"))  # not samples_{task}_random_...


def _edit_first(path: Path, edit) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    edit(record)
    lines[0] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_outputs_are_rescored_not_trusted(runs, tmp_path):
    copy = _copy_run(runs, tmp_path)

    def wrong_answer(record):
        record["resps"] = [["FINAL ANSWER: nothing"]]  # the logged metrics still claim a perfect score (1 of 8 rows)

    _edit_first(_samples_file(copy, "find_the_origin"), wrong_answer)
    done = run("report", str(copy), "--out", str(tmp_path / "r"), "--bootstrap", "0", "--quiet")
    assert done.returncode == 0, done.stderr
    by_task = {r["task"]: r for r in _csv(tmp_path / "r" / "by_task.csv")}
    assert float(by_task["find_the_origin"]["score"]) == 7 / 8 and float(by_task["memory_drift_edge"]["score"]) == 1


def test_another_family_version_is_refused_unless_allowed(runs, tmp_path):
    copy = _copy_run(runs, tmp_path)
    _edit_first(_samples_file(copy, "memory_drift_edge"), lambda r: r["doc"].update(family_version="0.0.1"))
    done = run("report", str(copy), "--out", str(tmp_path / "r"), "--quiet")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "family_version 0.0.1 differs from the installed" in done.stderr
    assert "--allow-version-mismatch" in done.stderr and not (tmp_path / "r").exists()
    allowed = run("report", str(copy), "--out", str(tmp_path / "r"), "--allow-version-mismatch", "--bootstrap", "0",
                  "--quiet")
    assert allowed.returncode == 0 and "another lurch-tasks version" in allowed.stderr
    _edit_first(_samples_file(copy, "find_the_origin"), lambda r: r["doc"].update(config_hash="0" * 64))
    hashed = run("report", str(copy), "--out", str(tmp_path / "r2"), "--allow-version-mismatch", "--quiet",
                 "--bootstrap", "0")
    assert hashed.returncode == 0 and "2 docs were made by another" in hashed.stderr


def test_unreadable_runs_are_one_line_errors(runs, tmp_path):
    truncated = _copy_run(runs, tmp_path)
    path = _samples_file(truncated, "find_the_origin")
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: len(text) - 500], encoding="utf-8")
    results_only = tmp_path / "results_only"
    shutil.copytree(runs / "lurch-solver", results_only)
    for samples in results_only.rglob("samples_*.jsonl"):
        samples.unlink()
    foreign = tmp_path / "foreign"
    (foreign / "model").mkdir(parents=True)
    (foreign / "model" / "samples_hellaswag_2026-01-01T00-00-00.000001.jsonl").write_text(
        json.dumps({"doc": {"query": "q", "choices": ["a"]}, "resps": [["a"]]}) + "\n")
    for folder, message in ((truncated, "is not JSON (a truncated file?)"),
                            (results_only, "has lm-eval results but no samples_*.jsonl"),
                            (foreign, "hold no lurch-tasks docs; allowed: runs of our tasks (found only: hellaswag)")):
        done = run("report", str(folder), "--out", str(tmp_path / "out"), "--quiet")
        assert done.returncode == 2 and message in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "out").exists()
    for args, message in ((["--bootstrap", "-1"], "--bootstrap"), (["--effective-fraction", "1.5"], "(0, 1]"),
                          (["--onset-margin", "x"], "--onset-margin")):
        done = run("report", str(runs / "lurch-solver"), "--out", str(tmp_path / "out"), *args)
        assert done.returncode == 2 and message in done.stderr, done.stderr
