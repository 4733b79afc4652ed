"""Scale-out (DESIGN 7): the file plan, shards written by separate processes, the Ray backend, finalize's checks,
and resuming killed runs. Every output is compared byte for byte (SHA-256 of every file) with a one-machine
`lurch materialize` of the same configs."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import datasets
import pytest
from in_process import lurch_in_process

from lurch_tasks.core.cells import cell_at
from lurch_tasks.core.registry import get_family
from lurch_tasks.hub import MaterializeRequest, assign_shards
from lurch_tasks.hub import plan as hub_plan
from lurch_tasks.hub.shards import finalize, remove_own_temporaries, staging_for, write_shard
from lurch_tasks.hub.store import TMP_MARK, Store

CONFIGS = ["find_the_origin_long", "memory_drift_edge"]
# A slice that keeps several files per config (so kills land between files and shards get more than one file)
# at an eighth of the full configs' rows: 12 rows of each config, 3 per file, 4 files each.
SLICE = ["--limit", "12", "--max-rows-per-file", "3"]
FILES = 8
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "RAY_USAGE_STATS_ENABLED": "0"}


def lurch(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lurch_tasks.cli", *args], capture_output=True, text=True, env=ENV,
                          timeout=600, **kwargs)


def lurch_here(*args: str) -> subprocess.CompletedProcess:
    """`lurch` in this process (tests/in_process.py) where a separate process is not the point: the one-machine
    runs, finalize, validate and --resume after a kill. Shards that run at once, runs to kill and the one-line
    errors (their whole stderr) keep their own processes."""
    return lurch_in_process(*args)


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "lurch_tasks.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=ENV, start_new_session=True)


def config_args(configs: list[str] = CONFIGS) -> list[str]:
    return [arg for name in configs for arg in ("--config", name)] + SLICE


def digests(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def one_line_error(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lurch: error: "), result.stderr
    return lines[0]


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict[str, str]:
    """The one-machine run every other way of writing must reproduce."""
    out = tmp_path_factory.mktemp("reference") / "data"
    made = lurch_here("materialize", *config_args(), "--out", str(out), "--quiet")
    assert made.returncode == 0, made.stderr
    files = digests(out)
    assert sum(name.endswith(".parquet") for name in files) == FILES  # 4 files of 3 rows per config
    return files


def staged_files(out: Path) -> list[Path]:
    return sorted((out.parent / f".{out.name}.lurch-shards" / "records").rglob("*.json"))


def live_session(session: int) -> list[int]:
    """Processes of a session that are not zombies (Ray's workers leave the driver's process group, not its
    session)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z" and int(fields[3]) == session:
                found.append(int(entry.name))
    return found


def crash(process: subprocess.Popen) -> None:
    """SIGKILL every process of the run's session, as a machine crash would, and wait until none is left."""
    deadline = time.time() + 60
    while (pids := live_session(process.pid)) and time.time() < deadline:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.1)
    process.wait(timeout=60)
    assert live_session(process.pid) == [], "processes of the killed run survive"


def not_accepted(out: Path, tmp_path: Path) -> None:
    """An unfinished run leaves nothing that `lurch validate` or `load_dataset` would accept."""
    assert lurch_here("validate", str(out), "--quiet").returncode != 0
    for name in CONFIGS:
        with pytest.raises(Exception):  # noqa: B017 - whatever datasets raises, it must not load
            datasets.load_dataset(str(out), name, split="test", cache_dir=str(tmp_path / "hf-cache"))


# ---------------------------------------------------------------- the plan


def test_the_plan_depends_only_on_the_request() -> None:
    request = MaterializeRequest.create(CONFIGS)
    again = MaterializeRequest.create(list(reversed(CONFIGS)))
    assert request.files == again.files and request.digest == again.digest
    for name in CONFIGS:
        files = request.config_files(name)
        assert [f.number for f in files] == list(range(len(files))) == list(range(files[0].count))
        assert files[0].start == 0 and all(a.stop == b.start for a, b in zip(files, files[1:], strict=False))
        assert files[-1].stop == request.task(name).config.size()
        assert max(f.rows for f in files) - min(f.rows for f in files) <= 1
    assert MaterializeRequest.create(CONFIGS, limit=20).digest != request.digest
    assert MaterializeRequest.create(CONFIGS, seed=3).digest != request.digest


