"""Writers trust nothing on disk and write one at a time (issue 26, items 1, 2 and 13).

- A journal, manifest, plan.json or record found on disk is untrusted input: a planted one is refused with one line
  and nothing is touched (a journal naming any folder holding ``build/`` used to make materialize delete it).
- One writer per output folder (``core.locks``): a second materialize waits and builds on the first, so both configs
  end up in the manifest; ``lurch validate`` waits for a writer; two processes on one shard do not both write.
- Disk full and read-only outputs end in one line, with the output and its parent as they were.

Every process here is a real ``lurch`` CLI run (small configs: a trial takes seconds)."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from lurch_tasks.cli import main
from lurch_tasks.core import locks
from lurch_tasks.hub.manifest import JOURNAL_NAME, MANIFEST_NAME, STAGING_MARKER

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "RAY_USAGE_STATS_ENABLED": "0"}
SMALL = ["--limit", "4", "--quiet"]


def lurch(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lurch_tasks.cli", *args], capture_output=True, text=True,
                          env=env or ENV, timeout=300)


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "lurch_tasks.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=ENV)


def materialize(out: Path, *configs: str, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    return lurch("materialize", *[a for c in configs for a in ("--config", c)], "--out", str(out), *SMALL, *extra)


def one_line(result: subprocess.CompletedProcess, code: int = 2) -> str:
    assert result.returncode == code, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lurch: error: ") and "Traceback" not in result.stderr, \
        result.stderr
    return lines[0]


def refused(capsys, *argv: str) -> str:
    """``lurch ARGV`` in this process (the checks need no separate process): exit 2 with one line."""
    code = main(list(argv))
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("lurch: error: "), (code, err)
    return lines[0]


def succeeded(capsys, *argv: str) -> str:
    code = main(list(argv))
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


def refused_materialize(capsys, out: Path, *configs: str, extra: tuple[str, ...] = ()) -> str:
    return refused(capsys, "materialize", *[a for c in configs for a in ("--config", c)], "--out", str(out), *SMALL,
                   *extra)


def tree(folder: Path) -> dict[str, str]:
    """Every entry below ``folder`` (files by SHA-256, links by target, folders as such)."""
    found = {}
    for path in sorted(folder.rglob("*")):
        key = path.relative_to(folder).as_posix()
        if path.is_symlink():
            found[key] = "-> " + os.readlink(path)
        elif path.is_file():
            found[key] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            found[key] = "/"
    return found


def configs_of(out: Path) -> list[str]:
    return sorted(json.loads((out / MANIFEST_NAME).read_text(encoding="utf-8"))["configs"])


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """A materialized folder (memory_drift_edge, 4 rows) that tests copy."""
    out = tmp_path_factory.mktemp("made") / "out"
    result = materialize(out, "memory_drift_edge")
    assert result.returncode == 0, result.stderr
    return out


def copy_of(made: Path, tmp_path: Path) -> Path:
    out = tmp_path / "out"
    subprocess.run(["cp", "-a", str(made), str(out)], check=True)
    return out


def victim(tmp_path: Path) -> Path:
    """A user's folder that looks like a staging folder (it holds ``build/``)."""
    folder = tmp_path / "victim"
    (folder / "build" / "memory_drift_edge").mkdir(parents=True)
    (folder / "build" / "memory_drift_edge" / "thesis.tex").write_text("years of work", encoding="utf-8")
    (folder / "notes.txt").write_text("keep me", encoding="utf-8")
    return folder


# ---------------------------------------------------------------- item 1: a planted journal, manifest or plan


@pytest.mark.parametrize("staging", ["victim", "../victim", "out/../victim", "victim/.out.tmp-x"])
def test_a_planted_journal_naming_a_users_folder_deletes_nothing(capsys, made, tmp_path, staging):
    out, folder = copy_of(made, tmp_path), victim(tmp_path)
    named = str(tmp_path / staging) if staging != "victim" else str(folder)
    (out / JOURNAL_NAME).write_text(json.dumps({"staging": named, "names": ["memory_drift_edge"]}), encoding="utf-8")
    before_out, before_victim = tree(out), tree(folder)
    line = refused_materialize(capsys, out, "find_the_origin")
    assert JOURNAL_NAME in line and "staging folder" in line
    assert tree(folder) == before_victim and tree(out) == before_out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "victim"]  # no staging folder or lock left


