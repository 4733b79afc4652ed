"""Linear-time parsing of model outputs (issue 26): no scorer regex backtracks super-linearly, on any output.

Every compiled pattern of ``lurch_tasks.scoring`` (found by introspection, so a new one is covered) and every
answer format's real ``score`` run on adversarial families (runs of spaces, tabs, newlines and markup after
answer markers, thousands of near-markers, digit and colon runs, unclosed brackets, ``Day 1, 10:`` repeats, ...)
at 1, 4, 16 and 64 KB (the thousands of pattern cases: 32 KB at most, with a quarter of the budget). Nothing is
timed: the cases run in a worker process in which a hang guard stops any case that uses ``BUDGET_S`` seconds of
the worker's own CPU time (other load on the machine does not count). A linear case takes at most a few tens of
ms at 64 KB (a pattern at most ~15 ms at 32 KB); a quadratic one takes over 4 s there even when each
backtracking step is the regex engine's cheapest (the old ``answers._ARROW`` on 64 KB of hyphens: 4.4 s; a
quarter of that at 32 KB), and a cubic one hours (the old ``mcq._MARKER``: 55 s at 3.2 KB). The rewritten
patterns are also checked to read every text as the old ones did.

    python tests/test_linear_parsing.py patterns|scorers   # the worker by hand: its slow cases, if any
"""

from __future__ import annotations

import importlib
import importlib.util
import itertools
import pkgutil
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lurch_tasks.scoring

BUDGET_S = 1.0  # CPU seconds per case and size: >10x the slowest linear case, 1/4 of the cheapest quadratic
SIZES = (1_024, 4_096, 16_384, 65_536)
# The ~7000 pattern cases at half the largest size and a quarter of the budget: the same margins (>10x the
# slowest linear pattern case, 1/4 of the cheapest quadratic one) at half the worker's time.
PATTERN_BUDGET_S = BUDGET_S / 4
PATTERN_SIZES = (1_024, 4_096, 16_384, 32_768)
ROOT = Path(__file__).resolve().parents[1]

# Runs on their own and after a seed: whitespace, markup, digits, separators and brackets a model may loop on.
FILLERS = (" ", "\t", "\n", " \n", "*_", "`", ":", "1", "1:", "-", ".", ",", "(", "[", "{", "<", '"', "'", "a", "a ")
RUN_FILLERS = (" ", "\t", "\n", "*_", "1", ":", "-", "(")
REPEATED = (" ", ": ")  # (seed + unit) * k: thousands of near-markers
# Markers the scorers look for, tried on every pattern; each pattern adds the first words of its own text.
SEEDS = ("answer", "final answer", "**Answer", "10:00", "10:00 p", "Day 1, 10:", "1000", "CONNECTIONS")
OWN_SEEDS = 3


def scoring_patterns() -> dict[str, re.Pattern[str]]:
    """Every module-level compiled pattern of ``lurch_tasks.scoring``, by ``module.NAME`` of the module that
    defines it (a pattern imported by another module is checked once)."""
    found: dict[str, re.Pattern[str]] = {}
    for info in pkgutil.iter_modules(lurch_tasks.scoring.__path__):
        module = importlib.import_module(f"lurch_tasks.scoring.{info.name}")
        source = Path(module.__file__).read_text(encoding="utf-8")
        for name, value in vars(module).items():
            if isinstance(value, re.Pattern) and re.search(rf"^{name} = ", source, re.MULTILINE):
                found[f"{info.name}.{name}"] = value
    return found


def seeds(pattern: re.Pattern[str]) -> list[str]:
    """The fixed markers and the first words of the pattern's own text ("answer", "hours", "whereas")."""
    own = re.findall(r"(?<![-\\])[A-Za-z]{2,}", pattern.pattern)  # not "Za" of [A-Za-z], not "s" of \s
    return list(dict.fromkeys((*SEEDS, *own)))[: len(SEEDS) + OWN_SEEDS]


