"""Discovery family (kinds cipher, directive and code): determinism, exact budgets, solver, chance, matched pairs,
scoring rules, the code kind's gold confirmed by running the module, shortcut audit on slices, goldens."""

import json
from pathlib import Path

import pytest
from offline_tokenizers import tokenizer_specs

from lurch_tasks.core.config import ConfigError
from lurch_tasks.core.generation import generate_row, iter_rows, resolve_task
from lurch_tasks.core.instance import content_hash, schema_errors
from lurch_tasks.core.registry import all_tasks, get_family
from lurch_tasks.core.rng import StableRng
from lurch_tasks.core.shortcuts import audit_task, failures
from lurch_tasks.core.tokens import get_token_counter, within_budget_tolerance
from lurch_tasks.families.discovery.cipher import clue_sentence, decrypt_word, encrypt_word, read_clue
from lurch_tasks.families.discovery.config import DiscoveryConfig
from lurch_tasks.families.discovery.shortcuts import ALL_KEYS

FAMILY = get_family("discovery")
GOLDEN = Path(__file__).parent / "golden" / "discovery.json"
TASKS = [t.name for t in all_tasks() if t.family == "discovery"]
SMALL = {"context_tokens": [512, 1024], "num_samples": 1}
KINDS = ("cipher", "directive", "code")


def _small(name: str, **overrides):
    return resolve_task(name, {**SMALL, **overrides})


def _rows(name: str, **overrides) -> list[dict]:
    task = _small(name, **overrides)
    return list(iter_rows(task, range(task.config.size())))


@pytest.fixture(scope="module")
def tokenizers(tmp_path_factory) -> dict[str, str]:
    return tokenizer_specs(tmp_path_factory.mktemp("tokenizers"))


def test_registered_configs_and_pairs():
    assert TASKS == ["discovery_cipher", "discovery_cipher_request", "discovery_code", "discovery_code_request",
                     "discovery_directive", "discovery_directive_request"]
    assert all(resolve_task(name).in_suite for name in TASKS)


@pytest.mark.parametrize("name", ["discovery_cipher", "discovery_directive", "discovery_code"])
def test_rows_are_sound_and_solved(name):
    """The row audit includes, for code rows, rebuilding the module from its seed and running it: the planted
    functions' operation counts grow at least 10-fold at 4x the input, every other function's at most 6-fold."""
    for row in _rows(name):
        assert not schema_errors(row)
        assert FAMILY.audit(row) == [], row["id"]
        assert FAMILY.score(row, FAMILY.solve(row["prompt"]))["score"] == 1.0
        assert within_budget_tolerance(row["difficulty"]["prompt_tokens"], row["difficulty"]["target_tokens"])


def test_determinism_is_per_index():
    task = _small("discovery_cipher")
    late = generate_row(task, 5)
    for index in (3, 0, 7):
        generate_row(task, index)
    assert generate_row(task, 5) == late
    assert content_hash(generate_row(task, 4)) != content_hash(late)


@pytest.mark.parametrize("kind", KINDS)
def test_request_variants_are_matched_pairs(kind):
    plain, asked = _rows(f"discovery_{kind}"), _rows(f"discovery_{kind}_request")
    shared = ("message", "ciphertext", "cipher", "shift", "keyword", "statement", "directive", "decoy_statements",
              "clue_fraction", "roles", "code_seed", "planted_kinds") + (() if kind == "code" else ("target_fraction",))
    for a, b in zip(plain, asked, strict=True):
        assert a["pair_key"] == b["pair_key"] and a["answer"] == b["answer"]
        pa, pb = json.loads(a["params"]), json.loads(b["params"])
        assert {k: pa.get(k) for k in shared} == {k: pb.get(k) for k in shared}
        # the same filler stream and inserted sentences; the budget fit may keep a sentence or two fewer for the
        # longer request
        assert [a["context"][s["start"]:s["end"]] for s in a["evidence"]] == [
            b["context"][s["start"]:s["end"]] for s in b["evidence"]]
        # the same filler stream and inserted sentences (or functions); the budget fit may keep a sentence or a
        # function fewer for the longer request
        assert abs(len(a["context"]) - len(b["context"])) < 600
        assert a["question"] != b["question"]


