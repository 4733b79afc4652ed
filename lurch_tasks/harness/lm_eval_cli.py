"""`lurch eval`: lm-eval's CLI with our models registered and our YAML folder included."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

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


def lm_eval_argv(args: Sequence[str]) -> list[str]:
    """lm-eval `run` arguments with ``--include_path`` added when the user did not give one, ``--limit``
    checked, and the chosen model's name passed to our tasks (so they accept only its arguments)."""
    argv = list(args)
    if argv and argv[0] == "run":
        argv = argv[1:]
    if not any(a == "--include_path" or a.startswith("--include_path=") for a in argv):
        argv += ["--include_path", str(yaml_dir())]
    limit = _option(argv, "--limit")
    if limit:
        check_limit(limit[1])
    model = _option(argv, "--model")
    if model:
        metadata = _option(argv, "--metadata")
        try:
            given = json.loads(metadata[1]) if metadata else {}
        except json.JSONDecodeError:
            given = None  # lm-eval reports malformed --metadata itself
        if isinstance(given, dict):
            value = json.dumps({**given, MODEL_KEY: model[1]})
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


def run_lm_eval(args: Sequence[str]) -> int:
    from lm_eval.__main__ import cli_evaluate

    from . import models  # noqa: F401  (registers lurch-solver and lurch-random)

    saved = sys.argv
    argv = lm_eval_argv(args)
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
        sys.argv = argv
        try:
            cli_evaluate()
        except SystemExit as exit_:
            return int(exit_.code or 0) if not isinstance(exit_.code, str) else 1
        finally:
            sys.argv = saved
    return 0
