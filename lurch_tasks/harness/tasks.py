"""lm-eval glue: docs built at load time from the same ``generate()`` the dataset builders use."""

from __future__ import annotations

import hashlib
import json
import math
import sys
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..core.cells import cell_at
from ..core.config import ConfigError, config_from_mapping, config_hash
from ..core.generation import check_split, generate_row, resolve_task, task_size
from ..core.private import ENV as PRIVATE_ENV
from ..core.private import mask_row, private_seed
from ..core.registry import get_family, get_task
from ..core.rng import canonical_json
from ..scoring import headline
from ..scoring.repeats import answers_of, mean_scores
from .fit import record_lengths
from .metadata import parse_metadata
from .metrics import BINNED_METRICS, HEADLINE, SPARSE_METRICS, doc_metric_names
from .rag_units import answer_account
from .window import as_bool, model_tokenizer, model_window, plan_window, warn


def build_docs(task_name: str, **metadata: Any) -> dict[str, Any]:
    """The docs of a registered task as {split: datasets.Dataset}, in doc order (golden-stride over the knob cells).

    With the model's window known (``window.model_window``), lengths whose prompt + ``max_gen_toks`` cannot fit
    are left out with one warning line (an error with ``strict``), and any remaining doc that would not fit
    in the model's tokenizer is dropped too: lm-eval would otherwise truncate its instructions away. The rows are
    streamed into a memory-mapped Arrow file (``doc_store``): memory does not grow with the number of docs."""
    from .doc_store import rows_to_dataset

    return {"test": rows_to_dataset(iter_docs(task_name, **metadata))}


def iter_docs(task_name: str, **metadata: Any) -> Iterator[dict[str, Any]]:
    """``build_docs``'s rows one at a time. The knobs are checked (and the lengths planned) before the first row is
    asked for; the window reports (and their ``strict`` errors) come once the rows are exhausted."""
    registered = get_task(task_name)
    family = get_family(registered.family)
    request = parse_metadata(type(registered.config), metadata)
    check_split(request.split)
    window = model_window(metadata)
    if request.dataset_path:
        if private_seed() is not None:
            raise ConfigError(f"dataset_path: cannot be combined with {PRIVATE_ENV} (a stored copy has a public "
                              "seed); allowed: one of them")
        config = registered.config
        stored = _stored_docs(request.dataset_path, registered.stored_as or task_name, request.split)
        counter = _Counter()
        rows = _stored_rows(stored, counter, family, config if registered.stored_as else None,
                            _fit_check(window, request, family, config, metadata))
    else:
        overrides = raised_lengths(task_name, context_floor(registered, family), dict(request.overrides),
                                   request.strict)
        derived = model_tokenizer(metadata)
        if derived and "tokenizer" not in overrides:
            overrides["tokenizer"] = derived  # budgets in the model's own tokenizer (as RULER does)
        secret = private_seed()
        if secret is not None and request.seed is not None:
            raise ConfigError(f"seed: cannot be combined with {PRIVATE_ENV}; allowed: one of them")
        task = resolve_task(task_name, overrides, secret if secret is not None else request.seed)
        config = task.config
        indices = range(task_size(task))
        record_lengths(task_name, _token_targets(family, config), ())
        if window:
            plan = plan_window(_token_targets(family, config), window, _max_gen_toks(request, family, config))
            record_lengths(task_name, _token_targets(family, config), plan.skipped)
            if plan.skipped:
                if request.strict:
                    raise ConfigError(f"{plan.describe(task_name)}; allowed: shorter max_seq_lengths, a larger "
                                      "window, or strict false to skip them")
                warn(plan.describe(task_name) + " (strict: true fails instead)")
                indices = [i for i in indices if family.token_target(cell_at(config, i)) not in plan.skipped]
        counter = _Counter()
        rows = _generate(task, list(indices), request.split, task_name, request.max_docs,
                         _fit_check(window, request, family, config, metadata), secret, counter)
    run = run_keys(metadata.get("think_end_token"), request.bins, _max_gen_toks(request, family, config))
    return _finish(rows, counter, run, task_name, registered, family, window, request, config, metadata)


