"""`lurch eval`: lm-eval's CLI with our models registered and our YAML folder included."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ..core.config import ConfigError
from ..core.suggest import did_you_mean
from .errors import LibraryError, library_of
from .metadata import MODEL_KEY
from .yamls import yaml_dir


def _option(argv: list[str], name: str) -> tuple[int, str] | None:
    """(position of the value, value) of ``--name VALUE`` or ``--name=VALUE``; the last one wins."""
    found = None
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            found = (i + 1, argv[i + 1])
        elif arg.startswith(name + "="):
            found = (i, arg[len(name) + 1:])
    return found


def _values(argv: list[str], name: str) -> list[str]:
    """Every value given to ``--name``: ``--name=V``, or the words after ``--name`` up to the next option (lm-eval
    takes ``--model_args a=1 b=2`` as well as ``a=1,b=2``)."""
    found: list[str] = []
    for i, arg in enumerate(argv):
        if arg.startswith(name + "="):
            found.append(arg[len(name) + 1:])
        elif arg == name:
            found += _until_option(argv[i + 1:])
    return found


def _until_option(words: list[str]) -> list[str]:
    taken = []
    for word in words:
        if word.startswith("--"):
            break
        taken.append(word)
    return taken


def _key_values(texts: list[str], option: str, example: str) -> dict[str, str]:
    """``key=value`` pairs (comma- or space-separated) or a JSON object, as lm-eval reads ``option``; a part that is
    neither is one line naming it (lm-eval would stop with a usage message, or later with a traceback)."""
    pairs: dict[str, str] = {}
    for text in texts:
        if text.strip().startswith("{"):
            try:
                value = json.loads(text)
            except json.JSONDecodeError as err:
                raise ConfigError(f"{option}: {text!r} is not valid JSON ({err.msg}: character {err.pos}); allowed: "
                                  f"key=value pairs separated by commas, e.g. {example}, or a JSON object") from None
            if isinstance(value, dict):
                pairs.update({str(k): str(v) for k, v in value.items()})
                continue
        for part in (part.strip() for part in text.split(",")):
            key, equals, value = part.partition("=")
            if part and (not equals or not key.strip()):
                raise ConfigError(f"{option}: {part!r} is not allowed; allowed: key=value pairs separated by commas, "
                                  f"e.g. {example}, or a JSON object")
            if part:
                pairs[key.strip()] = value.strip()
    return pairs


# lm-eval's Hugging Face model names: without pretrained=, HFLM.__init__ stops with a TypeError deep in lm-eval.
HF_MODELS = ("hf", "hf-auto", "huggingface")


def check_run_options(argv: list[str]) -> None:
    """Mistakes lm-eval would report late (after importing itself and loading every task) or with a traceback:
    an empty ``--tasks``, a malformed ``--gen_kwargs`` or ``--model_args``, a local ``dataset_path`` that does not
    exist."""
    tasks = _option(argv, "--tasks")
    if tasks is not None and not [name for name in tasks[1].split(",") if name.strip()]:
        raise ConfigError(f"--tasks: {tasks[1]!r} names no task; allowed: comma-separated task or group names "
                          "(`lurch list`), e.g. memory_drift")
    _key_values(_values(argv, "--gen_kwargs"), "--gen_kwargs", "max_gen_toks=512,temperature=0")
    _key_values(_values(argv, "--model_args"), "--model_args", "pretrained=/path/to/model,dtype=float32")
    metadata = _option(argv, "--metadata")
    try:
        given = json.loads(metadata[1]) if metadata else {}
    except json.JSONDecodeError:
        given = {}  # lm-eval reports malformed --metadata itself
    folder = given.get("dataset_path") if isinstance(given, dict) else None
    if isinstance(folder, str) and folder.startswith(("/", ".", "~")) and not Path(folder).expanduser().is_dir():
        raise ConfigError(f"dataset_path: {folder!r} is not a folder; allowed: a folder written by `lurch "
                          "materialize`, or a Hub dataset id (org/name)")


def check_pretrained(argv: list[str]) -> None:
    """``--model hf`` needs ``pretrained=`` (checked when the run starts, not when the arguments are assembled)."""
    model = _option(argv, "--model")
    model_args = _key_values(_values(argv, "--model_args"), "--model_args", "pretrained=/path/to/model")
    if model and model[1] in HF_MODELS and not model_args.get("pretrained"):
        raise ConfigError(f"--model_args: no pretrained= for --model {model[1]}; allowed: pretrained=<a local model "
                          "folder or a cached hub id>, e.g. --model_args pretrained=/path/to/model")


def _set_option(argv: list[str], name: str, position: int, value: str) -> None:
    argv[position] = value if argv[position - 1] == name else f"{name}={value}"


def check_limit(text: str) -> None:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or (value >= 1 and value != int(value)):
        raise ValueError(f"--limit: {text!r} is not allowed; allowed: a whole number of docs (0 or more) or a "
                         "fraction below 1")


def _flag(argv: list[str], name: str) -> bool:
    """Whether the switch ``--name`` is on (lm-eval's ``--apply_chat_template`` may also take a value)."""
    found = _option(argv, name)
    if found and not found[1].startswith("-"):
        return found[1].lower() not in ("false", "0", "none")
    return name in argv


def _gen_kwarg(argv: list[str], key: str) -> str | None:
    """One ``key=value`` of ``--gen_kwargs`` (comma-separated, or JSON), read by the same parser that checks it."""
    try:
        return _key_values(_values(argv, "--gen_kwargs"), "--gen_kwargs", "").get(key)
    except ConfigError:
        return None  # check_run_options reports a malformed --gen_kwargs


def _add_reasoning_budget(argv: list[str]) -> None:
    """``--reasoning``: every task's ``max_gen_toks`` raised to the reasoning profile's budget (lm-eval's
    ``--gen_kwargs``, which overrides the YAMLs), unless the user set one."""
    from .metadata import GEN_PROFILES

    if _gen_kwarg(argv, "max_gen_toks") is not None:
        return
    budget = f"max_gen_toks={GEN_PROFILES['reasoning']}"
    found = _option(argv, "--gen_kwargs")
    if found is None:
        argv += ["--gen_kwargs", budget]
        return
    text = found[1].strip()
    if text.startswith("{"):
        try:
            merged = json.dumps({**json.loads(text), "max_gen_toks": GEN_PROFILES["reasoning"]})
        except (json.JSONDecodeError, TypeError):
            return  # lm-eval reports malformed --gen_kwargs itself
        _set_option(argv, "--gen_kwargs", found[0], merged)
    else:
        _set_option(argv, "--gen_kwargs", found[0], f"{text},{budget}" if text else budget)


def _whole_limit(text: str) -> int | None:
    """``--limit N`` as a doc count (None for a fraction, whose count depends on the full size)."""
    value = float(text)
    return int(value) if value >= 1 else None


def our_task_names() -> frozenset[str]:
    """Every task, group and tag name our YAMLs define."""
    from .yamls import TAG

    return frozenset({path.stem.lstrip("_") for path in yaml_dir().glob("*.yaml")} | {TAG})


def only_our_tasks(argv: list[str]) -> bool:
    """Whether every ``--tasks`` name is ours (then lm-eval need not index its thousands of built-in tasks)."""
    tasks = _option(argv, "--tasks")
    if not tasks:
        return False
    names = [name.strip() for name in tasks[1].split(",") if name.strip()]
    ours = our_task_names()
    return bool(names) and all(name.split("__", 1)[0] in ours for name in names)


def check_task_names(argv: list[str]) -> None:
    """A ``--tasks`` name that is not ours but close to one of ours is a typo: fail at once with the suggestion,
    before lm-eval indexes its thousands of tasks only to say it found none (a name far from all of ours is left
    to lm-eval: it may be one of its own)."""
    from ..core.suggest import closest

    tasks = _option(argv, "--tasks")
    if not tasks:
        return
    ours = our_task_names()
    for name in (part.strip() for part in tasks[1].split(",")):
        if name and name.split("__", 1)[0] not in ours and closest(name, ours):
            raise ConfigError(f"--tasks: {name!r} is not a lurch-tasks task{did_you_mean(name, ours)}; allowed: "
                              "the names `lurch list` prints (or an lm-eval task)")


def check_model_name(name: str) -> None:
    """A ``--model`` lm-eval does not register (with ours) fails at once, with the closest names instead of
    lm-eval's list of every one."""
    from lm_eval.api.registry import MODEL_REGISTRY

    from ..core.suggest import closest
    from . import models  # noqa: F401  (registers ours)

    if name in MODEL_REGISTRY:
        return
    known = sorted(MODEL_REGISTRY)
    hint = did_you_mean(name, known) if closest(name, known) else ""
    raise ConfigError(f"--model: {name!r} is not a model lm-eval registers{hint}; allowed: one of its "
                      f"{len(known)}, such as hf, vllm, local-completions, local-chat-completions, lurch-solver, "
                      "lurch-random, lurch-simulated, lurch-rag")


def lm_eval_argv(args: Sequence[str]) -> list[str]:
    """lm-eval `run` arguments with ``--include_path`` added when the user did not give one, ``--limit``
    checked, and what our tasks need to know about the run passed in ``--metadata``: the chosen model's name
    (so they accept only its arguments), ``--apply_chat_template`` and ``--gen_kwargs max_gen_toks`` (so
    budgets and the window check count what the model will see), and our own ``--strict``."""
    argv = list(args)
    if argv and argv[0] == "run":
        argv = argv[1:]
    strict = "--strict" in argv
    reasoning = "--reasoning" in argv
    argv = [a for a in argv if a not in ("--strict", "--reasoning")]
    if reasoning:
        _add_reasoning_budget(argv)
    if not any(a == "--include_path" or a.startswith("--include_path=") for a in argv):
        argv += ["--include_path", str(yaml_dir())]
    check_task_names(argv)
    check_run_options(argv)
    limit = _option(argv, "--limit")
    if limit:
        check_limit(limit[1])
    run_facts: dict[str, object] = {}
    model = _option(argv, "--model")
    if model:
        check_model_name(model[1])
        run_facts[MODEL_KEY] = model[1]
    if _flag(argv, "--apply_chat_template"):
        run_facts["chat_template"] = True
    max_gen_toks = _gen_kwarg(argv, "max_gen_toks")
    if max_gen_toks is not None:
        run_facts["max_gen_toks"] = max_gen_toks
    if strict:
        run_facts["strict"] = True
    if reasoning:
        run_facts["gen_profile"] = "reasoning"
    docs = _whole_limit(limit[1]) if limit else None
    if docs and _option(argv, "--samples") is None:
        run_facts["max_docs"] = docs  # lm-eval reads only the first N docs: generate only those
    if run_facts:
        metadata = _option(argv, "--metadata")
        try:
            given = json.loads(metadata[1]) if metadata else {}
        except json.JSONDecodeError:
            given = None  # lm-eval reports malformed --metadata itself
        if isinstance(given, dict):
            merged = {**run_facts, **given}
            if model:
                merged[MODEL_KEY] = model[1]  # the model actually run, whatever --metadata says
            value = json.dumps(merged)
            if metadata:
                _set_option(argv, "--metadata", metadata[0], value)
            else:
                argv += ["--metadata", value]
    return ["lm-eval", "run", *argv]


def folder_task_names(argv: list[str], include_dir: Path) -> list[str]:
    """With ``dataset_path`` pointing at a local folder whose config of a requested task was built with
    other knobs than the registered task, evaluate it under the name ``<task>__<config_hash[:12]>`` so its
    results are never reported as the default task's. Writes the renamed YAMLs (``include:`` of the
    original) into ``include_dir`` next to copies of ours; returns the renamed tasks."""
    from ..core.config import config_hash
    from ..core.registry import get_task
    from ..hub.manifest import read_manifest

    metadata, tasks = _option(argv, "--metadata"), _option(argv, "--tasks")
    try:
        folder = json.loads(metadata[1]).get("dataset_path") if metadata else None
    except (json.JSONDecodeError, AttributeError):
        folder = None
    if not folder or not tasks or not Path(folder).is_dir():
        return []
    manifest = read_manifest(Path(folder)) or {"configs": {}}
    names, renamed = tasks[1].split(","), []
    for k, name in enumerate(names):
        entry = manifest["configs"].get(name)
        try:
            registered = get_task(name)
        except ValueError:
            continue
        if entry and entry.get("config_hash") != config_hash(registered.config):
            new_name = f"{name}__{entry['config_hash'][:12]}"
            (include_dir / f"{new_name}.yaml").write_text(
                f"include: {yaml_dir() / (name + '.yaml')}\ntask: {new_name}\n", encoding="utf-8")
            names[k] = new_name
            renamed.append(new_name)
    if renamed:
        _set_option(argv, "--tasks", tasks[0], ",".join(names))
    return renamed


@contextlib.contextmanager
def _own_tasks_only(enabled: bool):
    """While lm-eval runs, its TaskManager indexes only the include path (our YAMLs), not its built-in tasks."""
    import lm_eval.tasks

    original = lm_eval.tasks.TaskManager

    class OwnTasksOnly(original):  # a subclass, so isinstance checks still hold
        def __init__(self, *args, **kwargs):
            kwargs.setdefault("include_defaults", False)
            super().__init__(*args, **kwargs)

    if enabled:
        lm_eval.tasks.TaskManager = OwnTasksOnly
    try:
        yield
    finally:
        lm_eval.tasks.TaskManager = original


class _OnceEach:
    """A logging filter that lets one record of each folded message through: lm-eval repeats some notes once per
    task (``Custom kwargs can be passed to --metadata``: once per task of a group)."""

    FOLDED = ("Custom kwargs can be passed to `--metadata`",)

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def filter(self, record) -> bool:
        message = record.getMessage()
        for folded in self.FOLDED:
            if folded in message:
                if folded in self.seen:
                    return False
                self.seen.add(folded)
        return True


@contextlib.contextmanager
def _repeated_notes_folded():
    import logging

    logger, folding = logging.getLogger("lm_eval.api.task"), _OnceEach()
    logger.addFilter(folding)
    try:
        yield
    finally:
        logger.removeFilter(folding)


def leaf_tasks(names: Sequence[str]) -> list[str] | None:
    """Our lm-eval tasks behind ``--tasks`` names (groups and the ``lurch`` tag expanded, from our YAMLs); None when
    a name is not ours."""
    import yaml

    from .yamls import TAG

    folder, leaves = yaml_dir(), []
    for name in names:
        if name == TAG:
            leaves += sorted(path.stem for path in folder.glob("*.yaml") if not path.stem.startswith("_"))
        elif (folder / f"_{name}.yaml").is_file():
            members = yaml.safe_load((folder / f"_{name}.yaml").read_text(encoding="utf-8")).get("task") or []
            inner = leaf_tasks([m for m in members if isinstance(m, str)])
            if inner is None:
                return None
            leaves += inner
        elif (folder / f"{name}.yaml").is_file():
            leaves.append(name)
        else:
            return None
    return leaves


def check_fit_before_the_model(argv: list[str]) -> None:
    """A run that would fail on the model's window anyway fails before lm-eval loads the model: with ``strict``, a
    requested task none of whose lengths fits; without it, a run none of whose tasks fits. (Each skipped task's
    warning line is printed later, once, when lm-eval builds it: ``lm_task.LurchTask``.)"""
    from .fit import unfit_task
    from .window import as_bool

    tasks = _option(argv, "--tasks")
    leaves = leaf_tasks([n.strip() for n in tasks[1].split(",") if n.strip()]) if tasks else None
    if not leaves:
        return
    metadata = {**_model_args(argv), **_metadata(argv)}
    unfit = [found for name in dict.fromkeys(leaves) if (found := unfit_task(name, metadata)) is not None]
    if unfit and as_bool("strict", metadata.get("strict", False)):
        raise unfit[0].error()
    if unfit and len(unfit) == len(dict.fromkeys(leaves)):
        raise ConfigError("no requested task fits the model's window (" + "; ".join(
            f"{found.task}: {found.short}" for found in unfit) + "); allowed: a model with a larger window, or tasks "
            "with shorter cases")


def _model_args(argv: list[str]) -> dict:
    from lm_eval.utils import simple_parse_args_string

    found = _option(argv, "--model_args")
    if not found:
        return {}
    text = found[1].strip()
    try:
        parsed = json.loads(text) if text.startswith("{") else simple_parse_args_string(text)
    except (json.JSONDecodeError, ValueError):
        return {}  # lm-eval reports malformed model arguments itself
    return parsed if isinstance(parsed, dict) else {}


def _metadata(argv: list[str]) -> dict:
    found = _option(argv, "--metadata")
    try:
        parsed = json.loads(found[1]) if found else {}
    except json.JSONDecodeError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


COVERAGE_KEY = "lurch_coverage"  # our record in lm-eval's results JSON (what was evaluated and skipped)
RAG_KEY = "lurch_rag"  # a lurch-rag run's settings in lm-eval's results JSON (harness.rag.RagSettings as a dict)


def rag_record(results: dict) -> dict | None:
    """The settings of a `lurch-rag` run (None for any other model), read back from the run's own model arguments
    exactly as the wrapper parsed them. Each task's ``lurch_rag`` row (lm-eval's count of the per-doc records,
    which stay whole in the samples) is dropped from the table and the results: the settings say it once."""
    from .rag import ARGUMENTS, MEMORY_PREFIX, parse_settings, settings_record

    config = results.get("config") or {}
    if config.get("model") != "lurch-rag":
        return None
    args = config.get("model_args") or {}
    if isinstance(args, str):
        from lm_eval.utils import simple_parse_args_string

        args = simple_parse_args_string(args) if args else {}
    for entry in (results.get("results") or {}).values():
        if isinstance(entry, dict):
            entry.pop(f"{RAG_KEY},none", None)
            entry.pop(f"{RAG_KEY}_stderr,none", None)
    for declared in (results.get("higher_is_better") or {}).values():
        if isinstance(declared, dict):
            declared.pop(RAG_KEY, None)
    own = {key: value for key, value in dict(args).items() if key in ARGUMENTS or str(key).startswith(MEMORY_PREFIX)}
    return settings_record(parse_settings(own))


def coverage_record(results: dict) -> dict | None:
    """What a run of our tasks evaluated and skipped, from lm-eval's results and the run record (``fit.RUN``): the
    families evaluated, the tasks and families skipped whole (why, in a few words), the lengths that fit and those
    skipped. None when no task of ours was in the run."""
    from ..analysis.headline import skipped_family
    from .family_tasks import family_of
    from .fit import RUN, registered_name
    from .lm_task import SKIPPED

    entries = results.get("results", {})
    skipped = {skipped_family(name): str(entry[SKIPPED]) for name, entry in entries.items()
               if isinstance(entry, dict) and SKIPPED in entry}
    families, ours = set(), False
    for name in results.get("configs", {}):
        family = family_of(registered_name(name))
        try:
            from ..core.registry import get_task

            family_name = family.name if family else get_task(registered_name(name)).family
        except ValueError:
            continue  # not one of ours
        families.add(family_name)
        ours = True
    if not ours and not skipped:
        return None
    lengths = sorted({n for kept in RUN.lengths.values() for n in kept})
    dropped = sorted({n for gone in RUN.lengths_skipped.values() for n in gone} - set(lengths))
    umbrella = entries.get("memory_drift", {}).get("headline,none")
    return {"families": sorted(families), "skipped": skipped, "lengths": lengths, "lengths_skipped": dropped,
            "memory_drift": umbrella}


def coverage_summary(record: dict) -> str:
    """``lurch eval``'s closing line: the umbrella headline (when it ran) with what it covers."""
    from ..analysis.headline import coverage_line

    score = record.get("memory_drift")
    line = coverage_line(float("nan") if score is None else float(score), record["families"], record["skipped"],
                         record["lengths"], record["lengths_skipped"])
    if score is not None:
        return line
    families = ", ".join(record["families"]) or "nothing"
    return f"evaluated {families}" + line[line.index(" families") + len(" families"):]


@contextlib.contextmanager
def _coverage_recorded(found: list[dict]):
    """While lm-eval runs, its results get our ``COVERAGE_KEY`` record (so its results JSON keeps it); the record
    is also appended to ``found`` for the closing summary."""
    import lm_eval

    from . import fit

    fit.RUN = fit.RunRecord()
    original = lm_eval.simple_evaluate

    def recorded(*args, **kwargs):
        results = original(*args, **kwargs)
        record = coverage_record(results) if isinstance(results, dict) else None
        if record is not None:
            results[COVERAGE_KEY] = record
            found.append(record)
        rag = rag_record(results) if isinstance(results, dict) else None
        if rag is not None:
            results[RAG_KEY] = rag
        return results

    lm_eval.simple_evaluate = recorded
    try:
        yield
    finally:
        lm_eval.simple_evaluate = original


def run_lm_eval(args: Sequence[str]) -> int:
    from lm_eval.__main__ import cli_evaluate

    from . import models  # noqa: F401  (registers lurch-solver and lurch-random)

    saved = sys.argv
    argv = lm_eval_argv(args)
    check_pretrained(argv)
    with tempfile.TemporaryDirectory(prefix="lurch-eval-") as include_dir:
        if not any(a == "--include_path" or a.startswith("--include_path=") for a in args):
            renamed = folder_task_names(argv, Path(include_dir))
            if renamed:  # our YAMLs and the renamed ones, side by side in one include folder
                for path in yaml_dir().glob("*.yaml"):
                    shutil.copy(path, Path(include_dir) / path.name)
                position = _option(argv, "--include_path")
                _set_option(argv, "--include_path", position[0], include_dir)
                print(f"lurch: note: evaluating the folder's configs as {', '.join(renamed)} (other knobs than the "
                      "registered tasks)", file=sys.stderr)
        check_fit_before_the_model(argv)
        sys.argv = argv
        found: list[dict] = []
        try:
            with _own_tasks_only(only_our_tasks(argv)), _repeated_notes_folded(), _coverage_recorded(found):
                cli_evaluate()
        except SystemExit as exit_:
            return int(exit_.code or 0) if not isinstance(exit_.code, str) else 1
        except (KeyboardInterrupt, ConfigError, ModuleNotFoundError):
            raise  # ConfigError: our own one-line input error; a missing module: the pip install that provides it
        except Exception as err:  # noqa: BLE001 - reported as the raising library's, in one line
            library = library_of(err)
            if os.environ.get("LURCH_TRACEBACK") or (library == "lurch_tasks" and isinstance(err, ValueError)):
                raise  # ours: a bad knob or model argument, shown as `lurch: error: ...`
            raise LibraryError(library, err) from err
        finally:
            sys.argv = saved
    for record in found:
        print(f"lurch: {coverage_summary(record)}")
        if record["skipped"] and not record["families"]:
            raise ConfigError("no requested task fits the model's window (" + "; ".join(
                f"{label}: {why}" for label, why in sorted(record["skipped"].items())) + "); allowed: a model with "
                "a larger window, or tasks with shorter cases")
    return 0
