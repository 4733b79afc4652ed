"""``lurch leaderboard build``: validated submissions -> ranked tables (Markdown, CSV, JSON, a sortable index.html).

Only submissions that pass ``validate`` appear; each is unpacked once, and one that fails in any way is left out with
its reason while the board is built from the others. Each is re-scored from its raw outputs (``analysis.frame``), so
the table never shows a claimed number. A model is its (name, revision) in every table: two revisions are two rows.
Text from submissions is written inert: control characters escaped everywhere, Markdown cells escaped, CSV cells
never start a formula (the HTML page escapes its own).

Like with like: a submission's ``Comparability`` key is (the lm-eval tasks its docs cover, full or ``--limit N``, the
lurch-tasks version, each covered family's version), read from what the docs prove. Only submissions whose key is the
board's standard (default: the umbrella ``memory_drift`` at its default grid, in full, under this release) are ranked
in the main table; every other one goes to the partial table, grouped by key, ranked only within its group, with its
key and the reason it is partial. Ranking is by the family-balanced headline (``analysis.headline``, higher is
better); equal values at the shown precision share a rank, marked ``=``. Every number carries a seeded bootstrap 95%
CI, and drift onset / effective length come from the same code as ``lurch report``.
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
from ..analysis import headline
from ..analysis.frame import load_runs
from ..analysis.render import markdown_table
from ..analysis.report import Options, length_table
from ..analysis.runs import find_runs
from ..analysis.stats import summarize
from ..core.files import check_owned_folder, owned_files, write_owned_folder
from ..core.registry import get_family, get_task
from ..core.text import csv_cell, markdown_cell, printable
from .html import Column, LeaderboardTable, render_index
from .validate import UMBRELLA, Verdict, expand_tasks, validate_and_load

METRICS = ("memory_drift", "score", "precision", "recall", "f1")
HEADLINE = "headline"
MANIFEST = ".lurch-leaderboard.json"
TOOL = "lurch leaderboard build"
RANK_DIGITS = 3
MAX_NAMED = 4  # tasks named in a partial row's reason


@dataclass(frozen=True)
class Comparability:
    """What must be equal for two submissions to be ranked together: the lm-eval tasks covered, how (``full``, or
    ``--limit N``: the first N docs of each task), the lurch-tasks version and each covered family's version."""

    tasks: tuple[str, ...]
    coverage: str
    lurch_tasks_version: str
    family_versions: tuple[tuple[str, str], ...]

    def versions(self) -> str:
        families = ", ".join(f"{family} {version}" for family, version in self.family_versions)
        return f"lurch-tasks {self.lurch_tasks_version} ({families})"

    def label(self) -> str:
        return f"{len(self.tasks)} tasks, {self.coverage}, {self.versions()}"


def standard_key(names: tuple[str, ...] = (UMBRELLA,)) -> Comparability:
    """The board's standard: ``names`` (tasks or groups; default the umbrella ``memory_drift`` at its default grid,
    taken from the registry) in full under this lurch-tasks and the installed family versions."""
    tasks, unknown = expand_tasks(names)
    if unknown or not tasks:
        raise ValueError(f"standard: {', '.join(map(repr, unknown)) or 'no task'}; allowed: lurch-tasks task or "
                         "group names")
    families = sorted({get_task(task).family for task in tasks})
    return Comparability(tuple(tasks), "full", __version__,
                         tuple((family, get_family(family).version) for family in families))


def entry_key(verdict: Verdict) -> Comparability:
    """A validated submission's key from what its docs prove (tasks logged, how many docs of each, the docs'
    family versions), not from what ``submission.json`` claims; only the package version comes from the metadata
    (the validator refuses any other)."""
    proven = verdict.proof.tasks
    short = [logged for _, logged, size in proven if logged < size]
    coverage = "full" if not short else f"--limit {max(short)}"
    return Comparability(tuple(task for task, _, _ in proven), coverage,
                         str(verdict.metadata["lurch_tasks_version"]), verdict.proof.family_versions)


