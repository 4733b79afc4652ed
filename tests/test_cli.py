"""The `lurch` command line: happy paths end to end, and bad input as one clear line with exit 2."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lurch_tasks.core.generation import generate_row, resolve_task
from lurch_tasks.core.instance import content_hash
from lurch_tasks.harness.tasks import build_docs

LURCH = str(Path(sys.executable).parent / "lurch")
SMALL = ["--set", "context_tokens=[384,512]", "--set", "num_samples=2", "--set", "d_values=[-15,-10,-5,-2,2,5,10,15]"]


def run(*args, cwd=None):
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    return subprocess.run([LURCH, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


def test_help_lists_every_subcommand():
    out = run("--help").stdout
    for command in ("list", "generate", "materialize", "push", "validate", "audit-shortcuts", "eval", "tasks-path"):
        assert command in out


def test_list_json_describes_registered_configs():
    rows = json.loads(run("list", "--json").stdout)
    names = {row["name"] for row in rows}
    assert {"find_the_origin", "find_the_origin_random", "find_the_origin_long", "find_the_origin_paper"} <= names
    default = next(row for row in rows if row["name"] == "find_the_origin")
    assert default["instances"] == 224 and default["config"]["d_values"] == [d for d in range(-15, 16) if abs(d) > 1]
    assert not default["paper_faithful"]
    assert next(row for row in rows if row["name"] == "find_the_origin_paper")["paper_faithful"]


def test_generate_prints_the_same_rows_as_python():
    result = run("generate", "--config", "find_the_origin", "--n", "2", "--start", "3", *SMALL)
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    task = resolve_task("find_the_origin", {"context_tokens": [384, 512], "num_samples": 2,
                                            "d_values": [-15, -10, -5, -2, 2, 5, 10, 15]})
    assert [r["index"] for r in rows] == [3, 4]
    assert [content_hash(r) for r in rows] == [content_hash(generate_row(task, i)) for i in (3, 4)]


@pytest.mark.parametrize(
    "args, expected",
    [
        (("generate", "--config", "nope"), "config: 'nope' is not registered"),
        (("generate", "--config", "find_the_origin", "--set", "d_values=[0]"), "d_values: 0 is not allowed"),
        (("generate", "--config", "find_the_origin", "--set", "arrangement=zigzag"), "arrangement: 'zigzag'"),
        (("generate", "--config", "find_the_origin", "--set", "colour=1"), "colour: unknown config key"),
        (("generate", "--config", "find_the_origin", "--set", "oops"), "--set: 'oops' is not allowed"),
        (("generate", "--config", "find_the_origin", "--start", "999"), "--start: 999 is not allowed"),
        (("generate", "--config", "find_the_origin", "--split", "dev"), "split: 'dev' is not allowed"),
        (("generate", "--config", "find_the_origin", "--n", "0"), "argument --n"),
        (("push", "missing-folder", "--repo-id", "org/name", "--dry-run"), "missing-folder"),
        (("validate", "missing-folder"), "missing-folder"),
        # malformed values: where the JSON breaks, what a knob takes
        (("generate", "--config", "find_the_origin", "--set", "context_tokens=[abc]"),
         "--set: context_tokens=[abc] is not valid JSON (Expecting value: character 2); allowed: a JSON value"),
        (("generate", "--config", "find_the_origin", "--set", "context_tokens=abc"),
         "context_tokens: 'abc' is not allowed; allowed: a list of integers, e.g. [4096, 8192]"),
        # a typo gets the closest names
        (("generate", "--config", "find_the_orign"), "'find_the_orign' is not registered (did you mean "
                                                      "'find_the_origin'"),
        (("generate", "--config", "find_the_origin", "--set", "num_sample=2"), "num_sample: unknown config key "
                                                                              "for FindOriginConfig (did you mean "
                                                                              "'num_samples'?)"),
        (("eval", "--model", "lurch-solver", "--tasks", "find_the_origin,memory_drfit", "--limit", "1"),
         "--tasks: 'memory_drfit' is not a lurch-tasks task (did you mean 'memory_drift'"),
        (("eval", "--model", "lurch-solvr", "--tasks", "find_the_origin", "--limit", "1"),
         "--model: 'lurch-solvr' is not a model lm-eval registers (did you mean 'lurch-solver'?)"),
        (("eval", "--model", "lurch-solver", "--tasks", "find_the_origin", "--limit", "1", "--metadata",
          '{"context_token": [512]}'), "context_token: unknown metadata key (value [512]) (did you mean "
                                       "'context_tokens'?)"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, expected):
    result = run(*args)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert expected in result.stderr.strip().splitlines()[-1]


def test_materialize_validate_push_dry_run_and_eval_stored_copy(tmp_path):
    out = tmp_path / "data"
    made = run("materialize", "--config", "find_the_origin", "--out", str(out), "--quiet", *SMALL)
    assert made.returncode == 0, made.stderr
    assert sorted(p.name for p in (out / "find_the_origin").iterdir()) == ["test-00000-of-00001.parquet"]
    checked = run("validate", str(out), "--quiet")
    assert checked.returncode == 0 and "find_the_origin: 32 rows, ok" in checked.stdout
    pushed = run("push", str(out), "--repo-id", "my-org/lurch-demo", "--dry-run")
    assert pushed.returncode == 0 and "would upload README.md" in pushed.stdout
    bad_repo = run("push", str(out), "--repo-id", "not a repo", "--dry-run")
    assert bad_repo.returncode == 2 and "repo" in bad_repo.stderr.lower()

    # lm-eval docs read from the materialized folder are the generated instances, byte for byte.
    stored = build_docs("find_the_origin", dataset_path=str(out))["test"]
    generated = build_docs("find_the_origin", max_seq_lengths=[384, 512], num_samples=2,
                           d_values=[-15, -10, -5, -2, 2, 5, 10, 15])["test"]
    assert [r["id"] for r in stored] == [r["id"] for r in generated]
    assert [content_hash(dict(r)) for r in stored] == [content_hash(dict(r)) for r in generated]


def test_graph_config_materializes_validates_and_loads(tmp_path):
    from datasets import load_dataset

    out = tmp_path / "graph"
    sets = ["--set", "context_tokens=[2048]", "--set", "connections=[1,2]", "--set", "num_samples=2"]
    made = run("materialize", "--config", "memory_drift_clique", "--out", str(out), "--quiet", *sets)
    assert made.returncode == 0, made.stderr
    checked = run("validate", str(out), "--quiet")  # schema + the induced-subgraph audit on every row
    assert checked.returncode == 0 and "memory_drift_clique: 6 rows, ok" in checked.stdout, checked.stdout
    card = (out / "README.md").read_text()
    assert "license: apache-2.0" in card and "Memory Drift" in card
    rows = load_dataset(str(out), "memory_drift_clique", split="test")
    task = resolve_task("memory_drift_clique", {"context_tokens": [2048], "connections": [1, 2], "num_samples": 2})
    # 2 samples x 2 densities, then a zero-gold control per sample at the length (issue 28)
    assert [content_hash(dict(r)) for r in rows] == [content_hash(generate_row(task, i)) for i in range(6)]


def test_a_missing_extra_inside_lm_eval_names_the_pip_install(tmp_path):
    """`--model hf` where torch is not installed (a package that refuses to import stands in for it): one line
    with the extra to install, not lm-eval's error."""
    blocked = tmp_path / "torch"
    blocked.mkdir()
    (blocked / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'torch'\", name='torch')\n",
                                         encoding="utf-8")
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", PYTHONPATH=str(tmp_path))
    result = subprocess.run([LURCH, "eval", "--model", "hf", "--model_args", "pretrained=/nonexistent", "--tasks",
                             "find_the_origin", "--limit", "1"], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == ("lurch: error: this command needs 'torch', which is not "
                                                      "installed; allowed: pip install 'lurch-tasks[hf]'")
