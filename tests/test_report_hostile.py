"""`lurch report` (and the log reader the leaderboard shares) on hostile lm-eval logs (issue 26: 11, and the report
side of 3 and 13): malformed input of any shape is one line naming the file and line (exit 2, nothing written); lines
are streamed under a size cap; labels are plain text in every figure and escaped in Markdown, CSV, HTML and the
terminal; --overwrite and symlinks cannot reach outside the report folder; a read-only or full disk is one line.
Every log starts as a real lm-eval run (``lurch eval --log_samples``) and is changed in one place; the reader is also
fuzzed with hypothesis (random bytes, random JSON, random values at every field of real records)."""

from __future__ import annotations

import contextlib
import copy
import csv
import html.parser
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lurch_tasks.analysis import plots
from lurch_tasks.analysis.frame import load_runs
from lurch_tasks.analysis.report import Options, write_report
from lurch_tasks.analysis.runs import MAX_LINE_BYTES, find_runs, iter_samples, read_jsonl

LURCH = str(Path(sys.executable).parent / "lurch")
STAMP = "2026-01-01T00-00-00.000000"
FTO = f"samples_find_the_origin_{STAMP}.jsonl"
RESULTS = f"results_{STAMP}.json"
# A task of each family whose figures name models: heatmap titles, graph panels and radar, RECON chain and failure
# mode bars, ImplicitHop axes, and the GLM's forest (per-model fits).
DRAWN = ("find_the_origin", "memory_drift_edge", "recon_chain", "implicit_hop_depth")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([LURCH, *args], capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def logged(tmp_path_factory) -> dict[str, list[dict]]:
    """Real docs of a task of each family (answer formats entity, entity_set, edge_set, mcq_single, integer,
    ordering), as lm-eval logged them: {samples file task: records, "results": the results file}."""
    out = tmp_path_factory.mktemp("eval")
    done = run("eval", "--model", "lurch-solver", "--tasks", ",".join(DRAWN), "--limit", "3", "--log_samples",
               "--output_path", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    logs = {}
    for path in sorted(out.rglob("samples_*.jsonl")):
        task = path.name.removeprefix("samples_").rsplit("_", 1)[0]
        logs[task] = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    results = json.loads(next(out.rglob("results_*.json")).read_text(encoding="utf-8"))
    return {"results": results, **logs}


def write_run(folder: Path, samples: bytes, results: bytes, task: str = "find_the_origin") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / RESULTS).write_bytes(results)
    (folder / f"samples_{task}_{STAMP}.jsonl").write_bytes(samples)
    return folder


def lines(records: list) -> bytes:
    return b"".join(json.dumps(record).encode("utf-8") + b"\n" for record in records)


def fto(logged) -> tuple[list[dict], dict]:
    return copy.deepcopy(logged["find_the_origin"]), copy.deepcopy(logged["results"])


def _drop(record: dict, *path: str) -> None:
    for key in path[:-1]:
        record = record[key]
    del record[path[-1]]


def _put(record: dict, value: object, *path: str) -> None:
    for key in path[:-1]:
        record = record[key]
    record[path[-1]] = value


DEEP = b"[" * 100_000 + b"]" * 100_000
TOO_DEEP = "nested more than 64 levels deep"
# name -> (change the first record, or give the raw first line, or give the results file; words the error must hold)
BAD_SAMPLES: dict[str, tuple[Callable[[dict], object] | bytes, str]] = {
    "doc without id": (lambda r: _drop(r, "doc", "id"), "'id' is a required property"),
    "doc without index": (lambda r: _drop(r, "doc", "index"), "'index' is a required property"),
    "doc without answer": (lambda r: _drop(r, "doc", "answer"), "'answer' is a required property"),
    "doc without answer_items": (lambda r: _drop(r, "doc", "answer_items"), "'answer_items' is a required"),
    "difficulty a string": (lambda r: _put(r, "hard", "doc", "difficulty"), "difficulty: 'hard' is not of type"),
    "difficulty.d missing": (lambda r: _drop(r, "doc", "difficulty", "d"), "'difficulty.d' is None"),
    "difficulty.d a string": (lambda r: _put(r, "x", "doc", "difficulty", "d"), "'difficulty.d' is 'x' (str)"),
    "difficulty.d NaN": (lambda r: _put(r, float("nan"), "doc", "difficulty", "d"), "finite number"),
    "context_tokens Infinity": (lambda r: _put(r, float("inf"), "doc", "difficulty", "context_tokens"), "inf"),
    "index a string": (lambda r: _put(r, "7", "doc", "index"), "index: '7' is not of type 'integer'"),
    "index beyond int64": (lambda r: _put(r, 1 << 70, "doc", "index"), "within int64"),
    "index of 5000 digits": (b'{"doc": {"family": "x", "index": ' + b"9" * 5000 + b"}}", "an integer too long"),
    "resps an int": (lambda r: _put(r, 5, "resps"), "field 'resps' is 5 (int)"),
    "resps a list of objects": (lambda r: _put(r, [[{}]], "resps"), "field 'resps' is [[{}]]"),
    "params a list": (lambda r: _put(r, [1, 2], "doc", "params"), "params: [1, 2] is not of type 'string'"),
    "params JSON without config": (lambda r: _put(r, "[]", "doc", "params"), "a JSON object with a 'config'"),
    "params nested 100k deep": (lambda r: _put(r, DEEP.decode(), "doc", "params"), TOO_DEEP),
    "params nested 100 deep": (lambda r: _put(r, "[" * 100 + "]" * 100, "doc", "params"), TOO_DEEP),
    "answer_items a string": (lambda r: _put(r, "abc", "doc", "answer_items"), "'abc' is not of type 'array'"),
    "doc a list": (lambda r: _put(r, [1], "doc"), "field 'doc' is [1] (list)"),
    "record nested 100k deep": (DEEP, TOO_DEEP),
    "record a list": (b"[1, 2]", "the line is [1, 2] (list), not a sample record"),
    "record a string": (b'"x"', "not a sample record"),
    "not JSON": (b'{"doc": ', "is not JSON"),
    "bad UTF-8": (b'{"doc": "\xff\xfe"}', "byte 9 (b'\\xff') is not UTF-8"),
    "NUL bytes": (b"\x00\x00{", "is not JSON"),
}
BAD_RESULTS: dict[str, tuple[bytes, str]] = {
    "results a list": (b"[1, 2]", "the top level is [1, 2] (list)"),
    "results config a string": (b'{"config": "x"}', "field 'config' is 'x' (str)"),
    "results model a number": (b'{"config": {"model": 5}}', "field 'config.model' or 'config.model_args' is 5"),
    "results model_args a list": (b'{"config": {"model": "m", "model_args": [1]}}', "is [1] (list)"),
    "results not JSON": (b"{", "is not JSON"),
    "results bad UTF-8": (b'{"config": "\xc3"}', "is not UTF-8"),
    "results nested 100k deep": (DEEP, TOO_DEEP),
    "results label of 5000 characters": (json.dumps({"config": {"model": "m" * 5000}}).encode(), "5000 characters"),
}


def bad_samples_run(folder: Path, logged, case: str) -> Path:
    records, results = fto(logged)
    change = BAD_SAMPLES[case][0]
    if isinstance(change, bytes):
        return write_run(folder, change + b"\n" + lines(records), json.dumps(results).encode())
    change(records[0])
    return write_run(folder, lines(records), json.dumps(results).encode())


def one_line_error(folder: Path) -> str:
    with pytest.raises(ValueError) as caught:
        load_runs(find_runs([folder]))
    message = str(caught.value)
    assert "\n" not in message and "\r" not in message and len(message) < 1000, message
    return message


@pytest.mark.parametrize("case", sorted(BAD_SAMPLES))
def test_a_malformed_sample_line_is_one_error_naming_file_and_line(logged, tmp_path, case):
    message = one_line_error(bad_samples_run(tmp_path / "run", logged, case))
    assert f"{tmp_path / 'run' / FTO}:1: " in message, message
    assert BAD_SAMPLES[case][1] in message, message
    assert "allowed:" in message


@pytest.mark.parametrize("case", sorted(BAD_RESULTS))
def test_a_malformed_results_file_is_one_error_naming_it(logged, tmp_path, case):
    records, _ = fto(logged)
    message = one_line_error(write_run(tmp_path / "run", lines(records), BAD_RESULTS[case][0]))
    assert message.startswith(f"{tmp_path / 'run' / RESULTS}: "), message
    assert BAD_RESULTS[case][1] in message, message


@pytest.mark.parametrize(("task", "key", "value", "error"), [
    ("recon_chain", "failure_modes", 5, "TypeError: 'int' object is not iterable"),
    ("memory_drift_edge", "people", None, "TypeError: 'NoneType' object is not iterable"),
])
def test_a_family_field_no_generator_writes_is_one_error(logged, tmp_path, task, key, value, error):
    """A params field only the family reads (outside the hashed config, past the Instance shape) that the scorer
    cannot use: one error naming file:line and the doc."""
    record = copy.deepcopy(logged[task][0])
    params = json.loads(record["doc"]["params"])
    params[key] = value
    record["doc"]["params"] = json.dumps(params)
    message = one_line_error(write_run(tmp_path / "run", lines([record]), json.dumps(logged["results"]).encode(),
                                       task))
    assert f"samples_{task}_{STAMP}.jsonl:1: doc {record['doc']['id']} cannot be scored ({error})" in message


def test_every_real_log_passes_the_doc_check(logged, tmp_path):
    """The shape check refuses nothing lm-eval logs for our tasks."""
    for task, records in logged.items():
        if task != "results":
            write_run(tmp_path / "run", lines(records), json.dumps(logged["results"]).encode(), task)
    samples = list(iter_samples(find_runs([tmp_path / "run"])))
    assert len(samples) == 3 * len(DRAWN)
    assert {s.doc["answer_format"] for s in samples} >= {"entity", "entity_set", "integer", "edge_set", "mcq_single",
                                                         "ordering"}
    assert {s.doc["family"] for s in samples} == {"find_the_origin", "graph_reconstruction", "recon", "implicit_hop"}
    assert load_runs(find_runs([tmp_path / "run"])).frame.shape[0] == len(samples)


def test_a_later_non_lurch_line_is_an_error_not_skipped(logged, tmp_path):
    """Once a samples file is ours, a record without our doc is refused (it used to end the file silently)."""
    records, results = fto(logged)
    records.insert(1, {"doc": {"question": "2+2?"}, "resps": [["4"]]})
    folder = write_run(tmp_path / "run", lines(records), json.dumps(results).encode())
    assert f"{FTO}:2: doc <row>: 'id' is a required property" in one_line_error(folder)


def test_lines_are_read_under_a_size_cap(logged, tmp_path):
    records, results = fto(logged)
    first = lines(records[:1])
    path = write_run(tmp_path / "run", first + first, json.dumps(results).encode()) / FTO
    assert [n for n, _ in read_jsonl(path, limit=len(first) - 1)] == [1, 2]  # the cap counts the line, not "\n"
    with pytest.raises(ValueError, match=rf"{FTO}:1: the line is longer than {len(first) - 2:,} bytes"):
        list(read_jsonl(path, limit=len(first) - 2))
    assert MAX_LINE_BYTES >= 5 * 11_200_000  # 5x a doc at the configs' 1M-token bound (~10.6 bytes a token logged)


def test_the_cli_refuses_a_line_over_the_cap_in_one_line(logged, tmp_path):
    records, results = fto(logged)
    records[0]["resps"] = [["x" * (MAX_LINE_BYTES + 10)]]
    folder = write_run(tmp_path / "run", lines(records), json.dumps(results).encode())
    del records
    done = run("report", str(folder), "--out", str(tmp_path / "out"), "--quiet")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr[-2000:]
    assert f"{FTO}:1: the line is longer than {MAX_LINE_BYTES:,} bytes" in done.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("case", ["doc without id", "difficulty a string", "resps an int", "record nested 100k deep",
                                  "bad UTF-8", "params nested 100k deep"])
def test_the_cli_says_one_line_and_writes_nothing(logged, tmp_path, case):
    folder = bad_samples_run(tmp_path / "run", logged, case)
    done = run("report", str(folder), "--out", str(tmp_path / "out"), "--quiet")
    assert done.returncode == 2, done.stderr[-3000:]
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert f"{FTO}:1: " in done.stderr and BAD_SAMPLES[case][1] in done.stderr
    assert not (tmp_path / "out").exists() and done.stdout == ""


def test_the_cli_names_a_bad_results_file(logged, tmp_path):
    records, _ = fto(logged)
    folder = write_run(tmp_path / "run", lines(records), b"[1, 2]")
    done = run("report", str(folder), "--out", str(tmp_path / "out"), "--quiet")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr[-3000:]
    assert f"{RESULTS}: the top level is [1, 2] (list)" in done.stderr and not (tmp_path / "out").exists()


# ------------------------------------------------------------------------------------------ labels in outputs

# A leading "_" (matplotlib drops such legend labels), mathtext, a broken one, a TeX command; and an injection.
LABELS = ("_$\\frac{a}{b}$ $x^{$ \\undefined",
          "=HYPERLINK(\"http://x\")|\n| forged | row |\x1b[31m<script>alert(1)</script>")


@contextlib.contextmanager
def drawn_texts() -> Iterator[list]:
    """Every text of every figure the report draws, after it was drawn (a spy on the real PNG writer)."""
    texts: list = []
    original = plots._png

    def spy(figure) -> bytes:
        png = original(figure)  # draws: tick labels exist from here on
        texts.extend(t for t in figure.findobj(lambda a: hasattr(a, "get_parse_math")) if t.get_text())
        return png

    plots._png = spy
    try:
        yield texts
    finally:
        plots._png = original


def labelled_runs(logged, root: Path) -> list[Path]:
    """The same docs logged under each hostile model label (and one plain one)."""
    folders = []
    for number, label in enumerate(("plain", *LABELS)):
        results = copy.deepcopy(logged["results"])
        results["config"]["model"] = label
        for task in DRAWN:
            write_run(root / f"m{number}", lines(logged[task]), json.dumps(results).encode(), task)
        folders.append(root / f"m{number}")
    return folders


def test_labels_are_plain_text_in_every_figure_and_escaped_in_every_file(logged, tmp_path):
    loaded = load_runs(find_runs(labelled_runs(logged, tmp_path / "runs")))
    with drawn_texts() as texts:
        summary = write_report(loaded, tmp_path / "out", Options(reps=20))
    assert texts and not [t.get_text() for t in texts if t.get_parse_math()]  # no mathtext anywhere
    shown = {t.get_text() for t in texts}
    for label in LABELS[:1]:  # legends and titles show the label as typed, the leading "_" included
        assert label in shown or any(label in text for text in shown), label
    out = tmp_path / "out"
    markdown = (out / "summary.md").read_text(encoding="utf-8")
    assert not any(line.startswith("| forged") for line in markdown.splitlines())
    assert "\x1b" not in markdown + summary and "<script>" not in markdown
    assert "\\=HYPERLINK\\(" not in markdown and "=HYPERLINK\\(" in markdown  # Markdown-escaped, one cell
    for path in out.glob("*.csv"):
        with path.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                for value in row.values():
                    assert not value.startswith(("=", "+", "@")) and "\x1b" not in value, (path.name, value)
    models = {row["model"] for row in csv.DictReader((out / "summary_models.csv").open(encoding="utf-8"))}
    assert "'=HYPERLINK(\"http://x\")|\\x0a| forged | row |\\x1b[31m<script>alert(1)</script>" in models
    assert LABELS[0] in models
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "<script" not in page and "\x1b" not in page and "&lt;script&gt;" in page
    tags = _Tags()
    tags.feed(page)
    assert not tags.script and not tags.handlers
    figures = sorted(p.name for p in (out / "figures").glob("fto_*.png"))
    assert figures == ["fto_find_the_origin.png"]  # one file per task, the models its panels (titled as typed)


class _Tags(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.script, self.handlers = False, []

    def handle_starttag(self, tag, attrs):
        self.script |= tag == "script"
        self.handlers += [name for name, _ in attrs if name.startswith("on")]


def test_the_cli_draws_mathtext_labels_as_text(logged, tmp_path):
    """Labels that made matplotlib's mathtext fail (exit 2) or recurse: the report is written."""
    folders = []
    for number, label in enumerate(["$x^{$ and $\\undefined{y}$", "$" + "{" * 95 + "x" + "}" * 95 + "$"]):
        records, results = fto(logged)
        results["config"]["model"] = label
        folders.append(str(write_run(tmp_path / f"run{number}", lines(records), json.dumps(results).encode())))
    done = run("report", *folders, "--out", str(tmp_path / "out"), "--quiet", "--bootstrap", "20")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "\x1b" not in done.stdout and (tmp_path / "out" / "report.html").is_file()


# ------------------------------------------------------------------------------- the report folder (3 and 13)


def planted(tmp_path: Path, listed: str, link: bool) -> tuple[Path, Path]:
    """A report folder whose manifest (planted: the folder came from someone else) lists ``listed``."""
    out, victim = tmp_path / "out", tmp_path / "victim"
    out.mkdir()
    victim.mkdir()
    (victim / "summary.md").write_text("precious\n")
    if link:
        (out / "figures").symlink_to(victim)
    (out / ".lurch-report.json").write_text(json.dumps({"written_by": "lurch report (0)",
                                                        "files": [listed, ".lurch-report.json"]}))
    return out, victim


@pytest.mark.parametrize(("listed", "link", "message"), [
    ("../victim/summary.md", False, "path '../victim/summary.md' is not allowed"),
    ("/tmp/x", False, "path '/tmp/x' is not allowed"),
    ("figures/summary.md", True, "path 'figures/summary.md' leads outside"),
])
def test_overwrite_never_touches_anything_outside_the_report_folder(logged, tmp_path, listed, link, message):
    records, results = fto(logged)
    folder = write_run(tmp_path / "run", lines(records), json.dumps(results).encode())
    out, victim = planted(tmp_path, listed, link)
    before = sorted(p.name for p in tmp_path.iterdir())
    done = run("report", str(folder), "--out", str(out), "--overwrite", "--quiet", "--bootstrap", "20")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr[-3000:]
    assert message in done.stderr
    assert (victim / "summary.md").read_text() == "precious\n" and sorted(victim.iterdir()) == [victim / "summary.md"]
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert sorted(p.name for p in out.iterdir()) == [".lurch-report.json"] + (["figures"] if link else [])


def test_a_symlinked_entry_of_an_old_report_is_replaced_not_followed(logged, tmp_path):
    """A report folder lurch wrote, then one of its files swapped for a link to a file outside: --overwrite
    refuses (the listed name leads outside) and the file outside keeps its bytes."""
    records, results = fto(logged)
    folder = write_run(tmp_path / "run", lines(records), json.dumps(results).encode())
    out = tmp_path / "out"
    assert run("report", str(folder), "--out", str(out), "--quiet", "--bootstrap", "20").returncode == 0
    victim = tmp_path / "victim.md"
    victim.write_text("precious\n")
    (out / "summary.md").unlink()
    (out / "summary.md").symlink_to(victim)
    done = run("report", str(folder), "--out", str(out), "--overwrite", "--quiet", "--bootstrap", "20")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr[-3000:]
    assert "path 'summary.md' leads outside" in done.stderr and victim.read_text() == "precious\n"


@contextlib.contextmanager
def tmpfs(where: Path, options: str) -> Iterator[Path]:
    where.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True).returncode:
        pytest.skip("mounting a tmpfs needs root (CI and the dev machines run as root)")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=True)


