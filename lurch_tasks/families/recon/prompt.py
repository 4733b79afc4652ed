"""The RECON prompt: instructions, the case file (narrative or JSON entries, or none), the question, its
options (or items to order) and the answer line of its format, which states the scoring and the abstain."""

from __future__ import annotations

import re

from ...core.registry import RagUnits

LETTERS = "ABCDEF"
ORDER_LETTERS = "ABCDEFGHIJKLMNOP"  # an ordering lists every item of a trail (up to 15)
ABSTAIN = "ABSTAIN"
RULES = (
    "Later entries can withdraw an earlier finding; a withdrawn finding no longer supports anything that rested "
    "on it, though a conclusion may still stand on other findings. Where two accounts disagree, a record from one "
    "of the data streams settles it. An action that awaits a result can only go ahead once that result is in."
)
HEADS = {
    "narrative": "The case file below is the log of one {domain} investigation: timestamped entries, each headed "
                 "[Day, time] [entry type] [author], from Day 1 to Day 30. " + RULES + "\n\nCase file:\n",
    "oracle": "The case file below is the log of one {domain} investigation as JSON entries, one per line, from "
              "Day 1 to Day 30. " + RULES + "\n\nCase file:\n",
    "closedbook": "The question below is about one {domain} investigation whose case file is not shown. " + RULES
                  + "\n\n",
}
_UNSETTLED = "If the case file does not settle the question, answer ABSTAIN"
ANSWER_LINES = {
    "mcq_single": (f"Choose the one correct option. {_UNSETTLED} (a wrong choice costs a fifth of a point, abstaining "
                   f"costs nothing). Finish with one line of the form ANSWER: <letter> (or ANSWER: {ABSTAIN})."),
    "mcq_multi": (f"Choose every correct option (at least one, not all). {_UNSETTLED}: each correct choice adds, each "
                  "wrong one subtracts. Finish with one line of the form ANSWER: <letters separated by commas> (or "
                  f"ANSWER: {ABSTAIN})."),
    "integer": (f"Give the exact number. {_UNSETTLED} rather than guess. Finish with one line of the form ANSWER: "
                f"<number> (or ANSWER: {ABSTAIN})."),
    "ordering": (f"Put every item in order, each letter once. {_UNSETTLED} rather than give a partial or guessed "
                 "order; a reversed order scores lowest. Finish with one line of the form ANSWER: <letters in order, "
                 f"separated by commas> (or ANSWER: {ABSTAIN})."),
    "free_form": (f"Answer in two or three sentences, using only the case file. {_UNSETTLED}. Finish with one line "
                  f"of the form ANSWER: <your two or three sentences> (or ANSWER: {ABSTAIN})."),
}
ANSWER_LINE = ANSWER_LINES["mcq_single"]
LIST_HEADERS = {"mcq_single": "Options:", "mcq_multi": "Options:", "ordering": "Items:"}


def prompt_head(variant: str, domain: str) -> str:
    """Everything before the context (which starts at ``len(prompt_head(...))``)."""
    return HEADS[variant].format(domain=domain)


def letters_for(answer_format: str) -> str:
    return ORDER_LETTERS if answer_format == "ordering" else LETTERS


def render_question(text: str, options: tuple[str, ...], answer_format: str = "mcq_single") -> str:
    listed = ""
    if options:
        lines = "\n".join(f"{letter}) {option}" for letter, option in zip(letters_for(answer_format), options,
                                                                         strict=False))
        listed = f"{LIST_HEADERS[answer_format]}\n{lines}\n"
    return f"Question: {text}\n{listed}{ANSWER_LINES[answer_format]}"


def format_of(prompt: str) -> str | None:
    """The answer format a prompt asks for (its closing answer line), or None."""
    found = [(prompt.rfind(line), name) for name, line in ANSWER_LINES.items() if line in prompt]
    return max(found)[1] if found else None


QUESTION_SEPARATOR = "\n\n"  # between the context and the question


def render_prompt(variant: str, domain: str, context: str, question: str) -> str:
    separator = QUESTION_SEPARATOR if context else ""
    return f"{prompt_head(variant, domain)}{context}{separator}{question}"


def render_for_rag(doc: dict, context: str) -> str:
    """The doc's prompt with ``context`` (some of its units, in context order) in place of its own (`lurch-rag`)."""
    return render_prompt(doc["difficulty"]["variant"], doc["difficulty"]["domain"], context, doc["question"])


_HEADER = re.compile(r"\[Day \d+, \d\d:\d\d\] \[[^\]]+\] \[[^\]]+\]")


def entry_header(line: str) -> str | None:
    """An entry's composite header, ``[Day X, HH:MM] [TYPE] [AUTHOR]``: the anchor RECON's paper looks for verbatim
    in a system's context to decide that a gold entry was retrieved."""
    found = _HEADER.match(line)
    return found.group(0) if found else None


RAG_UNITS = RagUnits("\n", render_for_rag, entry_header)  # a unit: one case-file entry (a line)
