"""Issue 28 item 5: the board ranks by the family-balanced headline and only like with like. Real submissions from
`lurch eval --log_samples` on a small declared standard (two tasks of two families, in full): the solver, a second
revision of it (a tie), the random baseline, a --limit subset, another task set and a stale family version."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from lurch_evals_one_process import lurch_evals
from test_leaderboard import SUBMISSION

from lurch_tasks import __version__
from lurch_tasks.analysis import headline
from lurch_tasks.analysis.frame import load_runs
from lurch_tasks.analysis.report import Options
from lurch_tasks.analysis.runs import find_runs
from lurch_tasks.core.registry import all_families, all_tasks
from lurch_tasks.leaderboard.build import Comparability, build, entry_key, partial_reasons, standard_key
from lurch_tasks.leaderboard.validate import Proof, Verdict

pytestmark = pytest.mark.slow

STANDARD = ("implicit_hop_scope", "memory_drift_subgraph")  # 32 + 45 docs: a full run takes seconds


def _submissions(work: Path, specs: dict[str, tuple[str, tuple[str, ...], int | None, dict]]) -> dict[str, Path]:
    """name -> (lm-eval model, tasks, --limit, submission metadata): every `lurch eval --log_samples` in one
    process (lurch_evals_one_process: lm-eval imported once), then each folder's submission.json."""
    folders = {name: work / name.replace("_", "-") for name in specs}
    lurch_evals([["--model", model, "--tasks", ",".join(tasks), "--log_samples", "--output_path", str(folders[name]),
                  *(["--limit", str(limit)] if limit else [])]
                 for name, (model, tasks, limit, _) in specs.items()], timeout=900)
    for name, (model, tasks, limit, meta) in specs.items():
        document = {**SUBMISSION, "model": {"name": model, "revision": "r1"}, "tasks": list(tasks),
                    "subset": limit is not None, **meta}
        (folders[name] / "submission.json").write_text(json.dumps(document))
    return folders


def _with_metadata(source: Path, target: Path, **meta) -> Path:
    shutil.copytree(source, target)
    document = json.loads((target / "submission.json").read_text())
    (target / "submission.json").write_text(json.dumps({**document, **meta}))
    return target


@pytest.fixture(scope="module")
def board(tmp_path_factory) -> dict:
    work = tmp_path_factory.mktemp("comparability")
    made = _submissions(work, {
        "solver": ("lurch-solver", STANDARD, None, {}),
        "random": ("lurch-random", STANDARD, None, {}),
        # a --limit run, and (below) one whose metadata claims a subset while its docs prove a full run
        "subset": ("lurch-solver", STANDARD, 4, {"model": {"name": "solver-subset", "revision": "r1"}}),
        "other_tasks": ("lurch-solver", STANDARD[:1], None, {"model": {"name": "one-task", "revision": "r1"}}),
    })
    solver = made["solver"]
    runs = {
        "solver": solver,
        # the same outputs under another revision: an exact tie
        "twin": _with_metadata(solver, work / "twin", model={"name": "lurch-solver", "revision": "r2"}),
        "random": made["random"],
        "subset": made["subset"],
    }
    runs.update({
        "subset_twin": _with_metadata(runs["subset"], work / "subset-twin",
                                      model={"name": "subset-twin", "revision": "r1"}),
        "claims_subset": _with_metadata(solver, work / "claims-subset", subset=True,
                                        model={"name": "claims-subset", "revision": "r1"}),
        "other_tasks": made["other_tasks"],
    })
    stale = _with_metadata(solver, work / "stale", model={"name": "stale", "revision": "r1"})
    path = next(stale.rglob("samples_implicit_hop_scope_2*.jsonl"))
    lines = path.read_text().splitlines()
    record = json.loads(lines[0])
    record["doc"]["family_version"] = "0.0.1"
    path.write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")
    runs["stale"] = stale
    out = work / "board"
    verdicts, text = build(list(runs.values()), out, options=Options(reps=200), standard=standard_key(STANDARD))
    return {"runs": runs, "verdicts": dict(zip(runs, verdicts, strict=True)), "text": text, "out": out,
            "data": json.loads((out / "leaderboard.json").read_text())}


