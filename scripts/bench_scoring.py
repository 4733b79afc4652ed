"""Benchmark: scoring cost per model output, typical and adversarial (issue "Performance", item 4).

    python scripts/bench_scoring.py [--quick] [--size CHARS]
    python scripts/bench_scoring.py --growth [--budget SECONDS]

Scores every output of a deterministic corpus with each family's real ``score(doc, output)`` on real
generated docs (Find the Origin, a 16k-token edge graph, a 16k-token clique graph with ``groups``, a
128k-token edge graph with ~850 people). The corpus holds typical model answers and adversarial outputs of
about ``--size`` characters each (1 MB; ``--quick``: 100 KB): repeated markers, unclosed and deeply nested
JSON, one huge line, 55k pair lines, near-name junk, seeded random unicode, and so on.

Prints a markdown table, then per doc the slowest typical output and the slowest adversarial one. Times are
CPU time of this process (``time.process_time``; other load on a shared machine does not count), best of 3;
a typical output's time is the mean over a batch of calls after a first call (the per-doc caches are warm)
and its first call on cold caches is shown too. Exits 1 when a target is missed or an output does not get
its defined score. Targets: a typical output <= 0.1 ms; an adversarial output <= 50 ms when it is up to 1 MB
long, 50 ms per MB when longer. The scorers read long outputs through bounded windows (128k characters in
all), so cost stops growing with size there; a ``--quick`` output (100 KB) is read whole, which makes the
quick run the stricter check of the parsers themselves.

``--growth`` (issue 26, linear-time parsing) scores every answer format (Find the Origin, edge and clique
graphs, ImplicitHop entity / list / count, RECON MCQ single / multiple / integer / ordering / free form) on
adversarial families built to make a backtracking regex blow up (whitespace runs after answer markers,
thousands of near-markers, long digit and colon runs, ``*_`` markup runs, unclosed brackets, ``Day 1, 10:``
repeats, ...) at 1, 4, 16 and 64 KB, and prints the CPU ms per size and the growth from 16 to 64 KB (linear is
about 4). Targets: <= 50 ms at 64 KB and growth <= 8 (checked when the 64 KB time is over 5 ms, below which
timer noise dominates). A case over ``--budget`` seconds (wall clock) is stopped and its larger sizes are not
run, so the script also finishes on code that is not linear.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

from lurch_tasks.core.generation import generate_row, resolve_task
from lurch_tasks.core.registry import get_family
from lurch_tasks.core.rng import StableRng

FULL_SIZE = 1_000_000
QUICK_SIZE = 100_000
TYPICAL_TARGET_MS = 0.1
ADVERSARIAL_TARGET_MS_PER_MB = 50.0
PAIR_LINES = 55_000  # the "55k pair lines" cases at full size (scaled with the size)
SEED = 20_240_604

# (label, task, index): real docs the scorers read, generated once per process.
DOCS = (
    ("origin", "find_the_origin", 0),
    ("graph-16k", "memory_drift_edge", 5),
    ("clique-16k", "memory_drift_clique", 5),
    ("graph-128k", "memory_drift_edge_long", 11),
)


@dataclass(frozen=True)
class Case:
    """One output to score; ``expected`` holds the metrics it must get (empty: any result, no exception)."""

    name: str
    text: str
    typical: bool = False
    expected: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class DocInfo:
    """What the corpus builder needs from a doc: its gold answer and the people or words it may name."""

    label: str
    family: str
    doc: dict
    gold: tuple[tuple[str, str], ...]  # graph: the gold pairs as written in the prompt; origin: ()
    roster: tuple[str, ...]  # graph: every person; origin: ()
    origin: str  # origin: the gold word; graph: ""
    destination: str  # origin: the question's word; graph: ""


@cache
def load_doc(label: str) -> DocInfo:
    _, task, index = next(spec for spec in DOCS if spec[0] == label)
    doc = generate_row(resolve_task(task), index)
    if doc["family"] == "find_the_origin":
        from lurch_tasks.families.find_origin.prompt import parse_question

        return DocInfo(label, doc["family"], doc, (), (), doc["answer_text"], parse_question(doc["question"]) or "")
    gold = tuple(tuple(pair) for pair in json.loads(doc["answer"]))
    roster = tuple(json.loads(doc["params"])["people"])
    return DocInfo(label, doc["family"], doc, gold, roster, "", "")


def score(info: DocInfo, output: str) -> dict[str, float]:
    return get_family(info.family).score(info.doc, output)


# --- corpus -----------------------------------------------------------------------------------------


def _repeat(unit: str, size: int) -> str:
    return unit * max(1, size // len(unit))


def _fill(size: int, line: Callable[[int], str], sep: str = "\n") -> str:
    """Lines ``line(0)``, ``line(1)``, ... joined by ``sep`` until about ``size`` characters."""
    lines, total, i = [], 0, 0
    while total < size:
        text = line(i)
        lines.append(text)
        total += len(text) + len(sep)
        i += 1
    return sep.join(lines)


def _words(rng: StableRng, count: int) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(letters[rng.below(26)] for _ in range(rng.integer(2, 9))) for _ in range(count)]


def _unicode(rng: StableRng, size: int) -> str:
    """Seeded code points from ASCII, Latin, punctuation, CJK, emoji and lone surrogates, with newlines."""
    ranges = ((0x20, 0x7E), (0xA0, 0x24F), (0x2000, 0x206F), (0x2190, 0x21FF), (0x4E00, 0x4FFF),
              (0x1F300, 0x1F5FF), (0xD800, 0xDFFF), (0x0A, 0x0A))  # fmt: skip
    out = []
    for _ in range(size):
        low, high = ranges[rng.below(len(ranges))]
        out.append(chr(rng.integer(low, high)))
    return "".join(out)


def _near_names(info: DocInfo, rng: StableRng) -> list[str]:
    """Near misses of roster names: typos, given names only, swapped halves, honorifics on a wrong name."""
    people = list(info.roster) or ["Lena Morrow", "Tom Baker", "Sam Hill", "Priya Nair"]
    out = []
    for name in people[:200]:
        first, _, last = name.partition(" ")
        out += [f"{first} {last[:-1]}x", first, f"{last} {first}", f"Dr. {first[::-1].title()} {last}",
                f"{first}{last}", f"{first[0]}. {last}zz"]
    return rng.shuffled(out)


def adversarial(info: DocInfo, size: int) -> list[Case]:
    """About ``size``-character outputs that stress the parsers; every one scores 0 unless it says otherwise."""
    rng = StableRng(SEED)
    lines = max(1, PAIR_LINES * size // FULL_SIZE)
    origin, destination = info.origin or "tufted", info.destination or "cherub"
    gold = info.gold or (("Lena Morrow", "Tom Baker"),)
    roster = list(info.roster) or ["Lena Morrow", "Tom Baker", "Sam Hill", "Priya Nair"]
    near = _near_names(info, rng)
    words = _words(rng, 2_000)
    prose = _fill(size, lambda i: " ".join(words[(i * 7 + k) % len(words)] for k in range(12)) + ".")
    origin_ok = {"score": 1.0} if info.family == "find_the_origin" else {}
    graph_ok = {"f1": 1.0, "score": 1.0} if info.family != "find_the_origin" else {"score": 0.0}
    zero = {"score": 0.0}
    pair = f"{gold[0][0]} -- {gold[0][1]}"
    cases = [
        # repeated markers
        Case("final_answer_x_n", _repeat("FINAL ANSWER: ", size), expected=zero),
        Case("final_answer_x_n_then_gold", _repeat("FINAL ANSWER: ", size) + origin, expected=origin_ok),
        Case("final_answer_newline_x_n", _repeat("FINAL ANSWER:\n", size), expected=zero),
        Case("final_answer_nosep_x_n", _repeat("final answer ", size), expected=zero),
        Case("final_answer_bold_x_n", _repeat("**Final Answer**\n", size), expected=zero),
        Case("origin_of_x_n", _repeat(f'The origin of "{destination}" is ', size), expected=zero),
        Case("origin_is_not_x_n", _repeat('The origin of "x" is not ', size), expected=zero),
        Case("answer_colon_x_n", _repeat("answer: maybe, ", size), expected=zero),
        Case("final_answer_hedge_x_n", _repeat("FINAL ANSWER: x or y\n", size), expected=zero),
        Case("final_answer_hedge_x_n_then_gold", _repeat("FINAL ANSWER: x or y\n", size) + f"FINAL ANSWER: {origin}",
             expected=origin_ok),
        Case("connections_x_n", _repeat("CONNECTIONS: ", size), expected=zero),
        Case("connections_newline_x_n", _repeat("CONNECTIONS:\n", size), expected=zero),
        Case("connections_heading_x_n", _repeat("### Connections\n", size), expected=zero),
        Case("connections_drafts_x_n", _repeat(f"CONNECTIONS:\n{pair}\n", size)
             + "CONNECTIONS:\n" + "\n".join(" -- ".join(p) for p in gold), expected=graph_ok),
        Case("connections_x_n_then_gold", _repeat("CONNECTIONS:\n", size) + "\n".join(" -- ".join(p) for p in gold),
             expected=graph_ok),
        Case("special_tokens_x_n", _repeat("<|im_end|></s>", size), expected=zero),
        # unclosed and nested JSON
        Case("open_bracket_x_n", _repeat("[", size), expected=zero),
        Case("close_bracket_x_n", _repeat("]", size), expected=zero),
        Case("open_pair_string_x_n", _repeat('[["', size), expected=zero),
        Case("open_list_a_x_n", _repeat('["a", ', size), expected=zero),
        Case("open_pairs_a_x_n", _repeat('[["a", ', size), expected=zero),
        Case("open_pairs_names_x_n", _repeat(f'[["{gold[0][0]}", ', size)),
        Case("open_object_x_n", _repeat('{"a": ', size), expected=zero),
        Case("open_object_key_x_n", _repeat('{"', size), expected=zero),
        Case("open_bracket_quote_lines", _repeat('["\n', size), expected=zero),
        Case("small_json_values_x_n", _repeat('["a"] ', size), expected=zero),
        Case("nested_valid_json_x_n", _repeat("[" * 500 + '"a"' + "]" * 500 + "\n", size), expected=zero),
        Case("json_unclosed_string", '[["' + "a" * size, expected=zero),
        Case("json_gold_pairs_big", json.dumps([list(gold[i % len(gold)]) for i in range(size // 32)]),
             expected=graph_ok),
        Case("json_gold_after_junk", _repeat('[["a", ', size // 2) + "\n" + json.dumps([list(p) for p in gold]),
             expected=graph_ok),
        Case("json_objects_big", json.dumps({"connections": [{"source": a, "target": b} for a, b in
                                                             [gold[i % len(gold)] for i in range(size // 48)]]}),
             expected=graph_ok),
        # brackets, quotes and separators
        Case("parens_x_n", _repeat("(", size), expected=zero),
        Case("paren_names_x_n", _repeat(f"({gold[0][0]}, ", size)),
        Case("boxed_x_n", _repeat("\\boxed{", size), expected=zero),
        Case("final_answer_boxed_x_n", "FINAL ANSWER: " + _repeat("\\boxed{", size), expected=zero),
        Case("strong_separators_x_n", _repeat("-- ", size), expected=zero),
        Case("hyphens", "-" * size, expected=zero),
        Case("spaced_hyphens_x_n", _repeat(" - ", size), expected=zero),
        Case("commas_and_x_n", _repeat(", and ", size), expected=zero),
        Case("colons", ":" * size, expected=zero),
        Case("pipes", "|" * size, expected=zero),
        Case("arrows_x_n", _repeat("<-> => ", size), expected=zero),
        Case("single_quotes", "'" * size, expected=zero),
        Case("double_quotes", '"' * size, expected=zero),
        Case("long_quoted_string", '"' + "a" * size + '"', expected=zero),
        Case("final_answer_long_quoted", 'FINAL ANSWER: "' + "a" * size + '"', expected=zero),
        Case("final_answer_hyphen_word", "FINAL ANSWER: " + _repeat("a-", size) + "!", expected=zero),
        Case("final_answer_huge_line", "FINAL ANSWER: " + " ".join(words[i % len(words)] for i in range(size // 6)),
             expected=zero),
        Case("final_answer_arrow_chain", "FINAL ANSWER: " + _repeat("x -> ", size) + destination, expected=zero),
        Case("newlines", "\n" * size, expected=zero),
        Case("spaces", " " * size, expected=zero),
        Case("markdown_stars", "*" * size, expected=zero),
        # huge lines and many lines
        Case("huge_line_words", " ".join(words[i % len(words)] for i in range(size // 6)), expected=zero),
        Case("huge_line_gold_pairs", _repeat(", ".join(" -- ".join(p) for p in gold) + ", ", size),
             expected=graph_ok),
        Case("huge_line_roster_chain", " -- ".join(roster[i % len(roster)] for i in range(size // 16))),
        Case("huge_line_relation", f"{gold[0][0]} is connected to " + " and ".join(
            roster[i % len(roster)] for i in range(size // 16))),
        Case("huge_line_star", f"{gold[0][0]}: " + ", ".join(roster[i % len(roster)] for i in range(size // 16))),
        Case("tuple_list_huge_line", "[" + ", ".join(f"('{a}', '{b}')" for a, b in [gold[i % len(gold)] for i in
                                                                                    range(size // 32)]) + "]",
             expected=graph_ok),
        Case("distinct_separator_lines", _fill(size, lambda i: f"x{i} -- " * 300)),
        Case("gold_pair_lines", "\n".join(" -- ".join(gold[i % len(gold)]) for i in range(lines)),
             expected=graph_ok),
        Case("roster_pair_lines", "\n".join(f"{roster[i % len(roster)]} -- {roster[(i * 7 + 3) % len(roster)]}"
                                            for i in range(lines))),
        Case("near_name_pair_lines", "\n".join(f"- {near[i % len(near)]} -- {near[(i * 5 + 1) % len(near)]}"
                                               for i in range(lines)), expected=zero),
        Case("near_name_sentences", "\n".join(f"{near[i % len(near)]} shares a phone with {near[(i + 3) % len(near)]}"
                                              for i in range(lines // 2)), expected=zero),
        Case("table_rows", "\n".join(f"| {i} | {near[i % len(near)]} | {near[(i + 1) % len(near)]} | yes |"
                                     for i in range(lines)), expected=zero),
        Case("negated_gold_lines", "\n".join(f"{pair} (not connected)" for _ in range(lines)), expected=zero),
        Case("prose_lines", prose, expected=zero),
        Case("prose_then_final_answer", prose + f"\nFINAL ANSWER: {origin}", expected=origin_ok),
        Case("prose_then_connections", prose + "\n\nCONNECTIONS:\n" + "\n".join(" -- ".join(p) for p in gold),
             expected=graph_ok),
        Case("random_unicode", _unicode(rng, size), expected=zero),
    ]
    return cases


def typical(info: DocInfo) -> list[Case]:
    """Realistic model answers: short reasoning and a final line, or a short list of pairs."""
    if info.family == "find_the_origin":
        o, d = info.origin, info.destination
        right, wrong = {"score": 1.0}, {"score": 0.0}
        return [
            Case("final_answer", f"FINAL ANSWER: {o}", True, right),
            Case("reasoning_final_answer", f'"{d}" is linked from "x1", and "x1" is linked from "{o}". Nothing links '
                 f'to "{o}", so it is the origin.\n\nFINAL ANSWER: {o}', True, right),
            Case("markdown_final_answer", f"Tracing back from **{d}**:\n1. {o} -> {d}\n\n**Final Answer:** `{o}`.",
                 True, right),
            Case("origin_is_phrase", f'The origin of "{d}" is "{o}".', True, right),
            Case("wrong_answer", f'Step 1: "{d}" comes from "{d}s".\nFINAL ANSWER: {d}', True, wrong),
            Case("no_answer", "I cannot determine the origin from the given lines.", True, wrong),
        ]
    gold = info.gold
    others = [p for p in info.roster if all(p not in g for g in gold)]
    lines = [f"{a} -- {b}" for a, b in gold]
    extra = [f"{others[2 * i]} -- {others[2 * i + 1]}" for i in range(max(0, 10 - len(lines)))]
    right = {"f1": 1.0}
    cases = [
        Case("one_line", lines[0], True, {} if len(lines) > 1 else right),
        Case("gold_lines", "\n".join(lines[:10]), True, right if len(lines) <= 10 else {}),
        Case("ten_lines", "\n".join((lines + extra)[:10]), True),
        Case("numbered_bold", "\n".join(f"{i + 1}. **{a}** — **{b}**" for i, (a, b) in enumerate(gold[:10])), True,
             right if len(gold) <= 10 else {}),
        Case("cot_connections", "Let me go through the profiles. " + " ".join(
            f"{a} and {b} share the same detail." for a, b in gold[:3]) + " Others look unrelated.\n\nCONNECTIONS:\n"
             + "\n".join(lines[:10]), True, right if len(lines) <= 10 else {}),
        Case("json_list", json.dumps([list(p) for p in gold[:10]]), True, right if len(gold) <= 10 else {}),
        Case("fenced_json", "```json\n" + json.dumps({"connections": [list(p) for p in gold[:10]]}, indent=2)
             + "\n```", True, right if len(gold) <= 10 else {}),
        Case("none", "CONNECTIONS: none", True, {"score": 0.0}),
    ]
    return cases


def build_corpus(size: int = FULL_SIZE, labels: tuple[str, ...] | None = None) -> list[tuple[DocInfo, Case]]:
    """Every (doc, case) pair: the typical outputs and the adversarial outputs of about ``size`` characters."""
    corpus = []
    for label, _, _ in DOCS:
        if labels is not None and label not in labels:
            continue
        info = load_doc(label)
        corpus += [(info, case) for case in typical(info) + adversarial(info, size)]
    return corpus


def check(info: DocInfo, case: Case, scores: dict[str, float]) -> str | None:
    """A message when ``scores`` misses one of the case's expected metrics."""
    wrong = {k: (scores.get(k), v) for k, v in case.expected.items() if abs(scores.get(k, float("nan")) - v) > 1e-9}
    return f"{info.label}/{case.name}: got/expected {wrong}" if wrong else None