class _Counter:
    """How many rows a stream looked at, and the first one it kept (for the reports after the stream)."""

    def __init__(self) -> None:
        self.looked, self.kept, self.first = 0, 0, None


def _stored_rows(stored, counter: _Counter, family, view_config, keep) -> Iterator[dict]:
    """A stored folder's rows (a view's own only: ``view_config``), those ``keep`` leaves."""
    for row in stored:
        if view_config is not None and not family.stored_filter(view_config, row):
            continue
        counter.looked += 1
        yield from keep([row])


def _finish(rows, counter: _Counter, run: dict, task_name, registered, family, window, request, config,
            metadata) -> Iterator[dict]:
    for row in rows:
        if counter.first is None:
            counter.first = row
        counter.kept += 1
        yield {**row, **run}
    if window:
        _report_unfit(counter.kept, counter.looked, counter.first, task_name, window,
                      _max_gen_toks(request, family, config), metadata, request.strict)
    if not counter.kept and window:
        floor = context_floor(registered, family)
        if floor and window.tokens < floor:  # no length of this family can ever fit: say so, not "shorter"
            raise ConfigError(f"{task_name}: its shortest case needs {floor} tokens, more than the model's "
                              f"{window.tokens}-token window ({window.source}); allowed: a model with a larger "
                              f"window, or tasks without the {family.group} group")
        raise ConfigError(f"{task_name}: no doc fits the model's {window.tokens}-token window ({window.source}); "
                          "allowed: shorter max_seq_lengths or a smaller max_gen_toks")


def run_keys(token: object, bins: bool, gen_budget: int) -> dict[str, Any]:
    """What the run tells every doc's scorer (``core.instance.RUN_KEYS``), so `lurch report` re-scores a logged doc
    the same way: the run's ``think_end_token`` (lm-eval's model argument, merged into the metadata, or ours for a
    model without it; a token id, which hf accepts, is lm-eval's to strip: it cannot be matched in text), the
    ``bins`` switch, and the generation budget (``gen_budget``: an unreadable output that fills it was cut off)."""
    keys: dict[str, Any] = {"gen_budget": int(gen_budget)}
    if isinstance(token, str) and token and not token.isdigit():
        keys["think_end_token"] = token
    if bins:
        keys["bins"] = True
    return keys


def context_floor(task, family) -> int | None:
    """The fewest tokens any case of ``task`` can fit in: the task's own floor, else its family's."""
    return task.min_context_tokens or family.min_context_tokens


def raised_lengths(task_name: str, floor: int | None, overrides: dict[str, Any], strict: bool) -> dict[str, Any]:
    """Harness-wide lengths (``max_seq_lengths``) below the task's shortest case (``floor``) are raised to it, with
    one warning line (an error with ``strict``), so one run can cover families of different scales."""
    lengths = overrides.get("context_tokens")
    if not floor or not lengths or min(lengths) >= floor:
        return overrides
    short = [n for n in lengths if n < floor]
    message = (f"{task_name}: lengths {', '.join(map(str, short))} are below the {floor} tokens its shortest case "
               f"needs")
    if strict:
        raise ConfigError(f"{message}; allowed: max_seq_lengths of {floor} or more, or strict false to raise them")
    warn(f"{message}; using {floor} instead (strict: true fails instead)")
    kept = tuple(sorted({max(n, floor) for n in lengths}))
    return {**overrides, "context_tokens": kept}


