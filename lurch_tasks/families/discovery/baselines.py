"""Reference solver (reads only the prompt: the clue's key, the ciphertext, the directive, the module's slow
functions) and the chance baseline."""

from __future__ import annotations

import hashlib
import re

from ...core.rng import StableRng, derive_seed
from .cipher import decrypt_word, read_clue
from .directive import quoted, read_directive
from .prompt import is_ours, module_source, paragraphs, prompt_text
from .review import function_names, slow_functions

_CIPHER_LINE = re.compile(r"^[a-z]+(?: [a-z]+)*$")


def cipher_line(prompt: str) -> str | None:
    """The paragraph of lowercase letters only: the ciphertext (None when there is none)."""
    return next((p for p in paragraphs(prompt) if _CIPHER_LINE.match(p)), None)


def solve(prompt: str) -> str | None:
    if not is_ours(prompt):
        return None
    source = module_source(prompt)
    if source is not None:
        return review_answer(source)
    text = prompt_text(prompt)
    statement = read_directive(text)
    if statement is not None:
        return statement
    key, line = read_clue(text), cipher_line(prompt)
    if key is None or line is None:
        return None
    message = " ".join(decrypt_word(word, key) for word in line.split())
    return f"The clue gives the key; the hidden line decodes to these words.\nFINAL ANSWER: {message}"


def review_answer(source: str) -> str | None:
    found = slow_functions(source)
    if not found:
        return None
    lines = [f"- {name}: {'; '.join(reasons)}" for name, reasons in found]
    return "\n".join(["These functions do work proportional to a whole input inside a loop:", *lines,
                      f"FINAL ANSWER: {', '.join(name for name, _ in found)}"])


def guess(prompt: str, seed: int) -> str | None:
    """A seeded uniform pick: one function of the module (code), one quoted statement of the text (directive), or
    one paragraph's words (cipher: the message is in no paragraph, so chance is 0)."""
    if not is_ours(prompt):
        return None
    rng = StableRng(derive_seed("guess", seed, hashlib.sha256(prompt.encode("utf-8")).hexdigest()))
    source = module_source(prompt)
    if source is not None:
        names = function_names(source)
        return f"FINAL ANSWER: {rng.choice(names)}" if names else None
    quotes = quoted(prompt_text(prompt))
    if quotes:
        return rng.choice(quotes)
    units = paragraphs(prompt)
    return f"FINAL ANSWER: {rng.choice(units)}" if units else None
