"""Leaderboard submissions as hostile input (issue 26, items 4-8 and 10), on a real small submission (`lurch eval
--model lurch-solver --log_samples`, four tasks, --limit 2): archive bombs, corrupt and unsupported archives, planted
task names, JSON of any shape (also fuzzed with hypothesis) each end as one-line reasons for that submission; a board
is still built from the valid ones, with a model's (name, revision) as its identity everywhere and every submitted text
written inert; the doc cache cannot be edited into vouching for a tampered doc."""

from __future__ import annotations

import dataclasses
import io
import json
import lzma
import os
import re
import shutil
import struct
import tarfile
import tempfile
import zipfile
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_leaderboard import SUBMISSION, run

from lurch_tasks.core.registry import get_task
from lurch_tasks.harness import doc_cache
from lurch_tasks.leaderboard import submission as submission_module
from lurch_tasks.leaderboard.build import build, standard_key
from lurch_tasks.leaderboard.validate import task_problem, validate

pytestmark = pytest.mark.slow

TASKS = ["find_the_origin", "find_the_origin_random", "memory_drift_clique", "memory_drift_edge"]
ESC = "\x1b"


@pytest.fixture(scope="module")
def valid(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("hostile") / "valid"
    done = run("eval", "--model", "lurch-solver", "--tasks", ",".join(TASKS), "--limit", "2", "--log_samples",
               "--output_path", str(folder))
    assert done.returncode == 0, done.stderr[-3000:]
    (folder / "submission.json").write_text(json.dumps({**SUBMISSION, "tasks": TASKS}))
    return folder


def copy(valid: Path, tmp_path: Path, name: str = "copy") -> Path:
    target = tmp_path / name
    shutil.copytree(valid, target)
    return target


def samples(folder: Path, task: str) -> Path:
    return next(folder.rglob(f"samples_{task}_2*.jsonl"))


def results(folder: Path) -> Path:
    return next(folder.rglob("results_*.json"))


def edit_record(path: Path, edit, line: int = 0) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[line])
    edit(record)
    lines[line] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def edit_results(folder: Path, edit) -> None:
    document = json.loads(results(folder).read_text())
    results(folder).write_text(json.dumps(edit(document) or document))


def one_line_reasons(problems: tuple[str, ...]) -> None:
    assert problems and all(isinstance(p, str) and p.isprintable() for p in problems), problems


def zipped(folder: Path, target: Path) -> Path:
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as bundle:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                bundle.write(path, path.relative_to(folder).as_posix())
    return target


def patch_zip(archive: Path, member: str, local: int, central: int, value: bytes) -> None:
    """Overwrite one header field of ``member``, in its local header and its central directory entry."""
    data = bytearray(archive.read_bytes())
    with zipfile.ZipFile(archive) as bundle:
        info, position = bundle.getinfo(member), bundle.start_dir
    data[info.header_offset + local:info.header_offset + local + len(value)] = value
    while data[position:position + 4] == b"PK\x01\x02":
        name, extra, comment = struct.unpack("<HHH", data[position + 28:position + 34])
        if data[position + 46:position + 46 + name].decode() == member:
            data[position + central:position + central + len(value)] = value
        position += 46 + name + extra + comment
    archive.write_bytes(bytes(data))


# ---------------------------------------------------------------- planted task names (item 4)


def test_docs_logged_under_another_task_fail_one_line_each(valid, tmp_path):
    origin = copy(valid, tmp_path, "origin")
    shutil.copy(samples(origin, "find_the_origin"), samples(origin, "find_the_origin_random"))
    assert validate(origin).problems == tuple(
        f"find_the_origin_random doc find_the_origin/find_the_origin/test/{i}: a doc of task 'find_the_origin' logged "
        "as 'find_the_origin_random'; allowed: docs of the task the samples file names" for i in (0, 1))
    edge = copy(valid, tmp_path, "edge")
    shutil.copy(samples(edge, "memory_drift_edge"), samples(edge, "memory_drift_clique"))
    edit_results(edge, lambda d: d["results"].update(memory_drift_clique={**d["results"]["memory_drift_edge"],
                                                                          "alias": "memory_drift_clique"}))
    problems = validate(edge).problems
    assert len(problems) == 2 and all("a doc of task 'memory_drift_edge' logged as 'memory_drift_clique'" in p
                                      for p in problems), problems


