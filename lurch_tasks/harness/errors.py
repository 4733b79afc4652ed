"""Errors from the libraries `lurch eval` drives, reported as theirs (one line naming the library)."""

from __future__ import annotations


class LibraryError(Exception):
    """An error raised inside lm-eval, transformers, datasets, ...: shown as theirs, not as bad lurch input."""

    def __init__(self, library: str, error: BaseException) -> None:
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        self.library = library
        kind = type(error).__name__
        super().__init__(f"{library}: {kind}: {first}" if first else f"{library}: {kind}")


def library_of(error: BaseException) -> str:
    """The top-level package of the innermost non-stdlib frame that raised ``error`` (``lurch_tasks`` for ours)."""
    import sysconfig

    stdlib = sysconfig.get_paths()["stdlib"]
    frames = []
    tb = error.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        filename = frame.f_code.co_filename
        module = frame.f_globals.get("__name__", "")
        if filename.startswith(stdlib) and "site-packages" not in filename:
            continue
        return module.split(".", 1)[0] or "python"
    return "python"