@pytest.mark.parametrize(("options", "code"), [("ro,size=1m", "EROFS"), ("size=64k", "ENOSPC")])
def test_a_read_only_or_full_out_is_one_line_and_leaves_nothing(logged, tmp_path, options, code):
    records, results = fto(logged)
    folder = write_run(tmp_path / "run", lines(records), json.dumps(results).encode())
    with tmpfs(tmp_path / "mount", options) as mount:
        done = run("report", str(folder), "--out", str(mount / "out"), "--quiet", "--bootstrap", "20")
        assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1, done.stderr[-3000:]
        assert f"({code})" in done.stderr and "Traceback" not in done.stderr
        assert list(mount.iterdir()) == []  # no report, no staging folder


# ------------------------------------------------------------------------------------------------- fuzzing

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                max_size=4), max_leaves=12)
FUZZ = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                        HealthCheck.too_slow])


def outcome(samples: bytes, results: bytes, task: str = "find_the_origin") -> str | None:
    """None when the logs read and score; else the one-line ValueError (anything else fails the test)."""
    with tempfile.TemporaryDirectory() as temporary:
        folder = write_run(Path(temporary) / "run", samples, results, task)
        try:
            load_runs(find_runs([folder]))
        except ValueError as error:
            message = str(error)
            assert "\n" not in message and "\r" not in message and len(message) < 1000, message
            assert str(folder) in message, message  # it names the file (or the run folder)
            return message
    return None


