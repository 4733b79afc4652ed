"""`lurch-rag`: a retrieval-augmented wrapper around any lm-eval model (issue 31).

For each request it reads the doc lm-eval attaches (our whole Instance record), cuts the context into the family's
units (``Family.rag_units``; ``rag_units`` keeps the generic chunker), ranks them against the question (with its
options: RECON's paper retrieves with both), keeps the top k, and sends the inner model the family's own prompt
re-rendered with those units in context order. When the inner model's window is known (``inner_window``, or what
``window.model_window`` reads from ``inner_args``) and prompt + the task's max_gen_toks would not fit, the
lowest-ranked units are dropped until it does (one warning line per batch). Per doc it records what the inner model
read and wrote: ``prompt_tokens`` and ``completion_tokens`` (the inner model's tokenizer when it has one, else the
reference tokenizer), ``retrieved_units``, ``coverage`` (share of the gold evidence units sent) and ``full_coverage``
(all of them), ``dropped_units`` (with a known window), and the ``lurch_rag`` record (settings, units sent, written
queries). They travel on the answer (``rag_units.RagAnswer``) to ``process_results``, so they are in lm-eval's table
and in each logged sample.

    lurch eval --model lurch-rag --model_args inner=lurch-solver,retriever=hybrid,k=20 --tasks recon_all

Retrievers share ``analysis.retrieval`` with `lurch diagnose` (same rankers, same query, same units for line
families, so the same coverage). ``hybrid`` fuses BM25 and dense rankings by reciprocal-rank fusion (constant 60);
``gold`` is the Oracle (exactly the gold evidence units, k ignored); ``rerank=dense`` re-orders the first stage's top
``rerank_depth`` with the dense model: a bi-encoder re-rank (no cross-encoder ships offline);
``multi_query=template`` ranks with deterministic query variants (the question, the question with each option, the
entities alone) and ``multi_query=model`` with ``mq_n`` queries the inner model writes, both fused by RRF. Ties
always fall to unit order.

``ContextSource`` is the seam: the retriever is one implementation, ``MemorySource`` the other (``memory=facts``:
``lurch_tasks.memory``'s built-in fact store ingests each context once, a RECON case's questions share it, and each
question recalls at most k units; coverage is measured on the units it returns; ``memory=mem0``: Mem0 offline, its
settings given as ``memory_<name>=<value>``, e.g. ``memory_infer=false``).
"""

from __future__ import annotations

import functools
import importlib.util
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Protocol

from lm_eval.api.model import LM
from lm_eval.api.registry import register_model
from tqdm.auto import tqdm

from ..analysis.retrieval import bm25_scores, dense_scores, query_of, rrf_fuse, stable_order
from ..memory import IngestCache, MemorySystem, context_key, make_memory, setting_names
from .rag_units import RECORD_KEY, RagAnswer, Units, anchored_coverage, render, units_of

RETRIEVERS = ("bm25", "dense", "hybrid", "gold")  # gold: the Oracle, exactly the doc's gold evidence units
RERANKERS = ("none", "dense")
MULTI_QUERY = ("none", "template", "model")  # model: queries written by the inner model
MEMORIES = ("none", "facts", "mem0")  # facts: lurch_tasks.memory.FactStore (built in); mem0: Mem0Memory (offline)
MEMORY_PREFIX = "memory_"  # memory_<name>=<value> in --model_args is the memory's own setting <name>
ARGUMENTS = ("inner", "inner_args", "retriever", "k", "rerank", "rerank_depth", "multi_query", "mq_n", "chunk_words",
             "memory", "inner_window")
BASELINES = ("lurch-solver", "lurch-random", "lurch-simulated")  # answer from the prompt alone: cannot write queries


@dataclass(frozen=True)
class RagSettings:
    inner: str
    inner_args: str = ""
    retriever: str = "bm25"
    k: int | None = 20  # None: every unit (the exactness check's k = all)
    rerank: str = "none"
    rerank_depth: int = 50
    multi_query: str = "none"
    mq_n: int = 3  # multi_query=model: how many queries the inner model writes
    chunk_words: int = 200  # the word-window chunker's window, for families with no natural unit
    memory: str = "none"  # a memory system instead of the retriever: ingest each context once, recall per question
    inner_window: int | None = None  # the inner model's window in tokens when inner_args cannot tell (e.g. a baseline)
    memory_settings: tuple[tuple[str, str], ...] = ()  # (name, value) for make_memory, sorted by name


