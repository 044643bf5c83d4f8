"""The agent contract: what every agent receives and what it returns.

An agent gets the prompt, a sandbox bound to its workspace, its budgets and the tools the
scenario enables, never the scenario itself: the answer key (the solution, the hidden tests)
belongs to the scorer. The one agent that needs the solution, ``oracle``, declares it
(``uses_reference_solution``) and is handed it through ``provide_reference_solution``.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from harness.tools import ToolConfig

if TYPE_CHECKING:
    from harness.sandbox import Mount, Sandbox

AgentStatus = Literal["completed", "failed", "timeout", "budget_exceeded", "error"]


@dataclass
class Budgets:
    """Limits on one run. ``None`` means no limit."""

    max_turns: int = 50
    max_output_tokens_per_call: int = 4096
    max_total_tokens: int | None = None
    max_cost_usd: float | None = None
    timeout_s: float = 3600.0


@dataclass
class SandboxNeeds:
    """What an agent needs of its sandbox beyond the scenario's settings (``claude-code``:
    the network, its credentials and its own installation)."""

    network: bool = False
    env: dict[str, str] = field(default_factory=dict)
    mounts: tuple[Mount, ...] = ()


@dataclass
class AgentContext:
    """What an agent gets for one run."""

    prompt: str  # the tier prompt text
    sandbox: Sandbox  # bound to the run's workspace; every command goes through it
    budgets: Budgets = field(default_factory=Budgets)
    tools: ToolConfig = field(default_factory=ToolConfig)
    system_prompt: str | None = None  # the specialist's system prompt, if any
    specialist_name: str | None = None  # the specialist's name (for agents that take it as a skill)
    model: str | None = None
    deadline: float | None = None  # time.monotonic() value at which the run must stop
    repeat_index: int = 0  # iteration number; part of the response cache key
    # Replay model answers from the response cache (``bench --cache replay``). Off by default:
    # every call goes to the model (and its answer is recorded for a later replay).
    use_cache: bool = False
    options: dict[str, Any] = field(default_factory=dict)  # agent-specific (base_url, ...)
    cancel: threading.Event | None = None  # set when the batch is interrupted: stop at the next turn

    @property
    def cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()

    @property
    def workspace(self) -> Path:
        """The workspace's host directory (for work the agent does in the harness process)."""
        return self.sandbox.workspace

    def remaining_s(self) -> float:
        if self.deadline is None:
            return self.budgets.timeout_s
        return max(0.0, self.deadline - time.monotonic())


@dataclass
class AgentResult:
    """What an agent did. Telemetry fields are real measurements or zero/None, never guesses."""

    status: AgentStatus = "completed"
    final_answer: str = ""
    error: str | None = None
    model: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = 0.0  # None when any call's price was unknown
    tool_calls: int = 0
    turns: int = 0
    latencies_ms: list[float] = field(default_factory=list)  # of the calls made now (not replayed)
    transcript: list[dict[str, Any]] = field(default_factory=list)
    questions: list[dict[str, str]] = field(default_factory=list)  # ask_user log
    # Whose side an ``error`` is on: "infra" when the model provider (or the machine) failed,
    # not the agent (HTTP 5xx, 429 after retries, timeouts, connection errors, credentials).
    error_kind: str | None = None
    model_calls: int = 0  # model answers received (replayed ones included)
    cached_calls: int = 0  # of which replayed from the response cache
    replayed_latencies_ms: list[float] = field(default_factory=list)  # original latencies of replayed answers
    # Wall time inside model calls (retries and their waits included) and inside tool
    # executions; None when the agent does not measure it.
    model_ms: float | None = None
    tool_ms: float | None = None
    # What the agent says about itself for the run's record (an installed agent's version,
    # the egress it made), merged into the run's metadata.
    metadata: dict[str, Any] = field(default_factory=dict)


class Agent(Protocol):
    """An agent runs in a workspace until it answers or a budget ends."""

    name: str
    model: str | None

    def run(self, ctx: AgentContext) -> AgentResult: ...

    # Optional:
    # - ``preflight() -> str | None`` names a configuration problem (a missing API key, a
    #   missing CLI) that would fail every run, so the CLI can refuse before starting any;
    # - ``cost_known(model) -> bool``: False when the agent's spend cannot be priced (a model
    #   missing from the price table), so ``--max-cost`` is refused rather than ignored;
    #   agents without it spend nothing or report their own cost;
    # - ``sandbox_needs(kind) -> SandboxNeeds`` asks for network, environment or mounts
    #   (``kind`` is the sandbox backend, ``bwrap`` or ``none``), and ``release()`` frees what
    #   it set up for the run once the run's sandbox is closed;
    # - ``identity`` (a property): what of the agent makes runs comparable, when more than
    #   its name (an installed agent's ``name@version``);
    # - ``uses_reference_solution = True`` with ``provide_reference_solution(path)``: the
    #   runner hands the scenario's solution/ directory to this agent alone.
