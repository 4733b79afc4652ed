"""Discovery family (kinds cipher and directive): determinism, exact budgets, solver, chance, matched pairs,
scoring rules, shortcut audit on slices, goldens."""

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


def _small(name: str, **overrides):
    return resolve_task(name, {**SMALL, **overrides})


def _rows(name: str, **overrides) -> list[dict]:
    task = _small(name, **overrides)
    return list(iter_rows(task, range(task.config.size())))


@pytest.fixture(scope="module")
def tokenizers(tmp_path_factory) -> dict[str, str]:
    return tokenizer_specs(tmp_path_factory.mktemp("tokenizers"))


def test_registered_configs_and_pairs():
    assert TASKS == ["discovery_cipher", "discovery_cipher_request", "discovery_directive",
                     "discovery_directive_request"]
    assert all(not resolve_task(name).in_suite for name in TASKS)  # the lead adds the umbrella with kind 3


@pytest.mark.parametrize("name", ["discovery_cipher", "discovery_directive"])
def test_rows_are_sound_and_solved(name):
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


@pytest.mark.parametrize("kind", ["cipher", "directive"])
def test_request_variants_are_matched_pairs(kind):
    plain, asked = _rows(f"discovery_{kind}"), _rows(f"discovery_{kind}_request")
    shared = ("message", "ciphertext", "cipher", "shift", "keyword", "statement", "directive", "decoy_statements",
              "clue_fraction", "target_fraction", "roles")
    for a, b in zip(plain, asked, strict=True):
        assert a["pair_key"] == b["pair_key"] and a["answer"] == b["answer"]
        pa, pb = json.loads(a["params"]), json.loads(b["params"])
        assert {k: pa.get(k) for k in shared} == {k: pb.get(k) for k in shared}
        # the same filler stream and inserted sentences; the budget fit may keep a sentence or two fewer for the
        # longer request
        assert [a["context"][s["start"]:s["end"]] for s in a["evidence"]] == [
            b["context"][s["start"]:s["end"]] for s in b["evidence"]]
        assert abs(len(a["context"]) - len(b["context"])) < 600
        assert a["question"] != b["question"]


def test_random_baseline_is_at_chance():
    for name, chance in (("discovery_cipher", 0.0), ("discovery_directive", 1 / 6)):
        rows = _rows(name, num_samples=12 if "directive" in name else 1)
        mean = sum(FAMILY.score(r, FAMILY.guess(r["prompt"], 0))["score"] for r in rows) / len(rows)
        assert abs(mean - chance) < 0.15, (name, mean)
        assert FAMILY.chance(resolve_task(name).config) == pytest.approx(chance)


@pytest.mark.parametrize("name", ["smollm2", "byte_bpe", "sentencepiece"])
def test_budgets_are_exact_in_other_tokenizers(tokenizers, name):
    for kind in ("cipher", "directive"):
        for chat in (False, True) if name == "smollm2" else (False,):
            task = _small(f"discovery_{kind}", tokenizer=tokenizers[name], chat_template=chat)
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


def test_config_errors_and_the_kind_3_seam():
    with pytest.raises(ConfigError, match="kind"):
        DiscoveryConfig(kind="poem")
    with pytest.raises(ConfigError, match="distances"):
        DiscoveryConfig(distances=(1.5,))
    with pytest.raises(ConfigError, match="decoys"):
        DiscoveryConfig(kind="directive", decoys=11)
    with pytest.raises(NotImplementedError, match="code"):
        generate_row(resolve_task("discovery_cipher", {**SMALL, "kind": "code"}), 0)


def test_evidence_matches_the_clue_and_ciphertext():
    row = _rows("discovery_cipher")[1]
    params = json.loads(row["params"])
    texts = [row["context"][s["start"]:s["end"]] for s in row["evidence"]]
    assert params["ciphertext"] in texts and any(read_clue(t) is not None for t in texts)
    assert row["difficulty"]["reasoning_depth"] == 2 and 0 < row["difficulty"]["evidence_scope"] < 0.2


@pytest.mark.parametrize("name", ["discovery_cipher", "discovery_directive"])
def test_shortcut_audit_on_a_slice(name):
    overrides = {"context_tokens": [512], "num_samples": 2 if "cipher" in name else 24}
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
    assert (audit_slot(cipher), audit_slot(directive)) == ("cipher", "directive:6")
    assert slot_chance("cipher") == 0.0 and slot_chance("directive:6") == pytest.approx(1 / 6)
    empty = FAMILY.score(directive, "")
    assert empty["unparsed"] == 1.0 and empty["score"] == 0.0
    thought = FAMILY.score(directive, f"<think>{directive['answer_items'][0]}</think>I have nothing to add.")
    assert thought["score"] == 0.0 and thought["unparsed"] == 0.0  # the statement only in the thinking