def test_a_view_accepts_exactly_the_rows_of_its_stored_config():
    chain = get_task("recon_chain")
    row = {"task": "recon_all", "family": "recon",
           "difficulty": {"category": "chain", "format": chain.config.formats[0]}}
    assert task_problem(row, "recon_chain") is None  # a recon_all row of the chain category: its stored config
    assert "logged as 'recon_cascade'" in task_problem(row, "recon_cascade")  # another category's view
    assert "logged as 'recon_all'" in task_problem({**row, "task": "recon_chain"}, "recon_all")  # not the reverse
    assert task_problem({**row, "task": "find_the_origin", "family": "find_the_origin"}, "recon_chain")


# ---------------------------------------------------------------- any JSON shape is one reason (item 6)


def _deep(folder: Path) -> None:
    path = samples(folder, "memory_drift_edge")
    lines = path.read_text().splitlines()
    lines[0] = lines[0][:-1] + ', "deep": ' + "[" * 100_000 + "]" * 100_000 + "}"
    path.write_text("\n".join(lines) + "\n")


def _huge_claim(folder: Path) -> None:
    text = results(folder).read_text()
    results(folder).write_text(text.replace('"score,none": 1.0', '"score,none": 1' + "0" * 400, 1))


SHAPES = {
    "doc without id": (lambda f: edit_record(samples(f, "find_the_origin"), lambda r: r["doc"].pop("id")),
                       "doc <row>: 'id' is a required property"),
    "index a string": (lambda f: edit_record(samples(f, "find_the_origin"), lambda r: r["doc"].update(index="0")),
                       "doc index: '0' is not of type 'integer'"),
    "index outside the task": (lambda f: edit_record(samples(f, "find_the_origin"),
                                                     lambda r: r["doc"].update(index=10**6)),
                               "index 1000000 is outside its task; allowed: 0 to 223"),
    "results a list": (lambda f: edit_results(f, lambda d: [d]), "(list); allowed: lm-eval's results object"),
    "effective null": (lambda f: edit_results(f, lambda d: d["n-samples"]["find_the_origin"].update(effective=None)),
                       "n-samples/find_the_origin/effective is None; allowed: a whole number >= 0"),
    "effective Infinity": (lambda f: edit_results(f, lambda d: d["n-samples"]["find_the_origin"].update(
        effective=float("inf"))), "n-samples/find_the_origin/effective is inf"),
    "effective NaN": (lambda f: edit_results(f, lambda d: d["n-samples"]["find_the_origin"].update(
        effective=float("nan"))), "n-samples/find_the_origin/effective is nan"),
    "effective a string": (lambda f: edit_results(f, lambda d: d["n-samples"]["find_the_origin"].update(
        effective="2")), "n-samples/find_the_origin/effective is '2'"),
    "resps an int": (lambda f: edit_record(samples(f, "find_the_origin"), lambda r: r.update(resps=7,
                                                                                             filtered_resps=7)),
                     "field 'resps' is 7 (int); allowed: lm-eval's list of response strings"),
    "params a list": (lambda f: edit_record(samples(f, "find_the_origin"), lambda r: r["doc"].update(params=[1])),
                      "doc params: [1] is not of type 'string'"),
    "params not JSON": (lambda f: edit_record(samples(f, "find_the_origin"),
                                              lambda r: r["doc"].update(params="{nope")),
                        "field 'doc.params' is not JSON: Expecting property name"),
    "difficulty a string": (lambda f: edit_record(samples(f, "memory_drift_edge"),
                                                  lambda r: r["doc"].update(difficulty="hard")),
                            "doc difficulty: 'hard' is not of type 'object'"),
    "deep nesting": (_deep, "JSON nested more than 64 levels deep"),
    "claimed Infinity": (lambda f: edit_results(f, lambda d: d["results"]["find_the_origin"].update(
        {"score,none": float("inf")})), "results/find_the_origin/score,none is inf; allowed: a finite number"),
    "claimed huge int": (_huge_claim, "score,none is 1000000000000000000000000000000000000000; allowed: a number"),
    "submission.json a list": (lambda f: (f / "submission.json").write_text("[1, 2]"),
                               "submission.json: <top>: [1, 2] is not of type 'object'"),
    "submission.json nested": (lambda f: (f / "submission.json").write_text("[" * 100_000 + "]" * 100_000),
                               "submission.json: not valid JSON (maximum recursion depth exceeded"),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_any_json_shape_is_a_one_line_reason(valid, tmp_path, shape):
    tamper, reason = SHAPES[shape]
    folder = copy(valid, tmp_path)
    tamper(folder)
    verdict = validate(folder)
    assert not verdict.ok
    one_line_reasons(verdict.problems)
    assert any(reason in problem for problem in verdict.problems), verdict.problems


# ---------------------------------------------------------------- archives (items 6 and 7)


def _bomb(path: Path) -> None:  # one member of 70 MiB of zeros: a ratio of about 1000
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as bundle, bundle.open("samples_x_2026-01-01T00.jsonl",
                                                                                 "w") as out:
        for _ in range(70):
            out.write(bytes(1 << 20))


def _members_tar(path: Path) -> None:  # xz inside a .tar name, more members than allowed
    with lzma.open(path, "wb") as raw, tarfile.open(fileobj=raw, mode="w|") as bundle:
        for number in range(submission_module.MAX_MEMBERS + 5):
            bundle.addfile(tarfile.TarInfo(f"f{number}"), io.BytesIO(b""))


def _members_zip(path: Path) -> None:
    with zipfile.ZipFile(path, "w") as bundle:
        for number in range(submission_module.MAX_MEMBERS + 5):
            bundle.writestr(f"e{number}", b"")


ARCHIVES = {
    "ratio bomb": (lambda valid, path: _bomb(path), "has a compression ratio of 10"),
    "too many tar members": (lambda valid, path: _members_tar(path), "has more than 1000 members"),
    "too many zip members": (lambda valid, path: _members_zip(path), "has more than 1000 members"),
    "corrupt deflate": (lambda valid, path: _corrupt_zip(valid, path), "cannot be unpacked (BadZipFile: Bad CRC-32"),
    "corrupt xz": (lambda valid, path: _corrupt_xz(valid, path), "cannot be unpacked (ReadError"),
    "encrypted member": (lambda valid, path: _patched(valid, path, 6, 8, struct.pack("<H", 1)),
                         "member 'submission.json' is encrypted; allowed: members without encryption"),
    "unsupported method": (lambda valid, path: _patched(valid, path, 8, 10, struct.pack("<H", 99)),
                           "uses compression method 99; allowed: stored, deflate, bzip2 or lzma"),
    "bad CRC": (lambda valid, path: _patched(valid, path, 14, 16, struct.pack("<I", 0xDEADBEEF)),
                "cannot be unpacked (BadZipFile: Bad CRC-32 for file 'submission.json')"),
    "lying size": (lambda valid, path: _patched(valid, path, 22, 24, struct.pack("<I", 5)),
                   "cannot be unpacked (BadZipFile: Bad CRC-32 for file 'submission.json')"),
    "truncated": (lambda valid, path: _truncated(valid, path), "cannot be unpacked ("),
}


def _corrupt_zip(valid: Path, path: Path) -> None:
    zipped(valid, path)
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as bundle:
        info = max(bundle.infolist(), key=lambda i: i.compress_size)
    middle = info.header_offset + 30 + len(info.filename) + info.compress_size // 2
    data[middle:middle + 64] = bytes(64)
    path.write_bytes(bytes(data))


def _tarred(valid: Path, mode: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as bundle:
        bundle.add(valid, arcname=".")
    return buffer.getvalue()


def _corrupt_xz(valid: Path, path: Path) -> None:
    data = bytearray(_tarred(valid, "w:xz"))
    data[len(data) // 2:len(data) // 2 + 64] = bytes(64)
    path.write_bytes(bytes(data))


def _truncated(valid: Path, path: Path) -> None:
    data = _tarred(valid, "w:gz")
    path.write_bytes(data[:len(data) // 2])


def _patched(valid: Path, path: Path, local: int, central: int, value: bytes) -> None:
    zipped(valid, path)
    patch_zip(path, "submission.json", local, central, value)


@pytest.mark.parametrize("case", list(ARCHIVES))
def test_a_hostile_archive_is_one_reason(valid, tmp_path, case):
    make, reason = ARCHIVES[case]
    suffix = ".tar" if "tar" in case else (".tar.xz" if "xz" in case else (".tar.gz" if case == "truncated"
                                                                           else ".zip"))
    path = tmp_path / f"hostile{suffix}"
    make(valid, path)
    before = set(Path(tempfile.gettempdir()).glob("lurch-submission-*"))
    verdict = validate(path)
    assert len(verdict.problems) == 1 and reason in verdict.problems[0], verdict.problems
    assert verdict.problems[0].startswith(f"submission: {path.name} ")
    assert set(Path(tempfile.gettempdir()).glob("lurch-submission-*")) == before  # nothing left behind


def test_the_size_limits_hold_on_the_bytes_produced(valid, tmp_path, monkeypatch):
    archive = tmp_path / "sub.tar.gz"
    archive.write_bytes(_tarred(valid, "w:gz"))
    assert validate(archive).ok  # a real submission fits the real limits
    monkeypatch.setattr(submission_module, "MAX_UNPACKED", 100_000)
    assert validate(archive).problems == ("submission: sub.tar.gz unpacks to more than 100000 bytes; allowed: at most "
                                          "100000 bytes and 200 times the archive's size",)
    monkeypatch.setattr(submission_module, "MAX_MEMBER", 10_000)
    zipped(valid, tmp_path / "sub.zip")
    assert "unpacks to more than 10000 bytes; allowed: at most 10000 per member" in validate(
        tmp_path / "sub.zip").problems[0]


# ---------------------------------------------------------------- the board (items 5, 6, 8)


def test_the_board_is_built_from_the_valid_ones_with_identity_and_inert_text(valid, tmp_path):
    other = copy(valid, tmp_path, "other-revision")
    (other / "submission.json").write_text(json.dumps({**SUBMISSION, "tasks": TASKS, "model": {
        "name": "lurch-solver", "revision": "attacker-rev"}}))
    evil_name, evil_revision = "evil | 1 |\n| 0 | forged \x1b[31m<b>x</b>", "=HYPERLINK(\"http://x\")\u202e"
    evil = copy(valid, tmp_path, "evil")
    (evil / "submission.json").write_text(json.dumps({**SUBMISSION, "tasks": TASKS, "model": {
        "name": evil_name, "revision": evil_revision}}))
    planted = copy(valid, tmp_path, "planted")
    shutil.copy(samples(planted, "find_the_origin"), samples(planted, "find_the_origin_random"))
    broken = copy(valid, tmp_path, "broken")
    edit_results(broken, lambda d: [d])
    bomb = tmp_path / "bomb.zip"
    _bomb(bomb)
    twin = copy(valid, tmp_path, "twin")
    out = tmp_path / "board"
    standard = dataclasses.replace(standard_key(tuple(TASKS)), coverage="--limit 2")  # rank these together
    verdicts, table = build([valid, other, evil, planted, broken, bomb, twin], out, standard=standard)
    assert [v.ok for v in verdicts] == [True, True, True, False, False, False, False]
    for verdict in verdicts[3:]:
        assert len(verdict.problems) >= 1 and verdict.problems[0].isprintable()
    assert verdicts[-1].problems == (f"the same model and revision (lurch-solver {SUBMISSION['model']['revision']}) "
                                     f"as {valid}",)
    board = json.loads((out / "leaderboard.json").read_text())
    printed_name, printed_revision = "evil | 1 |\\x0a| 0 | forged \\x1b[31m<b>x</b>", '=HYPERLINK("http://x")\\u202e'
    identities = {("lurch-solver", SUBMISSION["model"]["revision"]), ("lurch-solver", "attacker-rev"),
                  (printed_name, printed_revision)}
    assert {(r["model"], r["revision"]) for r in board["overall"]} == identities
    for family, rows in board["families"].items():  # two revisions are two rows in every table
        assert {(r["model"], r["revision"]) for r in rows} == identities, family
    assert {(r["model"], r["revision"]) for r in board["lengths"]} == identities
    files = {path.name: path.read_text(encoding="utf-8") for path in out.iterdir() if path.is_file()}
    assert not any(ESC in text or "\u202e" in text for text in files.values())
    for name, text in files.items():
        if name.endswith(".csv"):
            assert "'=HYPERLINK" in text and ",=HYPERLINK" not in text and '"=HYPERLINK' not in text, name
    for table_text in files["leaderboard.md"].split("\n\n"):  # nothing forged a cell or a row in any table
        rows = [re.sub(r"\\.", "", line).count("|") for line in table_text.splitlines() if line.startswith("|")]
        assert len(set(rows)) <= 1, table_text
    assert files["leaderboard.md"].count("| evil") == 1 + len(board["families"]) + len(board["lengths"]) // 3
    assert "<b>x</b>" not in files["index.html"] and "&lt;b&gt;x&lt;/b&gt;" in files["index.html"]
    assert "forged" in table and "\n| 0 | forged" not in table
    partial = tmp_path / "partial-board"  # the default standard: the same text lands in the partial table, inert too
    build([valid, evil], partial)
    files = {path.name: path.read_text(encoding="utf-8") for path in partial.iterdir() if path.is_file()}
    assert "'=HYPERLINK" in files["partial.csv"] and ",=HYPERLINK" not in files["partial.csv"]
    assert not any(ESC in text or "\u202e" in text for text in files.values())
    assert "<b>x</b>" not in files["index.html"] and "&lt;b&gt;x&lt;/b&gt;" in files["index.html"]


def test_cli_output_is_inert_and_a_missing_submission_is_named(valid, tmp_path):
    evil = tmp_path / "evil\x1b[2J.zip"
    evil.write_bytes(b"not a zip")
    done = run("leaderboard", "validate", str(evil), "--quiet")
    assert done.returncode == 1 and ESC not in done.stdout + done.stderr and "\\x1b[2J.zip" in done.stdout
    done = run("leaderboard", "build", str(tmp_path / "nonexistent"), "--out", str(tmp_path / "board"), "--quiet")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "nonexistent' does not exist; allowed: a folder, .zip, .tar.gz or .tar.xz" in done.stderr


def test_push_of_a_folder_without_its_manifest_fails_also_dry(tmp_path):
    made = run("materialize", "--config", "find_the_origin", "--out", str(tmp_path / "data"), "--quiet", "--limit",
               "2")
    assert made.returncode == 0, made.stderr
    assert run("push", str(tmp_path / "data"), "--repo-id", "org/name", "--dry-run").returncode == 0
    (tmp_path / "data" / "lurch-manifest.json").unlink()
    done = run("push", str(tmp_path / "data"), "--repo-id", "org/name", "--dry-run")
    assert done.returncode == 2 and "has no lurch-manifest.json" in done.stderr and "Traceback" not in done.stderr


# ---------------------------------------------------------------- the doc cache (item 10)


def _poison(entry: Path, index: int, doc: dict) -> None:
    """What a local attacker does to a cache entry: the cached row becomes the tampered doc, with whatever checksum
    it can compute (a CRC, but not a MAC without the key)."""
    table = pa.ipc.open_file(pa.memory_map(str(entry))).read_all()
    columns = {name: table.column(name).to_pylist() for name in table.schema.names}
    position = columns["index"].index(index)
    columns["row"][position] = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    if "crc32" in columns:
        import zlib

        columns["crc32"][position] = zlib.crc32(columns["row"][position].encode("utf-8"))
    schema = table.schema
    with pa.ipc.new_file(str(entry), schema) as writer:
        writer.write_table(pa.table(columns, schema=schema.remove_metadata()).replace_schema_metadata(schema.metadata))


def test_an_edited_doc_cache_does_not_make_a_tampered_doc_pass(valid, tmp_path, monkeypatch):
    monkeypatch.setenv("LURCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    folder = copy(valid, tmp_path)
    assert validate(folder).ok  # fills the cache
    [entry] = (tmp_path / "cache" / "docs").glob("find_the_origin-*.arrow")
    assert validate(folder).ok  # and reads it
    record = json.loads(samples(folder, "find_the_origin").read_text().splitlines()[0])
    record["doc"]["prompt"] = record["doc"]["prompt"].replace("the", "teh", 1)
    edit_record(samples(folder, "find_the_origin"), lambda r: r.update(doc=record["doc"]))
    _poison(entry, record["doc"]["index"], record["doc"])
    problems = validate(folder).problems
    assert problems == ("find_the_origin doc find_the_origin/find_the_origin/test/0: differs from its regeneration "
                        "(its content hash does not match)",), problems
    key = doc_cache.key_path()
    assert key.stat().st_mode & 0o777 == 0o600 and (tmp_path / "cache") not in key.parents


def test_a_doc_cache_key_others_can_read_switches_the_cache_off(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    key = doc_cache.key_path()
    assert len(doc_cache.mac_key(key)) == 32 and doc_cache.mac_key(key) == doc_cache.mac_key(key)
    os.chmod(key, 0o644)
    with pytest.raises(ValueError, match="no one else may read or write"):
        doc_cache.mac_key(key)


# ---------------------------------------------------------------- fuzzing the reader


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                    max_leaves=12)
DOC_KEYS = ["id", "task", "family", "index", "seed", "split", "params", "difficulty", "config_hash", "family_version",
            "prompt"]
TOP_KEYS = ["results", "n-samples", "config"]
META_KEYS = ["model", "seed", "tasks", "subset", "lurch_tasks_version", "private_seed_sha256"]
RECORD_KEYS = ["resps", "filtered_resps", "doc", "doc_id"]


@pytest.fixture(scope="module")
def tiny(valid, tmp_path_factory) -> Path:
    """One task, one doc: each fuzzed copy validates in a fraction of a second."""
    folder = tmp_path_factory.mktemp("tiny") / "tiny"
    shutil.copytree(valid, folder)
    for path in folder.rglob("samples_*.jsonl"):
        if not path.name.startswith("samples_find_the_origin_2"):
            path.unlink()
        else:
            path.write_text(path.read_text().splitlines()[0] + "\n")
    edit_results(folder, lambda d: {**d, "results": {"find_the_origin": d["results"]["find_the_origin"]},
                                    "n-samples": {"find_the_origin": {"original": 1, "effective": 1}}})
    (folder / "submission.json").write_text(json.dumps({**SUBMISSION, "tasks": ["find_the_origin"]}))
    return folder


def _fuzzed(tiny: Path, target: str, key: str, value: object, whole: bool) -> tuple[str, ...]:
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "sub"
        shutil.copytree(tiny, folder)
        if target == "samples":
            path = samples(folder, "find_the_origin")
            edit_record(path, (lambda r: r.update(doc=value)) if whole else (lambda r: r["doc"].update({key: value})))
        elif target == "record":  # the sample record around the doc: the model's output fields
            edit_record(samples(folder, "find_the_origin"), lambda r: r.update({key: value}))
        elif target == "results":
            document = value if whole else {**json.loads(results(folder).read_text()), key: value}
            results(folder).write_text(json.dumps(document))
        else:
            document = value if whole else {**json.loads((folder / "submission.json").read_text()), key: value}
            (folder / "submission.json").write_text(json.dumps(document))
        verdict = validate(folder)
    return verdict.problems


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(target=st.sampled_from(["samples", "record", "results", "submission"]),
       key=st.sampled_from(DOC_KEYS + TOP_KEYS + META_KEYS + RECORD_KEYS),
       value=JSON, whole=st.booleans())
def test_fuzzed_submissions_give_reasons_never_exceptions(tiny, target, key, value, whole):
    problems = _fuzzed(tiny, target, key, value, whole)  # validate never raises
    assert all(isinstance(p, str) and p.isprintable() for p in problems), problems


def test_the_tiny_submission_is_valid(tiny):
    assert validate(tiny).ok, validate(tiny).problems