# --- growth: per-format adversarial families at 1, 4, 16, 64 KB (issue 26, linear-time parsing) -------

GROWTH_SIZES = (1_024, 4_096, 16_384, 65_536)
GROWTH_TARGET_MS = 50.0  # at 64 KB
GROWTH_MAX_RATIO = 8.0  # 64 KB / 16 KB; linear is 4
GROWTH_NOISE_MS = 5.0  # below this the ratio is timer noise and is not checked
# (label, task, index): one real doc per answer format; the closed-book RECON variants score like the others
# and are generated in milliseconds.
FORMAT_DOCS = (
    ("origin", "find_the_origin", 0),
    ("graph-edges", "memory_drift_edge", 5),
    ("graph-cliques", "memory_drift_clique", 5),
    ("hop-entity", "implicit_hop_compare", 0),
    ("hop-list", "implicit_hop_depth", 0),
    ("hop-count", "implicit_hop_count", 0),
    ("recon-mcq_single", "recon_closedbook_chain", 0),
    ("recon-mcq_multi", "recon_closedbook_cascade", 1),
    ("recon-integer", "recon_closedbook_chain", 1),
    ("recon-ordering", "recon_closedbook_chain", 2),
    ("recon-free_form", "recon_closedbook_retrieval", 2),
)
# (name, head, unit, tail): the output is head + unit * k + tail, about the size asked for. Each family aims at a
# shape that makes a backtracking regex super-linear: a run that two adjacent quantifiers can split many ways
# (after a marker, where "answer\s*(?:is)?\s*[*_]*\s*" stood), or many match attempts that each scan the rest.
GROWTH_FAMILIES = (
    ("answer_spaces", "answer", " ", ""),
    ("answer_tabs", "ANSWER", "\t", ""),
    ("final_answer_newlines", "Final Answer", "\n", ""),
    ("answer_is_spaces", "The answer is", " ", ""),
    ("answer_markup", "**Answer", "*_", ""),
    ("answer_spaced_markup", "Answer", " * _ ", ""),
    ("near_markers", "", "answer ", ""),
    ("near_final_markers", "", "final answer ", ""),
    ("empty_markers", "", "ANSWER: ", ""),
    ("bold_near_markers", "", "**Answer** ", ""),
    ("connections_spaces", "CONNECTIONS", " ", ""),
    ("digits", "ANSWER: ", "1", ""),
    ("colons", "ANSWER: ", ":", ""),
    ("digit_colons", "ANSWER: ", "1:", ""),
    ("clock_spaces", "ANSWER: on Day 1, 10:00", " ", ""),
    ("clock_tabs_pm", "ANSWER: on Day 1, 10:00 p", "\t", ""),
    ("hours_spaces", "ANSWER: at 1000", " ", ""),
    ("day_clock_repeats", "ANSWER: ", "Day 1, 10:", ""),
    ("markup", "ANSWER: ", "*_", ""),
    ("open_parens", "ANSWER: ", "(", ""),
    ("open_brackets", "ANSWER: ", "[", ""),
    ("open_braces", "ANSWER: ", "{", ""),
    ("spaces_in_answer", "ANSWER: x", " ", "y"),
    ("newlines", "", "\n", "x"),
    ("blank_lines", "", " \n", "x"),
    ("hyphens_in_answer", "FINAL ANSWER: x ", "-", ""),
    ("letter_spaces", "ANSWER: A", " ", ","),
    ("abstain_spaces", "", "cannot  ", ""),
)