def settings_record(settings: RagSettings) -> dict:
    """The settings as JSON keeps them (the samples, the results' ``lurch_rag``): memory settings as a mapping."""
    return {**asdict(settings), "memory_settings": dict(settings.memory_settings)}


def _choice(field: str, value: object, allowed: Sequence[str]) -> str:
    if str(value) not in allowed:
        raise ValueError(f"model_args: {field}={value!r} is not allowed; allowed: {', '.join(allowed)}")
    return str(value)


def _positive(field: str, value: object, all_ok: bool = False) -> int | None:
    text = str(value).strip()
    if all_ok and text == "all":
        return None
    if isinstance(value, bool) or not text.isdigit() or int(text) < 1:
        extra = " or all" if all_ok else ""
        raise ValueError(f"model_args: {field}={value!r} is not allowed; allowed: a positive integer{extra}")
    return int(text)


def parse_settings(args: dict) -> RagSettings:
    """``--model_args`` of lurch-rag, validated: every error is one line naming the field, the value and what is
    allowed."""
    unknown = sorted(key for key in set(args) - set(ARGUMENTS) if not str(key).startswith(MEMORY_PREFIX))
    if unknown:
        raise ValueError(f"model_args: {unknown[0]!r} is not an argument of lurch-rag; allowed: {', '.join(ARGUMENTS)}")
    inner = str(args.get("inner") or "")
    if not inner or inner == "lurch-rag":
        raise ValueError(f"model_args: inner={inner!r} is not allowed; allowed: a registered lm-eval model other than "
                         "lurch-rag, e.g. inner=lurch-solver or inner=hf")
    inner_args = args.get("inner_args", "")
    if isinstance(inner_args, dict):
        inner_args = ",".join(f"{key}={value}" for key, value in inner_args.items())
    multi_query = _choice("multi_query", args.get("multi_query", "none"), MULTI_QUERY)
    if multi_query == "model" and inner in BASELINES:
        raise ValueError(f"model_args: multi_query='model' is not allowed with inner={inner!r} (a baseline writes no "
                         "queries); allowed: multi_query=template|none")
    window = args.get("inner_window")
    return RagSettings(
        inner=inner,
        inner_args=str(inner_args or "").strip().strip("\"'"),
        retriever=_choice("retriever", args.get("retriever", "bm25"), RETRIEVERS),
        k=_positive("k", args.get("k", 20), all_ok=True),
        rerank=_choice("rerank", args.get("rerank", "none"), RERANKERS),
        rerank_depth=_positive("rerank_depth", args.get("rerank_depth", 50)) or 50,
        multi_query=multi_query,
        mq_n=_positive("mq_n", args.get("mq_n", 3)) or 3,
        chunk_words=_positive("chunk_words", args.get("chunk_words", 200)) or 200,
        memory=(memory := _choice("memory", args.get("memory", "none"), MEMORIES)),
        inner_window=None if window in (None, "") else _positive("inner_window", window),
        memory_settings=memory_settings_of(memory, args),
    )


def memory_settings_of(memory: str, args: dict) -> tuple[tuple[str, str], ...]:
    """The ``memory_<name>=<value>`` arguments as (name, value), checked against what ``memory`` accepts (and, for
    Mem0, that the library is installed) so a typo fails on one line before the inner model loads."""
    given = {str(key)[len(MEMORY_PREFIX):]: str(value) for key, value in args.items()
             if str(key).startswith(MEMORY_PREFIX)}
    if memory == "none":
        if given:
            raise ValueError(f"model_args: {MEMORY_PREFIX}{sorted(given)[0]} needs a memory system; allowed: "
                             f"memory={' or memory='.join(MEMORIES[1:])} with it, or no {MEMORY_PREFIX}* argument")
        return ()
    allowed = setting_names(memory)
    for name in sorted(given):
        if name not in allowed:
            raise ValueError(f"model_args: {MEMORY_PREFIX}{name} is not a setting of memory={memory}; allowed: "
                             + ", ".join(MEMORY_PREFIX + a for a in allowed))
    if memory == "mem0":
        if importlib.util.find_spec("mem0") is None:
            raise ValueError("model_args: memory=mem0 needs the mem0ai library: pip install 'lurch-tasks[memory]'")
        from ..memory.mem0_local import Mem0Config, check_offline

        try:
            check_offline(Mem0Config.from_settings(given))
        except (TypeError, ValueError) as error:
            raise ValueError(f"model_args: {error}") from None
    return tuple(sorted(given.items()))


