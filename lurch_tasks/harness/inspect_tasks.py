"""Inspect AI tasks and model providers: the same docs and per-doc scores as the lm-eval tasks, in Inspect.

Every lm-eval task, family task and group of ours is also an Inspect task (``inspect eval lurch_tasks/<name>``, found
through the ``inspect_ai`` entry point). Its samples are the docs lm-eval's ``custom_dataset`` loader builds (the
same ``load_<task>`` callable, so the prompts are byte-identical), the sample's input is the doc's prompt as one user
message (a provider applies its model's chat template, as lm-eval's ``--apply_chat_template`` does), and its score
is lm-eval's ``process_results`` for the doc: the same metric names and values, aggregated as the YAMLs do
(``headline`` balanced over the task's keys, ``score`` with equal weight per member of a group, rates over docs).

Task parameters (``-T key=value``) are lm-eval's ``--metadata`` keys with the same meaning (knobs, ``seed``,
``max_seq_lengths``, ``tokenizer``, ``chat_template``, ``max_model_len`` for the window guard, ``max_gen_toks``,
``dataset_path``, ``repeats``: N answers per doc as Inspect epochs, each doc's scores averaged, ...), plus ``limit``
(``lurch eval --limit``: generate only the first N docs of each task).

The baselines are Inspect model providers: ``lurch-solver``, ``lurch-random`` (``-M answer_seed=N``) and
``lurch-simulated`` (``-M intercept=1.5 -M depth=-0.8``), answering exactly as their lm-eval twins do.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from inspect_ai import Epochs, Task
from inspect_ai import task as inspect_task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, modelapi
from inspect_ai.scorer import SampleScore, Score, Target, mean, metric, scorer
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import ToolChoice, ToolInfo

from ..core.config import ConfigError
from ..core.registry import all_families, all_tasks, get_family, get_task
from . import tasks as glue
from .family_tasks import family_of, family_sparse_metrics, family_task_name, family_tasks, members
from .family_tasks import max_gen_toks as family_max_gen_toks
from .fit import skip_or_fail
from .log_keys import DOC_KEY, LEAF_KEY, SKIPPED_KEY
from .metadata import repeats_of
from .metrics import DETAIL_METRICS, GROUP_METRICS, HEADLINE, doc_metric_names
from .window import as_bool
from .yamls import END_OF_TURN, UMBRELLA_GROUP

PACKAGE = "lurch_tasks"  # Inspect's namespace for our tasks: `inspect eval lurch_tasks/<task>`
BUDGET_KEY = "max_gen_toks"  # the sample's generation budget, as lm-eval's YAML for its leaf sets it
BALANCE_KEY = "balance_key"
# Metrics a group averages with equal weight per member (the rest over docs), as the YAMLs' groups do.
PER_MEMBER = frozenset(name for name, by_size in GROUP_METRICS if not by_size)


def leaves(name: str) -> list[str]:
    """The lm-eval tasks whose docs an Inspect task of this name holds: a task or family task itself, a family
    group's members, the umbrella's family tasks. A ConfigError for any other name."""
    if name == UMBRELLA_GROUP:
        return [family_task_name(family) for family in family_tasks()]
    for family in all_families():
        if name == family.group and members(family):
            return members(family)
        for group, extra in family.extra_groups:
            if name == group:
                return list(extra)
    if name in task_names(groups=False):
        return [name]
    raise ConfigError(f"task: {name!r} is not a lurch task; allowed: one of `lurch list`'s tasks or groups")


def task_names(groups: bool = True) -> list[str]:
    """Every name an Inspect task is registered under: the tasks, the family tasks and (``groups``) the groups."""
    names = [task.name for task in all_tasks()] + [family_task_name(family) for family in family_tasks()]
    if groups:
        names += [family.group for family in all_families() if members(family)]
        names += [group for family in all_families() for group, _ in family.extra_groups]
        names.append(UMBRELLA_GROUP)
    return names


def _metric_names(leaf: str, bins: bool) -> list[str]:
    """The unbinned metrics the leaf's docs report (lm-eval's table rows for it; ``bins`` adds the detail ones)."""
    family = family_of(leaf)
    if family is not None:
        return [m for m in doc_metric_names(family.extra_metrics, family_sparse_metrics(family), detail=False)
                if m not in DETAIL_METRICS]
    registered = get_task(leaf)
    extras = get_family(registered.family).extra_metrics
    return list(doc_metric_names(extras, glue.sparse_metrics(leaf), detail=bins))


def _task_metadata(params: dict[str, Any]) -> dict[str, Any]:
    """Inspect's task parameters as lm-eval's merged metadata: ``limit`` is ``max_docs``."""
    metadata = dict(params)
    if "limit" in metadata:
        limit = metadata.pop("limit")
        if limit not in (None, ""):
            metadata["max_docs"] = limit
    return metadata


def leaf_docs(leaf: str, metadata: dict[str, Any]) -> Iterable[dict]:
    """The docs lm-eval's loader for ``leaf`` builds (``load_<leaf>``), in doc order; with ``max_docs`` only the first
    that many, as lm-eval's ``--limit`` keeps (a family task's loader builds a share per member, a few more)."""
    loader: Callable[..., dict] = getattr(glue, f"load_{leaf}")
    dataset = loader(**metadata)["test"]
    limit = metadata.get("max_docs")
    if limit not in (None, "") and int(limit) < len(dataset):
        dataset = dataset.select(range(int(limit)))
    return dataset


def sample_of(doc: dict, leaf: str, budget: int) -> Sample:
    """One Inspect sample: the doc's prompt as input, its gold answer as target, its properties, its generation budget
    and the whole doc as metadata."""
    difficulty = {key: value for key, value in doc["difficulty"].items() if isinstance(value, (int, float, str, bool))}
    return Sample(id=doc["id"], input=doc["prompt"], target=doc["answer_text"],
                  metadata={LEAF_KEY: leaf, "family": doc["family"], **difficulty, BUDGET_KEY: budget, DOC_KEY: doc})


def generation_budget(leaf: str, doc: dict, metadata: dict[str, Any]) -> int:
    """The ``max_gen_toks`` lm-eval generates the doc with: the run's (``max_gen_toks``, ``gen_profile``: the doc's
    ``gen_budget`` then holds it), else the YAML's: a family task's is its members' largest, a task's its own."""
    family = family_of(leaf)
    if family is None or "max_gen_toks" in metadata or "gen_profile" in metadata:
        return int(doc["gen_budget"])
    return max(int(doc["gen_budget"]), family_max_gen_toks(family))


def samples(name: str, metadata: dict[str, Any], skipped: dict[str, str]) -> Iterator[Sample]:
    """The samples of every leaf; a leaf the model's window cannot hold at all is left out with one warning line
    (an error with ``strict``), as lm-eval skips it, and recorded in ``skipped`` (leaf -> why)."""
    for leaf in leaves(name):
        unfit = skip_or_fail(leaf, metadata)
        if unfit is not None:
            skipped[leaf] = unfit.short
            continue
        for doc in leaf_docs(leaf, metadata):
            yield sample_of(doc, leaf, generation_budget(leaf, doc, metadata))


def score_values(doc: dict, output: str, leaf: str, names: list[str]) -> Score:
    """lm-eval's per-doc metrics (``process_results_<leaf>``) as an Inspect score: every name in ``names`` (NaN where
    the doc reports none, which Inspect leaves out of the metric), ``headline``'s balance key in the metadata."""
    metrics = getattr(glue, f"process_results_{leaf}")(doc, [output])
    value: dict[str, float] = {}
    key = None
    for name in names:
        reported = metrics.get(name)
        if name == HEADLINE and reported is not None:
            key, reported = reported
        value[name] = math.nan if reported is None else float(reported)
    return Score(value=value, answer=output, metadata={LEAF_KEY: leaf, BALANCE_KEY: key})


