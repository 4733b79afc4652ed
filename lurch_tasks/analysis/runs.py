"""Reading lm-eval output folders: which runs, models and samples they hold, and the instance record of every
logged doc, checked against the installed package.

lm-eval writes one ``results_<stamp>.json`` per run and, with ``--log_samples``, one ``samples_<task>_<stamp>.jsonl``
per task beside it (``--output_path`` holds one such folder per model). Every logged sample carries its doc, which for
our tasks is the whole Instance record; that record is re-scored, so a report never trusts the numbers a run claims.
A record made by another ``family_version`` or with a config whose hash this package computes differently is refused
(unless allowed): its scores would silently mix two benchmarks.

Logs are untrusted input (a report or a leaderboard reads files made elsewhere): lines are read in binary with a
size cap, decoded as strict UTF-8 and parsed with bounded nesting, and every logged doc of ours must have the
Instance shape (``check_doc``) before anything scores it. Any failure is one ValueError naming ``file:line``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import IO

from ..core.config import config_from_mapping, config_hash
from ..core.instance import instance_schema
from ..core.registry import all_families, get_family, get_task
from ..core.rng import canonical_json
from ..core.text import printable
from . import harness_logs

# Real lines measured (lm-eval logs the doc's context and prompt and its own copy of the prompt: ~10.6 bytes a
# token): a 131,072-token find_the_origin doc 1.36 MB, a 439,685-token graph doc (the largest its name lists allow)
# 4.65 MB; a doc at the configs' 1,048,576-token bound would be ~11 MB. 64 MiB leaves 14x over the largest measured.
MAX_LINE_BYTES = 64 << 20
MAX_RESULTS_BYTES = 64 << 20  # lm-eval's results file: KBs in practice
MAX_DEPTH = 64  # a real sample record nests 6 deep
MAX_LABEL = 200  # characters of a model label (it names figure files and fills legends)
# Models whose answers ignore the question (harness.models.RandomLM): the report marks them "chance" and draws no
# onset, effective length or property effect from them, since any trend in their scores is noise.
CHANCE_MODELS = frozenset({"lurch-random"})
INT64 = 1 << 63
# Difficulty fields the family's scorer, bin keys or report sections read beyond the Instance schema's, by type.
DIFFICULTY_FIELDS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "find_the_origin": {"d": int, "chain_length": int},
    "graph_reconstruction": {"connections": int},
    "recon": {"domain": str, "category": str, "format": str, "chain_hops": int},
    "implicit_hop": {"depth": int, "facts": int, "dispersion_target": (int, float)},
    "discovery": {"kind": str, "method": str, "distance": (int, float)},
}
LM_EVAL = "lm-eval"
_JSON_ANSWER = {"mcq_multi": list, "ordering": list, "free_form": dict}  # answer formats whose answer is JSON

_STAMPED = re.compile(r"^(?P<kind>results|samples)_(?:(?P<task>.+)_)?(?P<stamp>\d{4}-\d{2}-\d{2}T[\d\-.]+)$")


@dataclass(frozen=True)
class Run:
    """One lm-eval run: its results file (None when only samples are left) and its samples files."""

    folder: Path
    stamp: str
    results: Path | None
    samples: tuple[Path, ...]
    model: str  # label: lm-eval's model name, with the ``pretrained`` folder's name when there is one; Inspect's and
    # lighteval's model name with the harness in brackets ("lurch-solver/x [inspect]")
    chance: bool = False  # the results file names a chance baseline (``CHANCE_MODELS``)
    system_family: str = "long-context"  # ``systems.SYSTEM_FAMILIES``: a lurch-rag run is RAG, memory or Oracle
    answering: str = ""  # the model that wrote the answers (a lurch-rag run's inner model); "" = ``model``
    harness: str = LM_EVAL  # which harness wrote it: lm-eval, or Inspect / lighteval (``harness_logs``)


@dataclass(frozen=True)
class Sample:
    model: str
    task: str  # the lm-eval task that logged it (a view such as recon_chain, not the stored config)
    doc: dict
    output: str
    source: str  # "file:line", for messages
    account: tuple[tuple[str, float], ...] = ()  # a lurch-rag doc's account (``systems.ACCOUNT_KEYS``), else ()
    claimed: tuple[tuple[str, float], ...] = ()  # Inspect / lighteval: the doc's metrics as the log records them
    outputs: tuple[str, ...] = ()  # every answer when the run asked for several per doc (``repeats``); else ()


def _stamp_of(path: Path) -> tuple[str, str | None] | None:
    match = _STAMPED.match(path.stem)
    if not match:
        return None
    return match["stamp"], match["task"]


def model_label(results: Path | None, folder: Path) -> str:
    """lm-eval's ``config.model`` (with the ``pretrained=`` name, if any) from the results file, else the folder;
    a `lurch-rag` run is labelled by its system (``systems.rag_system``: "RAG bm25 k=5 · lurch-solver"); printable,
    at most ``MAX_LABEL`` characters. A results file that is not lm-eval's is a one-line ValueError."""
    return run_system(results, folder)[0]