# --- queries ---------------------------------------------------------------------------------------------------

_QUOTED = re.compile(r'"([^"\n]+)"')
_NAME = re.compile(r"\b[A-Z][\w'-]*(?: [A-Z][\w'-]*)*")
_NOT_NAMES = {"Question", "Questions", "What", "Which", "Who", "Where", "When", "How", "The", "A", "An", "In", "On",
              "Of", "If", "Day", "Options", "Items", "Consider", "List", "Give", "Choose", "Answer", "Reason", "Put",
              "Name", "Write", "Think", "Work", "Finally", "First", "Second", "Third", "Then", "Two"}


def question_stem(question: str) -> str:
    """The question without its option list and answer line."""
    stem = query_of(question)
    for header in ("\nOptions:", "\nItems:"):
        stem = stem.split(header)[0]
    return stem


def entity_query(question: str) -> str:
    """The quoted words and capitalized names of the question, in order, once each."""
    stem = question_stem(question)
    found = _QUOTED.findall(stem) + [m for m in _NAME.findall(stem) if m not in _NOT_NAMES]
    return " ".join(dict.fromkeys(found))


def queries_for(doc: dict, settings: RagSettings, written: Sequence[str] = ()) -> list[str]:
    """The base query is `lurch diagnose`'s (question and options, no answer line); multi_query=template adds the
    question with each option and the entities alone; multi_query=model adds the queries the inner model ``written``
    (the base query stays first: the re-rank scores against it)."""
    base = query_of(doc["question"])
    if settings.multi_query == "model":
        return list(dict.fromkeys([base, *written]))
    if settings.multi_query == "none":
        return [base]
    stem = question_stem(doc["question"])
    variants = [base, *(f"{stem}\n{option}" for option in doc.get("options") or []), entity_query(doc["question"])]
    return [q for q in dict.fromkeys(variants) if q.strip()]


# multi_query=model: one short instruction per question, answered greedily by the inner model
QUERY_INSTRUCTION = ("Write {n} different short search queries that would find the passages needed to answer the "
                     "question below. Write one query per line and nothing else.\n\nQuestion: {question}\n\nQueries:")
QUERY_GEN_KWARGS = {"until": ["\n\n\n"], "max_gen_toks": 96, "do_sample": False, "temperature": 0.0}
QUERY_MAX_CHARS = 200  # a written query longer than this is cut (at a word boundary)
_LIST_MARK = re.compile(r"^\s*(?:[-*\u2022]|\d+[.):]|[Qq]uery\s*\d*\s*:)\s*")


def query_prompt(doc: dict, n: int) -> str:
    question = question_stem(doc["question"])
    options = doc.get("options") or []
    if options:
        question += "\nOptions: " + "; ".join(map(str, options))
    return QUERY_INSTRUCTION.format(n=n, question=question.strip())