@metric(name="lurch_task_mean")
def member_mean() -> Callable[[list[SampleScore]], float]:
    """The mean over the member tasks of each member's mean (a group's ``score``: equal weight per member)."""

    def compute(scores: list[SampleScore]) -> float:
        per_leaf: dict[str, list[float]] = {}
        for item in scores:
            per_leaf.setdefault(str((item.score.metadata or {}).get(LEAF_KEY)), []).append(item.score.as_float())
        means = [sum(values) / len(values) for values in per_leaf.values()]
        return sum(means) / len(means) if means else math.nan

    return compute


@metric(name="lurch_headline")
def headline_mean() -> Callable[[list[SampleScore]], float]:
    """``headline`` as the YAMLs aggregate it: within a member, balanced over its keys (``balanced_mean``); a group
    then weighs its members equally."""

    def compute(scores: list[SampleScore]) -> float:
        per_leaf: dict[str, list] = {}
        for item in scores:
            meta = item.score.metadata or {}
            per_leaf.setdefault(str(meta.get(LEAF_KEY)), []).append([meta.get(BALANCE_KEY), item.score.as_float()])
        means = [glue.balanced_mean(pairs) for pairs in per_leaf.values()]
        means = [m for m in means if not math.isnan(m)]
        return sum(means) / len(means) if means else math.nan

    return compute


def _metrics(names: list[str]) -> dict[str, list]:
    chosen = {HEADLINE: headline_mean, **{name: member_mean for name in PER_MEMBER if name != HEADLINE}}
    return {name: [chosen.get(name, mean)()] for name in names}