def _generate(task, indices: list[int], split: str, task_name: str, max_docs: int | None,
              keep, secret: int | None = None, counter: _Counter | None = None) -> Iterator[dict]:
    """Rows of ``indices`` in order, those ``keep`` leaves, stopping at ``max_docs`` kept rows (``lurch eval
    --limit N``: the doc order makes any prefix balanced, and the first N docs are the same either way), one at a
    time. Rows come from the doc cache when an earlier run generated them (``harness.doc_cache``); the rows
    generated here are added to it. ``counter.looked`` counts the rows looked at. With a private seed (``secret``)
    the cache is not used and every row is masked (``core.private``)."""
    from tqdm.auto import tqdm

    from .doc_cache import DocCache, open_doc_cache

    counter = counter if counter is not None else _Counter()
    wanted = len(indices) if max_docs is None else min(max_docs, len(indices))
    kept = 0
    cache = open_doc_cache(task, split) if secret is None else DocCache(None, {})
    with tqdm(total=wanted, desc=f"generating {task_name}", unit="doc", disable=wanted < 50) as bar:
        try:
            for index in indices:
                if kept >= wanted:
                    break
                counter.looked += 1
                row = _cached_row(cache, task, index, split)
                for out in keep([row if secret is None else mask_row(row, secret)]):
                    kept += 1
                    bar.update(1)
                    yield out
        except BaseException:
            cache.discard()  # an interrupted stream leaves the entry as it was (and no spill file)
            raise
        cache.save()


def _cached_row(cache, task, index: int, split: str) -> dict:
    row = cache.get(index)
    if row is None:
        row = generate_row(task, index, split)
        cache.put(index, row)
    return row


def _token_targets(family, config) -> tuple[int, ...]:
    return tuple(sorted({t for cell in config.cells() if (t := family.token_target(cell)) is not None}))


def _max_gen_toks(request, family, config) -> int:
    return request.max_gen_toks if request.max_gen_toks is not None else family.max_gen_toks(config)


def _fit_check(window, request, family, config, metadata):
    """The docs whose prompt, counted as the model will see it, leaves room for ``max_gen_toks`` in the window
    (all of them when the window is unknown). A doc budgeted in the model's tokenizer (and chat template
    setting) carries its exact count; others (a stored folder built with another tokenizer, line-sized
    configs) are counted once here."""
    from ..core.budget import prompt_meter

    if window is None:
        return lambda rows: rows
    limit = window.tokens - _max_gen_toks(request, family, config)
    spec = model_tokenizer(metadata)
    chat = as_bool("chat_template", metadata.get("chat_template", False))
    meter = prompt_meter(spec, chat) if spec else None

    def fits(row: dict) -> bool:
        params = json.loads(row["params"])
        exact = meter is None or (params.get("tokenizer") == spec and bool(params.get("chat_template")) == chat)
        return (row["difficulty"]["prompt_tokens"] if exact else meter.count(row["prompt"])) <= limit

    return lambda rows: [row for row in rows if fits(row)]


def _report_unfit(kept: int, total: int, first: dict | None, task_name: str, window, max_gen_toks: int, metadata,
                  strict: bool) -> None:
    dropped = total - kept
    if dropped:
        message = (f"{task_name}: skipping {dropped} of {total} docs whose prompt + max_gen_toks {max_gen_toks} "
                   f"would exceed the {window.tokens}-token window ({window.source})")
        if strict:
            raise ConfigError(message + "; allowed: shorter prompts, a larger window, or strict false")
        warn(message)
    if not model_tokenizer(metadata) and first is not None:
        budgeted = json.loads(first["params"]).get("tokenizer")
        warn(f"{task_name}: prompts were counted in {budgeted}, not in the model's tokenizer, so the window check is "
             "approximate; pass tokenizer=<the model's tokenizer folder or .gguf> for exact budgets")


def _stored_docs(path: str, task_name: str, split: str):
    """Docs read from a materialized folder or a Hub copy (same rows as generating them).

    A local folder is checked against its manifest first (every file's SHA-256), and read through a cache
    keyed by that manifest: rewritten files can neither slip through unchecked nor be served from a stale
    cache."""
    import datasets

    kwargs: dict[str, Any] = {}
    if Path(path).is_dir():
        kwargs["cache_dir"] = str(_checked_cache_dir(Path(path), task_name))
    try:
        return datasets.load_dataset(path, task_name, split=split, **kwargs)
    except (FileNotFoundError, ValueError) as err:
        first_line = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(f"dataset_path: cannot read config {task_name!r} from {path!r}: {first_line}; allowed: a "
                         "folder written by `lurch materialize`, or a Hub dataset id (org/name)") from err