def partial_reasons(key: Comparability, standard: Comparability) -> str:
    """Why a submission is not ranked with the standard: every way its key differs."""
    reasons = []
    missing = sorted(set(standard.tasks) - set(key.tasks))
    extra = sorted(set(key.tasks) - set(standard.tasks))
    if missing:
        reasons.append(f"misses {len(missing)} of {len(standard.tasks)} standard tasks ({_named(missing)})")
    if extra:
        reasons.append(f"covers tasks outside the standard ({_named(extra)})")
    if key.coverage != standard.coverage:
        reasons.append(f"coverage {key.coverage}, the standard's is {standard.coverage}")
    if key.lurch_tasks_version != standard.lurch_tasks_version:
        reasons.append(f"lurch-tasks {key.lurch_tasks_version}, the standard's is {standard.lurch_tasks_version}")
    wanted = dict(standard.family_versions)
    for family, version in key.family_versions:
        if family in wanted and wanted[family] != version:
            reasons.append(f"{family} {version}, the standard's is {wanted[family]}")
    return "; ".join(reasons) or "equal key"


def _named(tasks: list[str]) -> str:
    return ", ".join(tasks[:MAX_NAMED]) + (f" and {len(tasks) - MAX_NAMED} more" if len(tasks) > MAX_NAMED else "")


@dataclass(frozen=True)
class Entry:
    verdict: Verdict
    frame: pd.DataFrame

    @property
    def name(self) -> str:
        return self.verdict.metadata["model"]["name"]

    @property
    def key(self) -> Comparability:
        return entry_key(self.verdict)


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


def ranked(table: pd.DataFrame, by: str = HEADLINE, higher_is_better: bool = True) -> pd.DataFrame:
    """Rows sorted best first by ``by`` with ``rank`` and ``tie`` (equal at the shown precision)."""
    if table.empty:
        return table.assign(rank=pd.Series(dtype=int), tie=pd.Series(dtype=bool))
    shown = table[by].round(RANK_DIGITS)
    table = table.assign(_order=-shown if higher_is_better else shown).sort_values(["_order", "model"], kind="stable")
    table = table.drop(columns=["_order"]).reset_index(drop=True)
    shown = table[by].round(RANK_DIGITS)
    ranks = shown.rank(method="min", ascending=not higher_is_better).astype(int)
    ties = shown.duplicated(keep=False)
    return table.assign(rank=ranks, tie=ties)


def headline_row(entry: Entry, options: Options) -> dict:
    """One submission's numbers: the family-balanced headline with its CI, each family's headline, the headline per
    length bin, and the raw metrics (memory drift, score, F1 ...) with theirs."""
    frame = entry.frame
    row = summarize(frame, ["model"], METRICS, reps=options.reps, seed=options.seed).iloc[0].to_dict()
    for name, (value, low, high) in headline.bootstrap(frame, options.reps, options.seed).items():
        column = HEADLINE if name == "overall" else f"{HEADLINE}:{name}"
        row.update({column: value, f"{column}_lo": low, f"{column}_hi": high})
    row.update({f"{HEADLINE}@{length}": value for length, value in headline.by_length(frame).items()})
    meta = entry.verdict.metadata
    row.update({"seed": _seed_label(meta), "coverage": entry.key.coverage, "docs": entry.verdict.docs,
                "lm_eval_model": printable(meta["run"]["lm_eval_model"]), "date": printable(meta["date"])})
    return row


def overall_table(entries: list[Entry], options: Options) -> pd.DataFrame:
    """The main table: submissions whose key is the standard, ranked by the headline (higher is better)."""
    if not entries:
        return pd.DataFrame()
    table = with_revision(ranked(pd.DataFrame([headline_row(e, options) for e in entries])).drop(columns=["n"]))
    return _ordered(table, ["rank", "tie", "model", "revision", "seed", "coverage"])


