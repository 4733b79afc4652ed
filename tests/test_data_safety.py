"""Users' data is sacred: materialize and generate never replace what they did not write, interrupted runs
leave nothing half-done, workers die with their parent, and Ctrl-C ends with one line and exit 130."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from in_process import lurch_in_process

from lurch_tasks.hub import validate_folder
from lurch_tasks.hub.manifest import JOURNAL_NAME, MANIFEST_NAME

SMALL = ["--set", "context_tokens=[256]", "--set", "num_samples=1", "--set", "d_values=[-5,5]"]
BIG = ["--set", "context_tokens=[8192]", "--set", "num_samples=400"]  # long enough to interrupt


def lurch(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lurch_tasks.cli", *args], capture_output=True, text=True,
                          cwd=cwd)


def materialize(out: Path | str, *configs: str, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    args = ["materialize", "--out", str(out), "--quiet", *SMALL, *extra]
    for config in configs or ("find_the_origin",):
        args += ["--config", config]
    return lurch(*args)


def materialize_here(out: Path | str, *configs: str) -> subprocess.CompletedProcess:
    """``materialize`` in this process (tests/in_process.py), where a process of its own is not the point."""
    args = ["materialize", "--out", str(out), "--quiet", *SMALL]
    for config in configs or ("find_the_origin",):
        args += ["--config", config]
    return lurch_in_process(*args)


def one_line_error(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


# --- never touch a user's files -------------------------------------------------------------------------


def test_a_users_readme_is_never_replaced(tmp_path):
    out = tmp_path / "data"
    out.mkdir()
    (out / "README.md").write_text("my notes\n", encoding="utf-8")
    line = one_line_error(materialize(out))
    assert "README.md" in line and "--overwrite" in line
    assert (out / "README.md").read_text(encoding="utf-8") == "my notes\n"
    assert sorted(p.name for p in out.iterdir()) == ["README.md"]
    forced = materialize(out, extra=("--overwrite",))
    assert forced.returncode == 0, forced.stderr
    assert (out / MANIFEST_NAME).is_file()


def test_a_user_folder_named_like_a_config_is_never_deleted(tmp_path):
    out = tmp_path / "data"
    (out / "find_the_origin").mkdir(parents=True)
    (out / "find_the_origin" / "notes.txt").write_text("keep me", encoding="utf-8")
    line = one_line_error(materialize(out))
    assert "find_the_origin/" in line
    assert (out / "find_the_origin" / "notes.txt").read_text(encoding="utf-8") == "keep me"


def test_a_file_added_inside_an_owned_config_makes_it_the_users(tmp_path):
    out = tmp_path / "data"
    assert materialize(out).returncode == 0
    (out / "find_the_origin" / "my-analysis.csv").write_text("a,b\n", encoding="utf-8")
    assert "find_the_origin/" in one_line_error(materialize(out))
    assert (out / "find_the_origin" / "my-analysis.csv").is_file()


def test_rerun_replaces_only_its_own_output_and_keeps_other_files(tmp_path):
    out = tmp_path / "data"
    assert materialize(out).returncode == 0
    (out / "unrelated.txt").write_text("mine", encoding="utf-8")
    again = materialize(out, "find_the_origin", "find_the_origin_random")
    assert again.returncode == 0, again.stderr
    assert (out / "unrelated.txt").read_text(encoding="utf-8") == "mine"
    manifest = json.loads((out / MANIFEST_NAME).read_text(encoding="utf-8"))
    assert sorted(manifest["configs"]) == ["find_the_origin", "find_the_origin_random"]
    assert all(r["problem_count"] == 0 for r in validate_folder(out, progress=False).values())


def test_an_empty_out_is_refused_and_the_current_folder_untouched(tmp_path):
    (tmp_path / "README.md").write_text("project readme\n", encoding="utf-8")
    result = lurch("materialize", "--config", "find_the_origin", "--out", "", "--quiet", *SMALL, cwd=tmp_path)
    assert "out: ''" in one_line_error(result)
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == "project readme\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md"]


def test_out_below_a_file_is_one_line(tmp_path):
    (tmp_path / "file").write_text("x", encoding="utf-8")
    assert "is a file" in one_line_error(materialize(tmp_path / "file" / "child"))
    assert "is a file" in one_line_error(materialize(tmp_path / "file"))


# --- interrupted renames are completed by the next run -------------------------------------------------


KILL_DURING_RENAME = textwrap.dedent("""
    import os, sys
    from lurch_tasks.hub import build
    real_replace, calls = os.replace, []
    def replace_then_die(src, dst):
        real_replace(src, dst)
        calls.append(dst)
        if len(calls) == int(sys.argv[2]):
            os._exit(137)  # as if killed -9 right after this rename
    build.os.replace = replace_then_die
    build.materialize(["find_the_origin", "find_the_origin_random"], sys.argv[1], progress=False,
                      overrides={"context_tokens": [256], "num_samples": 1, "d_values": [-5, 5, 7]})
