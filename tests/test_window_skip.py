"""Issue 30: any model window, whole suite. A task (or family) whose shortest case cannot fit the model's window is
skipped with one warning line when lm-eval builds it (``harness.fit``, ``harness.lm_task``); the umbrella averages
the families it evaluated; the summary, the results JSON and `lurch report` say what was evaluated and skipped;
``--strict`` keeps the error."""

from __future__ import annotations

import json

import pytest
from in_process import lurch_in_process

from lurch_tasks.analysis.headline import coverage_line
from lurch_tasks.harness.family_tasks import family_task_name, family_tasks
from lurch_tasks.harness.fit import unfit_task
from lurch_tasks.harness.window import ModelWindow

WINDOW_8K = json.dumps({"max_model_len": 8192})


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.setenv(name, "1")


def test_a_family_none_of_whose_members_fits_is_unfit_before_any_doc():
    found = unfit_task("family_recon", {"max_model_len": 8192})
    assert found is not None and (found.needs, found.max_gen_toks) == (16384, 1024)
    assert found.window == ModelWindow(8192, "--metadata max_model_len")
    assert found.describe() == ("family_recon: skipped: its shortest case needs 16384 tokens + max_gen_toks 1024, "
                                "more than the 8192-token window (--metadata max_model_len)")
    assert found.short == "window 8192 < 16384+1024"
    assert unfit_task("recon_chain", {"max_model_len": 8192}).task == "recon_chain"
    assert unfit_task("recon_chain__0123456789ab", {"max_model_len": 8192}) is not None  # a renamed folder config
    assert unfit_task("family_recon", {"max_model_len": 32768}) is None
    assert unfit_task("family_recon", {}) is None  # no window known: nothing is decided early
    assert unfit_task("family_find_the_origin", {"max_model_len": 8192}) is None  # some lengths fit
    # every length of the task above the window (not only its floor) is unfit too; a shorter override fits
    assert unfit_task("find_the_origin", {"max_model_len": 4096, "max_seq_lengths": [8192]}).needs == 8192
    assert unfit_task("find_the_origin", {"max_model_len": 4096, "max_seq_lengths": [2048, 8192]}) is None


def test_coverage_line_names_what_was_evaluated_and_skipped():
    line = coverage_line(0.123, ["find_the_origin", "graph_reconstruction", "implicit_hop"],
                         {"recon": "window 8192 < 16384+1024"}, [4096, 1024], [8192, 4096])
    assert line == ("memory_drift = 0.123 over 3 of 4 families (recon skipped: window 8192 < 16384+1024); "
                    "lengths 1024, 4096 (skipped: 8192)")
    assert coverage_line(0.5, ["recon"], {}, [16384]) == "memory_drift = 0.500 over 1 of 1 families; lengths 16384"


@pytest.mark.slow
def test_an_8k_window_skips_recon_once_and_the_umbrella_averages_the_other_families(tmp_path):
    from lurch_tasks.analysis.frame import load_runs
    from lurch_tasks.analysis.runs import find_runs

    out = tmp_path / "solver"
    run = lurch_in_process("eval", "--model", "lurch-solver", "--tasks", "memory_drift", "--limit", "3",
                           "--metadata", WINDOW_8K, "--log_samples", "--output_path", str(out))
    assert run.returncode == 0, run.stderr[-3000:]
    skipped = [line for line in run.stderr.splitlines() if "skipped:" in line]
    assert skipped == ["lurch: warning: family_recon: skipped: its shortest case needs 16384 tokens + max_gen_toks "
                       "1024, more than the 8192-token window (--metadata max_model_len) (strict: true fails instead)"]
    assert "recon_chain" not in run.stderr  # decided before the members: none of their docs was built
    document = json.loads(next(out.rglob("results_*.json")).read_text())
    results = document["results"]
    evaluated = [family_task_name(f) for f in family_tasks() if f.name != "recon"]
    assert results["family_recon"]["skipped"] == "window 8192 < 16384+1024"
    assert "family_recon" not in document["configs"]
    # the solver scores 1 on every family it ran: a skipped family counted as 0 would make this 0.8
    assert [results[name]["headline,none"] for name in evaluated] == [1.0, 1.0, 1.0, 1.0]
    assert results["memory_drift"]["headline,none"] == 1.0
    coverage = document["lurch_coverage"]
    assert coverage["families"] == ["discovery", "find_the_origin", "graph_reconstruction", "implicit_hop"]
    assert coverage["skipped"] == {"recon": "window 8192 < 16384+1024"}
    assert 8192 in coverage["lengths_skipped"] and max(coverage["lengths"]) < 8192
    summary = [line for line in run.stdout.splitlines() if line.startswith("lurch: memory_drift = ")]
    assert summary and summary[0].startswith("lurch: memory_drift = 1.000 over 4 of 5 families (recon skipped: "
                                             "window 8192 < 16384+1024); lengths ")
    loaded = load_runs(find_runs([out]))
    assert len(loaded.headlines) == 1
    assert "memory_drift = 1.000 over 4 of 5 families (recon skipped: window 8192 < 16384+1024); lengths " \
        in loaded.headlines[0]
    assert "(skipped: 8192" in loaded.headlines[0]


