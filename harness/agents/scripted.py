"""Scripted agents that call no model: ``echo`` (the floor) and ``oracle`` (the ceiling).

``echo`` changes nothing and answers with the prompt it got: a scenario it passes cannot tell
work from no work. ``oracle`` lays the scenario's ``solution/`` over the workspace, or, when
``solution/`` holds a ``solve.sh`` (a script solution, as Harbor tasks have), runs it with
``bash`` in the workspace, ``solution/`` visible at ``/solution``: a scenario it fails is not
solvable as written. Both report real telemetry: no tokens, no model calls.

The oracle is the only agent that receives the answer key, and only through its own channel:
it declares ``uses_reference_solution`` and the runner calls ``provide_reference_solution``
with the scenario's ``solution/`` directory (or None when there is none).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from harness.agents.base import AgentContext, AgentResult, SandboxNeeds
from harness.agents.registry import register_agent
from harness.sandbox import Mount
from harness.scenarios.workspace import overlay

SOLVE_SCRIPT = "solve.sh"  # a solution/ holding it is a script the oracle runs
SOLUTION_INNER = "/solution"  # where the script's directory appears to it (bwrap), as in Harbor
OUTPUT_KEPT = 4_000  # characters of the script's output kept in the transcript


class EchoAgent:
    """Does nothing; returns the prompt as its answer."""

    name = "echo"

    def __init__(self, model: str | None = None, **options: Any) -> None:
        self.model = model

    def run(self, ctx: AgentContext) -> AgentResult:
        return AgentResult(
            status="completed",
            final_answer=ctx.prompt,
            model=self.model,
            cost_usd=0.0,
            transcript=[{"role": "user", "content": ctx.prompt}, {"role": "assistant", "content": ctx.prompt}],
        )


class OracleAgent:
    """Copies the scenario's ``solution/`` files into the workspace, or runs its ``solve.sh``."""

    name = "oracle"
    uses_reference_solution = True

    def __init__(self, model: str | None = None, **options: Any) -> None:
        self.model = model
        self.solution: Path | None = None

    def provide_reference_solution(self, solution: Path | None) -> None:
        self.solution = solution

    @property
    def script(self) -> Path | None:
        """The solution's ``solve.sh`` when the solution is a script, else None."""
        script = self.solution / SOLVE_SCRIPT if self.solution is not None else None
        return script if script is not None and script.is_file() else None

    def sandbox_needs(self, kind: str) -> SandboxNeeds:
        """A script solution's directory, read-only at ``/solution`` (where the sandbox can place it)."""
        if self.script is None:
            return SandboxNeeds()
        return SandboxNeeds(mounts=(Mount(self.solution.resolve(), SOLUTION_INNER),))

    def run(self, ctx: AgentContext) -> AgentResult:
        solution = self.solution
        transcript: list[dict[str, Any]] = [{"role": "user", "content": ctx.prompt}]
        if solution is None:
            return AgentResult(status="failed", error="the scenario has no solution/ directory",
                               model=self.model, cost_usd=0.0, transcript=transcript)
        if self.script is not None:
            return self._run_script(ctx, transcript)
        copied = overlay(solution, ctx.workspace)
        answer = f"Applied the reference solution ({copied.files} file(s) from solution/)."
        transcript.append({"role": "assistant", "content": answer})
        return AgentResult(status="completed", final_answer=answer, model=self.model, cost_usd=0.0,
                           transcript=transcript)

    def _run_script(self, ctx: AgentContext, transcript: list[dict[str, Any]]) -> AgentResult:
        """Run ``solve.sh`` with bash in the workspace until the run's deadline."""
        command = f"bash {shlex.quote(ctx.sandbox.inner_path(self.script))}"
        result = ctx.sandbox.run(command, timeout_s=max(1.0, ctx.remaining_s()))
        output = result.combined_output().strip()
        if len(output) > OUTPUT_KEPT:
            output = "..." + output[-OUTPUT_KEPT:]
        answer = f"$ {command}\n{result.outcome()}" + (f"\n{output}" if output else "")
        transcript.append({"role": "assistant", "content": answer})
        status = "completed" if result.ok else "timeout" if result.timed_out else "failed"
        if result.killed_by == "closed":
            status = "error"
        return AgentResult(status=status, final_answer=answer, model=self.model, cost_usd=0.0, transcript=transcript,
                           error=None if result.ok else f"solution/{SOLVE_SCRIPT}: {result.outcome()}",
                           tool_ms=result.duration_ms)


register_agent("echo", EchoAgent)
register_agent("oracle", OracleAgent)