def _rows(table: list[dict]) -> list[tuple]:
    return [(row["model"], row["revision"], row["rank"]) for row in table]


def test_only_like_with_like_is_ranked_together(board):
    data = board["data"]
    # main table: the standard in full, higher headline first, the two equal solvers tied at rank 1
    assert _rows(data["overall"]) == [("claims-subset", "r1", 1), ("lurch-solver", "r1", 1),
                                      ("lurch-solver", "r2", 1), ("lurch-random", "r1", 4)]
    assert [row["tie"] for row in data["overall"]] == [True, True, True, False]
    assert {row["coverage"] for row in data["overall"]} == {"full"}
    # partial table: grouped by key, ranked only within a group, each row saying why
    partial = {row["model"]: row for row in data["partial"]}
    assert set(partial) == {"solver-subset", "subset-twin", "one-task"}
    assert partial["solver-subset"]["group"] == partial["subset-twin"]["group"] != partial["one-task"]["group"]
    assert [(partial[m]["rank"], partial[m]["tie"]) for m in ("solver-subset", "subset-twin", "one-task")] == [
        (1, True), (1, True), (1, False)]
    assert partial["solver-subset"]["coverage"] == "--limit 4"
    assert partial["solver-subset"]["partial_because"] == "coverage --limit 4, the standard's is full"
    assert partial["one-task"]["partial_because"] == "misses 1 of 2 standard tasks (memory_drift_subgraph)"
    assert partial["one-task"]["tasks"] == "implicit_hop_scope"
    assert partial["one-task"]["versions"] == f"lurch-tasks {__version__} (implicit_hop 0.5.0)".replace(
        "0.5.0", next(f.version for f in all_families() if f.name == "implicit_hop"))
    # a stale family version is never ranked (its docs cannot be regenerated here): left out with its reason
    stale = board["verdicts"]["stale"]
    assert not stale.ok and any("family_version 0.0.1 differs" in p for p in stale.problems)
    assert "stale" not in json.dumps(data)
    # every output shows both tables
    markdown = (board["out"] / "leaderboard.md").read_text()
    assert "## Ranked: 2 tasks, full" in markdown and "## Partial" in markdown and "one\\-task" in markdown
    html = (board["out"] / "index.html").read_text()
    assert 'id="table-overall"' in html and 'id="table-partial"' in html and "misses 1 of 2 standard" in html
    columns = re.findall(r'data-column="([^"]+)"', html)
    assert {"headline", "headline:implicit_hop", "headline:graph_reconstruction"} <= set(columns)
    assert not [c for c in columns if c.endswith(("_lo", "_hi"))]  # a CI is shown in its number's cell
    assert "one-task" in (board["out"] / "partial.csv").read_text()
    assert "one-task" not in (board["out"] / "leaderboard.csv").read_text()
    assert "## Partial" in board["text"] and "one\\-task" in board["text"]


def test_the_headline_is_the_unweighted_mean_of_family_headlines_and_carries_a_ci(board):
    random = next(row for row in board["data"]["overall"] if row["model"] == "lurch-random")
    frame = load_runs(find_runs([board["runs"]["random"]])).frame
    # independently: per family, the mean over its balance keys of each key's mean; then the plain mean of families
    families = {family: rows.groupby("balance_key")["normalized_score"].mean().mean()
                for family, rows in frame.groupby("family")}
    assert set(families) == {"implicit_hop", "graph_reconstruction"}
    assert random["headline"] == pytest.approx(np.mean(list(families.values())), abs=1e-9)
    for family, value in families.items():
        assert random[f"headline:{family}"] == pytest.approx(value, abs=1e-9)
    assert random["headline_lo"] <= random["headline"] <= random["headline_hi"]
    assert random["headline_lo"] < random["headline_hi"]  # a real interval, not a point
    solver = next(row for row in board["data"]["overall"] if row["model"] == "lurch-solver")
    assert solver["headline"] == 1.0 and solver["headline_lo"] == 1.0
    # RULER-style columns: one per length bin of the standard's docs, each the headline of that bin's docs
    bins = sorted(int(b) for b in frame["length"].unique())
    assert sorted(int(k.split("@")[1]) for k in random if k.startswith("headline@")) == bins
    shortest = frame[frame["length"] == bins[0]]
    assert random[f"headline@{bins[0]}"] == pytest.approx(
        np.mean([rows.groupby("balance_key")["normalized_score"].mean().mean()
                 for _, rows in shortest.groupby("family")]), abs=1e-9)
    md = (board["out"] / "leaderboard.md").read_text()
    assert f"| {random['headline']:.3f} [{random['headline_lo']:.3f}, {random['headline_hi']:.3f}] |" in md