def _paths(value: object, prefix: tuple = ()) -> list[tuple]:
    """Every key path into a record (the doc's fields, its difficulty's, the record's own)."""
    found = [prefix] if prefix else []
    if isinstance(value, dict) and len(prefix) < 3:
        for key, child in value.items():
            found += _paths(child, (*prefix, key))
    return found


@FUZZ
@given(data=st.binary(max_size=300), results=st.binary(max_size=80))
def test_fuzz_random_bytes(logged, data, results):
    outcome(data, results)
    outcome(data, json.dumps(logged["results"]).encode())


@FUZZ
@given(records=st.lists(JSON, min_size=1, max_size=3), results=JSON)
def test_fuzz_random_json_shapes(logged, records, results):
    outcome(lines(records), json.dumps(results).encode())
    outcome(lines(records), json.dumps(logged["results"]).encode())
    outcome(lines(fto(logged)[0]), json.dumps(results).encode())


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(data=st.data(), value=JSON, drop=st.booleans(), as_params=st.booleans())
def test_fuzz_one_field_of_a_real_record(logged, data, value, drop, as_params):
    """A real record of any task with one field (record, doc, difficulty) replaced by random JSON or removed; or
    its params / answer string replaced by random JSON text."""
    task = data.draw(st.sampled_from(sorted(t for t in logged if t != "results")))
    record = copy.deepcopy(data.draw(st.sampled_from(logged[task])))
    if as_params:
        field = data.draw(st.sampled_from(["params", "answer"]))
        record["doc"][field] = json.dumps(value)
    else:
        path = data.draw(st.sampled_from(_paths(record)))
        target = record
        for key in path[:-1]:
            target = target[key]
        if drop:
            del target[path[-1]]
        else:
            target[path[-1]] = value
    outcome(lines([record]), json.dumps(logged["results"]).encode(), task)


@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=JSON.filter(lambda v: not isinstance(v, dict)), field=st.sampled_from(["doc", "difficulty", "index"]))
def test_fuzzed_logs_through_the_cli_are_one_line(logged, value, field):
    records, results = fto(logged)
    target = records[0] if field == "doc" else records[0]["doc"]
    target[field] = value if field != "index" else [value]
    with tempfile.TemporaryDirectory() as temporary:
        folder = write_run(Path(temporary) / "run", lines(records), json.dumps(results).encode())
        done = run("report", str(folder), "--out", str(Path(temporary) / "out"), "--quiet")
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr[-3000:]
        assert f"{FTO}:1: " in done.stderr and not (Path(temporary) / "out").exists()


def test_figure_names_from_labels_are_short_and_distinct():
    from lurch_tasks.analysis.report import _slug

    assert _slug("lurch-solver") == "lurch-solver" and _slug("find_the_origin") == "find_the_origin"
    names = {_slug(label) for label in ("a/b", "a:b", "a b", "a-b", "x" * 300, "x" * 301, "$", "\u00e9")}
    assert len(names) == 8 and all(len(name) <= 57 for name in names)
    assert all(c.isascii() and (c.isalnum() or c in "-_") for name in names for c in name)