@scorer(metrics=[])
def lurch_scorer(names: list[str]) -> Callable:
    """Scores a sample with its own task's lm-eval ``process_results`` (the doc rides in the sample's metadata)."""

    async def score(state: TaskState, target: Target) -> Score:
        leaf = state.metadata[LEAF_KEY]
        return score_values(state.metadata[DOC_KEY], state.output.completion, leaf, names)

    return score


@solver
def generate_with_budget() -> Callable:
    """Generates with each sample's budget (``generation_budget``: a group mixes its members' budgets)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return await generate(state, max_tokens=int(state.metadata[BUDGET_KEY]))

    return solve


def build_task(name: str, **params: Any) -> Task:
    """The Inspect task for a lurch task or group ``name`` with lm-eval's metadata keys as ``params``."""
    metadata = _task_metadata(params)
    bins = as_bool("bins", metadata.get("bins", False))
    skipped: dict[str, str] = {}
    dataset = MemoryDataset(list(samples(name, metadata, skipped)), name=name)
    if not len(dataset):
        raise ConfigError(f"{name}: no doc fits this run (every task was left out); allowed: a model with a larger "
                          "window, or other tasks")
    names: list[str] = []
    for leaf in dict.fromkeys(s.metadata[LEAF_KEY] for s in dataset):  # the leaves left in, in order
        names += [n for n in _metric_names(leaf, bins) if n not in names]
    budget = max((int(s.metadata[BUDGET_KEY]) for s in dataset), default=None)
    repeats = repeats_of(metadata)  # several answers per doc: Inspect's epochs, each doc's scores averaged
    return Task(dataset=dataset, solver=generate_with_budget(), scorer=lurch_scorer(names), metrics=_metrics(names),
                name=name, epochs=Epochs(repeats, "mean") if repeats > 1 else None,
                config=GenerateConfig(max_tokens=budget, stop_seqs=list(END_OF_TURN), temperature=0.0),
                metadata={"lurch_task": name, "lurch_metadata": {k: str(v) for k, v in params.items()},
                          SKIPPED_KEY: skipped})


def _register(name: str) -> None:
    from inspect_ai._util.registry import registry_name

    def make(**params: Any) -> Task:
        return build_task(name, **params)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"The lurch task {name!r} (task parameters: lm-eval's --metadata keys, and limit)."
    # Inspect prefixes the package name only when it sees the module as installed; run from a checkout holding an
    # editable install's egg-info it does not, and `lurch_tasks/<task>` would not resolve: name it in full then.
    qualified = f"{PACKAGE}/{name}"
    inspect_task(name=name if registry_name(make, name) == qualified else qualified)(make)


# ---- the baselines as model providers -------------------------------------------------------------------------


def _prompt(messages: list[ChatMessage]) -> str:
    users = [m for m in messages if m.role == "user"]
    return users[-1].text if users else ""


class _Baseline(ModelAPI):
    """A prompt-only baseline: it answers the last user message's text, never the doc (like its lm-eval twin)."""

    lm_class: type = type(None)

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig | None = None, **model_args: Any) -> None:
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key, config=config or GenerateConfig())
        self.lm = self.lm_class.create_from_arg_obj(dict(model_args))

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
                       config: GenerateConfig) -> ModelOutput:
        return ModelOutput.from_content(model=self.model_name, content=self.answer(_prompt(input)))

    def answer(self, prompt: str) -> str:
        return self.lm.answer(prompt)

    def max_connections(self) -> int:
        return 1  # nothing to wait on: one at a time keeps the run's order


@modelapi(name="lurch-solver")
def _solver_api() -> type[ModelAPI]:
    from .models import SolverLM

    return type("SolverAPI", (_Baseline,), {"lm_class": SolverLM})


@modelapi(name="lurch-random")
def _random_api() -> type[ModelAPI]:
    from .models import RandomLM

    return type("RandomAPI", (_Baseline,), {"lm_class": RandomLM})


@modelapi(name="lurch-simulated")
def _simulated_api() -> type[ModelAPI]:
    from inspect_ai.solver._task_state import sample_state

    from .models import SimulatedLM

    class SimulatedAPI(_Baseline):
        """Reads the running sample's doc (its properties and gold), as lm-eval hands its twin the request's doc."""

        lm_class = SimulatedLM

        def answer(self, prompt: str) -> str:
            state = sample_state()
            if state is None or DOC_KEY not in state.metadata:
                raise ValueError("lurch-simulated answers lurch tasks only (it reads the sample's doc); allowed: "
                                 "inspect eval lurch_tasks/<task>")
            # epoch k > 1 is the doc's (k-1)-th extra answer, drawn anew as lm-eval's repeats are
            return self.lm.answer_doc(state.metadata[DOC_KEY], prompt, state.epoch - 1)

    return SimulatedAPI


for _name in task_names():
    _register(_name)
