"""``lurch leaderboard validate``: prove a submission, or name every reason it fails.

A submission is checked completely, because every doc is a pure function of (task, config, seed, index):

* ``submission.json`` against the shipped JSON Schema, and the lurch-tasks version it names against this one;
* exactly one run of one model: lm-eval's (its results file and a samples file per task), or Inspect's (the .eval
  files of one ``inspect eval`` call) or lighteval's (one details folder and its results file);
* every logged doc: a doc of this package (``family_version``, ``config_hash``), made with the declared seed, with the
  registered task's knobs (only the budget's tokenizer and chat template may follow the model), and equal, by the
  SHA-256 of its canonical JSON, to the doc regenerated here from its (task, config, seed, split, index);
* no doc twice; every declared task covered in full, unless ``submission.json`` declares a subset (``--limit``);
* every raw output re-scored, and every metric the results file claims for a task equal to the recomputed one
  (tolerance 1e-9).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from .. import __version__
from ..analysis import harness_logs
from ..analysis.runs import LM_EVAL, Run, find_runs, iter_samples, version_problem
from ..core.config import config_from_mapping
from ..core.generation import task_size
from ..core.instance import content_hash, instance_part
from ..core.private import ENV as PRIVATE_ENV
from ..core.private import masked_seed, private_seed, seed_sha256
from ..core.registry import all_families, all_tasks, get_family, get_task
from ..core.text import printable
from ..harness.family_tasks import family_of, family_task_name, member_task, members
from ..harness.tasks import process_results
from .regenerate import Pending, regeneration_problems
from .submission import opened, read_submission_json

TOLERANCE = 1e-9
BUDGET_KNOBS = ("tokenizer", "chat_template")  # may follow the evaluated model; every other knob is the registry's
UMBRELLA = "memory_drift"
MAX_LISTED = 5  # missing indices named per task
MAX_PROBLEM = 400  # characters of one reason (an exception's text can quote a whole hostile value)
T = TypeVar("T")


@dataclass(frozen=True)
class Proof:
    """What the logged docs themselves show, whatever ``submission.json`` claims: per lm-eval task the distinct doc
    indices logged and the docs the task has, and every (family, family_version) the docs carry."""

    tasks: tuple[tuple[str, int, int], ...] = ()
    family_versions: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Verdict:
    submission: str
    problems: tuple[str, ...]
    metadata: dict = field(default_factory=dict)
    model: str = ""
    tasks: tuple[str, ...] = ()
    docs: int = 0
    run_folders: tuple[str, ...] = ()
    proof: Proof = field(default_factory=Proof)

    @property
    def ok(self) -> bool:
        return not self.problems


def expand_tasks(names: Iterable[str]) -> tuple[list[str], list[str]]:
    """Task names with groups expanded (the umbrella, family groups and their extra groups); unknown names."""
    groups: dict[str, list[str]] = {}
    suites = []
    for family in all_families():
        members = [t.name for t in all_tasks() if t.family == family.name and t.in_suite]
        groups[family.group] = members
        if members:
            groups[family_task_name(family)] = members  # the umbrella's leaf for this family
        suites += members
        for name, extra in family.extra_groups:
            groups[name] = list(extra)
    groups[UMBRELLA] = suites
    tasks, unknown = [], []
    for name in names:
        if name in groups:
            tasks += groups[name]
        else:
            try:
                tasks.append(get_task(name).name)
            except ValueError:
                unknown.append(name)
    return sorted(set(tasks)), unknown


@dataclass(frozen=True)
class Claims:
    """What a results file says: per task its metrics (``score``, ``score@4096`` …) and how many docs it evaluated,
    and the run's ``--limit``."""

    metrics: dict[str, dict[str, float]]
    docs: dict[str, int]
    limit: object