def test_random_baseline_is_at_chance():
    for name, chance in (("discovery_cipher", 0.0), ("discovery_directive", 1 / 6)):
        rows = _rows(name, num_samples=12 if "directive" in name else 1)
        mean = sum(FAMILY.score(r, FAMILY.guess(r["prompt"], 0))["score"] for r in rows) / len(rows)
        assert abs(mean - chance) < 0.15, (name, mean)
        assert FAMILY.chance(resolve_task(name).config) == pytest.approx(chance)
    # code: a guess names one function of F, so its expected score is exactly 1/F per row (FAMILY.row_chance)
    rows = _rows("discovery_code", context_tokens=[1024], num_samples=8)
    scores = [FAMILY.score(r, FAMILY.guess(r["prompt"], seed))["score"] for r in rows for seed in range(8)]
    expected = sum(FAMILY.row_chance(r) for r in rows) / len(rows)
    assert abs(sum(scores) / len(scores) - expected) < 0.06
    assert FAMILY.chance(resolve_task("discovery_code").config) is None


@pytest.mark.parametrize("name", ["smollm2", "byte_bpe", "sentencepiece"])
def test_budgets_are_exact_in_other_tokenizers(tokenizers, name):
    for kind in KINDS:
        for chat in (False, True) if name == "smollm2" else (False,):
            sizes = {"context_tokens": [700, 1024]} if kind == "code" else {}
            task = _small(f"discovery_{kind}", tokenizer=tokenizers[name], chat_template=chat, **sizes)
            counter = get_token_counter(tokenizers[name])
            for row in iter_rows(task, range(0, task.config.size(), 3)):
                text = counter.chat_prompt(row["prompt"]) if chat else row["prompt"]
                tokens = counter.count(text)
                assert tokens == row["difficulty"]["prompt_tokens"]
                assert within_budget_tolerance(tokens, row["difficulty"]["target_tokens"]), (kind, chat, tokens)


@pytest.mark.parametrize("cipher", ["caesar", "atbash", "reverse", "keyword"])
def test_ciphers_round_trip_and_clues_name_their_keys(cipher):
    from lurch_tasks.families.discovery.cipher import draw_key

    for seed in range(12):
        rng = StableRng(seed)
        key = draw_key(cipher, rng)
        assert decrypt_word(encrypt_word("qzvhxa", key), key) == "qzvhxa"
        clue, _ = clue_sentence(key, rng)
        assert read_clue(f"Some text. {clue} More text.") == key


def test_cipher_scoring_partial_credit_and_floods():
    row = _rows("discovery_cipher")[0]
    words = row["answer_items"]
    assert FAMILY.score(row, f"The message is: {' '.join(words[:3])}")["score"] == pytest.approx(3 / len(words))
    assert FAMILY.score(row, " ".join(reversed(words)))["score"] == 1.0  # order-insensitive
    params = json.loads(row["params"])
    quoting = f"The line \"{params['ciphertext']}\" decodes to: {' '.join(words)}"
    assert FAMILY.score(row, quoting)["score"] == 1.0
    flood = "\n".join(" ".join(decrypt_word(w, key) for w in params["ciphertext"].split()) for key in ALL_KEYS)
    assert FAMILY.score(row, flood + "\n" + " ".join(words))["score"] == 0.0
    assert FAMILY.score(row, "")["score"] == 0.0


def test_directive_scoring_rejects_every_quote():
    row = _rows("discovery_directive")[0]
    params = json.loads(row["params"])
    statement = row["answer_items"][0]
    assert FAMILY.score(row, statement.upper().rstrip("."))["score"] == 1.0
    assert FAMILY.score(row, "\n".join([statement, *params["decoy_statements"]]))["score"] == 0.0
    assert FAMILY.score(row, params["decoy_statements"][0])["score"] == 0.0


def test_config_errors():
    with pytest.raises(ConfigError, match="kind"):
        DiscoveryConfig(kind="poem")
    with pytest.raises(ConfigError, match="distances"):
        DiscoveryConfig(distances=(1.5,))
    with pytest.raises(ConfigError, match="decoys"):
        DiscoveryConfig(kind="directive", decoys=11)
    with pytest.raises(ConfigError, match="planted"):
        DiscoveryConfig(kind="code", planted=(0,))
    with pytest.raises(ValueError, match="context_tokens|target_tokens"):
        generate_row(resolve_task("discovery_code", {"context_tokens": [256], "planted": [6], "num_samples": 1}), 0)


