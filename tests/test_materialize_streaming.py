"""materialize streams: the shortcut audit fed one row at a time (the card, `lurch audit-shortcuts`) gives
exactly the numbers of the audit over a list of rows, and the card's audit is that of the evenly spaced rows
read back from the written files."""

from __future__ import annotations

import dataclasses
import json
import statistics
from pathlib import Path

import pytest

from lurch_tasks.core.generation import MAX_SEED, generate_row, resolve_task, task_size
from lurch_tasks.core.registry import get_family
from lurch_tasks.core.shortcuts import (
    MARGIN,
    NOISE_Z,
    PROBE_MARGIN,
    AuditLine,
    TaskAuditor,
    _status,
    audit_rows,
    audit_task,
    lines_to_json,
    mean,
    rank_auc,
    run_audit,
    spread_indices,
)
from lurch_tasks.hub import MaterializeRequest, materialize, summarize_folder
from lurch_tasks.hub import build as hub_build
from lurch_tasks.hub import write as hub_write
from lurch_tasks.hub.shards import finalize, write_shard
from lurch_tasks.hub.store import Store

CASES = {
    "find_the_origin_random": {"context_tokens": [384], "num_samples": 1},
    "memory_drift_edge_decoys": {"context_tokens": [2048], "connections": [1, 3], "num_samples": 3},  # calibration
}


def _noise(values: list[float], chance_values: list[float]) -> float:
    """NOISE_Z standard errors of (mean of values - mean of chance values), from the raw per-row lists."""
    if len(values) < 2:
        return 0.0
    se2 = statistics.variance(values) / len(values)
    if len(chance_values) >= 2:  # the chance side's variance is at least the strategy's (alike under the null)
        se2 += max(statistics.variance(chance_values), statistics.variance(values)) / len(chance_values)
    return NOISE_Z * se2 ** 0.5


def _reference_lines(rows, config, paper_faithful, family, calibration):
    """The audit as it was computed before it streamed: every shortcut over all rows, then every probe."""
    chance_values = [family.score(row, family.guess(row["prompt"], 0) or "")["score"] for row in rows]
    chance = mean(chance_values)
    lines = []
    for shortcut in family.shortcuts:
        per_row = {k: [family.score(row, shortcut.answer(row["prompt"], variant))["score"] for row in rows]
                   for k, variant in enumerate(shortcut.variants)}
        totals = {k: sum(values) for k, values in per_row.items()}
        best_k = max(totals, key=lambda k: (totals[k], -k))
        best = totals[best_k] / len(rows)
        expected = bool(shortcut.expected_when and shortcut.expected_when(config))
        note = "" if shortcut.variants[best_k] is None else f"best variant {shortcut.variants[best_k]}"
        if expected:
            note = (note + "; " if note else "") + "the regularity this config studies"
        noise = _noise(per_row[best_k], chance_values)
        if MARGIN < best - chance <= noise:
            note = (note + "; " if note else "") + f"within noise on {len(rows)} rows (< {noise:.3f})"
        lines.append(AuditLine(shortcut.name, shortcut.kind, best, chance,
                               _status(best, chance, expected, paper_faithful, noise=noise), note))
    for probe in family.probes:
        noise = 0.0
        if probe.categorical:
            counts: dict = {}
            learned = [pair for row in calibration or rows for pair in probe.features(row)]
            for label, gold in learned:
                counts.setdefault(label, [0, 0])[int(gold)] += 1
            rate = {label: gold / (gold + other) for label, (other, gold) in counts.items()}
            base = mean([float(gold) for _, gold in learned])
            auc = rank_auc([(rate.get(label, base), gold) for row in rows for label, gold in probe.features(row)])
            aucs = [] if auc is None else [auc]
        else:
            aucs = [auc for row in rows if (auc := rank_auc(probe.features(row))) is not None]
            noise = _noise(aucs, [])
        raw = mean(aucs) if aucs else 0.5
        folded = max(raw, 1.0 - raw)
        note = f"{'gold higher' if raw >= 0.5 else 'gold lower'}, {len(aucs)} rows; pass <= {0.5 + PROBE_MARGIN:g}"
        if PROBE_MARGIN < folded - 0.5 <= noise:
            note += f"; within noise (< {0.5 + noise:.3f})"
        lines.append(AuditLine(f"{probe.name} (AUC)", probe.kind, folded, 0.5,
                               _status(folded, 0.5, False, paper_faithful, PROBE_MARGIN, noise), note))
    return lines


