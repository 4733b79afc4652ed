"""Whether a task can fit the model's window at all, decided from its knobs before any doc is built.

A task (or a family task: all of its members) none of whose lengths leaves room for ``max_gen_toks`` in the model's
window is skipped as a whole, with one warning line, like a length that does not fit (``strict`` keeps the error).
``lm_task.LurchTask`` asks this when lm-eval builds the task, so neither the docs nor lm-eval's requests are built.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.config import ConfigError
from .window import ModelWindow, model_window, plan_window, warn


@dataclass(frozen=True)
class Unfit:
    """Why ``task`` has no length the window can hold: its shortest case (``needs`` tokens) + ``max_gen_toks``."""

    task: str
    needs: int
    max_gen_toks: int
    window: ModelWindow

    @property
    def short(self) -> str:
        """The reason in a few words, for summaries: ``window 8192 < 16384+1024``."""
        return f"window {self.window.tokens} < {self.needs}+{self.max_gen_toks}"

    def describe(self) -> str:
        return (f"{self.task}: skipped: its shortest case needs {self.needs} tokens + max_gen_toks "
                f"{self.max_gen_toks}, more than the {self.window.tokens}-token window ({self.window.source})")

    def error(self) -> ConfigError:
        return ConfigError(f"{self.task}: its shortest case needs {self.needs} tokens + max_gen_toks "
                           f"{self.max_gen_toks}, more than the model's {self.window.tokens}-token window "
                           f"({self.window.source}); allowed: a model with a larger window, other tasks, or strict "
                           "false to skip it")

    def as_record(self) -> dict[str, Any]:
        """What the results JSON keeps of a skipped task (``lm_task.SkippedTask``)."""
        return {"skipped": self.describe(), "needs": self.needs, "max_gen_toks": self.max_gen_toks,
                "window": self.window.tokens, "window_source": self.window.source}


@dataclass
class RunRecord:
    """What one ``lurch eval`` run skipped, for its closing summary and its results JSON (``lm_eval_cli``): the
    tasks skipped whole, and per task the lengths planned (they fit) and those skipped."""

    tasks: dict[str, Unfit] = field(default_factory=dict)
    lengths: dict[str, tuple[int, ...]] = field(default_factory=dict)
    lengths_skipped: dict[str, tuple[int, ...]] = field(default_factory=dict)


RUN = RunRecord()  # reset by `lurch eval` before each run; only ever appended to while lm-eval builds the tasks


def record_lengths(task_name: str, planned: tuple[int, ...], skipped: tuple[int, ...]) -> None:
    RUN.lengths[task_name] = tuple(n for n in planned if n not in skipped)
    RUN.lengths_skipped[task_name] = tuple(skipped)


def registered_name(task_name: str) -> str:
    """The registered task behind an lm-eval task name (``lurch eval``'s renamed ``<task>__<hash>`` included)."""
    return task_name.split("__", 1)[0]


def unfit_task(task_name: str, metadata: Mapping[str, Any]) -> Unfit | None:
    """``Unfit`` when no length of the task (for a family task: of any member) fits the model's window; None when
    one does, when the window is unknown, or when the docs come from a stored folder (checked doc by doc)."""
    from .family_tasks import family_of, members

    name = registered_name(task_name)
    family = family_of(name)
    if family is None:
        found = _unfit_member(name, metadata)
        return None if found is None else Unfit(task_name, found.needs, found.max_gen_toks, found.window)
    reasons = []
    for member in members(family):
        found = _unfit_member(member, metadata)
        if found is None:
            return None
        reasons.append(found)
    if not reasons:
        return None
    nearest = min(reasons, key=lambda r: (r.needs + r.max_gen_toks, r.task))
    return Unfit(task_name, nearest.needs, nearest.max_gen_toks, nearest.window)


def _unfit_member(task_name: str, metadata: Mapping[str, Any]) -> Unfit | None:
    from ..core.generation import resolve_task
    from ..core.registry import get_family, get_task
    from .metadata import parse_metadata
    from .tasks import _max_gen_toks, _token_targets, context_floor

    try:
        registered = get_task(task_name)
    except ValueError:
        return None  # not ours: lm-eval reports it
    window = model_window(metadata)
    if window is None:
        return None
    family = get_family(registered.family)
    request = parse_metadata(type(registered.config), metadata)
    if request.dataset_path:
        return None
    floor = context_floor(registered, family)
    overrides = dict(request.overrides)
    overrides.pop("tokenizer", None)  # lengths do not depend on it; its files are read only when docs are built
    lengths = overrides.get("context_tokens")
    if floor and lengths:
        overrides["context_tokens"] = tuple(sorted({max(n, floor) for n in lengths}))
    config = resolve_task(task_name, overrides).config
    targets = _token_targets(family, config)
    gen = _max_gen_toks(request, family, config)
    plan = plan_window(targets, window, gen)
    if not targets or len(plan.skipped) < len(targets):
        return None
    return Unfit(task_name, targets[0], gen, window)


def skip_or_fail(task_name: str, metadata: Mapping[str, Any]) -> Unfit | None:
    """``unfit_task``, with its one warning line (or, with ``strict``, its error)."""
    from .window import as_bool

    found = unfit_task(task_name, metadata)
    if found is None:
        return None
    if as_bool("strict", metadata.get("strict", False)):
        raise found.error()
    RUN.tasks[task_name] = found
    warn(found.describe() + " (strict: true fails instead)")
    return found