@pytest.mark.parametrize("name", ["../victim", "/tmp", "memory_drift_edge/../../victim", ".", "", 7, "a\\..\\b"])
def test_a_journal_naming_a_path_instead_of_a_config_is_refused(capsys, made, tmp_path, name):
    out, folder = copy_of(made, tmp_path), victim(tmp_path)
    staging = tmp_path / ".out.tmp-planted"  # a real-looking staging folder of a killed run
    (staging / "build").mkdir(parents=True)
    (staging / STAGING_MARKER).write_text("999999999", encoding="ascii")
    (out / JOURNAL_NAME).write_text(json.dumps({"staging": str(staging), "names": [name]}), encoding="utf-8")
    before = tree(tmp_path)
    line = refused_materialize(capsys, out, "find_the_origin")
    assert JOURNAL_NAME in line
    assert tree(tmp_path) == before and (folder / "notes.txt").is_file()


def test_a_journal_naming_a_config_the_run_did_not_write_moves_nothing(capsys, made, tmp_path):
    """The journal may name only configs of the interrupted run's manifest: not the user's own folder in --out."""
    out = copy_of(made, tmp_path)
    (out / "precious").mkdir()
    (out / "precious" / "data.csv").write_text("a,b\n", encoding="utf-8")
    staging = tmp_path / ".out.tmp-planted"
    (staging / "build" / "precious").mkdir(parents=True)
    (staging / STAGING_MARKER).write_text("999999999", encoding="ascii")
    (out / JOURNAL_NAME).write_text(json.dumps({"staging": str(staging), "names": ["precious"]}), encoding="utf-8")
    before = tree(tmp_path)
    line = refused_materialize(capsys, out, "find_the_origin")
    assert "'precious'" in line and "does not list" in line
    assert tree(tmp_path) == before


def test_a_symlinked_config_folder_is_refused_and_its_target_kept(capsys, made, tmp_path):
    out, folder = copy_of(made, tmp_path), tmp_path / "elsewhere"
    os.rename(out / "memory_drift_edge", folder)  # the config now lives outside; --out holds a link to it
    os.symlink(folder, out / "memory_drift_edge")
    before = tree(tmp_path)
    for extra in ((), ("--overwrite",)):
        line = refused_materialize(capsys, out, "memory_drift_edge", extra=extra)
        assert "symbolic link" in line and "memory_drift_edge" in line
        assert tree(tmp_path) == before
    line = refused_materialize(capsys, out, "find_the_origin")  # keeping it would read files outside the folder
    assert "symbolic link" in line and tree(tmp_path) == before


@pytest.mark.parametrize("listed", ["../victim/notes.txt", "/etc/passwd", "find_the_origin/x.parquet",
                                    "memory_drift_edge/../../victim/notes.txt"])
def test_a_manifest_listing_files_outside_the_folder_is_refused(capsys, made, tmp_path, listed):
    out, folder = copy_of(made, tmp_path), victim(tmp_path)
    manifest = json.loads((out / MANIFEST_NAME).read_text(encoding="utf-8"))
    manifest["configs"]["memory_drift_edge"]["files"][listed] = "0" * 64
    (out / MANIFEST_NAME).write_text(json.dumps(manifest), encoding="utf-8")
    before = tree(tmp_path)
    for extra in ((), ("--overwrite",)):
        line = refused_materialize(capsys, out, "memory_drift_edge", extra=extra)
        assert MANIFEST_NAME in line and repr(listed) in line
        assert tree(tmp_path) == before and (folder / "notes.txt").is_file()


@pytest.mark.parametrize("plan", [[], {"request": []}, {"request": {"configs": 5}, "digest": "x"}, {"digest": "x"}])
def test_a_planted_plan_json_is_one_line(capsys, tmp_path, plan):
    out = tmp_path / "out"
    staging = tmp_path / ".out.lurch-shards"
    staging.mkdir()
    (staging / "plan.json").write_text(json.dumps(plan), encoding="utf-8")
    line = refused(capsys, "materialize", "--finalize", str(out), "--quiet")
    assert "plan.json" in line or "another request" in line or "no sharded run" in line
    assert not out.exists()


