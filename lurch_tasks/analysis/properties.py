"""The LURCH predictors of the analysis: which recorded field each one reads and how it is put on a log scale.

One definition serves the GLM (``analysis.glm``) and the simulated model (``harness.models``, ``lurch-simulated``),
so a coefficient the simulated model is given is the very coefficient the GLM estimates on the raw scale.

A predictor's *raw* value is ``log(value + offset) - log(reference + offset)``: a natural log, centred at a fixed
reference point, so the intercept is the log-odds at the reference instance (4,096 tokens, scope 1%, dispersion 0.5,
depth 2) and a slope is the change in log-odds per e-fold of the property. Dispersion is 0 when the evidence is one
block, so it is offset by 0.01 (one percent of the non-evidence text); scope and length are never 0 and depth is at
least 1, so they need none. The paper's tables standardise these raw values over the analysed data (mean 0, SD 1).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Predictor:
    name: str  # short name used in tables, model arguments and interaction terms ("length:dispersion")
    field: str  # the ``difficulty`` field of an Instance it reads
    reference: float
    offset: float = 0.0
    floor: float = 1e-9  # guards log(0) on a malformed record; never reached by generated data

    def raw(self, value: float) -> float:
        return math.log(max(float(value) + self.offset, self.floor)) - math.log(self.reference + self.offset)


PREDICTORS: tuple[Predictor, ...] = (
    Predictor("length", "context_tokens", reference=4096.0),
    Predictor("scope", "evidence_scope", reference=0.01),
    Predictor("dispersion", "evidence_dispersion", reference=0.5, offset=0.01),
    Predictor("depth", "reasoning_depth", reference=2.0),
)
BY_NAME: dict[str, Predictor] = {p.name: p for p in PREDICTORS}
# The length x property interactions of the paper's RQ2 (Table 2)
INTERACTIONS: tuple[str, ...] = ("length:scope", "length:dispersion", "length:depth")


def raw_values(difficulty: Mapping[str, float]) -> dict[str, float]:
    """Every predictor's raw (centred log) value for one instance's ``difficulty`` record."""
    return {p.name: p.raw(difficulty[p.field]) for p in PREDICTORS}


def term_value(term: str, raw: Mapping[str, float]) -> float:
    """The value of a term: a predictor (``depth``) or a product of predictors (``length:dispersion``)."""
    value = 1.0
    for name in term.split(":"):
        value *= raw[name]
    return value


def check_term(term: str) -> None:
    names = term.split(":")
    if not names or any(name not in BY_NAME for name in names) or len(set(names)) != len(names):
        allowed = ", ".join(BY_NAME) + " or a product of two, e.g. length:dispersion"
        raise ValueError(f"term: {term!r} is not allowed; allowed: {allowed}")


def linear_predictor(intercept: float, coefficients: Mapping[str, float], difficulty: Mapping[str, float]) -> float:
    """``intercept + sum(beta * term)`` over raw predictor values: the log-odds of a correct answer."""
    raw = raw_values(difficulty)
    return intercept + sum(beta * term_value(term, raw) for term, beta in sorted(coefficients.items()))


def logistic(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)
