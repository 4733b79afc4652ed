"""lighteval's own command line with only the custom tasks loaded: ``python -m lurch_tasks.harness.lighteval_run
custom lurch-solver <model file> <tasks> --custom-tasks lurch_tasks.harness.lighteval_tasks ...``.

lighteval 0.13 imports every built-in task before it reads ``--custom-tasks``, and some built-in task modules fetch
files from the network when imported (tinyBenchmarks' weights, a list of Hub models), so the plain ``lighteval``
command fails on a machine without internet even for a custom task. This entry point runs the same command with the
registry reading the custom tasks only; with internet, plain ``lighteval`` works as well.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path


def custom_only(custom_tasks: str | Path | None = None, load_multilingual: bool = False) -> dict:
    """``Registry.load_all_task_configs`` without the built-in tasks."""
    from lighteval.tasks.registry import Registry

    if custom_tasks is None:
        return {}
    return Registry._extract_configs(Registry.create_custom_tasks_module(custom_tasks))


@contextlib.contextmanager
def custom_tasks_only() -> Iterator[None]:
    """lighteval's registry reads the custom tasks only while inside (for its Python API: ``Pipeline``)."""
    from lighteval.tasks.registry import Registry

    original = Registry.__dict__["load_all_task_configs"]
    Registry.load_all_task_configs = staticmethod(custom_only)
    try:
        yield
    finally:
        Registry.load_all_task_configs = original


def main() -> None:
    from lighteval.__main__ import app

    with custom_tasks_only():
        app()


if __name__ == "__main__":
    main()