def _checked_cache_dir(folder: Path, task_name: str) -> Path:
    import datasets

    from ..hub.manifest import MANIFEST_NAME, file_sha256, read_manifest

    manifest = read_manifest(folder)
    if manifest is None:
        raise ValueError(f"dataset_path: {str(folder)!r} has no {MANIFEST_NAME}; allowed: a folder written by "
                         "`lurch materialize` (check it with `lurch validate`)")
    entry = manifest["configs"].get(task_name)
    if entry is None:
        raise ValueError(f"dataset_path: {str(folder)!r} holds no config {task_name!r}; allowed: "
                         f"{', '.join(sorted(manifest['configs'])) or 'none'}")
    present = sorted(f"{task_name}/{p.name}" for p in (folder / task_name).iterdir()) if (folder / task_name).is_dir() \
        else []
    changed = [name for name in sorted(entry["files"]) if name not in present
               or file_sha256(folder / name) != entry["files"][name]] + sorted(set(present) - set(entry["files"]))
    if changed:
        raise ValueError(f"dataset_path: {changed[0]} differs from {MANIFEST_NAME} (the folder changed after "
                         "materialize); allowed: an unmodified folder (check it with `lurch validate`)")
    registered = get_task(task_name)
    if entry.get("config_hash") != config_hash(registered.config):
        print(f"lurch: note: {task_name!r} in {str(folder)!r} was materialized with other knobs than the registered "
              f"task (config_hash {entry.get('config_hash', '?')[:12]}); its results describe that folder's config",
              file=sys.stderr)
    key = hashlib.sha256(canonical_json(entry).encode("ascii")).hexdigest()[:16]
    return Path(datasets.config.HF_DATASETS_CACHE) / "lurch-stored" / key


def process_results(doc: dict, results: list[str], task_name: str | None = None,
                    bins: bool = True) -> dict[str, float | list | None]:
    """The doc's metrics for lm-eval (``harness.metrics``): ``headline`` as [balance key, normalised score] (its
    aggregation, ``balanced_mean``, weighs every key equally), the task's short list, and the negative controls'
    metrics (None on other docs). A run with the ``bins`` switch adds the detail metrics and every per-bin variant
    of the doc's config (``score@4096``, ``score@d=-5``): the doc's own bins carry its values, the others None, so
    each bin is averaged over its own docs (bin_mean) while every metric counts the same docs (lm-eval weights
    groups by one count per task). ``task_name`` is the lm-eval task whose YAML declares the metrics (default: the
    doc's own task; a family task passes ``bins`` False: its YAML declares none). With several answers per doc
    (``repeats``) each is scored and the metrics are their mean."""
    answers = answers_of(results)  # one per repeat when the run keeps them all (``repeats``)
    output = answers[0]
    family = get_family(doc["family"])
    metrics = mean_scores([family.score(doc, a if isinstance(a, str) else str(a)) for a in answers])
    task_name = task_name or doc["task"]
    detail = bool(doc.get("bins")) and bins
    sparse = sparse_metrics(task_name)
    out: dict[str, float | list | None] = {}
    for name in doc_metric_names(family.extra_metrics, sparse, detail):
        if name == HEADLINE:
            out[name] = [headline.balance_key(doc), headline.normalized(doc, float(metrics["score"]))]
        else:
            value = metrics.get(name)  # a sparse metric is None on the docs that do not report it
            out[name] = None if value is None else float(value)
    out.update(answer_account(output))  # what a lurch-rag inner model read (harness.rag); nothing for other models
    if not detail:
        return out
    own = set(family.bin_keys(doc).values())
    declared = _bin_names(doc, task_name)
    for suffix in declared:
        for name in BINNED_METRICS:
            out[f"{name}@{suffix}"] = out[name] if suffix in own else None
        if suffix.isdigit():  # the controls' metrics per length only (token-count bins): false_positive_rate@4096
            for name in sparse:
                out[f"{name}@{suffix}"] = out[name] if suffix in own else None
    for suffix in own:  # undeclared bins of an overridden config: reported by their own docs only
        for name in BINNED_METRICS:
            out.setdefault(f"{name}@{suffix}", out[name])
    return out


