"""The discovery family's inefficient-code generator: determinism, valid modules at exact budgets, gold verified
by counting operations, no surface shortcut between planted functions and their twins, robust name scoring."""

from __future__ import annotations

import ast
from functools import cache

import pytest

from lurch_tasks.core.tokens import reference_counter
from lurch_tasks.families.discovery import code

GOLD_SEEDS = range(20)
SEPARABILITY_SEEDS = range(40)
SMALL = 1200  # tokens: the smallest comfortable module with three planted pairs


@cache
def module(seed: int, n_planted: int, tokens: int = SMALL) -> code.CodeModule:
    return code.build_module(seed, n_planted, tokens, reference_counter())


def test_same_seed_same_bytes_and_seeds_differ():
    first = code.build_module(7, 2, SMALL, reference_counter())
    assert first == code.build_module(7, 2, SMALL, reference_counter())
    assert first.source != module(8, 2).source
    assert first.gold != module(8, 2).gold


@pytest.mark.parametrize("tokens", [600, 2000, 6000])
def test_valid_module_at_exact_budget(tokens):
    built = module(3, 2, tokens)
    ast.parse(built.source)
    assert built.tokens == tokens == reference_counter().count(built.source)


def test_exact_budget_with_smollm2s_own_tokenizer():
    """A tokenizer whose count of the joined module is not the sum of its pieces: settled by exact counts."""
    from offline_tokenizers import smollm2_gguf

    from lurch_tasks.core.tokens import get_token_counter

    counter = get_token_counter(str(smollm2_gguf()))
    for seed, tokens in ((1, 900), (2, 2500)):
        built = code.build_module(seed, 1 + seed, tokens, counter)
        assert built.tokens == tokens == counter.count(built.source)
        ast.parse(built.source)


def test_spans_names_and_roles():
    built = module(5, 3)
    assert len(set(built.names)) == len(built.names)
    for function in built.functions:
        text = built.source[function.span[0]:function.span[1]]
        assert text.startswith(f"def {function.name}(")
        assert ast.parse(text).body[0].name == function.name
    roles = [function.role for function in built.functions]
    assert roles.count("planted") == 3
    assert built.gold == tuple(f.name for f in built.functions if f.role == "planted")
    # look-alikes (role distractor) are efficient versions of kinds that can be planted; plain ones are not
    assert {f.kind for f in built.functions if f.role == "distractor"} <= set(code.KINDS)
    assert not {f.kind for f in built.functions if f.role == "plain"} & set(code.KINDS)


def test_extra_distractors_are_efficient_functions_of_other_kinds():
    built = code.build_module(4, 2, SMALL, reference_counter(), extra_distractors=3)
    planted = {f.kind for f in built.functions if f.role == "planted"}
    twins = {f.kind for f in built.functions if f.role == "distractor"}
    assert len(twins - planted) >= 3
    growth = code.measure(built)
    assert code.verified_gold(built) == built.gold
    assert all(growth[f.name] <= code.EFFICIENT_MAX_RATIO for f in built.functions if f.role != "planted")
    assert built.tokens == SMALL
    with pytest.raises(ValueError, match="extra_distractors"):
        code.build_module(4, 2, SMALL, reference_counter(), extra_distractors=len(code.KINDS) - 1)


def test_too_small_budget_and_bad_count_are_refused():
    with pytest.raises(ValueError, match="target_tokens"):
        code.build_module(1, 3, 100, reference_counter())
    with pytest.raises(ValueError, match="n_planted"):
        code.build_module(1, 0, SMALL, reference_counter())


@pytest.mark.parametrize("seed", GOLD_SEEDS)
def test_gold_is_verified_by_operation_counts(seed):
    built = module(seed, 1 + seed % 3)
    growth = code.measure(built)
    for function in built.functions:
        if function.role == "planted":
            assert growth[function.name] >= code.PLANTED_MIN_RATIO, function
        else:
            assert growth[function.name] <= code.EFFICIENT_MAX_RATIO, function
    assert code.verified_gold(built) == built.gold


def test_every_kind_is_planted_and_verified():
    seen = set()
    for seed in range(40):
        built = module(seed, 3)
        seen.update(f.kind for f in built.functions if f.role == "planted")
    assert seen == set(code.KINDS)