""")


# os.replace calls of a replacing run: 1 the staged manifest, 2 the journal, 3-6 old -> trash and new -> place
# for each of the two configs, 7 the card, 8 the manifest.
@pytest.fixture(scope="session")
def earlier_output(tmp_path_factory) -> Path:
    """The consistent earlier output each kill below replaces: written once per test process, copied per test
    (session scope: the file's tests stay spread over the workers)."""
    out = tmp_path_factory.mktemp("earlier") / "data"
    done = materialize_here(out, "find_the_origin", "find_the_origin_random")
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.parametrize("renames_before_kill", [1, 2, 3, 4, 5, 6, 7, 8])
def test_a_kill_during_the_final_renames_is_completed_by_the_next_run(tmp_path, earlier_output, renames_before_kill):
    out = tmp_path / "data"
    shutil.copytree(earlier_output, out)
    killed = subprocess.run([sys.executable, "-c", KILL_DURING_RENAME, str(out), str(renames_before_kill)],
                            capture_output=True, text=True)
    assert killed.returncode == 137, killed.stderr
    if renames_before_kill >= 2:
        assert (out / JOURNAL_NAME).is_file()  # the replacement is visibly unfinished ...
        pending = validate_folder(out, progress=False)
        assert any(JOURNAL_NAME in p for p in pending["(folder)"]["problems"])  # ... and validate says so
    else:  # killed while staging: the folder is still the earlier, consistent output
        assert all(r["problem_count"] == 0 for r in validate_folder(out, progress=False).values())
    resumed = materialize_here(out, "find_the_origin")
    assert resumed.returncode == 0, resumed.stderr
    assert not (out / JOURNAL_NAME).exists()
    summary = validate_folder(out, progress=False)
    assert sorted(summary) == ["find_the_origin", "find_the_origin_random"]
    assert all(r["problem_count"] == 0 for r in summary.values()), summary
    # Once the journal was written, the killed run's find_the_origin_random (d in -5, 5, 7: 3 rows) is
    # completed, not lost; before that, the earlier 2-row version stays.
    assert summary["find_the_origin_random"]["rows"] == (3 if renames_before_kill >= 2 else 2)
    assert not list(tmp_path.glob(".data.tmp-*"))


# --- processes: orphans, Ctrl-C, stale staging -----------------------------------------------------------


def _children(pid: int) -> list[int]:
    result = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(p) for p in result.stdout.split()]


def _session_processes(sid: int) -> list[int]:
    result = subprocess.run(["ps", "-e", "-o", "pid=,sid="], capture_output=True, text=True)
    return [int(pid) for pid, s in (line.split() for line in result.stdout.splitlines()) if int(s) == sid]


_FAULTHANDLER_ENV = {**os.environ, "PYTHONFAULTHANDLER": "1"}


def _stderr_after_interrupt(process: subprocess.Popen) -> str:
    """The interrupted run's stderr; if it hangs, its threads' stacks (faulthandler on SIGABRT) fail the test."""
    try:
        return process.communicate(timeout=60)[1]
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGABRT)
        _, stderr = process.communicate(timeout=30)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        pytest.fail(f"no exit 60 s after Ctrl-C; stacks:\n{stderr[-6000:]}")


def _start_big_materialize(out: Path) -> subprocess.Popen:
    args = [sys.executable, "-m", "lurch_tasks.cli", "materialize", "--config", "find_the_origin", "--out",
            str(out), "--num-proc", "2", "--quiet", *BIG]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_FAULTHANDLER_ENV,
                               start_new_session=True)
    deadline = time.time() + 90
    while time.time() < deadline and len(_children(process.pid)) < 2:
        time.sleep(0.2)
    assert len(_children(process.pid)) >= 2, "the worker pool never started"
    time.sleep(1.0)  # workers are generating rows now
    return process


@pytest.mark.slow
def test_workers_die_with_a_killed_parent_and_the_next_run_removes_its_staging(tmp_path):
    out = tmp_path / "data"
    process = _start_big_materialize(out)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    deadline = time.time() + 10
    while time.time() < deadline and _session_processes(process.pid):
        time.sleep(0.2)
    assert _session_processes(process.pid) == []  # no orphaned workers
    assert list(tmp_path.glob(".data.tmp-*"))  # the killed run's staging folder ...
    assert materialize(out).returncode == 0
    assert not list(tmp_path.glob(".data.tmp-*"))  # ... is removed by the next run


