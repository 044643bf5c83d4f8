"""Types shared by all evaluators."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from harness.agents.base import AgentResult
    from harness.grading.evaluators.test_reports import TestCounts
    from harness.sandbox import CommandResult, Sandbox
    from harness.scenarios.model import Scenario
    from harness.scenarios.workspace import CopyReport, WorkspaceDiff

EvaluatorStatus = Literal["ok", "skipped", "error"]

# ``EvaluatorResult.data[BLAME]`` of an ``error`` result: whose failure it is.
BLAME = "blame"
BLAME_WORKSPACE = "workspace"  # what the agent left cannot be graded: the run failed (counts 0)
BLAME_HARNESS = "harness"  # a bug of the harness or the scenario: the run is error/harness
BLAME_INFRA = "infra"  # a service the grading needs failed (the judge's model provider)


class WorkspaceFault(Exception):
    """Raised by an evaluator that cannot grade because of what the agent left in the workspace
    (a manifest that parses but is not a manifest, a file its own reader cannot handle), when
    the same code handles the fixture. The pipeline turns it into an ``error`` result blamed on
    the workspace, which scores 0 and fails the run; any other exception is the harness's."""


class GradedCopy(Protocol):
    """What evaluators do with the grading copy they run on (``harness.grading.copy.GradingCopy``,
    which makes it): restore protected files, give commands their environment, clear the copy
    after a command ran the agent's code, lay hidden tests over it."""

    # The trees of original files (the fixture, then what was laid over), each with the globs
    # left out of it; protect() restores from them.
    sources: list[tuple[Path, tuple[str, ...]]]

    def protect(self) -> object:
        """Restore protected files again (an earlier grading command may have changed them)."""

    def sanitize(self) -> list[str]:
        """Remove links out of the copy and special files; the relative paths removed."""

    def lay_over(self, tree: Path) -> CopyReport:
        """Lay ``tree`` over the copy; its files count as originals from now on."""

    def command_env(self, sandbox: Sandbox) -> dict[str, str]:
        """The environment of every grading command."""

    def prepare_test(self, sandbox: Sandbox, label: str, runner: str | None = None) -> tuple[dict[str, str], list[Path]]:
        """Before a test command: its environment and where its reports land."""


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

    ``workspace`` is the grading copy (:mod:`harness.grading.copy`), ``sandbox`` the fresh sandbox
    bound to it: every command an evaluator runs goes through it. ``diff`` is the agent's
    real change (before protected files were restored).
    """

    scenario: Scenario
    workspace: Path
    prompt: str
    agent_result: AgentResult | None
    sandbox: Sandbox | None = None  # None only for evaluators that run no command (the judge)
    grading: GradedCopy | None = None
    diff: WorkspaceDiff | None = None
    command_results: dict[str, CommandResult] = field(default_factory=dict)  # validation name -> result
    test_counts: dict[str, TestCounts | None] = field(default_factory=dict)  # test command -> report counts
    use_cache: bool = False  # the run's cache mode: True replays the judge's answers too
    judge: Any = None  # harness.grading.evaluators.llm_judge.JudgeChoice; None: decide from the scenario
