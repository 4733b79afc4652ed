"""Fault injection: `lurch validate` must catch every fault that changes answers or breaks loading, even when
the faulty folder is otherwise self-consistent (footer count and fingerprint, manifest and card recomputed,
as a buggy generator or a careful hand edit would leave them)."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lurch_tasks import __version__
from lurch_tasks.core.instance import content_hash
from lurch_tasks.core.rng import canonical_json
from lurch_tasks.hub import layout as hub_layout
from lurch_tasks.hub import materialize, render_card, summarize_folder, validate_folder
from lurch_tasks.hub import write as hub_write
from lurch_tasks.hub.manifest import (
    CARD_NAME,
    JOURNAL_NAME,
    MANIFEST_NAME,
    build_manifest,
    file_sha256,
    folder_entry,
    write_json_atomic,
)

ORIGIN, GRAPH = "find_the_origin", "memory_drift_edge"
ORIGIN_SMALL = {"context_tokens": [384, 512], "num_samples": 1, "d_values": [-5, 5, 9]}
GRAPH_SMALL = {"context_tokens": [2048], "connections": [1, 3], "num_samples": 2}
GENERATOR = f"lurch-tasks {__version__}"  # what a careful tamperer writes into a recomputed manifest


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("pristine") / "data"
    materialize([ORIGIN], folder, overrides=ORIGIN_SMALL, progress=False, max_rows_per_file=4)
    materialize([GRAPH], folder, overrides=GRAPH_SMALL, progress=False)
    assert _problems(validate_folder(folder, progress=False)) == []
    return folder


def _problems(summary: dict) -> list[str]:
    return [problem for entry in summary.values() for problem in entry["problems"]]


# ---------------------------------------------------------------- making a faulty folder self-consistent


def _rows(folder: Path, config: str) -> list[dict]:
    return [row for path in hub_layout.config_files(folder / config) for row in pq.read_table(path).to_pylist()]


def _rewrite_rows(folder: Path, config: str, rows: list[dict]) -> None:
    """Write ``rows`` into the config's planned Parquet files (the last file absorbs rows added or removed) with a
    recomputed count, as the writer would, then recompute the card and the manifest (fingerprint included) so only
    the content is wrong."""
    files = hub_layout.config_files(folder / config)
    schema = pq.read_schema(files[0])
    counts = [pq.read_metadata(path).num_rows for path in files]
    counts[-1] += len(rows) - sum(counts)
    start = 0
    for path, count in zip(files, counts, strict=True):
        meta = {**hub_layout.file_meta(path)[0], "num_examples": len(rows)}
        metadata = {**schema.metadata, hub_layout.META_KEY: canonical_json(meta).encode("ascii")}
        table = pa.Table.from_pylist(rows[start : start + count], schema=schema.with_metadata(metadata))
        pq.write_table(table, path, **hub_layout.PARQUET_OPTIONS)
        start += count
    _recompute_card_and_manifest(folder)


def _summaries(folder: Path) -> list:
    """The folder's summaries with fingerprints recomputed from the rows on disk."""
    return [dataclasses.replace(s, fingerprint=hub_layout.fingerprint(map(content_hash, _rows(folder, s.name))))
            for s in summarize_folder(folder)]


def _recompute_card_and_manifest(folder: Path, card: bool = True) -> None:
    summaries = _summaries(folder)
    if card:
        (folder / CARD_NAME).write_text(render_card(summaries), encoding="utf-8")
    _recompute_manifest(folder, summaries)


def _recompute_manifest(folder: Path, summaries: list | None = None) -> None:
    entries = {s.name: folder_entry(folder, s) for s in summaries or _summaries(folder)}
    write_json_atomic(folder / MANIFEST_NAME, build_manifest(file_sha256(folder / CARD_NAME), entries, GENERATOR))


def _row_fault(config: str, mutate: Callable[[list[dict]], None]) -> Callable[[Path], None]:
    def inject(folder: Path) -> None:
        rows = _rows(folder, config)
        mutate(rows)
        _rewrite_rows(folder, config, rows)
    return inject


