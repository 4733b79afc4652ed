"""'Did you mean': close names are suggested, far ones are not."""

from lurch_tasks.core.suggest import closest, did_you_mean
from lurch_tasks.harness.lm_eval_cli import check_task_names, our_task_names


def test_a_typo_gets_the_closest_names_and_a_stranger_none():
    names = ["num_samples", "context_tokens", "seed", "d_values"]
    assert closest("num_sample", names) == ["num_samples"]
    assert did_you_mean("contxt_tokens", names) == " (did you mean 'context_tokens'?)"
    assert did_you_mean("temperature", names) == ""
    assert closest("", names) == []


def test_task_names_far_from_ours_are_left_to_lm_eval():
    assert "memory_drift" in our_task_names()
    check_task_names(["--tasks", "hellaswag,find_the_origin,memory_drift_edge__0123456789ab"])  # no error
    check_task_names(["--model", "hf"])  # no --tasks: lm-eval says so itself
