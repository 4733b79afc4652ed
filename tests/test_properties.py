"""`lurch properties`: the LURCH properties of any benchmark's items, with the code our families use. Hand-made graphs
and items in each adapter's shape, against values computed by hand (a character-level tokenizer makes token counts
equal character counts); our own materialized rows against their stored properties."""

from __future__ import annotations

import json
import string
import subprocess
import sys
from pathlib import Path

import pytest

from lurch_tasks.core.difficulty import reasoning_depth, reasoning_width, step_count
from lurch_tasks.core.item_properties import measure_item
from lurch_tasks.external import ADAPTER_NAMES
from lurch_tasks.external.adapters import ADAPTERS

LURCH = str(Path(sys.executable).parent / "lurch")


@pytest.fixture(scope="module")
def char_tokenizer(tmp_path_factory) -> str:
    """A tokenizer whose tokens are single characters: token measures equal character measures."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {c: i for i, c in enumerate(sorted(set(string.printable)))}
    vocab["[UNK]"] = len(vocab)
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    folder = tmp_path_factory.mktemp("chartok")
    PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]").save_pretrained(folder)
    return str(folder)


def _graph(steps: list[str], edges: list[tuple[str, str]], evidence: tuple[str, ...] = ()) -> tuple[list, list]:
    nodes = [{"id": e, "kind": "evidence"} for e in evidence] + [{"id": s, "kind": "step"} for s in steps]
    return nodes + [{"id": "ans", "kind": "answer"}], [list(edge) for edge in edges]


@pytest.mark.parametrize("steps, edges, evidence, depth, width, count", [
    # a chain of three steps: one after another
    (["s1", "s2", "s3"], [("e1", "s1"), ("s1", "s2"), ("s2", "s3"), ("s3", "ans")], ("e1",), 3, 1, 3),
    # two lookups side by side, combined by a third step
    (["l1", "l2", "c"], [("e1", "l1"), ("e2", "l2"), ("l1", "c"), ("l2", "c"), ("c", "ans")], ("e1", "e2"), 2, 2, 3),
    # three parallel lookups read straight into the answer
    (["a", "b", "c"], [("e1", "a"), ("e2", "b"), ("e3", "c"), ("a", "ans"), ("b", "ans"), ("c", "ans")],
     ("e1", "e2", "e3"), 1, 3, 3),
    # a diamond with a long side: the short branch's step shares level 1 with the long side's first step
    (["a", "b1", "b2", "j"], [("a", "j"), ("b1", "b2"), ("b2", "j"), ("j", "ans")], (), 3, 2, 4),
    # evidence only, no steps (the answer read as written)
    ([], [("e1", "ans")], ("e1",), 0, 0, 0),
])
def test_depth_width_and_step_count_of_hand_made_graphs(steps, edges, evidence, depth, width, count):
    nodes, edge_list = _graph(steps, edges, evidence)
    assert reasoning_depth(nodes, edge_list) == depth
    assert reasoning_width(nodes, edge_list) == width
    assert step_count(nodes) == count


def test_a_cyclic_graph_is_refused():
    nodes, edges = _graph(["a", "b"], [("a", "b"), ("b", "a")])
    with pytest.raises(ValueError, match="cycle"):
        reasoning_width(nodes, edges)


def _measure(adapter: str, record: dict, tokenizer: str) -> dict:
    return measure_item(ADAPTERS[adapter](record, "x:1"), tokenizer)


def _both_units(got: dict, scope: float, dispersion: float, chars: int) -> None:
    """With the character tokenizer, tokens and characters give the same numbers."""
    assert got["context_chars"] == got["context_tokens"] == chars
    assert got["evidence_scope_chars"] == pytest.approx(scope) and got["evidence_scope"] == pytest.approx(scope)
    assert got["evidence_dispersion_chars"] == pytest.approx(dispersion)
    assert got["evidence_dispersion"] == pytest.approx(dispersion)


def test_hotpotqa_supporting_facts(char_tokenizer):
    record = {"_id": "h1", "question": "q", "answer": "a",
              "context": [["A", [" s1.", " s2."]], ["B", [" t1.", " t2."]]],
              "supporting_facts": [["A", 1], ["B", 0]]}
    item = ADAPTERS["hotpotqa"](record, "x:1")
    assert item.context == "A\n s1. s2.\n\nB\n t1. t2." and item.evidence == ((6, 10), (14, 18)) and item.id == "h1"
    # 8 of 22 characters are evidence; 4 of the 14 others lie between the two sentences
    _both_units(measure_item(item, char_tokenizer), 8 / 22, 4 / 14, 22)
    with pytest.raises(ValueError, match="supporting_facts 1: .* names no sentence"):
        ADAPTERS["hotpotqa"]({**record, "supporting_facts": [["C", 0]]}, "x:1")


def test_babi_supporting_line_ids(char_tokenizer):
    record = {"id": "b1", "story": ["1 Mary went to the kitchen.", "2 John slept.", "3 Mary took the apple."],
              "question": "Where is the apple?", "answer": "kitchen", "supporting_facts": [1, 3]}
    item = ADAPTERS["babi"](record, "x:1")
    assert item.evidence == ((0, 25), (38, 58))
    # 45 of 58 characters are evidence; all 13 others lie between the first and the last fact
    _both_units(measure_item(item, char_tokenizer), 45 / 58, 1.0, 58)
    with pytest.raises(ValueError, match="line id 4 is not in the story"):
        ADAPTERS["babi"]({**record, "supporting_facts": [4]}, "x:1")


def test_ruler_needles_with_positions(char_tokenizer):
    context = "xxxx NEEDLE-ONE yyyy NEEDLE-TWO zzzz"
    record = {"input": context, "needles": [{"text": "NEEDLE-ONE", "position": 5}, {"text": "NEEDLE-TWO",
                                                                                  "position": 21}]}
    # 20 of 36 characters are needles; 6 of the 16 others lie between them
    _both_units(_measure("ruler", record, char_tokenizer), 20 / 36, 6 / 16, 36)
    with pytest.raises(ValueError, match="needles 2: the context at position 20 is not the needle's text"):
        ADAPTERS["ruler"]({**record, "needles": [{"text": "NEEDLE-ONE", "position": 5},
                                                 {"text": "NEEDLE-TWO", "position": 20}]}, "x:1")


def test_generic_quotes_spans_prompt_and_graph(char_tokenizer):
    context = "The cat sat.\nThe dog   barked.\nThe bird sang."
    graph = {"nodes": [{"id": "e1", "kind": "evidence"}, {"id": "s1", "kind": "step"}, {"id": "s2", "kind": "step"},
                       {"id": "ans", "kind": "answer"}], "edges": [["e1", "s1"], ["s1", "s2"], ["s2", "ans"]]}
    record = {"id": "g1", "context": context, "prompt": f"Read this.\n\n{context}\n\nQuestion?",
              # a quote with its white space folded, and a span
              "evidence": ["The dog barked.", {"start": 31, "end": 45}], "reasoning_graph": graph}
    got = _measure("generic", record, char_tokenizer)
    # 17 + 14 of 45 characters; of the 14 others, the one newline between the two spans lies inside
    _both_units(got, 31 / 45, 1 / 14, 45)
    assert (got["reasoning_depth"], got["reasoning_width"], got["step_count"]) == (2, 1, 2)


@pytest.mark.parametrize("evidence, message", [
    (["The"], "occurs more than once"),
    (["The horse ran."], "is not in the context (even with white space folded)"),
    ([{"start": 3, "end": 99}], "span [3, 99) is not inside the 14-character context"),
    ([], "evidence: missing or empty"),
])
def test_generic_evidence_that_cannot_be_located_is_a_clear_error(evidence, message, char_tokenizer):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("[", r"\[").replace(")", r"\)")):
        _measure("generic", {"context": "The a. The b. ", "evidence": evidence}, char_tokenizer)


def test_the_adapter_names_are_the_adapters():
    assert tuple(sorted(ADAPTERS)) == ADAPTER_NAMES


def test_the_command_writes_one_line_per_item_and_names_the_errors(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text("\n".join(json.dumps(r) for r in [
        {"id": "ok", "context": "abc def ghi", "evidence": [{"start": 0, "end": 3}, {"start": 8, "end": 11}]},
        {"id": "lost", "context": "One. Two.", "evidence": ["Four."]},
    ]) + "\n")
    out = tmp_path / "props.jsonl"
    done = subprocess.run([LURCH, "properties", str(items), "--out", str(out), "--quiet"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows[0]["id"] == "ok" and rows[0]["evidence_scope_chars"] == pytest.approx(6 / 11)
    assert rows[0]["tokenizer"] == "cl100k_base" and rows[0]["reasoning_depth"] is None
    assert rows[1] == {"id": "lost", "error": "evidence 1: 'Four.' is not in the context (even with white space "
                                              "folded)"}
    assert "lurch: warning: items.jsonl:2 (lost): evidence 1" in done.stderr
    assert "1 of 2 items measured" in done.stdout
    again = subprocess.run([LURCH, "properties", str(items), "--out", str(out)], capture_output=True, text=True,
                           timeout=300)
    assert again.returncode == 2 and again.stderr.strip().endswith("exists; allowed: a new file, or --overwrite to "
                                                                   "replace it")


def test_our_materialized_rows_measure_as_stored(tmp_path):
    """Every default config's rows through `lurch properties --adapter lurch`: the token and character measures and
    the graph's depth, width and step count equal the stored ones exactly, in every family."""
    from lurch_tasks.core.registry import all_tasks

    configs = sorted({task.stored_as or task.name for task in all_tasks() if task.in_suite})
    data = tmp_path / "data"
    args = [arg for name in configs for arg in ("--config", name)]
    done = subprocess.run([LURCH, "materialize", "--quiet", "--limit", "3", "--out", str(data), *args],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    import datasets

    compared = 0
    for name in configs:
        out = tmp_path / f"{name}.jsonl"
        done = subprocess.run([LURCH, "properties", str(data / name), "--adapter", "lurch", "--out", str(out),
                               "--quiet"], capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        measured = {row["id"]: row for row in map(json.loads, out.read_text().splitlines())}
        stored = datasets.load_dataset("parquet", data_files=[str(p) for p in (data / name).glob("*.parquet")],
                                       split="train")
        for row in stored:
            got = measured[row["id"]]
            fields = ["context_tokens", "context_chars", "evidence_scope", "evidence_dispersion",
                      "evidence_scope_chars", "evidence_dispersion_chars", "reasoning_depth", "reasoning_width",
                      "step_count"]
            assert {f: got[f] for f in fields} == {f: row["difficulty"][f] for f in fields}, (name, row["id"])
            compared += 1
    assert compared == 3 * len(configs)


@pytest.mark.parametrize("name", [n for n in ADAPTER_NAMES if n != "lurch"])
def test_every_shipped_sample_measures_completely(name, tmp_path):
    out = tmp_path / "out.jsonl"
    done = subprocess.run([LURCH, "properties", f"sample:{name}", "--out", str(out), "--quiet"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0 and "with an error" not in done.stdout, done.stdout + done.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows and all("error" not in row and 0 < row["evidence_scope"] < 1 for row in rows)


def test_the_progress_bar_never_replaces_a_row():
    """tqdm's update() returns True when it redraws: the rows must pass through whatever it returns."""
    from lurch_tasks.cli import _counted

    class Redrawing:
        def __init__(self):
            self.ticks = 0

        def update(self):
            self.ticks += 1
            return True

    bar = Redrawing()
    rows = [{"id": "a"}, {"id": "b"}]
    assert list(_counted(iter(rows), bar)) == rows and bar.ticks == 2