@pytest.mark.parametrize("name", sorted(CASES))
def test_streamed_audit_equals_the_list_audit_float_for_float(name: str) -> None:
    task = resolve_task(name, CASES[name])
    family = get_family(task.family)
    indices = spread_indices(task_size(task), 8)
    rows = [generate_row(task, i) for i in indices]
    calibration = []
    if any(probe.categorical for probe in family.probes):
        other = dataclasses.replace(task, seed=(task.seed + 1) % (MAX_SEED + 1))
        calibration = [generate_row(other, i) for i in indices]
    expected = _reference_lines(rows, task.config, task.paper_faithful, family, calibration)
    # the learned probe fits once over everything kept, so its lines are those of the list audit
    expected += run_audit(rows, task.config, task.paper_faithful, [], [], family.score, family.guess,
                          learned=family.learned_probe, chance=family.chance and family.chance(task.config))

    auditor = TaskAuditor(task)
    for row in rows:
        auditor.add(row)
    assert list(auditor.result().lines) == expected  # exact floats, not approx
    assert list(audit_rows(task, iter(rows)).lines) == expected
    assert list(audit_task(task, 8).lines) == expected


def test_card_audit_is_the_audit_of_the_evenly_spaced_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = "memory_drift_edge_decoys"
    monkeypatch.setattr(hub_write, "AUDIT_ROWS", 5)
    out = materialize([name], tmp_path / "out", overrides=CASES[name], progress=False)
    task = resolve_task(name, CASES[name])
    chosen = spread_indices(task_size(task), 5)
    assert 1 < len(chosen) < task_size(task)
    expected = audit_rows(task, [generate_row(task, i) for i in chosen])
    [summary] = summarize_folder(out)
    lines = lines_to_json(expected.lines)
    assert summary.shortcut_audit == {"rows": len(chosen), "passed": expected.passed, "lines": lines}


# ---------------------------------------------------------------- the audit measured where the rows are written

SPLIT_CASES = {  # (config, overrides, limit, rows per file): several files, a family with calibration rows
    "memory_drift_edge_decoys": (CASES["memory_drift_edge_decoys"], None, 2),
    "implicit_hop_depth": (None, 9, 2),
}


@pytest.mark.parametrize("name", sorted(SPLIT_CASES))
def test_audit_measured_per_file_is_the_serial_audit(name: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers measure the audited rows of the files they write; finalize replays those measures. The card
    must carry exactly the audit the old finalize computed by reading every audited row back (``serial_audit``),
    whether the files were written by worker processes or by separate shards."""
    overrides, limit, per_file = SPLIT_CASES[name]
    monkeypatch.setattr(hub_write, "AUDIT_ROWS", 5)
    request = MaterializeRequest.create([name], overrides, None, limit, per_file)
    assert len(request.files) >= 3
    read_rows = hub_build._read_rows

    def no_reading(*args: object) -> None:
        raise AssertionError("finalize read rows back although the workers measured them")

    monkeypatch.setattr(hub_build, "_read_rows", no_reading)
    pooled = materialize([name], tmp_path / "pooled", overrides=overrides, limit=limit,
                         max_rows_per_file=per_file, num_proc=2, progress=False)
    monkeypatch.setattr(hub_build, "_read_rows", read_rows)
    reference = hub_build.serial_audit(request, name, Store.at(str(pooled)))
    monkeypatch.setattr(hub_build, "_read_rows", no_reading)
    assert reference["rows"] == 5
    [summary] = summarize_folder(pooled)
    assert summary.shortcut_audit == reference

    sharded = tmp_path / "sharded"
    for shard in range(2):
        write_shard(request, str(sharded), shard, 2, progress=False)
    staged = list(tmp_path.glob(".sharded*/records/*/*.json"))
    assert staged and all(json.loads(p.read_text())["audit"] for p in staged[:1])
    finalize(str(sharded), progress=False)
    [summary] = summarize_folder(sharded)
    assert summary.shortcut_audit == reference


def test_records_without_measures_are_read_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A record of an older run (no ``audit``) or an unreadable one: finalize reads those rows back instead."""
    name = "implicit_hop_depth"
    monkeypatch.setattr(hub_write, "AUDIT_ROWS", 4)
    request = MaterializeRequest.create([name], None, None, 8, 2)
    out = materialize([name], tmp_path / "out", limit=8, max_rows_per_file=2, progress=False)
    store = Store.at(str(out))
    reference = hub_build.serial_audit(request, name, store)
    records = {f.path: hub_write.FileRecord(f.path, "", 0, f.rows, 0, ()) for f in request.files}
    assert hub_build._audit(request, name, store, records) == reference
    broken = {path: dataclasses.replace(r, audit="not base64!") for path, r in records.items()}
    assert hub_build._audit(request, name, store, broken) == reference
