"""Scripted agents that call no model: ``echo`` (the floor) and ``oracle`` (the ceiling).

``echo`` changes nothing and answers with the prompt it got: a scenario it passes cannot tell
work from no work. ``oracle`` lays the scenario's ``solution/`` over the workspace: a scenario it
fails is not solvable as written. Both report real telemetry: no tokens, no model calls.
"""

from __future__ import annotations

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

    def __init__(self, model: str | None = None, **options: Any) -> None:
        self.model = model

    def run(self, ctx: AgentContext) -> AgentResult:
        solution = ctx.scenario.solution_dir
        transcript: list[dict[str, Any]] = [{"role": "user", "content": ctx.prompt}]
        if solution is None:
            return AgentResult(status="failed", error=f"{ctx.scenario.key} has no solution/ directory",
                               model=self.model, cost_usd=0.0, transcript=transcript)
        copied = overlay(solution, ctx.workspace)
        answer = f"Applied the reference solution ({copied.files} file(s) from solution/)."
        transcript.append({"role": "assistant", "content": answer})
        return AgentResult(status="completed", final_answer=answer, model=self.model, cost_usd=0.0,
                           transcript=transcript)


register_agent("echo", EchoAgent)
register_agent("oracle", OracleAgent)
