"""The lurch baselines as a lighteval custom model: ``lighteval custom <name> <this file> <tasks> --custom-tasks
lurch_tasks.harness.lighteval_tasks``.

``<name>`` picks the baseline and its arguments, written as lm-eval's ``--model_args``: ``lurch-solver``,
``lurch-random`` or ``lurch-random,answer_seed=7``, ``lurch-simulated,intercept=1.5,depth=-0.8``. Each answers
exactly as its lm-eval twin (``harness.models``): the solver and random baselines read only the prompt lighteval
builds from the doc (``PromptManager.prepare_prompt``: the doc's prompt itself, zero-shot without a system prompt),
``lurch-simulated`` also reads the doc's properties.

``python -m lurch_tasks.harness.lighteval_model`` prints this file's path (lighteval takes a file, not a module).
"""

from __future__ import annotations

from lighteval.models.abstract_model import LightevalModel
from lighteval.models.model_output import ModelResponse
from lighteval.tasks.prompt_manager import PromptManager
from lighteval.tasks.requests import Doc
from lighteval.utils.cache_management import SampleCache

from lurch_tasks.harness.log_keys import DOC_KEY

BASELINES = ("lurch-solver", "lurch-random", "lurch-simulated")


def baseline_lm(spec: str):
    """The lm-eval baseline named by ``spec`` (``name`` or ``name,key=value,...``)."""
    from lurch_tasks.harness.models import RandomLM, SimulatedLM, SolverLM

    name, _, args = spec.partition(",")
    classes = dict(zip(BASELINES, (SolverLM, RandomLM, SimulatedLM), strict=True))
    if name not in classes:
        raise ValueError(f"model_name: {name!r} is not a lurch baseline; allowed: {', '.join(BASELINES)} "
                         "(with lm-eval style arguments after a comma: lurch-random,answer_seed=7)")
    return classes[name].create_from_arg_string(args)


class LurchBaseline(LightevalModel):
    """One of the lurch baselines, chosen by the config's ``model_name``."""

    def __init__(self, config) -> None:
        self.config = config
        self.lm = baseline_lm(config.model_name)
        self.prompt_manager = PromptManager(use_chat_template=False, tokenizer=None, system_prompt=None)
        self._cache = SampleCache(config)  # lighteval's pipeline reads it; the answers themselves are not cached

    @property
    def tokenizer(self):
        return None

    @property
    def add_special_tokens(self) -> bool:
        return False

    @property
    def max_length(self) -> int:
        return 1 << 30  # a baseline reads any length

    def answer(self, doc: Doc, prompt: str) -> str:
        if hasattr(self.lm, "answer_doc"):
            return self.lm.answer_doc(doc.specific[DOC_KEY], prompt)
        return self.lm.answer(prompt)

    def greedy_until(self, docs: list[Doc]) -> list[ModelResponse]:
        responses = []
        for doc in docs:
            prompt = self.prompt_manager.prepare_prompt(doc)
            responses.append(ModelResponse(input=prompt, text=[self.answer(doc, prompt)]))
        return responses

    def loglikelihood(self, docs: list[Doc]) -> list[ModelResponse]:
        raise NotImplementedError("the lurch baselines only answer generative tasks")

    def loglikelihood_rolling(self, docs: list[Doc]) -> list[ModelResponse]:
        raise NotImplementedError("the lurch baselines only answer generative tasks")


if __name__ == "__main__":
    print(__file__)
