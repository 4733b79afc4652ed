"""The report's figures (matplotlib, Agg backend, PNG bytes), each drawn from one of the report's tables.

Every function takes a table (a pandas DataFrame as ``analysis.report`` builds it) and returns PNG bytes, so the
figures can be embedded in the HTML page and written beside it. Figures are deterministic for a given table
(matplotlib's PNG metadata is stripped of its version and date).

Labels come from the logs (model labels, task names, failure modes): every figure is drawn as plain text
(``plain_text``: no mathtext, so ``$``, ``\\`` and ``_`` are shown as typed, and no TeX), and legends are given
their labels explicitly (matplotlib would drop a label starting with ``_``).

Layout: one figure per task (or per property), models as colours; every legend sits outside the axes (a figure
legend in constrained layout's ``outside`` slots), so it never covers a curve. Numbers on ticks and in labels are
written as integers when they are whole (``-15``, ``1 per prompt``).
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


MAX_LEGEND_LABEL = 48  # characters: a longer model label would squeeze the axes beside an outside legend to nothing


def short_label(text: str) -> str:
    """A label cut to ``MAX_LEGEND_LABEL`` characters (with "..." when cut); the full label is in the tables."""
    return text if len(text) <= MAX_LEGEND_LABEL else text[:MAX_LEGEND_LABEL - 3] + "..."


def _legend(target, handles: list, **options) -> None:
    """A legend of exactly these artists, labels as given (none dropped for a leading ``_``), long ones cut."""
    target.legend(handles, [short_label(handle.get_label()) for handle in handles], **options)


def _outside_legend(figure, handles: list, **options) -> None:
    """A figure legend right of every panel: constrained layout shrinks the axes to make room for it, so it never
    covers data."""
    _legend(figure, handles, loc="outside right upper", fontsize=8, frameon=False, **options)


def number(value: object) -> str:
    """A tick or legend number as a person writes it: whole numbers without a decimal point (``-15``, ``1``)."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(value)
    if math.isfinite(number) and number.is_integer():
        return str(int(number))
    return f"{number:g}"