def _set(index: int, field: str, value: object):
    def mutate(rows: list[dict]) -> None:
        rows[index][field] = value(rows[index][field]) if callable(value) else value
    return mutate


def _difficulty(index: int, key: str, change: Callable):
    def mutate(rows: list[dict]) -> None:
        rows[index]["difficulty"][key] = change(rows[index]["difficulty"][key])
    return mutate


def _evidence(index: int, key: str, delta: int):
    def mutate(rows: list[dict]) -> None:
        rows[index]["evidence"][0][key] += delta
    return mutate


def _params(index: int, change: Callable[[dict], None]):
    def mutate(rows: list[dict]) -> None:
        params = json.loads(rows[index]["params"])
        change(params)
        rows[index]["params"] = json.dumps(params)
    return mutate


def _swap_word(text: str) -> str:
    words = text.split(" ")
    words[3], words[4] = words[4], words[3]
    return " ".join(words)


ROW_FAULTS: dict[str, Callable[[Path], None]] = {
    "answer_items": _row_fault(ORIGIN, _set(1, "answer_items", ["misfired"])),
    "answer_text": _row_fault(ORIGIN, _set(1, "answer_text", "misfired")),
    "answer": _row_fault(ORIGIN, _set(1, "answer", json.dumps("misfired"))),
    "evidence token_start": _row_fault(ORIGIN, _evidence(1, "token_start", 1)),
    "evidence token_end": _row_fault(GRAPH, _evidence(1, "token_end", -1)),
    "evidence char start": _row_fault(ORIGIN, _evidence(2, "start", 1)),
    "context_tokens": _row_fault(ORIGIN, _difficulty(1, "context_tokens", lambda v: v + 1)),
    "evidence_scope": _row_fault(ORIGIN, _difficulty(1, "evidence_scope", lambda v: v * 1.01)),
    "evidence_dispersion": _row_fault(GRAPH, _difficulty(2, "evidence_dispersion", lambda v: v * 0.99)),
    "reasoning_depth": _row_fault(GRAPH, _difficulty(2, "reasoning_depth", lambda v: v + 1)),
    "d": _row_fault(ORIGIN, _difficulty(1, "d", lambda v: -v)),
    "separation_tokens (origin)": _row_fault(ORIGIN, _difficulty(1, "separation_tokens", lambda v: v + 1)),
    "separation_tokens (graph)": _row_fault(GRAPH, _difficulty(0, "separation_tokens", lambda v: v + 1)),
    "connections": _row_fault(GRAPH, _difficulty(1, "connections", lambda v: v + 2)),
    "target_position": _row_fault(ORIGIN, _difficulty(0, "target_position", lambda v: round(v, 3))),
    "family_version": _row_fault(ORIGIN, _set(0, "family_version", "9.9.9")),
    "id": _row_fault(ORIGIN, _set(1, "id", "find_the_origin/find_the_origin/test/99")),
    "seed": _row_fault(ORIGIN, _set(1, "seed", 7)),
    "config_hash": _row_fault(ORIGIN, _set(1, "config_hash", "0" * 64)),
    "source_hash": _row_fault(GRAPH, _set(1, "source_hash", "f" * 64)),
    "pair_key": _row_fault(GRAPH, _set(1, "pair_key", "graph_reconstruction/0000000000000000/0/test/1")),
    "question": _row_fault(ORIGIN, _set(1, "question", lambda q: q.replace("origin", "start"))),
    "prompt": _row_fault(GRAPH, _set(0, "prompt", lambda p: p.replace("profiles", "records", 1))),
    "context (words swapped)": _row_fault(GRAPH, _set(0, "context", _swap_word)),
    "options": _row_fault(ORIGIN, _set(0, "options", ["a", "b"])),
    "reasoning_graph": _row_fault(ORIGIN, _set(0, "reasoning_graph",
                                              lambda g: {**g, "nodes": g["nodes"][:-1] + [dict(g["nodes"][-1],
                                                                                               text="x")]})),
    "params (graph decoys)": _row_fault(GRAPH, _params(0, lambda p: p.update(decoy_mode="near_miss"))),
    "params (origin target rows)": _row_fault(ORIGIN, _params(0, lambda p: p.update(sample=3))),
    "deleted last row": _row_fault(ORIGIN, lambda rows: rows.pop()),
    "deleted first row": _row_fault(GRAPH, lambda rows: rows.pop(0)),
    "swapped rows": _row_fault(ORIGIN, lambda rows: rows.insert(0, rows.pop(1))),
    "duplicated row": _row_fault(GRAPH, lambda rows: rows.append(copy.deepcopy(rows[-1]))),
    "row of another config": _row_fault(ORIGIN, _set(2, "config_name", "find_the_origin_random")),
    "answer_format": _row_fault(ORIGIN, _set(0, "answer_format", "free_form")),
    "split": _row_fault(GRAPH, _set(0, "split", "train")),
    "index": _row_fault(ORIGIN, _set(3, "index", 30)),
}


