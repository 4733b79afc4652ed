"""Baseline models registered with lm-eval: the reference solver and a seeded chance baseline.

Both see only the prompt string lm-eval would send to a real model, never the doc.
"""

from __future__ import annotations

import lm_eval.models  # noqa: F401  (lm-eval registers its own models only into an empty registry: go first)
from lm_eval.api.model import LM
from lm_eval.api.registry import register_model
from tqdm.auto import tqdm

from ..core.registry import all_families


def solve_prompt(prompt: str) -> str:
    """Ask each family's solver in turn; the family that recognizes the prompt answers."""
    for family in all_families():
        answer = family.solve(prompt)
        if answer is not None:
            return answer
    return ""


def guess_prompt(prompt: str, seed: int) -> str:
    for family in all_families():
        answer = family.guess(prompt, seed)
        if answer is not None:
            return answer
    return ""


class _PromptOnlyLM(LM):
    """Generation-only baseline: log-likelihood requests make no sense for these tasks."""

    def __init__(self, seed: int | str = 1234) -> None:
        super().__init__()
        text = str(seed).strip()
        if isinstance(seed, bool) or not text.lstrip("+").isdigit():
            raise ValueError(f"model_args: seed={seed!r} is not allowed; allowed: a non-negative integer")
        self.seed = int(text)

    @classmethod
    def create_from_arg_string(cls, arg_string: str, additional_config: dict | None = None):
        from lm_eval.utils import simple_parse_args_string

        args = simple_parse_args_string(arg_string) if arg_string else {}
        return cls.create_from_arg_obj(args, additional_config)

    @classmethod
    def create_from_arg_obj(cls, arg_dict: dict, additional_config: dict | None = None):
        """Only ``seed`` is ours; lm-eval's own settings (batch size, device) mean nothing to a prompt-only
        solver and are dropped; any other model argument is a typo."""
        unknown = sorted(set(arg_dict) - {"seed"})
        if unknown:
            raise ValueError(f"model_args: {unknown[0]!r} is not an argument of {cls.__name__}; allowed: seed")
        return cls(**arg_dict)

    def answer(self, prompt: str) -> str:
        raise NotImplementedError

    def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
        return [self.answer(req.args[0]) for req in tqdm(requests, disable=disable_tqdm, desc=type(self).__name__)]

    def loglikelihood(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError(f"{type(self).__name__} only answers generate_until tasks")

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError(f"{type(self).__name__} only answers generate_until tasks")


@register_model("lurch-solver")
class SolverLM(_PromptOnlyLM):
    """Solves every lurch task from the prompt text alone: the answerability audit."""

    def answer(self, prompt: str) -> str:
        return solve_prompt(prompt)


@register_model("lurch-random")
class RandomLM(_PromptOnlyLM):
    """Chance baseline: a seeded random answer built from the prompt's own vocabulary."""

    def answer(self, prompt: str) -> str:
        return guess_prompt(prompt, self.seed)
