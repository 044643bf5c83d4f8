"""The ``hidden_tests`` evaluator: tests the agent never saw, copied in after it finished.

The scenario's ``hidden-tests/`` tree is laid over the grading copy (never over the agent's
workspace, and never through a link the agent planted), then the test command runs in the
grading sandbox (``hidden_tests.command`` if the scenario sets one, else
``validation.commands.test``). The score is passed / total from the runner's JUnit report
(:mod:`harness.grading.evaluators.test_reports`); skipped, xfailed and deselected tests are not passes,
and a run where no hidden test passed scores 0. A runner the harness cannot ask for a report
is scored by exit status (1 for exit 0), which the details say. The details keep the counts
and each test's id and outcome, never the command's output (tracebacks quote the tests, and
the code under test can print them).
"""

from __future__ import annotations

from harness.grading.evaluators.base import EvaluationContext, EvaluatorResult
from harness.grading.evaluators.canaries import CanarySet, plant
from harness.grading.evaluators.test_reports import CaseResult, counts_of, detect_runner
from harness.grading.evaluators.validation import command_timeout, run_graded
from harness.scenarios.workspace import overlay

NAME = "hidden_tests"


def evaluate_hidden_tests(ctx: EvaluationContext) -> EvaluatorResult | None:
    """Copy hidden tests in and run them; None when the scenario has no ``hidden-tests/``."""
    scenario = ctx.scenario
    if scenario.hidden_tests_dir is None:
        return None
    hidden_cfg = scenario.raw.get("hidden_tests") or {}
    command = hidden_cfg.get("command") or scenario.validation_commands.get("test")
    if not command:
        return EvaluatorResult(NAME, 0.0, status="skipped",
                               details="hidden-tests/ exists but the scenario has no test command")
    if ctx.grading is not None:
        copied = ctx.grading.lay_over(scenario.hidden_tests_dir)
    else:
        copied = overlay(scenario.hidden_tests_dir, ctx.workspace)
    timeout = float(hidden_cfg.get("timeout_seconds", command_timeout(scenario)))
    planted: list[CanarySet | None] = []

    def plant_canaries() -> None:
        planted.append(plant(ctx.workspace, scenario.hidden_tests_dir, detect_runner(command), command))

    graded = run_graded(ctx, command, NAME, test=True, timeout_s=timeout, before=plant_canaries)
    result = graded.result
    canaries = planted[0] if planted else None
    evidence: list[str] = []
    if canaries is not None and graded.cases is not None:
        graded.cases, evidence = canaries.check(graded.cases)
        graded.counts = counts_of(graded.cases)
    ctx.test_counts[NAME] = graded.counts
    data = {"command": command, "exit_code": result.exit_code, "timed_out": result.timed_out,
            "killed_by": result.killed_by, "files_copied": copied.files, "runner": graded.runner}
    if graded.missing_tool:
        data["missing_tool"] = graded.missing_tool
    # Never the command's output: the code under test could print the hidden tests into it,
    # and what is stored must not teach the next agent the answer.
    ran = f"$ {command}\n{result.outcome()} in {result.duration_ms / 1000:.1f}s (output not kept: hidden tests)"
    if canaries is not None:
        data["canaries"] = len(canaries.canaries)
    if evidence:
        # The report cannot be trusted: nothing in it counts, and the run is marked tampered.
        data["tampered"] = evidence[:20]
        lines = "\n".join(f"- {e}" for e in evidence[:20])
        return EvaluatorResult(NAME, 0.0, details=f"0: the test report was tampered with\n{lines}\n{ran}", data=data)
    if graded.counts is not None:
        counts = graded.counts
        data.update(passed=counts.passed, total=counts.total, failed=counts.failed, errors=counts.errors,
                    skipped=counts.skipped)
        score = counts.passed / counts.total if counts.total else 0.0
        head = f"{counts.passed}/{counts.total} hidden tests passed ({counts.summary()})"
        return EvaluatorResult(NAME, score, details=f"{head}\n{ran}\n{case_lines(graded.cases or [])}", data=data)
    if graded.runner is not None:
        data["report_problem"] = graded.report_problem
        return EvaluatorResult(NAME, 0.0, details=f"0: {graded.report_problem}\n{ran}", data=data)
    how = "no test report for this runner; scored by exit status"
    return EvaluatorResult(NAME, 1.0 if result.ok else 0.0, details=f"{how}\n{ran}", data=data)


CASES_SHOWN = 200
_MARKS = {"passed": "✓", "failed": "✗", "error": "✗", "skipped": "-"}


def case_lines(cases: list[CaseResult]) -> str:
    """One line per test case: its outcome and id (at most :data:`CASES_SHOWN`)."""
    lines = [f"{_MARKS.get(c.outcome, '?')} {c.test_id} ({c.outcome})" for c in cases[:CASES_SHOWN]]
    if len(cases) > CASES_SHOWN:
        lines.append(f"... {len(cases) - CASES_SHOWN} more test(s)")
    return "\n".join(lines)
