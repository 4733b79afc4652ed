"""``lurch leaderboard build``: validated submissions -> ranked tables (Markdown, CSV, JSON, a sortable index.html).

Only submissions that pass ``validate`` appear; each is unpacked once, and one that fails in any way is left out with
its reason while the board is built from the others. Each is re-scored from its raw outputs (``analysis.frame``), so
the table never shows a claimed number. A model is its (name, revision) in every table: two revisions are two rows.
Text from submissions is written inert: control characters escaped everywhere, Markdown cells escaped, CSV cells
never start a formula (the HTML page escapes its own). Ranking is by the headline memory drift (lower is better),
overall and per family; equal values at the shown precision share a rank, marked ``=``. Every number carries a
seeded bootstrap 95% CI, and drift onset / effective length come from the same code as ``lurch report``.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .. import __version__
from ..analysis.frame import load_runs
from ..analysis.render import markdown_table
from ..analysis.report import Options, length_table
from ..analysis.runs import find_runs
from ..analysis.stats import summarize
from ..core.files import check_owned_folder, owned_files, write_owned_folder
from ..core.text import csv_cell, markdown_cell, printable
from .html import Column, LeaderboardTable, render_index
from .validate import Verdict, validate_and_load

HEADLINE = ("memory_drift", "score", "precision", "recall", "f1")
MANIFEST = ".lurch-leaderboard.json"
TOOL = "lurch leaderboard build"
RANK_DIGITS = 3


@dataclass(frozen=True)
class Entry:
    verdict: Verdict
    frame: pd.DataFrame

    @property
    def name(self) -> str:
        return self.verdict.metadata["model"]["name"]


def identity(model: dict) -> str:
    """The key one model has in every frame and table while the board is computed: its name *and* revision, so two
    revisions of one name are never grouped together (``with_revision`` turns it back into two columns)."""
    return json.dumps([printable(model["name"]), printable(model["revision"])])


def with_revision(table: pd.DataFrame) -> pd.DataFrame:
    """``model`` keys (``identity``) split back into the ``model`` name and its ``revision``, beside each other."""
    if table.empty or "model" not in table:
        return table
    pairs = [json.loads(key) for key in table["model"]]
    table = table.drop(columns=[c for c in ("revision",) if c in table]).assign(
        model=[name for name, _ in pairs], revision=[revision for _, revision in pairs])
    columns = list(table.columns)
    columns.remove("revision")
    columns.insert(columns.index("model") + 1, "revision")
    return table[columns]


def load_entry(verdict: Verdict, folder: Path) -> Entry:
    """A validated submission's docs (from its unpacked ``folder``) re-scored, keyed by its model's identity."""
    frame = load_runs(find_runs([folder])).frame
    return Entry(verdict, frame.assign(model=identity(verdict.metadata["model"])))


def ranked(table: pd.DataFrame, by: str = "memory_drift") -> pd.DataFrame:
    """Rows sorted by ``by`` (lower is better) with ``rank`` and ``tie`` (equal at the shown precision)."""
    table = table.sort_values([by, "model"], kind="stable").reset_index(drop=True)
    shown = table[by].round(RANK_DIGITS)
    ranks = shown.rank(method="min").astype(int)
    ties = shown.duplicated(keep=False)
    return table.assign(rank=ranks, tie=ties)


def overall_table(entries: list[Entry], options: Options) -> pd.DataFrame:
    rows = []
    for entry in entries:
        summary = summarize(entry.frame, ["model"], HEADLINE, reps=options.reps, seed=options.seed).iloc[0].to_dict()
        families = summarize(entry.frame, ["family"], ("score",), reps=0, seed=options.seed)
        meta = entry.verdict.metadata
        summary.update({"seed": _seed_label(meta), "coverage": "subset" if meta.get("subset") else "full",
                        "docs": entry.verdict.docs, "lm_eval_model": printable(meta["run"]["lm_eval_model"]),
                        "date": printable(meta["date"])})
        summary.update({f"score:{row['family']}": row["score"] for _, row in families.iterrows()})
        rows.append(summary)
    table = with_revision(ranked(pd.DataFrame(rows)).drop(columns=["n"]))
    first = ["rank", "tie", "model", "revision", "seed", "coverage"]
    return table[first + [c for c in table.columns if c not in first]]


def family_tables(entries: list[Entry], options: Options) -> dict[str, pd.DataFrame]:
    frame = pd.concat([entry.frame for entry in entries], ignore_index=True)
    tables = {}
    for family, rows in frame.groupby("family", sort=True):
        table = with_revision(ranked(summarize(rows, ["model"], HEADLINE, reps=options.reps, seed=options.seed)))
        first = ["rank", "tie", "model", "revision"]
        tables[family] = table[first + [c for c in table.columns if c not in first]]
    return tables


def lengths(entries: list[Entry], options: Options) -> pd.DataFrame:
    frame = pd.concat([entry.frame for entry in entries], ignore_index=True)
    table = length_table(frame, options)
    if table.empty:
        return table
    table = with_revision(table)
    columns = ["model", "revision", "task", "shortest", "longest", "drift_onset", "drift_onset_lo", "drift_onset_hi",
               "effective_length", "effective_length_lo", "effective_length_hi"]
    return table[columns]


def display(table: pd.DataFrame) -> pd.DataFrame:
    """Ties shown in the rank column ("=2"), as the page shows them."""
    if "tie" not in table:
        return table
    ranks = [f"={r}" if tie else str(r) for r, tie in zip(table["rank"], table["tie"], strict=True)]
    return table.drop(columns=["tie"]).assign(rank=ranks)


def markdown_text(table: pd.DataFrame) -> str:
    """A Markdown table whose text cells show submission text literally (no forged cells, rows, links or HTML)."""
    return markdown_table(_cells(table, markdown_cell))


def csv_text(table: pd.DataFrame) -> str:
    """CSV whose text cells a spreadsheet shows as text (no formula prefix, no control characters)."""
    return _cells(table, csv_cell).to_csv(index=False)


def _cells(table: pd.DataFrame, inert: Callable[[str], object]) -> pd.DataFrame:
    """``table`` with ``inert`` applied to every text cell (whatever dtype pandas gave the column)."""
    text = [c for c in table.columns if any(isinstance(v, str) for v in table[c])]
    return table.assign(**{c: [inert(v) if isinstance(v, str) else v for v in table[c]] for c in text})


def _seed_label(meta: dict) -> str:
    if meta.get("private_seed_sha256"):
        return f"private (sha256 {printable(meta['private_seed_sha256'][:12])})"
    return "public" if meta["seed"] == 0 else f"seed {meta['seed']}"


def _number(name: str, label: str, higher: bool | None, help_text: str = "") -> Column:
    return Column(name, label, "number", higher, help_text)


def _html_tables(overall: pd.DataFrame, families: dict[str, pd.DataFrame], spans: pd.DataFrame) -> list:
    family_columns = sorted(c for c in overall.columns if c.startswith("score:"))
    tables = [LeaderboardTable("overall", "Overall", (
        Column("rank", "rank", "rank", False), Column("model", "model", "text", None),
        Column("revision", "revision", "text", None), Column("seed", "seed", "text", None, "public or private seed"),
        Column("coverage", "coverage", "text", None, "full, or a declared --limit subset"),
        _number("memory_drift", "memory drift", False, "lower is better; 95% bootstrap CI"),
        _number("score", "score", True), _number("f1", "F1", True),
        *(_number(c, c.split(":", 1)[1], True, "family score") for c in family_columns),
        _number("docs", "docs", None)), tuple(_records(overall)))]
    for family, table in families.items():
        tables.append(LeaderboardTable(f"family-{family}", family, (
            Column("rank", "rank", "rank", False), Column("model", "model", "text", None),
            Column("revision", "revision", "text", None),
            _number("memory_drift", "memory drift", False), _number("score", "score", True),
            _number("precision", "precision", True), _number("recall", "recall", True), _number("f1", "F1", True),
            _number("n", "docs", None)), tuple(_records(table))))
    if not spans.empty:
        tables.append(LeaderboardTable("lengths", "Drift onset and effective length (tokens)", (
            Column("model", "model", "text", None), Column("revision", "revision", "text", None),
            Column("task", "task", "text", None),
            _number("drift_onset", "drift onset", True, "first length bin where drift rises; empty: none"),
            _number("effective_length", "effective length", True),
            _number("longest", "longest bin", None)), tuple(_records(spans))))
    return tables


def _records(table: pd.DataFrame) -> list[dict]:
    return [{key: (None if isinstance(value, float) and math.isnan(value) else value) for key, value in row.items()}
            for row in json.loads(table.to_json(orient="records"))]


def build(submissions: list[Path], out: Path, *, options: Options | None = None, overwrite: bool = False,
          progress: Callable[[str], None] | None = None, workers: int = 1) -> tuple[list[Verdict], str]:
    """Validate every submission, rank those that pass, write the board into ``out``; return every verdict and the
    overall table as Markdown."""
    options = options or Options()
    check_owned_folder(out, overwrite, MANIFEST, TOOL)
    verdicts, entries = [], []
    for path in submissions:
        if progress is not None:
            progress(f"validating {printable(path)}")
        verdict, entry = validate_and_load(path, load_entry, workers=workers)  # unpacked once for both
        if entry is not None:
            key = identity(verdict.metadata["model"])
            twin = next((e for e in entries if identity(e.verdict.metadata["model"]) == key), None)
            if twin is not None:
                name, revision = json.loads(key)
                verdict = dataclasses.replace(verdict, problems=(
                    f"the same model and revision ({name} {revision}) as {printable(twin.verdict.submission)}",))
            else:
                entries.append(entry)
        verdicts.append(verdict)
    if not entries:
        first = verdicts[0] if verdicts else None
        why = f" ({printable(first.submission)}: {first.problems[0]})" if first and first.problems else ""
        more = f" (and {len(verdicts) - 1} more left out)" if len(verdicts) > 1 else ""
        raise ValueError(f"submissions: none passed validation{why}{more}; allowed: at least one valid submission "
                         "(see `lurch leaderboard validate`)")
    overall = overall_table(entries, options)
    families = family_tables(entries, options)
    spans = lengths(entries, options)
    markdown = "\n\n".join([f"# lurch-tasks leaderboard\n\nlurch-tasks {__version__}; ranked by memory drift (lower "
                            "is better); 95% bootstrap CIs.", "## Overall", markdown_text(display(overall))]
                           + [f"## {family}\n\n{markdown_text(display(table))}" for family, table in families.items()]
                           + ([f"## Drift onset and effective length\n\n{markdown_text(spans)}"]
                              if not spans.empty else [])) + "\n"
    html = render_index("lurch-tasks leaderboard", f"Validated submissions, re-scored from their raw outputs "
                        f"(lurch-tasks {__version__}). Ranked by memory drift, lower is better; = marks a tie. "
                        "Click a column header to sort.", _html_tables(overall, families, spans))
    data = {"lurch_tasks_version": __version__, "overall": _records(overall),
            "families": {family: _records(table) for family, table in families.items()},
            "lengths": _records(spans) if not spans.empty else []}
    files = {"leaderboard.md": markdown, "index.html": html, "leaderboard.json": json.dumps(data, indent=2) + "\n",
             "leaderboard.csv": csv_text(overall)}
    files.update({f"{family}.csv": csv_text(table) for family, table in families.items()})
    if not spans.empty:
        files["lengths.csv"] = csv_text(spans)
    write_owned_folder(out, {name: text.encode("utf-8") for name, text in files.items()}, MANIFEST, TOOL,
                       __version__)
    short = ["rank", "model", "revision", "seed", "coverage", *[f"{m}{suffix}" for m in ("memory_drift", "score", "f1")
                                                      for suffix in ("", "_lo", "_hi")], "docs"]
    return verdicts, markdown_text(display(overall)[short])


def board_files(folder: Path) -> list[str]:
    """The files a build wrote into ``folder`` (its manifest's list, manifest included)."""
    manifest = Path(folder) / MANIFEST
    if not manifest.is_file():
        raise ValueError(f"folder: {str(folder)!r} has no {MANIFEST}; allowed: a folder written by "
                         "`lurch leaderboard build`")
    listed = [*owned_files(Path(folder), MANIFEST, TOOL), MANIFEST]  # each inside the folder (untrusted manifest)
    missing = [name for name in listed if not (Path(folder) / name).is_file()]
    if missing:
        raise ValueError(f"folder: {missing[0]} is listed in {MANIFEST} but missing; allowed: the folder as built")
    return sorted(listed)


def push(folder: Path, repo_id: str, *, dry_run: bool, private: bool = False) -> list[str]:
    """Upload a built board to the Hub dataset repo ``repo_id`` (``--dry-run``: only list the files)."""
    from ..hub.upload import check_repo_id, upload_files

    check_repo_id(repo_id)
    files = board_files(folder)
    if not dry_run:
        upload_files(Path(folder), repo_id, files, private=private, token=None,
                     message=f"lurch-tasks {__version__}: leaderboard")
    return files
