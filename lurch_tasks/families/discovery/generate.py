"""Discovery generator: filler prose with a clue and a ciphertext (cipher) or a directive among decoy quotes."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ...core.budget import PromptMeter, prompt_meter, settle_to_budget
from ...core.cells import setup_instance
from ...core.config import config_to_dict
from ...core.context import lurch_difficulty, measure_evidence
from ...core.difficulty import reasoning_depth
from ...core.instance import Instance, instance_id
from ...core.rng import StableRng, canonical_json, derive_seed
from ...core.tokens import get_token_counter, within_budget_tolerance
from ..implicit_hop.filler import SENTENCES, filler_lines
from .cipher import clue_sentence, draw_key, encrypt_word
from .code import VERSION as CODE_VERSION
from .code import CodeModule, build_module
from .config import Cell, CodeCell, DiscoveryConfig
from .directive import DECOYS, DIRECTIVES
from .layout import Insert, Laid, lay_out
from .prompt import CODE_OPEN, HEADS, code_context, render_prompt, render_question
from .words import VOCABULARY, fresh_words, statements

FAMILY = "discovery"
VERSION = "0.2.0"  # 0.2.0: difficulty records reasoning_width and step_count
# The request style is what a matched pair compares: it is left out of the instance seed, so the text and the
# answer are the same in both rows.
COMPARED_KNOBS = ("request",)


@dataclass(frozen=True)
class Plan:
    inserts: tuple[Insert, ...]
    answer_items: tuple[str, ...]
    answer_text: str
    params: dict


def plan_cipher(cell: Cell, rng_seed: int, message_words: int) -> Plan:
    rng = StableRng(derive_seed(rng_seed, "cipher"))
    key = draw_key(cell.method, rng)
    # a word the cipher leaves unchanged (a keyword alphabet fixes its late letters) would show the message in plain
    message = fresh_words(message_words, rng, lambda word: encrypt_word(word, key) != word)
    cipher_line = " ".join(encrypt_word(word, key) for word in message)
    clue, style = clue_sentence(key, rng)
    start = rng.uniform() * (1.0 - cell.distance)
    clue_first = rng.below(2) == 0
    clue_at, cipher_at = (start, start + cell.distance) if clue_first else (start + cell.distance, start)
    inserts = (Insert(clue_at, clue, role="clue"), Insert(cipher_at, cipher_line, block=True, role="ciphertext"))
    params = {"cipher": key.cipher, "shift": key.shift, "keyword": key.keyword, "clue_style": style,
              "clue_fraction": clue_at, "target_fraction": cipher_at, "clue_first": clue_first,
              "ciphertext": cipher_line, "message": message}
    return Plan(inserts, tuple(message), " ".join(message), params)


def plan_directive(rng_seed: int, decoys: int, rank: int) -> Plan:
    """The directive is the ``rank``-th of the decoys + 1 quotes in text order; their depths are seeded uniform."""
    rng = StableRng(derive_seed(rng_seed, "directive"))
    said = statements(decoys + 1, rng)
    gold, others = said[0], said[1:]
    directive = rng.choice(DIRECTIVES).format(s=gold)
    depths = sorted(rng.uniform() for _ in range(decoys + 1))
    # each decoy has a lead-in of its own (repeated lead-ins would single out the directive's as the rare one)
    leads = iter(rng.sample(DECOYS, decoys))
    texts = iter(others)
    inserts = tuple(Insert(depth, directive, role="directive") if k == rank
                    else Insert(depth, next(leads).format(s=next(texts)), role="decoy")
                    for k, depth in enumerate(depths))
    params = {"directive": directive, "statement": gold, "decoy_statements": others, "target_fraction": depths[rank],
              "quote_rank": rank, "quote_fractions": depths}
    return Plan(inserts, (gold,), gold, params)


def quote_rank(cell: Cell, sample: int, decoys: int) -> int:
    """The directive's place among the quotes: every place equally often over a cell's samples (a position
    shortcut then scores chance exactly on a full grid), starting at a seeded place per cell; no single prompt
    tells which."""
    return (sample + derive_seed("quote-rank", cell.length)) % (decoys + 1)


def plan_for(config: DiscoveryConfig, cell: Cell, rng_seed: int, sample: int = 0) -> Plan:
    if config.kind == "cipher":
        return plan_cipher(cell, rng_seed, config.message_words)
    return plan_directive(rng_seed, config.decoys, quote_rank(cell, sample, config.decoys))


def code_seed(rng_seed: int) -> int:
    return derive_seed(rng_seed, "code")


MAX_CODE_FITS = 8  # module builds: the first at budget minus the prompt's overhead, then corrected by the miss


@dataclass(frozen=True)
class Layout:
    """A kind's text in its prompt: the plan, the context and prompt, the gold evidence's character spans in the
    context, and the reasoning graph."""

    plan: Plan
    context: str
    prompt: str
    evidence_chars: list[tuple[int, int]]
    nodes: list[dict]
    edges: list[list[str]]


def fit_code(cell: CodeCell, rng_seed: int, question: str, meter: PromptMeter) -> tuple[CodeModule, str]:
    """The module whose whole prompt (head, fences, request, chat template) is the budget exactly where it can be:
    built at the budget less the rest of the prompt, then rebuilt at a target corrected by the exact count's miss
    (a token or two where the module meets its fences). The closest build at or below the budget is kept."""
    budget = cell.length
    target = budget - meter.count(render_prompt(code_context(""), question, "code"))
    best: tuple[int, CodeModule, str] | None = None
    for _ in range(MAX_CODE_FITS):
        try:
            module = build_module(code_seed(rng_seed), cell.planted, target, meter.counter)
        except ValueError:  # no module of exactly that many tokens (a coarse tokenizer): one token less
            target -= 1
            continue
        prompt = render_prompt(code_context(module.source), question, "code")
        tokens = meter.count(prompt)
        if tokens <= budget and (best is None or tokens > best[0]):
            best = (tokens, module, prompt)
        if tokens == budget:
            break
        target -= tokens - budget
    if best is None or not within_budget_tolerance(best[0], budget):
        raise ValueError(f"context_tokens: {budget} fits no module with this request; allowed: a larger budget")
    return best[1], best[2]


def code_layout(cell: CodeCell, rng_seed: int, question: str, meter: PromptMeter) -> Layout:
    """The module; the planted functions are the evidence. Each is read as slow (one step per function), then
    the answer names them all (depth 1; width = the planted count)."""
    module, prompt = fit_code(cell, rng_seed, question, meter)
    planted = [f for f in module.functions if f.role == "planted"]
    offset = len(CODE_OPEN)
    spans = [(f.span[0] + offset, f.span[1] + offset) for f in planted]
    # what rebuilds the module (the audit measures the rebuilt functions by running them)
    params = {"code_seed": code_seed(rng_seed), "code_version": CODE_VERSION, "module_tokens": module.tokens,
              "planted_kinds": [f.kind for f in planted], "functions": len(module.functions),
              "target_fraction": module.functions.index(planted[0]) / max(len(module.functions) - 1, 1)}
    plan = Plan((), tuple(module.gold), ", ".join(module.gold), params)
    nodes = [{"id": f"e{k}", "kind": "evidence", "text": f.name} for k, f in enumerate(planted)]
    nodes += [{"id": f"s{k}", "kind": "step", "text": f"{f.name}'s cost grows faster than its input"}
              for k, f in enumerate(planted)]
    nodes.append({"id": "answer", "kind": "answer", "text": plan.answer_text})
    edges = [edge for k in range(len(planted)) for edge in ([f"e{k}", f"s{k}"], [f"s{k}", "answer"])]
    return Layout(plan, code_context(module.source), prompt, spans, nodes, edges)


def text_layout(config: DiscoveryConfig, cell: Cell, rng_seed: int, sample: int, question: str,
                meter: PromptMeter) -> Layout:
    plan = plan_for(config, cell, rng_seed, sample)
    laid, prompt = fit(filler_for(rng_seed, cell.length), plan.inserts, question, meter, cell.length)
    roles = [insert.role for insert in plan.inserts]
    gold_roles = ("clue", "ciphertext", "directive")
    spans = sorted(span for span, role in zip(laid.spans, roles, strict=True) if role in gold_roles)
    nodes, edges = reasoning_graph(config.kind, laid, plan)
    plan = Plan(plan.inserts, plan.answer_items, plan.answer_text, {**plan.params, "roles": roles})
    return Layout(plan, laid.context, prompt, spans, nodes, edges)


# Short sentences that only top up a fitted text: a coarse tokenizer (a small byte-level BPE) spends 20-36 tokens on
# each filler sentence, more than the 16-token tolerance, so the last few tokens need finer pieces.
SHORT_SENTENCES = ("It rained.", "Time passed.", "Nobody spoke.", "The bell rang.", "Dogs barked.", "Night fell.",
                   "A door closed.", "Birds sang.", "The tea cooled.", "Snow fell.", "Yes.", "So it went.")
TOP_UP_POOL = (*SENTENCES, *SHORT_SENTENCES)


@lru_cache(maxsize=16)
def sentence_costs(tokenizer: str) -> dict[str, int]:
    """Tokens of every filler and top-up sentence with the space before it: the estimate a fit starts from."""
    counter = get_token_counter(tokenizer)
    return dict(zip(TOP_UP_POOL, counter.count_many([f" {s}" for s in TOP_UP_POOL]), strict=True))


def fit(filler: list[str], inserts: tuple[Insert, ...], question: str, meter: PromptMeter,
        budget: int) -> tuple[Laid, str]:
    """The most filler sentences whose whole prompt stays within ``budget`` tokens: estimated from per-sentence
    costs, then settled with exact counts of the rendered prompt (one count per step). Where one more sentence of
    the stream would overflow but the prompt is still short of the tolerance (a tokenizer whose sentences cost
    30 tokens), the shorter filler sentences top it up (``top_up``)."""
    laid: dict[int, Laid] = {}

    def render(n: int) -> str:
        if n not in laid:
            laid[n] = lay_out(filler, inserts, n)
        return render_prompt(laid[n].context, question)

    base = meter.count(render(0))
    costs = sentence_costs(meter.counter.name)
    spent = np.cumsum([costs[s] for s in filler])
    estimate = int(np.searchsorted(spent, budget - base, side="right"))
    fitted = settle_to_budget(render, meter.count, estimate, budget, 0, len(filler))
    if within_budget_tolerance(fitted.tokens, budget):
        return laid[fitted.blocks], fitted.text
    return top_up(filler[: fitted.blocks], inserts, question, meter, budget, fitted.tokens, laid[fitted.blocks])


TOP_UP_SLACK = 8  # tokens a sentence's own cost may be off by where it joins the text (a paragraph break, a merge)


MAX_TOP_UPS = 8  # sentences added after the fit; each costs at most a few exact counts


def top_up(filler: list[str], inserts: tuple[Insert, ...], question: str, meter: PromptMeter, budget: int,
           tokens: int, laid: Laid) -> tuple[Laid, str]:
    """Add the costliest filler sentence that still fits, by estimate then exact count, until the prompt is within
    tolerance or none fits. Deterministic: candidates in (cost, text) order, descending."""
    costs = sentence_costs(meter.counter.name)
    ranked = sorted(TOP_UP_POOL, key=lambda text: (-costs[text], text))
    prompt, base = render_prompt(laid.context, question), len(filler)
    for _ in range(MAX_TOP_UPS):
        if within_budget_tolerance(tokens, budget):
            break
        gap = budget - tokens
        for text in (t for t in ranked if costs[t] <= gap + TOP_UP_SLACK):
            grown = lay_out([*filler, text], inserts, len(filler) + 1, base)
            grown_prompt = render_prompt(grown.context, question)
            grown_tokens = meter.count(grown_prompt)
            if grown_tokens <= budget:
                filler, laid, prompt, tokens = [*filler, text], grown, grown_prompt, grown_tokens
                break
        else:
            break
    return laid, prompt


def filler_for(rng_seed: int, budget: int) -> list[str]:
    """Enough seeded filler sentences for ``budget`` tokens (every sentence costs at least 6); a prefix of the same
    stream at every length. A sentence never follows itself (a doubled sentence reads as a glitch a model may
    remark on instead of the text)."""
    drawn = filler_lines(budget // 6 + 16, StableRng(derive_seed(rng_seed, "filler")))
    return [s for k, s in enumerate(drawn) if k == 0 or s != drawn[k - 1]]


def generate(config: DiscoveryConfig, seed: int, split: str, index: int, config_name: str) -> Instance:
    """Instance ``index`` of ``split``: a pure function of (family, config, seed, split, index)."""
    setup = setup_instance(FAMILY, config, VOCABULARY, seed, split, index, COMPARED_KNOBS)
    cell = setup.cell
    question = render_question(config.kind, config.request)
    meter = prompt_meter(config.tokenizer, config.chat_template)
    if config.kind == "code":
        layout = code_layout(cell, setup.rng_seed, question, meter)
    else:
        layout = text_layout(config, cell, setup.rng_seed, setup.sample, question, meter)
    plan, context, prompt = layout.plan, layout.context, layout.prompt
    context_start = len(HEADS[config.kind])
    encoding = meter.encode(prompt)
    evidence = measure_evidence(meter.reference_starts(prompt), context_start, len(context), layout.evidence_chars)
    starts = [span["token_start"] for span in evidence.spans]
    separation = starts[-1] - starts[0] if len(starts) > 1 else evidence.context_ref_tokens - starts[0]
    graph = (layout.nodes, layout.edges)
    difficulty = {
        **lurch_difficulty(encoding, context_start, context, cell.length, evidence, reasoning_depth(*graph), graph),
        "kind": config.kind,
        "method": cell.method,
        "distance": getattr(cell, "distance", 0.0),
        "request": config.request,
        "target_position": plan.params["target_fraction"],
        "separation_tokens": separation,
    }
    # items to find: the planted functions, or the one message / statement (every row has every field: lm-eval
    # logs a family's docs with one schema)
    difficulty["planted"] = cell.planted if config.kind == "code" else 1
    params = {
        "rng_seed": setup.rng_seed,
        "cell": cell._asdict(),
        "sample": setup.sample,
        **plan.params,
        "tokenizer": config.tokenizer,
        "chat_template": config.chat_template,
        "config": config_to_dict(config),
    }
    return Instance(
        id=instance_id(config_name, split, index, FAMILY),
        family=FAMILY,
        task=config_name,
        config_name=config_name,
        split=split,
        index=index,
        seed=seed,
        family_version=VERSION,
        config_hash=setup.config_hash,
        source_hash=setup.source_hash,
        context=context,
        question=question,
        prompt=prompt,
        answer_format="free_form",
        # free form as RECON writes it (the report reads key_facts): the message words, the statement or the slow
        # functions' names; the decoy statements are what a directive response must not contain
        answer=canonical_json({"contradicting": plan.params.get("decoy_statements", []),
                               "key_facts": list(plan.answer_items)}),
        answer_text=plan.answer_text,
        options=[],
        answer_items=list(plan.answer_items),
        evidence=list(evidence.spans),
        reasoning_graph={"nodes": layout.nodes, "edges": layout.edges},
        difficulty=difficulty,
        params=canonical_json(params),
        pair_key=setup.pair_key,
    )


def reasoning_graph(kind: str, laid: Laid, plan: Plan) -> tuple[list[dict], list[list[str]]]:
    """Cipher: read the key off the clue, then decrypt the ciphertext with it (depth 2). Directive: read the
    statement off the directive (depth 1)."""
    texts = {insert.role: laid.context[s:e] for insert, (s, e) in zip(plan.inserts, laid.spans, strict=True)}
    if kind == "cipher":
        nodes = [{"id": "e0", "kind": "evidence", "text": texts["clue"]},
                 {"id": "e1", "kind": "evidence", "text": texts["ciphertext"]},
                 {"id": "s1", "kind": "step", "text": "the key the clue names"},
                 {"id": "s2", "kind": "step", "text": "decrypt the ciphertext with the key"},
                 {"id": "answer", "kind": "answer", "text": plan.answer_text}]
        return nodes, [["e0", "s1"], ["s1", "s2"], ["e1", "s2"], ["s2", "answer"]]
    nodes = [{"id": "e0", "kind": "evidence", "text": texts["directive"]},
             {"id": "s1", "kind": "step", "text": "the statement the directive names"},
             {"id": "answer", "kind": "answer", "text": plan.answer_text}]
    return nodes, [["e0", "s1"], ["s1", "answer"]]


__all__ = ["COMPARED_KNOBS", "FAMILY", "VERSION", "generate"]
