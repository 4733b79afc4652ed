"""Typed lm-eval ``--metadata`` for our tasks.

lm-eval hands a task's ``custom_dataset`` one merged mapping: the YAML's ``metadata``, the model's
``--model_args`` and the user's ``--metadata``. Our knobs are parsed and validated; keys that belong to
some lm-eval model's constructor are left alone; anything else is a typo and fails fast.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from ..core.config import ConfigError
from ..core.suggest import did_you_mean
from .window import as_bool

# Harness-level knob names -> config fields (RULER's name for the length axis).
ALIASES = {"max_seq_lengths": "context_tokens"}
HARNESS_KEYS = ("seed", "split", "tokenizer", "dataset_path", "max_gen_toks", "max_model_len", "strict", "max_docs",
                "think_end_token", "gen_profile", "bins", "repeats")
# Generation profiles (``gen_profile``): the budget a profile gives every task. ``reasoning`` leaves a thinking model
# room to think before its answer line (lm-eval issue 3377: graphwalks needed 16k for reasoning models).
GEN_PROFILES = {"default": None, "reasoning": 16384}
YAML_METADATA_KEYS = ("version", "config_source")  # added by our YAMLs and by lm-eval itself
# The length axes are mutually exclusive: setting one clears the others.
LENGTH_AXES = ("context_tokens", "num_lines", "line_growth")
OUR_MODEL_KEYS = ("seed", "batch_size", "max_length", "pretrained", "gguf_file")
# `lurch eval` adds the chosen model's name under this key, so only that model's arguments pass.
MODEL_KEY = "lurch_model"


@dataclasses.dataclass(frozen=True)
class TaskRequest:
    overrides: dict[str, Any]
    seed: int | None
    split: str
    dataset_path: str | None = None  # read a materialized folder (or Hub copy) instead of generating
    max_gen_toks: int | None = None  # the run's generation budget, when it is not the task's default
    strict: bool = False  # fail instead of skipping lengths that do not fit the model's window
    max_docs: int | None = None  # generate only the first N docs (`lurch eval --limit N`)
    gen_profile: str = "default"  # GEN_PROFILES: "reasoning" raises every task's max_gen_toks
    bins: bool = False  # report per-bin metrics (score@4096, ...) and precision / recall to lm-eval too


def parse_metadata(config_type: type, metadata: Mapping[str, Any]) -> TaskRequest:
    """Split lm-eval's merged metadata into config overrides, seed and split (validated later)."""
    fields = {f.name for f in dataclasses.fields(config_type)}
    overrides: dict[str, Any] = {}
    seed, split, dataset_path, max_gen_toks, strict, max_docs = None, "test", None, None, False, None
    gen_profile, bins = "default", False
    for key, value in metadata.items():
        field = ALIASES.get(key, key)
        if key == "seed":
            seed = _as_int("seed", value)
        elif key == "max_gen_toks":
            max_gen_toks = _as_int("max_gen_toks", value)
        elif key == "strict":
            strict = as_bool("strict", value)
        elif key == "gen_profile":
            if value not in GEN_PROFILES:
                raise ConfigError(f"gen_profile: {value!r} is not allowed; allowed: {', '.join(GEN_PROFILES)}")
            gen_profile = str(value)
        elif key == "bins":
            bins = as_bool("bins", value)
        elif key == "max_docs":
            max_docs = _as_int("max_docs", value) if value not in (None, "") else None
        elif key in ("max_model_len", "think_end_token"):
            continue  # read by window.model_window / stamped on the docs by tasks.build_docs
        elif key == "repeats":
            repeats_of(metadata)  # checked here; read by lm_task.LurchTask, which asks the model for N answers
        elif key == "split":
            split = str(value)
        elif key == "dataset_path":
            dataset_path = str(value) if value else None
        elif key == MODEL_KEY:
            continue
        elif field in fields:
            overrides[field] = _coerce(field, value)
        elif key in YAML_METADATA_KEYS or key in _model_keys(metadata.get(MODEL_KEY)):
            continue
        else:
            allowed = sorted(set(ALIASES) | set(HARNESS_KEYS) | fields)
            model = metadata.get(MODEL_KEY)
            extra = f" (or an argument of the model {model!r})" if model else " (or an lm-eval model argument)"
            raise ConfigError(f"{key}: unknown metadata key (value {value!r}){did_you_mean(key, allowed)}; allowed: "
                              f"{', '.join(allowed)}{extra}")
    if "tokenizer" in overrides and overrides["tokenizer"] in ("", None):
        overrides.pop("tokenizer")
    set_axes = [axis for axis in LENGTH_AXES if axis in overrides and axis in fields]
    for axis in LENGTH_AXES:
        if set_axes and axis in fields and axis not in overrides:
            overrides[axis] = ()
    if dataset_path:  # a stored copy keeps its budgets; these only tell the window check how the model counts
        overrides.pop("tokenizer", None)
        overrides.pop("chat_template", None)
    if dataset_path and (overrides or seed is not None):
        given = sorted(overrides) + (["seed"] if seed is not None else [])
        raise ConfigError(
            f"dataset_path: {dataset_path!r} cannot be combined with {', '.join(given)}; allowed: a stored copy "
            "is read as it was materialized (regenerate it with `lurch materialize --set ...` instead)"
        )
    if max_gen_toks is None:
        max_gen_toks = GEN_PROFILES[gen_profile]
    return TaskRequest(overrides, seed, split, dataset_path, max_gen_toks, strict, max_docs, gen_profile, bins)


