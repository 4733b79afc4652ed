"""The lm-eval task class of our YAMLs (``class: !function lurch_tasks.harness.lm_task.LurchTask``).

lm-eval 0.4 cannot evaluate a task of zero docs: ``build_all_requests`` raises "did not find any docs" and
``evaluate`` reads ``task.instances[0]``. So a task the model's window cannot hold at all (``fit.unfit_task``) is
decided when lm-eval builds it, before its docs: it is built as an empty ``SkippedTask`` group instead. lm-eval then
runs nothing for it, a group above it averages only the tasks it did evaluate (its leaves), and the results JSON and
table keep one ``skipped`` entry saying why. The same happens under ``lurch eval`` and a plain ``lm_eval``.
"""

from __future__ import annotations

from typing import Any

from lm_eval.api.group import Group
from lm_eval.api.task import ConfigurableTask

from .fit import Unfit, skip_or_fail
from .metadata import repeats_of
from .rag_units import RAG_METRICS, RECORD_KEY

SKIPPED = "skipped"  # the results entry of a skipped task: {"alias", "name", "skipped": "window 8192 < 16384+1024"}


class SkippedTask(Group):
    """An empty group standing in for a task that was skipped: no requests, no leaves, one ``skipped`` entry."""

    unfit: Unfit | None = None

    def aggregate(self, task_metrics: dict[str, Any]) -> dict[str, Any]:
        return {"alias": self.name, "name": self.name, SKIPPED: self.unfit.short if self.unfit else "skipped"}


def skipped_task(name: str, unfit: Unfit) -> SkippedTask:
    group = SkippedTask(name=name, metadata={SKIPPED: unfit.as_record()})
    group.unfit = unfit
    return group


def records(items: list) -> int:
    """The aggregate of ``RECORD_KEY`` (one dict per doc, kept whole in the samples): how many docs have one."""
    return len(items)


class LurchTask(ConfigurableTask):
    """A ConfigurableTask whose construction first asks whether the task can fit the model's window at all, and which
    declares `lurch-rag`'s per-doc metrics (mean) once its docs report them: a run of any other model keeps the
    YAML's metrics only, and a rag run has no "No aggregation function defined" warning."""

    def __new__(cls, config: dict | None = None, *args: Any, **kwargs: Any):
        task_name = str((config or {}).get("task") or "")
        unfit = skip_or_fail(task_name, (config or {}).get("metadata") or {}) if task_name else None
        if unfit is not None:
            return skipped_task(task_name, unfit)  # not a LurchTask: Python does not call __init__
        return super().__new__(cls)

    def __init__(self, config: dict | None = None, *args: Any, **kwargs: Any) -> None:
        # lm-eval hands its task class the YAML's whole config, `class` key included; TaskConfig does not take it.
        config = {k: v for k, v in (config or {}).items() if k != "class"}
        repeats = repeats_of(config.get("metadata") or {})
        if repeats > 1:  # N answers per doc, every one kept (lm-eval's default filter keeps only the first)
            config = {**config, "repeats": repeats, "filter_list": [{"name": "none", "filter": []}]}
        self._rag_reported: set[str] = set()
        super().__init__(*args, config=config, **kwargs)

    def process_results(self, doc: dict, results: list) -> dict:
        out = super().process_results(doc, results)
        self._rag_reported.update(name for name in out if name in RAG_METRICS or name == RECORD_KEY)
        return out

    def aggregation(self) -> dict:
        from lm_eval.api.metrics import mean

        seen = getattr(self, "_rag_reported", ())
        declared = {name: (records if name == RECORD_KEY else mean) for name in seen}
        return {**super().aggregation(), **declared}

    def higher_is_better(self) -> dict:
        seen = getattr(self, "_rag_reported", ())
        return {**super().higher_is_better(), **{name: RAG_METRICS.get(name) for name in seen}}
