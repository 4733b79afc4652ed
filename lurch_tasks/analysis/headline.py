"""The headline of one model from its re-scored frame (``analysis.frame``), written once for `lurch report` and the
leaderboard.

A family's headline is the mean over its balance keys (the task; RECON: the question category) of the mean
``normalized_score`` of that key's docs; the overall headline is the unweighted mean of the family headlines, so no
family counts more for having more docs. Higher is better: 0 is chance, 1 perfect. The bootstrap resamples docs within
each balance key (``analysis.stats``), seeded by (seed, family, key), and recomputes the same two means.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from .stats import interval, resample_means

SCORE = "normalized_score"


def key_means(frame: pd.DataFrame) -> dict[str, dict[str, np.ndarray]]:
    """{family: {balance_key: the normalised scores of its docs}}, in sorted order."""
    groups: dict[str, dict[str, np.ndarray]] = {}
    for (family, key), rows in frame.groupby(["family", "balance_key"], sort=True):
        groups.setdefault(str(family), {})[str(key)] = rows[SCORE].to_numpy(dtype=float)
    return groups


def family_headlines(frame: pd.DataFrame) -> dict[str, float]:
    """{family: mean over its balance keys of their mean normalised score} for the families in ``frame``."""
    return {family: float(np.mean([values.mean() for values in keys.values()]))
            for family, keys in key_means(frame).items()}


def overall(frame: pd.DataFrame) -> float:
    """The unweighted mean of the family headlines (NaN for an empty frame)."""
    families = family_headlines(frame)
    return float(np.mean(list(families.values()))) if families else float("nan")


def coverage_line(score: float, families: Iterable[str], skipped: Mapping[str, str], lengths: Iterable[int],
                  skipped_lengths: Iterable[int] = (), name: str = "memory_drift") -> str:
    """The headline with what it covers: ``memory_drift = 0.120 over 3 of 4 families (recon skipped: window 8192 <
    16384+1024); lengths 4096 (skipped: 8192, 16384)`` (``coverage_text`` after "over")."""
    return covered_headline(score, coverage_text(families, skipped, lengths, skipped_lengths), name)


def covered_headline(score: float, covered: str, name: str = "memory_drift") -> str:
    """``memory_drift = 0.120 over <covered>`` (a NaN score reads n/a)."""
    shown = f"{score:.3f}" if score == score else "n/a"
    return f"{name} = {shown} over {covered}"


def coverage_text(families: Iterable[str], skipped: Mapping[str, str], lengths: Iterable[int],
                  skipped_lengths: Iterable[int] = ()) -> str:
    """What a headline covers: ``3 of 4 families (recon skipped: ...); lengths 4096 (skipped: 8192)``. ``skipped``
    maps a family (or a task of an evaluated family) to why it was skipped; a skipped length is one no evaluated doc
    has."""
    evaluated = sorted(set(families))
    whole = {label: why for label, why in skipped.items() if label not in evaluated}
    total = len(set(evaluated) | {label for label in whole if not _is_task(label)})
    text = f"{len(evaluated)} of {total} families"
    if whole:
        text += " (" + "; ".join(f"{label} skipped: {why}" for label, why in sorted(whole.items())) + ")"
    kept = sorted(set(lengths))
    if kept:
        text += f"; lengths {', '.join(map(str, kept))}"
    dropped = sorted(set(skipped_lengths) - set(kept))
    if dropped:
        text += f" (skipped: {', '.join(map(str, dropped))})"
    return text


def _is_task(label: str) -> bool:
    """Whether a skipped label names a task of a family rather than a family (tasks are counted under theirs)."""
    from ..core.registry import all_families

    return label not in {family.name for family in all_families()}


def skipped_family(task_name: str) -> str:
    """The label a skipped lm-eval task is reported under: its family for a family task (``family_recon``: recon),
    else the task itself."""
    prefix = "family_"
    return task_name[len(prefix):] if task_name.startswith(prefix) else task_name


def bootstrap(frame: pd.DataFrame, reps: int, seed: int) -> dict[str, tuple[float, float, float]]:
    """{"overall" and each family: (headline, 95% low, 95% high)}: docs resampled within each balance key."""
    groups = key_means(frame)
    draws: dict[str, np.ndarray] = {}
    for family, keys in groups.items():
        per_key = [resample_means(values, reps, ("headline", family, key), seed)[:, 0] for key, values in keys.items()]
        draws[family] = np.mean(per_key, axis=0) if reps > 0 else np.empty(0)
    point = family_headlines(frame)
    out = {family: (point[family], *_interval(draws[family])) for family in groups}
    total = np.mean([draws[f] for f in groups], axis=0) if groups and reps > 0 else np.empty(0)
    out["overall"] = (overall(frame), *_interval(total))
    return out


def table(frame: pd.DataFrame, reps: int, seed: int) -> pd.DataFrame:
    """One row per model: ``headline`` and ``headline:<family>``, each with ``_lo`` / ``_hi`` (``bootstrap``)."""
    rows = []
    for model, docs in frame.groupby("model", sort=True):
        row: dict = {"model": model}
        for name, (value, low, high) in bootstrap(docs, reps, seed).items():
            column = "headline" if name == "overall" else f"headline:{name}"
            row.update({column: value, f"{column}_lo": low, f"{column}_hi": high})
        rows.append(row)
    table = pd.DataFrame(rows)
    families = sorted({c for c in table.columns if c.startswith("headline:") and not c.endswith(("_lo", "_hi"))})
    order = ["model"] + [f"{c}{s}" for c in ("headline", *families) for s in ("", "_lo", "_hi")]
    return table[order]  # the same columns in the same order, whichever model lacks a family


def by_length(frame: pd.DataFrame) -> dict[int, float]:
    """{length bin: the overall headline of the docs in that bin} (RULER-style columns)."""
    return {int(length): overall(rows) for length, rows in frame.groupby("length", sort=True)}


def _interval(samples: np.ndarray) -> tuple[float, float]:
    return interval(samples) if samples.size else (float("nan"), float("nan"))
