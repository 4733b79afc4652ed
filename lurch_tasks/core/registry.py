"""One registry of families and of named tasks (task name -> family + config)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .instance import Instance
from .memory import collector_paused
from .suggest import did_you_mean


@dataclass(frozen=True)
class Deferred:
    """A family part named ``package.module:attribute`` in place of the part itself, imported the first time the
    family's field is read: a process that only generates rows never imports the family's scorers, audits and
    shortcut probes (half of a family's import time)."""

    target: str

    def load(self) -> Any:
        module, _, attribute = self.target.partition(":")
        return getattr(importlib.import_module(module), attribute)


@dataclass(frozen=True)
class RagUnits:
    """How a retrieval wrapper (`lurch-rag`, ``harness.rag_units``) reads a family's context: the separator between
    its natural units (a line, a profile paragraph), and ``render(doc, context)``: the family's own prompt for the doc
    with ``context`` in place of its context (instructions and question unchanged). ``anchor(unit)``, when given, is
    the text that names a unit wherever it is quoted (RECON: an entry's composite header), for the paper's
    header-anchored recall of what a system sent."""

    separator: str
    render: Callable[[dict, str], str]
    anchor: Callable[[str], str | None] | None = None


@dataclass(frozen=True)
class Family:
    """Everything the shared machinery needs to know about one task family. Any part but the name, version,
    config type and generate may be given as a ``Deferred``; reading the field gives the part itself.
    ``generate`` runs with the cycle collector paused (``core.memory.collector_paused``)."""

    name: str
    version: str
    config_type: type
    generate: Callable[[Any, int, str, int], Instance]
    audit: Callable[[dict], list[str]]
    solve: Callable[[str], str | None]  # None: the prompt is not this family's
    guess: Callable[[str, int], str | None]
    score: Callable[[dict, str], dict[str, float]]
    bin_keys: Callable[[dict], dict[str, str]]  # doc -> {axis: bin suffix} for per-bin metrics
    bin_names: Callable[[Any], list[str]]  # config -> every bin suffix it can produce
    group: str  # lm-eval group of the family's default tasks
    source_files: tuple[str, ...]
    citation: str
    description: str
    # Config fields that studies compare (placement, decoys, arrangement, ...): they are left out of the
    # instance seed, so changing one changes nothing else (matched pairs, DESIGN 3.5).
    compared_knobs: tuple[str, ...] = ()
    shortcuts: tuple = field(default=())  # core.shortcuts.Shortcut
    probes: tuple = field(default=())  # core.shortcuts.Probe
    # core.probe.LearnedProbe: the family's candidates and their reasoning-free features, for the learned probe
    learned_probe: Any = None
    # row -> the slot the shortcut audit scores it in (RECON: "category/format"); each strategy is reported at its
    # worst slot, so a hole in one format is not averaged away by the others. None: one slot per config.
    audit_slot: Callable[[dict], str] | None = None
    # slot -> the exact expected score of a uniform guess there, when known (RECON: 0 for MCQ and ordering)
    slot_chance: Callable[[str], float | None] | None = None
    # row -> the exact expected score of a uniform guess on that row, when it depends on the row itself (the
    # discovery family's code kind: one function named of F scores 1/F on average); None: the slot decides
    row_chance: Callable[[dict], float | None] | None = None
    # knob -> the recorded property that reflects it (for the card and README: LURCH dispersion, say, does not
    # move with every distance knob, so analyses must know which column to read)
    knob_properties: tuple[tuple[str, str], ...] = ()
    # Generation budget sized to the answer format of a config (lm-eval's max_gen_toks; users may override).
    max_gen_toks: Callable[[Any], int] = field(default=lambda config: 512)
    # The prompt token budget of a knob cell, or None when the cell is sized otherwise (e.g. in lines).
    token_target: Callable[[Any], int | None] = field(default=lambda cell: None)
    # Metrics a family reports besides the umbrella's five (RECON: accuracy, abstain_rate).
    extra_metrics: tuple[str, ...] = ()
    # The exact expected score of a uniform guess (config -> float), when it is known: the shortcut audit then
    # compares with it instead of the seeded random baseline's noisy mean.
    chance: Callable[[Any], float] | None = None
    # The shortest prompt a case can have; shorter harness-wide lengths (max_seq_lengths) are raised to it.
    min_context_tokens: int | None = None
    # Groups besides the family group: (group name, member task names), e.g. a variant's six tasks.
    extra_groups: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # (view config, stored row) -> whether the row belongs to the view (tasks with ``stored_as``)
    stored_filter: Callable[[Any, dict], bool] | None = None
    # Checks across the rows of a config (``lurch validate``): ``row_summary`` keeps what they need of each row
    # (rows are streamed), then ``audit_rows(config, summaries, complete)`` returns problems; ``complete`` is
    # False when the folder holds a --limit prefix. RECON: the quota matrix of every case.
    row_summary: Callable[[dict], Any] | None = None
    # Markdown the dataset card shows under the family (RECON: its quota matrix and scoring rules)
    card_section: str = ""
    audit_rows: Callable[[Any, list, bool], list[str]] | None = None
    # (doc, raw output) -> the failure mode of every wrong option the output chose (RECON's distractor taxonomy),
    # and the failure modes the doc offered; ``lurch report`` tabulates how often each one is taken.
    failure_modes: Callable[[dict, str], tuple[list[str], list[str]]] | None = None
    # doc -> a sort key under which docs that share costly generation work sit together (RECON: the case), so a
    # validator regenerating many docs hits the family's caches
    regeneration_key: Callable[[dict], tuple] | None = None
    # doc -> the unit weighted equally inside the family's headline (``scoring.headline``); None: the doc's task.
    # RECON: the question category (its family group's tasks are per-category views of one stored config).
    balance_key: Callable[[dict], str] | None = None
    # ``RagUnits``: the family's retrievable units and prompt re-render for `lurch-rag`; None: the generic word-window
    # chunker, with the context swapped inside the rendered prompt.
    rag_units: Any = None

    def __post_init__(self) -> None:
        if not getattr(self.generate, "collector_paused", False):
            object.__setattr__(self, "generate", collector_paused(self.generate))

    def __getattribute__(self, name: str) -> Any:
        value = object.__getattribute__(self, name)
        if type(value) is Deferred:
            value = value.load()
            object.__setattr__(self, name, value)  # imported once; later reads find the part itself
        return value


@dataclass(frozen=True)
class Task:
    """A registered, named configuration of a family: one lm-eval task and one dataset config."""

    name: str
    family: str
    config: Any
    description: str
    in_suite: bool = False  # part of the family group (and so of the umbrella `memory_drift`)
    seed: int = 0
    # Replicates a source paper exactly, holes included (DESIGN 3.5): never a default, and its known
    # shortcut scores are reported rather than failed.
    paper_faithful: bool = False
    # A view: its rows are those of this stored config that the family's ``stored_filter`` keeps (RECON's
    # per-category tasks read the all-category config, where each case is stored once, not once per category).
    stored_as: str | None = None
    # The shortest prompt this task's widest case can have, when it is above the family's (``Family.
    # min_context_tokens``): find_the_origin_depth's 8-link chains of d = ±29 need ~2.4k tokens.
    min_context_tokens: int | None = None


_FAMILIES: dict[str, Family] = {}
_TASKS: dict[str, Task] = {}


def register_family(family: Family) -> Family:
    if family.name in _FAMILIES:
        raise ValueError(f"family {family.name!r} is already registered")
    _FAMILIES[family.name] = family
    return family


def register_task(task: Task) -> Task:
    if task.name in _TASKS:
        raise ValueError(f"task {task.name!r} is already registered")
    if task.family not in _FAMILIES:
        raise ValueError(f"task {task.name!r} names unknown family {task.family!r}")
    if task.paper_faithful and task.in_suite:
        raise ValueError(f"task {task.name!r}: a paper_faithful config is never part of the default suite")
    if task.stored_as is not None and (task.stored_as not in _TASKS or _FAMILIES[task.family].stored_filter is None):
        raise ValueError(f"task {task.name!r}: stored_as {task.stored_as!r} is not a registered task of a family with "
                         "a stored_filter")
    if not isinstance(task.config, _FAMILIES[task.family].config_type):
        raise TypeError(f"task {task.name!r}: config is not a {_FAMILIES[task.family].config_type.__name__}")
    _TASKS[task.name] = task
    return task


ENTRY_POINT_GROUP = "lurch_tasks.families"
INDEX_TABLE = "task-index"  # task name -> the entry point that registers it, in the disk cache
_loaded = False
_owner: dict[str, str] = {}  # task name -> entry point name, for the tasks registered while we loaded an entry


def _entry_points() -> list:
    from importlib.metadata import entry_points

    return sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: (e.name, e.value))


