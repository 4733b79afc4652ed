"""Attention by discovery (DESIGN 4.5, seed 003 section 6): long texts where nothing in the request says what
matters. Kind "cipher": a clue names a cipher's key and a line of ciphertext sits elsewhere; kind "directive": one
sentence says which statement unlocks a reward; kind "code": a few deliberately inefficient functions among
efficient look-alikes in a long module. Each has a matched "request" variant that says what to look for."""

from __future__ import annotations

import json

from ...core.difficulty import length_bin
from ...core.registry import Deferred, Family, Task, register_family, register_task
from .config import DiscoveryConfig
from .generate import COMPARED_KNOBS, FAMILY, VERSION, generate
from .words import VOCABULARY

CITATION = """@article{findtheorigin2024,
  title   = {Challenging LLMs Beyond Information Retrieval: Reasoning Degradation with Long Context Windows},
  author  = {Fraga, Natanael},
  year    = {2024},
  note    = {Section 6: attention by discovery}
}"""


def score(doc: dict, output: str) -> dict[str, float]:
    """The kind's score of the response with any thinking stripped, plus ``truncated`` / ``unparsed`` (a response
    with no word in it is unreadable)."""
    from ...scoring.reasoning import reasoning_metrics, strip_doc_output  # imported when a process scores
    from .scoring import response_words
    from .scoring import score as score_doc

    stripped = strip_doc_output(doc, output if isinstance(output, str) else "")
    return {**score_doc(doc, stripped.answer), **reasoning_metrics(stripped, bool(response_words(stripped.answer)))}


def bin_keys(doc: dict) -> dict[str, str]:
    difficulty = doc["difficulty"]
    keys = {"length": str(length_bin(difficulty["target_tokens"], difficulty["context_tokens"])),
            "method": difficulty["method"]}
    if difficulty["kind"] == "code":
        return {**keys, "planted": f"planted={difficulty['planted']}"}
    return {**keys, "distance": f"distance={difficulty['distance']:g}"}


def bin_names(config: DiscoveryConfig) -> list[str]:
    lengths = [str(n) for n in sorted(set(config.context_tokens))]
    if config.kind == "code":
        return lengths + ["code"] + [f"planted={p}" for p in sorted(set(config.planted))]
    distances = config.distances if config.kind == "cipher" else (0.0,)
    return lengths + list(config.methods()) + [f"distance={d:g}" for d in distances]


def chance(config: DiscoveryConfig) -> float | None:
    """A uniform pick: one quote of decoys + 1 (directive); no paragraph holds the message (cipher). Code: one
    function of the module, whose expected F1 depends on the module's size (measured, not exact: None)."""
    if config.kind == "code":
        return None
    return 1.0 / (config.decoys + 1) if config.kind == "directive" else 0.0


DIRECTIVE_TOKENS = 256  # a response that restates one sentence, with room for a preamble
CODE_TOKENS = 1024  # a short review (a line or two per function named), then the FINAL ANSWER line
CIPHER_TOKENS, TOKENS_PER_WORD = 256, 128  # letter-by-letter decoding of each message word, then the answer line


def audit_slot(doc: dict) -> str:
    """"cipher", "directive:<quotes>" (the directive and its decoys; chance known exactly) or
    "code:planted=<n>" (chance measured: a guess's F1 depends on how many functions are planted)."""
    kind = doc["difficulty"]["kind"]
    if kind == "directive":
        return f"directive:{len(json.loads(doc['answer'])['contradicting']) + 1}"
    if kind == "code":
        return f"code:planted={doc['difficulty']['planted']}"
    return kind


def row_chance(doc: dict) -> float | None:
    """Code rows: a guess names one function of F; it scores 1/planted when it names a planted one (planted/F of
    the time), so 1/F on average, exactly. Other rows: None (their slot's chance)."""
    if doc["difficulty"]["kind"] != "code":
        return None
    return 1.0 / json.loads(doc["params"])["functions"]


def slot_chance(slot: str) -> float | None:
    """A uniform guess: no paragraph holds a cipher's message (0); one quote of n is the directive's (1/n)."""
    kind, _, quotes = slot.partition(":")
    if kind == "directive" and quotes.isdigit() and int(quotes) > 0:
        return 1.0 / int(quotes)
    return 0.0 if kind == "cipher" else None


def max_gen_toks(config: DiscoveryConfig) -> int:
    """Directive: 256. Cipher: 256 plus 128 per message word (1024 for the default 6 words). Code: 1024."""
    if config.kind == "code":
        return CODE_TOKENS
    if config.kind == "cipher":
        return CIPHER_TOKENS + TOKENS_PER_WORD * config.message_words
    return DIRECTIVE_TOKENS


