"""The RECON prompt: instructions, the case file (narrative or JSON entries, or none), the question, six options
and the answer line."""

from __future__ import annotations

LETTERS = "ABCDEF"
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
ANSWER_LINE = (f"Choose the one correct option. If the case file does not settle the question, answer {ABSTAIN}. "
               f"Finish with one line of the form ANSWER: <letter> (or ANSWER: {ABSTAIN}).")


def prompt_head(variant: str, domain: str) -> str:
    """Everything before the context (which starts at ``len(prompt_head(...))``)."""
    return HEADS[variant].format(domain=domain)


def render_question(text: str, options: tuple[str, ...]) -> str:
    lines = "\n".join(f"{letter}) {option}" for letter, option in zip(LETTERS, options, strict=True))
    return f"Question: {text}\nOptions:\n{lines}\n{ANSWER_LINE}"


def render_prompt(variant: str, domain: str, context: str, question: str) -> str:
    separator = "\n\n" if context else ""
    return f"{prompt_head(variant, domain)}{context}{separator}{question}"
