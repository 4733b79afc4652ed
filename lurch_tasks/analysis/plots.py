"""The report's figures (matplotlib, Agg backend, PNG bytes), each drawn from one of the report's tables.

Every function takes a table (a pandas DataFrame as ``analysis.report`` builds it) and returns PNG bytes, so the
figures can be embedded in the HTML page and written beside it. Figures are deterministic for a given table
(matplotlib's PNG metadata is stripped of its version and date).

Labels come from the logs (model labels, task names, failure modes): every figure is drawn as plain text
(``plain_text``: no mathtext, so ``$``, ``\\`` and ``_`` are shown as typed, and no TeX), and legends are given
their labels explicitly (matplotlib would drop a label starting with ``_``).
"""

from __future__ import annotations

import functools
import io
import math
from collections.abc import Callable
from typing import TypeVar

import numpy as np
import pandas as pd

GRAPH_METRICS = (("memory_drift", "memory drift (lower is better)"), ("precision", "precision"),
                 ("recall", "recall"), ("f1", "F1"))


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


_Figure = TypeVar("_Figure", bound=Callable[..., bytes])
PLAIN_TEXT = {"text.parse_math": False, "text.usetex": False}


def plain_text(function: _Figure) -> _Figure:
    """Draw (and save) the figure with every text shown literally: a label ``$\\frac{a}{b}$`` or ``$x^{$`` from a
    log is neither typeset nor an error."""
    @functools.wraps(function)
    def drawn(*args, **kwargs):
        with _pyplot().rc_context(PLAIN_TEXT):
            return function(*args, **kwargs)
    return drawn  # type: ignore[return-value]


def _legend(target, handles: list, **options) -> None:
    """A legend of exactly these artists, labels as given (none dropped for a leading ``_``)."""
    target.legend(handles, [handle.get_label() for handle in handles], **options)


def _png(figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    _pyplot().close(figure)
    return buffer.getvalue()


def palette(models) -> dict[str, str]:
    """One colour per model for every figure of a report (matplotlib's cycle, in sorted model order)."""
    return {model: f"C{i % 10}" for i, model in enumerate(sorted(models))}


def _band(axis, x, mean, low, high, label: str, color: str | None = None):
    line, = axis.plot(x, mean, marker="o", label=label, color=color)
    if np.isfinite(np.asarray(low, dtype=float)).any():
        axis.fill_between(x, low, high, alpha=0.15, color=line.get_color())
    return line


def _figure_legend(figure, colors: dict[str, str]) -> None:
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=color, marker="o", label=model) for model, color in colors.items()]
    _legend(figure, handles, loc="outside lower center", ncol=min(4, len(handles)), fontsize=8, frameon=False)


def _length_axis(axis, lengths) -> None:
    """A log2 length axis ticked at the bins only ("2k", "16k"): readable, and cheap to lay out."""
    ticks = sorted({int(n) for n in lengths})
    axis.set_xscale("log", base=2)
    axis.set_xticks(ticks, [f"{n / 1024:g}k" if n >= 1024 else str(n) for n in ticks])
    axis.minorticks_off()
    axis.set_xlabel("context length (tokens)")


@plain_text
def graph_panels(curves: pd.DataFrame, task: str, model: str) -> bytes:
    """Memory drift, precision, recall and F1 against context length, one line per density (paper figs 4-7)."""
    plt = _pyplot()
    figure, axes = plt.subplots(1, 4, figsize=(16, 3.8), sharex=True, layout="constrained")
    rows = curves[(curves["task"] == task) & (curves["model"] == model)]
    handles = []
    for axis, (metric, title) in zip(axes, GRAPH_METRICS, strict=True):
        lines = []
        for density, group in rows.groupby("connections", sort=True):
            group = group.sort_values("length")
            lines.append(_band(axis, group["length"], group[metric], group[f"{metric}_lo"], group[f"{metric}_hi"],
                               f"{density} per prompt"))
        handles = handles or lines
        axis.set_title(title)
        axis.set_ylim(-0.02, 1.02)
        _length_axis(axis, rows["length"])
    _legend(axes[0], handles, title="connections", fontsize=8)
    figure.suptitle(f"{task} — {model}")
    return _png(figure)