def partial_table(entries: list[Entry], standard: Comparability, options: Options) -> pd.DataFrame:
    """Every other submission: grouped by key (``group``), ranked only within its group, with its key and why it is
    partial. Groups are ordered by key: widest task set first, full before --limit."""
    if not entries:
        return pd.DataFrame()
    keys = sorted({e.key for e in entries}, key=lambda k: (-len(k.tasks), k.coverage != "full", k.label(), k.tasks))
    parts = []
    for number, key in enumerate(keys, start=1):
        rows = [{**headline_row(e, options), "group": number, "tasks": ", ".join(key.tasks),
                 "versions": key.versions(), "partial_because": partial_reasons(key, standard)}
                for e in entries if e.key == key]
        parts.append(ranked(pd.DataFrame(rows)))
    table = with_revision(pd.concat(parts, ignore_index=True).drop(columns=["n"]))
    return _ordered(table, ["group", "rank", "tie", "model", "revision", "seed", "coverage", "partial_because"],
                    last=["tasks", "versions"])


def _ordered(table: pd.DataFrame, first: list[str], last: tuple[str, ...] | list[str] = ()) -> pd.DataFrame:
    """Columns: ``first``, the headline, its families and lengths, the raw metrics, the rest, then ``last``."""
    heads = [HEADLINE, f"{HEADLINE}_lo", f"{HEADLINE}_hi"]
    families = sorted(c for c in table.columns if c.startswith(f"{HEADLINE}:"))
    lengths = sorted((c for c in table.columns if c.startswith(f"{HEADLINE}@")), key=lambda c: int(c.split("@")[1]))
    lead = [*first, *heads, *families, *lengths]
    middle = [c for c in table.columns if c not in lead and c not in last]
    return table[lead + middle + list(last)]


def family_tables(entries: list[Entry], options: Options) -> dict[str, pd.DataFrame]:
    """Per family, the main table's submissions ranked by the family headline (higher is better)."""
    if not entries:
        return {}
    frame = pd.concat([entry.frame for entry in entries], ignore_index=True)
    tables = {}
    for family, rows in frame.groupby("family", sort=True):
        table = summarize(rows, ["model"], METRICS, reps=options.reps, seed=options.seed)
        heads = {model: headline.bootstrap(docs, options.reps, options.seed)[family]
                 for model, docs in rows.groupby("model", sort=True)}
        table = table.assign(**{HEADLINE: [heads[m][0] for m in table["model"]],
                                f"{HEADLINE}_lo": [heads[m][1] for m in table["model"]],
                                f"{HEADLINE}_hi": [heads[m][2] for m in table["model"]]})
        table = with_revision(ranked(table))
        first = ["rank", "tie", "model", "revision", HEADLINE, f"{HEADLINE}_lo", f"{HEADLINE}_hi"]
        tables[str(family)] = table[first + [c for c in table.columns if c not in first]]
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


def _number(name: str, label: str, higher: bool | None, help_text: str = "", **more) -> Column:
    return Column(name, label, "number", higher, help_text, **more)


BY_FAMILY = "headline by family"
BY_LENGTH = "headline by length bin (tokens)"
# What an empty number means in the ranked and partial tables: every ranked submission covers the standard, so only
# a partial one can lack a family or a length bin.
NO_DOCS = "not evaluated: the submission has no docs for this column (a family or length bin outside its tasks)"
NO_ONSET = ("no drift onset within the tested lengths: memory drift never rose more than the margin above the "
            "shortest bin's")
NO_EFFECTIVE = "no effective length: the score at the shortest length bin is at or below chance (0)"
RANK_WIDTH = 3.0  # rem: a sticky column's fixed width, so the model column can sit right after it
GROUP_WIDTH = 3.4


def tokens_label(length: int) -> str:
    """A length bin's short header: 1024 -> "1k", 131072 -> "128k", 1000 -> "1000"."""
    return f"{length // 1024}k" if length % 1024 == 0 and length >= 1024 else str(length)