def _delete_files(folder: Path) -> None:
    for path in hub_layout.config_files(folder / GRAPH):
        path.unlink()


def _zero_byte(folder: Path) -> None:
    hub_layout.config_files(folder / ORIGIN)[1].write_bytes(b"")


def _corrupt(folder: Path) -> None:
    path = hub_layout.config_files(folder / ORIGIN)[0]
    data = bytearray(path.read_bytes())
    for k in range(len(data) // 3, len(data) // 3 + 64):
        data[k] ^= 0x5A
    path.write_bytes(bytes(data))


def _truncated(folder: Path) -> None:
    path = hub_layout.config_files(folder / GRAPH)[0]
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


STRUCTURE_FAULTS: dict[str, Callable[[Path], None]] = {
    "config folder deleted": lambda f: shutil.rmtree(f / GRAPH),
    "config Parquet files deleted": _delete_files,
    "one Parquet file deleted": lambda f: hub_layout.config_files(f / ORIGIN)[-1].unlink(),
    "zero-byte Parquet": _zero_byte,
    "corrupt Parquet bytes": _corrupt,
    "truncated Parquet": _truncated,
    "extra file in a config": lambda f: (f / ORIGIN / "notes.txt").write_text("x"),
    "manifest deleted": lambda f: (f / MANIFEST_NAME).unlink(),
    "manifest not JSON": lambda f: (f / MANIFEST_NAME).write_text("{oops"),
    "unfinished replacement": lambda f: (f / JOURNAL_NAME).write_text("{}"),
}


def _edit_card(edit: Callable[[str], str], recompute_manifest: bool = True) -> Callable[[Path], None]:
    def inject(folder: Path) -> None:
        card = folder / CARD_NAME
        text = card.read_text(encoding="utf-8")
        edited = edit(text)
        assert edited != text, "the card fault changed nothing"
        card.write_text(edited, encoding="utf-8")
        if recompute_manifest:  # the card's own checksum no longer helps: semantics must catch it
            _recompute_manifest(folder)
    return inject


CARD_FAULTS: dict[str, Callable[[Path], None]] = {
    "num_examples": _edit_card(lambda t: re.sub(r"num_examples: (\d+)", lambda m: f"num_examples: {int(m[1]) + 1}",
                                                t, count=1)),
    "data_files": _edit_card(lambda t: t.replace(f"path: {ORIGIN}/test-*.parquet", f"path: {ORIGIN}/train-*.parquet")),
    "ghost config": _edit_card(lambda t: t.replace("configs:\n", "configs:\n- config_name: ghost\n  data_files:\n"
                                                   "  - split: test\n    path: ghost/test-*.parquet\n", 1)),
    "feature dtype": _edit_card(lambda t: t.replace("- name: index\n    dtype: int64",
                                                    "- name: index\n    dtype: int32", 1)),
    "broken YAML header": _edit_card(lambda t: t.replace("configs:\n", "configs: [\n", 1)),
    "config dropped from configs": _edit_card(lambda t: re.sub(rf"- config_name: {GRAPH}\n  data_files:\n  - split: "
                                                               rf"test\n    path: {GRAPH}/test-\*\.parquet\n", "", t,
                                                               count=1)),
    "dataset_info dropped": _edit_card(lambda t: t.replace(f"- config_name: {ORIGIN}\n  features:",
                                                           "- config_name: other\n  features:", 1)),
    "README deleted": lambda f: (f / CARD_NAME).unlink(),
    "card body edited": _edit_card(lambda t: t.replace("## Fields", "## Fields (edited)"), recompute_manifest=False),
}


# ---------------------------------------------------------------- tampering: every hash recomputed after the edit
# Edits that change no row (the card's text, the manifest's claims, the Parquet footers and schema, stray files),
# each left with the file SHA-256s, fingerprints and card hash recomputed, so only a check that rebuilds the whole
# folder from the generator can see them.


def _edit_manifest(change: Callable[[dict], None]) -> Callable[[Path], None]:
    def inject(folder: Path) -> None:
        manifest = json.loads((folder / MANIFEST_NAME).read_text(encoding="utf-8"))
        change(manifest)
        write_json_atomic(folder / MANIFEST_NAME, manifest)
    return inject


def _in_config(config: str, key: str, value: Callable[[object], object]) -> Callable[[dict], None]:
    def change(manifest: dict) -> None:
        entry = manifest["configs"][config]
        entry[key] = value(entry.get(key))
    return change


def _rewrite_files(config: str, edit: Callable[[pa.Table], tuple[pa.Table, dict]]) -> Callable[[Path], None]:
    """Rewrite every file of ``config`` as ``edit`` says (the table with its footer metadata -> the new table and
    writer options), then re-render the card from the footers and recompute the manifest."""
    def inject(folder: Path) -> None:
        for path in hub_layout.config_files(folder / config):
            table, options = edit(pq.read_table(path))
            pq.write_table(table, path, **{**hub_layout.PARQUET_OPTIONS, **options})
        _recompute_card_and_manifest(folder)
    return inject


def _footer(change: Callable[[dict], None], key: bytes = hub_layout.META_KEY):
    def edit(table: pa.Table) -> tuple[pa.Table, dict]:
        metadata = dict(table.schema.metadata)
        value = json.loads(metadata[key])
        change(value)
        metadata[key] = (canonical_json(value) if key == hub_layout.META_KEY else json.dumps(value)).encode("utf-8")
        return table.replace_schema_metadata(metadata), {}
    return edit


def _setter(key: str, value: object) -> Callable[[dict], None]:
    return lambda meta: meta.__setitem__(key, value)


def _footer_keys_reversed(table: pa.Table) -> tuple[pa.Table, dict]:
    metadata = dict(table.schema.metadata)
    meta = json.loads(metadata[hub_layout.META_KEY])
    metadata[hub_layout.META_KEY] = json.dumps(dict(reversed(meta.items())), separators=(",", ":")).encode("ascii")
    return table.replace_schema_metadata(metadata), {}


def _extra_footer_entry(table: pa.Table) -> tuple[pa.Table, dict]:
    return table.replace_schema_metadata({**table.schema.metadata, b"note": b"hand-checked"}), {}


def _cast(column: str, kind: pa.DataType):
    def edit(table: pa.Table) -> tuple[pa.Table, dict]:
        k = table.schema.get_field_index(column)
        return table.set_column(k, table.schema.field(k).with_type(kind), table.column(k).cast(kind)), {}
    return edit


def _not_nullable(column: str):
    def edit(table: pa.Table) -> tuple[pa.Table, dict]:
        k = table.schema.get_field_index(column)
        return table.cast(table.schema.set(k, table.schema.field(k).with_nullable(False))), {}
    return edit


def _first_column_last(table: pa.Table) -> tuple[pa.Table, dict]:
    return table.select(table.column_names[1:] + table.column_names[:1]), {}


def _shift_row_range(folder: Path) -> None:
    """The first row of file 1 of the origin config moved into file 0, both footers' row ranges edited to match."""
    files = hub_layout.config_files(folder / ORIGIN)
    tables = [pq.read_table(path) for path in files]
    whole = pa.concat_tables(tables)
    cut = tables[0].num_rows + 1
    for path, table, (start, stop) in zip(files, tables, [(0, cut), (cut, whole.num_rows)], strict=True):
        metadata = dict(table.schema.metadata)
        meta = json.loads(metadata[hub_layout.META_KEY])
        meta[hub_layout.FILE_KEY]["rows"] = [start, stop]
        metadata[hub_layout.META_KEY] = canonical_json(meta).encode("ascii")
        pq.write_table(whole.slice(start, stop - start).replace_schema_metadata(metadata), path,
                       **hub_layout.PARQUET_OPTIONS)
    _recompute_card_and_manifest(folder)


def _rename_config(folder: Path) -> None:
    """The graph config renamed everywhere: folder, rows (config_name, id), footers, card, manifest."""
    new = f"{GRAPH}_v2"
    (folder / GRAPH).rename(folder / new)
    for path in hub_layout.config_files(folder / new):
        table = pq.read_table(path)
        rows = [{**row, "config_name": new, "id": row["id"].replace(f"/{GRAPH}/", f"/{new}/")}
                for row in table.to_pylist()]
        metadata = dict(table.schema.metadata)
        meta = {**json.loads(metadata[hub_layout.META_KEY]), "config_name": new}
        metadata[hub_layout.META_KEY] = canonical_json(meta).encode("ascii")
        pq.write_table(pa.Table.from_pylist(rows, schema=table.schema.with_metadata(metadata)), path,
                       **hub_layout.PARQUET_OPTIONS)
    _recompute_card_and_manifest(folder)


def _seed_one_under_a_seed_zero_card(folder: Path) -> None:
    materialize([GRAPH], folder, overrides=GRAPH_SMALL, seed=1, progress=False)  # genuine --seed 1 rows
    card = folder / CARD_NAME
    text = card.read_text(encoding="utf-8")
    edited = text.replace("| seed | 1 |", "| seed | 0 |").replace(" --seed 1", "")
    assert edited != text
    card.write_text(edited, encoding="utf-8")
    _recompute_manifest(folder)


def _stray_file_listed(folder: Path) -> None:
    (folder / ORIGIN / "notes.txt").write_text("x", encoding="utf-8")
    _recompute_manifest(folder)  # lists every file of the config folder, with its SHA-256


def _swap_first_features(text: str) -> str:
    pair = "  - name: id\n    dtype: string\n  - name: family\n    dtype: string\n"
    return text.replace(pair, "  - name: family\n    dtype: string\n  - name: id\n    dtype: string\n", 1)


FAILS = ("): **fails** on these rows: a strategy marked FAIL beats chance + 0.05 (or a probe AUC exceeds "
         "0.5 + 0.1).")

# The 17 that `lurch validate` missed in issue 26's attack run.
TAMPER_FAULTS: dict[str, Callable[[Path], None]] = {
    "card: audit verdict flipped": _edit_card(lambda t: re.sub(r"\): passes: [^\n]*", FAILS, t, count=1)),
    "card: license": _edit_card(lambda t: re.sub(r"^license: .*$", "license: mit", t, count=1, flags=re.M)),
    "card: seed table": _edit_card(lambda t: t.replace("| seed | 0 |", "| seed | 7 |", 1)),
    "card: prose": _edit_card(lambda t: t.replace("Synthetic long-context", "Human-verified long-context", 1)),
    "manifest: shortcut_audit.passed": _edit_manifest(
        _in_config(ORIGIN, "shortcut_audit", lambda a: {**a, "passed": not a["passed"]})),
    "manifest: config_hash": _edit_manifest(_in_config(ORIGIN, "config_hash", lambda _: "0" * 64)),
    "manifest: family_version": _edit_manifest(_in_config(ORIGIN, "family_version", lambda _: "9.9.9")),
    "manifest: task": _edit_manifest(_in_config(ORIGIN, "task", lambda _: "find_the_origin_random")),
    "footer: description": _rewrite_files(ORIGIN, _footer(_setter("description", "human-verified origin task"))),
    "footer: paper_faithful": _rewrite_files(GRAPH, _footer(_setter("paper_faithful", True))),
    "footer: generator": _rewrite_files(ORIGIN, _footer(_setter("generator", "lurch-tasks 9.9.9"))),
    "seed 1 rows under a seed 0 card": _seed_one_under_a_seed_zero_card,
    "schema: int64 -> int32": _rewrite_files(ORIGIN, _cast("index", pa.int32())),
    "schema: int64 -> float64": _rewrite_files(GRAPH, _cast("seed", pa.float64())),
    "schema: string -> large_string": _rewrite_files(ORIGIN, _cast("id", pa.large_string())),
    "schema: column reorder": _rewrite_files(ORIGIN, _first_column_last),
    "stray file listed in the manifest": _stray_file_listed,
}

# Our own, in the same spirit.
OWN_TAMPER_FAULTS: dict[str, Callable[[Path], None]] = {
    "footer: row ranges edited consistently": _shift_row_range,
    "footer: lurch JSON key order": _rewrite_files(ORIGIN, _footer_keys_reversed),
    "footer: extra lurch key": _rewrite_files(GRAPH, _footer(_setter("note", "hand-checked"))),
    "footer: extra key-value entry": _rewrite_files(ORIGIN, _extra_footer_entry),
    "footer: huggingface info edited": _rewrite_files(
        GRAPH, _footer(lambda hf: hf["info"].__setitem__("description", "edited"), hub_layout.HF_META_KEY)),
    "schema: nullability": _rewrite_files(GRAPH, _not_nullable("id")),
    "parquet: row groups of one row": _rewrite_files(ORIGIN, lambda t: (t, {"row_group_size": 1})),
    "parquet: snappy compression": _rewrite_files(GRAPH, lambda t: (t, {"compression": "snappy",
                                                                          "compression_level": None})),
    "config renamed consistently": _rename_config,
    "card: dataset_info num_bytes": _edit_card(
        lambda t: re.sub(r"num_bytes: (\d+)", lambda m: f"num_bytes: {int(m[1]) + 1}", t, count=1)),
    "card: feature order in dataset_info": _edit_card(_swap_first_features),
    "card: rows in the configs table": _edit_card(lambda t: t.replace(f"| `{GRAPH}` | graph_reconstruction | 6 |",
                                                                      f"| `{GRAPH}` | graph_reconstruction | 60 |")),
    "card: generator line": _edit_card(lambda t: t.replace(f"| generator | {GENERATOR} |",
                                                           "| generator | lurch-tasks 9.9.9 |", 1)),
    "card: reproduce command": _edit_card(lambda t: t.replace(" --set 'num_samples=1'", "", 1)),
    "card: trailing blank line": _edit_card(lambda t: t + "\n"),
    "manifest: rows": _edit_manifest(_in_config(GRAPH, "rows", lambda n: n + 1)),
    "manifest: extra top-level key": _edit_manifest(lambda m: m.__setitem__("verified_by", "me")),
    "manifest: extra config key": _edit_manifest(_in_config(GRAPH, "verified", lambda _: True)),
    "manifest: format": _edit_manifest(lambda m: m.__setitem__("format", 3)),
    "manifest: generator": _edit_manifest(lambda m: m.__setitem__("generator", "lurch-tasks 9.9.9")),
    "manifest: audit score": _edit_manifest(_in_config(
        GRAPH, "shortcut_audit", lambda a: {**a, "lines": [{**a["lines"][0], "score": 0.5}, *a["lines"][1:]]})),
}

ALL_FAULTS = {**{f"row: {k}": v for k, v in ROW_FAULTS.items()},
              **{f"structure: {k}": v for k, v in STRUCTURE_FAULTS.items()},
              **{f"card: {k}": v for k, v in CARD_FAULTS.items()},
              **{f"tamper: {k}": v for k, v in TAMPER_FAULTS.items()},
              **{f"tamper (own): {k}": v for k, v in OWN_TAMPER_FAULTS.items()}}


# One test per fault, spread over both xdist workers (tests/conftest.py): each worker builds its own small
# pristine folder (seconds), which is cheaper than running ninety-odd validations on one worker.
SPREAD_OVER_WORKERS = True


def test_the_fault_catalogue_is_complete():
    assert len(ROW_FAULTS) >= 36 and len(TAMPER_FAULTS) == 17 and len(OWN_TAMPER_FAULTS) >= 10


@pytest.mark.parametrize("name", list(ALL_FAULTS))
def test_the_injected_fault_is_detected(pristine, tmp_path, name):
    folder = tmp_path / "data"
    shutil.copytree(pristine, folder)
    ALL_FAULTS[name](folder)
    try:
        problems = _problems(validate_folder(folder, progress=False))
    except ValueError as error:  # a folder too broken to read is reported as one line
        problems = [str(error)]
    assert problems, f"missed: {name}"
    assert all("\n" not in p for p in problems), (name, problems)
    if name.startswith("tamper"):  # each line names the file it is about
        assert problems[0].startswith((CARD_NAME, MANIFEST_NAME, ORIGIN, GRAPH)), (name, problems[0])


def test_the_recomputing_helpers_leave_a_good_folder_good(pristine, tmp_path):
    folder = tmp_path / "copy"
    shutil.copytree(pristine, folder)
    _rewrite_rows(folder, ORIGIN, _rows(folder, ORIGIN))  # the same rows, rewritten and re-vouched
    assert _problems(validate_folder(folder, progress=False)) == []


def test_a_genuine_folder_with_a_seed_a_limit_and_small_files_passes(tmp_path):
    """The request is rebuilt from the footers' claims (seed, limit, rows per file), not from the defaults."""
    folder = tmp_path / "data"
    materialize([ORIGIN], folder, overrides=ORIGIN_SMALL, seed=3, limit=5, max_rows_per_file=2, progress=False)
    assert _problems(validate_folder(folder, progress=False, load=False)) == []


def test_row_groups_are_cut_where_the_writer_cuts(tmp_path, monkeypatch):
    """With row groups of 2 rows, a genuine file of 3 rows has groups [2, 1]; the same rows in one group do not
    pass (the tamperer recomputes every hash)."""
    monkeypatch.setattr(hub_write, "ROW_GROUP_ROWS", 2)
    folder = tmp_path / "data"
    materialize([ORIGIN], folder, overrides=ORIGIN_SMALL, progress=False, max_rows_per_file=4)
    path = hub_layout.config_files(folder / ORIGIN)[0]
    assert [g.num_rows for g in map(pq.ParquetFile(path).metadata.row_group, range(2))] == [2, 1]
    assert _problems(validate_folder(folder, progress=False, load=False)) == []
    _rewrite_files(ORIGIN, lambda table: (table, {}))(folder)  # one row group per file
    problems = _problems(validate_folder(folder, progress=False, load=False))
    assert problems and all("row groups of [3] rows; materialize cuts this file into [2, 1]" in p for p in problems)


def test_a_malformed_manifest_entry_is_a_line_not_a_crash(pristine, tmp_path):
    folder = tmp_path / "copy"
    shutil.copytree(pristine, folder)
    _edit_manifest(lambda m: m["configs"].__setitem__(ORIGIN, [1]))(folder)
    _edit_manifest(_in_config(GRAPH, "files", lambda files: {**files, "../victim": "0" * 64}))(folder)
    problems = _problems(validate_folder(folder, progress=False, load=False))
    assert f"{MANIFEST_NAME}: configs.{ORIGIN} is not a config entry; allowed: the entry `lurch materialize` writes" \
        in problems
    assert "../victim: listed in lurch-manifest.json but missing" in problems
    assert all("\n" not in p for p in problems)