def run_system(results: Path | None, folder: Path) -> tuple[str, str, str]:
    """(label, system family, answering model) of a run (``model_label``; ``systems.run_system``)."""
    from .systems import LONG_CONTEXT, RAG_MODEL, rag_system

    label, family, answering = folder.name, LONG_CONTEXT, ""
    if results is not None:
        config = read_results(results).get("config", {})
        if not isinstance(config, dict):
            raise ValueError(f"{results}: field 'config' is {_shown(config)}; allowed: lm-eval's config object")
        model, args = config.get("model") or "", config.get("model_args") or ""
        if not isinstance(model, str) or not isinstance(args, (str, dict)):
            raise ValueError(f"{results}: field 'config.model' or 'config.model_args' is "
                             f"{_shown(model if not isinstance(model, str) else args)}; allowed: strings (model_args: "
                             "an object or 'key=value,...')")
        if isinstance(args, dict):
            pretrained = str(args.get("pretrained", ""))
        else:
            pretrained = next((a.split("=", 1)[1] for a in args.split(",") if a.startswith("pretrained=")), "")
        if model:
            label = f"{model}:{Path(pretrained).name}" if pretrained else model
        if model == RAG_MODEL:
            try:
                system = rag_system(args)
            except (ValueError, TypeError, AttributeError) as error:
                raise ValueError(f"{results}: field 'config.model_args' of lurch-rag cannot be read "
                                 f"({printable(error)[:160]}); allowed: lurch-rag's model arguments") from None
            label, family, answering = system.label, system.family, printable(system.answering)[:MAX_LABEL]
        if len(label) > MAX_LABEL:
            raise ValueError(f"{results}: the model label is {len(label)} characters ({_shown(label)}); allowed: at "
                             f"most {MAX_LABEL}")
    return printable(label), family, answering


def is_chance_run(results: Path | None) -> bool:
    """Whether the run's results file records a chance baseline as its model (``config.model`` in
    ``CHANCE_MODELS``); a run without a results file is not assumed to be one."""
    if results is None:
        return False
    config = read_results(results).get("config", {})
    model = config.get("model") if isinstance(config, dict) else None
    return isinstance(model, str) and model in CHANCE_MODELS  # a list or dict here is model_label's error


def read_results(path: Path) -> dict:
    """An lm-eval results file as a JSON object (size, encoding and nesting bounded), or a one-line ValueError."""
    with path.open("rb") as handle:
        data = handle.read(MAX_RESULTS_BYTES + 1)
    if len(data) > MAX_RESULTS_BYTES:
        raise ValueError(f"{path}: larger than {MAX_RESULTS_BYTES >> 20} MiB; allowed: lm-eval's results file")
    document = parse_json(data, f"{path}")
    if not isinstance(document, dict):
        raise ValueError(f"{path}: the top level is {_shown(document)}; allowed: lm-eval's results object")
    return document


def read_coverage(path: Path) -> tuple[dict[str, str], tuple[int, ...]]:
    """What a run skipped, from its results file: {label: why} for each task skipped whole (lm-eval's entry with a
    ``skipped`` key; a family task under its family's name) and the lengths `lurch eval` recorded as skipped."""
    from .headline import skipped_family

    document = read_results(path)
    entries = document.get("results")
    skipped: dict[str, str] = {}
    for name, entry in (entries.items() if isinstance(entries, dict) else ()):
        if isinstance(entry, dict) and isinstance(entry.get("skipped"), str):
            skipped[printable(skipped_family(str(name)))[:MAX_LABEL]] = printable(entry["skipped"])[:MAX_LABEL]
    record = document.get("lurch_coverage")
    lengths = record.get("lengths_skipped") if isinstance(record, dict) else None
    dropped = tuple(n for n in lengths if isinstance(n, int) and not isinstance(n, bool)) \
        if isinstance(lengths, list) else ()
    return skipped, dropped