def _load_entry(entry) -> None:
    before = set(_TASKS)
    try:
        entry.load()
    except Exception as error:  # a broken third-party family must say which one it is
        raise RuntimeError(f"family entry point {entry.name!r} ({entry.value}) failed to load: "
                           f"{type(error).__name__}: {error}") from error
    _owner.update(dict.fromkeys((name for name in _TASKS if name not in before), entry.name))


def _load_builtin() -> None:
    """Import every family module advertised in the ``lurch_tasks.families`` entry-point group, once.

    Importing a family module registers its family and tasks. The core knows no family by name: built-in
    families are entry points of this package, and any installed package can add one the same way."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    entries = _entry_points()
    for entry in entries:
        _load_entry(entry)
    _save_index(entries)


def _index_key(entries: list) -> dict[str, object]:
    return {"entry_points": [[e.name, e.value] for e in entries]}


def _save_index(entries: list) -> None:
    """Which entry point registers each task, so a later process imports only the family it asks for."""
    import json

    import numpy as np

    from .disk_cache import write_table

    data = json.dumps(dict(sorted(_owner.items())), separators=(",", ":")).encode("utf-8")
    write_table(INDEX_TABLE, _index_key(entries), {"index": np.frombuffer(data, dtype=np.uint8)})


def _load_owner(name: str) -> None:
    """Import only the family that registers task ``name``, as the cached index says (~0.1 s per family left
    out of a fresh process); everything when there is no index, or when it is stale."""
    import json

    from .disk_cache import read_table

    entries = _entry_points()
    table = read_table(INDEX_TABLE, _index_key(entries))
    owner = json.loads(table["index"].tobytes()) if table is not None else {}
    entry = next((e for e in entries if e.name == owner.get(name)), None)
    if entry is not None:
        _load_entry(entry)
    if name not in _TASKS:
        _load_builtin()


def get_family(name: str) -> Family:
    if name not in _FAMILIES:
        _load_builtin()
    try:
        return _FAMILIES[name]
    except KeyError:
        raise ValueError(f"family: {name!r} is not registered; allowed: {', '.join(sorted(_FAMILIES))}") from None


def get_task(name: str) -> Task:
    if name not in _TASKS:
        _load_owner(name)
    try:
        return _TASKS[name]
    except KeyError:
        raise ValueError(f"config: {name!r} is not registered{did_you_mean(name, _TASKS)}; allowed: "
                         f"{', '.join(sorted(_TASKS))}") from None


def all_tasks() -> list[Task]:
    _load_builtin()
    return [_TASKS[name] for name in sorted(_TASKS)]


def all_families() -> list[Family]:
    _load_builtin()
    return [_FAMILIES[name] for name in sorted(_FAMILIES)]