def test_planted_records_and_markers_are_not_trusted(capsys, tmp_path):
    out = tmp_path / "out"
    options = ["--config", "memory_drift_edge", "--limit", "4", "--max-rows-per-file", "2", "--out", str(out),
               "--quiet"]
    for shard in (0, 1):
        assert succeeded(capsys, "materialize", *options, "--shard", str(shard), "--num-shards", "2")
    staging = tmp_path / ".out.lurch-shards"
    for record in (staging / "records").rglob("*.json"):
        record.write_text(json.dumps({"path": "../../victim", "bogus": 1}), encoding="utf-8")
    (staging / "shards" / "shard-00001-of-00002.json").write_text("[1, 2]", encoding="utf-8")
    assert "shard 1 of 2" in refused(capsys, "materialize", "--finalize", str(out), "--quiet")
    assert "wrote 1 file(s)" in succeeded(capsys, "materialize", *options, "--shard", "1", "--num-shards", "2",
                                          "--resume")  # the planted record is no record: its file is written again
    line = refused(capsys, "materialize", "--finalize", str(out), "--quiet")  # the record, the field, what to do
    assert "records/memory_drift_edge/test-" in line and "field 'bogus'" in line
    assert "shard 0 of 2 with --resume" in line
    assert succeeded(capsys, "materialize", *options, "--shard", "0", "--num-shards", "2", "--resume")
    assert succeeded(capsys, "materialize", "--finalize", str(out), "--quiet")
    assert "memory_drift_edge: 4 rows, ok" in succeeded(capsys, "validate", str(out), "--quiet")


# ---------------------------------------------------------------- item 2: one writer at a time


HOLD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from lurch_tasks.core import locks
    with locks.writing(Path(sys.argv[1])):
        print("held", flush=True)
        time.sleep(600)
""")


def first_stderr_line(process: subprocess.Popen) -> str:
    assert process.stderr is not None
    return process.stderr.readline()


def finish(process: subprocess.Popen) -> tuple[int, str]:
    _, rest = process.communicate(timeout=300)
    return process.returncode, rest


def test_two_materializes_into_one_out_both_land_in_the_manifest(tmp_path):
    """Deterministic contention: this test holds the output's lock, both runs queue behind it, then run in turn."""
    out = tmp_path / "out"
    with locks.writing(out):
        runs = [start("materialize", "--config", name, "--out", str(out), *SMALL)
                for name in ("memory_drift_edge", "find_the_origin")]
        for run in runs:  # each says once, on stderr, whom it waits for
            assert first_stderr_line(run) == f"lurch: waiting for PID {os.getpid()}, which is writing {str(out)!r}\n"
    for run in runs:
        code, rest = finish(run)
        assert code == 0, rest
        assert "waiting" not in rest  # once
    assert configs_of(out) == ["find_the_origin", "memory_drift_edge"]
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "config_name: find_the_origin" in card and "config_name: memory_drift_edge" in card
    assert lurch("validate", str(out), "--quiet").returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no lock file or staging left


def test_two_materializes_started_together(tmp_path):
    """The race as users hit it: two processes started at once (whoever locks first)."""
    out = tmp_path / "out"
    runs = [start("materialize", "--config", name, "--out", str(out), *SMALL)
            for name in ("memory_drift_edge", "find_the_origin")]
    for run in runs:
        code, stderr = finish(run)
        assert code == 0, stderr
    assert configs_of(out) == ["find_the_origin", "memory_drift_edge"]
    assert lurch("validate", str(out), "--quiet").returncode == 0


def test_a_killed_holder_leaves_no_stale_lock(tmp_path):
    out = tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdout=subprocess.PIPE, text=True, env=ENV)
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    assert locks.holder(locks.lock_path(out)) == holder.pid
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    result = materialize(out, "memory_drift_edge")
    assert result.returncode == 0 and "waiting" not in result.stderr, result.stderr
    assert not locks.lock_path(out).exists()