@plain_text
def radar(summary: pd.DataFrame, task: str, colors: dict[str, str]) -> bytes:
    """Memory drift, precision, recall and F1 of every model on one task, as a radar."""
    plt = _pyplot()
    labels = [title.split(" (")[0] for _, title in GRAPH_METRICS]
    angles = [2 * math.pi * i / len(labels) for i in range(len(labels))]
    figure = plt.figure(figsize=(4.8, 5.2), layout="constrained")
    axis = figure.add_subplot(projection="polar")
    handles = []
    for _, row in summary[summary["task"] == task].sort_values("model").iterrows():
        values = [float(row[metric]) for metric, _ in GRAPH_METRICS]
        color = colors.get(str(row["model"]))
        handles += axis.plot([*angles, angles[0]], [*values, values[0]], marker="o", label=str(row["model"]),
                             color=color)
        axis.fill([*angles, angles[0]], [*values, values[0]], alpha=0.08, color=color)
    axis.set_xticks(angles)
    axis.set_xticklabels(labels)
    axis.set_ylim(0, 1)
    axis.set_title(task, pad=18)
    _legend(axis, handles, fontsize=7, loc="lower left", bbox_to_anchor=(-0.25, -0.28))
    return _png(figure)


@plain_text
def length_curves(curves: pd.DataFrame, metric: str, colors: dict[str, str], onsets: pd.DataFrame | None = None
                  ) -> bytes:
    """A metric against context length per task (one panel each), one line per model; drift onsets marked."""
    plt = _pyplot()
    tasks = sorted(curves["task"].unique())
    columns = min(3, len(tasks))
    rows_n = math.ceil(len(tasks) / columns)
    figure, axes = plt.subplots(rows_n, columns, figsize=(5.2 * columns, 3.4 * rows_n + 0.6), squeeze=False,
                                layout="constrained")
    for axis, task in zip(axes.flat, tasks, strict=False):
        for model, group in curves[curves["task"] == task].groupby("model", sort=True):
            group = group.sort_values("length")
            _band(axis, group["length"], group[metric], group[f"{metric}_lo"], group[f"{metric}_hi"], str(model),
                  colors.get(str(model)))
            if onsets is not None:
                mark = onsets[(onsets["task"] == task) & (onsets["model"] == model)]
                if not mark.empty and pd.notna(mark.iloc[0]["drift_onset"]):
                    axis.axvline(float(mark.iloc[0]["drift_onset"]), linestyle=":", color=colors.get(str(model)))
        axis.set_title(task, fontsize=10)
        axis.set_ylim(-0.02, 1.02)
        _length_axis(axis, curves.loc[curves["task"] == task, "length"])
    for axis in list(axes.flat)[len(tasks):]:
        axis.set_visible(False)
    figure.suptitle(metric.replace("_", " ") + " vs context length" + (" (dotted: drift onset)" if onsets is not None
                                                                       else ""))
    _figure_legend(figure, colors)
    return _png(figure)


@plain_text
def heatmap(cells: pd.DataFrame, title: str, value: str = "accuracy") -> bytes:
    """Find the Origin: accuracy over d (rows) x context length (columns)."""
    plt = _pyplot()
    table = cells.pivot_table(index="d", columns="length", values=value, aggfunc="mean").sort_index()
    figure, axis = plt.subplots(figsize=(2.2 + 0.9 * len(table.columns), 1.4 + 0.28 * len(table.index)),
                                layout="constrained")
    image = axis.imshow(table.to_numpy(dtype=float), aspect="auto", vmin=0, vmax=1, cmap="viridis")
    axis.set_xticks(range(len(table.columns)), [f"{c / 1024:g}k" if c >= 1024 else str(c) for c in table.columns])
    axis.set_yticks(range(len(table.index)), [str(i) for i in table.index])
    axis.set_xlabel("context length (tokens)")
    axis.set_ylabel("d")
    axis.set_title(title, fontsize=10)
    figure.colorbar(image, ax=axis, label=value)
    return _png(figure)