@pytest.mark.slow
def test_ctrl_c_with_two_workers_is_one_line_and_exit_130(tmp_path):
    out = tmp_path / "data"
    process = _start_big_materialize(out)
    os.killpg(process.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole foreground group
    stderr = _stderr_after_interrupt(process)
    assert process.returncode == 130, stderr
    assert stderr.strip().splitlines()[-1] == "lurch: interrupted"
    assert "Traceback" not in stderr, stderr
    assert not out.exists() and not list(tmp_path.glob(".data.tmp-*"))
    deadline = time.time() + 10
    while time.time() < deadline and _session_processes(process.pid):
        time.sleep(0.2)
    assert _session_processes(process.pid) == []


# --- generate --out ---------------------------------------------------------------------------------------


def test_generate_out_never_truncates_and_leaves_nothing_when_interrupted(tmp_path):
    target = tmp_path / "rows.jsonl"
    target.write_text("precious\n", encoding="utf-8")
    refused = lurch("generate", "--config", "find_the_origin", "--n", "2", "--out", str(target))
    assert "already exists" in one_line_error(refused)
    assert target.read_text(encoding="utf-8") == "precious\n"

    fresh = tmp_path / "fresh.jsonl"
    args = [sys.executable, "-m", "lurch_tasks.cli", "generate", "--config", "find_the_origin_long", "--n", "112",
            "--set", "context_tokens=[131072]", "--out", str(fresh)]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_FAULTHANDLER_ENV,
                               start_new_session=True)
    deadline = time.time() + 90  # interrupt once rows are being written (the temp file exists), not at import
    while time.time() < deadline and not list(tmp_path.glob(".fresh.jsonl.*.tmp")) and process.poll() is None:
        time.sleep(0.05)
    assert process.poll() is None and list(tmp_path.glob(".fresh.jsonl.*.tmp")), "generation never started writing"
    os.killpg(process.pid, signal.SIGINT)
    stderr = _stderr_after_interrupt(process)
    assert process.returncode == 130 and "Traceback" not in stderr, stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.jsonl"]  # no partial file, no temp file

    done = lurch("generate", "--config", "find_the_origin", "--n", "2", "--out", str(target), "--overwrite")
    assert done.returncode == 0, done.stderr
    assert len(target.read_text(encoding="utf-8").splitlines()) == 2


def test_generate_out_errors_are_one_line(tmp_path):
    (tmp_path / "file").write_text("x", encoding="utf-8")
    for out in ("", str(tmp_path), str(tmp_path / "file" / "child.jsonl"), str(tmp_path / "missing" / "a.jsonl")):
        line = one_line_error(lurch("generate", "--config", "find_the_origin", "--n", "1", "--out", out))
        assert line.startswith("lurch: error: --out"), line


# --- evaluation from a folder ------------------------------------------------------------------------------


def test_eval_from_a_folder_checks_the_manifest_and_never_reads_a_stale_cache(tmp_path, capsys):
    from lurch_tasks.harness.tasks import build_docs

    out = tmp_path / "data"
    assert materialize(out).returncode == 0
    docs = build_docs("find_the_origin", dataset_path=str(out))["test"]
    assert len(docs) == 2
    assert "other knobs" in capsys.readouterr().err  # the folder was built with overrides: say so
    assert materialize(out, extra=("--set", "d_values=[-5,5,7]")).returncode == 0  # new rows, same paths
    assert len(build_docs("find_the_origin", dataset_path=str(out))["test"]) == 3  # not the cached 2
    first = sorted((out / "find_the_origin").glob("*.parquet"))[0]
    first.write_bytes(first.read_bytes() + b"\0")  # the rows were rewritten in place
    with pytest.raises(ValueError, match="differs from lurch-manifest.json"):
        build_docs("find_the_origin", dataset_path=str(out))
    (out / MANIFEST_NAME).unlink()
    with pytest.raises(ValueError, match="has no lurch-manifest.json"):
        build_docs("find_the_origin", dataset_path=str(out))


@pytest.mark.slow
def test_a_folder_built_with_other_knobs_is_reported_under_its_own_name(tmp_path):
    out = tmp_path / "data"
    assert materialize(out).returncode == 0
    manifest = json.loads((out / MANIFEST_NAME).read_text(encoding="utf-8"))
    expected = f"find_the_origin__{manifest['configs']['find_the_origin']['config_hash'][:12]}"
    result = lurch("eval", "--model", "lurch-solver", "--tasks", "find_the_origin", "--metadata",
                   json.dumps({"dataset_path": str(out)}), cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    table_rows = [line for line in result.stdout.splitlines() if line.startswith("|")]
    assert any(expected in line for line in table_rows), result.stdout
    assert not any(line.startswith("|find_the_origin ") for line in table_rows)


def test_a_ctrl_c_swallowed_by_a_finalizer_is_delivered_again(tmp_path):
    """Seen in CI: the KeyboardInterrupt of a Ctrl-C surfaced inside an import lock's weakref callback, where
    Python ignores exceptions, and `lurch generate` finished with exit 0. The CLI re-delivers such an interrupt."""
    script = tmp_path / "swallow.py"
    script.write_text(textwrap.dedent("""
        import os, signal, weakref
        from lurch_tasks import cli
        cli.install_interrupt_handling()
        class Thing:
            pass
        thing = Thing()
        def callback(ref):
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(10_000):
                pass  # the handler runs in here, where exceptions are only reported
        ref = weakref.ref(thing, callback)
        try:
            del thing
            for _ in range(50_000_000):
                pass
            print("lost")
        except KeyboardInterrupt:
            print("delivered")
    """), encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "delivered" and "Traceback" not in done.stderr, (done.stdout, done.stderr)
