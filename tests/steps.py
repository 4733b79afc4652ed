"""The cost of parsing as a count, not a time (issue 29): tests assert on work done, which load cannot change.

``count_steps(run)`` runs ``run()`` once and counts two kinds of work:
  * ``lines``: Python lines executed in ``lurch_tasks`` code (``sys.settrace``), which grows with every loop of
    ours, nested loops included;
  * ``scanned``: characters the regex engine walks, over every compiled pattern held by a ``lurch_tasks``
    module and every call of ``re``'s functions: a ``search``/``match`` from ``pos`` counts up to its match's
    end, a failed ``search``, a ``finditer``, ``findall``, ``sub`` or ``split`` the whole range, a failed
    ``match`` one step. Scanning the rest of the text again from each of many positions is how a parser goes
    quadratic without any nested loop in Python.
Both are exact and repeatable (once first-call caches are warm), so small texts suffice: ``assert_linear``
compares a text with ``factor`` times that text, where a linear parser costs ~``factor`` times as much and a
quadratic one ~``factor**2``.

Not seen: work inside C string methods (``str.find``, ``in``, ``split``), how far a failed ``match`` read, and
backtracking inside one regex call. tests/test_linear_parsing.py covers the last two: it tries every scoring
pattern at every start position of adversarial texts and stops any pattern or scorer that runs away (a hang
guard, not a measurement); scripts/bench_scoring.py times them.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import lurch_tasks

PACKAGE_DIR = str(Path(lurch_tasks.__file__).resolve().parent)
_RE_FUNCTIONS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split")


@dataclass(frozen=True)
class Steps:
    lines: int
    scanned: int

    @property
    def total(self) -> int:
        return self.lines + self.scanned


class _Tally:
    def __init__(self) -> None:
        self.lines = 0
        self.scanned = 0

    def span(self, string: object, pos: int = 0, endpos: int | None = None) -> None:
        if isinstance(string, str | bytes):
            end = len(string) if endpos is None else min(endpos, len(string))
            self.scanned += max(0, end - max(0, pos)) + 1  # +1: a call on an empty text is still a call


class CountingPattern:
    """A compiled pattern that tallies the characters each call may read, then does the real call."""

    def __init__(self, pattern: re.Pattern, tally: _Tally) -> None:
        self._pattern, self._tally = pattern, tally

    def __getattr__(self, name: str) -> object:  # pattern, flags, groups, groupindex, scanner
        return getattr(self._pattern, name)

    def _scan(self, name: str, string: object, pos: int = 0, endpos: int | None = None) -> object:
        call = getattr(self._pattern, name)
        result = call(string, pos) if endpos is None else call(string, pos, endpos)
        if name in ("search", "match", "fullmatch") and result is not None:
            self._tally.span(string, pos, result.end())  # read up to where the match ends
        elif name in ("match", "fullmatch"):
            self._tally.span(string, pos, pos)  # a failed anchored try: counted as a call (see the module doc)
        else:
            self._tally.span(string, pos, endpos)  # a failed search, finditer and findall read the whole range
        return result

    def search(self, string, pos=0, endpos=None):
        return self._scan("search", string, pos=pos, endpos=endpos)

    def match(self, string, pos=0, endpos=None):
        return self._scan("match", string, pos=pos, endpos=endpos)

    def fullmatch(self, string, pos=0, endpos=None):
        return self._scan("fullmatch", string, pos=pos, endpos=endpos)

    def finditer(self, string, pos=0, endpos=None):
        return self._scan("finditer", string, pos=pos, endpos=endpos)

    def findall(self, string, pos=0, endpos=None):
        return self._scan("findall", string, pos=pos, endpos=endpos)

    def sub(self, repl, string, count=0):
        self._tally.span(string)
        return self._pattern.sub(repl, string, count)

    def subn(self, repl, string, count=0):
        self._tally.span(string)
        return self._pattern.subn(repl, string, count)

    def split(self, string, maxsplit=0):
        self._tally.span(string)
        return self._pattern.split(string, maxsplit)


def _counting_re_function(name: str, real: Callable, tally: _Tally) -> Callable:
    def call(pattern, *args, **kwargs):
        at = 1 if name in ("sub", "subn") else 0
        tally.span(args[at] if len(args) > at else kwargs.get("string"))
        if isinstance(pattern, CountingPattern):
            pattern = pattern._pattern
        return real(pattern, *args, **kwargs)

    return call


def _our_modules() -> list[object]:
    return [module for name, module in list(sys.modules.items())
            if module is not None and (name == "lurch_tasks" or name.startswith("lurch_tasks."))]


@contextmanager
def _counting_patterns(tally: _Tally) -> Iterator[None]:
    """Every ``re.Pattern`` a ``lurch_tasks`` module holds by name, and ``re``'s functions, count while inside."""
    swapped: list[tuple[object, str, object]] = []
    try:
        for module in _our_modules():
            for name, value in list(vars(module).items()):
                if isinstance(value, re.Pattern):
                    swapped.append((module, name, value))
                    setattr(module, name, CountingPattern(value, tally))
        for name in _RE_FUNCTIONS:
            real = getattr(re, name)
            swapped.append((re, name, real))
            setattr(re, name, _counting_re_function(name, real, tally))
        real_compile = re.compile
        swapped.append((re, "compile", real_compile))
        re.compile = lambda pattern, flags=0: CountingPattern(  # a pattern compiled during the run counts too
            real_compile(pattern._pattern if isinstance(pattern, CountingPattern) else pattern, flags), tally)
        yield
    finally:
        for owner, name, value in reversed(swapped):
            setattr(owner, name, value)


@contextmanager
def _counting_lines(tally: _Tally) -> Iterator[None]:
    def local(frame, event, arg):
        if event == "line":
            tally.lines += 1
        return local

    def enter(frame, event, arg):
        return local if frame.f_code.co_filename.startswith(PACKAGE_DIR) else None

    previous = sys.gettrace()
    sys.settrace(enter)
    try:
        yield
    finally:
        sys.settrace(previous)


def count_steps(run: Callable[[], object]) -> Steps:
    """The lines of ours and the regex characters that one call of ``run`` costs."""
    tally = _Tally()
    with _counting_patterns(tally), _counting_lines(tally):
        run()
    return Steps(tally.lines, tally.scanned)


def assert_linear(function: Callable[[str], object], unit: str, chars: int = 4_000, factor: int = 8,
                  slack: float = 1.5) -> tuple[Steps, Steps]:
    """``function`` on ``unit`` repeated to ~``chars`` characters, and on ``factor`` times that: the larger may
    cost at most ``slack * factor`` times the smaller (linear: ~factor; quadratic: ~factor**2)."""
    repeats = max(1, chars // len(unit))
    function(unit * repeats)  # warm: first-call caches (rosters, compiled tables) are not the parser's growth
    small = count_steps(lambda: function(unit * repeats))
    large = count_steps(lambda: function(unit * (factor * repeats)))
    assert small.total > 0, "nothing was counted: the function ran no code of ours"
    assert large.total <= slack * factor * small.total, (unit[:40], small, large, large.total / small.total)
    return small, large


def assert_per_char_bound(function: Callable[[str], object], text: str, per_char: int = 60) -> Steps:
    """A linear bound on one (large, adversarial) text: at most ``per_char`` steps per character plus a start-up
    allowance; a parser that rescans a 100 KB text costs thousands per character."""
    steps = count_steps(lambda: function(text))
    assert steps.total <= per_char * len(text) + 50_000, (text[:40], len(text), steps)
    return steps