def _headline_columns(table: pd.DataFrame) -> list[Column]:
    families = sorted(c for c in table.columns if c.startswith(f"{HEADLINE}:") and not c.endswith(("_lo", "_hi")))
    lengths = sorted((c for c in table.columns if c.startswith(f"{HEADLINE}@")), key=lambda c: int(c.split("@")[1]))
    return [_number(HEADLINE, "headline", True, "family-balanced, chance 0, perfect 1; 95% bootstrap CI",
                    empty_help=NO_DOCS),
            *(_number(c, c.split(":", 1)[1], True, f"{c.split(':', 1)[1]}: the family's headline, 95% bootstrap CI",
                      empty_help=NO_DOCS, group=BY_FAMILY) for c in families),
            *(_number(c, tokens_label(int(c.split("@", 1)[1])), True,
                      f"headline of the docs in the {int(c.split('@', 1)[1]):,}-token length bin",
                      empty_help=NO_DOCS, group=BY_LENGTH) for c in lengths),
            _number("memory_drift", "memory drift", False, "lower is better", empty_help=NO_DOCS),
            _number("score", "raw score", True, empty_help=NO_DOCS), _number("f1", "F1", True, empty_help=NO_DOCS),
            _number("docs", "docs", None, empty_help=NO_DOCS)]


def _rank(width: float = RANK_WIDTH) -> Column:
    return Column("rank", "rank", "rank", False, "= marks a tie at the shown precision", sticky=True, width=width)


def _html_tables(overall: pd.DataFrame, partial: pd.DataFrame, families: dict[str, pd.DataFrame],
                 spans: pd.DataFrame, standard: Comparability) -> list:
    model = Column("model", "model", "text", None, sticky=True)
    revision = Column("revision", "revision", "text", None, clip=True)
    seed = Column("seed", "seed", "text", None, "public or private seed", clip=True)
    coverage = Column("coverage", "coverage", "text", None, "full, or the first N docs of each task (--limit N)")
    # The ranked table leaves out coverage: it is the standard's ("full", in its title) on every row.
    tables = [LeaderboardTable("overall", f"Ranked: {standard.label()}",
                               (_rank(), model, revision, seed, *_headline_columns(overall)), tuple(_records(overall)))]
    if not partial.empty:
        tables.append(LeaderboardTable("partial", "Partial: not ranked against the table above", (
            Column("group", "group", "number", None, "submissions with equal keys; ranked within their group",
                   sticky=True, width=GROUP_WIDTH), _rank(), model, revision, seed, coverage,
            Column("partial_because", "partial because", "text", None, wide=True), *_headline_columns(partial),
            Column("tasks", "tasks", "text", None, wide=True), Column("versions", "versions", "text", None, wide=True)),
            tuple(_records(partial))))
    for family, table in families.items():
        tables.append(LeaderboardTable(f"family-{family}", family, (
            _rank(), model, revision, _number(HEADLINE, "headline", True),
            _number("memory_drift", "memory drift", False), _number("score", "raw score", True),
            _number("precision", "precision", True), _number("recall", "recall", True), _number("f1", "F1", True),
            _number("n", "docs", None)), tuple(_records(table))))
    if not spans.empty:
        tables.append(LeaderboardTable("lengths", "Drift onset and effective length (tokens)", (
            model, revision, Column("task", "task", "text", None),
            _number("drift_onset", "drift onset", True, "first length bin where drift rises; 95% bootstrap CI "
                    "(none: some resamples show no onset)", empty="none", empty_help=NO_ONSET, open_bound="none"),
            _number("effective_length", "effective length", True, "longest bin whose score stays near the "
                    "shortest bin's; 95% bootstrap CI", empty="n/a", empty_help=NO_EFFECTIVE),
            _number("longest", "longest bin", None)), tuple(_records(spans))))
    return tables


def _records(table: pd.DataFrame) -> list[dict]:
    if table.empty:
        return []
    return [{key: (None if isinstance(value, float) and math.isnan(value) else value) for key, value in row.items()}
            for row in json.loads(table.to_json(orient="records"))]


