"""Scripted agents that call no model: ``echo`` (the floor) and ``oracle`` (the ceiling).

``echo`` changes nothing and answers with the prompt it got: a scenario it passes cannot tell
work from no work. ``oracle`` lays the scenario's ``solution/`` over the workspace: a scenario it
fails is not solvable as written. Both report real telemetry: no tokens, no model calls.

The oracle is the only agent that receives the answer key, and only through its own channel:
it declares ``uses_reference_solution`` and the runner calls ``provide_reference_solution``
with the scenario's ``solution/`` directory (or None when there is none).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.agents import register_agent
from harness.agents.base import AgentContext, AgentResult
from harness.workspace import overlay


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
    """Copies the scenario's ``solution/`` files into the workspace."""

    name = "oracle"
    uses_reference_solution = True

    def __init__(self, model: str | None = None, **options: Any) -> None:
        self.model = model
        self.solution: Path | None = None

    def provide_reference_solution(self, solution: Path | None) -> None:
        self.solution = solution

    def run(self, ctx: AgentContext) -> AgentResult:
        solution = self.solution
        transcript: list[dict[str, Any]] = [{"role": "user", "content": ctx.prompt}]
        if solution is None:
            return AgentResult(status="failed", error="the scenario has no solution/ directory",
                               model=self.model, cost_usd=0.0, transcript=transcript)
        copied = overlay(solution, ctx.workspace)
        answer = f"Applied the reference solution ({copied.files} file(s) from solution/)."
        transcript.append({"role": "assistant", "content": answer})
        return AgentResult(status="completed", final_answer=answer, model=self.model, cost_usd=0.0,
                           transcript=transcript)


register_agent("echo", EchoAgent)
register_agent("oracle", OracleAgent)
