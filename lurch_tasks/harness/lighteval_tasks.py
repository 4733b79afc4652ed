"""lighteval custom tasks (``--custom-tasks lurch_tasks.harness.lighteval_tasks``): every registered task, with the
same docs and per-doc metrics as the lm-eval task of the same name.

lighteval reads a task's docs with ``datasets.load_dataset(hf_repo, hf_subset)``, so the docs come from a folder
written by ``lurch materialize`` (the same bytes as generating them; check it with ``lurch validate``), named by the
environment variable ``LURCH_DATA`` (default ``lurch_data``). A view such as ``recon_chain`` reads its stored
config (``recon_all``) and keeps its own rows, as the lm-eval task does with ``dataset_path``. Each row gets the run
keys lm-eval's loader adds (its generation budget), so the doc the metric scores is the doc lm-eval scores, and the
metric is lm-eval's ``process_results`` for that task: the same names and values, averaged as the YAMLs do
(``headline`` balanced over the task's keys, control metrics over their own docs).

The baselines run as lighteval custom models (``lurch_tasks/harness/lighteval_model.py``; see its docstring).
"""

from __future__ import annotations

import json
import math
import os
from types import ModuleType
from typing import Any

from lighteval.metrics.metrics_sample import SampleLevelComputation
from lighteval.metrics.utils.metric_utils import SampleLevelMetricGrouping
from lighteval.models.model_output import ModelResponse
from lighteval.tasks.lighteval_task import LightevalTaskConfig
from lighteval.tasks.requests import Doc, SamplingMethod

from ..core.config import config_from_mapping
from ..core.registry import all_tasks, get_family, get_task
from ..scoring import headline
from . import tasks as glue
from .log_keys import DOC_KEY
from .metrics import DESCRIPTIVE, HEADLINE, LOWER_IS_BETTER, doc_metric_names
from .yamls import END_OF_TURN

DATA_ENV = "LURCH_DATA"
DEFAULT_DATA = "lurch_data"


def data_folder() -> str:
    return os.environ.get(DATA_ENV) or DEFAULT_DATA


def to_doc(task_name: str):
    """The prompt function of ``task_name``: the row's prompt as the query, its gold answer as the one choice,
    the row (with lm-eval's run keys) in ``specific``."""
    registered = get_task(task_name)
    family = get_family(registered.family)

    def prompt(line: dict, task: str) -> Doc:
        config = config_from_mapping(family.config_type, json.loads(line["params"])["config"])
        doc = {**line, **glue.run_keys(None, False, family.max_gen_toks(config))}
        return Doc(query=line["prompt"], choices=[line["answer_text"]], gold_index=0, id=line["id"],
                   task_name=task, specific={DOC_KEY: doc})

    prompt.__name__ = prompt.__qualname__ = f"doc_{task_name}"
    return prompt


class LurchMetrics(SampleLevelComputation):
    """lm-eval's ``process_results`` for one task, on the doc riding in ``Doc.specific``."""

    def __init__(self, task_name: str) -> None:
        self.task_name = task_name

    def compute(self, doc: Doc, model_response: ModelResponse, **kwargs: Any) -> dict[str, Any]:
        output = model_response.text[0] if model_response.text else ""
        metrics = glue.process_results(doc.specific[DOC_KEY], [output], self.task_name)
        # headline's [balance key, value] pair as JSON text: lighteval's details are Arrow tables, which cannot hold
        # a list of a string and a number
        return {name: (json.dumps(value) if name == HEADLINE else (math.nan if value is None else value))
                for name, value in metrics.items()}


# lighteval takes an aggregation whose name holds "mean" for a plain mean and computes its stderr from the values as
# numbers; these are not plain means (pairs, or NaN for docs that do not report), so their names avoid the word and
# lighteval bootstraps their stderr instead.
def balanced_headline(pairs: list[str]) -> float:
    """``headline`` as the YAMLs aggregate it (``scoring.headline.balanced_mean`` over [balance key, value])."""
    return headline.balanced_mean(json.loads(pair) for pair in pairs)


def reported_average(values: list[float]) -> float:
    """The average over the docs that report the metric (NaN marks the others, as lm-eval's ``bin_mean`` reads
    None)."""
    return glue.bin_mean([None if isinstance(v, float) and math.isnan(v) else v for v in values])


def metric_for(task_name: str) -> SampleLevelMetricGrouping:
    family = get_family(get_task(task_name).family)
    names = list(doc_metric_names(family.extra_metrics, glue.sparse_metrics(task_name), detail=False))
    return SampleLevelMetricGrouping(
        metric_name=names,
        higher_is_better={name: name not in LOWER_IS_BETTER and name not in DESCRIPTIVE for name in names},
        category=SamplingMethod.GENERATIVE,
        sample_level_fn=LurchMetrics(task_name),
        corpus_level_fn={name: (balanced_headline if name == HEADLINE else reported_average) for name in names},
    )


def task_config(task_name: str, folder: str | None = None) -> LightevalTaskConfig:
    registered = get_task(task_name)
    family = get_family(registered.family)
    view = registered.stored_as is not None

    def own_rows(row: dict) -> bool:
        return family.stored_filter(registered.config, row)

    return LightevalTaskConfig(
        name=task_name,
        prompt_function=to_doc(task_name),
        hf_repo=folder or data_folder(),
        hf_subset=registered.stored_as or task_name,
        hf_filter=own_rows if view else None,
        hf_avail_splits=["test"],
        evaluation_splits=["test"],
        few_shots_split=None,
        few_shots_select=None,
        generation_size=family.max_gen_toks(registered.config),
        stop_sequence=list(END_OF_TURN),
        metrics=[metric_for(task_name)],
        version=0,
    )


def tasks_table(folder: str | None = None) -> list[LightevalTaskConfig]:
    """Every registered task reading ``folder`` (default: ``LURCH_DATA``)."""
    return [task_config(task.name, folder) for task in all_tasks()]


def tasks_module(folder: str) -> ModuleType:
    """A custom tasks module reading ``folder``, for lighteval's Python API (``custom_tasks_directory`` takes a module):
    one process can then evaluate several folders."""
    module = ModuleType("lurch_lighteval_tasks", __doc__)
    module.TASKS_TABLE = tasks_table(folder)
    return module


TASKS_TABLE = tasks_table()