@cache
def format_doc(label: str) -> tuple[str, dict]:
    """(family, doc) of one ``FORMAT_DOCS`` entry."""
    _, task, index = next(spec for spec in FORMAT_DOCS if spec[0] == label)
    doc = generate_row(resolve_task(task), index)
    return doc["family"], doc


def growth_text(head: str, unit: str, tail: str, size: int) -> str:
    return head + unit * max(1, (size - len(head) - len(tail)) // len(unit)) + tail


class Stalled(BaseException):
    """Raised by the alarm; a BaseException, so the scorers' last-resort ``except Exception`` cannot swallow it."""


def _stall(*_: object) -> None:
    raise Stalled


def timed_ms(function: Callable[[], object], budget: float) -> float:
    """CPU ms of ``function`` (best of 3 when a call is fast), or inf when one call passes ``budget`` seconds of
    wall clock (the regex engine checks for signals while it backtracks, so the alarm stops it). The stop is a
    real-time alarm: an armed CPU-time timer makes ``process_time`` tick in milliseconds on some kernels."""
    previous = signal.signal(signal.SIGALRM, _stall)
    try:
        best = float("inf")
        for _ in range(3):
            signal.setitimer(signal.ITIMER_REAL, budget)
            start = time.process_time()
            try:
                function()
            except Stalled:
                return float("inf")
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            best = min(best, time.process_time() - start)
            if best > 0.2:
                break  # slow enough to measure once
        return best * 1000
    finally:
        signal.signal(signal.SIGALRM, previous)


def growth_times(score_text: Callable[[str], object], head: str, unit: str, tail: str, budget: float) -> list[float]:
    """CPU ms per ``GROWTH_SIZES`` size; once a size is stopped, the larger ones are not run (inf)."""
    times: list[float] = []
    for size in GROWTH_SIZES:
        text = growth_text(head, unit, tail, size)
        stopped = bool(times) and times[-1] == float("inf")
        times.append(float("inf") if stopped else timed_ms(lambda text=text: score_text(text), budget))
    return times


def growth_misses(label: str, name: str, times: list[float]) -> list[str]:
    """The targets one (format, family) row misses."""
    at_64, at_16 = times[-1], times[-2]
    if at_64 == float("inf"):
        stopped = GROWTH_SIZES[times.index(float("inf"))] // 1024
        return [f"{label}/{name}: stopped at {stopped} KB (over the budget)"]
    misses = []
    if at_64 > GROWTH_TARGET_MS:
        misses.append(f"{label}/{name}: {at_64:.1f} ms at 64 KB > {GROWTH_TARGET_MS:g} ms")
    if at_64 > GROWTH_NOISE_MS and at_64 / max(at_16, 1e-3) > GROWTH_MAX_RATIO:
        misses.append(f"{label}/{name}: grows {at_64 / max(at_16, 1e-3):.1f}x from 16 to 64 KB")
    return misses


def growth(budget: float, labels: tuple[str, ...] | None = None) -> int:
    """Print the growth table; 1 when a target is missed."""
    sizes = " | ".join(f"{size // 1024} KB ms" for size in GROWTH_SIZES)
    print(f"| format | family | {sizes} | 64/16 |\n|---|---|" + "---:|" * (len(GROWTH_SIZES) + 1))
    misses: list[str] = []
    worst: dict[str, tuple[float, str]] = {}
    for label, _, _ in FORMAT_DOCS:
        if labels is not None and label not in labels:
            continue
        family, doc = format_doc(label)
        scorer = get_family(family).score
        for name, head, unit, tail in GROWTH_FAMILIES:
            times = growth_times(lambda text, doc=doc, scorer=scorer: scorer(doc, text), head, unit, tail, budget)
            misses += growth_misses(label, name, times)
            worst[label] = max(worst.get(label, (-1.0, "")), (times[-1], name))
            cells = " | ".join(f"{ms:.2f}" if ms < float("inf") else f"> {budget:g} s" if k == times.index(ms)
                               else "not run" for k, ms in enumerate(times))
            ratio = times[-1] / max(times[-2], 1e-3) if times[-1] < float("inf") else float("inf")
            print(f"| {label} | {name} | {cells} | {ratio:.1f} |", flush=True)
    print(f"\n| format | slowest family at 64 KB, ms (target {GROWTH_TARGET_MS:g}) |\n|---|---|")
    for label, (ms, name) in worst.items():
        print(f"| {label} | {'stopped' if ms == float('inf') else f'{ms:.2f}'} ({name}) |")
    for miss in misses:
        print(f"MISSED {miss}", file=sys.stderr)
    return 1 if misses else 0


# --- timing -----------------------------------------------------------------------------------------


def clear_caches() -> None:
    """Forget the per-doc caches (normalized rosters, decoded params), so the next score is a first call."""
    from lurch_tasks.families import graph
    from lurch_tasks.scoring import pairs

    for cached in (pairs._roster, getattr(graph, "_roster_of", None)):  # getattr: also runs on older versions
        if cached is not None:
            cached.cache_clear()
    pairs._last_roster = None


def adversarial_target_ms(chars: int) -> float:
    """50 ms for an output of up to 1 MB, 50 ms per MB beyond."""
    return ADVERSARIAL_TARGET_MS_PER_MB * max(1.0, chars / FULL_SIZE)


def best_ms(function: Callable[[], object], repeats: int = 3, batch: int = 1) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(batch):
            function()
        best = min(best, (time.process_time() - start) / batch)
    return best * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_SIZE // 1000} KB outputs (CI)")
    parser.add_argument("--size", type=int, default=None, help="characters per adversarial output")
    parser.add_argument("--docs", nargs="+", default=None,
                        choices=sorted({label for label, _, _ in DOCS + FORMAT_DOCS}))
    parser.add_argument("--growth", action="store_true",
                        help="per-format adversarial families at 1, 4, 16, 64 KB: ms per size and growth")
    parser.add_argument("--budget", type=float, default=10.0, help="--growth: seconds before a case is stopped")
    args = parser.parse_args(argv)
    if args.growth:
        return growth(args.budget, tuple(args.docs) if args.docs else None)
    size = args.size or (QUICK_SIZE if args.quick else FULL_SIZE)
    failures: list[str] = []
    worst: dict[str, dict[bool, tuple[float, str]]] = {}
    print("| doc | family | case | chars | ms (CPU, best of 3) | first call ms |\n|---|---|---|---:|---:|---:|")
    for info, case in build_corpus(size, tuple(args.docs) if args.docs else None):
        def run(info: DocInfo = info, case: Case = case) -> dict[str, float]:
            return score(info, case.text)

        first = None
        if case.typical:
            clear_caches()
            start = time.process_time()
            run()
            first = (time.process_time() - start) * 1000
            ms = best_ms(run, batch=200)
        else:
            run()
            ms = best_ms(run)
        message = check(info, case, run())
        if message:
            failures.append(message)
        target = TYPICAL_TARGET_MS if case.typical else adversarial_target_ms(len(case.text))
        if ms > target:
            failures.append(f"{info.label}/{case.name}: {ms:.3f} ms > {target:g} ms")
        previous = worst.setdefault(info.label, {}).get(case.typical, (-1.0, ""))
        if ms > previous[0]:
            worst[info.label][case.typical] = (ms, case.name)
        first_text = f"{first:.3f}" if first is not None else ""
        print(f"| {info.label} | {info.family} | {case.name} | {len(case.text)} | {ms:.3f} | {first_text} |",
              flush=True)
    print(f"\n| doc | slowest typical ms (target {TYPICAL_TARGET_MS:g}) | slowest adversarial ms, ~{size} chars "
          f"(target {ADVERSARIAL_TARGET_MS_PER_MB:g} up to 1 MB) |\n|---|---|---|")
    for label, figures in worst.items():
        (t_ms, t_case), (a_ms, a_case) = figures[True], figures[False]
        print(f"| {label} | {t_ms:.3f} ({t_case}) | {a_ms:.1f} ({a_case}) |")
    for failure in failures:
        print(f"MISSED {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