def test_operation_counts_are_deterministic():
    built = module(2, 3)
    assert code.measure_costs(built) == code.measure_costs(built)


def test_the_module_runs_without_io_or_imports():
    namespace = code._namespace()
    with pytest.raises(ImportError):
        exec("import os", namespace)  # noqa: S102
    with pytest.raises(NameError):
        exec("open('x')", namespace)  # noqa: S102


def test_surface_features_do_not_separate_planted_from_twins():
    """Planted functions against the look-alikes of their own kinds: same lines, nesting and loops; any feature's
    best threshold near chance."""
    planted: dict[str, list[float]] = {}
    twins: dict[str, list[float]] = {}
    shapes: dict[str, set] = {}
    for seed in SEPARABILITY_SEEDS:
        built = module(seed, 1 + seed % 3)
        features = code.surface_features(built)
        kinds = {f.kind for f in built.functions if f.role == "planted"}
        for function in built.functions:
            if function.kind not in kinds:
                continue
            target = planted if function.role == "planted" else twins
            for key, value in features[function.name].items():
                target.setdefault(key, []).append(value)
            shape = tuple(features[function.name][key] for key in ("lines", "depth", "for_in", "while"))
            shapes.setdefault(f"{function.kind}/{function.role}", set()).add(shape)
    assert len(planted["chars"]) >= 70 and len(twins["chars"]) >= 70
    for key in planted:
        # chance is 0.5; the best of many thresholds on ~80 samples per side reaches ~0.6 by luck alone
        assert code.best_threshold_accuracy(planted[key], twins[key]) <= 0.65, key
    for kind in code.KINDS:
        if f"{kind}/planted" in shapes:
            assert shapes[f"{kind}/planted"] == shapes[f"{kind}/distractor"], kind  # the same shape exactly


def test_surface_heuristics_do_not_find_the_planted_functions():
    """Naming the longest, longest-lined, most deeply nested or most looping functions scores near nothing."""
    totals = dict.fromkeys(("chars", "lines", "depth", "for_in"), 0.0)
    for seed in SEPARABILITY_SEEDS:
        built = module(seed, 1 + seed % 3)
        features = code.surface_features(built)
        for key in totals:
            ranked = sorted(built.names, key=lambda name: (-features[name][key], built.names.index(name)))
            answer = " ".join(ranked[:len(built.gold)])
            totals[key] += _score(built, answer)
    for key, total in totals.items():
        assert total / len(SEPARABILITY_SEEDS) <= 0.25, key


def test_best_threshold_accuracy_sees_a_real_separation():
    assert code.best_threshold_accuracy([5, 6, 7], [1, 2, 3]) == 1.0
    assert code.best_threshold_accuracy([1, 2, 3], [5, 6, 7]) == 1.0
    assert code.best_threshold_accuracy([1, 2], [1, 2]) == 0.5


def _score(built: code.CodeModule, answer: str) -> float:
    from lurch_tasks.families.discovery.prompt import code_context
    from lurch_tasks.families.discovery.scoring import score_code

    return score_code({"context": code_context(built.source), "answer_items": list(built.gold)}, answer)["score"]


NAMES = ("vaelor_brimon", "tashku_orvel", "mireth_zalun", "krov_aldenis")
GOLD = ("vaelor_brimon", "mireth_zalun")


@pytest.mark.parametrize("answer", [
    "The slow ones are `vaelor_brimon` and `mireth_zalun`.",
    "1. vaelor_brimon() - quadratic\n2. mireth_zalun() - repeated sums",
    "**Vaelor_Brimon** and **MIRETH_ZALUN**",
    "vaelor\\_brimon, mireth\\_zalun",
    "def vaelor_brimon(items): ... and def mireth_zalun(values):",
])
def test_names_are_found_in_any_format(answer):
    assert code.mentioned_names(answer, NAMES) == GOLD


def test_partial_words_are_not_names():
    assert code.mentioned_names("vaelor_brimonx and xmireth_zalun", NAMES) == ()
    assert code.mentioned_names("", NAMES) == ()