def _png(figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    _pyplot().close(figure)
    return buffer.getvalue()


def palette(models) -> dict[str, str]:
    """One colour per model for every figure of a report (matplotlib's cycle, in sorted model order)."""
    return {model: f"C{i % 10}" for i, model in enumerate(sorted(models))}


STYLES = ("-", "--", ":", "-.")
MARKERS = ("o", "s", "^", "D", "v", "P")


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
    axis.set_xticks(ticks, [f"{number(n / 1024)}k" if n >= 1024 else number(n) for n in ticks])
    axis.minorticks_off()
    axis.set_xlabel("context length (tokens)")


@plain_text
def graph_panels(curves: pd.DataFrame, task: str, colors: dict[str, str]) -> bytes:
    """One task: memory drift, precision, recall and F1 against context length (paper figs 4-7); a colour per
    model, a line style per density (connections per prompt)."""
    from matplotlib.lines import Line2D

    plt = _pyplot()
    figure, axes = plt.subplots(1, 4, figsize=(16, 3.6), sharex=True, layout="constrained")
    rows = curves[curves["task"] == task]
    densities = sorted(rows["connections"].unique())
    style = {d: (STYLES[i % len(STYLES)], MARKERS[i % len(MARKERS)]) for i, d in enumerate(densities)}
    for axis, (metric, title) in zip(axes, GRAPH_METRICS, strict=True):
        for (model, density), group in rows.groupby(["model", "connections"], sort=True):
            group = group.sort_values("length")
            linestyle, marker = style[density]
            line, = axis.plot(group["length"], group[metric], marker=marker, linestyle=linestyle,
                              color=colors.get(str(model)))
            if np.isfinite(group[f"{metric}_lo"].to_numpy(dtype=float)).any():
                axis.fill_between(group["length"], group[f"{metric}_lo"], group[f"{metric}_hi"], alpha=0.06,
                                  color=line.get_color())
        axis.set_title(title)
        axis.set_ylim(-0.02, 1.02)
        _length_axis(axis, rows["length"])
    handles = [Line2D([], [], color=colors.get(str(m)), marker="o", label=str(m))
               for m in sorted(rows["model"].unique())]
    handles += [Line2D([], [], color="grey", linestyle=style[d][0], marker=style[d][1],
                       label=f"{number(d)} per prompt") for d in densities]
    _outside_legend(figure, handles, title="model / connections")
    figure.suptitle(task)
    return _png(figure)


@plain_text
def radar(summary: pd.DataFrame, colors: dict[str, str]) -> bytes:
    """Memory drift, precision, recall and F1 of every model, one polar panel per task."""
    plt = _pyplot()
    labels = [title.split(" (")[0] for _, title in GRAPH_METRICS]
    angles = [2 * math.pi * i / len(labels) for i in range(len(labels))]
    tasks = sorted(summary["task"].unique())
    figure, axes = plt.subplots(1, len(tasks), figsize=(3.6 * len(tasks) + 1.8, 3.8), squeeze=False,
                                subplot_kw={"projection": "polar"}, layout="constrained")
    handles: dict[str, object] = {}
    for axis, task in zip(axes.flat, tasks, strict=True):
        for _, row in summary[summary["task"] == task].sort_values("model").iterrows():
            values = [float(row[metric]) for metric, _ in GRAPH_METRICS]
            color = colors.get(str(row["model"]))
            line, = axis.plot([*angles, angles[0]], [*values, values[0]], marker="o", label=str(row["model"]),
                              color=color)
            handles.setdefault(str(row["model"]), line)
            axis.fill([*angles, angles[0]], [*values, values[0]], alpha=0.08, color=color)
        axis.set_xticks(angles)
        axis.set_xticklabels(labels, fontsize=8)
        axis.set_ylim(0, 1)
        axis.set_rlabel_position(45)  # between the metric names, not on top of one
        axis.tick_params(axis="y", labelsize=7)
        axis.set_title(task, pad=14, fontsize=10)
    _outside_legend(figure, list(handles.values()))
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
                onset = pd.to_numeric(mark["drift_onset"], errors="coerce").iloc[0] if not mark.empty else None
                if onset is not None and pd.notna(onset):  # a chance model's row reads "chance": no onset drawn
                    axis.axvline(float(onset), linestyle=":", color=colors.get(str(model)))
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
    """Find the Origin, one task: accuracy over d (rows) x context length (columns), one panel per model."""
    plt = _pyplot()
    models = sorted(cells["model"].unique()) if "model" in cells else [None]
    ds = sorted(cells["d"].unique())
    lengths = sorted(cells["length"].unique())
    figure, axes = plt.subplots(1, len(models), figsize=(1.2 + (1.0 + 0.8 * len(lengths)) * len(models),
                                                         1.5 + 0.28 * len(ds)), squeeze=False, sharey=True,
                                layout="constrained")
    image = None
    for axis, model in zip(axes.flat, models, strict=True):
        rows = cells if model is None else cells[cells["model"] == model]
        table = rows.pivot_table(index="d", columns="length", values=value, aggfunc="mean").reindex(
            index=ds, columns=lengths)
        image = axis.imshow(table.to_numpy(dtype=float), aspect="auto", vmin=0, vmax=1, cmap="viridis")
        axis.set_xticks(range(len(lengths)), [f"{number(c / 1024)}k" if c >= 1024 else number(c) for c in lengths])
        axis.set_yticks(range(len(ds)), [number(d) for d in ds])
        axis.set_xlabel("context length (tokens)")
        axis.set_title("" if model is None else short_label(str(model)), fontsize=9)
    axes.flat[0].set_ylabel("d")
    figure.suptitle(title, fontsize=10)
    figure.colorbar(image, ax=list(axes.flat), label=value)
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
    _outside_legend(figure, handles)
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
    _outside_legend(figure, handles)
    return _png(figure)


@plain_text
def calibration(bins: pd.DataFrame, title: str) -> bytes:
    """The GLM's calibration (paper 004, figure 10): mean observed outcome against mean prediction per predicted-score
    bin, markers sized by the bin's rows, with the diagonal a calibrated model lies on."""
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(4.8, 4.4), layout="constrained")
    (diagonal,) = axis.plot([0, 1], [0, 1], color="grey", linewidth=0.8, linestyle="--", label="calibrated")
    sizes = 20 + 180 * bins["n"] / max(1, int(bins["n"].max()))
    points = axis.scatter(bins["predicted"], bins["observed"], s=sizes, color="black", zorder=3,
                          label="bins (size: rows)")
    for row in bins.itertuples():
        axis.annotate(str(row.n), (row.predicted, row.observed), textcoords="offset points", xytext=(5, -10),
                      fontsize=7, color="dimgrey")
    axis.set_xlim(0, 1)
    axis.set_ylim(0, 1)
    axis.set_xlabel("mean predicted score")
    axis.set_ylabel("mean observed outcome")
    axis.set_title(title, fontsize=10)
    _outside_legend(figure, [diagonal, points])
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
    _outside_legend(figure, handles)
    return _png(figure)


OUTCOME_COLORS = {"hit_right": "#2b8a3e", "hit_wrong": "#e8590c", "miss": "#adb5bd"}
SYSTEM_COLORS = {"long-context": "C0", "RAG": "C1", "memory": "C2", "Oracle": "C3", "closed book": "C7"}
SYSTEM_MARKERS = {"long-context": "o", "RAG": "s", "memory": "^", "Oracle": "*", "closed book": "x"}


