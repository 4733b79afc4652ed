"""Which metrics lm-eval shows for our tasks and how they aggregate (the YAMLs and ``process_results`` share it).

By default a task reports a short list (``TASK_METRICS``, its family's extras and the negative controls' metrics
where it has controls): lm-eval prints one row per metric, and per-bin rows buried the few that matter. With the
``bins`` switch (``--metadata '{"bins": true}'``) the docs also report ``DETAIL_METRICS`` and every per-bin metric
(``score@4096``); the YAMLs declare them all, and lm-eval shows only what the docs report. `lurch report` computes
every bin from the logged samples either way.
"""

from __future__ import annotations

HEADLINE = "headline"  # chance-normalised, balanced over tasks (scoring.headline); the umbrella's number
TASK_METRICS = (HEADLINE, "score", "memory_drift", "f1", "truncated", "unparsed")
DETAIL_METRICS = ("precision", "recall")
DETAIL_EXTRAS = ("prompt_tokens",)  # a family extra shown with bins only (a cost: lurch report tables it)
BINNED_METRICS = ("score", "memory_drift")
# Extra metrics that only some docs report (the negative controls: graph zero-gold cells, ImplicitHop broken chains,
# RECON abstention controls): None elsewhere, aggregated by bin_mean, listed only for tasks whose config says some
# of its docs report them (``config.sparse_metrics()``).
SPARSE_METRICS = ("false_positive_rate", "not_found_accuracy", "abstain_correct", "false_answer_rate")
# Descriptive metrics (how long the prompt was, how often the model abstained: right on an unanswerable question)
# carry no direction, so lm-eval's table shows no arrow beside them.
DESCRIPTIVE = {"prompt_tokens", "abstain_rate"}
LOWER_IS_BETTER = {"memory_drift", "false_positive_rate", "false_answer_rate", "truncated", "unparsed"}
# What groups aggregate: the headline and raw score with equal weight per member (a family group: per task; the
# umbrella: per family task), rates over docs.
GROUP_METRICS = ((HEADLINE, False), ("score", False), ("memory_drift", True), ("f1", True), ("truncated", True),
                 ("unparsed", True))


def family_extras(extra_metrics: tuple[str, ...], detail: bool) -> tuple[str, ...]:
    """A family's extra metrics reported on every doc (sparse ones are the config's business)."""
    return tuple(m for m in extra_metrics if m not in SPARSE_METRICS and (detail or m not in DETAIL_EXTRAS))


def doc_metric_names(extra_metrics: tuple[str, ...], sparse: tuple[str, ...], detail: bool) -> tuple[str, ...]:
    """The plain (unbinned) metrics one doc reports, in table order."""
    return (*TASK_METRICS, *(DETAIL_METRICS if detail else ()), *family_extras(extra_metrics, detail), *sparse)