def _validated(submissions: list[Path], progress, workers: int) -> tuple[list[Verdict], list[Entry]]:
    """Every submission's verdict and the entries of those that pass (one per model and revision)."""
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
    return verdicts, entries


SHORT = ["rank", "model", "revision", "seed", "coverage", *[f"{m}{suffix}" for m in (HEADLINE, "memory_drift")
                                                            for suffix in ("", "_lo", "_hi")], "docs"]


def build(submissions: list[Path], out: Path, *, options: Options | None = None, overwrite: bool = False,
          progress: Callable[[str], None] | None = None, workers: int = 1,
          standard: Comparability | None = None) -> tuple[list[Verdict], str]:
    """Validate every submission, rank those that pass, write the board into ``out``; return every verdict and the
    main and partial tables as Markdown. ``standard``: the key ranked in the main table (default ``standard_key()``:
    ``memory_drift`` in full)."""
    options = options or Options()
    standard = standard or standard_key()
    check_owned_folder(out, overwrite, MANIFEST, TOOL)
    verdicts, entries = _validated(submissions, progress, workers)
    main = [entry for entry in entries if entry.key == standard]
    others = [entry for entry in entries if entry.key != standard]
    overall = overall_table(main, options)
    partial = partial_table(others, standard, options)
    families = family_tables(main, options)
    spans = lengths(entries, options)
    rule = ("Ranked by the headline: per doc (score - chance) / (1 - chance), averaged with equal weight per task "
            "(RECON: per question category) within a family, then with equal weight per family; higher is better, "
            "= marks a tie at the shown precision, 95% bootstrap CIs over docs.")
    ranked_title = f"## Ranked: {standard.label()}"
    partial_title = "## Partial (not ranked against the table above; ranked only within a group of equal keys)"
    main_text = markdown_text(display(overall)) if not overall.empty else "No submission covers the standard."
    markdown = "\n\n".join([f"# lurch-tasks leaderboard\n\nlurch-tasks {__version__}. {rule}", ranked_title,
                             main_text]
                            + ([partial_title, markdown_text(display(partial))] if not partial.empty else [])
                            + [f"## {family}\n\n{markdown_text(display(table))}" for family, table in families.items()]
                            + ([f"## Drift onset and effective length\n\n{markdown_text(spans)}"]
                               if not spans.empty else [])) + "\n"
    html = render_index("lurch-tasks leaderboard", f"Validated submissions, re-scored from their raw outputs "
                        f"(lurch-tasks {__version__}). {rule} Only submissions with the standard's key (tasks covered, "
                        "full or --limit, lurch-tasks and family versions) are ranked together; the others are in the "
                        "partial table. Click a column header to sort.",
                        _html_tables(overall, partial, families, spans, standard))
    data = {"lurch_tasks_version": __version__, "standard": dataclasses.asdict(standard), "overall": _records(overall),
            "partial": _records(partial), "families": {family: _records(table) for family, table in families.items()},
            "lengths": _records(spans) if not spans.empty else []}
    files = {"leaderboard.md": markdown, "index.html": html, "leaderboard.json": json.dumps(data, indent=2) + "\n",
             "leaderboard.csv": csv_text(overall)}
    if not partial.empty:
        files["partial.csv"] = csv_text(partial)
    files.update({f"{family}.csv": csv_text(table) for family, table in families.items()})
    if not spans.empty:
        files["lengths.csv"] = csv_text(spans)
    write_owned_folder(out, {name: text.encode("utf-8") for name, text in files.items()}, MANIFEST, TOOL,
                       __version__)
    summary = [ranked_title, main_text if overall.empty else markdown_text(display(overall)[SHORT])]
    if not partial.empty:
        summary += [partial_title, markdown_text(display(partial)[["group", *SHORT, "partial_because"]])]
    return verdicts, "\n\n".join(summary)


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
