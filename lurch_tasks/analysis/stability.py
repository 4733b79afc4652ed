"""Leave-one-task-out stability of the LURCH GLM (paper 004, G.4): the main fit refitted without each task in turn,
each property's coefficient beside the full fit's 95% CI. A coefficient that one task carries moves outside it."""

from __future__ import annotations

import pandas as pd

from .glm import TASK, fit_main

MIN_TASKS = 3  # with two tasks, leaving one out leaves a fit on a single task


def leave_one_task_out(frame: pd.DataFrame, *, standardize: bool = False) -> pd.DataFrame:
    """One row per (task left out, property): the refitted coefficient and CI, the full fit's, whether the refitted
    coefficient lies inside the full fit's CI (``within_full_ci``: strict, since the refit has fewer rows) and whether
    the full fit's coefficient lies inside the refit's CI (``full_within_ci``: the two do not differ at 5%). Raw
    scale by default: a standardised slope would change with each subset's SD, a raw one (per e-fold of the
    property) is comparable across subsets. Empty with fewer than ``MIN_TASKS`` tasks or without a full fit."""
    tasks = sorted(set(frame[TASK].astype(str))) if TASK in frame.columns else []
    full = fit_main(frame, standardize=standardize, label="all")
    if len(tasks) < MIN_TASKS or not full.fitted:
        return pd.DataFrame()
    reference = {t.name: t for t in full.terms if t.kind == "property"}
    rows = []
    for task in tasks:
        fit = fit_main(frame[frame[TASK].astype(str) != task], standardize=standardize, label=f"without {task}")
        for name, whole in reference.items():
            term = fit.term(name)
            rows.append({"left_out": task, "term": name,
                         "coef": None if term is None else round(term.coef, 4),
                         "ci_low": None if term is None else round(term.ci_low, 4),
                         "ci_high": None if term is None else round(term.ci_high, 4),
                         "full_coef": round(whole.coef, 4), "full_ci_low": round(whole.ci_low, 4),
                         "full_ci_high": round(whole.ci_high, 4),
                         "within_full_ci": None if term is None else bool(whole.ci_low <= term.coef <= whole.ci_high),
                         "full_within_ci": None if term is None else bool(term.ci_low <= whole.coef <= term.ci_high)})
    return pd.DataFrame(rows)
