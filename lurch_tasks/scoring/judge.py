"""An optional LLM judge for free-form answers, through any OpenAI-compatible chat-completions endpoint.

The default path never needs it: free form is graded by key facts (``scoring.keyfacts``), deterministically and
offline. ``lurch report --judge base_url=...,model=...`` re-scores free-form answers with a judge as well, for
users who want the paper's protocol (it used two judges and averaged their binary verdicts); the report shows
both grades and how often they agree. The judge is asked for one word, CORRECT or INCORRECT; anything else is
no verdict (None), never a crash.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

SYSTEM_PROMPT = (
    "You grade answers to questions about an investigation's case file. You get the question, the expected "
    "answer (derived from the case's structure) with the facts a correct answer must state, and a student's "
    "answer. The student's answer is CORRECT when it states those facts and does not assert anything that "
    "contradicts the expected answer; different wording, extra explanation and a different order are fine. It is "
    "INCORRECT when a required fact is missing or wrong, when it hedges between alternatives, or when it declines "
    "to answer. Reply with exactly one word: CORRECT or INCORRECT."
)
_VERDICT = re.compile(r"\b(INCORRECT|CORRECT)\b", re.IGNORECASE)
KEYS = ("base_url", "model", "api_key_env", "timeout", "max_tokens")


@dataclass(frozen=True)
class JudgeConfig:
    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"  # the environment variable holding the key (none needed on loopback)
    timeout: float = 60.0
    max_tokens: int = 8


def parse_judge_spec(spec: str) -> JudgeConfig:
    """``base_url=http://127.0.0.1:8080/v1,model=NAME[,api_key_env=VAR,timeout=S,max_tokens=N]``."""
    fields: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        key, sep, value = part.partition("=")
        if not sep or key not in KEYS:
            raise ValueError(f"--judge: {part!r} is not allowed; allowed: key=value with key in {', '.join(KEYS)}")
        fields[key] = value
    for required in ("base_url", "model"):
        if not fields.get(required):
            raise ValueError(f"--judge: {required} is missing; allowed: base_url=URL,model=NAME[,...]")
    if not re.match(r"^https?://", fields["base_url"]):
        raise ValueError(f"--judge: base_url {fields['base_url']!r} is not an http(s) URL")
    try:
        return JudgeConfig(fields["base_url"].rstrip("/"), fields["model"], fields.get("api_key_env", "OPENAI_API_KEY"),
                           float(fields.get("timeout", 60)), int(fields.get("max_tokens", 8)))
    except ValueError as error:
        raise ValueError(f"--judge: timeout and max_tokens must be numbers ({error})") from None


def judge_messages(question: str, reference: str, key_facts: list[str], answer: str) -> list[dict]:
    facts = "; ".join(key_facts) if key_facts else "(see the expected answer)"
    user = (f"Question: {question}\n\nExpected answer: {reference}\nFacts a correct answer states: {facts}\n\n"
            f"Student answer: {answer.strip() or '(empty)'}\n\nVerdict (CORRECT or INCORRECT):")
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def parse_verdict(text: object) -> float | None:
    """1.0 for CORRECT, 0.0 for INCORRECT (the first of the two named), None for anything else."""
    match = _VERDICT.search(text if isinstance(text, str) else "")
    if match is None:
        return None
    return 1.0 if match.group(1).upper() == "CORRECT" else 0.0


def ask_judge(config: JudgeConfig, question: str, reference: str, key_facts: list[str], answer: str
              ) -> float | None:
    """One verdict from the endpoint; None when it fails or says neither word (the report counts those)."""
    import requests

    headers = {"Content-Type": "application/json"}
    key = os.environ.get(config.api_key_env)
    if key:
        headers["Authorization"] = f"Bearer {key}"
    body = {"model": config.model, "messages": judge_messages(question, reference, key_facts, answer),
            "temperature": 0, "max_tokens": config.max_tokens}
    try:
        reply = requests.post(f"{config.base_url}/chat/completions", json=body, headers=headers,
                              timeout=config.timeout)
        reply.raise_for_status()
        return parse_verdict(reply.json()["choices"][0]["message"]["content"])
    except (requests.RequestException, ValueError, KeyError, IndexError, TypeError):
        return None