@plain_text
def axis_curves(table: pd.DataFrame, x: str, y: str, title: str, xlabel: str, colors: dict[str, str],
                log_x: bool = False) -> bytes:
    """A metric against one property, one line per model (colour) and task (line style, when several tasks vary
    the property: RECON chain length, an ImplicitHop axis)."""
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(5.6, 3.6), layout="constrained")
    tasks = sorted(table["task"].unique()) if "task" in table else [None]
    styles = dict(zip(tasks, ("-", "--", ":", "-."), strict=False))
    handles = []
    for (model, task), group in table.assign(task=table.get("task")).groupby(["model", "task"], sort=True,
                                                                             dropna=False):
        group = group.sort_values(x)
        label = str(model) if len(tasks) == 1 else f"{model} ({task})"
        line, = axis.plot(group[x], group[y], marker="o", label=label, color=colors.get(str(model)),
                          linestyle=styles.get(task, "-"))
        handles.append(line)
        if np.isfinite(group[f"{y}_lo"].to_numpy(dtype=float)).any():
            axis.fill_between(group[x], group[f"{y}_lo"], group[f"{y}_hi"], alpha=0.12, color=line.get_color())
    if log_x:
        _length_axis(axis, table[x])
    axis.set_xlabel(xlabel)
    axis.set_ylabel(y.replace("_", " "))
    axis.set_ylim(-0.02 if table[y].min() >= 0 else None, 1.02)
    axis.set_title(title, fontsize=10)
    _legend(axis, handles, fontsize=7)
    return _png(figure)


@plain_text
def forest(terms: pd.DataFrame, title: str, colors: dict[str, str]) -> bytes:
    """Interquartile contrasts (percentage points) with 95% CIs: one row per property, one marker per fit."""
    plt = _pyplot()
    labels = sorted(terms["label"].unique())
    properties = list(dict.fromkeys(terms["term"]))
    figure, axis = plt.subplots(figsize=(6.4, 1.2 + 0.5 * len(properties) * max(1, len(labels)) / 2),
                                layout="constrained")
    step = 0.8 / max(1, len(labels))
    handles = []
    for offset, label in enumerate(labels):
        rows = terms[terms["label"] == label].set_index("term")
        ys, xs, lows, highs = [], [], [], []
        for position, name in enumerate(properties):
            if name in rows.index and pd.notna(rows.loc[name, "contrast_pp"]):
                ys.append(position + offset * step - 0.4 + step / 2)
                xs.append(float(rows.loc[name, "contrast_pp"]))
                lows.append(float(rows.loc[name, "contrast_low"]))
                highs.append(float(rows.loc[name, "contrast_high"]))
        if xs:
            errors = [np.subtract(xs, lows), np.subtract(highs, xs)]
            handles.append(axis.errorbar(xs, ys, xerr=errors, fmt="o", capsize=3, label=str(label),
                                         color=colors.get(str(label), "black")))
    axis.axvline(0, color="grey", linewidth=0.8)
    axis.set_yticks(range(len(properties)), properties)
    axis.invert_yaxis()
    axis.set_xlabel("interquartile contrast (percentage points)")
    axis.set_title(title, fontsize=10)
    _legend(axis, handles, fontsize=7)
    return _png(figure)


@plain_text
def bars(table: pd.DataFrame, category: str, value: str, title: str, colors: dict[str, str]) -> bytes:
    """A value per category, one bar group per model (RECON failure modes)."""
    plt = _pyplot()
    categories = sorted(table[category].unique())
    models = sorted(table["model"].unique())
    figure, axis = plt.subplots(figsize=(2.5 + 1.1 * len(categories), 4.0), layout="constrained")
    width = 0.8 / max(1, len(models))
    handles = []
    for offset, model in enumerate(models):
        rows = table[table["model"] == model].set_index(category)
        heights = [float(rows.loc[c, value]) if c in rows.index else 0.0 for c in categories]
        handles.append(axis.bar(np.arange(len(categories)) + offset * width - 0.4 + width / 2, heights, width,
                                label=str(model), color=colors.get(str(model))))
    axis.set_xticks(range(len(categories)), categories, rotation=25, ha="right", fontsize=8)
    axis.set_ylabel(value.replace("_", " "))
    axis.set_title(title, fontsize=10)
    _legend(axis, handles, fontsize=7)
    return _png(figure)
