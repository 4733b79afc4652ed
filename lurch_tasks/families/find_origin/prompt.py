"""The Find the Origin prompt: one plain line template, an instruction block and the question."""

from __future__ import annotations

import re

from ...core.registry import RagUnits

LINE_TEMPLATE = '"{0}" is linked to "{1}"'
_LINE = re.compile(r'^"([^"\n]+)" is linked to "([^"\n]+)"$')
_QUESTION = re.compile(r'What is the origin of "([^"\n]+)"\?')

INSTRUCTIONS = (
    "Each line of the list below links one word to another, written as \"A\" is linked to \"B\". "
    "Links form chains: if the list contains\n"
    '"P" is linked to "Q"\n'
    '"Q" is linked to "R"\n'
    'then "P" leads to "Q" and "Q" leads to "R", so the origin of "R" is "P": the word at the start of '
    "its chain, which no line links to. The words are only labels for the vertices of these chains; "
    "their meanings play no part."
)
CONTEXT_HEADER = "List of links:"
ANSWER_INSTRUCTION = "Reason step by step, then finish with a line of the form FINAL ANSWER: <word>"


def render_line(source: str, target: str) -> str:
    return LINE_TEMPLATE.format(source, target)


def render_lines(sources: list[str], targets: list[str]) -> list[str]:
    """``render_line`` of every pair: LINE_TEMPLATE written as an f-string, 2.5x faster than ``str.format`` on the
    thousands of lines of a long list (a test checks that both write the same line)."""
    return [f'"{source}" is linked to "{target}"' for source, target in zip(sources, targets, strict=True)]


def line_parts(source: str, target: str) -> tuple[str, str]:
    """A line followed by its newline, cut before the target word, where byte-level BPE tokenizers split it
    too: the cost of a line is then the cost of its source part plus that of its target part, each cached
    per word (an estimate; the final prompt is counted exactly)."""
    return f'"{source}" is linked to "', f'{target}"\n'


def parse_line(line: str) -> tuple[str, str] | None:
    match = _LINE.match(line)
    return (match.group(1), match.group(2)) if match else None


def render_question(destination: str) -> str:
    return f'What is the origin of "{destination}"? {ANSWER_INSTRUCTION}'


def parse_question(text: str) -> str | None:
    matches = _QUESTION.findall(text)
    return matches[-1] if matches else None


PROMPT_HEAD = f"{INSTRUCTIONS}\n\n{CONTEXT_HEADER}\n"  # the context starts at len(PROMPT_HEAD)


def render_prompt(context: str, question: str) -> str:
    return f"{PROMPT_HEAD}{context}\n\n{question}"


def context_lines(prompt: str) -> list[str]:
    """The list lines of a rendered prompt (everything between the header and the question)."""
    _, _, body = prompt.partition(f"\n{CONTEXT_HEADER}\n")
    body, _, _ = body.rpartition("\n\n")
    return body.split("\n") if body else []


def render_for_rag(doc: dict, context: str) -> str:
    """The doc's prompt with ``context`` (some of its units, in context order) in place of its own (`lurch-rag`)."""
    return render_prompt(context, doc["question"])


RAG_UNITS = RagUnits("\n", render_for_rag)  # a unit: one link line
