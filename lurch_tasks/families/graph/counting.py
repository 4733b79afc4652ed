"""A graph prompt's tokens summed from its profiles' tokens, with no pass over the prompt.

In a tokenizer that cuts before every line break (``TokenCounter.newline_ends_piece``: cl100k, and GPT-2's
byte-level split as SmolLM2 and Llama-style tokenizers use it) the text after a newline that a non-whitespace
character follows is cut as a text of its own. Every profile starts with a name right after a newline and is
followed by a blank line and a name or the request, so a profile and its separator cost the same tokens wherever
the profile stands (``tables.in_prompt_tokens``), and a prompt costs its *frame* (instructions, request, chat
template; measured once per people count and request on a prompt of one profile) plus its profiles' costs. Where
GPT-2's split makes a newline a piece of its own, a profile that ended with whitespace would join it: such texts
take the measured path (``sums_exactly``). Tests compare the sums with a pass over the prompt.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ...core.budget import PromptEncoding, PromptMeter, prompt_meter
from ...core.tokens import CutsEncoded, TokenCounter
from .prompt import prompt_head, render_prompt
from .tables import ProfileTokens, in_prompt_tokens


def plain_ends(text: str) -> bool:
    """A profile that starts and ends with a non-whitespace character (every profile the world writes)."""
    return bool(text) and not text[0].isspace() and not text[-1].isspace()


def sums_exactly(counter: TokenCounter, texts: Iterable[str]) -> bool:
    """Whether prompts of these profiles count as their frame plus the profiles' in-prompt tokens."""
    return counter.newline_ends_piece and all(map(plain_ends, texts))


@lru_cache(maxsize=256)
def frame_parts(tokenizer: str, chat_template: bool, num_people: int, question: str, probe: str,
                probe_cost: int) -> tuple[int, int]:
    """(tokens of a prompt beyond its profiles, tokens before its context), measured on a prompt of the one profile
    ``probe`` whose in-prompt cost is ``probe_cost``: once per people count and request, not per instance. Counts
    only (no token starts): the tokens before the context are the prompt's less those of the text from the context
    on, which is cut as a text of its own after the head's line break (exact where ``sums_exactly``)."""
    meter = prompt_meter(tokenizer, chat_template)
    prompt = render_prompt(probe, num_people, question)
    text = meter.model_text(prompt)
    offset = text.find(prompt) if chat_template else 0
    if offset < 0:
        raise ValueError(f"chat_template: the chat template of {tokenizer!r} rewrites the prompt, so its context "
                         "cannot be located in it; allowed: false")
    tokens = meter.counter.count(text)
    return tokens - probe_cost, tokens - meter.counter.count(text[offset + len(prompt_head(num_people)):])


@dataclass(frozen=True)
class PromptSums:
    """The token counts of prompts of one instance's profiles (``costs`` and ``tails`` per person, as rendered)."""

    meter: PromptMeter
    costs: Sequence[int]
    tails: Sequence[int]  # of each profile's tokens, those that start in the separator after it
    probe: str  # the world's first profile as written, and its in-prompt cost: what frames are measured around
    probe_cost: int

    def frame(self, num_people: int, question: str) -> tuple[int, int]:
        return frame_parts(self.meter.counter.name, self.meter.chat_template, num_people, question, self.probe,
                           self.probe_cost)

    def count(self, people: Iterable[int], num_people: int, question: str) -> int:
        """Tokens of the prompt of ``people`` (``num_people`` of them) and ``question``."""
        costs = self.costs
        return self.frame(num_people, question)[0] + sum(costs[p] for p in people)

    def encoding(self, prompt: str, order: Sequence[int], question: str, context_chars: int) -> PromptEncoding:
        """What ``PromptMeter.encode(prompt)`` reads from a pass: the prompt's tokens and where its context's
        tokens start and end (the tokens that start inside the context, as ``tokens_between`` counts them)."""
        frame, head = self.frame(len(order), question)
        body = sum(self.costs[p] for p in order)
        offset = 0
        if self.meter.chat_template:
            offset = self.meter.model_text(prompt).find(prompt)
            if offset < 0:
                raise ValueError(f"chat_template: the chat template of {self.meter.counter.name!r} rewrites the "
                                 "prompt, so its context cannot be located in it; allowed: false")
        start = offset + len(prompt_head(len(order)))
        context_tokens = body - (self.tails[order[-1]] if order else 0)
        cuts = ((start, head), (start + context_chars, head + context_tokens))
        return PromptEncoding(prompt, CutsEncoded(frame + body, cuts), offset)


def prompt_sums(meter: PromptMeter, probe: str, exact: ProfileTokens, rewritten: dict[int, str]) -> PromptSums | None:
    """``PromptSums`` of a world's profiles (``exact``; ``probe``: its first profile's text) with the ``rewritten``
    ones (person -> text as rendered: decoy holders) measured in one small pass; None when a rewritten text does
    not allow the sums."""
    costs, tails = exact.costs, exact.tails
    if rewritten:
        if not sums_exactly(meter.counter, rewritten.values()):
            return None
        measured = in_prompt_tokens(list(rewritten.values()), meter.counter)
        costs, tails = list(costs), list(tails)
        for person, cost, tail in zip(rewritten, measured.costs, measured.tails, strict=True):
            costs[person], tails[person] = cost, tail
    return PromptSums(meter, costs, tails, probe, exact.costs[0])

