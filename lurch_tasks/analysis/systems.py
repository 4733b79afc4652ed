"""The systems RECON compares (issue 31): long-context models, retrieval-augmented (RAG) and memory-augmented
models (`lurch-rag`), and the Oracle, side by side in `lurch report`.

A run's system is read from its results file (``config.model`` and ``config.model_args``). A `lurch-rag` run is
labelled from its settings ("RAG hybrid+rerank k=50 · lurch-simulated", "Memory facts k=20 · hf:SmolLM2",
"Oracle retrieval · lurch-solver" for ``retriever=gold``); any other run keeps its model label and is a long-context
system, except its RECON docs of the ``oracle`` variant (the structured case, the paper's Oracle) and of the
``closedbook`` variant (no case), which are systems of their own.

Per question (paper 001, section 4.3, figure 3): *hit* when what the model read held every gold evidence unit
(``full_coverage`` == 1, or a doc with no gold evidence: nothing to find), *right* when the answer has full credit
(``accuracy`` == 1: strict correctness; a partial-credit answer, e.g. some graph pairs, an MCQ-multiple subset or a
near ordering, counts as wrong). Long-context and Oracle systems read everything, so every question is a hit; a
closed-book question is a miss. The Oracle gap (table 3) is the Oracle's accuracy minus the system's for the same
answering model; the winner per category is the system family whose best system has the highest mean score.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

LONG_CONTEXT, RAG, MEMORY, ORACLE, CLOSED_BOOK = "long-context", "RAG", "memory", "Oracle", "closed book"
SYSTEM_FAMILIES = (LONG_CONTEXT, RAG, MEMORY, ORACLE, CLOSED_BOOK)
RAG_MODEL = "lurch-rag"
SEP = " · "
# Per-doc accounts `lurch-rag` adds to each logged sample (harness.tasks.process_results); the frame holds them as
# ``sys_<name>`` so they never meet a doc's own difficulty fields (RECON's ``prompt_tokens`` is the full prompt's).
ACCOUNT_KEYS = ("prompt_tokens", "completion_tokens", "retrieved_units", "coverage", "full_coverage", "dropped_units")
OUTCOMES = ("hit_right", "hit_wrong", "miss")
OUTCOME_LABELS = {"hit_right": "hit & right", "hit_wrong": "hit & wrong", "miss": "miss"}
RECON = "recon"


@dataclass(frozen=True)
class System:
    label: str  # the report's model label
    family: str  # one of SYSTEM_FAMILIES
    answering: str  # the model that writes the answers (lurch-rag's inner model)


# ------------------------------------------------------------------------------------------------ reading runs


def split_args(text: str) -> dict[str, object]:
    """``key=value,...`` as lm-eval reads it (``simple_parse_args_string``'s value typing), except that a double-
    or single-quoted value keeps its commas (``inner_args="pretrained=x,gguf_file=y"``)."""
    from lm_eval.utils import handle_arg_string

    parts, current, quote = [], "", ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == ",":
            parts.append(current)
            current = ""
            continue
        current += char
    parts.append(current)
    pairs = (part.split("=", 1) for part in parts if part.strip())
    return {key.strip(): handle_arg_string(value.strip()) if isinstance(value, str) else value
            for key, value in (pair if len(pair) == 2 else (pair[0], "") for pair in pairs)}


def model_args_dict(args: str | Mapping) -> dict[str, object]:
    return dict(args) if isinstance(args, Mapping) else split_args(args)


def labelled(name: str, args: Mapping) -> str:
    """``name`` with its ``pretrained`` folder's name, as ``runs.model_label`` labels a model."""
    pretrained = str(args.get("pretrained", "") or "").strip().strip("\"'")
    return f"{name}:{Path(pretrained).name}" if pretrained else name


def rag_settings(args: Mapping) -> tuple[dict[str, object], dict[str, object]]:
    """A `lurch-rag` run's settings (``harness.rag.parse_settings``, defaults filled) and any keys this version does
    not know (added by a newer `lurch-rag`, e.g. a memory's own settings), read as written. A value this version
    refuses (e.g. a newer retriever) is read as written too: the report labels a run, it does not re-run it."""
    from ..harness.rag import ARGUMENTS, RagSettings, parse_settings

    known = {key: value for key, value in args.items() if key in ARGUMENTS}
    extra = {str(key): value for key, value in args.items() if key not in ARGUMENTS}
    try:
        settings = asdict(parse_settings(known))
    except ValueError:
        settings = {**asdict(RagSettings(inner=str(known.get("inner", "")))), **known}
        if str(settings.get("k")) == "all":
            settings["k"] = None
    return settings, extra


def inner_label(settings: Mapping) -> str:
    inner_args = str(settings.get("inner_args") or "").strip().strip("\"'")
    return labelled(str(settings.get("inner") or "?"), split_args(inner_args) if inner_args else {})


# the core settings a label names in its head; every other one that differs from its default goes in brackets
_HEAD = frozenset({"inner", "inner_args", "retriever", "k", "rerank", "multi_query", "memory"})


def rag_system(args: str | Mapping) -> System:
    """A `lurch-rag` run's system: "RAG <retriever>[+rerank][+mq] k=<k>", "Memory <name> k=<k>" or "Oracle
    retrieval" (``retriever=gold``: the gold evidence units), then secondary settings that differ from their
    default, then " · <inner model>"."""
    from ..harness.rag import RagSettings

    settings, extra = rag_settings(model_args_dict(args))
    defaults = asdict(RagSettings(inner=""))
    inner = inner_label(settings)
    k = "all" if settings.get("k") is None else settings.get("k")
    memory = str(settings.get("memory") or "none")
    if str(settings.get("retriever")) == "gold":
        head, family = "Oracle retrieval", ORACLE
    elif memory != "none":
        head, family = f"Memory {memory} k={k}", MEMORY
    else:
        stages = [str(settings.get("retriever"))]
        stages += ["rerank"] if str(settings.get("rerank", "none")) != "none" else []
        stages += ["mq"] if str(settings.get("multi_query", "none")) != "none" else []
        head, family = f"RAG {'+'.join(stages)} k={k}", RAG
    secondary = {key: value for key, value in settings.items()
                 if key not in _HEAD and key in defaults and str(value) != str(defaults[key])}
    secondary |= {key: value for key, value in {**settings, **extra}.items() if key not in defaults}
    if family == ORACLE:  # the gold units, whatever k or re-rank say
        secondary = {key: value for key, value in secondary.items() if not key.startswith("rerank")}
    note = f" ({', '.join(f'{key}={value}' for key, value in sorted(secondary.items()))})" if secondary else ""
    return System(f"{head}{note}{SEP}{inner}", family, inner)


def run_system(model: str, args: str | Mapping, label: str) -> System:
    """The system of a run whose lm-eval model is ``model`` (``label``: its report label when not lurch-rag)."""
    if model == RAG_MODEL:
        return rag_system(args)
    return System(label, LONG_CONTEXT, label)


def account_of(record: Mapping) -> dict[str, float]:
    """The `lurch-rag` account of one logged sample: the ``ACCOUNT_KEYS`` it holds as finite numbers."""
    out = {}
    for key in ACCOUNT_KEYS:
        value = record.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            out[key] = float(value)
    return out


# ------------------------------------------------------------------------------------------------- per question


def has_systems(frame: pd.DataFrame) -> bool:
    """Whether the runs include a `lurch-rag` run (the section's condition)."""
    return "system_family" in frame and bool(frame["system_family"].isin((RAG, MEMORY, ORACLE)).any())


def categories(frame: pd.DataFrame) -> pd.Series:
    """RECON's question category; the task for every other family (its tasks are its natural categories)."""
    if "category" not in frame:
        return frame["task"].astype(str)
    return pd.Series(np.where(frame["family"] == RECON, frame["category"].astype(str), frame["task"].astype(str)),
                     index=frame.index)


def system_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with ``system``, ``system_family``, ``answering_model``, ``category`` (``categories``),
    ``outcome`` (``OUTCOMES``) and ``tokens`` / ``tokens_source`` per question. A long-context run's RECON docs of
    the oracle variant are the system "Oracle (case)", those of the closed-book variant "Closed book"."""
    rows = frame.copy()
    if "system_family" not in rows:
        rows["system_family"] = LONG_CONTEXT
        rows["answering_model"] = rows["model"]
    rows["system"] = rows["model"].astype(str)
    variant = rows["variant"] if "variant" in rows else pd.Series("", index=rows.index)
    plain = rows["system_family"] == LONG_CONTEXT
    for name, family, title in (("oracle", ORACLE, "Oracle (case)"), ("closedbook", CLOSED_BOOK, "Closed book")):
        chosen = plain & (variant == name)
        rows.loc[chosen, "system_family"] = family
        rows.loc[chosen, "system"] = title + SEP + rows.loc[chosen, "model"].astype(str)
    rows["category"] = categories(rows)
    rows["outcome"] = outcomes(rows)
    rows["tokens"], rows["tokens_source"] = tokens_per_question(rows)
    return rows


def outcomes(rows: pd.DataFrame) -> pd.Series:
    """hit_right / hit_wrong / miss per question (see the module docstring)."""
    coverage = rows["sys_full_coverage"] if "sys_full_coverage" in rows else pd.Series(np.nan, index=rows.index)
    hit = ~(coverage == 0) & (rows["system_family"] != CLOSED_BOOK)  # NaN (no gold, or read everything): a hit
    right = rows["accuracy"].astype(float) >= 1.0
    return pd.Series(np.where(~hit, "miss", np.where(right, "hit_right", "hit_wrong")), index=rows.index)


def tokens_per_question(rows: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """What each question cost in tokens: the inner model's prompt (+ completion when recorded) for a `lurch-rag`
    doc; else the doc's prompt (RECON records ``prompt_tokens``) or its context (``context_tokens``)."""
    nan = pd.Series(np.nan, index=rows.index)
    recorded = rows.get("sys_prompt_tokens", nan).astype(float)
    completion = rows.get("sys_completion_tokens", nan).astype(float)
    recorded = recorded + completion.fillna(0.0)
    prompt = rows.get("prompt_tokens", nan).astype(float)
    context = rows.get("context_tokens", nan).astype(float)
    tokens = recorded.fillna(prompt).fillna(context)
    source = np.where(recorded.notna(), "recorded", np.where(prompt.notna(), "doc prompt",
                                                             np.where(context.notna(), "doc context", "")))
    return tokens, pd.Series(source, index=rows.index)


# ------------------------------------------------------------------------------------------------------ tables

KEYS = ["system", "system_family", "answering_model", "family", "category"]


def decomposition(rows: pd.DataFrame) -> pd.DataFrame:
    """Per system x family x category: n, the counts and shares of hit & right / hit & wrong / miss, the questions
    answered right despite a miss (``miss_right``: partial evidence sufficed, or a guess), score and accuracy."""
    table = []
    for key, group in rows.groupby(KEYS, sort=True):
        row = dict(zip(KEYS, key, strict=True))
        row["n"] = len(group)
        for outcome in OUTCOMES:
            row[outcome] = int((group["outcome"] == outcome).sum())
        for outcome in OUTCOMES:
            row[f"{outcome}_share"] = row[outcome] / row["n"]
        row["miss_right"] = int(((group["outcome"] == "miss") & (group["accuracy"] >= 1.0)).sum())
        row["score"] = float(group["score"].mean())
        row["accuracy"] = float(group["accuracy"].mean())
        table.append(row)
    return pd.DataFrame(table)


def oracle_gap(rows: pd.DataFrame) -> pd.DataFrame:
    """Per non-Oracle system x family x category: its accuracy, the Oracle's for the same answering model (RECON's
    structured case: "Oracle (case)"; any family: the gold-evidence run, "Oracle retrieval"), and the gaps
    (Oracle - system). NaN where that Oracle was not run."""
    accuracy = rows.groupby(["system", "family", "category"], sort=True)["accuracy"].mean()
    table = []
    for key, group in rows[rows["system_family"] != ORACLE].groupby(KEYS, sort=True):
        row = dict(zip(KEYS, key, strict=True))
        answering = row.pop("answering_model")  # the label ends with it: a narrower table
        row["n"] = len(group)
        row["accuracy"] = float(group["accuracy"].mean())
        family, category = row["family"], row["category"]
        for name, title in (("case", "Oracle (case)"), ("retrieval", "Oracle retrieval")):
            oracle = accuracy.get((title + SEP + str(answering), family, category), math.nan)
            row[f"oracle_{name}_accuracy"] = float(oracle)
            row[f"gap_{name}"] = float(oracle) - row["accuracy"]
        table.append(row)
    return pd.DataFrame(table)


def score_tokens(rows: pd.DataFrame) -> pd.DataFrame:
    """Per system x family: Score, Accuracy, Abstention (RECON only: the other families have no abstain option),
    mean tokens per question and where they were read."""
    table = []
    for key, group in rows.groupby(["system", "system_family", "answering_model", "family"], sort=True):
        row = dict(zip(["system", "system_family", "answering_model", "family"], key, strict=True))
        row["n"] = len(group)
        row["score"] = float(group["score"].mean())
        row["accuracy"] = float(group["accuracy"].mean())
        row["abstention"] = float(group["abstain_rate"].mean()) if row["family"] == RECON else math.nan
        row["tokens_per_question"] = float(group["tokens"].mean()) if group["tokens"].notna().any() else math.nan
        row["tokens_source"] = ", ".join(sorted(set(group["tokens_source"]) - {""}))
        table.append(row)
    return pd.DataFrame(table)


def wins(rows: pd.DataFrame) -> pd.DataFrame:
    """Per answering model x family x category: the system family whose best system scores highest (the Oracles are
    the reference, not contenders), that system and score, the runner-up family's best, and the margin (NaN when one
    system family alone answered that category). Systems compete only with the same answering model: a better
    reader would otherwise pass for a better retriever."""
    contenders = rows[rows["system_family"] != ORACLE]
    table = []
    for (answering, family, category), group in contenders.groupby(["answering_model", "family", "category"],
                                                                   sort=True):
        scores = group.groupby(["system_family", "system"], sort=True)["score"].mean()
        best = scores.groupby(level=0).max()
        best = best.loc[sorted(best.index, key=lambda kind: (-best[kind], _rank(kind)))]  # ties: family order
        winner = str(best.index[0])
        top = scores.loc[winner]
        row = {"answering_model": answering, "family": family, "category": category, "winner": winner,
               "best_system": str(top.idxmax()), "score": float(best.iloc[0]),
               "runner_up": str(best.index[1]) if len(best) > 1 else "",
               "runner_up_score": float(best.iloc[1]) if len(best) > 1 else math.nan,
               "margin": float(best.iloc[0] - best.iloc[1]) if len(best) > 1 else math.nan}
        table.append(row)
    return pd.DataFrame(table)


def _rank(family: str) -> int:
    return SYSTEM_FAMILIES.index(family) if family in SYSTEM_FAMILIES else len(SYSTEM_FAMILIES)


def win_lines(table: pd.DataFrame, family: str, answering: str) -> tuple[str, ...]:
    """One family's wins for one answering model as card lines: "chain: RAG by +0.120 over long-context (RAG bm25
    k=5 · m, score 0.812)"."""
    lines = []
    for row in table[(table["family"] == family) & (table["answering_model"] == answering)].itertuples():
        best = f"{row.best_system}, score {row.score:.3f}"
        if not row.runner_up:
            lines.append(f"{row.category}: {row.winner}, the only system family run ({best})")
        elif row.margin == 0:
            lines.append(f"{row.category}: tie, {row.winner} = {row.runner_up} ({best})")
        else:
            lines.append(f"{row.category}: {row.winner} by {row.margin:+.3f} over {row.runner_up} ({best})")
    return tuple(lines)


_WORD = re.compile(r"\s+")


def short_system(label: str, width: int = 40) -> str:
    """A system label for a figure: whitespace folded, cut to ``width`` characters."""
    text = _WORD.sub(" ", label)
    return text if len(text) <= width else text[:width - 3] + "..."


def in_system_order(table: pd.DataFrame) -> pd.DataFrame:
    """Rows by system family (``SYSTEM_FAMILIES``' order: long-context, RAG, memory, Oracle, closed book), then as
    they came (sorted by system, family, category)."""
    if table.empty or "system_family" not in table:
        return table
    rank = table["system_family"].map({name: i for i, name in enumerate(SYSTEM_FAMILIES)}).fillna(len(SYSTEM_FAMILIES))
    return table.assign(_rank=rank).sort_values("_rank", kind="stable").drop(columns="_rank").reset_index(drop=True)


# ----------------------------------------------------------------------------------------------------- section


def systems_section(frame: pd.DataFrame, options) -> object | None:
    """The report's systems section, only when the runs include a `lurch-rag` run."""
    from . import plots
    from .report import Block, Figure, Section, _slug

    if not has_systems(frame):
        return None
    rows = system_rows(frame)
    decomposed, gaps, costs = (in_system_order(build(rows)) for build in (decomposition, oracle_gap, score_tokens))
    won = wins(rows)
    figures = [Figure(f"systems_decomposition_{_slug(family)}",
                      f"{family} systems: each question as hit & right / hit & wrong / miss, per family and category "
                      "(share of questions).", plots.decomposition_bars(decomposed[decomposed["system_family"]
                                                                                     == family], family))
               for family in SYSTEM_FAMILIES if (decomposed["system_family"] == family).any()]
    if costs["tokens_per_question"].notna().any():
        figures.append(Figure("systems_score_tokens", "Score against tokens per question (log scale), one point per "
                              "system, one panel per family; colour: system family.",
                              plots.score_tokens(costs)))
    pairs = sorted(set(zip(won["family"], won["answering_model"], strict=True)))
    blocks = tuple(Block(f"{family} · {answering}", win_lines(won, family, answering)) for family, answering in pairs)
    missing_oracle = gaps[["oracle_case_accuracy", "oracle_retrieval_accuracy"]].isna().all(axis=1).any()
    notes = ["oracle gap: — where no Oracle run of that answering model covers the family and category (RECON: "
             "run recon_oracle_* with the same model; any family: lurch-rag retriever=gold)"] if missing_oracle else []
    if not (decomposed["system_family"] == ORACLE).any():
        notes.append("no Oracle in these runs: the gap table has no Oracle column filled")
    return Section(
        "systems", "Systems: long-context, RAG, memory and the Oracle",
        "Each run as a system (issue 31; paper 001, section 4.3): long-context models, lurch-rag's retrieval (RAG) "
        "and memory systems, and the Oracle (RECON's structured case, recon_oracle; or retriever=gold: exactly the "
        "gold evidence). A question is a hit when what the answering model read held every gold evidence unit "
        "(full coverage; a doc without gold evidence, a negative control, counts as a hit; long-context and Oracle "
        "systems read everything, closed book nothing), and right when the answer has full credit (accuracy 1: a "
        "partial-credit answer, some graph pairs or an MCQ-multiple subset, counts as wrong; miss_right counts the "
        "misses answered right anyway). Categories: RECON's question category, the task elsewhere. Oracle gap: the "
        "Oracle's accuracy minus the system's for the same answering model. Tokens per question: the inner model's "
        "prompt (+ completion when recorded) for lurch-rag, else the doc's prompt (RECON) or context (reference "
        "tokenizer). Cards: per family, answering model and category, the system family whose best system scores "
        "highest, and its margin over the next family (systems compete only with the same answering model; the "
        "Oracles are the reference, not contenders).",
        tables=(("systems_decomposition", decomposed), ("systems_oracle_gap", gaps), ("systems_score_tokens", costs),
                ("systems_wins", won)),
        figures=tuple(figures), notes=tuple(notes), blocks=blocks)