@plain_text
def decomposition_bars(table: pd.DataFrame, title: str) -> bytes:
    """One system family (paper 001, fig. 3): per system a panel, per family/category a horizontal bar stacked as
    hit & right / hit & wrong / miss (shares of its questions)."""
    from matplotlib.patches import Patch

    plt = _pyplot()
    systems = sorted(table["system"].unique())
    columns = min(3, len(systems))
    rows_n = math.ceil(len(systems) / columns)
    labels = sorted({f"{f} / {c}" for f, c in zip(table["family"], table["category"], strict=True)})
    figure, axes = plt.subplots(rows_n, columns, figsize=(4.6 * columns + 1.6, 0.9 + (0.3 * len(labels) + 0.7)
                                                          * rows_n), squeeze=False, sharey=True, layout="constrained")
    for axis, system in zip(axes.flat, systems, strict=False):
        rows = table[table["system"] == system]
        shares = {f"{r.family} / {r.category}": r for r in rows.itertuples()}
        left = np.zeros(len(labels))
        for outcome in ("hit_right", "hit_wrong", "miss"):
            widths = np.array([getattr(shares[label], f"{outcome}_share") if label in shares else 0.0
                               for label in labels])
            axis.barh(range(len(labels)), widths, left=left, color=OUTCOME_COLORS[outcome], height=0.7)
            left += widths
        axis.set_yticks(range(len(labels)), labels, fontsize=8)
        axis.set_ylim(len(labels) - 0.5, -0.5)  # first label on top (set, not inverted: the panels share y)
        axis.set_xlim(0, 1)
        axis.set_xlabel("share of questions", fontsize=8)
        axis.set_title(short_label(str(system)), fontsize=9)
    for axis in list(axes.flat)[len(systems):]:
        axis.set_visible(False)
    handles = [Patch(color=OUTCOME_COLORS[o], label=label) for o, label in
               (("hit_right", "hit & right"), ("hit_wrong", "hit & wrong"), ("miss", "miss"))]
    _outside_legend(figure, handles)
    figure.suptitle(f"{title}: retrieval hit & answer right / hit & wrong / miss", fontsize=10)
    return _png(figure)


def _token_axis(axis) -> None:
    """A log token axis labelled as people write counts ("200", "1k", "16k"), not as mathtext powers (the figures
    draw text literally: ``plain_text``)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_xscale("log")
    axis.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{number(v / 1000)}k" if v >= 1000 else number(v)))
    axis.xaxis.set_minor_formatter(NullFormatter())


@plain_text
def score_tokens(table: pd.DataFrame) -> bytes:
    """Score against mean tokens per question (log x), one point per system, one panel per family; colour and
    marker: the system family."""
    from matplotlib.lines import Line2D

    plt = _pyplot()
    rows = table[table["tokens_per_question"].notna()]
    answering = sorted(rows["answering_model"].astype(str).unique())
    one = answering[0] if len(answering) == 1 else None  # one answering model: named once, in the title
    families = sorted(rows["family"].unique())
    columns = min(3, len(families))
    rows_n = math.ceil(len(families) / columns)
    figure, axes = plt.subplots(rows_n, columns, figsize=(5.0 * columns + 1.8, 3.8 * rows_n), squeeze=False,
                                layout="constrained")
    for axis, family in zip(axes.flat, families, strict=False):
        for i, row in enumerate(rows[rows["family"] == family].itertuples()):
            kind = str(row.system_family)
            axis.scatter(row.tokens_per_question, row.score, color=SYSTEM_COLORS.get(kind, "black"),
                         marker=SYSTEM_MARKERS.get(kind, "o"), s=60, zorder=3)
            name = str(row.system).removesuffix(f" · {one}") if one else str(row.system)
            axis.annotate(short_label(name)[:32], (row.tokens_per_question, row.score), fontsize=7,
                          xytext=(4, (3, -10, 14)[i % 3]), textcoords="offset points")  # near points apart
        _token_axis(axis)
        axis.set_xlabel("tokens per question (log)")
        axis.set_ylabel("score")
        axis.set_title(family, fontsize=10)
        axis.grid(alpha=0.3)
        axis.margins(x=0.3, y=0.12)  # room for the labels right of the last point
    for axis in list(axes.flat)[len(families):]:
        axis.set_visible(False)
    kinds = [k for k in SYSTEM_COLORS if k in set(rows["system_family"])]
    handles = [Line2D([], [], color=SYSTEM_COLORS[k], marker=SYSTEM_MARKERS[k], linestyle="", label=k) for k in kinds]
    _outside_legend(figure, handles, title="system family")
    figure.suptitle("Score vs tokens per question" + (f" (answering model: {one})" if one else ""), fontsize=10)
    return _png(figure)