def fill(head: str, unit: str, size: int) -> str:
    return head + unit * max(1, (size - len(head)) // len(unit))


def pattern_cases(pattern: re.Pattern[str]) -> Iterator[tuple[str, Callable[[int], str]]]:
    """(name, text of about a given size): runs, seed + run, repeated seed + unit."""
    for unit in FILLERS:
        yield f"run {unit!r}", lambda size, unit=unit: fill("", unit, size)
    for seed in seeds(pattern):
        for unit in RUN_FILLERS:
            yield f"{seed!r} + run {unit!r}", lambda size, seed=seed, unit=unit: fill(seed, unit, size)
        for unit in REPEATED:
            yield f"({seed!r} + {unit!r}) * k", lambda size, seed=seed, unit=unit: fill("", seed + unit, size)


def scorer_cases() -> Iterator[tuple[str, Callable[[int], object]]]:
    """Every answer format's real ``score`` on the per-format families of scripts/bench_scoring.py."""
    bench = _bench()
    from lurch_tasks.core.registry import get_family

    for label, _, _ in bench.FORMAT_DOCS:
        family, doc = bench.format_doc(label)
        score = get_family(family).score
        for name, head, unit, tail in bench.GROWTH_FAMILIES:
            yield f"{label}/{name}", lambda size, s=score, d=doc, h=head, u=unit, t=tail: s(d, bench.growth_text(
                h, u, t, size))


def _bench():
    if "bench_scoring" not in sys.modules:
        spec = importlib.util.spec_from_file_location("bench_scoring", ROOT / "scripts" / "bench_scoring.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["bench_scoring"] = module  # dataclasses resolve the module by name
        spec.loader.exec_module(module)
    return sys.modules["bench_scoring"]


class Stalled(BaseException):
    """From the alarm; a BaseException, so a scorer's last-resort ``except Exception`` cannot swallow it."""


def _stall(*_: object) -> None:
    raise Stalled


def finishes_within(run: Callable[[], object], budget: float = BUDGET_S) -> bool:
    """Whether ``run`` finishes before this process has spent ``budget`` CPU seconds on it: a hang guard, not a
    measurement (nothing is timed; a profiling timer counts this process's CPU time only and raises when it
    runs out; the regex engine checks for signals as it backtracks, so the timer stops it)."""
    previous = signal.signal(signal.SIGPROF, _stall)
    signal.setitimer(signal.ITIMER_PROF, budget)
    try:
        run()
        return True
    except Stalled:
        return False
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def _finditer_all(pattern: re.Pattern[str], text: str) -> None:
    for _ in pattern.finditer(text):  # every start position: the worst case of search, match, split and sub
        pass


def worker(kind: str) -> int:
    """Run every case at every size; print ``SLOW <case> at <size>`` for each case that overran its guard twice
    (its larger sizes and, for a pattern, its other cases are skipped: one slow case is enough), then ``DONE``.
    How long the cases take is for ``scripts/bench_scoring.py --growth``, not for this guard."""
    count = 0
    sizes, budget = (PATTERN_SIZES, PATTERN_BUDGET_S) if kind == "patterns" else (SIZES, BUDGET_S)
    if kind == "patterns":
        groups = [(name, [(f"{name}: {case}", lambda size, p=pattern, make=make: _finditer_all(p, make(size)))
                          for case, make in pattern_cases(pattern)]) for name, pattern in scoring_patterns().items()]
    else:
        groups = [(name, [(name, run)]) for name, run in scorer_cases()]
    for _, cases in groups:
        for case, run in cases:
            count += 1
            for size in sizes:
                # slow only when over budget twice: a one-off pause is no failure
                if not any(finishes_within(lambda run=run, size=size: run(size), budget) for _ in range(2)):
                    print(f"SLOW {case} at {size // 1024} KB", flush=True)
                    break
            else:
                continue
            break  # one slow case of a pattern is enough
    print(f"DONE {count} cases", flush=True)
    return 0


def _run_worker(kind: str) -> list[str]:
    """The worker's SLOW lines; it must get through all its cases (the overall timeout is a backstop only)."""
    done = subprocess.run([sys.executable, __file__, kind], capture_output=True, text=True, timeout=1_800, cwd=ROOT)
    assert done.returncode == 0 and "DONE" in done.stdout, done.stderr[-2_000:]
    return [line for line in done.stdout.splitlines() if line.startswith("SLOW")]


# --- the checks ---------------------------------------------------------------------------------------------


def test_every_scoring_pattern_is_found_by_introspection():
    patterns = scoring_patterns()
    for name in ("mcq._MARKER", "mcq._ANSWER_LINE", "mcq._BARE", "keyfacts._CLOCK", "keyfacts._CLAUSES",
                 "lists._AND", "lists._MARKER", "answers._ARROW", "pairs._SEP", "single._NUMBER", "judge._VERDICT"):
        assert name in patterns
    assert len(patterns) >= 50 and len({id(p) for p in patterns.values()}) == len(patterns)
    assert "keyfacts._MARKER" not in patterns  # imported from mcq: checked once, as mcq's


def test_every_scoring_pattern_is_linear_on_adversarial_text():
    assert _run_worker("patterns") == []


def test_every_answer_format_scores_adversarial_outputs_in_linear_time():
    assert _run_worker("scorers") == []


def test_the_worker_stops_a_super_linear_pattern():
    # The budget really stops a stalled regex: a nested quantifier on 30 "a"s and a "!" would run for hours.
    assert not finishes_within(lambda: re.match(r"(a+)+$", "a" * 30 + "!"), budget=0.5)
    assert finishes_within(lambda: re.match(r"a++$", "a" * 65_536 + "!"), budget=5.0)
    # The pattern cases' smaller size and budget still stop the cheapest quadratic: the old arrow on hyphens.
    old_arrow = OLD["answers._ARROW"][0]
    assert not finishes_within(lambda: _finditer_all(old_arrow, "-" * PATTERN_SIZES[-1]), budget=PATTERN_BUDGET_S)


# --- the known attacks read as defined ----------------------------------------------------------------------


def test_the_reported_attack_outputs_score_as_before():
    from lurch_tasks.scoring.keyfacts import grade_free_form
    from lurch_tasks.scoring.mcq import parse_choice, parse_integer, parse_letters

    spaces = " " * 16_384  # free form reads the first 20k characters after the marker
    assert parse_choice("answer" + spaces, "ABCDEF") is None
    assert parse_choice("answer" + spaces + "C", "ABCDEF") == "C"
    assert parse_choice("\n" * 16_384 + "(b)", "ABCDEF") == "B"
    assert parse_letters("answer" + spaces + ": A, C", "ABCDEF") == ("A", "C")
    assert parse_integer("Final answer" + spaces + "- 7") == 7
    required = ("North Depot", "Day 3, 14:05")
    assert grade_free_form("ANSWER: North Depot, Day 3, 14:05" + spaces, required, ())["score"] == 1.0
    assert grade_free_form("ANSWER: North Depot, Day 3, 2:05" + spaces + "pm", required, ())["score"] == 1.0
    assert grade_free_form("ANSWER: North Depot, Day 3, 10:00" + spaces, required, ())["score"] == 0.0


# --- the rewritten patterns read every text as the old ones did ---------------------------------------------

_WORDS = r"(?:abstain|abstains|abstaining|cannot be determined|can't be determined|not determinable|unknown)"
# The patterns before issue 26 (super-linear), with the tokens their texts are made of: the characters each
# piece of the pattern reads, and whole markers, so that short texts already reach every branch.
OLD = {
    "mcq._ANSWER_LINE": (re.compile(r"(?:final\s+answer|answer)\s*(?:is)?\s*[*_]*\s*[:=\-]?\s*[*_]*\s*[(\[]?\s*"
                                    rf"(?:(?P<letter>[A-Z])(?![A-Za-z])|(?P<abstain>{_WORDS}))", re.IGNORECASE),
                         ("answer", "final answer", " ", "\n", "is", "*", "_", ":", "-", "(", "[", "A", "b", "i",
                          "abstain", "ſ")),
    "mcq._BARE": (re.compile(rf"^\s*[*_(\[]*\s*(?:(?P<letter>[A-Z])(?![A-Za-z0-9])|(?P<abstain>{_WORDS}))",
                             re.IGNORECASE | re.MULTILINE),
                  (" ", "\n", "\t", "\r", "*", "_", "(", "[", "A", "b", "1", "abstain", "x", "\x0b", "\u2028")),
    "mcq._MARKER": (re.compile(r"(?:final\s+answer|answer)s?\s*(?:is|are)?\s*[*_`]*\s*[:=\-–]", re.IGNORECASE),
                    ("answer", "final answer", "s", " ", "\n", "is", "are", "*", "`", ":", "=", "-", "–", "x")),
    "keyfacts._CLOCK": (re.compile(r"\b(\d{1,2})[:.h](\d\d)\s*([ap])?\.?\s*m?\b\.?|\b(\d{1,2})\s*([ap])\.?\s*m\b\.?"
                                   r"|\b(\d\d)(\d\d)\s*hours?\b", re.IGNORECASE),
                        ("10:00", "2.05", "1405", "12", ":", ".", " ", "\t", "a", "p", "m", "P", "x", "hours", "\n",
                         "-")),
    "keyfacts._CLAUSES": (re.compile(r"[.!?;:,\n]+\s*|\s+but\s+|\s+whereas\s+", re.IGNORECASE),
                          (" ", "\n", "\t", "but", "whereas", "BUT", ".", "!", ",", "x", "b", "ut")),
    "lists._AND": (re.compile(r"\s+(?:and|&)\s+", re.IGNORECASE), (" ", "\n", "\t", "and", "&", "AND", "x", "a", "nd")),
    "answers._ARROW": (re.compile(r" ?(?:-+>|<-+|=>|<=|[→←⟶⟵⇒⇐]) ?"), ("-", ">", "<", "=", " ", "→", "x", "--", "->")),
}


def _reading(name: str, pattern: re.Pattern[str], text: str) -> object:
    """What the scorers read from a pattern: every match's span and groups, and the split. ``_BARE``'s match now
    starts at the last blank line before the letter; ``parse_choice`` reads only its groups."""
    if name == "mcq._BARE":
        return [(m.end(), m.groups()) for m in pattern.finditer(text)]
    return [(m.span(), m.groups()) for m in pattern.finditer(text)], pattern.split(text)


def _short_texts(tokens: tuple[str, ...], limit: int = 70_000) -> Iterator[str]:
    """Every text of up to as many tokens as keep the count under ``limit``, shortest first."""
    length = 0
    while len(tokens) ** (length + 1) <= limit:
        length += 1
    for size in range(length + 1):
        for combo in itertools.product(tokens, repeat=size):
            yield "".join(combo)


@pytest.mark.parametrize("name", sorted(OLD))
def test_a_rewritten_pattern_reads_every_short_text_as_the_old_one(name):
    old, tokens = OLD[name]
    new = scoring_patterns()[name]
    assert new.pattern != old.pattern
    for text in _short_texts(tokens):
        assert _reading(name, new, text) == _reading(name, old, text), text


@pytest.mark.parametrize("name", sorted(OLD))
def test_a_rewritten_pattern_reads_longer_texts_as_the_old_one(name):
    old, tokens = OLD[name]
    new = scoring_patterns()[name]

    @settings(max_examples=300, deadline=None, database=None)
    @given(st.lists(st.sampled_from(tokens), max_size=24).map("".join))
    def same(text: str) -> None:
        assert _reading(name, new, text) == _reading(name, old, text)

    same()


if __name__ == "__main__":
    sys.exit(worker(sys.argv[1]))