def test_family_balance_is_not_doc_weighting():
    # family a: key x has 3 docs at 1, key y 1 doc at 0 -> 0.5 (doc-weighted: 0.75); family b: 1 doc at 0
    frame = pd.DataFrame({"family": ["a"] * 4 + ["b"], "balance_key": ["x", "x", "x", "y", "z"],
                          "normalized_score": [1.0, 1.0, 1.0, 0.0, 0.0], "length": [1, 1, 2, 2, 2]})
    assert headline.family_headlines(frame) == {"a": 0.5, "b": 0.0}
    assert headline.overall(frame) == 0.25
    assert headline.by_length(frame) == {1: 1.0, 2: 0.25}
    boot = headline.bootstrap(frame, 50, 0)
    assert boot["overall"][0] == 0.25 and boot["a"][0] == 0.5
    assert boot == headline.bootstrap(frame, 50, 0)  # seeded
    assert boot["overall"][1] <= 0.25 <= boot["overall"][2]
    two = pd.concat([frame.assign(model="m1"), frame.assign(model="m2", normalized_score=1.0)])
    rows = headline.table(two, 50, 0).set_index("model")
    assert rows.loc["m1", "headline"] == 0.25 and rows.loc["m2", "headline"] == 1.0
    assert rows.loc["m1", "headline:a"] == 0.5 and rows.loc["m1", "headline_lo"] <= 0.25


def test_the_default_standard_is_memory_drift_in_full_from_the_registry():
    default = standard_key()
    assert default.tasks == tuple(sorted(t.name for t in all_tasks() if t.in_suite))
    assert default.coverage == "full" and default.lurch_tasks_version == __version__
    in_umbrella = {t.family for t in all_tasks() if t.in_suite}  # a family outside it (discovery) is not keyed
    assert dict(default.family_versions) == {f.name: f.version for f in all_families() if f.name in in_umbrella}


def test_the_key_is_what_the_docs_prove_and_every_difference_is_named():
    standard = standard_key(STANDARD)
    proof = Proof(tasks=(("implicit_hop_scope", 32, 32), ("memory_drift_subgraph", 45, 45)),
                  family_versions=standard.family_versions)
    meta = {"lurch_tasks_version": __version__, "subset": True, "tasks": ["memory_drift"]}  # metadata that lies
    assert entry_key(Verdict("x", (), meta, proof=proof)) == standard
    older = tuple((f, "0.0.1" if f == "implicit_hop" else v) for f, v in standard.family_versions)
    partial = Proof(tasks=(("implicit_hop_scope", 3, 32), ("find_the_origin", 3, 224)), family_versions=older)
    key = entry_key(Verdict("y", (), {**meta, "lurch_tasks_version": "0.0.9"}, proof=partial))
    assert key == Comparability(("implicit_hop_scope", "find_the_origin"), "--limit 3", "0.0.9", older)
    assert partial_reasons(key, standard) == (
        "misses 1 of 2 standard tasks (memory_drift_subgraph); covers tasks outside the standard (find_the_origin); "
        f"coverage --limit 3, the standard's is full; lurch-tasks 0.0.9, the standard's is {__version__}; "
        f"implicit_hop 0.0.1, the standard's is {dict(standard.family_versions)['implicit_hop']}")
