"""Baseline models registered with lm-eval: the reference solver, a seeded chance baseline, and a simulated model
with known effects for testing the analysis.

The solver and the chance baseline see only the prompt string lm-eval would send to a real model, never the doc.
"""

from __future__ import annotations

import lm_eval.models  # noqa: F401  (lm-eval registers its own models only into an empty registry: go first)
from lm_eval.api.model import LM
from lm_eval.api.registry import register_model
from tqdm.auto import tqdm

from ..analysis.properties import BY_NAME, check_term, linear_predictor, logistic
from ..core.registry import all_families, get_family
from ..core.rng import StableRng, derive_seed


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

    def __init__(self, answer_seed: int | str = 1234) -> None:
        super().__init__()
        text = str(answer_seed).strip()
        if isinstance(answer_seed, bool) or not text.lstrip("+").isdigit():
            raise ValueError(f"model_args: answer_seed={answer_seed!r} is not allowed; allowed: a non-negative integer")
        self.seed = int(text)

    @classmethod
    def create_from_arg_string(cls, arg_string: str, additional_config: dict | None = None):
        from lm_eval.utils import simple_parse_args_string

        args = simple_parse_args_string(arg_string) if arg_string else {}
        return cls.create_from_arg_obj(args, additional_config)

    @classmethod
    def create_from_arg_obj(cls, arg_dict: dict, additional_config: dict | None = None):
        """Only ``answer_seed`` is ours; lm-eval's own settings (batch size, device) mean nothing to a prompt-only
        solver and are dropped; any other model argument is a typo."""
        _refuse_seed(arg_dict)
        unknown = sorted(set(arg_dict) - {"answer_seed"})
        if unknown:
            raise ValueError(f"model_args: {unknown[0]!r} is not an argument of {cls.__name__}; allowed: answer_seed")
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


@register_model("lurch-simulated")
class SimulatedLM(_PromptOnlyLM):
    """A model with known effects, to test the analysis end to end (``lurch report``'s GLM must recover them).

    It answers a doc correctly with probability ``logistic(intercept + sum(beta * term))``, the terms being the
    doc's LURCH properties on the raw scale of ``analysis.properties`` (centred natural logs): ``length``,
    ``scope``, ``dispersion``, ``depth``, or a product such as ``length:dispersion``. Coefficients come from
    ``--model_args`` (``intercept=0.5,depth=-1.2,answer_seed=3``; unnamed terms are 0). Whether a doc is answered
    correctly is a seeded draw per (answer_seed, doc id), so a run is reproducible and independent of doc order.

    A correct answer is the reference solver's. A wrong answer is the chance baseline's guess; a guess that
    happens to score above 0 is drawn again (up to 8 times, then the empty answer), so every doc's score is
    exactly 1 or at most 0 and the GLM's response (the score clipped to [0, 1]) is a Bernoulli draw with the
    stated probability. Unlike the other baselines it reads the doc lm-eval attaches to each request (its
    properties, and its gold answer to keep wrong answers wrong)."""

    # the terms it takes through **coefficients (so `lurch eval` knows them as model arguments, not task knobs)
    KEYWORD_ARGUMENTS = (*BY_NAME, *(f"{a}:{b}" for a in BY_NAME for b in BY_NAME if a != b))

    def __init__(self, answer_seed: int | str = 1234, intercept: float = 0.0, **coefficients: float) -> None:
        super().__init__(answer_seed)
        self.intercept = _number("intercept", intercept)
        for term in coefficients:
            check_term(term)
        self.coefficients = {term: _number(term, value) for term, value in sorted(coefficients.items())}

    @classmethod
    def create_from_arg_obj(cls, arg_dict: dict, additional_config: dict | None = None):
        _refuse_seed(arg_dict)
        for key in arg_dict:
            if key not in ("answer_seed", "intercept"):
                try:
                    check_term(str(key))
                except ValueError:
                    terms = ", ".join(BY_NAME)
                    raise ValueError(f"model_args: {key!r} is not an argument of {cls.__name__}; allowed: "
                                     f"answer_seed, intercept, {terms} or a product such as length:dispersion"
                                     ) from None
        return cls(**arg_dict)

    def probability(self, doc: dict) -> float:
        return logistic(linear_predictor(self.intercept, self.coefficients, doc["difficulty"]))

    def answer_doc(self, doc: dict, prompt: str, repeat: int = 0) -> str:
        """The answer to ``doc``; ``repeat`` k > 0 (the k-th extra answer to the same doc, ``repeats``) is a draw of
        its own, as a sampling model's would be."""
        keys = (self.seed, doc["id"]) if repeat == 0 else (self.seed, doc["id"], repeat)
        draw = StableRng(derive_seed("lurch-simulated", *keys)).uniform()
        if draw < self.probability(doc):
            return solve_prompt(prompt)
        family = get_family(doc["family"])
        for attempt in range(8):
            guess = guess_prompt(prompt, derive_seed("lurch-simulated-guess", self.seed, doc["id"], attempt))
            if family.score(doc, guess)["score"] <= 0:
                return guess
        return ""

    def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
        seen: dict[str, int] = {}  # lm-eval's repeats send one request per answer: count them per doc
        answers = []
        for req in tqdm(requests, disable=disable_tqdm, desc=type(self).__name__):
            repeat = seen.get(req.doc["id"], 0)
            seen[req.doc["id"]] = repeat + 1
            answers.append(self.answer_doc(req.doc, req.args[0], repeat))
        return answers


def _refuse_seed(arg_dict: dict) -> None:
    """lm-eval merges ``--model_args`` into every task's metadata, where ``seed`` is the docs' generation seed: a
    model argument of that name would silently evaluate other docs, so the models' own draws use ``answer_seed``."""
    if "seed" in arg_dict:
        raise ValueError("model_args: 'seed' would also set the docs' generation seed (lm-eval passes model "
                         "arguments to the tasks); allowed: answer_seed=N for the model's own random draws")


def _number(name: str, value: object) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        number = float("nan")
    if isinstance(value, bool) or number != number or abs(number) == float("inf"):
        raise ValueError(f"model_args: {name}={value!r} is not allowed; allowed: a finite number")
    return number


from . import rag  # noqa: E402, F401  (registers lurch-rag beside the baselines)