@pytest.mark.slow
def test_strict_keeps_the_one_line_error_and_a_run_with_nothing_left_fails():
    run = lurch_in_process("eval", "--model", "lurch-solver", "--tasks", "family_recon", "--limit", "2",
                           "--metadata", WINDOW_8K, "--strict")
    assert run.returncode == 2 and "Traceback" not in run.stderr
    errors = [line for line in run.stderr.splitlines() if line.startswith("lurch: error:")]
    assert errors == ["lurch: error: family_recon: its shortest case needs 16384 tokens + max_gen_toks 1024, more "
                      "than the model's 8192-token window (--metadata max_model_len); allowed: a model with a larger "
                      "window, other tasks, or strict false to skip it"]
    run = lurch_in_process("eval", "--model", "lurch-solver", "--tasks", "recon_chain", "--limit", "2",
                           "--metadata", WINDOW_8K)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "lurch: error: no requested task fits the model's window (recon_chain: window 8192 < 16384+1024)" \
        in run.stderr


@pytest.mark.slow
def test_a_run_that_cannot_fit_fails_before_the_model_is_loaded(tmp_path):
    """The window comes from the model's arguments (max_length); the model folder does not exist, so any error but
    ours would mean lm-eval had started loading it."""
    model_args = f"pretrained={tmp_path / 'no-such-model'},max_length=8192"
    for extra, expected in ((["--tasks", "memory_drift", "--strict"], "lurch: error: family_recon: its shortest case "
                             "needs 16384 tokens + max_gen_toks 1024, more than the model's 8192-token window (the "
                             "model's max_length)"),
                            (["--tasks", "recon"], "lurch: error: no requested task fits the model's window "
                             "(recon_cascade: window 8192 < 16384+1024; recon_chain: ")):
        run = lurch_in_process("eval", "--model", "hf", "--model_args", model_args, "--limit", "2", *extra)
        assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr[-2000:]
        assert run.stderr.strip().splitlines()[-1].startswith(expected), run.stderr[-2000:]
        assert "no-such-model" not in run.stderr


@pytest.mark.slow
def test_plain_lm_eval_skips_the_family_too():
    """Without `lurch eval` (lm-eval's own API with our YAML folder): the skipped family is an entry, not a crash,
    and the group averages the family it did evaluate."""
    import lm_eval
    from lm_eval.tasks import TaskManager

    from lurch_tasks.harness.yamls import yaml_dir

    manager = TaskManager(include_path=str(yaml_dir()), include_defaults=False,
                          metadata={"max_model_len": 8192, "max_docs": 2})
    results = lm_eval.simple_evaluate(model="dummy", tasks=["memory_drift"], limit=2, task_manager=manager,
                                      bootstrap_iters=0)["results"]
    assert results["family_recon"]["skipped"] == "window 8192 < 16384+1024"
    evaluated = [results[family_task_name(f)]["headline,none"] for f in family_tasks() if f.name != "recon"]
    assert results["memory_drift"]["headline,none"] == pytest.approx(sum(evaluated) / len(evaluated))
