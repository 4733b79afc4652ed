"""Scoring the discovery kinds from a free response (no answer format is asked for in discovery mode).

Cipher: the share of the message's words the response recovers, in any order (partial credit per word), less half
a word for every other made-up word it offers: a word of letters that is neither English, nor in the text, nor
in the message. So pasting every Caesar shift of the ciphertext (25 wrong decodings per right one) scores 0,
while prose around the decoded words and quoting the ciphertext cost nothing.
Directive: 1 when the response contains the statement (case, spacing and punctuation aside) and none of the
decoy statements, else 0: answering with every quote in the text scores 0.
"""

from __future__ import annotations

import json
import re

from ...scoring import score_items
from .words import english

_WORD = re.compile(r"[A-Za-z]+")
FP_WEIGHT = 0.5


def response_words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def score_cipher(doc: dict, output: str) -> dict[str, float]:
    gold = list(doc["answer_items"])
    known = english() | set(response_words(doc.get("context", "")))
    offered = [w for w in dict.fromkeys(response_words(output)) if w in gold or w not in known]
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


def score(doc: dict, output: str) -> dict[str, float]:
    kind = doc.get("difficulty", {}).get("kind") or json.loads(doc["params"])["config"]["kind"]
    return score_directive(doc, output) if kind == "directive" else score_cipher(doc, output)
