"""The graph reconstruction prompt: instructions, profiles, the request, and the answer format."""

from __future__ import annotations

import re

from ...core.registry import RagUnits

PROFILE_SEPARATOR = "\n\n"
CONTEXT_HEADER = "Profiles:"
ANSWER_MARKER = "CONNECTIONS:"
_PROFILE_NAME = re.compile(r"^([A-Z][^:\n]{1,60}): ", re.MULTILINE)

_LINK_RULES = (
    "Two people are connected when their profiles share one specific detail: the same phone number, the same "
    "vehicle plate, the same bank account, the same named event (same name, place and date), the same flight "
    "(same flight number and date), or membership of the same named group. Details must match exactly: a number "
    "that differs by one digit, or an event or flight on another date, is not a match. Living in the same city, "
    "holding the same nationality or working for the same employer does NOT make people connected."
)
_TASK_HINTS = {
    "edge": "The connections come in separate pairs.",
    "subgraph": "The connections form small star-shaped clusters: one person linked to several others.",
    "clique": "The connections form small groups in which everyone is connected to everyone else. You may write "
    "such a group on one line, as in: Name A, Name B, Name C.",
}
_FORMAT = "one connection per line in the form: Name A -- Name B"
_STYLES = {
    "regular": f"List every connection, {_FORMAT}. Write nothing else.",
    "cot": "Think step by step about which profiles share a detail. Then write a line with "
    f"{ANSWER_MARKER} and, below it, {_FORMAT}.",
    "cot_expanded": "Work in steps. First, for each person, note the specific details in the profile (phone "
    "numbers, plates, bank accounts, named events with place and date, flights with date, named groups). "
    "Second, compare these details across all profiles and note every exact match. Third, check each match "
    f"against the rules above and drop near misses. Finally write a line with {ANSWER_MARKER} and, below it, "
    f"{_FORMAT}.",
}


def render_instructions(num_people: int) -> str:
    return (f"Below are intelligence profiles of {num_people} people. {_LINK_RULES}")


def render_question(task: str, style: str) -> str:
    return f"{_TASK_HINTS[task]} {_STYLES[style]}"


def prompt_head(num_people: int) -> str:
    """Everything before the context (which starts at ``len(prompt_head(n))``)."""
    return f"{render_instructions(num_people)}\n\n{CONTEXT_HEADER}\n"


def render_prompt(context: str, num_people: int, question: str) -> str:
    return f"{prompt_head(num_people)}{context}\n\n{question}"


def split_prompt(prompt: str) -> list[str]:
    """The profile paragraphs of a rendered prompt."""
    _, _, body = prompt.partition(f"\n{CONTEXT_HEADER}\n")
    body, _, _ = body.rpartition("\n\n")
    return body.split(PROFILE_SEPARATOR) if body else []


def profile_name(paragraph: str) -> str | None:
    match = _PROFILE_NAME.match(paragraph)
    return match.group(1) if match else None


def render_for_rag(doc: dict, context: str) -> str:
    """The doc's prompt with ``context`` (some of its units, in context order) in place of its own (`lurch-rag`)."""
    return render_prompt(context, int(doc["difficulty"]["num_people"]), doc["question"])


RAG_UNITS = RagUnits("\n\n", render_for_rag)  # a unit: one person's profile (a paragraph)