def test_code_scoring_cancels_wrong_names_and_reads_any_format():
    row = _rows("discovery_code", planted=[2])[0]
    gold = row["answer_items"]
    names = [line[4:line.index("(")] for line in row["context"].splitlines() if line.startswith("def ")]
    wrong = [n for n in names if n not in gold]
    assert FAMILY.score(row, f"**{gold[1].upper()}** and `{gold[0]}()`")["score"] == 1.0
    assert FAMILY.score(row, gold[0].replace("_", "\\_"))["score"] == 0.5
    assert FAMILY.score(row, f"{gold[0]}, {gold[1]}, {wrong[0]}")["score"] == 0.5  # one wrong name cancels one
    assert FAMILY.score(row, " ".join(names))["score"] == 0.0  # the whole module
    review = f"{wrong[0]} is long-winded; {wrong[1]} too.\nFINAL ANSWER: {gold[0]}, {gold[1]}"
    assert FAMILY.score(row, review)["score"] == 1.0  # only the names after the last marker count
    assert FAMILY.score(row, f"{gold[0]}x")["score"] == 0.0  # a longer word is not the name
    metrics = FAMILY.score(row, f"FINAL ANSWER: {gold[0]}, {wrong[0]}")
    assert (metrics["precision"], metrics["recall"], metrics["score"]) == (0.5, 0.5, 0.0)


def test_the_code_solver_reads_source_and_never_runs_it():
    from lurch_tasks.families.discovery.review import slow_functions

    hostile = "def fine(values):\n    import os\n    os.remove('x')\n    return values\n"
    assert slow_functions(hostile) == []  # parsed only
    assert slow_functions("def broken(:\n") == []
    assert slow_functions("x = " + "(" * 100_000 + "1" + ")" * 100_000 + "\n") == []  # past the parser's limits
    slow = "def f(items):\n    seen = []\n    for item in items:\n        if item in seen:\n            pass\n"
    assert slow_functions(slow) == [("f", ["membership test on a list inside a loop"])]


def test_evidence_matches_the_clue_and_ciphertext():
    row = _rows("discovery_cipher")[1]
    params = json.loads(row["params"])
    texts = [row["context"][s["start"]:s["end"]] for s in row["evidence"]]
    assert params["ciphertext"] in texts and any(read_clue(t) is not None for t in texts)
    assert row["difficulty"]["reasoning_depth"] == 2 and 0 < row["difficulty"]["evidence_scope"] < 0.2


@pytest.mark.parametrize("name", ["discovery_cipher", "discovery_directive", "discovery_code"])
def test_shortcut_audit_on_a_slice(name):
    overrides = {"context_tokens": [512], "num_samples": {"discovery_cipher": 2, "discovery_directive": 24,
                                                          "discovery_code": 12}[name]}
    result = audit_task(resolve_task(name, overrides), None)
    assert not failures(result.lines), result.lines


def golden_fingerprints() -> dict:
    """SHA-256 of the first three instances of every registered discovery config."""
    return {
        "family_version": FAMILY.version,
        "configs": {name: [content_hash(r) for r in iter_rows(resolve_task(name), range(3))] for name in TASKS},
    }


def test_golden_fingerprints():
    expected = json.loads(GOLDEN.read_text())
    assert golden_fingerprints() == expected, (
        "generated bytes changed: bump VERSION in lurch_tasks/families/discovery/generate.py and regenerate with "
        "`python scripts/update_golden.py`"
    )


def test_slots_have_exact_chances_and_scores_carry_reasoning_metrics():
    from lurch_tasks.families.discovery import audit_slot, slot_chance

    cipher, directive = _rows("discovery_cipher")[0], _rows("discovery_directive")[0]
    code = _rows("discovery_code", planted=[2])[0]
    assert (audit_slot(cipher), audit_slot(directive), audit_slot(code)) == ("cipher", "directive:6", "code:planted=2")
    assert slot_chance("cipher") == 0.0 and slot_chance("directive:6") == pytest.approx(1 / 6)
    assert slot_chance("code:planted=2") is None  # the row's own chance: one function of F named, 1/F on average
    from lurch_tasks.scoring.headline import chance

    functions = json.loads(code["params"])["functions"]
    assert FAMILY.row_chance(code) == chance(code) == pytest.approx(1 / functions)
    assert FAMILY.row_chance(cipher) is None and chance(cipher) == 0.0
    empty = FAMILY.score(directive, "")
    assert empty["unparsed"] == 1.0 and empty["score"] == 0.0
    thought = FAMILY.score(directive, f"<think>{directive['answer_items'][0]}</think>I have nothing to add.")
    assert thought["score"] == 0.0 and thought["unparsed"] == 0.0  # the statement only in the thinking


def test_a_code_row_whose_module_is_not_its_seeds_is_refused_and_never_run():
    from lurch_tasks.families.discovery.audit import rebuilt_module

    row = _rows("discovery_code", planted=[1])[0]
    assert rebuilt_module(row) is not None
    tampered = {**row, "context": row["context"].replace("return", "return  ", 1)}
    assert rebuilt_module(tampered) is None
    assert any("not the one its seed builds" in p for p in FAMILY.audit(tampered))
