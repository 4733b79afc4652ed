"""`lurch-simulated`, the model with known effects, and the analysis recovering them: run through `lurch eval` on
the ImplicitHop grid (depth, facts, dispersion and length crossed), then `lurch report`; every true coefficient must
lie inside the GLM's 95% CI on the raw scale, for a depth-only effect and for a length x dispersion interaction."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from lurch_tasks.analysis.properties import linear_predictor, logistic
from lurch_tasks.core.generation import generate_row, resolve_task
from lurch_tasks.core.registry import get_family
from lurch_tasks.harness.models import SimulatedLM

LURCH = str(Path(sys.executable).parent / "lurch")
ONE_PER_FAMILY = ("find_the_origin", "memory_drift_edge", "implicit_hop_grid", "implicit_hop_count",
                  "implicit_hop_compare", "recon_chain", "recon_conflict")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([LURCH, *args], capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def docs() -> list[dict]:
    rows = []
    for name in ONE_PER_FAMILY:
        task = resolve_task(name)
        rows += [generate_row(task, i) for i in range(3)]
    return rows


def test_probability_is_the_logistic_of_the_stated_terms(docs):
    model = SimulatedLM.create_from_arg_string("intercept=0.4,depth=-1.1,length:dispersion=0.3,answer_seed=5")
    for doc in docs:
        expected = logistic(linear_predictor(0.4, {"depth": -1.1, "length:dispersion": 0.3}, doc["difficulty"]))
        assert model.probability(doc) == pytest.approx(expected, abs=1e-12)


def test_answers_are_solver_right_or_scored_wrong(docs):
    always = SimulatedLM.create_from_arg_string("intercept=60")
    never = SimulatedLM.create_from_arg_string("intercept=-60,answer_seed=3")
    for doc in docs:
        family = get_family(doc["family"])
        assert family.score(doc, always.answer_doc(doc, doc["prompt"]))["score"] == 1.0
        wrong = never.answer_doc(doc, doc["prompt"])
        assert family.score(doc, wrong)["score"] <= 0.0
        assert wrong == never.answer_doc(doc, doc["prompt"])  # seeded per doc


def test_model_arguments_are_checked():
    for args, message in (("colour=1", "'colour' is not an argument of SimulatedLM"),
                          ("depth=abc", "depth='abc' is not allowed"),
                          ("length:length=1", "'length:length' is not an argument"),
                          ("answer_seed=-1", "answer_seed=-1 is not allowed"),
                          ("seed=3", "'seed' would also set the docs' generation seed")):
        with pytest.raises(ValueError, match=message):
            SimulatedLM.create_from_arg_string(args)


def _coefficients(path: Path) -> dict[str, dict]:
    with path.open(encoding="utf-8") as handle:
        return {row["term"]: row for row in csv.DictReader(handle) if row["kind"] in ("intercept", "property",
                                                                                      "interaction")}


@pytest.mark.slow
@pytest.mark.parametrize(("setting", "terms", "table"), [
    ("depth", {"depth": -1.2}, "glm_raw_main.csv"),
    ("length_x_dispersion", {"length:dispersion": -0.8}, "glm_raw_interactions.csv"),
])
def test_the_report_recovers_the_simulated_coefficients(tmp_path, setting, terms, table):
    intercept = 0.3
    args = ",".join([f"intercept={intercept}", "answer_seed=7", *(f"{k}={v}" for k, v in terms.items())])
    done = run("eval", "--model", "lurch-simulated", "--model_args", args, "--tasks", "implicit_hop_grid",
               "--metadata", json.dumps({"num_samples": 6}), "--log_samples", "--output_path", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr[-3000:]
    done = run("report", str(tmp_path / "run"), "--out", str(tmp_path / "report"), "--bootstrap", "100", "--quiet")
    assert done.returncode == 0, done.stderr[-3000:]
    fitted = _coefficients(tmp_path / "report" / table)
    truth = {"intercept": intercept, "length": 0.0, "scope": 0.0, "dispersion": 0.0, "depth": 0.0}
    if "interactions" in table:
        truth.update({"length:scope": 0.0, "length:dispersion": 0.0, "length:depth": 0.0})
    truth.update(terms)
    assert set(fitted) == set(truth)  # every term estimated: the grid crosses the properties
    for term, value in truth.items():
        row = fitted[term]
        assert float(row["ci_low"]) <= value <= float(row["ci_high"]), (setting, term, row)
    strong = next(iter(terms))
    assert float(fitted[strong]["p"]) < 1e-4  # and the planted effect is found, not just covered