def test_number_of_files() -> None:
    target = hub_plan.TARGET_FILE_BYTES
    assert hub_plan.number_of_files(0, 0, 100) == 0
    assert hub_plan.number_of_files(42, target, 100) == 1
    assert hub_plan.number_of_files(42, target + 1, 100) == 2
    assert hub_plan.number_of_files(32, 10, 3) == 11  # max_rows_per_file
    assert hub_plan.number_of_files(1000, 20 * target, 10_000) == 20  # the byte target
    assert hub_plan.number_of_files(3, 20 * target, 10_000) == 3  # never more files than rows


def test_a_file_never_splits_a_recon_case() -> None:
    request = MaterializeRequest.create(["recon_all"])
    per_case = request.task("recon_all").config.block_rows()
    assert per_case == 16 and len(request.files) > 1
    assert all(f.start % per_case == 0 for f in request.files)


@pytest.mark.parametrize("name", ["recon_all", "find_the_origin_long", "memory_drift_edge", "implicit_hop_grid"])
def test_row_sizes_are_each_rows_own_cell_budget(name: str) -> None:
    # The plan reads one token budget per cell, not per row; it must equal the per-row reading it replaces.
    task = MaterializeRequest.create([name]).task(name)
    family = get_family(task.family)
    rows = task.config.size()
    expected = [(family.token_target(cell_at(task.config, i)) or hub_plan.FALLBACK_ROW_TOKENS)
                * hub_plan.BYTES_PER_TOKEN for i in range(rows)]
    assert hub_plan.estimated_row_sizes(task, rows) == expected


@pytest.mark.parametrize("num_shards", [1, 2, 3, 5, 16, 40])
def test_every_file_is_in_exactly_one_shard(num_shards: int) -> None:
    files = MaterializeRequest.create(CONFIGS).files
    shards = assign_shards(files, num_shards)
    assert len(shards) == num_shards
    assert sorted(f.path for shard in shards for f in shard) == sorted(f.path for f in files)
    assert shards == assign_shards(files, num_shards)
    loads = [sum(f.estimated_bytes for f in shard) for shard in shards]
    assert max(loads) - min(loads) <= max(f.estimated_bytes for f in files)  # no shard a file heavier than another


# ---------------------------------------------------------------- shards as separate processes


@pytest.mark.slow
def test_three_shard_processes_write_the_one_machine_bytes(reference, tmp_path) -> None:
    out = tmp_path / "data"
    shards = [start("materialize", *config_args(), "--out", str(out), "--shard", str(k), "--num-shards", "3",
                    "--quiet") for k in range(3)]
    for k, process in enumerate(shards):
        stdout, stderr = process.communicate(timeout=600)
        assert process.returncode == 0, stderr
        assert f"shard {k} of 3: wrote" in stdout
    assert not out.exists()  # nothing in --out before finalize
    not_accepted(out, tmp_path)
    done = lurch_here("materialize", "--finalize", str(out), "--quiet")
    assert done.returncode == 0, done.stderr
    assert digests(out) == reference
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "hf-cache") == ["data"]  # staging removed
    assert lurch_here("validate", str(out), "--quiet").returncode == 0


