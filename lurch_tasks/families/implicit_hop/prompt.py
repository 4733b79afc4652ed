"""The ImplicitHop prompt: instructions, the facts one per line, and the questions."""

from __future__ import annotations

from ...core.registry import RagUnits

INSTRUCTIONS = (
    "The facts below describe invented people, organisations, cities, regions and artefacts. Nothing about "
    "them is known outside this list, and every fact in it holds. Each of them has exactly one value for each "
    "relation a fact states: one employer, one former employer, one consulting client, one investment, one "
    "birthplace, one home city, one university city, one holiday city, one mentor, one rival, one best "
    "friend, one successor, one founder, one chair, one treasurer, one spokesperson, one head-office city, "
    "one branch city, one warehouse city, one factory city, one region, one main trading region, one "
    "water-supply region, one twin region, one creator, one keeper, one restorer, one owner."
)
CONTEXT_HEADER = "Facts:"
SINGLE_ANSWER = "Reason step by step, then finish with one line of the form FINAL ANSWER: <name>"
NUMBER_ANSWER = "Reason step by step, then finish with one line of the form FINAL ANSWER: <number>"
COMPARE_NOTE = "Give the name, not the year."
LIST_ANSWER = ("Answer every question. Reason step by step, then finish with one line that gives the answers in "
               "the order of the questions, separated by semicolons: FINAL ANSWER: <answer 1>; <answer 2>; ...")


def prompt_head() -> str:
    """Everything before the context (which starts at ``len(prompt_head())``)."""
    return f"{INSTRUCTIONS}\n\n{CONTEXT_HEADER}\n"


def ask(phrase: str, style: str) -> str:
    """One question: "What is the birthplace of the founder of X?" (nested) or the steps spelled out."""
    if style == "nested":
        return f"What is {phrase}?"
    return f"{phrase[0].upper()}{phrase[1:]}. Where do you arrive?"


def render_question(questions: list[str]) -> str:
    if len(questions) == 1:
        return f"Question: {questions[0]}\n{SINGLE_ANSWER}"
    numbered = "\n".join(f"{k}. {question}" for k, question in enumerate(questions, 1))
    return f"Questions:\n{numbered}\n{LIST_ANSWER}"


def render_prompt(context: str, question: str) -> str:
    return f"{prompt_head()}{context}\n\n{question}"


def item_phrase(phrase: str, style: str) -> str:
    """One branch as a list item of a joined question: the noun phrase itself, or the steps spelled out."""
    return phrase if style == "nested" else f"{phrase[0].upper()}{phrase[1:]}."


def render_joined(items: list[str], plural: str, closing: str, number: bool) -> str:
    """A question over several branches joined by one last step: "Consider these people: 1. ... 2. ...
    Which of them was born earliest?" (an entity) or "How many of them live in X?" (a number)."""
    numbered = "\n".join(f"{k}. {item}" for k, item in enumerate(items, 1))
    answer = NUMBER_ANSWER if number else f"{COMPARE_NOTE} {SINGLE_ANSWER}"
    return f"Question: Consider these {plural}:\n{numbered}\n{closing}\n{answer}"


def render_for_rag(doc: dict, context: str) -> str:
    """The doc's prompt with ``context`` (some of its units, in context order) in place of its own (`lurch-rag`)."""
    return render_prompt(context, doc["question"])


RAG_UNITS = RagUnits("\n", render_for_rag)  # a unit: one fact line
