"""The evaluation pipeline: run the evaluators a scenario configures, in a fixed order.

Order: ``validation`` (one result per command) → ``heuristic_checks`` → ``dependency_targets``
→ ``llm_judge`` → ``hidden_tests`` (for a Harbor task: ``harbor_verifier``, its own
``tests/test.sh``, in place of the hidden tests; for a SWE-bench instance: ``swe_tests``, its
``test_patch`` and ``FAIL_TO_PASS``/``PASS_TO_PASS`` tests). Hidden tests come last because they copy files
into the workspace, which the other evaluators (and the judge's view of the work) must not see.
An evaluator that raises becomes a result with status ``error``; the others still run. The
error is blamed (``data["blame"]``) on the workspace when the evaluator raised
:class:`~harness.grading.evaluators.base.WorkspaceFault` (the agent's output cannot be graded: the run
fails), else on the harness (a bug: the run is ``error``/``harness``).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable

from harness.grading.evaluators.base import (
    BLAME,
    BLAME_HARNESS,
    BLAME_WORKSPACE,
    EvaluationContext,
    EvaluatorResult,
    WorkspaceFault,
)
from harness.grading.evaluators.dependency_targets import evaluate_dependency_targets
from harness.grading.evaluators.harbor_verifier import evaluate_harbor_verifier
from harness.grading.evaluators.heuristic_checks import evaluate_heuristic_checks
from harness.grading.evaluators.hidden_tests import evaluate_hidden_tests
from harness.grading.evaluators.swe_tests import evaluate_swe_tests
from harness.grading.evaluators.validation import evaluate_validation
from harness.tasks.harbor import is_task
from harness.tasks.swe import is_instance

StageCallback = Callable[[str], None]


def _llm_judge(ctx: EvaluationContext) -> EvaluatorResult | None:
    if not ctx.scenario.llm_judge.enabled:
        return None
    try:
        module = importlib.import_module("harness.grading.evaluators.llm_judge")
    except ModuleNotFoundError as exc:
        if exc.name != "harness.grading.evaluators.llm_judge":
            raise
        return EvaluatorResult("llm_judge", 0.0, status="skipped", details="the llm_judge evaluator is not installed")
    return module.evaluate_llm_judge(ctx)


def _hidden_tests(ctx: EvaluationContext) -> EvaluatorResult | None:
    """The scenario's hidden tests; a Harbor task's ``tests/`` are its verifier's (``harbor_verifier``),
    a SWE-bench instance's test files are ``swe_tests``'s."""
    return None if is_task(ctx.scenario) or is_instance(ctx.scenario) else evaluate_hidden_tests(ctx)


_SINGLE_EVALUATORS: tuple[tuple[str, Callable[[EvaluationContext], EvaluatorResult | None]], ...] = (
    ("heuristic_checks", evaluate_heuristic_checks),
    ("dependency_targets", evaluate_dependency_targets),
    ("llm_judge", _llm_judge),
    ("hidden_tests", _hidden_tests),
    ("harbor_verifier", evaluate_harbor_verifier),
    ("swe_tests", evaluate_swe_tests),
)


def _error(name: str, exc: BaseException) -> EvaluatorResult:
    if isinstance(exc, WorkspaceFault):
        return EvaluatorResult(name, 0.0, status="error", details=f"the agent's output cannot be graded: {exc}",
                               data={BLAME: BLAME_WORKSPACE})
    return EvaluatorResult(name, 0.0, status="error", details=f"{type(exc).__name__}: {exc}",
                           data={BLAME: BLAME_HARNESS})


def run_evaluators(ctx: EvaluationContext, on_stage: StageCallback | None = None,
                   timings: dict[str, float] | None = None) -> list[EvaluatorResult]:
    """Run every evaluator the scenario configures and return their results, in order.
    ``timings`` (when given) receives each evaluator's wall time in ms, ``validation`` for
    the validation commands together."""
    results: list[EvaluatorResult] = []

    def timed(name: str, started: float) -> None:
        if timings is not None:
            timings[name] = timings.get(name, 0.0) + (time.monotonic() - started) * 1000.0

    if ctx.scenario.validation_commands:
        if on_stage:
            on_stage("validation")
        started = time.monotonic()
        try:
            results += evaluate_validation(ctx)
        except Exception as exc:  # noqa: BLE001 - one broken evaluator must not lose the run
            results.append(_error("validation", exc))
        timed("validation", started)
    for name, evaluator in _SINGLE_EVALUATORS:
        if on_stage:
            on_stage(name)
        started = time.monotonic()
        try:
            result = evaluator(ctx)
        except Exception as exc:  # noqa: BLE001
            result = _error(name, exc)
        if result is not None:
            results.append(result)
            timed(name, started)
    return results
