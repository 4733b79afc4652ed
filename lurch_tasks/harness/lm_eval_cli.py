"""`lurch eval`: lm-eval's CLI with our models registered and our YAML folder included."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .yamls import yaml_dir


def lm_eval_argv(args: Sequence[str]) -> list[str]:
    """lm-eval `run` arguments with ``--include_path`` added when the user did not give one."""
    argv = list(args)
    if argv and argv[0] == "run":
        argv = argv[1:]
    if not any(a == "--include_path" or a.startswith("--include_path=") for a in argv):
        argv += ["--include_path", str(yaml_dir())]
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