def parse_queries(text: str, n: int) -> list[str]:
    """At most ``n`` queries, one per line: list marks and quotes stripped, each cut to ``QUERY_MAX_CHARS``, empty
    lines, headers (a line ending in a colon) and repeats (case-insensitive) dropped."""
    found: dict[str, str] = {}
    for line in str(text).splitlines():
        query = _LIST_MARK.sub("", line).strip().strip("\"'`").strip()
        if len(query) > QUERY_MAX_CHARS:  # cut at a word boundary when one is near the end, else mid-word
            head = query[:QUERY_MAX_CHARS]
            query = head.rsplit(" ", 1)[0] if " " in head[QUERY_MAX_CHARS // 2:] else head
        if query.endswith(":"):  # a header the model echoed ("Queries:", "Options:"), not a query
            continue
        if query and query.lower() not in found:
            found[query.lower()] = query
        if len(found) == n:
            break
    return list(found.values())


# --- ranking ---------------------------------------------------------------------------------------------------


def first_stage(texts: list[str], queries: list[str], retriever: str) -> list[list[int]]:
    """A full ranking of the units per query."""
    if retriever == "bm25":
        return [stable_order(row) for row in bm25_scores(texts, queries)]
    if retriever == "dense":
        return [stable_order(row) for row in dense_scores(texts, queries)]
    lexical, semantic = first_stage(texts, queries, "bm25"), first_stage(texts, queries, "dense")
    return [rrf_fuse(pair, len(texts)) for pair in zip(lexical, semantic, strict=True)]


def rank_units(texts: list[str], queries: list[str], settings: RagSettings) -> list[int]:
    """Every unit, best first: the first stage per query, fused over queries, then the optional re-rank."""
    rankings = first_stage(texts, queries, settings.retriever)
    ranking = rankings[0] if len(rankings) == 1 else rrf_fuse(rankings, len(texts))
    if settings.rerank == "dense":
        depth = settings.rerank_depth
        scores = dense_scores(texts, [queries[0]])[0]
        head = sorted(ranking[:depth], key=lambda unit: (-scores[unit], unit))
        ranking = head + ranking[depth:]
    return ranking


# --- the context source seam (a retriever or a memory system) -------------------------------------------------


class ContextSource(Protocol):
    """What the wrapper needs to build one prompt: the context text the inner model reads for ``doc``, and the
    units it drew on, best first (None when the source is not unit-based, e.g. a memory's summary)."""

    def context_for(self, doc: dict, units: Units) -> tuple[str, list[int] | None]: ...


@dataclass(frozen=True)
class Retriever:
    """The ranked units (best first, so a window check drops the lowest-ranked), or with ``retriever=gold`` the
    doc's gold evidence units in context order (k ignored: the Oracle). ``written``: the inner model's queries for
    this doc (multi_query=model)."""

    settings: RagSettings
    written: tuple[str, ...] = ()

    def context_for(self, doc: dict, units: Units) -> tuple[str, list[int]]:
        if self.settings.retriever == "gold":
            top = units.gold(doc.get("evidence") or [])
            return units.join(top), top
        ranking = rank_units(list(units.texts), queries_for(doc, self.settings, self.written), self.settings)
        top = ranking if self.settings.k is None else ranking[:self.settings.k]
        return units.join(top), top


class MemorySource:
    """A memory system as the context source: each context is ingested once (``IngestCache``: a RECON case's questions
    share one memory), then the question recalls at most k stored texts. A memory that keeps units verbatim
    (``FactStore``, Mem0 with ``infer=false``) maps them back to context units by identity, so coverage is measured as
    for a retriever; one that writes its own memories (Mem0 with ``infer=true``) sends those texts, and its coverage
    counts the units whose ``add`` stored each recalled memory (``recall_with_origins``: provenance, not content)."""

    def __init__(self, settings: RagSettings, factory: Callable[[], MemorySystem]) -> None:
        self.settings = settings
        self.cache = IngestCache(factory)
        self.ingests: dict[str, dict[str, float]] = {}  # context key -> ingest cost (CPU and wall seconds, units)
        self.memories: dict[str, MemorySystem] = {}

    def memory_for(self, units: Units) -> tuple[MemorySystem, dict[str, float]]:
        """The context's memory, ingesting it (timed: process CPU and wall seconds) the first time it is seen."""
        key = context_key(units.texts)
        if key not in self.ingests:
            cpu, wall = time.process_time(), time.perf_counter()
            self.memories[key] = self.cache.memory_for(units.texts)
            self.ingests[key] = {"units": float(len(units.texts)), "cpu_seconds": time.process_time() - cpu,
                                 "wall_seconds": time.perf_counter() - wall}
        return self.memories[key], self.ingests[key]

    def context_for(self, doc: dict, units: Units) -> tuple[str, list[int]]:
        memory, _ = self.memory_for(units)
        k = len(units.texts) if self.settings.k is None else self.settings.k
        query = " ".join(queries_for(doc, self.settings))
        if getattr(memory, "verbatim", True):
            chosen = units_holding(units, memory.recall(query, k))
            return units.join(chosen), chosen
        hits = memory.recall_with_origins(query, k)  # type: ignore[attr-defined]
        return units.separator.join(text for _, text in hits), sorted({origin for origin, _ in hits if origin >= 0})

    def account(self, units: Units) -> dict[str, float]:
        """Per doc: the ingest cost of its context (every question of a case carries its case's, so the mean over
        docs is the cost per case)."""
        _, cost = self.memory_for(units)
        return {"ingest_cpu_seconds": cost["cpu_seconds"], "ingest_wall_seconds": cost["wall_seconds"]}

    def describe_context(self, units: Units) -> dict:
        """One context's ingest cost and its memory's own ``describe()`` (the per-doc record)."""
        memory, cost = self.memory_for(units)
        return {"context": context_key(units.texts)[:16], **cost, **memory.describe()}

    def describe(self) -> dict:
        """The memory's settings and, per ingested context, its ingest cost and the memory's own ``describe()``
        (Mem0: memories stored, LLM calls and tokens, JSON answers)."""
        contexts = [{"context": key[:16], **cost, **self.memories[key].describe()}
                    for key, cost in self.ingests.items()]
        return {"memory": self.settings.memory, "memory_settings": dict(self.settings.memory_settings),
                "contexts": contexts}


def units_holding(units: Units, texts: Sequence[str]) -> list[int]:
    """The indices of the units whose text is one of ``texts`` (a repeated text takes its next unused copy)."""
    free: dict[str, list[int]] = {}
    for index, text in enumerate(units.texts):
        free.setdefault(text, []).append(index)
    chosen = [free[text].pop(0) for text in texts if free.get(text)]
    return sorted(chosen)


def memory_factory(name: str, settings: Sequence[tuple[str, str]] = ()) -> Callable[[], MemorySystem]:
    """A fresh memory per context (``lurch_tasks.memory.make_memory``) with the run's ``memory_*`` settings."""
    return functools.partial(make_memory, name, **dict(settings))


def augment(doc: dict, source: ContextSource, chunk_words: int = 200) -> tuple[str, dict[str, float]]:
    """The doc's prompt re-rendered with what ``source`` selects, and its ``account`` (no token count)."""
    units = units_of(doc, chunk_words)
    context, chosen = source.context_for(doc, units)
    return render(doc, context), sent_account(doc, units, chosen, context, source)


def sent_account(doc: dict, units: Units, kept: list[int] | None, sent: str, source: ContextSource) -> dict[str, float]:
    """Everything one doc records about what was sent (no token counts): the units' ``account``, the header-anchored
    recall of the text ``sent`` and, for a memory, its ingest cost."""
    extra = source.account(units) if isinstance(source, MemorySource) else {}
    return {**account(doc, units, kept), **anchored_coverage(doc, units, sent), **extra}


def account(doc: dict, units: Units, chosen: list[int] | None) -> dict[str, float]:
    """``retrieved_units``, ``coverage`` and ``full_coverage`` of one doc (coverage only where it has gold units)."""
    out: dict[str, float] = {}
    if chosen is None:
        return out
    out["retrieved_units"] = float(len(set(chosen)))
    gold = units.gold(doc.get("evidence") or [])
    if gold:
        held = len(set(gold) & set(chosen))
        out["coverage"] = held / len(gold)
        out["full_coverage"] = float(held == len(gold))
    return out


def keep_fitting(chosen: list[int], fits: Callable[[list[int]], bool]) -> list[int]:
    """The longest head of ``chosen`` (best first) whose prompt ``fits``: all of it when it fits, else found by
    bisection (prompts grow with every unit kept), possibly none."""
    if fits(chosen):
        return chosen
    low, high = 0, len(chosen) - 1  # the answer lies in [low, high]; chosen[:low] fits or low == 0
    while low < high:
        middle = (low + high + 1) // 2
        if fits(chosen[:middle]):
            low = middle
        else:
            high = middle - 1
    return chosen[:low]


@dataclass(frozen=True)
class Prepared:
    """One rewritten request and what its doc recorded before the inner model answered."""

    request: object
    account: dict
    dropped: int


@register_model("lurch-rag")
class RagLM(LM):
    """Retrieval-augmented wrapper: see the module docstring."""

    # named through **memory_settings: lm-eval hands model arguments to the tasks' metadata too, whose check reads this
    KEYWORD_ARGUMENTS = tuple(MEMORY_PREFIX + name for memory in MEMORIES[1:] for name in setting_names(memory))

    def __init__(self, inner: str = "", inner_args: str = "", retriever: str = "bm25", k: int | str = 20,
                 rerank: str = "none", rerank_depth: int | str = 50, multi_query: str = "none", mq_n: int | str = 3,
                 chunk_words: int | str = 200, memory: str = "none", inner_window: int | str | None = None,
                 additional_config: dict | None = None, **memory_settings: str) -> None:
        super().__init__()
        from lm_eval.api.registry import get_model

        self.settings = parse_settings({"inner": inner, "inner_args": inner_args, "retriever": retriever, "k": k,
                                        "rerank": rerank, "rerank_depth": rerank_depth, "multi_query": multi_query,
                                        "mq_n": mq_n, "chunk_words": chunk_words, "memory": memory,
                                        "inner_window": inner_window, **memory_settings})
        try:
            inner_class = get_model(self.settings.inner)
        except Exception:
            raise ValueError(f"model_args: inner={self.settings.inner!r} is not a model lm-eval registers; allowed: "
                             "hf, vllm, local-completions, lurch-solver, lurch-random, ...") from None
        self.inner = inner_class.create_from_arg_string(self.settings.inner_args, additional_config or {})
        self.source: ContextSource = (Retriever(self.settings) if self.settings.memory == "none" else
                                      MemorySource(self.settings, memory_factory(self.settings.memory,
                                                                                  self.settings.memory_settings)))
        self.window = inner_window_of(self.settings)
        self.chat = False  # lm-eval applies a chat template to this run's prompts (then the query prompts get it too)

    @classmethod
    def create_from_arg_string(cls, arg_string: str, additional_config: dict | None = None):
        from lm_eval.utils import simple_parse_args_string

        return cls.create_from_arg_obj(simple_parse_args_string(arg_string) if arg_string else {}, additional_config)

    @classmethod
    def create_from_arg_obj(cls, arg_dict: dict, additional_config: dict | None = None):
        from .models import _refuse_seed

        _refuse_seed(arg_dict)
        parse_settings(arg_dict)  # fail on a typo before the inner model loads
        extra = {key: value for key, value in (additional_config or {}).items() if value is not None}
        return cls(**arg_dict, additional_config=extra)

    def record(self) -> dict:
        """The settings every doc of this run was retrieved with; with a memory system, also what it ingested
        (``MemorySource.describe``: per context, the ingest cost and the memory's own ``describe()``)."""
        out = settings_record(self.settings)
        if isinstance(self.source, MemorySource):
            out["memory_system"] = self.source.describe()
        return out

    def count_tokens(self, text: str) -> int:
        encode = getattr(self.inner, "tok_encode", None)
        if callable(encode):
            try:
                return len(encode(text))
            except Exception:  # an inner model whose tokenizer wants other arguments: fall back
                pass
        from ..core.tokens import reference_counter

        return reference_counter().count(text)

    def source_for(self, written: Sequence[str]) -> ContextSource:
        if written and isinstance(self.source, Retriever):
            return Retriever(self.settings, tuple(written))
        return self.source

    def prepare(self, request, written: Sequence[str] = ()) -> Prepared:
        """The request with the doc's prompt replaced by the retrieval-augmented one (inside any chat template), cut
        to the inner model's window: the lowest-ranked units are dropped until prompt + max_gen_toks fits."""
        import copy

        doc = request.doc
        sent, *rest = request.args
        if doc["prompt"] not in sent:
            raise ValueError(f"lurch-rag: the request for doc {doc['id']!r} does not hold the doc's prompt verbatim "
                             "(few-shot or a system prompt?); allowed: zero-shot lurch tasks")
        units = units_of(doc, self.settings.chunk_words)
        context, chosen = self.source_for(written).context_for(doc, units)

        def request_text(kept: list[int] | None) -> str:
            return sent.replace(doc["prompt"], render(doc, context if kept is None else units.join(kept)), 1)

        kept = chosen
        unit_based = chosen is not None and context == units.join(chosen)  # a rewriting memory sends its own texts
        if self.window is not None and unit_based:
            gen_kwargs = rest[0] if rest and isinstance(rest[0], dict) else {}
            budget = self.window.tokens - int(gen_kwargs.get("max_gen_toks") or DEFAULT_MAX_GEN_TOKS)
            kept = keep_fitting(list(chosen), lambda head: self.count_tokens(request_text(head)) <= budget)
        sent_context = units.join(kept) if unit_based else context  # a rewriting memory's own texts are what it sends
        prompt = request_text(kept if unit_based else None)
        dropped = 0 if chosen is None or kept is None else len(chosen) - len(kept)
        accounted: dict = {"prompt_tokens": float(self.count_tokens(prompt)),
                           **sent_account(doc, units, kept, sent_context, self.source)}
        if self.window is not None:
            accounted["dropped_units"] = float(dropped)
        accounted[RECORD_KEY] = self.doc_record(kept, written, dropped, units)
        new = copy.copy(request)
        new.arguments = (prompt, *rest)
        return Prepared(new, accounted, dropped)

    def doc_record(self, kept: list[int] | None, written: Sequence[str], dropped: int, units: Units) -> dict:
        """How this doc was answered, for the samples: the settings, the units sent (context order), and when they
        apply the queries the inner model wrote, the units the window check dropped, and that gold ignores k."""
        sent = None if kept is None else sorted(set(kept))
        record: dict = {"settings": settings_record(self.settings), "units": sent}
        if isinstance(self.source, MemorySource):
            record["memory"] = self.source.describe_context(units)
        if self.settings.multi_query == "model":
            record["queries"] = list(written)
        if self.window is not None:
            record["dropped_units"] = dropped
        if self.settings.retriever == "gold" and self.settings.memory == "none":
            record["k_ignored"] = True
        return record

    def write_queries(self, requests) -> list[list[str]]:
        """multi_query=model: ``mq_n`` queries per request, written by the inner model in one greedy batch."""
        from lm_eval.api.instance import Instance

        asks = []
        for index, request in enumerate(requests):
            text = query_prompt(request.doc, self.settings.mq_n)
            if self.chat:
                text = self.inner.apply_chat_template([{"role": "user", "content": text}], True)
            asks.append(Instance("generate_until", request.doc, (text, dict(QUERY_GEN_KWARGS)), index,
                                 ("lurch-rag queries", index, 1)))
        written = self.inner.generate_until(asks, disable_tqdm=True) if asks else []
        return [parse_queries(text, self.settings.mq_n) for text in written]

    def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
        written = (self.write_queries(requests) if self.settings.multi_query == "model"
                   else [[] for _ in requests])
        prepared = [self.prepare(r, w) for r, w in
                    zip(tqdm(requests, disable=disable_tqdm, desc="lurch-rag retrieval"), written, strict=True)]
        self.warn_dropped(prepared)
        answers = self.inner.generate_until([p.request for p in prepared], disable_tqdm=disable_tqdm) if prepared \
            else []
        return [RagAnswer(answer, {**p.account, "completion_tokens": float(self.count_tokens(str(answer)))})
                for answer, p in zip(answers, prepared, strict=True)]

    def warn_dropped(self, prepared: list[Prepared]) -> None:
        cut = [p.dropped for p in prepared if p.dropped]
        if cut and self.window is not None:
            from .window import warn

            warn(f"lurch-rag: {len(cut)} of {len(prepared)} docs did not fit the inner model's {self.window.tokens}-"
                 f"token window ({self.window.source}) with max_gen_toks: dropped {sum(cut)} lowest-ranked units in "
                 "all (each doc's dropped_units)")

    def loglikelihood(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError("lurch-rag only answers generate_until tasks")

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError("lurch-rag only answers generate_until tasks")

    # chat templates are the inner model's: lm-eval asks the wrapper, which asks the inner model
    def apply_chat_template(self, chat_history, add_generation_prompt: bool = True) -> str:
        self.chat = True
        return self.inner.apply_chat_template(chat_history, add_generation_prompt)

    @property
    def tokenizer_name(self) -> str:
        return self.inner.tokenizer_name

    def chat_template(self, chat_template: bool | str = False) -> str | None:
        self.chat = self.chat or bool(chat_template)
        return self.inner.chat_template(chat_template)


DEFAULT_MAX_GEN_TOKS = 256  # lm-eval's own default when a request names none


def inner_window_of(settings: RagSettings):
    """The inner model's window (``window.ModelWindow``): ``inner_window`` when given, else what ``window.model_window``
    reads from its ``inner_args`` (``max_length``, an hf model's config), else None (our baselines have none)."""
    from .window import ModelWindow, inner_model_args, model_window

    if settings.inner_window is not None:
        return ModelWindow(settings.inner_window, "lurch-rag inner_window")
    return model_window(inner_model_args({"inner_args": settings.inner_args}))
