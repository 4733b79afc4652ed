"""`lurch eval`: lm-eval's CLI with our models registered and our YAML folder included."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

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


def run_lm_eval(args: Sequence[str]) -> int:
    from lm_eval.__main__ import cli_evaluate

    from . import models  # noqa: F401  (registers lurch-solver and lurch-random)

    saved = sys.argv
    sys.argv = lm_eval_argv(args)
    try:
        cli_evaluate()
    except SystemExit as exit_:
        return int(exit_.code or 0) if not isinstance(exit_.code, str) else 1
    finally:
        sys.argv = saved
    return 0
