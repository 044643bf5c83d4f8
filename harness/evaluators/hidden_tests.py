"""The ``hidden_tests`` evaluator: tests the agent never saw, copied in after it finished.

The scenario's ``hidden-tests/`` tree is laid over the workspace, then the test command runs
(``hidden_tests.command`` if the scenario sets one, else ``validation.commands.test``). The
score is passed/total when the output carries counts (pytest's summary line, ``node --test``'s
TAP or spec summary), else 1 for exit status 0 and 0 otherwise.
"""

from __future__ import annotations

import re

from harness.evaluators.base import EvaluationContext, EvaluatorResult
from harness.evaluators.validation import command_timeout, describe_command
from harness.process import run_command
from harness.workspace import overlay

NAME = "hidden_tests"
_PYTEST_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected)")
_PYTEST_SUMMARY = re.compile(r"\b\d+ (passed|failed|errors?)\b.* in [\d.]+s")
_NODE_COUNT = re.compile(r"^\s*(?:#|ℹ)\s*(tests|suites|pass|fail|cancelled|skipped|todo)\s+(\d+)\s*$", re.MULTILINE)


def parse_test_counts(output: str) -> tuple[int, int] | None:
    """(passed, total) from pytest or ``node --test`` output; None when neither summary is present.

    pytest: the last summary line ("2 passed, 1 failed, 1 error in 0.1s"); errors count as
    failures, skips are left out. node: ``# pass N`` / ``# fail N`` / ``# cancelled N`` (TAP) or
    the ``ℹ`` lines of the spec reporter.
    """
    node = {}
    for key, value in _NODE_COUNT.findall(output):
        node[key] = int(value)  # the last summary wins (nested runs print several)
    if "pass" in node and "fail" in node:
        total = node["pass"] + node["fail"] + node.get("cancelled", 0)
        return node["pass"], total
    for line in reversed(output.splitlines()):
        if _PYTEST_SUMMARY.search(line):
            counts: dict[str, int] = {}
            for n, kind in _PYTEST_COUNT.findall(line):
                counts[kind.rstrip("s") if kind.startswith("error") else kind] = int(n)
            passed = counts.get("passed", 0)
            total = passed + counts.get("failed", 0) + counts.get("error", 0)
            return passed, total
    return None


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
    copied = overlay(scenario.hidden_tests_dir, ctx.workspace)
    timeout = float(hidden_cfg.get("timeout_seconds", command_timeout(ctx)))
    result = run_command(command, ctx.workspace, timeout_s=timeout)
    counts = None if result.timed_out else parse_test_counts(result.combined_output())
    data = {"command": command, "exit_code": result.exit_code, "timed_out": result.timed_out,
            "files_copied": copied.files}
    if counts is not None and counts[1] > 0:
        passed, total = counts
        data.update(passed=passed, total=total)
        return EvaluatorResult(NAME, passed / total, details=f"{passed}/{total} hidden tests passed\n"
                               + describe_command(result), data=data)
    score = 1.0 if result.ok else 0.0
    how = "no test counts in output; scored by exit status"
    return EvaluatorResult(NAME, score, details=f"{how}\n" + describe_command(result), data=data)