def parse_json(data: bytes | bytearray | str, where: str, what: str = "") -> object:
    """JSON from untrusted bytes: strict UTF-8, nesting at most ``MAX_DEPTH``; a one-line ValueError naming
    ``where`` (``file:line``) and ``what`` (a field) otherwise."""
    field = f" field {what!r}" if what else ""
    if isinstance(data, (bytes, bytearray)):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as error:
            byte = error.object[error.start:error.start + 1]
            raise ValueError(f"{where}:{field} byte {error.start} ({byte!r}) is not UTF-8; allowed: UTF-8 JSON as "
                             "lm-eval writes it") from None
    try:
        value = json.loads(data)
    except RecursionError:
        raise ValueError(f"{where}:{field} JSON nested more than {MAX_DEPTH} levels deep; allowed: at most "
                         f"{MAX_DEPTH}") from None
    except ValueError as error:  # JSONDecodeError, or an integer of more than 4,300 digits
        reason = error.msg if isinstance(error, json.JSONDecodeError) else "an integer too long"
        hint = "" if what else " (a truncated file?)"
        raise ValueError(f"{where}:{field} is not JSON{hint}: {printable(reason)}; allowed: JSON as lm-eval writes "
                         "it") from None
    if _depth(value) > MAX_DEPTH:
        raise ValueError(f"{where}:{field} JSON nested more than {MAX_DEPTH} levels deep; allowed: at most "
                         f"{MAX_DEPTH}")
    return value


def _depth(value: object) -> int:
    """How deeply ``value`` nests, counted up to ``MAX_DEPTH + 1`` (iterative: a hostile value cannot exhaust the
    stack)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            if level <= MAX_DEPTH:  # deeper than that is refused anyway
                stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _shown(value: object, width: int = 60) -> str:
    """A short, printable picture of an untrusted value for an error message: its start and its type."""
    text = printable(repr(value))
    return f"{text[:width]}{'...' if len(text) > width else ''} ({type(value).__name__})"


def find_runs(run_dirs: Iterable[Path]) -> list[Run]:
    """Every run under the folders, in a stable order (folder, then stamp): lm-eval's (results and samples files),
    Inspect's (.eval files, one run per ``inspect eval`` call) and lighteval's (one per details folder)."""
    runs: list[Run] = []
    for root in run_dirs:
        if not root.is_dir():
            raise ValueError(f"RUN_DIR: {str(root)!r} is not a folder; allowed: an lm-eval --output_path folder, an "
                             "Inspect --log-dir or a lighteval --output-dir")
        found: dict[tuple[Path, str], dict] = {}
        inspect_logs: list[Path] = []
        details: dict[Path, list[Path]] = {}
        for path in sorted(root.rglob("*")):
            if harness_logs.is_inspect_log(path):
                inspect_logs.append(path)
                continue
            if harness_logs.is_lighteval_details(path):
                details.setdefault(path.parent, []).append(path)
                continue
            stamped = _stamp_of(path) if path.suffix in (".json", ".jsonl") and path.is_file() else None
            if stamped is None or _is_lighteval_results(path, root):
                continue
            entry = found.setdefault((path.parent, stamped[0]), {"results": None, "samples": []})
            if path.name.startswith("results_"):
                entry["results"] = path
            else:
                entry["samples"].append(path)
        if not found and not inspect_logs and not details:
            raise ValueError(f"RUN_DIR: no lm-eval results_*.json or samples_*.jsonl, Inspect .eval or lighteval "
                             f"details under {str(root)!r}; allowed: the --output_path folder of an lm-eval run made "
                             "with --log_samples, an Inspect --log-dir, or a lighteval --output-dir made with "
                             "--save-details")
        with_samples = [(key, entry) for key, entry in sorted(found.items()) if entry["samples"]]
        if not with_samples and not inspect_logs and not details:
            raise ValueError(f"RUN_DIR: {str(root)!r} has lm-eval results but no samples_*.jsonl; allowed: a run "
                             "made with --log_samples")
        for (folder, stamp), entry in with_samples:
            label, family, answering = run_system(entry["results"], folder)
            runs.append(Run(folder, stamp, entry["results"], tuple(entry["samples"]), label,
                            is_chance_run(entry["results"]), family, answering))
        runs += _inspect_runs(inspect_logs) + _lighteval_runs(details)
    return runs


def _is_lighteval_results(path: Path, root: Path) -> bool:
    """lighteval's ``results/<model>/results_<stamp>.json`` (read with its details folder, not as an lm-eval run)."""
    return path.name.startswith("results_") and path.parent.parent.name == "results" and \
        (path.parent.parent.parent / "details" / path.parent.name / path.stem[len("results_"):]).is_dir()


