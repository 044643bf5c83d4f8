"""Types shared by all evaluators."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from harness.agents.base import AgentResult
    from harness.evaluators.test_reports import TestCounts
    from harness.grading import GradingCopy
    from harness.sandbox import CommandResult, Sandbox
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
    """Everything an evaluator may look at once the agent has finished.

    ``workspace`` is the grading copy (:mod:`harness.grading`), ``sandbox`` the fresh sandbox
    bound to it: every command an evaluator runs goes through it. ``diff`` is the agent's
    real change (before protected files were restored).
    """

    scenario: Scenario
    workspace: Path
    prompt: str
    agent_result: AgentResult | None
    sandbox: Sandbox | None = None  # None only for evaluators that run no command (the judge)
    grading: GradingCopy | None = None
    diff: WorkspaceDiff | None = None
    command_results: dict[str, CommandResult] = field(default_factory=dict)  # validation name -> result
    test_counts: dict[str, TestCounts | None] = field(default_factory=dict)  # test command -> report counts
    use_cache: bool = True
    judge: Any = None  # harness.evaluators.llm_judge.JudgeChoice; None: decide from the scenario
