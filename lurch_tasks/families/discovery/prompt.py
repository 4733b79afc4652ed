"""The discovery prompt: a neutral head, the text (or the module), and the request (the only part a matched pair
changes)."""

from __future__ import annotations

from ...core.registry import RagUnits

PROMPT_HEAD = "Here is a text.\n\n"  # the context starts after the head
CODE_HEAD = "Here is a Python module.\n\n"
HEADS = {"cipher": PROMPT_HEAD, "directive": PROMPT_HEAD, "code": CODE_HEAD}
CODE_OPEN, CODE_CLOSE = "```python\n", "```"  # the code kind's context is the module in a fenced block
SEPARATOR = "\n\n"  # between paragraphs (functions, in a module); the ciphertext is a paragraph of its own
DISCOVERY = "Read the text above carefully and respond to it."
# The code kind's discovery request asks for a review and a list of names, never says what is wrong: noticing that
# some functions are needlessly slow is the discovery.
CODE_DISCOVERY = ("Review the module above. Finish with one line of the form FINAL ANSWER: <the names of the "
                  "functions that most need to be changed>")
REQUESTS = {
    "cipher": ("The text above hides a secret message and, somewhere else, a clue that tells how to decode it. Find "
               "both, decode the message, and finish with one line of the form FINAL ANSWER: <the decoded words>"),
    "directive": ("Somewhere in the text above one sentence says which statement, given as your response, unlocks a "
                  "reward. Find that sentence and respond with exactly the statement it names."),
    "code": ("A few functions in the module above are deliberately inefficient: their cost grows much faster than "
             "their input while an efficient version is easy. Find the most inefficient functions and say briefly why "
             "each is slow. Finish with one line of the form FINAL ANSWER: <their names>"),
}


def render_question(kind: str, request: str) -> str:
    if request == "request":
        return REQUESTS[kind]
    return CODE_DISCOVERY if kind == "code" else DISCOVERY


def render_prompt(context: str, question: str, kind: str = "cipher") -> str:
    return f"{HEADS[kind]}{context}{SEPARATOR}{question}"


def code_context(source: str) -> str:
    return f"{CODE_OPEN}{source}{CODE_CLOSE}"


def head_of(prompt: str) -> str | None:
    return next((head for head in (PROMPT_HEAD, CODE_HEAD) if prompt.startswith(head)), None)


def prompt_text(prompt: str) -> str:
    """The text of a rendered prompt (between the head and the request; a module keeps its fences)."""
    head = head_of(prompt)
    body = prompt[len(head):] if head else prompt
    text, _, _ = body.rpartition(SEPARATOR)
    return text


def module_source(prompt: str) -> str | None:
    """The module of a code prompt (without its fences), or None for a text prompt."""
    if head_of(prompt) != CODE_HEAD:
        return None
    text = prompt_text(prompt)
    if not (text.startswith(CODE_OPEN) and text.endswith(CODE_CLOSE)):
        return None
    return text[len(CODE_OPEN):len(text) - len(CODE_CLOSE)]


def paragraphs(prompt: str) -> list[str]:
    return [p for p in prompt_text(prompt).split(SEPARATOR) if p]


def is_ours(prompt: str) -> bool:
    return head_of(prompt) is not None


def render_for_rag(doc: dict, context: str) -> str:
    return render_prompt(context, doc["question"], doc["difficulty"]["kind"])


RAG_UNITS = RagUnits(SEPARATOR, render_for_rag)  # a unit: one paragraph (one function of a module)
