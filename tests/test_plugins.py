"""Families are discovered through the `lurch_tasks.families` entry-point group: the core knows no family, and
a third-party package adds one without touching this repository."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import lurch_tasks

TINY_FAMILY = '''
"""A third-party family: the context states a secret word; the question asks for it."""
import json
from dataclasses import dataclass
from typing import NamedTuple

from lurch_tasks.core.cells import setup_instance
from lurch_tasks.core.instance import Instance, instance_id
from lurch_tasks.core.registry import Family, Task, register_family, register_task
from lurch_tasks.core.rng import StableRng
from lurch_tasks.core.shortcuts import Probe, Shortcut
from lurch_tasks.core.vocab import load_words
from lurch_tasks.scoring import parse_final_answer, score_items

VOCABULARY = ("english_words.txt",)


class Cell(NamedTuple):
    filler: int


@dataclass(frozen=True)
class EchoConfig:
    num_samples: int = 2

    def cells(self):
        return [Cell(3), Cell(5)]

    def size(self):
        return len(self.cells()) * self.num_samples


def generate(config, seed, split, index, name):
    setup = setup_instance("tiny_echo", config, VOCABULARY, seed, split, index)
    word = StableRng(setup.rng_seed).choice(load_words(VOCABULARY[0]))
    context = "Filler line.\\n" * setup.cell.filler + f"The secret word is {word}."
    question = "What is the secret word? Finish with FINAL ANSWER: <word>"
    start = context.index("The secret")
    return Instance(
        id=instance_id(name, split, index, "tiny_echo"), family="tiny_echo", task=name, config_name=name,
        split=split, index=index, seed=seed, family_version="0.1.0", config_hash=setup.config_hash,
        source_hash=setup.source_hash, context=context, question=question, prompt=context + "\\n\\n" + question,
        answer_format="entity", answer=json.dumps(word), answer_text=word, options=[], answer_items=[word],
        evidence=[{"start": start, "end": len(context), "token_start": 0, "token_end": 1}],
        reasoning_graph={"nodes": [{"id": "e", "kind": "evidence", "text": "x"},
                                   {"id": "s", "kind": "step", "text": "read"},
                                   {"id": "a", "kind": "answer", "text": word}],
                         "edges": [["e", "s"], ["s", "a"]]},
        difficulty={"context_tokens": 1, "context_chars": len(context), "target_tokens": 0, "prompt_tokens": 1,
                    "evidence_scope": 0.1, "evidence_dispersion": 0.0, "evidence_scope_chars": 0.1,
                    "evidence_dispersion_chars": 0.0, "reasoning_depth": 1},
        params=json.dumps({"cell": setup.cell._asdict()}), pair_key=setup.pair_key,
    )


def score(doc, output):
    items = score_items(doc["answer_items"], [p] if (p := parse_final_answer(output)) else [])
    return {"score": float(items.tp == 1 and items.fp == 0), "memory_drift": items.memory_drift,
            "precision": items.precision, "recall": items.recall, "f1": items.f1}


def solve(prompt):
    return "FINAL ANSWER: " + prompt.split("The secret word is ")[1].split(".")[0]


register_family(Family(
    name="tiny_echo", version="0.1.0", config_type=EchoConfig, generate=generate, audit=lambda row: [],
    solve=solve, guess=lambda prompt, seed: "FINAL ANSWER: nothing", score=score,
    bin_keys=lambda doc: {}, bin_names=lambda config: [], group="tiny_echo_suite", source_files=VOCABULARY,
    citation="@misc{tiny}", description="A third-party test family.",
    shortcuts=(Shortcut("first_word", "position", "the first word", lambda prompt, _: "FINAL ANSWER: Filler"),),
    probes=(Probe("none", "length", "nothing", lambda row: []),),
))
register_task(Task("tiny_echo", "tiny_echo", EchoConfig(), "the secret word"))
'''

CHECK = '''
import json
from lurch_tasks.core.generation import generate_row, resolve_task
from lurch_tasks.core.registry import all_families, get_family
from lurch_tasks.core.shortcuts import audit_task
row = generate_row(resolve_task("tiny_echo"), 1)
family = get_family("tiny_echo")
print(json.dumps({
    "families": [f.name for f in all_families()],
    "solved": family.score(row, family.solve(row["prompt"]))["score"],
    "audit_passed": audit_task(resolve_task("tiny_echo")).passed,
}))
'''


def _plugin_dir(tmp_path: Path) -> Path:
    """A minimal installed distribution: a module plus dist-info metadata declaring the entry point."""
    (tmp_path / "tiny_lurch_family.py").write_text(textwrap.dedent(TINY_FAMILY), encoding="utf-8")
    info = tmp_path / "tiny_lurch_family-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tiny-lurch-family\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[lurch_tasks.families]\ntiny_echo = tiny_lurch_family\n", encoding="utf-8")
    return tmp_path


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(_plugin_dir(tmp_path)), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env)


def test_a_third_party_family_registers_through_its_entry_point(tmp_path):
    result = _run(tmp_path, "-c", CHECK)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert {"find_the_origin", "graph_reconstruction", "tiny_echo"} <= set(report["families"])
    assert report["solved"] == 1.0 and report["audit_passed"]


def test_the_cli_lists_and_generates_the_plugin_family(tmp_path):
    listed = _run(tmp_path, "-m", "lurch_tasks.cli", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert "tiny_echo" in {row["name"] for row in json.loads(listed.stdout)}


def test_the_core_imports_no_family():
    core = Path(lurch_tasks.__file__).parent / "core"
    for path in sorted(core.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(from|import)\s+[.\w]*families", text, re.MULTILINE), path.name