def test_finalize_names_missing_and_duplicated_shards(tmp_path) -> None:
    out = tmp_path / "data"
    options = ["--config", "memory_drift_edge", "--limit", "12", "--max-rows-per-file", "3", "--out", str(out),
               "--quiet"]  # 4 files of 3 rows
    assert "no sharded run" in one_line_error(lurch("materialize", "--finalize", str(out)))
    for shard in (0, 2):
        assert lurch_here("materialize", *options, "--shard", str(shard), "--num-shards", "3").returncode == 0
    assert "1 of 3 missing: 1;" in one_line_error(lurch("materialize", "--finalize", str(out)))
    assert lurch_here("materialize", *options, "--shard", "1", "--num-shards", "4").returncode == 0
    line = one_line_error(lurch("materialize", "--finalize", str(out)))
    assert "duplicated shards" in line and "[0, 2] of 3; [1] of 4" in line
    staging = tmp_path / ".data.lurch-shards"
    (staging / "shards" / "shard-00001-of-00004.json").unlink()
    other = one_line_error(lurch("materialize", "--config", "memory_drift_edge", "--out", str(out), "--shard", "1",
                                 "--num-shards", "3"))  # no --limit: another request than the staged run
    assert "another request" in other and str(staging) in other
    resumed = lurch_here("materialize", *options, "--shard", "1", "--num-shards", "3", "--resume")
    files = MaterializeRequest.create(["memory_drift_edge"], limit=12, max_rows_per_file=3).files
    shared = {f.path for f in assign_shards(files, 3)[1]} & {f.path for f in assign_shards(files, 4)[1]}
    assert len(shared) == 1  # shard 1 of 4 finished one of shard 1 of 3's files: --resume keeps it
    assert resumed.returncode == 0 and "kept 1 finished earlier" in resumed.stdout
    assert lurch_here("materialize", "--finalize", str(out), "--quiet").returncode == 0
    assert lurch_here("validate", str(out), "--quiet").returncode == 0
    for bad in (["--shard", "3", "--num-shards", "3"], ["--shard", "0"], ["--resume"], ["--address", "auto"]):
        assert one_line_error(lurch("materialize", *options, *bad))
    assert "not allowed with --finalize" in one_line_error(lurch("materialize", "--finalize", str(out), "--config",
                                                                 "x"))


def test_a_shard_removes_only_its_own_temporaries(tmp_path) -> None:
    """Both configs have a test-00003-of-00004.parquet: the shard that owns one of them must leave the other
    shard's half-written temporary of the same name alone (three shard processes lost a file to this)."""
    files = MaterializeRequest.create(CONFIGS, limit=12, max_rows_per_file=3).files
    shards = assign_shards(files, 3)
    mine, theirs = next((a, b) for a in shards[0] for shard in shards[1:] for b in shard
                        if a.name == b.name and a.config != b.config)
    staging = Store.at(str(tmp_path / "staging"))
    for f, who in ((mine, "killed"), (theirs, "live")):
        staging.write_bytes(f"build/{f.config}/{TMP_MARK}{who}-{f.name}", b"x")
    assert remove_own_temporaries(staging, shards[0]) == [f"{TMP_MARK}killed-{mine.name}"]
    assert staging.exists(f"build/{theirs.config}/{TMP_MARK}live-{theirs.name}")