def _inspect_runs(paths: list[Path]) -> list[Run]:
    runs = []
    for stamp, model, files, _ in harness_logs.inspect_runs(paths):
        label = f"{model} [{harness_logs.INSPECT}]"
        if len(label) > MAX_LABEL:
            raise ValueError(f"{files[0]}: the model label is {len(model)} characters; allowed: at most {MAX_LABEL}")
        runs.append(Run(files[0].parent, stamp, None, files, label,
                        harness_logs.inspect_model_name(model) in CHANCE_MODELS, harness=harness_logs.INSPECT))
    return runs


def _lighteval_runs(details: dict[Path, list[Path]]) -> list[Run]:
    runs = []
    for folder, files in sorted(details.items()):
        results = harness_logs.lighteval_results(folder)
        model = harness_logs.lighteval_model(results, folder)
        label = f"{model} [{harness_logs.LIGHTEVAL}]"
        if len(label) > MAX_LABEL:
            raise ValueError(f"{results or folder}: the model label is {len(model)} characters; allowed: at most "
                             f"{MAX_LABEL}")
        runs.append(Run(folder, folder.name, results, tuple(files), label,
                        model.split(",", 1)[0] in CHANCE_MODELS, harness=harness_logs.LIGHTEVAL))
    return runs


def harness_docs(run: Run) -> Iterator[harness_logs.LoggedDoc]:
    """The logged docs of an Inspect or lighteval run, file by file."""
    for path in run.samples:
        if run.harness == harness_logs.INSPECT:
            yield from harness_logs.inspect_docs(path, MAX_LINE_BYTES)
        else:
            yield from harness_logs.lighteval_docs(path, MAX_LINE_BYTES)


def raw_outputs(record: dict) -> list[str]:
    """Every raw answer of one logged sample: lm-eval logs ``resps`` as one list per request, holding one answer per
    repeat (``repeats``); a ValueError when they are not strings."""
    resps = record.get("resps")
    answers = resps[0] if isinstance(resps, list) and resps and isinstance(resps[0], list) else None
    if answers is None or len(answers) < 2:
        return [raw_output(record)]
    if not all(isinstance(a, str) for a in answers):
        raise ValueError(f"field 'resps' is {_shown(resps)}; allowed: lm-eval's list of response strings")
    return list(answers)


def raw_output(record: dict) -> str:
    """The raw model output of one logged sample (``resps`` before lm-eval's filters); a ValueError when the
    record holds something other than lm-eval's (nested) list of response strings."""
    resps = record.get("resps") or record.get("filtered_resps") or [""]
    first = resps
    while isinstance(first, list):
        first = first[0] if first else ""
    if first is None:
        return ""
    if not isinstance(first, str) or not isinstance(resps, list):
        raise ValueError(f"field 'resps' is {_shown(record.get('resps'))}; allowed: lm-eval's list of response "
                         "strings")
    return first


_LURCH_KEYS = frozenset({"family", "answer_format", "family_version"})


def is_lurch_doc(doc: object) -> bool:
    """A doc our tasks logged (or one pretending to be: it must then pass ``check_doc``)."""
    return isinstance(doc, dict) and bool(_LURCH_KEYS & set(doc))


def check_doc(doc: dict, where: str) -> None:
    """A logged doc has the shape the scorers, the frame and the report read: every Instance field with its schema
    type, finite numbers within int64, the family's own difficulty fields, and ``params`` / ``answer`` that parse as
    the JSON its format holds. Otherwise a one-line ValueError naming ``where`` (``file:line``), field and value."""
    error = next(iter(sorted(_doc_validator().iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))), None)
    if error is not None:
        field = "/".join(map(str, error.absolute_path)) or "<row>"
        raise ValueError(f"{where}: doc {printable(field)[:60]}: {printable(error.message)[:160]}; allowed: the "
                         "Instance record lurch-tasks logs")
    bad = _bad_number(doc)
    if bad is not None:
        raise ValueError(f"{where}: doc field {bad[0]!r} is {_shown(bad[1])}; allowed: a finite number within int64")
    difficulty = doc["difficulty"]
    for name, kind in DIFFICULTY_FIELDS.get(doc["family"], {}).items():
        value = difficulty.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ValueError(f"{where}: doc field 'difficulty.{name}' is {_shown(value)}; allowed: "
                             f"{' or '.join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))}")
    for name, value in difficulty.items():
        if not isinstance(value, (str, int, float, bool)) or (isinstance(value, str) and len(value) > MAX_LABEL):
            raise ValueError(f"{where}: doc field 'difficulty.{printable(name)[:40]}' is {_shown(value)}; allowed: a "
                             f"number, a boolean or a string of at most {MAX_LABEL} characters")
    params = parse_json(doc["params"], where, "doc.params")
    if not isinstance(params, dict) or not isinstance(params.get("config"), dict):
        raise ValueError(f"{where}: doc field 'params' is {_shown(params)}; allowed: a JSON object with a 'config' "
                         "object")
    _check_answer(doc, where)


