"""Scoring the discovery kinds from a free response (no answer format is asked for in discovery mode).

Cipher: the share of the message's words the response recovers, in any order (partial credit per word), less half
a word for every other made-up word it offers: a word of letters that is neither English, nor in the text, nor
in the message. So pasting every Caesar shift of the ciphertext (25 wrong decodings per right one) scores 0,
while prose around the decoded words and quoting the ciphertext cost nothing.
Directive: 1 when the response contains the statement (case, spacing and punctuation aside) and none of the
decoy statements, else 0: answering with every quote in the text scores 0.
Code: the module's function names the answer mentions (the text after the last ``FINAL ANSWER`` marker when there
is one, else the whole response), scored as (right names - wrong names) / planted names, at least 0: every wrong
name cancels a right one. F1 would pay for listing the whole module (0.4 for 12 functions, 3 of them planted) or
every function that calls ``sum`` or tests membership; precision, recall and F1 are reported beside it.
"""

from __future__ import annotations

import json
import re

from ...scoring import score_items
from ...scoring.bounds import bounded_output
from .code import mentioned_names
from .words import MIN_LETTERS, english

_WORD = re.compile(r"[A-Za-z]+")
_DEF = re.compile(r"^def ([A-Za-z_][A-Za-z0-9_]*)\(", re.MULTILINE)
_FINAL = re.compile(r"final[\s*_]*answer", re.IGNORECASE)
FP_WEIGHT = 0.5


def response_words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def score_cipher(doc: dict, output: str) -> dict[str, float]:
    gold = list(doc["answer_items"])
    known = english() | set(response_words(doc.get("context", "")))
    # the English list has no words shorter than a message word ("to", "of"): those are never made up
    offered = [w for w in dict.fromkeys(response_words(output))
               if w in gold or (len(w) >= MIN_LETTERS and w not in known)]
    items = score_items(gold, offered)
    value = max(0.0, (items.tp - FP_WEIGHT * items.fp) / len(gold)) if gold else 0.0
    return {"score": value, "memory_drift": items.memory_drift, "precision": items.precision,
            "recall": items.recall, "f1": items.f1}


def normalized(text: str) -> str:
    return " ".join(response_words(text))


def score_directive(doc: dict, output: str) -> dict[str, float]:
    gold = json.loads(doc["answer"])
    said = f" {normalized(output)} "
    hit = f" {normalized(gold['key_facts'][0])} " in said
    decoy = any(f" {normalized(d)} " in said for d in gold["contradicting"])
    value = float(hit and not decoy)
    return {"score": value, "memory_drift": 1.0 - value, "precision": value, "recall": float(hit), "f1": value}


def answer_region(output: str) -> str:
    """The text after the last FINAL ANSWER marker (any case, markdown around it), else the whole output."""
    text = bounded_output(output)
    markers = list(_FINAL.finditer(text))
    return text[markers[-1].end():] if markers else text


def score_code(doc: dict, output: str) -> dict[str, float]:
    names = _DEF.findall(doc.get("context", ""))
    items = score_items(doc["answer_items"], mentioned_names(answer_region(output), names))
    value = max(0.0, (items.tp - items.fp) / len(doc["answer_items"])) if doc["answer_items"] else 0.0
    return {"score": value, "memory_drift": items.memory_drift, "precision": items.precision,
            "recall": items.recall, "f1": items.f1}


SCORERS = {"cipher": score_cipher, "directive": score_directive, "code": score_code}


def score(doc: dict, output: str) -> dict[str, float]:
    kind = doc.get("difficulty", {}).get("kind") or json.loads(doc["params"])["config"]["kind"]
    return SCORERS[kind](doc, output)
