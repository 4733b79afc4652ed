"""Reasoning removed before any answer is parsed (issue 28): every family's ``score`` calls ``strip_reasoning``
once, then parses only what it returns, and reports ``truncated`` / ``unparsed`` (``reasoning_metrics``).

What counts as reasoning:
  * ``<think>…</think>``, ``<thinking>…</thinking>``, ``<reasoning>…</reasoning>`` (any case, nested or mixed),
    wherever they stand; the text outside them is the answer;
  * a closing tag with no opening one (``</think>`` alone: the chat template put ``<think>`` in the prompt, as
    Qwen3 and DeepSeek-R1 templates do): everything before it was thinking;
  * an opening tag never closed: the output ended while thinking, so nothing after it is an answer and the doc
    is ``truncated``;
  * gpt-oss's harmony channels: only the text after the last ``<|channel|>final<|message|>`` is the answer;
  * ``think_end_token`` (a doc's, stamped by the harness from lm-eval's model argument of the same name): the
    text after its last occurrence, as lm-eval's ``postprocess_generated_text`` keeps it; an output without it is
    kept whole (a model that did not think, or lm-eval already stripped it).

A reasoning field that an API returns apart from the text (``reasoning_content``) never reaches a task under
lm-eval 0.4.13: ``local-chat-completions`` reads ``message.content`` only, and a null content (the model spent its
budget thinking) arrives as ``LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER`` (default ``""``). So an empty output, or that
placeholder, is ``truncated``: nothing was answered. So is an output with no readable answer that used the whole
generation budget (``gen_budget``, stamped on the doc by the harness: the run's ``max_gen_toks``), counted in the
doc's tokenizer: it was cut off, whatever it was doing. Linear in the output length; never raises.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace

__all__ = ["Stripped", "doc_think_end_token", "reasoning_metrics", "states_empty_answer", "strip_doc_output",
           "strip_reasoning"]

# a tag may carry attributes (``<think type="x">``) but no other words: "<thinking is hard>" is prose
_TAG = re.compile(r"<[ \t]*+(/?)[ \t]*+(?:think|thinking|reasoning)"
                  r"(?:[ \t]++[\w-]{1,40}=(?:\"[^\"<>\n]{0,100}\"|'[^'<>\n]{0,100}'|[^\s\"'<>]{1,100}))*+[ \t]*+>",
                  re.IGNORECASE)
_HARMONY_FINAL = "<|channel|>final<|message|>"
_HARMONY_ANALYSIS = "<|channel|>analysis<|message|>"


@dataclass(frozen=True)
class Stripped:
    answer: str  # the text a family parses
    truncated: bool  # the output ended inside reasoning, or holds nothing at all (an API's null content)
    at_budget: bool = False  # the output is as long as the run's generation budget (``gen_budget``)


def _placeholder() -> str:
    # read per call: lm-eval reads the same variable when it fills a null content
    return os.environ.get("LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER", "")


def strip_reasoning(output: object, think_end_token: str | None = None) -> Stripped:
    """The answer part of ``output`` and whether the output ended while thinking (module docstring)."""
    text = output if isinstance(output, str) else ("" if output is None else str(output))
    if not text.strip() or text == _placeholder():
        return Stripped("", True)
    if think_end_token and think_end_token in text:
        text = text.rsplit(think_end_token, 1)[1]
    if _HARMONY_FINAL in text:
        text = text.rsplit(_HARMONY_FINAL, 1)[1]
    elif _HARMONY_ANALYSIS in text:
        return Stripped("", True)  # analysis channel opened, final channel never reached
    kept: list[str] = []
    depth, start = 0, 0
    for tag in _TAG.finditer(text):
        closing = bool(tag.group(1))
        if depth == 0:
            kept.append(text[start:tag.start()])
        if not closing:
            depth += 1
        elif depth:
            depth -= 1
        else:
            kept = []  # a closing tag without its opening one: all before it was thinking
        start = tag.end()
    if depth:
        return Stripped("".join(kept).strip(), True)
    kept.append(text[start:])
    return Stripped("".join(kept).strip(), False)


def reasoning_metrics(stripped: Stripped, readable: bool) -> dict[str, float]:
    """``truncated`` and ``unparsed`` (0/1) of one doc: ``readable`` is whether the family's parser found an answer
    (an explicit abstention is readable) in ``stripped.answer``; an unreadable output that filled the generation
    budget was cut off (``truncated``)."""
    truncated = stripped.truncated or (stripped.at_budget and not readable)
    return {"truncated": float(truncated), "unparsed": float(not readable)}


def doc_think_end_token(doc: dict) -> str | None:
    """The doc's ``think_end_token`` (stamped by the harness from the lm-eval model argument), if any."""
    token = doc.get("think_end_token")
    return token if isinstance(token, str) and token else None


def strip_doc_output(doc: dict, output: object) -> Stripped:
    """``strip_reasoning`` with the doc's own ``think_end_token``: the one call every family's ``score`` makes; it
    also says whether the output filled the doc's ``gen_budget``."""
    stripped = strip_reasoning(output, doc_think_end_token(doc))
    budget = doc.get("gen_budget")
    if isinstance(output, str) and isinstance(budget, int) and not isinstance(budget, bool) and budget > 0:
        stripped = replace(stripped, at_budget=fills_budget(output, budget, _doc_tokenizer(doc)))
    return stripped


# An output stopped by max_gen_toks holds that many of the model's tokens; counted in the doc's tokenizer (another
# one unless the run passed the model's) the count can differ by several percent, so "filled" is 90% of the budget.
BUDGET_SHARE = 0.9


def fills_budget(output: str, budget: int, tokenizer: str | None) -> bool:
    """Whether ``output`` is as long as a ``budget``-token generation, counted in ``tokenizer`` (the tokenizer the
    doc was budgeted in, the model's when the run passed it). Every token of a byte-level tokenizer covers at least
    one byte, so a shorter output is never counted."""
    floor = BUDGET_SHARE * budget
    if len(output.encode("utf-8")) < floor:
        return False
    from ..core.tokens import get_token_counter

    try:
        counter = get_token_counter(tokenizer) if tokenizer else None
    except (OSError, ValueError):  # a tokenizer this machine cannot load: judge by bytes alone
        counter = None
    return counter is None or counter.count(output) >= floor


def _doc_tokenizer(doc: dict) -> str | None:
    import json

    try:
        tokenizer = json.loads(doc.get("params") or "{}").get("tokenizer")
    except (json.JSONDecodeError, AttributeError):
        return None
    return tokenizer if isinstance(tokenizer, str) and tokenizer else None


_EMPTY_ANSWER = re.compile(r"\b(?:none|nothing|no (?:one|connections?|pairs?|edges?|links?|names?|answer)|not found)\b"
                           r"|\[\s*\]", re.IGNORECASE)


# an answer line with nothing after it, ending the output ("CONNECTIONS:" and no pair): an explicit empty list
_EMPTY_ANSWER_LINE = re.compile(r"\b(?:connections|final answer|answer)[ \t]*:\s*\Z", re.IGNORECASE)


def states_empty_answer(answer: str) -> bool:
    """True when a list answer that gave no items says so (``none``, ``NOT FOUND``, ``[]``, or its answer line
    left empty at the end): an empty answer that was read, not an unreadable one."""
    tail = answer[-4_000:]
    return bool(_EMPTY_ANSWER.search(tail) or _EMPTY_ANSWER_LINE.search(tail))