def read_claims(run: Run, logged: list[tuple[str, dict[str, float]]] = ()) -> Claims:
    """The results file's claims; a one-line ValueError naming the field when its shape is not lm-eval's. An Inspect
    run claims the per-sample scores it logged (``logged``: (task, metrics) per sample), a lighteval run its results
    file's metrics (``analysis.harness_logs``)."""
    if run.harness == harness_logs.INSPECT:
        return Claims(*dataclasses.astuple(harness_logs.inspect_claims(run.samples, list(logged))))
    if run.harness == harness_logs.LIGHTEVAL:
        return Claims(*dataclasses.astuple(harness_logs.lighteval_claims(run.results, list(logged))))
    if run.results is None:
        return Claims({}, {}, None)
    name = run.results.name
    try:
        document = json.loads(run.results.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise ValueError(f"{name}: not valid JSON ({type(error).__name__}: {error})") from None
    if not isinstance(document, dict):
        raise ValueError(f"{name}: a JSON {type(document).__name__}; allowed: lm-eval's results object")
    results, counts, config = (document.get(key) or {} for key in ("results", "n-samples", "config"))
    for key, value in (("results", results), ("n-samples", counts), ("config", config)):
        if not isinstance(value, dict):
            raise ValueError(f"{name}: {key} is a JSON {type(value).__name__}; allowed: an object")
    metrics: dict[str, dict[str, float]] = {}
    for task, values in results.items():
        if not isinstance(values, dict):
            raise ValueError(f"{name}: results/{task} is a JSON {type(values).__name__}; allowed: an object")
        metrics[task] = {key.split(",")[0]: _claimed_number(name, f"results/{task}/{key}", value)
                         for key, value in values.items()
                         if "," in key and "_stderr" not in key and isinstance(value, (int, float))}
    docs = {}
    for task, count in counts.items():
        effective = count.get("effective") if isinstance(count, dict) else None
        if type(effective) is not int or effective < 0:
            raise ValueError(f"{name}: n-samples/{task}/effective is {effective!r}; allowed: a whole number >= 0")
        docs[task] = effective
    return Claims(metrics, docs, config.get("limit"))


def _claimed_number(file: str, field: str, value: int | float) -> float:
    """A claimed metric as a float: NaN is kept (a bin no doc reached), infinities, booleans and integers too large
    for a float are refused."""
    if isinstance(value, bool) or (isinstance(value, int) and abs(value) > 2**53):
        raise ValueError(f"{file}: {field} is {str(value)[:40]}; allowed: a number")
    if math.isinf(value):
        raise ValueError(f"{file}: {field} is {value}; allowed: a finite number (or NaN for an empty bin)")
    return float(value)


@dataclass
class _TaskTally:
    """Running per-task sums of the re-scored metrics (None values are docs outside a bin: bin_mean skips them)."""

    sums: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    indices: set[int] = field(default_factory=set)

    def add(self, metrics: dict[str, float | list | None]) -> None:
        for name, value in metrics.items():
            if isinstance(value, list):  # headline's [key, value]: its balanced mean is recomputed by the board
                continue
            if value is not None and not (isinstance(value, float) and math.isnan(value)):
                self.sums[name] += float(value)
                self.counts[name] += 1

    def merged(self, other: _TaskTally) -> _TaskTally:
        """This tally and ``other`` pooled (a family task's docs are its members' docs)."""
        pooled = _TaskTally()
        for tally in (self, other):
            for name, total in tally.sums.items():
                pooled.sums[name] += total
            for name, count in tally.counts.items():
                pooled.counts[name] += count
        pooled.indices = set(range(len(self.indices) + len(other.indices)))  # a count: members' indices overlap
        return pooled

    def mean(self, name: str) -> float:
        return self.sums[name] / self.counts[name] if self.counts.get(name) else math.nan


def task_problem(doc: dict, logged_as: str) -> str | None:
    """Why a doc does not belong in the samples file of lm-eval task ``logged_as``: its own task must be that task,
    or the stored config the task is a view of (``stored_as``) with a row the view keeps; None when it belongs."""
    if doc["task"] == logged_as or member_task(logged_as, doc) is not None:  # its task, or its family task
        return None
    try:
        view = get_task(logged_as)
    except ValueError:
        view = None
    family = get_family(doc["family"])
    if view is not None and view.stored_as == doc["task"] and family.stored_filter is not None \
            and family.stored_filter(view.config, doc):
        return None
    return f"a doc of task {doc['task']!r} logged as {logged_as!r}; allowed: docs of the task the samples file names"


def doc_problem(doc: dict, seed: int, secret: int | None = None) -> str | Pending:
    """Why a logged doc is not a doc of this package for its task and the declared seed, or (when its record is
    plausible) what regenerating it needs (``regenerate.regeneration_problems`` finishes the check). ``secret``: the
    private seed the docs were generated from (``seed`` is then the masked value they carry)."""
    problem = version_problem(doc)
    if problem is not None:
        return problem
    if doc.get("seed") != seed:
        return f"made with seed {doc.get('seed')}, but submission.json declares seed {seed}"
    registered = get_task(doc["task"])
    family = get_family(doc["family"])
    config = config_from_mapping(family.config_type, json.loads(doc["params"])["config"])
    size = task_size(dataclasses.replace(registered, config=config, seed=seed if secret is None else secret))
    if not 0 <= doc["index"] < size:
        return f"index {doc['index']} is outside its task; allowed: 0 to {size - 1}"
    budget = {knob: getattr(config, knob) for knob in BUDGET_KNOBS if hasattr(config, knob)}
    expected = dataclasses.replace(registered.config, **budget)
    if config != expected:
        changed = sorted(f.name for f in dataclasses.fields(config) if getattr(config, f.name) != getattr(expected,
                                                                                                          f.name))
        return f"made with knobs other than the registered task's ({', '.join(changed)})"
    order = (doc["family"], *(family.regeneration_key(doc) if family.regeneration_key else ()), doc["task"],
             int(doc["index"]))
    return Pending(order, "", doc["task"], config, seed if secret is None else secret, doc["split"], int(doc["index"]),
                   content_hash(instance_part(doc)), secret is not None)


def validate(path: Path, progress: Callable[[int], None] | None = None, workers: int = 1) -> Verdict:
    """Every check of the module docstring on the submission at ``path`` (folder or archive); ``workers`` processes
    regenerate the docs."""
    return validate_and_load(path, None, progress, workers)[0]


def validate_and_load(path: Path, load: Callable[[Verdict, Path], T] | None,
                      progress: Callable[[int], None] | None = None, workers: int = 1) -> tuple[Verdict, T | None]:
    """``validate``, then (for a submission that passes) ``load(verdict, folder)`` while the unpacked folder still
    exists, so an archive is unpacked once. A submission is hostile input: whatever it makes fail (a corrupt archive,
    any JSON shape, a number out of range, nesting deep enough for a RecursionError) is one reason naming it, never
    an exception for the caller."""
    name = str(path)
    where: list[str] = []  # the sample being checked (if any), for a failure no specific check names
    try:
        with opened(path) as folder:
            verdict = _validate_folder(name, folder, progress, workers, where)
            loaded = load(verdict, folder) if load is not None and verdict.ok else None
        return _printable_verdict(verdict), loaded
    except ValueError as error:  # a sample being read is named (the error may come from deep in a parser)
        return Verdict(name, (_line(f"{where[-1]}: {error}" if where else str(error)),)), None
    except Exception as error:  # noqa: BLE001  # one hostile submission must never take the board down
        after = f" at {where[-1]}" if where else ""
        reason = (f"submission: {name}: cannot be read{after} ({type(error).__name__}: {error}); allowed: lm-eval's "
                  "output as `lurch eval --log_samples` writes it")
        return Verdict(name, (_line(reason),)), None


def _line(text: str) -> str:
    text = printable(text)
    return text if len(text) <= MAX_PROBLEM else text[:MAX_PROBLEM] + "..."


def _printable_verdict(verdict: Verdict) -> Verdict:
    """Reasons and the model label as one inert line each: they quote submission fields."""
    return dataclasses.replace(verdict, problems=tuple(_line(p) for p in verdict.problems),
                               model=printable(verdict.model))


def _validate_folder(name: str, folder: Path, progress, workers: int, where: list[str]) -> Verdict:
    metadata, problems = read_submission_json(folder)
    if metadata is None:
        return Verdict(name, tuple(problems))
    if metadata["lurch_tasks_version"] != __version__:
        problems.append(f"submission.json: lurch_tasks_version {metadata['lurch_tasks_version']} differs from this "
                        f"lurch-tasks {__version__}; allowed: a run of the current release")
    tasks, unknown = expand_tasks(metadata["tasks"])
    problems += [f"submission.json: task {t!r} is not a lurch-tasks task or group" for t in unknown]
    try:
        runs = find_runs([folder])
    except ValueError as error:
        return Verdict(name, (*problems, str(error)), metadata, tasks=tuple(tasks))
    models = sorted({run.model for run in runs})
    if len(runs) != 1:
        problems.append(f"{len(runs)} runs ({', '.join(models)}); allowed: one run of one model")
    declared = metadata["run"].get("harness", LM_EVAL)
    problems += [f"submission.json: run.harness is {declared!r}, but the logs are {harness}'s" for harness in
                 sorted({run.harness for run in runs}) if harness != declared]
    subset = bool(metadata.get("subset", False))
    seed = metadata["seed"]
    secret, secret_problem = _private_seed_for(metadata)
    if secret_problem:
        return Verdict(name, (*problems, secret_problem), metadata, tasks=tuple(tasks))
    tallies: dict[str, _TaskTally] = defaultdict(_TaskTally)
    seen: set[tuple[str, str]] = set()
    foreign: set[str] = set()
    docs = 0
    pending: list[Pending] = []
    versions: set[tuple[str, str]] = set()
    logged: list[tuple[str, dict[str, float]]] = []  # an Inspect or lighteval run's per-doc claims
    for sample in iter_samples(runs, foreign):
        where[:] = [sample.source]
        if sample.claimed:
            logged.append((sample.task, dict(sample.claimed)))
        versions.add((str(sample.doc.get("family")), str(sample.doc.get("family_version"))))
        problem, counted = _sample_problem(sample, seen, seed, secret, pending, tallies)
        where.clear()  # errors between samples (reading the next line) name their file themselves
        problems += [problem] if problem is not None else []
        docs += counted
    problems += regeneration_problems(pending, workers, progress)
    problems += [f"samples of {t}: not a lurch-tasks task; allowed: lurch-tasks tasks only" for t in sorted(foreign)]
    try:
        claims = [read_claims(run, logged) for run in runs]
    except ValueError as error:
        return Verdict(name, (*problems, str(error)), metadata, tasks=tuple(tasks))
    problems += _coverage_problems(tasks, tallies, subset, metadata, claims)
    problems += _claim_problems(runs, claims, tallies)
    return Verdict(name, tuple(problems), metadata, models[0] if len(models) == 1 else ", ".join(models),
                   tuple(tasks), docs, tuple(str(run.folder) for run in runs),
                   Proof(_proven_tasks(tallies, metadata["seed"]), tuple(sorted(versions))))


def _proven_tasks(tallies: dict[str, _TaskTally], seed: int) -> tuple[tuple[str, int, int], ...]:
    """(task, distinct indices logged, docs in the task) for every logged task this package registers."""
    proven = []
    for task, tally in sorted(tallies.items()):
        try:
            size = task_size(dataclasses.replace(get_task(task), seed=seed))
        except ValueError:
            continue  # not a task of this package: already a problem
        proven.append((task, len(tally.indices), size))
    return tuple(proven)


def _sample_problem(sample, seen: set, seed: int, secret: int | None, pending: list[Pending],
                    tallies: dict[str, _TaskTally]) -> tuple[str | None, bool]:
    """Check one logged sample: its problem (None: a plausible doc, queued for regeneration) and whether it counts
    as a doc. Every doc whose fields can be read is re-scored into its task's tally, so one bad doc is one reason
    and does not also skew its task's claims."""
    doc = sample.doc  # its shape was checked by analysis.runs.check_doc (iter_samples)
    where = f"{sample.task} doc {doc['id']}"
    key = (sample.task, doc["id"])
    if key in seen:
        return f"{where}: logged twice ({sample.source})", False
    seen.add(key)
    checked = doc_problem(doc, seed, secret)
    problem = task_problem(doc, sample.task) if isinstance(checked, Pending) else checked
    if problem is None:
        pending.append(dataclasses.replace(checked, where=where))
    tally = tallies[sample.task]
    tally.indices.add(doc["index"])
    if doc["family"] in {family.name for family in all_families()}:
        try:
            tally.add(process_results(doc, [list(sample.outputs) or sample.output], sample.task))
        except Exception as error:  # noqa: BLE001  # a doc that passed no check yet may break any scorer
            return f"{where}: {problem or 'cannot be scored'} ({type(error).__name__})", True
    return (None if problem is None else f"{where}: {problem}"), True


def _private_seed_for(metadata: dict) -> tuple[int | None, str | None]:
    """The private seed a submission ran on (from LURCH_PRIVATE_SEED), or why it cannot be checked."""
    declared = metadata.get("private_seed_sha256")
    if declared is None:
        return None, None
    try:
        secret = private_seed()
    except ValueError as error:
        return None, str(error)
    if secret is None:
        return None, (f"submission.json: private_seed_sha256 {declared[:12]}...: the run used a private seed; allowed: "
                      f"validate with {PRIVATE_ENV} set to it")
    if seed_sha256(secret) != declared:
        return None, (f"{PRIVATE_ENV} is not the seed this submission ran on (its SHA-256 differs from "
                      f"{declared[:12]}...)")
    if metadata["seed"] != masked_seed(secret):
        return None, f"submission.json: seed must be the masked value the private docs carry ({masked_seed(secret)})"
    return secret, None


def _coverage_problems(tasks: list[str], tallies: dict[str, _TaskTally], subset: bool, metadata: dict,
                       claims: list[Claims]) -> list[str]:
    """Declared tasks against logged ones; every doc of a task, or (a declared subset) exactly the first N docs,
    N being what the results file says it evaluated (``lurch eval --limit N`` evaluates docs 0..N-1)."""
    undeclared = sorted(set(tallies) - set(tasks))
    problems = [f"{task}: logged but not declared in submission.json tasks" for task in undeclared]
    limits = {str(claim.limit) for claim in claims} - {"None"}
    if limits and not subset:
        problems.append(f"the run used --limit {', '.join(sorted(limits))}; allowed: a full run, or "
                        "\"subset\": true in submission.json (the table labels it)")
    evaluated = {task: n for claim in claims for task, n in claim.docs.items()}
    for family_task, total in sorted(evaluated.copy().items()):  # the umbrella's leaves: one count for their members
        family = family_of(family_task)
        if family is None:
            continue
        logged = [task for task in members(family) if task in tallies]
        counted = sum(len(tallies[task].indices) for task in logged)
        if counted != total:
            problems.append(f"{family_task}: the results file counts {total} docs, the samples log {counted}")
        for task in logged:  # each member's own docs: a prefix of it (subset) or all of it, checked below
            evaluated.setdefault(task, len(tallies[task].indices))
    for task in tasks:
        tally = tallies.get(task)
        family = get_family(get_task(task).family)
        if tally is None and subset and family_task_name(family) in evaluated and task in members(family):
            continue  # --limit N on a family task: its first N docs, round robin, may not reach every member
        if tally is None:
            problems.append(f"{task}: declared in submission.json but no samples were logged")
            continue
        size = task_size(dataclasses.replace(get_task(task), seed=metadata["seed"]))
        claimed = evaluated.get(task, -1)
        if claimed != len(tally.indices):
            problems.append(f"{task}: the results file counts {claimed} docs, the samples log {len(tally.indices)}")
        wanted = range(min(claimed, size)) if subset and claimed >= 0 else range(size)
        missing = sorted(set(wanted) - tally.indices)
        if missing:
            shown = ", ".join(map(str, missing[:MAX_LISTED])) + (" ..." if len(missing) > MAX_LISTED else "")
            kind = "the first" if subset else "all"
            problems.append(f"{task}: doc index {shown} missing ({kind} {len(wanted)} of {size} docs are needed)")
    return problems


def _claim_problems(runs: list[Run], claims: list[Claims], tallies: dict[str, _TaskTally]) -> list[str]:
    """One line per task whose claimed metrics differ from the re-scored outputs: the first differing metric (headline
    metrics first) and how many more differ."""
    problems = []
    for run, claim in zip(runs, claims, strict=True):
        for task, tally in sorted(_with_family_tallies(tallies, claim).items()):
            if task not in claim.metrics:
                problems.append(f"{task}: no results in {run.results.name if run.results else 'the run'}")
                continue
            differing = [(metric, value, tally.mean(metric)) for metric, value in sorted(
                claim.metrics[task].items(), key=lambda item: ("@" in item[0], item[0] != "score", item[0]))
                if metric in tally.counts and _differs(float(value), tally.mean(metric))]
            if differing:
                metric, value, recomputed = differing[0]
                more = f" (and {len(differing) - 1} more metrics differ)" if len(differing) > 1 else ""
                problems.append(f"{task}: results claim {metric} = {value!r}, the logged outputs score "
                                f"{recomputed!r}{more}")
    return problems


def _with_family_tallies(tallies: dict[str, _TaskTally], claim: Claims) -> dict[str, _TaskTally]:
    """``tallies`` with the members of each family task the results file reports pooled under that family task (the
    umbrella's leaves log their docs under their member tasks, ``analysis.runs.logged_task``)."""
    out = dict(tallies)
    for family_task in claim.metrics:
        family = family_of(family_task)
        if family is None:
            continue
        pooled = _TaskTally()
        for task in members(family):
            if task in out and task not in claim.metrics:
                pooled = pooled.merged(out.pop(task))
        out[family_task] = pooled
    return out


def _differs(claimed: float, recomputed: float) -> bool:
    if math.isnan(claimed) and math.isnan(recomputed):
        return False
    return not abs(claimed - recomputed) <= TOLERANCE