_BIN_NAMES: dict[tuple[str, str, str], tuple[str, ...]] = {}


@lru_cache(maxsize=256)
def sparse_metrics(task_name: str) -> tuple[str, ...]:
    """The SPARSE_METRICS a task's YAML declares: those its config says some of its docs report
    (``config.sparse_metrics()``, e.g. a graph config with zero-gold controls)."""
    try:
        config = get_task(task_name).config
    except ValueError:  # a config that is not registered: no YAML declares them
        return ()
    own = getattr(config, "sparse_metrics", None)
    return tuple(m for m in SPARSE_METRICS if own is not None and m in own())


def _bin_names(doc: dict, task_name: str) -> tuple[str, ...]:
    """The bins reported for every doc: those of the doc's config that the task's YAML declares (with
    bin_mean). A bin only an overridden config has (``max_seq_lengths=[1536]``) is undeclared, so lm-eval
    averages it with its default mean: it is reported by its own docs only, never padded with None."""
    key = (doc["family"], task_name, doc["config_hash"])
    if key not in _BIN_NAMES:
        family = get_family(doc["family"])
        config = config_from_mapping(family.config_type, json.loads(doc["params"])["config"])
        try:
            declared = set(family.bin_names(get_task(task_name).config))
        except ValueError:  # a config that is not registered: no YAML declares its bins
            declared = set()
        _BIN_NAMES[key] = tuple(name for name in family.bin_names(config) if name in declared)
    return _BIN_NAMES[key]


balanced_mean = headline.balanced_mean  # headline's aggregation, named here for the YAMLs' `!function`


def bin_mean(values: list[float | None]) -> float:
    """Mean over the docs of one bin (None marks docs of other bins); NaN for a bin no doc reached."""
    own = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return sum(own) / len(own) if own else math.nan


def doc_to_text(doc: dict) -> str:
    return doc["prompt"]


def doc_to_target(doc: dict) -> str:
    return doc["answer_text"]


# One custom_dataset and one process_results entry point per registered task (lm-eval's `!function` needs a named
# callable, and process_results must know which task's YAML declared the bins).
def _make_loader(task_name: str, build=None):
    """``load_<task>``: ``build`` (default ``build_docs``; a family task's is ``build_family_docs``) for the task."""
    build = build or build_docs

    def loader(**metadata: Any) -> dict[str, Any]:
        return build(task_name, **metadata)

    loader.__name__ = loader.__qualname__ = f"load_{task_name}"
    return loader


def _make_scorer(task_name: str):
    def scorer(doc: dict, results: list[str]) -> dict[str, float | None]:
        return process_results(doc, results, task_name)

    scorer.__name__ = scorer.__qualname__ = f"process_results_{task_name}"
    return scorer


def _make_family_loader(task_name: str):
    from .family_tasks import build_family_docs

    return _make_loader(task_name, build_family_docs)


def _make_family_scorer(task_name: str):
    from .family_tasks import family_of, family_sparse_metrics

    sparse = family_sparse_metrics(family_of(task_name))

    def scorer(doc: dict, results: list[str]) -> dict[str, float | list | None]:
        out = process_results(doc, results, doc["task"], bins=False)
        return {**out, **{name: out.get(name) for name in sparse}}  # every doc reports each, None if not its own

    scorer.__name__ = scorer.__qualname__ = f"process_results_{task_name}"
    return scorer


def __getattr__(name: str):
    from .family_tasks import family_of

    for prefix, make, make_family in (("load_", _make_loader, _make_family_loader),
                                      ("process_results_", _make_scorer, _make_family_scorer)):
        if name.startswith(prefix):
            task_name = name[len(prefix):]
            if family_of(task_name) is not None:
                return make_family(task_name)
            get_task(task_name)  # raises a clear error for an unknown task
            return make(task_name)
    raise AttributeError(name)
