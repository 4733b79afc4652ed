"""A sharded run's staging folder is read from disk: oversized or malformed records, audit blobs and packed pair
tables are refused with one line (or, for an audit blob, the rows are re-read), never read whole or absorbed."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import zlib
from pathlib import Path

import pytest

from lurch_tasks.core.generation import generate_row
from lurch_tasks.core.shortcuts import AuditEntry, TaskAuditor, to_tagged
from lurch_tasks.dataset_builders._builder import resolved_task
from lurch_tasks.families.graph import shortcuts as graph_shortcuts
from lurch_tasks.families.graph.shortcuts import MAX_PROBED_PEOPLE, MAX_TABLE_PEOPLE, PairTable
from lurch_tasks.hub import build as hub_build
from lurch_tasks.hub import shards as hub_shards
from lurch_tasks.hub import write as hub_write
from lurch_tasks.hub.plan import PlannedFile
from lurch_tasks.hub.store import Store
from lurch_tasks.hub.write import FileRecord, decode_audit, encode_audit

SHA = "ab" * 32


def _record(**changes) -> dict:
    data = FileRecord("cfg/test-00000-of-00001.parquet", SHA, 10, 2, 5, (SHA, SHA), None).to_json()
    data.update(changes)
    return data


def _one_line(error: pytest.ExceptionInfo) -> str:
    text = str(error.value)
    assert "\n" not in text and "allowed:" in text
    return text


# ---------------------------------------------------------------- the record's fields


def test_a_record_reads_back_as_written() -> None:
    record = FileRecord("cfg/test-00000-of-00001.parquet", SHA, 10, 2, 5, (SHA, SHA), "eJwDAAAAAAE=")
    assert FileRecord.from_json(json.loads(json.dumps(record.to_json()))) == record
    del_audit = record.to_json()
    del del_audit["audit"]  # a record of an older run
    assert FileRecord.from_json(del_audit).audit is None


@pytest.mark.parametrize(("data", "field"), [
    (_record(sha256="zz"), "'sha256'"),
    (_record(size=-1), "'size'"),
    (_record(num_rows=True), "'num_rows'"),
    (_record(num_bytes="5"), "'num_bytes'"),
    (_record(path=""), "'path'"),
    (_record(path="x" * 5000), "'path'"),
    (_record(row_hashes=[SHA]), "'row_hashes'"),
    (_record(row_hashes=[SHA, "not a hash"]), "'row_hashes'[1]"),
    (_record(row_hashes={"a": 1}), "'row_hashes'"),
    (_record(audit=123), "'audit'"),
    (_record(bogus=1), "'bogus'"),
    ({k: v for k, v in _record().items() if k != "sha256"}, "'sha256' is missing"),
    ([1, 2], "a JSON object"),
])
def test_a_malformed_record_is_one_line_naming_the_field(data, field) -> None:
    with pytest.raises(ValueError) as error:
        FileRecord.from_json(data)
    assert field in _one_line(error)


def test_an_oversized_audit_string_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hub_write, "MAX_AUDIT_CHARS", 100)
    with pytest.raises(ValueError) as error:
        FileRecord.from_json(_record(audit="A" * 101))
    assert "'audit' str of length 101" in _one_line(error) and "at most 100 characters" in str(error.value)


# ---------------------------------------------------------------- reading a record from a staging folder


def _staging(tmp_path: Path, record: dict | str) -> tuple[Store, PlannedFile]:
    planned = PlannedFile("cfg", 0, 1, 0, 2, 100)
    data = b"parquet bytes"
    (tmp_path / "build" / "cfg").mkdir(parents=True)
    (tmp_path / "build" / planned.path).write_bytes(data)
    (tmp_path / "records" / "cfg").mkdir(parents=True)
    text = record if isinstance(record, str) else json.dumps(record)
    (tmp_path / hub_shards.record_name(planned)).write_text(text, encoding="utf-8")
    return Store.at(str(tmp_path)), planned


def test_a_valid_record_is_read(tmp_path: Path) -> None:
    data = b"parquet bytes"
    record = _record(path="cfg/test-00000-of-00001.parquet", size=len(data), sha256=hashlib.sha256(data).hexdigest())
    staging, planned = _staging(tmp_path, record)
    assert hub_shards._valid_record(staging, planned, refuse="re-run") == FileRecord.from_json(record)


def test_a_malformed_record_names_the_file_the_field_and_the_shard(tmp_path: Path) -> None:
    staging, planned = _staging(tmp_path, _record(num_rows=2, row_hashes=[SHA, SHA], sha256="0" * 63))
    assert hub_shards._valid_record(staging, planned) is None  # --resume: no record, the file is written again
    with pytest.raises(ValueError) as error:
        hub_shards._valid_record(staging, planned, refuse="or re-run shard 0 of 1 with --resume")
    line = _one_line(error)
    assert "records/cfg/test-00000-of-00001.json" in line and "'sha256'" in line and "shard 0 of 1" in line


def test_a_record_with_the_wrong_row_count_is_refused(tmp_path: Path) -> None:
    staging, planned = _staging(tmp_path, _record(num_rows=3, row_hashes=[SHA] * 3))
    with pytest.raises(ValueError) as error:
        hub_shards._valid_record(staging, planned, refuse="re-run")
    assert "'num_rows' 3" in _one_line(error) and "allowed: 2" in str(error.value)


def test_an_oversized_record_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hub_shards, "record_bytes_cap", lambda rows: 1_000)
    staging, planned = _staging(tmp_path, _record(audit="A" * 2_000))
    with pytest.raises(ValueError) as error:
        hub_shards._valid_record(staging, planned)
    assert "bytes; allowed: at most 1000 bytes" in _one_line(error) and "test-00000-of-00001.json" in str(error.value)


def test_read_json_is_bounded_and_refuses_deep_nesting(tmp_path: Path) -> None:
    store = Store.at(str(tmp_path))
    (tmp_path / "big.json").write_text("[" + "0," * 600 + "0]", encoding="utf-8")
    assert len(store.read_json("big.json")) == 601
    with pytest.raises(ValueError) as error:
        store.read_json("big.json", max_bytes=1_000)
    assert "big.json: 1203 bytes; allowed: at most 1000 bytes" in _one_line(error)
    (tmp_path / "deep.json").write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    with pytest.raises(ValueError) as error:
        store.read_json("deep.json")
    assert "unreadable" in _one_line(error)


def test_the_record_cap_is_far_above_a_real_record() -> None:
    rows = 10_000  # plan.MAX_ROWS_PER_FILE
    record = FileRecord("c/test-00000-of-00001.parquet", SHA, 1, rows, 1, (SHA,) * rows, "A" * 5_000_000)
    written = len((json.dumps(record.to_json(), indent=1, sort_keys=True) + "\n").encode())
    assert written * 10 < hub_write.record_bytes_cap(rows)


# ---------------------------------------------------------------- the audit blob and its entries


def _blob(text: bytes) -> str:
    return base64.b64encode(zlib.compress(text, 6)).decode("ascii")


@pytest.mark.parametrize("blob", [
    "not base64!",
    _blob(b'{"not": "a list"}'),
    _blob(b"[" * 100_000 + b"]" * 100_000),  # deeper than the recursion limit
    _blob(b'[{"tuple": [1, 2]}]'),
    _blob(b'[{"tuple": [-1, 2, null]}]'),
    base64.b64encode(zlib.compress(b"[]")[:-3]).decode("ascii"),  # truncated
])
def test_a_malformed_audit_blob_is_one_line(blob: str) -> None:
    with pytest.raises(ValueError) as error:
        decode_audit(blob)
    assert str(error.value).startswith("audit: unreadable") and _one_line(error)


def test_a_zlib_bomb_stops_at_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hub_write, "MAX_AUDIT_JSON_BYTES", 1_000_000)
    bomb = _blob(b"[" + b" " * 50_000_000 + b"]")  # 50 MB of JSON in ~50 KB
    assert len(bomb) < 200_000
    with pytest.raises(ValueError) as error:
        decode_audit(bomb)
    assert "inflates past 1000000 bytes" in _one_line(error)


@pytest.fixture(scope="module")
def measured() -> tuple[TaskAuditor, AuditEntry]:
    task = resolved_task("implicit_hop_depth", {"num_samples": 1}, None)
    auditor = TaskAuditor(task)
    return auditor, auditor.measure(generate_row(task, 0, "test"))


def test_a_measured_entry_fits_its_audit(measured) -> None:
    auditor, entry = measured
    [back] = decode_audit(encode_audit([entry]))
    auditor.check(back)


@pytest.mark.parametrize(("change", "field"), [
    (lambda m: dataclasses.replace(m, scores=m.scores[:-1]), "'scores'"),
    (lambda m: dataclasses.replace(m, scores=((None,),) * len(m.scores)), "'scores'"),
    (lambda m: dataclasses.replace(m, probes=(*m.probes, 0.5)), "'probes'"),
    (lambda m: dataclasses.replace(m, row_chance="high"), "'row_chance'"),
    (lambda m: dataclasses.replace(m, slot=["a"]), "'slot'"),
    (lambda m: dataclasses.replace(m, item=dataclasses.replace(m.item, candidates=("x",))), "'item.candidates'"),
    (lambda m: dataclasses.replace(m, scored=None), "'scored'"),
    (lambda m: m.item, "'measure'"),
])
def test_an_entry_that_does_not_fit_its_audit_is_refused(measured, change, field) -> None:
    auditor, entry = measured
    broken = dataclasses.replace(entry, measure=change(entry.measure))
    with pytest.raises(ValueError) as error:
        auditor.check(broken)
    assert field in _one_line(error) and str(error.value).startswith(f"audit entry {entry.index}:")


def test_finalize_re_reads_the_rows_of_a_record_whose_entries_do_not_fit(measured) -> None:
    auditor, entry = measured
    features = hub_write.task_features("implicit_hop_depth", {"num_samples": 1}, None)
    good = FileRecord("p", SHA, 1, 1, 1, (SHA,), encode_audit([entry]))
    assert hub_build._entries(good, auditor, features) == [entry]
    broken = dataclasses.replace(entry, measure=dataclasses.replace(entry.measure, scores=()))
    assert hub_build._entries(dataclasses.replace(good, audit=encode_audit([broken])), auditor, features) is None
    scored = {**entry.measure.scored, "answer": 7}  # the scorer would read an int where the schema has a string
    retyped = dataclasses.replace(entry, measure=dataclasses.replace(entry.measure, scored=scored))
    assert hub_build._entries(dataclasses.replace(good, audit=encode_audit([retyped])), auditor, features) is None


# ---------------------------------------------------------------- graph's packed pair table


def _table(n: int, **changes) -> PairTable:
    fields = {"names": tuple(f"Person{k} Name{k}" for k in range(n)),
              "values": tuple((float(k),) * 12 for k in range(n)), "templates": (0,) * n,
              "holders": tuple((k,) for k in range(n)), "gold": (0,)}
    fields.update(changes)
    return PairTable(**fields)


def test_the_table_cap_is_above_every_probed_row() -> None:
    assert MAX_TABLE_PEOPLE >= 2 * MAX_PROBED_PEOPLE  # rows of more people are never probed (214 at most, measured)
    table = _table(MAX_TABLE_PEOPLE)
    assert len(table) == MAX_TABLE_PEOPLE * (MAX_TABLE_PEOPLE - 1) // 2


def test_a_table_over_the_cap_is_refused_before_its_pairs_are_built() -> None:
    with pytest.raises(ValueError) as error:
        _table(MAX_TABLE_PEOPLE + 1)
    assert f"{MAX_TABLE_PEOPLE + 1} people" in _one_line(error) and f"2..{MAX_TABLE_PEOPLE}" in str(error.value)


@pytest.mark.parametrize(("changes", "field"), [
    ({"values": ((1.0,) * 12,) * 3}, "values"),
    ({"templates": (0, 0, 0, 1 << 40)}, "templates"),
    ({"holders": ((0,), (1,), (2,), (10**12,))}, "holders"),
    ({"gold": (99,)}, "gold"),
    ({"gold": (1, 0)}, "gold"),
    ({"names": ["a", "b", "c", "d"]}, "'names'"),
])
def test_a_malformed_table_is_refused(changes, field) -> None:
    with pytest.raises(ValueError) as error:
        _table(4, **changes)
    assert field in _one_line(error)


def test_a_record_holding_an_oversized_table_is_unreadable() -> None:
    tagged = to_tagged(_table(4))
    names, values, templates, holders, _ = tagged["PairTable"]
    n = MAX_TABLE_PEOPLE + 1
    tagged["PairTable"] = [{"tuple": [f"P{k} Q" for k in range(n)]}, {"tuple": [values["tuple"][0]] * n},
                           {"tuple": [0] * n}, {"tuple": [{"tuple": [0]}] * n}, {"tuple": [0]}]
    blob = _blob(json.dumps([tagged]).encode())
    with pytest.raises(ValueError) as error:
        decode_audit(blob)
    assert f"{n} people" in _one_line(error)
    assert graph_shortcuts.MAX_TABLE_PARAGRAPHS >= MAX_TABLE_PEOPLE
