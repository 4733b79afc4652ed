"""`lurch leaderboard validate` on a real submission (`lurch eval --model lurch-solver --tasks memory_drift
--log_samples`, a declared --limit subset to keep CI short) and on six tampered copies, each rejected for its own
reason; archives, unsafe archives and the schema."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from lurch_evals_one_process import lurch_evals

from lurch_tasks import __version__
from lurch_tasks.core.generation import generate_row, resolve_task
from lurch_tasks.harness.models import solve_prompt
from lurch_tasks.leaderboard.submission import schema_problems
from lurch_tasks.leaderboard.validate import expand_tasks, validate

pytestmark = pytest.mark.slow

LURCH = str(Path(sys.executable).parent / "lurch")
LIMIT = 3
# memory_drift's tasks through their family groups: --limit then takes 3 docs of every task (the umbrella's leaves are
# family tasks, whose --limit counts docs per family: tests/test_headline.py validates such a run)
SUITE = "find_the_origin_suite,memory_drift_graph,implicit_hop,recon,discovery"
SUBMISSION = {"schema_version": 1, "model": {"name": "lurch-solver", "revision": __version__},
              "run": {"lm_eval_model": "lurch-solver", "model_args": "", "chat_template": False, "generation": {}},
              "date": "2026-12-02", "lurch_tasks_version": __version__, "tasks": ["memory_drift"], "seed": 0,
              "subset": True, "contact": "maintainers@example.org"}


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([LURCH, *args], capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    """The solver's and the random baseline's logged runs of the suite, in one process (lurch_evals_one_process:
    lm-eval is imported once)."""
    root = tmp_path_factory.mktemp("submission")
    lurch_evals([["--model", model, "--tasks", SUITE, "--limit", str(LIMIT), "--log_samples", "--output_path",
                  str(root / model.removeprefix("lurch-"))] for model in ("lurch-solver", "lurch-random")],
                timeout=900)
    return root


@pytest.fixture(scope="module")
def submission(runs) -> Path:
    folder = runs / "solver"
    (folder / "submission.json").write_text(json.dumps(SUBMISSION, indent=2))
    return folder


def _copy(submission: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(submission, copy)
    return copy


def _samples(folder: Path, task: str) -> Path:
    return next(folder.rglob(f"samples_{task}_2*.jsonl"))


def _edit_line(path: Path, edit, line: int = 0) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[line])
    edit(record)
    lines[line] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_the_real_submission_validates(submission):
    verdict = validate(submission)
    assert verdict.ok, verdict.problems
    tasks, _ = expand_tasks(["memory_drift"])
    assert verdict.tasks == tuple(tasks) and verdict.docs == LIMIT * len(tasks) and verdict.model == "lurch-solver"
    done = run("leaderboard", "validate", str(submission), "--quiet")
    assert done.returncode == 0 and ": pass (lurch-solver" in done.stdout, done.stdout + done.stderr


def _tamper_output(folder: Path) -> None:
    _edit_line(_samples(folder, "find_the_origin"), lambda r: r.update(resps=[["FINAL ANSWER: nothing"]]))


def _tamper_claim(folder: Path) -> None:
    results = next(folder.rglob("results_*.json"))
    document = json.loads(results.read_text())
    document["results"]["memory_drift_edge"]["f1,none"] = 0.99
    results.write_text(json.dumps(document))


def _drop_doc(folder: Path) -> None:
    path = _samples(folder, "implicit_hop_depth")
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")


def _other_seed(folder: Path) -> None:
    def swap(record: dict) -> None:
        doc = generate_row(resolve_task(record["doc"]["task"], seed=1), record["doc"]["index"])
        record.update(doc=doc, resps=[[solve_prompt(doc["prompt"])]])

    _edit_line(_samples(folder, "find_the_origin_random"), swap, line=1)


def _stale_version(folder: Path) -> None:
    _edit_line(_samples(folder, "memory_drift_clique"), lambda r: r["doc"].update(family_version="0.0.9"))


def _duplicate_doc(folder: Path) -> None:
    path = _samples(folder, "recon_conflict")
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([*lines, lines[0]]) + "\n", encoding="utf-8")


def _malformed_metadata(folder: Path) -> None:
    (folder / "submission.json").write_text(json.dumps({**SUBMISSION, "seed": "zero", "contact": None}))


@pytest.mark.parametrize(("tamper", "reasons"), [
    (_tamper_output, ["find_the_origin: results claim score = 1.0, the logged outputs score 0.666"]),
    (_tamper_claim, ["memory_drift_edge: results claim f1 = 0.99, the logged outputs score 1.0"]),
    (_drop_doc, ["implicit_hop_depth: the results file counts 3 docs, the samples log 2",
                 "implicit_hop_depth: doc index 2 missing (the first 3 of 64 docs are needed)"]),
    (_other_seed, ["find_the_origin_random doc find_the_origin/find_the_origin_random/test/1: made with seed 1, but "
                   "submission.json declares seed 0"]),
    (_stale_version, ["memory_drift_clique doc graph_reconstruction/memory_drift_clique/test/0: family_version 0.0.9 "
                      "differs from the installed"]),
    (_duplicate_doc, ["recon_conflict doc recon/recon_conflict/test/0: logged twice"]),
    (_malformed_metadata, ["submission.json: contact: None is not of type 'string'",
                           "submission.json: seed: 'zero' is not of type 'integer'"]),
])
def test_each_tampered_copy_is_rejected_for_its_reason(submission, tmp_path, tamper, reasons):
    copy = _copy(submission, tmp_path)
    tamper(copy)
    verdict = validate(copy)
    assert not verdict.ok
    for reason in reasons:
        assert any(problem.startswith(reason) for problem in verdict.problems), (reason, verdict.problems)
    assert len(verdict.problems) == len(reasons), verdict.problems  # nothing else is blamed
    done = run("leaderboard", "validate", str(copy), "--quiet")
    assert done.returncode == 1 and "FAIL" in done.stdout and reasons[0][:40] in done.stdout


def test_a_full_run_needs_every_doc_and_a_limit_needs_a_declared_subset(submission, tmp_path):
    copy = _copy(submission, tmp_path)
    (copy / "submission.json").write_text(json.dumps({**SUBMISSION, "subset": False, "tasks": ["find_the_origin"]}))
    problems = validate(copy).problems
    assert any(p.startswith("the run used --limit 3.0; allowed: a full run") for p in problems), problems
    assert any(p.startswith("find_the_origin: doc index 3, 4, 5, 6, 7 ... missing (all 224 of 224") for p in problems)
    assert any(p.startswith("memory_drift_edge: logged but not declared") for p in problems)


def test_archives_validate_and_unsafe_ones_are_refused(submission, tmp_path):
    zipped = Path(shutil.make_archive(str(tmp_path / "sub"), "zip", submission))
    tarred = Path(shutil.make_archive(str(tmp_path / "sub"), "gztar", submission))
    for archive in (zipped, tarred):
        assert validate(archive).ok, archive
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as bundle:
        bundle.writestr("../outside.json", "{}")
    assert validate(evil).problems == ("submission: evil.zip member '../outside.json' is not allowed; allowed: plain "
                                       "files with relative paths",)
    linked = tmp_path / "linked.tar.gz"
    with tarfile.open(linked, "w:gz") as bundle:
        info = tarfile.TarInfo("submission.json")
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
        bundle.addfile(info)
    assert "is not allowed" in validate(linked).problems[0]
    assert not (tmp_path / "outside.json").exists()
    assert validate(tmp_path / "nowhere").problems[0].startswith("submission: ")


def test_schema_names_every_problem():
    assert schema_problems(SUBMISSION) == []
    broken = {**SUBMISSION, "colour": "red", "tasks": []}
    del broken["model"]
    problems = schema_problems(broken)
    assert any("'model' is a required property" in p for p in problems)
    assert any("Additional properties are not allowed ('colour'" in p for p in problems)
    assert any(p.startswith("submission.json: tasks:") for p in problems)


def test_build_ranks_valid_submissions_only_and_the_page_sorts(runs, submission, tmp_path):

    from browser import check_page, open_page, require_browser

    weaker = tmp_path / "random"
    shutil.copytree(runs / "random", weaker)
    (weaker / "submission.json").write_text(json.dumps({**SUBMISSION, "model": {"name": "lurch-random",
                                                                                 "revision": __version__}}))
    broken = _copy(submission, tmp_path)
    _tamper_claim(broken)
    (broken / "submission.json").write_text(json.dumps({**SUBMISSION, "model": {"name": "tampered", "revision": "x"}}))
    out = tmp_path / "board"
    done = run("leaderboard", "build", str(weaker), str(submission), str(broken), "--out", str(out), "--quiet",
               "--bootstrap", "200")
    assert done.returncode == 0, done.stderr
    assert "is left out: memory_drift_edge: results claim f1 = 0.99" in done.stderr
    assert "2 of 3 submissions passed validation" in done.stdout
    board = json.loads((out / "leaderboard.json").read_text())
    # --limit runs are not the standard (memory_drift in full): one group of the partial table, ranked within it
    assert board["overall"] == [] and board["families"] == {}
    assert [row["model"] for row in board["partial"]] == ["lurch-solver", "lurch-random"]  # higher headline first
    assert [(row["group"], row["rank"]) for row in board["partial"]] == [(1, 1), (1, 2)]
    assert board["partial"][0]["memory_drift"] == 0.0 and board["partial"][0]["headline"] == 1.0
    assert board["partial"][0]["coverage"] == f"--limit {LIMIT}" and board["partial"][0]["seed"] == "public"
    assert board["partial"][0]["partial_because"] == f"coverage --limit {LIMIT}, the standard's is full"
    assert {k.split(":")[1] for k in board["partial"][0] if k.startswith("headline:") and not k.endswith(
        ("_lo", "_hi"))} == {"discovery", "find_the_origin", "graph_reconstruction", "implicit_hop", "recon"}
    assert "tampered" not in (out / "leaderboard.md").read_text() and "| 1 | 1 | lurch\\-solver | " in (
        out / "leaderboard.md").read_text()
    pushed = run("leaderboard", "push", str(out), "--repo-id", "org/board", "--dry-run")
    assert pushed.returncode == 0 and "would upload index.html" in pushed.stdout
    assert "would upload leaderboard.csv" in pushed.stdout
    refused = run("leaderboard", "push", str(tmp_path), "--repo-id", "org/board", "--dry-run")
    assert refused.returncode == 2 and "has no .lurch-leaderboard.json" in refused.stderr

    require_browser()
    check = check_page(out / "index.html", tmp_path / "board.png", width=1200, height=900)
    assert check.console_errors == [] and check.screenshot_size == (1200, 900)
    assert "lurch-solver" in check.text and "lurch-random" in check.text
    models = "[...document.querySelectorAll('#table-partial tbody tr')].map(r => r.querySelector('td:nth-child(3)')" \
             ".textContent)"
    with open_page(out / "index.html", width=1200, height=900) as page:
        assert page.evaluate(models) == ["lurch-solver", "lurch-random"]
        page.click("#table-partial th[data-column='score'] button")  # higher is better: best first
        assert page.evaluate(models) == ["lurch-solver", "lurch-random"]
        page.click("#table-partial th[data-column='score'] button")  # again: reversed
        assert page.evaluate(models) == ["lurch-random", "lurch-solver"]
        page.click("#table-partial th[data-column='model'] button")  # text: alphabetical
        assert page.evaluate(models) == ["lurch-random", "lurch-solver"]
        assert page.console_errors == []


def test_a_private_seed_is_never_written_and_validates_only_with_the_seed(tmp_path):
    import os

    secret = "918273645501"
    env = {**os.environ, "LURCH_PRIVATE_SEED": secret}
    out = tmp_path / "private"
    done = subprocess.run([LURCH, "eval", "--model", "lurch-solver", "--tasks", "find_the_origin,recon_chain",
                           "--limit", "2", "--log_samples", "--output_path", str(out)], capture_output=True, text=True,
                          timeout=900, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    written = [p for p in out.rglob("*") if p.is_file()]
    assert written and not any(secret in p.read_text(encoding="utf-8") for p in written)  # only its hash
    fields = json.loads(subprocess.run([LURCH, "leaderboard", "private-seed"], capture_output=True, text=True,
                                       env=env, check=True).stdout)
    samples = json.loads(_samples(out, "find_the_origin").read_text().splitlines()[0])
    assert samples["doc"]["seed"] == fields["seed"] and fields["private_seed_sha256"][:16] in samples["doc"]["pair_key"]
    public = generate_row(resolve_task("find_the_origin"), samples["doc"]["index"])
    assert samples["doc"]["prompt"] != public["prompt"]  # other docs than the public seed's
    (out / "submission.json").write_text(json.dumps({**SUBMISSION, **fields, "tasks": ["find_the_origin",
                                                                                     "recon_chain"]}))
    with_seed = subprocess.run([LURCH, "leaderboard", "validate", str(out), "--quiet"], capture_output=True,
                               text=True, env=env)
    assert with_seed.returncode == 0 and ": pass" in with_seed.stdout, with_seed.stdout
    without = subprocess.run([LURCH, "leaderboard", "validate", str(out), "--quiet"], capture_output=True, text=True,
                             env={k: v for k, v in os.environ.items() if k != "LURCH_PRIVATE_SEED"})
    assert without.returncode == 1 and "validate with LURCH_PRIVATE_SEED set to it" in without.stdout
    wrong = subprocess.run([LURCH, "leaderboard", "validate", str(out), "--quiet"], capture_output=True, text=True,
                           env={**os.environ, "LURCH_PRIVATE_SEED": "7"})
    assert wrong.returncode == 1 and "is not the seed this submission ran on" in wrong.stdout
    board = tmp_path / "board"
    built = subprocess.run([LURCH, "leaderboard", "build", str(out), "--out", str(board), "--quiet", "--bootstrap",
                            "50"], capture_output=True, text=True, env=env)
    assert built.returncode == 0, built.stderr
    assert f"private \\(sha256 {fields['private_seed_sha256'][:12]}\\)" in (board / "leaderboard.md").read_text()
    assert not any(secret in p.read_text(encoding="utf-8") for p in board.rglob("*") if p.is_file())