CARD_SECTION = """Three kinds, each with a matched pair: the discovery request only asks the model to respond to
(or review) the text; the `_request` twin says what is hidden. Rows of a pair share `pair_key`, the text's
material and the answer.

- **cipher**: a clue sentence names a cipher's key indirectly (a number word, a sum, the letters of a word, a
  keyword); a paragraph of ciphertext sits at a seeded distance. Score: the message words recovered (any order)
  less half a word per other made-up word offered.
- **directive**: one sentence says which quoted statement, given as the response, unlocks a reward; decoy quotes
  with other lead-ins surround it. Score: 1 when the response has the statement and no decoy.
- **code**: a long module with 1-3 deliberately inefficient functions among efficient look-alikes of the same
  shape. Score: (right names - wrong names) / planted names, at least 0; `precision`, `recall`, `f1` beside it.
  `lurch validate` rebuilds every module from its seed and runs it: each planted function's operation count grows
  at least 10-fold at 4x the input, every other function's at most 6-fold.

Chance (the headline's): 0 for a cipher, 1/(decoys + 1) for a directive, 1/F for a module of F functions."""


def token_target(cell) -> int:
    return cell.length


register_family(
    Family(
        rag_units=Deferred(f"{__name__}.prompt:RAG_UNITS"),
        card_section=CARD_SECTION,
        name=FAMILY,
        version=VERSION,
        config_type=DiscoveryConfig,
        generate=generate,
        audit=Deferred(f"{__name__}.audit:audit"),
        solve=Deferred(f"{__name__}.baselines:solve"),
        guess=Deferred(f"{__name__}.baselines:guess"),
        score=score,
        bin_keys=bin_keys,
        bin_names=bin_names,
        group="discovery",
        source_files=VOCABULARY,
        citation=CITATION,
        description=(
            "Attention by discovery: a long text hides a ciphertext whose key a clue elsewhere names (cipher), or a "
            "sentence saying which statement unlocks a reward (directive); a long module hides a few needlessly slow "
            "functions among efficient look-alikes (code). The request says nothing about it (discovery) or says what "
            "to look for (request, the matched pair)."
        ),
        compared_knobs=COMPARED_KNOBS,
        max_gen_toks=max_gen_toks,
        token_target=token_target,
        chance=chance,
        audit_slot=audit_slot,
        slot_chance=slot_chance,
        row_chance=row_chance,
        shortcuts=Deferred(f"{__name__}.shortcuts:SHORTCUTS"),
        probes=Deferred(f"{__name__}.shortcuts:PROBES"),
        learned_probe=Deferred(f"{__name__}.shortcuts:LEARNED_PROBE"),
        knob_properties=(
            ("distances", "`distance` (share of the text between clue and ciphertext) and `separation_tokens` (their "
             "token distance); LURCH `evidence_dispersion` follows it."),
            ("ciphers", "`method` and the clue style in params; `reasoning_depth` is 2 for every cipher."),
            ("planted", "`planted` (code kind: slow functions in the module), the evidence spans' count."),
            ("context_tokens", "`context_tokens`, `evidence_scope`."),
            ("request", "matched pairs: rows with equal `pair_key` share the text and the answer."),
        ),
    )
)

_LENGTHS = (1024, 2048, 4096, 8192)
# 96 rows each: 4 ciphers x 3 distances x 4 lengths x 2 samples; the directive has one cell per length; code has
# 3 planted counts x 4 lengths x 8 samples
_SAMPLES = {"cipher": 2, "directive": 24, "code": 8}
_WHAT = {"cipher": "a clue elsewhere names the key of a line of ciphertext",
         "directive": "one sentence names the statement that unlocks a reward, among decoy quotes",
         "code": "1-3 deliberately inefficient functions among efficient look-alikes in a long module"}
_ASKED = {"discovery": "the request does not say what is hidden", "request": "the request says what to look for"}
for _kind in ("cipher", "directive", "code"):
    for _request, _suffix in (("discovery", ""), ("request", "_request")):
        register_task(Task(f"discovery_{_kind}{_suffix}", FAMILY,
                           DiscoveryConfig(kind=_kind, request=_request, context_tokens=_LENGTHS,
                                           num_samples=_SAMPLES[_kind]),
                           f"{_WHAT[_kind]}; {_ASKED[_request]}; contexts of 1k-8k tokens", in_suite=True))

__all__ = ["DiscoveryConfig", "generate", "score"]
