"""Inspect and lighteval logs read as runs, beside lm-eval's (``analysis.runs``): the same logged docs, outputs and
claims, so `lurch report` and `lurch leaderboard validate` re-score them on the one shared path.

* **Inspect** writes one ``.eval`` file per task (a zip of JSON entries, zstd-compressed): ``header.json`` (model,
  task, aggregate scores) and one ``samples/<id>_epoch_<n>.json`` per sample. Our tasks (``harness.inspect_tasks``)
  keep the whole doc in the sample's metadata and the lm-eval task that scored it beside it. The files of one
  ``inspect eval`` call share a ``run_id`` and form one run.
* **lighteval** writes ``results/<model>/results_<stamp>.json`` and, with ``--save-details``, one
  ``details/<model>/<stamp>/details_<task>|<shots>_<stamp>.parquet`` per task; our tasks
  (``harness.lighteval_tasks``) keep the whole doc in ``Doc.specific``. One details folder is one run.

Logs are untrusted input, as lm-eval's are: zip entries are read with a size cap (and at most ``MAX_ENTRIES`` of
them), JSON with bounded nesting, Parquet files in record batches; every failure is one ValueError naming the file.
"""

from __future__ import annotations

import math
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..core.text import printable
from ..harness.log_keys import DOC_KEY, LEAF_KEY, SKIPPED_KEY

INSPECT = "inspect"
LIGHTEVAL = "lighteval"
INSPECT_SUFFIX = ".eval"
MAX_ENTRIES = 1 << 20  # samples of one .eval file (a zip's central directory is read whole)
MAX_HEADER_BYTES = 64 << 20
BATCH_ROWS = 64  # lighteval details rows decoded at a time (a row holds a whole doc)
_DETAILS = re.compile(r"^details_(?P<task>.+)\|(?P<shots>\d+)_(?P<stamp>[^|]+)\.parquet$")
_INSPECT_SAMPLE = re.compile(r"^samples/.+_epoch_\d+\.json$")


@dataclass(frozen=True)
class LoggedDoc:
    """One logged answer: the task that scored it, its doc, the raw output, where it is, what the log says it
    scored (metric -> value; NaN where the doc reports none), and the prompt as the harness logged it (Inspect: the
    sample's input; lighteval: the model's input)."""

    task: str
    doc: object
    output: object
    where: str
    claimed: dict[str, float]
    sent: object = None
    outputs: tuple = ()  # every answer of a doc run several times (Inspect epochs); () for one


@dataclass(frozen=True)
class HarnessClaims:
    """Per task the metrics a log claims (the mean of its per-doc scores) and its docs, and the run's limit."""

    metrics: dict[str, dict[str, float]]
    docs: dict[str, int]
    limit: object


# ---- Inspect ----------------------------------------------------------------------------------------------------


def _zip(path: Path) -> zipfile.ZipFile:
    try:
        import zipfile_zstd  # noqa: F401  (Inspect's zstd entries; patches the stdlib zipfile, as Inspect does)
    except ImportError:
        pass
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile, ValueError) as error:
        raise ValueError(f"{path}: not an Inspect log ({type(error).__name__}: {printable(error)[:120]}); "
                         "allowed: an .eval file written by `inspect eval`") from None
    if len(archive.infolist()) > MAX_ENTRIES:
        raise ValueError(f"{path}: more than {MAX_ENTRIES} entries; allowed: an .eval file written by `inspect eval`")
    return archive


def _entry_json(archive: zipfile.ZipFile, name: str, where: str, limit: int) -> object:
    from .runs import parse_json

    try:
        with archive.open(name) as handle:
            data = handle.read(limit + 1)
    except NotImplementedError:
        raise ValueError(f"{where}: compressed with a method this Python cannot read; allowed: install "
                         "lurch-tasks[inspect] (Inspect's zstd support)") from None
    except (OSError, zipfile.BadZipFile, ValueError, EOFError) as error:
        raise ValueError(f"{where}: cannot be read ({type(error).__name__}: {printable(error)[:120]})") from None
    if len(data) > limit:
        raise ValueError(f"{where}: larger than {limit >> 20} MiB; allowed: an entry Inspect wrote")
    return parse_json(data, where)


