"""Reading lm-eval output folders: which runs, models and samples they hold, and the instance record of every
logged doc, checked against the installed package.

lm-eval writes one ``results_<stamp>.json`` per run and, with ``--log_samples``, one ``samples_<task>_<stamp>.jsonl``
per task beside it (``--output_path`` holds one such folder per model). Every logged sample carries its doc, which for
our tasks is the whole Instance record; that record is re-scored, so a report never trusts the numbers a run claims.
A record made by another ``family_version`` or with a config whose hash this package computes differently is refused
(unless allowed): its scores would silently mix two benchmarks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..core.config import config_from_mapping, config_hash
from ..core.registry import all_families, get_family, get_task
from ..core.rng import canonical_json

_STAMPED = re.compile(r"^(?P<kind>results|samples)_(?:(?P<task>.+)_)?(?P<stamp>\d{4}-\d{2}-\d{2}T[\d\-.]+)$")


@dataclass(frozen=True)
class Run:
    """One lm-eval run: its results file (None when only samples are left) and its samples files."""

    folder: Path
    stamp: str
    results: Path | None
    samples: tuple[Path, ...]
    model: str  # label: lm-eval's model name, with the ``pretrained`` folder's name when there is one


@dataclass(frozen=True)
class Sample:
    model: str
    task: str  # the lm-eval task that logged it (a view such as recon_chain, not the stored config)
    doc: dict
    output: str
    source: str  # "file:line", for messages


def _stamp_of(path: Path) -> tuple[str, str | None] | None:
    match = _STAMPED.match(path.stem)
    if not match:
        return None
    return match["stamp"], match["task"]


def model_label(results: Path | None, folder: Path) -> str:
    """lm-eval's ``config.model`` (with the ``pretrained=`` name, if any) from the results file, else the folder."""
    if results is not None:
        try:
            config = json.loads(results.read_text(encoding="utf-8")).get("config", {})
        except (OSError, ValueError):
            config = {}
        model, args = str(config.get("model") or ""), config.get("model_args") or ""
        if isinstance(args, dict):
            pretrained = str(args.get("pretrained", ""))
        else:
            pretrained = next((a.split("=", 1)[1] for a in str(args).split(",") if a.startswith("pretrained=")), "")
        if model:
            return f"{model}:{Path(pretrained).name}" if pretrained else model
    return folder.name


def find_runs(run_dirs: Iterable[Path]) -> list[Run]:
    """Every run under the folders, in a stable order (folder, then stamp)."""
    runs: list[Run] = []
    for root in run_dirs:
        if not root.is_dir():
            raise ValueError(f"RUN_DIR: {str(root)!r} is not a folder; allowed: an lm-eval --output_path folder")
        found: dict[tuple[Path, str], dict] = {}
        for path in sorted(root.rglob("*")):
            stamped = _stamp_of(path) if path.suffix in (".json", ".jsonl") and path.is_file() else None
            if stamped is None:
                continue
            entry = found.setdefault((path.parent, stamped[0]), {"results": None, "samples": []})
            if path.name.startswith("results_"):
                entry["results"] = path
            else:
                entry["samples"].append(path)
        if not found:
            raise ValueError(f"RUN_DIR: no lm-eval results_*.json or samples_*.jsonl under {str(root)!r}; allowed: "
                             "the --output_path folder of an lm-eval run made with --log_samples")
        with_samples = [(key, entry) for key, entry in sorted(found.items()) if entry["samples"]]
        if not with_samples:
            raise ValueError(f"RUN_DIR: {str(root)!r} has lm-eval results but no samples_*.jsonl; allowed: a run "
                             "made with --log_samples")
        for (folder, stamp), entry in with_samples:
            runs.append(Run(folder, stamp, entry["results"], tuple(entry["samples"]),
                            model_label(entry["results"], folder)))
    return runs


def raw_output(record: dict) -> str:
    """The raw model output of one logged sample (``resps`` before lm-eval's filters)."""
    resps = record.get("resps") or record.get("filtered_resps") or [""]
    first = resps[0]
    while isinstance(first, list):
        first = first[0] if first else ""
    return first if isinstance(first, str) else str(first)


def is_lurch_doc(doc: object) -> bool:
    return isinstance(doc, dict) and {"family", "answer_format", "family_version", "difficulty"} <= set(doc)


def read_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number, record) of a JSON Lines file; a line that is not JSON is one clear error."""
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                raise ValueError(f"{path}: line {number} is not JSON (a truncated file?); allowed: the samples file "
                                 "as lm-eval wrote it") from None
            if not isinstance(record, dict):
                raise ValueError(f"{path}: line {number} is not a sample record; allowed: lm-eval's samples format")
            yield number, record


def iter_samples(runs: Iterable[Run], foreign: set[str] | None = None) -> Iterator[Sample]:
    """Every logged sample of our tasks; the names of other tasks' samples files go into ``foreign``."""
    for run in runs:
        for path in run.samples:
            stamped = _stamp_of(path)
            task = stamped[1] if stamped and stamped[1] else path.stem
            ours = False
            for number, record in read_jsonl(path):
                doc = record.get("doc")
                if not is_lurch_doc(doc):
                    break
                ours = True
                yield Sample(run.model, task, doc, raw_output(record), f"{path}:{number}")
            if not ours and foreign is not None:
                foreign.add(task)


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
