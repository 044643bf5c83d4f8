"""The ``validation`` evaluator: the scenario's validation commands, one result per command.

Commands run in the order install → build → lint → typecheck → test (``test`` included),
each in its own process group with a timeout that kills the group, output captured and
capped. A command scores 1 when it exits 0, else 0.
"""

from __future__ import annotations

from harness.evaluators.base import EvaluationContext, EvaluatorResult
from harness.process import CommandResult, run_command
from harness.scenarios import VALIDATION_ORDER

DEFAULT_COMMAND_TIMEOUT_S = 600.0
DETAIL_TAIL = 4000  # characters of output kept in an evaluation's details


def command_timeout(ctx: EvaluationContext) -> float:
    validation = ctx.scenario.raw.get("validation") or {}
    return float(validation.get("timeout_seconds", DEFAULT_COMMAND_TIMEOUT_S))


def describe_command(result: CommandResult) -> str:
    """One paragraph about a command's outcome, with the tail of its output."""
    if result.timed_out:
        head = f"$ {result.command}\ntimed out after {result.duration_ms / 1000:.1f}s (process group killed)"
    else:
        head = f"$ {result.command}\nexit {result.exit_code} in {result.duration_ms / 1000:.1f}s"
    output = result.combined_output().strip()
    if len(output) > DETAIL_TAIL:
        output = "..." + output[-DETAIL_TAIL:]
    return f"{head}\n{output}" if output else head


def run_validation_commands(ctx: EvaluationContext) -> dict[str, CommandResult]:
    """Run the scenario's validation commands in order; results also land in ``ctx.command_results``."""
    timeout = command_timeout(ctx)
    for name in VALIDATION_ORDER:
        command = ctx.scenario.validation_commands.get(name)
        if command:
            ctx.command_results[name] = run_command(command, ctx.workspace, timeout_s=timeout)
    return ctx.command_results


def evaluate_validation(ctx: EvaluationContext) -> list[EvaluatorResult]:
    """Run the validation commands and score each one."""
    results = []
    for name, result in run_validation_commands(ctx).items():
        results.append(EvaluatorResult(
            name=name,
            score=1.0 if result.ok else 0.0,
            details=describe_command(result),
            data={
                "group": "validation",
                "gating": ctx.scenario.validation_required,
                "command": result.command,
                "exit_code": result.exit_code,
                "timed_out": result.timed_out,
                "duration_ms": round(result.duration_ms, 1),
            },
        ))
    return results
