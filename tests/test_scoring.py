"""Run scoring: weighted mean over ok results, skipped ones ignored, gating commands."""

import pytest

from harness.grading.evaluators.base import EvaluatorResult
from harness.grading.scoring import gating_failures, score_run, weighted_score


def ok(name, score, group=None):
    return EvaluatorResult(name=name, score=score, data={"group": group} if group else {})


def test_unweighted_mean_of_ok_results():
    assert weighted_score([ok("a", 1.0), ok("b", 0.5)]) == pytest.approx(0.75)


def test_skipped_and_error_results_do_not_count():
    results = [ok("a", 1.0), EvaluatorResult("llm_judge", 0.0, status="skipped"), EvaluatorResult("x", 0.0, status="error")]
    assert weighted_score(results) == 1.0
    assert score_run(results).counted == 1


def test_weights_from_rubric_overrides():
    results = [ok("heuristic_checks", 1.0), ok("llm_judge", 0.0)]
    assert weighted_score(results, {"heuristic_checks": 3.0}) == pytest.approx(0.75)


def test_original_weight_names_apply_to_validation_commands():
    results = [ok("install", 1.0, "validation"), ok("test", 0.0, "validation")]
    assert weighted_score(results, {"install_success": 1.0, "tests_nonregression": 3.0}) == pytest.approx(0.25)


def test_group_weight_applies_when_no_specific_weight():
    results = [ok("lint", 0.0, "validation"), ok("hidden_tests", 1.0)]
    assert weighted_score(results, {"validation": 3.0}) == pytest.approx(0.25)


def test_no_ok_results_means_no_score_and_no_success():
    result = score_run([EvaluatorResult("llm_judge", 0.0, status="skipped")])
    assert result.score is None and not result.successful


def test_zero_total_weight_means_no_score():
    assert weighted_score([ok("a", 1.0)], {"a": 0}) is None


def test_success_needs_threshold():
    assert score_run([ok("a", 0.7)], success_threshold=0.7).successful
    assert not score_run([ok("a", 0.69)], success_threshold=0.7).successful


def test_failed_gating_command_blocks_success_even_with_high_score():
    results = [ok("install", 0.0, "validation")] + [ok(f"h{i}", 1.0) for i in range(9)]
    outcome = score_run(results, success_threshold=0.7)
    assert outcome.score == pytest.approx(0.9)
    assert not outcome.successful and outcome.gating_failures == ["install"]


def test_non_gating_command_failure_does_not_block_success():
    results = [ok("lint", 0.0, "validation"), ok("test", 1.0, "validation"), ok("hidden_tests", 1.0), ok("h", 1.0)]
    assert score_run(results).successful


def test_gating_only_applies_to_validation_results():
    assert gating_failures([ok("test", 0.0)]) == []
    assert gating_failures([EvaluatorResult("test", 0.0, status="error", data={"group": "validation"})]) == ["test"]


def test_scores_are_clamped_to_unit_interval():
    assert weighted_score([ok("a", 1.5), ok("b", -1.0)]) == pytest.approx(0.5)


def test_validation_not_required_does_not_gate():
    result = EvaluatorResult("install", 0.0, data={"group": "validation", "gating": False})
    assert gating_failures([result]) == []
