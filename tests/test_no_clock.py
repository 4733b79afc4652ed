"""No test depends on the clock (issue 29): a lint over the test files, and the step counter that replaces timing.

Speed is measured by the scripts (``make bench``). A test may still read the clock for a polling deadline
(``deadline = time.monotonic() + 30`` and ``time.monotonic() < deadline``): that bounds a wait for something to
happen and never judges how fast it happened. Any other read of a clock in a test file fails this lint.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from steps import assert_linear, count_steps

import lurch_tasks.scoring.answers as answers_module
from lurch_tasks.scoring.pairs import edge_item, parse_edges

TESTS = Path(__file__).resolve().parent
CLOCKS = {f"{name}{suffix}" for name in ("time", "perf_counter", "monotonic", "process_time", "thread_time")
          for suffix in ("", "_ns")}
MEASURING_MODULES = {"timeit"}
MEASURING_CALLS = {("resource", "getrusage"), ("os", "times")}


def _is_deadline(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and "deadline" in node.id.lower()


def _clock_reads(tree: ast.AST) -> list[ast.Call]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "time" and node.func.attr in CLOCKS]


def _allowed_reads(tree: ast.AST) -> set[int]:
    """ids of clock reads that set or test a polling deadline."""
    allowed: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(_is_deadline(target) for target in node.targets):
            allowed |= {id(call) for call in _clock_reads(node.value)}
        elif isinstance(node, ast.Compare) and any(_is_deadline(side) for side in (node.left, *node.comparators)):
            allowed |= {id(call) for call in _clock_reads(node)}
    return allowed


def clock_problems(source: str, filename: str) -> list[str]:
    """Every place in a test's source that reads a clock other than for a polling deadline, or imports a
    timing tool."""
    tree = ast.parse(source, filename)
    allowed = _allowed_reads(tree)
    problems = [f"{filename}:{call.lineno}: time.{call.func.attr}() outside a polling deadline"
                for call in _clock_reads(tree) if id(call) not in allowed]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "time" and any(a.name in CLOCKS for a in node.names):
            problems.append(f"{filename}:{node.lineno}: imports a clock from time")
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            problems += [f"{filename}:{node.lineno}: imports {name}" for name in names if name in MEASURING_MODULES]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and isinstance(node.func.value, ast.Name) and (node.func.value.id, node.func.attr) in MEASURING_CALLS):
            problems.append(f"{filename}:{node.lineno}: {node.func.value.id}.{node.func.attr}() measures time")
    return sorted(problems)


def test_no_test_file_reads_a_clock_except_for_a_deadline():
    files = sorted(TESTS.rglob("*.py"))
    assert len(files) > 40
    problems = [p for path in files for p in clock_problems(path.read_text(encoding="utf-8"), path.name)]
    assert problems == []


@pytest.mark.parametrize(
    "source",
    ["import time\nstart = time.perf_counter()\nf()\nassert time.perf_counter() - start < 2\n",
     "import time\nt = time.monotonic()\n", "import time\nassert time.process_time() < 5\n",
     "from time import perf_counter\n", "import timeit\n", "import resource\nresource.getrusage(0)\n",
     "import time\nelapsed = time.time_ns()\n", "import time\ndeadline = 3\nx = time.time() - deadline\n"],
)  # fmt: skip
def test_the_lint_catches_a_timing_assert(source):
    assert clock_problems(source, "t.py")


def test_the_lint_allows_polling_deadlines():
    source = ("import time\ndeadline = time.monotonic() + 30\nwhile time.monotonic() < deadline and busy():\n"
              "    time.sleep(0.1)\nif time.time() > deadline:\n    pass\n")
    assert clock_problems(source, "t.py") == []


# --- the step counter (tests/steps.py) ------------------------------------------------------------------------


def test_the_step_counter_is_exact_and_repeatable():
    text = "Lena Morrow -- Tom Baker\n" * 50
    roster = ["Lena Morrow", "Tom Baker"]
    parse_edges(text, roster)  # warm the roster's caches
    first, second = count_steps(lambda: parse_edges(text, roster)), count_steps(lambda: parse_edges(text, roster))
    assert first == second and first.lines > 0 and first.scanned >= len(text)


def test_the_step_counter_catches_a_regex_rescan():
    # Searching the rest of the text again from every position: quadratic with no nested loop in Python.
    def rescan(text: str) -> None:
        for start in range(len(text)):
            answers_module._ARROW.search(text, start)

    with pytest.raises(AssertionError):
        assert_linear(rescan, "no arrow here ", chars=300)


def test_the_step_counter_catches_a_nested_python_loop():
    def all_pairs(text: str) -> None:
        for a in text:
            for b in text:
                edge_item(a, b)

    with pytest.raises(AssertionError):
        assert_linear(all_pairs, "ab", chars=40)


def test_the_step_counter_passes_a_linear_parser():
    small, large = assert_linear(lambda text: parse_edges(text, ["Lena Morrow", "Tom Baker"]),
                                 "Lena Morrow -- Tom Baker\n")
    assert 6 <= large.total / small.total <= 9