def test_validate_waits_for_a_writer_and_never_sees_a_half_replaced_folder(made, tmp_path):
    out = copy_of(made, tmp_path)
    with locks.writing(out):  # as a materialize does between its renames: the folder is half-replaced
        os.rename(out / "memory_drift_edge", tmp_path / "moved-away")
        validate = start("validate", str(out), "--quiet")
        assert first_stderr_line(validate) == f"lurch: waiting for PID {os.getpid()}, which is writing {str(out)!r}\n"
        os.rename(tmp_path / "moved-away", out / "memory_drift_edge")
    stdout, stderr = validate.communicate(timeout=300)
    assert validate.returncode == 0 and "memory_drift_edge: 4 rows, ok" in stdout, (stdout, stderr)


def test_materialize_and_validate_at_once_see_a_whole_folder(made, tmp_path):
    """A replacing run (4 -> 6 rows) and validate started together: validate sees the old or the new folder."""
    out = copy_of(made, tmp_path)
    writer = start("materialize", "--config", "memory_drift_edge", "--out", str(out), "--limit", "6", "--quiet")
    reader = start("validate", str(out), "--quiet")
    stdout, stderr = reader.communicate(timeout=300)
    assert reader.returncode == 0 and stdout.startswith("memory_drift_edge: "), (stdout, stderr)
    assert finish(writer)[0] == 0
    assert lurch("validate", str(out), "--quiet").stdout.startswith("memory_drift_edge: 6 rows, ok")


SHARD = ["--config", "memory_drift_edge", "--limit", "4", "--max-rows-per-file", "2", "--quiet"]


def test_two_finalizes_of_one_sharded_run(capsys, tmp_path):
    out = tmp_path / "out"
    for shard in (0, 1):
        assert succeeded(capsys, "materialize", *SHARD, "--out", str(out), "--shard", str(shard), "--num-shards", "2")
    with locks.writing(out):
        runs = [start("materialize", "--finalize", str(out), "--quiet") for _ in range(2)]
        for run in runs:
            assert first_stderr_line(run).startswith(f"lurch: waiting for PID {os.getpid()}")
    results = sorted(finish(run) for run in runs)
    assert results[0][0] == 0, results  # one finalizes; the other finds the run finalized and says so in one line
    assert results[1][0] == 0 or (results[1][0] == 2 and "no sharded run to finalize" in results[1][1]), results
    assert configs_of(out) == ["memory_drift_edge"]
    assert "memory_drift_edge: 4 rows, ok" in succeeded(capsys, "validate", str(out), "--quiet")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_two_processes_on_one_shard(capsys, tmp_path):
    """flock locks conflict between two opens of the file even in one process: this test holds a shard's lock as a
    running `--shard 0` process would, and runs the CLI in-process."""
    out = tmp_path / "out"
    lock = tmp_path / ".out.lurch-shards" / "locks" / "shard-00000-of-00002.lock"
    with locks.exclusive_or_fail(lock, "test"):
        line = refused(capsys, "materialize", *SHARD, "--out", str(out), "--shard", "0", "--num-shards", "2")
        assert f"shard 0 of 2 of {str(out)!r} is being written by PID {os.getpid()}" in line
        assert succeeded(capsys, "materialize", *SHARD, "--out", str(out), "--shard", "1", "--num-shards", "2")
    assert succeeded(capsys, "materialize", *SHARD, "--out", str(out), "--shard", "0", "--num-shards", "2")
    with locks.exclusive_or_fail(lock, "test"):  # a shard still writing: finalize refuses, naming it
        line = refused(capsys, "materialize", "--finalize", str(out), "--quiet")
        assert f"shard-00000-of-00002 is still being written by PID {os.getpid()}" in line
    assert succeeded(capsys, "materialize", "--finalize", str(out), "--quiet")
    assert "memory_drift_edge: 4 rows, ok" in succeeded(capsys, "validate", str(out), "--quiet")


# -------------------------------------------------- item 13: a killed Ray driver, full or read-only disks


