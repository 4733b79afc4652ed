"""`lurch ...` through the real CLI entry (``lurch_tasks.cli.main``) inside the test process, for tests where a
separate process is not the point: it saves the interpreter start and the imports (seconds per call), and shares
what the process already loaded (a GGUF tokenizer: ``get_token_counter`` is cached)."""

from __future__ import annotations

import contextlib
import io
import signal
import subprocess
import sys


def lurch_in_process(*args: str) -> subprocess.CompletedProcess:
    """Exit code, stdout and stderr of ``lurch ARGS`` as a CompletedProcess. The CLI's Ctrl-C handler and
    unraisable hook, which it installs for its own process, are put back afterwards."""
    from lurch_tasks.cli import main

    stdout, stderr = io.StringIO(), io.StringIO()
    sigint, unraisable = signal.getsignal(signal.SIGINT), sys.unraisablehook
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                code = main(list(args))
            except SystemExit as exit_:  # argparse exits by itself, as the console script would
                code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    finally:
        signal.signal(signal.SIGINT, sigint)
        sys.unraisablehook = unraisable
    return subprocess.CompletedProcess(["lurch", *args], code, stdout.getvalue(), stderr.getvalue())