def inspect_header(path: Path) -> dict:
    """The ``header.json`` of an .eval file: a finished run's model, task and scores."""
    with _zip(path) as archive:
        if "header.json" not in archive.namelist():
            raise ValueError(f"{path}: has no header.json (an unfinished or interrupted run); allowed: a finished "
                             "`inspect eval` log")
        header = _entry_json(archive, "header.json", f"{path}:header.json", MAX_HEADER_BYTES)
    if not isinstance(header, dict) or not isinstance(header.get("eval"), dict):
        raise ValueError(f"{path}:header.json: field 'eval' is missing; allowed: Inspect's log header")
    return header


def _text(value: object, field: str, where: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{where}: field {field!r} is a {type(value).__name__}; allowed: a string")
    return value


def is_inspect_log(path: Path) -> bool:
    return path.suffix == INSPECT_SUFFIX and path.is_file()


def inspect_runs(paths: list[Path]) -> list[tuple[str, str, tuple[Path, ...], str]]:
    """(stamp, model, files, run id) per run: the .eval files of one ``inspect eval`` call share its run id."""
    grouped: dict[tuple[str, str], list[tuple[str, Path]]] = {}
    for path in paths:
        header = inspect_header(path)
        spec = header["eval"]
        model = printable(_text(spec.get("model"), "eval.model", f"{path}:header.json"))
        run_id = printable(str(spec.get("run_id") or path.name))
        created = printable(_text(spec.get("created", ""), "eval.created", f"{path}:header.json"))
        grouped.setdefault((run_id, model), []).append((created, path))
    runs = []
    for (run_id, model), files in sorted(grouped.items()):
        files.sort()
        runs.append((files[0][0], model, tuple(path for _, path in files), run_id))
    return runs


def inspect_model_name(model: str) -> str:
    """The provider of an Inspect model (``lurch-random/x`` -> ``lurch-random``): what marks a chance baseline."""
    return model.split("/", 1)[0]


def inspect_docs(path: Path, line_limit: int) -> Iterator[LoggedDoc]:
    """Every sample of one .eval file, in the order the file lists them; a sample run for several epochs (``-T
    repeats=N`` or ``--epochs N``) is one doc with every epoch's answer, its logged scores averaged."""
    with _zip(path) as archive:
        names = [info.filename for info in archive.infolist() if _INSPECT_SAMPLE.match(info.filename)]
        epochs: dict[str, list[LoggedDoc]] = {}
        for name in names:
            where = f"{path}:{name}"
            record = _entry_json(archive, name, where, line_limit)
            if not isinstance(record, dict):
                raise ValueError(f"{where}: a JSON {type(record).__name__}; allowed: Inspect's sample object")
            metadata = record.get("metadata")
            if not isinstance(metadata, dict) or DOC_KEY not in metadata:
                raise ValueError(f"{where}: field 'metadata.doc' is missing; allowed: a sample of a lurch task "
                                 "(`inspect eval lurch_tasks/<task>`)")
            task = _text(metadata.get(LEAF_KEY), f"metadata.{LEAF_KEY}", where)
            epochs.setdefault(str(record.get("id")), []).append(
                LoggedDoc(task, metadata[DOC_KEY], _inspect_output(record, where), where,
                          _inspect_scores(record, where), record.get("input")))
        for runs in epochs.values():
            yield runs[0] if len(runs) == 1 else _epochs_as_one(runs)


def _epochs_as_one(runs: list[LoggedDoc]) -> LoggedDoc:
    """Several epochs of one sample as one doc: every answer, the scores averaged key by key (NaN skipped)."""
    claimed: dict[str, float] = {}
    for key in runs[0].claimed:
        values = [run.claimed.get(key, math.nan) for run in runs]
        own = [v for v in values if not math.isnan(v)]
        claimed[key] = sum(own) / len(own) if own else math.nan
    first = runs[0]
    return LoggedDoc(first.task, first.doc, first.output, first.where, claimed, first.sent,
                     tuple(run.output for run in runs))


def _inspect_output(record: dict, where: str) -> str:
    output = record.get("output")
    completion = output.get("completion", "") if isinstance(output, dict) else None
    if completion is None:
        return ""
    return _text(completion, "output.completion", where)


def _inspect_scores(record: dict, where: str) -> dict[str, float]:
    scores = record.get("scores") or {}
    if not isinstance(scores, dict):
        raise ValueError(f"{where}: field 'scores' is a {type(scores).__name__}; allowed: an object")
    score = scores.get("lurch_scorer") or {}
    value = score.get("value") if isinstance(score, dict) else None
    return _numbers(value if isinstance(value, dict) else {}, where, "scores.lurch_scorer.value")


def _numbers(values: dict, where: str, field: str) -> dict[str, float]:
    out = {}
    for name, value in values.items():
        if value is None:
            out[str(name)] = math.nan
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[str(name)] = float(value)
        elif isinstance(value, str) and value == "NaN":
            out[str(name)] = math.nan
    return out


def inspect_coverage(files: tuple[Path, ...]) -> dict[str, str]:
    """The leaves an Inspect run left out because the model's window could not hold them (the task's metadata
    ``lurch_skipped``: leaf -> why), under the label lm-eval's results use (``headline.skipped_family``)."""
    from .headline import skipped_family

    skipped: dict[str, str] = {}
    for path in files:
        metadata = inspect_header(path)["eval"].get("metadata")
        found = metadata.get(SKIPPED_KEY) if isinstance(metadata, dict) else None
        for leaf, why in (found.items() if isinstance(found, dict) else ()):
            if isinstance(why, str):
                skipped[printable(skipped_family(str(leaf)))[:200]] = printable(why)[:200]
    return skipped


def inspect_claims(files: tuple[Path, ...], logged: list[tuple[str, dict[str, float]]]) -> HarnessClaims:
    """Per task (each group member) the mean of the per-sample scores Inspect logged (``logged``: (task, scores) per
    sample), and its sample count; the limit is the task parameter ``limit`` or Inspect's own ``--limit``."""
    limit = None
    for path in files:
        spec = inspect_header(path)["eval"]
        args = spec.get("task_args") if isinstance(spec.get("task_args"), dict) else {}
        config = spec.get("config") if isinstance(spec.get("config"), dict) else {}
        limit = args.get("limit", config.get("limit")) if limit is None else limit
    return claims_from(logged, limit)


# ---- lighteval --------------------------------------------------------------------------------------------------


def is_lighteval_details(path: Path) -> bool:
    return path.suffix == ".parquet" and bool(_DETAILS.match(path.name)) and path.is_file()


def lighteval_task(path: Path) -> str:
    match = _DETAILS.match(path.name)
    return match["task"] if match else path.stem


def lighteval_results(details_folder: Path) -> Path | None:
    """The results file of a details folder (``details/<model>/<stamp>`` beside ``results/<model>/
    results_<stamp>.json``), when it is there."""
    model_dir = details_folder.parent
    candidate = model_dir.parent.parent / "results" / model_dir.name / f"results_{details_folder.name}.json"
    return candidate if candidate.is_file() else None


def lighteval_model(results: Path | None, details_folder: Path) -> str:
    """lighteval's ``config_general.model_name`` from the results file, else the details folder's model name."""
    from .runs import read_results

    if results is None:
        return printable(details_folder.parent.name)
    general = read_results(results).get("config_general")
    name = general.get("model_name") if isinstance(general, dict) else None
    if not isinstance(name, str) or not name:
        raise ValueError(f"{results}: field 'config_general.model_name' is missing; allowed: lighteval's results "
                         "file")
    return printable(name)


def lighteval_docs(path: Path, line_limit: int) -> Iterator[LoggedDoc]:
    """Every row of one details file: the doc from ``doc.specific.doc``, the first generated text, the metrics."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    task = lighteval_task(path)
    try:
        handle = pq.ParquetFile(path)
        batches = handle.iter_batches(batch_size=BATCH_ROWS, columns=["doc", "model_response", "metric"])
        number = 0
        for batch in batches:
            if batch.nbytes > line_limit * BATCH_ROWS:
                raise ValueError(f"{path}: a row group over {line_limit >> 20} MiB a row; allowed: lighteval's "
                                 "details")
            for row in batch.to_pylist():
                number += 1
                yield _lighteval_row(row, task, f"{path}:{number}")
    except (OSError, pa.ArrowException, KeyError) as error:
        raise ValueError(f"{path}: not lighteval details ({type(error).__name__}: {printable(error)[:160]}); "
                         "allowed: a details_<task>|<shots>_<stamp>.parquet file lighteval wrote") from None


def _lighteval_row(row: dict, task: str, where: str) -> LoggedDoc:
    doc = row.get("doc") if isinstance(row, dict) else None
    specific = doc.get("specific") if isinstance(doc, dict) else None
    if not isinstance(specific, dict) or DOC_KEY not in specific:
        raise ValueError(f"{where}: field 'doc.specific.doc' is missing; allowed: a row of a lurch task "
                         "(--custom-tasks lurch_tasks.harness.lighteval_tasks)")
    response = row.get("model_response")
    texts = response.get("text") if isinstance(response, dict) else None
    output = texts[0] if isinstance(texts, list) and texts else ""
    metric = row.get("metric") if isinstance(row.get("metric"), dict) else {}
    lurch_doc = _without_run_keys(specific[DOC_KEY])
    return LoggedDoc(task, lurch_doc, "" if output is None else output, where,
                     _numbers(metric, where, "metric"), response.get("input") if isinstance(response, dict) else None)


def _without_run_keys(doc: object) -> object:
    """The doc as our task handed it to lighteval: lighteval adds its own bookkeeping keys (``__index``,
    ``__few_shots``) to the row the doc was made from."""
    if not isinstance(doc, dict):
        return doc
    return {key: value for key, value in doc.items() if not str(key).startswith("__")}


def lighteval_claims(results: Path | None, logged: list[tuple[str, dict[str, float]]]) -> HarnessClaims:
    """Per task the metrics of the results file (``results/<task>|<shots>``; without one, the mean of the logged
    per-doc metrics) and the logged rows; the limit is ``config_general.max_samples``."""
    from .runs import read_results

    own = claims_from(logged, None)
    if results is None:
        return own
    document = read_results(results)
    general = document.get("config_general") if isinstance(document.get("config_general"), dict) else {}
    entries = document.get("results") if isinstance(document.get("results"), dict) else {}
    metrics: dict[str, dict[str, float]] = {}
    for key, values in entries.items():
        if key == "all" or not isinstance(values, dict):
            continue
        task = str(key).split("|")[0]
        metrics[task] = {name: value for name, value in _numbers(values, str(results), "results").items()
                         if not name.endswith("_stderr")}
    return HarnessClaims(metrics, own.docs, general.get("max_samples"))


def claims_from(logged: list[tuple[str, dict[str, float]]], limit: object) -> HarnessClaims:
    """Per task the mean of each logged per-doc metric (NaN: a doc that reports none) and the number of docs."""
    sums: dict[str, dict[str, list[float]]] = {}
    docs: dict[str, int] = {}
    for task, claimed in logged:
        docs[task] = docs.get(task, 0) + 1
        for name, value in claimed.items():
            if not math.isnan(value):
                sums.setdefault(task, {}).setdefault(name, []).append(value)
    metrics = {task: {name: sum(values) / len(values) for name, values in names.items()}
               for task, names in sums.items()}
    return HarnessClaims(metrics, docs, limit)