def session_processes(session: int) -> list[str]:
    """Names of the live (not zombie) processes of a session; Ray's leave the driver's process group, not its
    session."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if fields[0] != "Z" and int(fields[3]) == session:
                found.append(stat.split("(", 1)[1].rsplit(")", 1)[0])
    return found


@pytest.mark.slow
def test_the_ray_instance_dies_with_a_sigkilled_driver(tmp_path):
    """Before: gcs_server and raylet died with the driver, but Ray's dashboard and runtime-env agents lived 60-64 s
    longer (they retry the dead GCS); a watchdog now kills the instance the driver started."""
    pytest.importorskip("ray")
    out = tmp_path / "data"
    driver = subprocess.Popen([sys.executable, "-m", "lurch_tasks.cli", "materialize", "--config",
                               "find_the_origin_long", "--out", str(out), "--backend", "ray", "--quiet"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV, start_new_session=True)
    build = tmp_path / ".data.lurch-shards" / "build"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and driver.poll() is None and not any(build.rglob("*")):
        time.sleep(0.05)
    assert driver.poll() is None, "the run ended before the kill"
    assert any(name.startswith("ray::") for name in session_processes(driver.pid))
    os.kill(driver.pid, signal.SIGKILL)
    driver.wait()
    deadline = time.monotonic() + 30  # a liveness bound, far from both the fix (~1 s) and the bug (60 s and more)
    while time.monotonic() < deadline and session_processes(driver.pid):
        time.sleep(0.2)
    left = session_processes(driver.pid)
    for pid in [int(e.name) for e in Path("/proc").iterdir() if e.name.isdigit()] if left else []:
        try:  # do not leave them to the next test
            if int((Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[3]) == driver.pid:
                os.kill(pid, signal.SIGKILL)
        except (OSError, ValueError):
            pass
    assert left == [], f"processes of the killed driver's Ray instance still alive after 30 s: {left}"


@pytest.fixture
def small_disk(tmp_path):
    """A real 400 KiB file system (tmpfs; needs root, as on the CI box), unmounted afterwards."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", str(disk)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def failed_with(capsys, code: int, *argv: str) -> str:
    result = main(list(argv))
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert result == code and len(lines) == 1 and lines[0].startswith("lurch: error: "), (result, err)
    return lines[0]


def fill(disk: Path, keep_kib: int) -> None:
    """Leave ``keep_kib`` KiB free on ``disk`` (a filler file, as other programs' files would)."""
    (disk / "filler").unlink(missing_ok=True)
    free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
    with open(disk / "filler", "wb") as handle:
        handle.write(b"\0" * max(0, free - keep_kib * 1024))


def test_a_full_disk_is_one_line_and_leaves_the_output_as_it_was(capsys, small_disk):
    out = small_disk / "out"
    assert succeeded(capsys, "materialize", "--config", "memory_drift_edge", "--out", str(out), *SMALL)
    before = tree(out)
    for keep in (48, 16, 4, 0):  # disk full while writing the Parquet files, the card, the journal, the lock
        fill(small_disk, keep)
        line = failed_with(capsys, 1, "materialize", "--config", "memory_drift_edge", "--config", "find_the_origin",
                           "--out", str(out), *SMALL, "--set", "num_samples=2")
        assert "(ENOSPC)" in line, line
        assert tree(out) == before
        assert sorted(p.name for p in small_disk.iterdir()) == ["filler", "out"]  # no staging folder, no lock
    (small_disk / "filler").unlink()
    assert "memory_drift_edge: 4 rows, ok" in succeeded(capsys, "validate", str(out), "--quiet")


def test_a_read_only_output_is_one_line_and_left_as_it_was(capsys, small_disk):
    out = small_disk / "out"
    assert succeeded(capsys, "materialize", "--config", "memory_drift_edge", "--out", str(out), *SMALL)
    before = tree(out)
    subprocess.run(["mount", "--bind", str(out), str(out)], check=True)
    try:  # only the output folder is read-only: staging beside it works, the renames into it do not
        subprocess.run(["mount", "-o", "remount,ro,bind", str(out)], check=True)
        for extra in ((), ("--overwrite", "--set", "num_samples=2")):
            line = failed_with(capsys, 1, "materialize", "--config", "memory_drift_edge", "--config",
                               "find_the_origin", "--out", str(out), *SMALL, *extra)
            assert "(EROFS)" in line and tree(out) == before
        assert sorted(p.name for p in small_disk.iterdir()) == ["out"]
    finally:
        subprocess.run(["umount", str(out)], check=False)
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)  # now the whole disk
    line = failed_with(capsys, 1, "materialize", "--config", "find_the_origin", "--out", str(out), *SMALL)
    assert "(EROFS)" in line and tree(out) == before
    assert "memory_drift_edge: 4 rows, ok" in succeeded(capsys, "validate", str(out), "--quiet")  # no lock needed