def repeats_of(metadata: Mapping[str, Any]) -> int:
    """How many answers per doc the run asks for (``repeats``, default 1)."""
    value = metadata.get("repeats", 1)
    count = _as_int("repeats", value) if value not in (None, "") else 1
    if count < 1:
        raise ConfigError(f"repeats: {value!r} is not allowed; allowed: a whole number of answers per doc, 1 or more")
    return count


def _as_int(field: str, value: Any) -> int:
    """An integer, or a string of digits (``key=value`` model args arrive as strings); never a bool or float."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lstrip("+").isdigit():
        return int(value)
    raise ConfigError(f"{field}: {value!r} is not allowed; allowed: a non-negative integer")


def _coerce(field: str, value: Any) -> Any:
    """Metadata arrives as JSON values or as strings from ``key=value`` model args."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return value
    if isinstance(value, list):
        return tuple(value)
    if isinstance(value, int) and field in LENGTH_AXES and field != "line_growth":
        return (value,)
    return value


def _model_keys(model: object) -> frozenset[str]:
    if isinstance(model, str) and model:
        return chosen_model_arguments(model)
    return model_argument_names()


@lru_cache(maxsize=16)
def chosen_model_arguments(model: str) -> frozenset[str]:
    """Constructor argument names of the lm-eval model registered as ``model`` (its whole class chain)."""
    import inspect

    try:
        from lm_eval.api.registry import get_model

        cls = get_model(model)
    except Exception:  # unknown to the registry (lm-eval reports that itself): be permissive
        return model_argument_names()
    names: set[str] = set(getattr(cls, "KEYWORD_ARGUMENTS", ()))  # named through **kwargs (lurch-simulated's terms)
    for klass in inspect.getmro(cls):
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        try:
            names.update(p for p in inspect.signature(init).parameters if p not in ("self", "args", "kwargs"))
        except (TypeError, ValueError):
            continue
    return frozenset(names)


@lru_cache(maxsize=1)
def model_argument_names() -> frozenset[str]:
    """Constructor argument names of every model lm-eval knows, read from source (nothing imported)."""
    names: set[str] = set(OUR_MODEL_KEYS)
    try:
        from lm_eval.models import MODEL_MAPPING
    except ImportError:  # pragma: no cover - lm-eval missing
        return frozenset(names)
    modules = {target.split(":")[0] for target in MODEL_MAPPING.values()} | {"lm_eval.models.api_models"}
    for module in sorted(modules):
        spec = importlib.util.find_spec(module)
        if spec is None or spec.origin is None:
            continue
        with open(spec.origin, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name == "__init__":
                args = node.args
                names.update(a.arg for a in args.args + args.kwonlyargs + args.posonlyargs)
    names.discard("self")
    return frozenset(names)