def test_a_killed_shard_resumes_with_the_files_it_finished(tmp_path) -> None:
    out = tmp_path / "data"
    options = [*config_args(["find_the_origin_long"]), "--out", str(out), "--shard", "0", "--num-shards", "1",
               "--quiet"]
    process = start("materialize", *options)
    deadline = time.time() + 120
    while time.time() < deadline and len(staged_files(out)) < 1 and process.poll() is None:
        time.sleep(0.02)
    crash(process)
    finished = len(staged_files(out))
    assert 1 <= finished < 4, "the kill did not land while the shard was writing"
    resumed = lurch_here("materialize", *options, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert f"wrote {4 - finished} file(s), kept {finished} finished earlier" in resumed.stdout
    assert lurch_here("materialize", "--finalize", str(out), "--quiet").returncode == 0
    whole = tmp_path / "whole"
    assert lurch_here("materialize", *config_args(["find_the_origin_long"]), "--out", str(whole),
                 "--quiet").returncode == 0
    assert digests(out) == digests(whole)


def test_an_fsspec_url_gets_the_same_bytes(tmp_path) -> None:
    """Object stores go through fsspec: here its in-memory file system, with three shards and the finalize."""
    url = "memory://lurch-tests/shards/data"
    request = MaterializeRequest.create(["memory_drift_edge"], limit=12)
    for shard in range(3):
        write_shard(request, url, shard, 3, progress=False)
    assert not Store.at(url).exists()
    assert finalize(url, progress=False) == url
    store = Store.at(url)
    paths = [path[len(store.root) + 1:] for path in store.fs.find(store.root)]
    remote = {path: hashlib.sha256(store.read_bytes(path)).hexdigest() for path in sorted(paths)}
    local = tmp_path / "local"
    assert lurch_here("materialize", "--config", "memory_drift_edge", "--limit", "12", "--out", str(local),
                      "--quiet").returncode == 0
    assert remote == digests(local)
    assert not staging_for(store).exists()


# ---------------------------------------------------------------- Ray


@pytest.mark.slow
def test_ray_backend_writes_the_one_machine_bytes(reference, tmp_path) -> None:
    pytest.importorskip("ray")
    out = tmp_path / "data"
    made = lurch("materialize", *config_args(), "--out", str(out), "--backend", "ray")
    assert made.returncode == 0, made.stderr
    assert f"ray: {FILES} shards" in made.stderr  # the progress bar: one task per planned file
    assert digests(out) == reference


def test_ray_in_process_with_a_local_instance(tmp_path) -> None:
    """The Python API on a Ray instance the caller started (ray.init(num_cpus=2)), with fewer shards than files."""
    ray = pytest.importorskip("ray")
    from lurch_tasks.hub.ray_backend import materialize_ray

    request = MaterializeRequest.create(["memory_drift_edge"], limit=12)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        materialize_ray(request, str(tmp_path / "ray"), num_shards=2, progress=False)
        assert ray.is_initialized()  # the caller's instance is left running
    finally:
        ray.shutdown()
    local = tmp_path / "local"
    assert lurch_here("materialize", "--config", "memory_drift_edge", "--limit", "12", "--out", str(local),
                      "--quiet").returncode == 0
    assert digests(tmp_path / "ray") == digests(local)


@pytest.mark.slow
def test_a_killed_ray_run_resumes_only_the_missing_shards(reference, tmp_path) -> None:
    pytest.importorskip("ray")
    out = tmp_path / "data"
    process = start("materialize", *config_args(), "--out", str(out), "--backend", "ray", "--quiet")
    deadline = time.time() + 300
    while time.time() < deadline and len(staged_files(out)) < 2 and process.poll() is None:
        time.sleep(0.02)
    crash(process)  # the driver, Ray's services and its workers, all at once
    finished = {p.stem: p for p in staged_files(out)}
    assert 2 <= len(finished) < FILES, "the kill did not land while Ray was writing"
    assert not out.exists()
    not_accepted(out, tmp_path)
    staging = out.parent / f".{out.name}.lurch-shards" / "build"
    inodes = {p.relative_to(staging).as_posix(): p.stat().st_ino for p in staging.rglob("*.parquet")
              if p.stem in finished}

    resumed = lurch("materialize", *config_args(), "--out", str(out), "--backend", "ray", "--resume")
    assert resumed.returncode == 0, resumed.stderr
    line = next(line for line in resumed.stderr.splitlines() if "resuming" in line)
    complete = int(line.split("resuming: ")[1].split(" of ")[0])
    assert 1 <= complete <= len(finished) and f"{FILES - complete} to write" in line
    assert digests(out) == reference
    kept = {path: (out / path).stat().st_ino for path in inodes}
    assert kept == inodes  # the files finished before the kill were moved into place, not written again


def test_ray_missing_is_one_line(tmp_path) -> None:
    code = ("import sys; sys.modules['ray'] = None; from lurch_tasks.cli import run; "
            f"sys.argv = ['lurch', 'materialize', '--config', 'memory_drift_edge', '--out', {str(tmp_path / 'x')!r}, "
            "'--backend', 'ray']; run()")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=120)
    line = one_line_error(result)
    assert "pip install 'lurch-tasks[ray]'" in line
    assert not (tmp_path / "x").exists() and not (tmp_path / ".x.lurch-shards").exists()


def test_plan_json_records_the_request(tmp_path) -> None:
    out = tmp_path / "data"
    assert lurch_here("materialize", "--config", "memory_drift_edge", "--limit", "8", "--set", "num_samples=2", "--out",
                      str(out), "--shard", "0", "--num-shards", "2", "--quiet").returncode == 0
    stored = json.loads((tmp_path / ".data.lurch-shards" / "plan.json").read_text())
    assert stored["request"]["configs"] == ["memory_drift_edge"] and stored["request"]["limit"] == 8
    assert stored["request"]["overrides"] == {"num_samples": 2}
    assert stored["digest"] == MaterializeRequest.from_json(stored["request"]).digest