@lru_cache(maxsize=1)
def _doc_validator():
    """The Instance schema's fields, types, enums and bounds, without its string patterns: a doc made with a private
    seed carries a masked ``pair_key``, and ``family_version`` / ``config_hash`` are checked by ``version_problem``."""
    import jsonschema

    schema = _without_patterns(instance_schema())
    schema["properties"] = {**schema["properties"], **LOGGED_RUN_KEYS}
    return jsonschema.Draft202012Validator(schema)


# The keys the harness adds to a logged doc for its run (``core.instance.RUN_KEYS``), with the types it writes.
LOGGED_RUN_KEYS = {"think_end_token": {"type": "string", "minLength": 1, "maxLength": 200},
                   "bins": {"type": "boolean"},
                   "gen_budget": {"type": "integer", "minimum": 1, "maximum": 1_048_576}}


def _without_patterns(schema: object) -> object:
    if isinstance(schema, dict):
        return {key: _without_patterns(value) for key, value in schema.items() if key != "pattern"}
    if isinstance(schema, list):
        return [_without_patterns(value) for value in schema]
    return schema


def _check_answer(doc: dict, where: str) -> None:
    kind = doc["answer_format"]
    if kind == "integer":
        if not re.fullmatch(r"-?[0-9]{1,18}", doc["answer"]):
            raise ValueError(f"{where}: doc field 'answer' is {_shown(doc['answer'])}; allowed: an integer "
                             "(answer_format integer)")
    elif kind in _JSON_ANSWER:
        answer = parse_json(doc["answer"], where, "doc.answer")
        if not isinstance(answer, _JSON_ANSWER[kind]):
            raise ValueError(f"{where}: doc field 'answer' is {_shown(answer)}; allowed: a JSON "
                             f"{_JSON_ANSWER[kind].__name__} (answer_format {kind})")


