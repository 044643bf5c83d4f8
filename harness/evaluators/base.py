"""Types shared by all evaluators."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from harness.agents.base import AgentResult
    from harness.process import CommandResult
    from harness.scenarios import Scenario
    from harness.workspace import WorkspaceDiff

EvaluatorStatus = Literal["ok", "skipped", "error"]


@dataclass
class EvaluatorResult:
    """One scored result. ``score`` is in [0, 1]; skipped and error results do not count."""

    name: str
    score: float
    status: EvaluatorStatus = "ok"
    details: str = ""
    max_score: float = 1.0
    data: dict[str, Any] = field(default_factory=dict)  # structured details
    # Tokens/cost an evaluator spent on model calls (the judge), kept apart from the agent's.
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = None


@dataclass
class EvaluationContext:
    """Everything an evaluator may look at once the agent has finished."""

    scenario: Scenario
    workspace: Path
    prompt: str
    agent_result: AgentResult | None
    diff: WorkspaceDiff | None = None
    command_results: dict[str, CommandResult] = field(default_factory=dict)  # validation name -> result
    use_cache: bool = True