def _bad_number(value: object, path: str = "") -> tuple[str, object] | None:
    """The first (field, value) in ``value`` that is a non-finite float or an integer beyond int64."""
    stack = [(path, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, dict):
            stack.extend((f"{where}.{key}" if where else str(key), child) for key, child in item.items())
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", child) for i, child in enumerate(item))
        elif (isinstance(item, float) and not math.isfinite(item)) or (isinstance(item, int)
                                                                        and not -INT64 <= item < INT64):
            return printable(where)[:80], item
    return None


def read_jsonl(path: Path, limit: int = MAX_LINE_BYTES) -> Iterator[tuple[int, dict]]:
    """(line number, record) of a JSON Lines file, streamed: a line longer than ``limit`` bytes, one that is not
    UTF-8 JSON, nests deeper than ``MAX_DEPTH`` or is not an object is one ValueError naming ``file:line``."""
    with path.open("rb") as handle:
        number = 0
        while line := _read_line(handle, limit):
            number += 1
            if len(line) > limit and not line.endswith(b"\n"):
                raise ValueError(f"{path}:{number}: the line is longer than {limit:,} bytes; allowed: sample lines "
                                 f"of at most {limit >> 20} MiB")
            if not line.strip():
                continue
            record = parse_json(line, f"{path}:{number}")
            del line
            if not isinstance(record, dict):
                raise ValueError(f"{path}:{number}: the line is {_shown(record)}, not a sample record; allowed: "
                                 "lm-eval's samples format (one JSON object per line)")
            yield number, record


def _read_line(handle: IO[bytes], limit: int) -> bytearray:
    """The next line, read in 1 MiB pieces and stopped once it passes ``limit`` bytes: a 200 MB line is never read
    whole, and the pieces grow one buffer (``readline(limit)`` alone joins its chunks: twice the memory)."""
    line = bytearray()
    while len(line) <= limit:
        piece = handle.readline(min(1 << 20, limit + 1 - len(line)))
        line += piece
        if not piece or piece.endswith(b"\n"):
            break
    return line


def iter_samples(runs: Iterable[Run], foreign: set[str] | None = None) -> Iterator[Sample]:
    """Every logged sample of our tasks; the names of other tasks' samples files go into ``foreign``."""
    for run in runs:
        if run.harness != LM_EVAL:
            yield from _harness_samples(run)
            continue
        yield from _lm_eval_samples(run, foreign)


def _harness_samples(run: Run) -> Iterator[Sample]:
    """An Inspect or lighteval run's samples: every one must be a doc of ours (our tasks wrote the logs)."""
    for logged in harness_docs(run):
        if not isinstance(logged.doc, dict):
            raise ValueError(f"{logged.where}: the doc is {_shown(logged.doc)}; allowed: the doc object our tasks log")
        check_doc(logged.doc, logged.where)
        if not isinstance(logged.output, str):
            raise ValueError(f"{logged.where}: the output is {_shown(logged.output)}; allowed: a string")
        if not all(isinstance(o, str) for o in logged.outputs):
            raise ValueError(f"{logged.where}: an output is not a string; allowed: strings")
        yield Sample(run.model, logged_task(logged.task, logged.doc), logged.doc, logged.output, logged.where,
                     claimed=tuple(logged.claimed.items()), outputs=tuple(logged.outputs))


def _lm_eval_samples(run: Run, foreign: set[str] | None) -> Iterator[Sample]:
    from .systems import LONG_CONTEXT, account_of

    for path in run.samples:
        stamped = _stamp_of(path)
        task = stamped[1] if stamped and stamped[1] else path.stem
        first, ours = True, True
        for number, record in read_jsonl(path):
            doc, where = record.get("doc"), f"{path}:{number}"
            if not isinstance(doc, dict):  # every benchmark's logged doc is a dataset row: an object
                raise ValueError(f"{where}: field 'doc' is {_shown(doc)}; allowed: the doc object lm-eval logs")
            if first and not is_lurch_doc(doc):
                ours = False
                break  # another benchmark's samples file (decided by its first record)
            first = False
            check_doc(doc, where)
            try:
                outputs = raw_outputs(record)
            except ValueError as error:
                raise ValueError(f"{where}: {error}") from None
            account = tuple(account_of(record).items()) if run.system_family != LONG_CONTEXT else ()
            yield Sample(run.model, logged_task(task, doc), doc, outputs[0], where, account,
                         outputs=tuple(outputs) if len(outputs) > 1 else ())
        if not ours and foreign is not None:
            foreign.add(task)


def logged_task(task: str, doc: dict) -> str:
    """The task a sample is reported under: the lm-eval task that logged it, except a family task (the umbrella's
    leaves, ``harness.family_tasks``), whose docs are reported under their own member task."""
    from ..harness.family_tasks import member_task

    member = member_task(task, doc) if isinstance(doc, dict) else None
    return member if member is not None else task


def version_problem(doc: dict) -> str | None:
    """Why a logged doc is not a doc of this package (None when it is): an unknown family or task, another
    ``family_version``, or a config whose hash this package computes differently."""
    return _problem(str(doc.get("family")), str(doc.get("task")), str(doc.get("family_version")),
                    str(doc.get("config_hash")), canonical_json(_params_config(doc)))


@lru_cache(maxsize=256)
def _problem(family_name: str, task_name: str, version: str, stored_hash: str, config_json: str) -> str | None:
    known = [f.name for f in all_families()]
    if family_name not in known:
        return f"family {family_name!r} is not in this lurch-tasks (allowed: {', '.join(known)})"
    family = get_family(family_name)
    try:
        get_task(task_name)
    except ValueError:
        return f"task {task_name!r} is not registered in this lurch-tasks"
    if version != family.version:
        return f"family_version {version} differs from the installed {family.version}"
    try:
        current = config_hash(config_from_mapping(family.config_type, json.loads(config_json)))
    except (ValueError, TypeError) as error:
        return f"its config cannot be read by this package ({error})"
    if current != stored_hash:
        return f"config_hash {stored_hash[:12]} differs from this package's {current[:12]} for the same config"
    return None


def _params_config(doc: dict) -> dict:
    try:
        params = json.loads(doc.get("params") or "{}")
    except (TypeError, ValueError):
        return {}
    config = params.get("config") if isinstance(params, dict) else None
    return config if isinstance(config, dict) else {}
