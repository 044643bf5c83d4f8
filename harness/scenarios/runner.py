"""The runner: one scenario, N runs, each stored whatever happens.

One run: fresh workspace → agent in its sandbox (with a deadline) → the sandbox is closed
(everything the agent started is killed, no tool call is accepted) → diff → a protected
grading copy of the workspace (:mod:`harness.grading.copy`) in a fresh sandbox → evaluators →
score → stored record. A batch: the tools the scenario's commands need are checked, an
optional warmup runs once, then ``iterations`` runs (``parallel`` at a time, each in its own
workspace), then the batch record.

Outcome of a run (``status`` / ``failure_class``):

- ``completed`` / None: the agent finished and the run is successful (score ≥ threshold, no
  gating command failed).
- ``failed`` / ``validation``: a gating command (install, test) failed; ``failed`` / ``judge``:
  not successful and the judge errored; ``failed`` / ``agent``: the agent reported failure, or
  its work scored below the threshold.
- ``timeout`` / ``agent``: the agent ran past ``timeout_minutes`` (its deadline) or said so.
- ``budget_exceeded`` / ``agent``: the agent hit a turn/token/cost budget.
- ``failed`` / ``validation`` also when an evaluator could not grade what the agent left
  (an ``error`` result blamed on the workspace, see :mod:`harness.grading.evaluators.pipeline`).
- ``error`` / ``agent`` (the agent raised or reported an error), ``infra`` (workspace or warmup
  could not be prepared, a program a validation command runs is not installed, or the model
  provider failed: unavailable after retries, credentials refused, for the agent or the
  judge, whatever turns were done before), ``harness`` (a bug in the harness itself).

Runs that reached the agent are evaluated and scored whatever the agent's status, so partial
work is visible; ``is_successful`` is true only for ``completed`` runs.

Every run records where its time went (``metadata.phases``, ms; see :class:`Phases`), whether
its model answers were replayed from the response cache (``metadata.cached``,
``cachedCalls``, ``modelCalls``), and the batch record keeps how long each run took to store
(``metadata.storageMs``), which a run's own record cannot hold.
"""

from __future__ import annotations

import secrets
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from harness import __version__ as HARNESS_VERSION
from harness.agents import agent_identity, create_agent, is_agent, model_api, unknown_agent
from harness.agents.base import AgentContext, AgentResult, Budgets, SandboxNeeds
from harness.events import Event, OnEvent
from harness.grading.evaluators.base import EvaluatorResult
from harness.grading.evaluators.llm_judge import JudgeChoice, ResolvedJudge, resolve_judge
from harness.grading.evaluators.pipeline import run_evaluators
from harness.grading.evaluators.validation import command_timeout, missing_tools, scenario_commands
from harness.control import BatchControl
from harness import leftovers
from harness._util.ownership import owned
from harness.grading.copy import GradingSession
from harness.scenarios.plan import (
    Group,
    Plan,
    PlanError,
    config_parts,
    describe_cell_metadata,
    hash_parts,
    reconcile,
)
from harness.results.client import NotAWorkerError, ResultsClient
from harness.results.progress import ProgressReporter
from harness.results.records import (
    batch_record,
    BatchRecord,
    EvaluationRecord,
    RunRecord,
    Telemetry,
    new_batch_id,
    new_run_id,
)
from harness.sandbox import (
    CONTAINER_KINDS,
    MODES,
    CommandResult,
    EnvironmentChoice,
    SandboxSpec,
    SandboxUnavailable,
    build_environment,
    choose_environment,
    default_mode,
    open_sandbox,
    resolve_mode,
)
from harness.sandbox.bwrap import probe as bwrap_probe
from harness.sandbox.container import detect_runtime
from harness.sandbox.images import ContainerImage
from harness.scenarios.model import Scenario, TierPrompt
from harness.grading.scoring import RunScore, score_run
from harness.tools import ToolConfig
from harness.grading.suspicious import suspicious_changes
from harness._util.trees import tree_usage
from harness.scenarios.workspace import (
    ALWAYS_EXCLUDED,
    WorkspaceDiff,
    WorkspaceError,
    compute_diff,
    create_workspace,
)

DETAILS_CAP = 16_000
ANSWER_CAP = 8_000
DEFAULT_WARMUP_TIMEOUT_S = 600.0
STORAGE_TIMES_CAP = 1_000  # runs whose storage time the batch record keeps (its metadata is capped)


class Phases:
    """Where one run's time went, in ms (``metadata.phases``).

    The phases are additive: ``workspace`` (the fixture copy), ``agent.model`` (inside model
    calls, retries and their waits included), ``agent.tools`` (inside tool executions),
    ``agent.other`` (the rest of the agent's time: its own work, sandbox setup and teardown),
    ``diff``, ``grading.copy`` (the protected grading copy and its sandbox),
    ``validation.<command>``, ``evaluator.<name>``, ``grading.other`` (re-protection before
    test commands, report reading, removing the copy), ``cleanup`` (removing the workspace)
    and ``other`` (what none of them measured), which together make the run's duration. The
    group's warmup (``metadata.warmupMs``, shared by ``warmupSharedBy`` runs) and the post
    of the record (the batch's ``metadata.storageMs``) happen outside it.
    """

    def __init__(self) -> None:
        self.ms: dict[str, float] = {}

    def add(self, name: str, ms: float) -> None:
        self.ms[name] = self.ms.get(name, 0.0) + max(0.0, ms)

    @contextmanager
    def measure(self, name: str) -> Iterator[None]:
        started = time.monotonic()
        try:
            yield
        finally:
            self.add(name, (time.monotonic() - started) * 1000.0)

    def finish(self, duration_ms: float) -> dict[str, float]:
        """The phases rounded to 0.1 ms, with ``other`` making up the run's duration."""
        out = {name: round(ms, 1) for name, ms in self.ms.items()}
        out["other"] = round(max(0.0, duration_ms - sum(out.values())), 1)
        return out


class Specialist(Protocol):
    """What the runner needs from a specialist (see ``harness.specialists``)."""

    name: str
    version: str

    def system_prompt(self, model: str | None) -> str: ...


@dataclass
class RunOptions:
    """How to run a scenario. ``agent_options`` go to the agent factory and ``AgentContext.options``
    (``base_url``, ...)."""

    agent: str = "echo"
    model: str | None = None
    iterations: int = 1
    parallel: int = 1
    batch_id: str | None = None
    skip_warmup: bool = False
    rebuild_images: bool = False  # build scenario images again, without the build cache
    keep_workspace: bool = False
    workspaces_root: Path | None = None
    budgets: Budgets | None = None  # timeout_s is always taken from the scenario (or timeout_minutes)
    timeout_minutes: float | None = None  # overrides the scenario's timeout_minutes
    agent_options: dict[str, Any] = field(default_factory=dict)
    # bench --cache replay: model answers (the agent's and the judge's) are replayed from the
    # response cache when there. Off by default: every run is a new sample.
    use_cache: bool = False
    specialist: Specialist | None = None
    agent_grace_s: float = 10.0  # how long past its deadline an agent may take to return
    metadata: dict[str, Any] = field(default_factory=dict)  # copied into every run's metadata
    # bwrap | none | podman | docker, or auto (resolved per scenario: a scenario declaring an image
    # gets a container backend); None: from ZE_BENCHMARKS_SANDBOX, else auto
    sandbox: str | None = None
    judge: JudgeChoice = field(default_factory=JudgeChoice)  # auto, none, or PROVIDER:MODEL
    control: BatchControl | None = None  # interrupt/abort from outside (Ctrl-C); one is made if None


#: What a plan tells its watcher (:class:`harness.events.Event`): for each run, a ``stage``
#: event as it reaches each stage (workspace, agent, validation, heuristic_checks, ...,
#: storing), then ``done`` with the stored record; ``key`` is the run id, ``cell`` the plan's
#: cell, ``iteration`` its iteration.
ProgressCallback = OnEvent


@dataclass
class RunOutcome:
    record: RunRecord
    results: list[EvaluatorResult] = field(default_factory=list)
    agent_result: AgentResult | None = None
    phases: Phases = field(default_factory=Phases)
    diff: WorkspaceDiff | None = None
    workspace: Path | None = None  # set when the workspace was kept
    post_outcome: str | None = None  # stored | duplicate | spooled, None if posting failed
    post_error: str | None = None  # why it was spooled, or why posting failed
    storage_ms: float | None = None  # how long posting the record took


@dataclass
class WarmupResult:
    ok: bool
    kind: str  # commands | agent
    commands: list[CommandResult] = field(default_factory=list)
    error: str | None = None

    def summary(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "kind": self.kind,
            "error": self.error,
            "commands": [{"command": c.command, "exitCode": c.exit_code, "timedOut": c.timed_out,
                          "durationMs": round(c.duration_ms, 1)} for c in self.commands],
        }


@dataclass
class BatchOutcome:
    batch_id: str
    runs: list[RunOutcome]
    batch: BatchRecord  # what was posted
    warmup: WarmupResult | None = None
    post_error: str | None = None
    batch_post: str | None = None  # how the batch record went: stored, duplicate, spooled, None
    sandbox: str = ""  # the backend every run used ("bwrap, podman" when scenarios differ)
    judge: ResolvedJudge | None = None
    preflight_error: str | None = None  # why no agent ran (a missing program), if so
    interrupted: bool = False  # stopped on request; runs that never started are not in ``runs``
    not_started: int = 0


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def price_table_version() -> str:
    from harness.models.pricing import load_price_table

    return load_price_table().version


def cache_mode(options: RunOptions) -> str:
    """``replay`` when model answers may come from the response cache, else ``off``."""
    return "replay" if options.use_cache else "off"


def config_hash(scenario: Scenario, prompt: TierPrompt, agent: str, model: str | None,
                specialist: Specialist | None = None, sandbox: str = "none", judge: str = "none",
                budgets: Budgets | None = None, base_url: str | None = None,
                timeout_minutes: float | None = None, cache: str = "off") -> str:
    """The digest of :func:`harness.scenarios.plan.config_parts`: what makes two runs comparable."""
    return hash_parts(config_parts(scenario, prompt, agent, model, specialist, sandbox, judge, budgets,
                                   base_url, timeout_minutes, cache))


def classify(agent_status: str | None, score: RunScore | None, results: list[EvaluatorResult],
             agent_error_kind: str | None = None) -> tuple[str, str | None]:
    """(status, failure_class) of a run from the agent's status, whose side its error is on
    (``agent_error_kind``: "infra" for a model provider's failure) and the scoring outcome.
    The one place that decides; the table of docs/scenarios.md states the same rules."""
    if agent_status in ("timeout", "budget_exceeded"):
        return agent_status, "agent"
    if agent_status == "error":
        return "error", "infra" if agent_error_kind == "infra" else "agent"
    if agent_status == "failed":
        return "failed", "agent"
    judge_down = any(r.name == "llm_judge" and r.status == "error" and r.data.get("blame") == "infra"
                     for r in results)
    # A grade the harness could not finish (its own bug, or the judge's provider down) is no
    # verdict either way: counting it as a success when the rest passed, and dropping it
    # otherwise, would bias every comparison towards success.
    if judge_down and not (score is not None and (score.gating_failures or score.workspace_errors)):
        return "error", "infra"
    if any(r.status == "error" and r.data.get("blame") == "harness" for r in results):
        return "error", "harness"
    if score is not None and score.successful:
        return "completed", None
    if score is None or score.score is None:
        # Nothing could be scored (e.g. a judge-only scenario without judge credentials).
        judged = any(r.name == "llm_judge" for r in results)
        return "error", "infra" if judge_down else "judge" if judged else "harness"
    if score.gating_failures or score.workspace_errors:
        # A gating command failed, or an evaluator could not grade the agent's output.
        return "failed", "validation"
    if any(r.name == "llm_judge" and r.status == "error" for r in results):
        return "failed", "judge"
    if any(r.status == "error" for r in results):
        return "error", "harness"
    return "failed", "agent"


def _run_agent(agent: Any, ctx: AgentContext, grace_s: float,
               control: BatchControl | None = None) -> tuple[AgentResult, bool]:
    """Run the agent in a thread; (result, overran). An agent still running ``grace_s`` after its
    deadline is abandoned and the run is a timeout; after an abort it is abandoned at once."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = agent.run(ctx)
        except BaseException as exc:  # noqa: BLE001 - reported as the agent's error
            box["error"] = exc
            box["trace"] = traceback.format_exc(limit=8)

    thread = threading.Thread(target=target, name=f"agent-{ctx.repeat_index}", daemon=True)
    thread.start()
    give_up = (ctx.deadline or time.monotonic()) + grace_s
    while thread.is_alive() and time.monotonic() < give_up and not (control is not None and control.expired):
        thread.join(timeout=min(0.2, max(0.0, give_up - time.monotonic())))
    if thread.is_alive():
        if control is not None and control.expired:
            return AgentResult(status="error", error="interrupted: the agent was abandoned"), False
        return AgentResult(status="timeout", error="the agent did not stop at its deadline; abandoned"), True
    if "error" in box:
        exc = box["error"]
        return AgentResult(status="error", error=f"{type(exc).__name__}: {exc}",
                           transcript=[{"role": "harness", "content": box["trace"]}]), False
    result = box.get("result")
    if not isinstance(result, AgentResult):
        return AgentResult(status="error", error=f"agent returned {type(result).__name__}, not AgentResult"), False
    overran = ctx.deadline is not None and time.monotonic() > ctx.deadline
    if overran and result.status == "completed":
        result = replace(result, status="timeout")
    return result, overran


def agent_sandbox_spec(scenario: Scenario, kind: str, needs: SandboxNeeds | None = None) -> SandboxSpec:
    """The sandbox of an agent's run: the scenario's settings plus what the agent asks for."""
    needs = needs or SandboxNeeds()
    return SandboxSpec(kind=kind, network=scenario.sandbox_network or needs.network,
                       limits=scenario.limits(), mounts=tuple(needs.mounts), env=dict(needs.env))


def _agent_needs(agent: Any, kind: str) -> SandboxNeeds:
    needs = getattr(agent, "sandbox_needs", None)
    return needs(kind) if needs is not None else SandboxNeeds()


def _release(agent: Any) -> None:
    """What the agent set up for its run (an egress relay, a private home), freed."""
    release = getattr(agent, "release", None)
    if release is not None:
        release()


def prepare_agent(agent: Any, scenario: Scenario) -> None:
    """Hand the answer key to the one agent that declares it needs it (``oracle``)."""
    if getattr(agent, "uses_reference_solution", False):
        agent.provide_reference_solution(scenario.solution_dir)


def _sandbox_mode(options: RunOptions) -> str:
    """The plan's sandbox mode: a kind, or ``auto`` (resolved per scenario)."""
    return (options.sandbox or default_mode()).strip().lower()


def _sandbox_kind(options: RunOptions) -> str:
    mode = _sandbox_mode(options)
    return resolve_mode(mode).kind if mode == "auto" else mode


def scenario_environment(scenario: Scenario, mode: str) -> EnvironmentChoice:
    """Where ``scenario``'s commands run under ``--sandbox MODE`` (see
    :func:`harness.sandbox.choose_environment`)."""
    return choose_environment(mode, scenario.environment)


def run_warmup(scenario: Scenario, options: RunOptions, image: ContainerImage | None = None) -> WarmupResult | None:
    """Run the scenario's warmup in a sandbox on a scratch copy of the fixture (never in the
    fixture itself), then delete the copy. None when the scenario has no warmup. ``image``: what
    a container backend starts (the scenario's own image)."""
    warmup = scenario.warmup
    if not warmup:
        return None
    kind = _sandbox_kind(options)
    scratch = create_workspace(scenario, options.workspaces_root, label="warmup")
    try:
        timeout = float(warmup.get("timeout_seconds", DEFAULT_WARMUP_TIMEOUT_S))
        if warmup.get("commands"):
            result = WarmupResult(ok=True, kind="commands")
            with open_sandbox(scratch.path, agent_sandbox_spec(scenario, kind), image) as sandbox:
                for item in warmup["commands"]:
                    command = item["cmd"] if isinstance(item, dict) else str(item)
                    outcome = sandbox.run(command, timeout_s=timeout)
                    result.commands.append(outcome)
                    if not outcome.ok:
                        result.ok, result.error = False, f"warmup command failed ({outcome.outcome()}): {command}"
                        break
            return result
        if warmup.get("prompt"):
            agent = create_agent(options.agent, options.model, **options.agent_options)
            prepare_agent(agent, scenario)
            sandbox = open_sandbox(scratch.path, agent_sandbox_spec(scenario, kind, _agent_needs(agent, kind)), image)
            ctx = AgentContext(prompt=str(warmup["prompt"]), sandbox=sandbox,
                               budgets=replace(options.budgets or Budgets(), timeout_s=timeout),
                               tools=ToolConfig(scenario.oracle_answers, scenario.allow_fetch_url),
                               model=options.model, deadline=time.monotonic() + timeout,
                               use_cache=options.use_cache, options=dict(options.agent_options))
            try:
                agent_result, _ = _run_agent(agent, ctx, options.agent_grace_s)
            finally:
                sandbox.close()
                _release(agent)
            ok = agent_result.status == "completed"
            return WarmupResult(ok=ok, kind="agent", error=None if ok else f"warmup agent {agent_result.status}: "
                                f"{agent_result.error or ''}".strip())
        return None
    finally:
        scratch.remove()


def unenforceable_budget(agent: Any, budgets: Budgets | None) -> str | None:
    """Why ``budgets`` cannot be enforced for ``agent`` (a cost cap on an unpriced model), or None."""
    priced = getattr(agent, "cost_known", None)
    if budgets is None or budgets.max_cost_usd is None or priced is None or priced():
        return None
    explain = getattr(agent, "unpriced_reason", None)
    reason = explain() if explain is not None else f"the price table has no price for {agent.model!r} (agent {agent.name})"
    return f"--max-cost cannot be enforced: {reason}; see `bench prices`, or run without --max-cost"


def check_tools(scenario: Scenario, kind: str, image: ContainerImage | None = None) -> str | None:
    """Why the scenario cannot be graded on this machine (a program or python module its
    commands run is missing), or None. Checked once per batch, in a sandbox of ``kind`` (a
    container backend: started from ``image``, None for the host-runtime image)."""
    commands = scenario_commands(scenario)
    if not commands:
        return None
    if image is None and kind in CONTAINER_KINDS and bwrap_probe() is None:
        kind = "bwrap"  # the host-runtime image sees what bwrap sees: the same mounts and PATH
    with tempfile.TemporaryDirectory(prefix=owned("zebench-tools-")) as tmp:
        with open_sandbox(Path(tmp), agent_sandbox_spec(scenario, kind), image) as sandbox:
            missing = missing_tools(sandbox, commands)
    if not missing:
        return None
    return (f"{scenario.key} cannot be graded here: its commands need {', '.join(missing)}, which "
            f"{'is' if len(missing) == 1 else 'are'} not installed (`bench doctor` says how to get it)")


class _Poster:
    """Posts records through one client, one at a time (clients need not be thread-safe)."""

    def __init__(self, client: ResultsClient) -> None:
        self.client = client
        self.lock = threading.Lock()

    def post_run(self, record: RunRecord) -> tuple[str | None, str | None]:
        """(outcome, problem): "stored"/"duplicate", or "spooled" with why, or None with the error."""
        with self.lock:
            try:
                outcome = self.client.post_run(record)
            except NotAWorkerError as exc:  # kept in the spool, with the reason
                return ("spooled" if exc.kept_in else None), str(exc)
            except Exception as exc:  # noqa: BLE001 - reported, never fatal to the batch
                return None, f"{type(exc).__name__}: {exc}"
            reason = getattr(self.client, "last_spool_reason", None) if outcome == "spooled" else None
            return outcome, reason


def _evaluation_records(results: list[EvaluatorResult]) -> list[EvaluationRecord]:
    return [EvaluationRecord(evaluator_name=r.name, score=float(min(1.0, max(0.0, r.score))), max_score=r.max_score,
                             status=r.status, details=r.details[:DETAILS_CAP]) for r in results]


def _telemetry(agent_result: AgentResult | None, results: list[EvaluatorResult], duration_ms: float,
               workspace: Path | None) -> Telemetry:
    t = Telemetry(duration_ms=round(duration_ms, 1), workspace_dir=str(workspace) if workspace else None,
                  cost_usd=None)
    if agent_result is not None:
        t.tool_calls = agent_result.tool_calls
        t.tokens_in = agent_result.tokens_in
        t.tokens_out = agent_result.tokens_out
        t.cache_read_tokens = agent_result.cache_read_tokens
        t.cache_write_tokens = agent_result.cache_write_tokens
        t.cost_usd = agent_result.cost_usd
        t.turns = agent_result.turns
        t.latencies_ms = list(agent_result.latencies_ms)  # replayed answers' latencies are kept apart
    judged = [r for r in results if r.tokens_in or r.tokens_out or r.cost_usd is not None]
    if judged:
        t.judge_tokens_in = sum(r.tokens_in for r in judged)
        t.judge_tokens_out = sum(r.tokens_out for r in judged)
        costs = [r.cost_usd for r in judged]
        t.judge_cost_usd = None if any(c is None for c in costs) else sum(costs)
    return t


@dataclass
class BatchSetup:
    """What a group of runs decided before its first run, shared by all its runs."""

    config_hash: str
    sandbox: str
    judge: ResolvedJudge
    warmup: WarmupResult | None = None
    blocked: str | None = None  # why no agent may run (a missing program), stored as error/infra
    control: BatchControl = field(default_factory=BatchControl)
    group: Group | None = None  # the plan's group, for the cell metadata every run carries
    warmup_ms: float | None = None  # the warmup's wall time, once for the group's runs
    environment: EnvironmentChoice | None = None  # the backend and the scenario's image, if it declares one
    image: ContainerImage | None = None  # the scenario's image, built (None: the host's runtime)


def _cache_metadata(agent_result: AgentResult, results: list[EvaluatorResult]) -> dict[str, Any]:
    """Whether the run's model answers (the agent's and the judge's) came from the cache."""
    calls = agent_result.model_calls + sum(int(r.data.get("modelCalls") or 0) for r in results)
    cached = agent_result.cached_calls + sum(int(r.data.get("cachedCalls") or 0) for r in results)
    meta: dict[str, Any] = {"cached": cached > 0, "cachedCalls": cached, "modelCalls": calls}
    if agent_result.replayed_latencies_ms:
        meta["replayedLatenciesMs"] = [round(x, 1) for x in agent_result.replayed_latencies_ms]
    return meta


def _sandbox_metadata(setup: BatchSetup, described: dict[str, Any]) -> dict[str, Any]:
    """A run's ``metadata.sandbox``: what its sandbox said of itself, and the image the scenario
    declares when it was not used (an explicit host backend, or no container backend here)."""
    unused = setup.environment.describe() if setup.environment is not None else None
    return {**described, "image": unused} if unused is not None else described


def execute_run(scenario: Scenario, prompt: TierPrompt, options: RunOptions, batch_id: str, iteration: int,
                setup: BatchSetup, poster: _Poster | None = None,
                progress: ProgressCallback | None = None) -> RunOutcome:
    """Run one iteration and store it. Every failure becomes a stored record; the only exception
    that escapes is KeyboardInterrupt, after the interrupted run was stored as an error."""
    cfg_hash, warmup = setup.config_hash, setup.warmup
    run_id = new_run_id()
    started_mono = time.monotonic()
    specialist = options.specialist
    record = RunRecord(
        run_id=run_id, suite=scenario.suite, scenario=scenario.name, tier=prompt.tier, agent=options.agent,
        batch_id=batch_id, model=options.model, started_at=_now_iso(), config_hash=cfg_hash,
        specialist_enabled=specialist is not None,
        specialist_name=specialist.name if specialist else None,
        specialist_version=specialist.version if specialist else None,
        metadata={
            **options.metadata,
            "tierLabel": prompt.label,
            "iteration": iteration,
            "scenarioId": scenario.id,
            "scenarioTitle": scenario.title,
            "successThreshold": scenario.success_threshold,
            "timeoutMinutes": options.timeout_minutes or scenario.timeout_minutes,
            "harnessVersion": HARNESS_VERSION,
        },
    )
    if setup.group is not None:
        record.metadata.update(describe_cell_metadata(setup.group, iteration))
        record.metadata["requestedModel"] = options.model
        if iteration in setup.group.retry_of:
            record.metadata["retryOf"] = setup.group.retry_of[iteration]
    if warmup is not None:
        record.metadata["warmup"] = warmup.summary()
    if setup.warmup_ms is not None:
        # Once per group, before its runs: not part of this run's duration.
        record.metadata["warmupMs"] = round(setup.warmup_ms, 1)
        record.metadata["warmupSharedBy"] = len(setup.group.iterations) if setup.group is not None else 1
    # Pessimistic until the run reaches a verdict: an interrupted run is never stored as completed.
    record.status, record.failure_class = "error", "harness"
    outcome = RunOutcome(record=record)
    phases = outcome.phases

    cell = setup.group.cell(iteration) if setup.group is not None else None

    def stage(name: str) -> None:
        if progress:
            progress(Event("stage", key=run_id, cell=cell, stage=name, iteration=iteration))

    record.metadata["sandbox"] = _sandbox_metadata(setup, {"kind": setup.sandbox})
    record.metadata["judge"] = setup.judge.identity
    record.metadata["priceTable"] = price_table_version()  # the prices its costs were computed with
    workspace = None
    try:
        if setup.blocked is not None:
            record.status, record.failure_class = "error", "infra"
            record.metadata["error"] = setup.blocked
        elif warmup is not None and not warmup.ok:
            record.status, record.failure_class = "error", "infra"
            record.metadata["error"] = warmup.error
        else:
            stage("workspace")
            try:
                with phases.measure("workspace"):
                    workspace = create_workspace(scenario, options.workspaces_root)
            except WorkspaceError as exc:
                record.status, record.failure_class = "error", "infra"
                record.metadata["error"] = str(exc)
            if workspace is not None:
                _agent_and_evaluate(scenario, prompt, options, iteration, workspace.path, outcome, stage, setup)
    except Exception as exc:  # noqa: BLE001 - a harness bug still yields a stored run
        record.status, record.failure_class = "error", "harness"
        record.metadata["error"] = f"{type(exc).__name__}: {exc}"
        record.metadata["traceback"] = traceback.format_exc(limit=12)
    except KeyboardInterrupt:
        record.status, record.failure_class = "error", "harness"
        record.metadata["error"] = "interrupted"
        raise
    finally:
        record.completed_at = _now_iso()
        kept = None
        if workspace is not None:
            if options.keep_workspace:
                kept = workspace.path
            else:
                with phases.measure("cleanup"):
                    workspace.remove()
        outcome.workspace = kept
        record.evaluations = _evaluation_records(outcome.results)
        if outcome.agent_result is not None:
            record.transcript = outcome.agent_result.transcript
            record.metadata.update(_cache_metadata(outcome.agent_result, outcome.results))
        duration_ms = (time.monotonic() - started_mono) * 1000.0
        record.telemetry = _telemetry(outcome.agent_result, outcome.results, duration_ms, kept)
        record.metadata["phases"] = phases.finish(duration_ms)
        if poster is not None:
            stage("storing")
            posting = time.monotonic()
            outcome.post_outcome, outcome.post_error = poster.post_run(record)
            outcome.storage_ms = (time.monotonic() - posting) * 1000.0
        if progress:
            progress(Event("done", key=run_id, cell=cell, stage="done", result=record, iteration=iteration))
    return outcome


def _agent_and_evaluate(scenario: Scenario, prompt: TierPrompt, options: RunOptions, iteration: int,
                        workspace: Path, outcome: RunOutcome, stage: Callable[[str], None], setup: BatchSetup) -> None:
    record = outcome.record
    timeout_s = (options.timeout_minutes or scenario.timeout_minutes) * 60.0
    budgets = replace(options.budgets or Budgets(), timeout_s=timeout_s)
    system_prompt = options.specialist.system_prompt(options.model) if options.specialist else None
    stage("agent")
    agent_started = time.monotonic()
    try:
        agent = create_agent(options.agent, options.model, **options.agent_options)
        prepare_agent(agent, scenario)
        needs = _agent_needs(agent, setup.sandbox)
    except Exception as exc:  # noqa: BLE001 - e.g. missing credentials: the agent could not start
        agent_result = AgentResult(status="error", error=f"{type(exc).__name__}: {exc}")
    else:
        sandbox = open_sandbox(workspace, agent_sandbox_spec(scenario, setup.sandbox, needs), setup.image)
        record.metadata["sandbox"] = _sandbox_metadata(setup, sandbox.describe())
        control = setup.control
        ctx = AgentContext(prompt=prompt.text, sandbox=sandbox, budgets=budgets,
                           tools=ToolConfig(scenario.oracle_answers, scenario.allow_fetch_url),
                           system_prompt=system_prompt, model=options.model,
                           specialist_name=getattr(options.specialist, "unscoped_name", None)
                           or getattr(options.specialist, "name", None),
                           deadline=agent_started + timeout_s, repeat_index=iteration,
                           use_cache=options.use_cache, options=dict(options.agent_options),
                           cancel=control.stop_requested)
        control.register(sandbox)
        try:
            agent_result, overran = _run_agent(agent, ctx, options.agent_grace_s, control)
        finally:
            # The run is over: everything the agent started dies, and no tool call is accepted.
            sandbox.close()
            control.unregister(sandbox)
            _release(agent)
        if overran:
            record.metadata["agentOverranDeadline"] = True
    outcome.agent_result = agent_result
    record.model = agent_result.model or options.model
    agent_ms = (time.monotonic() - agent_started) * 1000.0
    record.metadata["agentDurationMs"] = round(agent_ms, 1)
    record.metadata["agentStatus"] = agent_result.status
    model_ms = min(agent_ms, max(0.0, agent_result.model_ms or 0.0))
    tool_ms = min(agent_ms - model_ms, max(0.0, agent_result.tool_ms or 0.0))
    outcome.phases.add("agent.model", model_ms)
    outcome.phases.add("agent.tools", tool_ms)
    outcome.phases.add("agent.other", agent_ms - model_ms - tool_ms)
    if agent_result.error_kind == "infra":
        # The provider (or the machine) failed, not the agent: how far the agent had got.
        record.metadata["infraFailure"] = {"turnsDone": agent_result.turns, "toolCalls": agent_result.tool_calls}
    if agent_result.final_answer:
        record.metadata["finalAnswer"] = agent_result.final_answer[:ANSWER_CAP]
    if agent_result.error:
        record.metadata["agentError"] = agent_result.error[:ANSWER_CAP]
    if agent_result.questions:
        record.metadata["questions"] = agent_result.questions
    record.metadata.update(agent_result.metadata)

    if setup.control.stopping:
        # Cut short by an interrupt: stored as such (a later run of the batch redoes it), not graded.
        record.status, record.failure_class = "error", "harness"
        record.metadata["error"] = "interrupted"
        record.metadata["interrupted"] = True
        return
    with outcome.phases.measure("diff"):
        diff = compute_diff(scenario.fixture_dir, workspace, scenario.workspace_exclude)
    outcome.diff = diff
    record.metadata["diff"] = {
        "summary": diff.summary(),
        "changedFiles": diff.changed_files[:200],
        "dependencyChanges": [vars(c) for c in diff.dependency_changes[:200]],
        "truncated": diff.truncated,
    }
    record.diff = diff.patch or None
    flags = suspicious_changes(scenario.fixture_dir, workspace, diff.added, diff.modified)
    if flags:
        record.metadata["suspicious"] = flags
    over = _over_quota(scenario, workspace)
    if over is not None:
        # What the agent left cannot be graded within bounds: its failure, with the figure.
        record.status, record.failure_class = "failed", "agent"
        record.total_score = record.weighted_score = 0.0
        record.is_successful, record.success_metric = False, 0.0
        record.metadata["error"] = over
        record.metadata["workspaceQuota"] = True
        return
    stage("grading")
    grading_started = time.monotonic()
    timings: dict[str, float] = {}
    watchdog: threading.Timer | None = None
    overran: list[float] = []
    try:
        with outcome.phases.measure("grading.copy"):
            session = GradingSession(scenario, workspace, setup.sandbox, options.workspaces_root, prompt=prompt.text,
                                     agent_result=agent_result, diff=diff, use_cache=options.use_cache,
                                     judge=setup.judge, image=setup.image)
        with session as grading:
            setup.control.register(grading.sandbox)
            limit_s = grading_deadline_s(scenario)

            def expire() -> None:
                overran.append(limit_s)
                grading.sandbox.close(grace_s=0)

            watchdog = threading.Timer(limit_s, expire)
            watchdog.daemon = True
            watchdog.start()
            try:
                outcome.results = run_evaluators(grading.context, on_stage=stage, timings=timings)
            finally:
                watchdog.cancel()
                setup.control.unregister(grading.sandbox)
            record.metadata["grading"] = grading.copy.summary()  # after re-protection before test commands
    finally:
        _grading_phases(outcome, timings, (time.monotonic() - grading_started) * 1000.0)
    if overran:
        record.status, record.failure_class = "error", "harness"
        record.metadata["error"] = f"grading did not finish within {overran[0]:.0f} s: its sandbox was closed"
        return
    if setup.control.stopping and (setup.control.aborted or any("SandboxClosed" in r.details
                                                                 for r in outcome.results)):
        record.status, record.failure_class = "error", "harness"
        record.metadata["error"] = "interrupted during grading"
        record.metadata["interrupted"] = True
        return
    score = score_run(outcome.results, scenario.rubric_weights, scenario.success_threshold)
    # One score under both names (the wire format keeps both); success as a number apart.
    record.total_score = score.score
    record.weighted_score = score.score
    record.status, record.failure_class = classify(agent_result.status, score, outcome.results,
                                                   agent_result.error_kind)
    missing = sorted({r.data["missing_tool"] for r in outcome.results if r.data.get("missing_tool")})
    if missing:
        # The machine lacks a program the scenario runs: nothing here measures the agent.
        record.status, record.failure_class = "error", "infra"
        record.metadata["error"] = f"not installed: {', '.join(missing)} (`bench doctor` says how to get it)"
    tampered = [e for r in outcome.results for e in r.data.get("tampered") or []]
    if tampered and not missing:
        # The code under test forged its test report (a canary said so): a failure, the agent's.
        record.status, record.failure_class = "failed", "tampered"
        record.metadata["tampered"] = tampered[:20]
    record.is_successful = record.status == "completed"
    record.success_metric = None if score.score is None else (1.0 if record.is_successful else 0.0)
    record.metadata["weights"] = score.weights
    if score.workspace_errors:
        record.metadata["workspaceErrors"] = score.workspace_errors
    if score.score is None and not missing:
        record.metadata["error"] = "no evaluator produced a score (all skipped or failed)"
    if score.gating_failures:
        record.metadata["gatingFailures"] = score.gating_failures


def _over_quota(scenario: Scenario, workspace: Path) -> str | None:
    """Why the workspace is too big to grade (files or bytes over the scenario's quota), or None."""
    limits = scenario.limits()
    usage = tree_usage(workspace, ALWAYS_EXCLUDED, limits.workspace_files, limits.workspace_bytes)
    if usage.over == "files":
        return (f"the agent left more than {limits.workspace_files} files in the workspace "
                f"(sandbox.workspace_files); it was not graded")
    if usage.over == "bytes":
        return (f"the agent left more than {limits.workspace_bytes} bytes in the workspace (at least "
                f"{usage.bytes} in {usage.files} files; sandbox.workspace_mb); it was not graded")
    return None


def grading_deadline_s(scenario: Scenario) -> float:
    """How long grading may take before its sandbox is closed: every command it may run at
    its own timeout, plus the judge and the harness's own work (a watchdog, not a budget)."""
    commands = len(scenario_commands(scenario)) + 1
    return commands * command_timeout(scenario) + 900.0


def _grading_phases(outcome: RunOutcome, timings: dict[str, float], total_ms: float) -> None:
    """Split grading's wall time: each validation command, each evaluator, the rest."""
    phases = outcome.phases
    measured = phases.ms.get("grading.copy", 0.0)
    for r in outcome.results:
        if r.data.get("group") == "validation" and isinstance(r.data.get("duration_ms"), (int, float)):
            phases.add(f"validation.{r.name}", r.data["duration_ms"])
            measured += r.data["duration_ms"]
    for name, ms in timings.items():
        if name != "validation":
            phases.add(f"evaluator.{name}", ms)
            measured += ms
    phases.add("grading.other", total_ms - measured)


def plan_sandbox(options: RunOptions) -> str:
    """The plan's sandbox mode: the kind every run uses, or ``auto``, resolved per scenario
    (the host backend, or a container backend for a scenario that declares an image)."""
    mode = _sandbox_mode(options)
    if mode not in MODES:
        raise ValueError(f"unknown sandbox mode {mode!r}; choose one of {', '.join(MODES)}")
    if mode == "auto":
        resolve_mode(mode)  # an impossible setting (root without setpriv) fails before anything runs
    return mode


def group_judge(options: RunOptions, agent: str) -> JudgeChoice:
    """The batch's judge choice for a group of ``agent`` (the judge policy depends on the agent
    and on a ``--base-url``: :func:`~harness.grading.evaluators.llm_judge.resolve_judge`)."""
    return (options.judge or JudgeChoice()).for_agent(agent, options.agent_options.get("base_url"), model_api(agent))


def fill_config(plan: Plan, options: RunOptions, kind: str) -> None:
    """Compute each group's config parts (and so its ``config_hash``): the judge it would get,
    the sandbox (its kind, and the content hash of the scenario's image when one is started;
    ``kind`` may be ``auto``), the budgets, base URL and timeout."""
    environments: dict[str, str] = {}
    for group in plan.groups:
        judge = resolve_judge(group.scenario.llm_judge, group_judge(options, group.agent))
        key = group.scenario.key
        if key not in environments:
            environments[key] = scenario_environment(group.scenario, kind).config_text()
        group.parts = config_parts(group.scenario, group.prompt, agent_identity(group.agent), group.model,
                                   group.specialist, environments[key],
                                   judge.identity, options.budgets, options.agent_options.get("base_url"),
                                   options.timeout_minutes, cache_mode(options))


def _check_options(options: RunOptions, agents: list[tuple[str, str | None]]) -> None:
    if options.parallel < 1:
        raise ValueError("parallel must be at least 1")
    from worker.schema import id_problem

    if options.batch_id is not None and id_problem(options.batch_id):
        raise ValueError(f"batch id {options.batch_id[:40]!r}...: {id_problem(options.batch_id)}")
    for agent, model in agents:
        if not is_agent(agent):
            raise unknown_agent(agent)
        problem = unenforceable_budget(create_agent(agent, model, **options.agent_options), options.budgets)
        if problem:
            raise ValueError(problem)


def _scenario_setup(scenario: Scenario, mode: str, rebuild: bool = False,
                    ) -> tuple[EnvironmentChoice, ContainerImage | None, str | None]:
    """The scenario's backend, its image built (or found in the cache), and why its runs
    cannot start (a refused or unbuildable image, a missing program), or None."""
    environment = scenario_environment(scenario, mode)
    if environment.refused is not None:
        return environment, None, f"{scenario.key} cannot run here: {environment.refused}"
    try:
        if environment.kind in CONTAINER_KINDS:
            detect_runtime(environment.kind)  # said once here rather than by every run
    except SandboxUnavailable as exc:
        return environment, None, f"{scenario.key} cannot run here: {exc}"
    try:
        image = build_environment(environment, rebuild=rebuild)
    except Exception as exc:  # noqa: BLE001 - the runs are stored as infra errors
        return environment, None, f"{scenario.key}: its image (sandbox.image) could not be built: {exc}"
    try:
        checked = (check_tools(scenario, environment.kind) if image is None
                   else check_tools(scenario, environment.kind, image))
        return environment, image, checked
    except Exception as exc:  # noqa: BLE001 - the runs are stored as infra errors
        return environment, image, f"the tools check could not run: {type(exc).__name__}: {exc}"


def _prepare_group(group: Group, options: RunOptions, kind: str, control: BatchControl,
                   tools_checked: dict[str, tuple[EnvironmentChoice, ContainerImage | None, str | None]],
                   ) -> tuple[BatchSetup, RunOptions]:
    """The group's judge, hash, backend, image and tools check (once per scenario) and warmup
    (once per group). ``kind`` is the plan's sandbox mode (``auto`` resolved per scenario)."""
    key = group.scenario.key
    if key not in tools_checked:
        tools_checked[key] = _scenario_setup(group.scenario, kind, options.rebuild_images)
    environment, image, blocked = tools_checked[key]
    group_options = replace(options, agent=group.agent, model=group.model, specialist=group.specialist,
                            metadata={**options.metadata, **(group.specialist.run_metadata(group.model)
                                                            if group.specialist is not None else {})},
                            sandbox=environment.kind)
    judge = resolve_judge(group.scenario.llm_judge, group_judge(options, group.agent))
    if not group.parts:
        fill_config(Plan("", [group], 1), options, kind)
    setup = BatchSetup(config_hash=group.config_hash, sandbox=environment.kind, judge=judge, control=control,
                       group=group, environment=environment, image=image)
    setup.blocked = blocked
    if setup.blocked is None and not options.skip_warmup and group.iterations:
        started = time.monotonic()
        try:
            setup.warmup = run_warmup(group.scenario, group_options, image)
        except Exception as exc:  # noqa: BLE001 - the runs are stored as infra errors
            setup.warmup = WarmupResult(ok=False, kind="error", error=f"warmup could not run: {type(exc).__name__}: {exc}")
        if setup.warmup is not None:
            setup.warmup_ms = (time.monotonic() - started) * 1000.0
    return setup, group_options


def _distinct(values: list[Any]) -> Any:
    out: list[Any] = []
    for v in values:
        if v not in out:
            out.append(v)
    return out[0] if len(out) == 1 else out


def run_plan(plan: Plan, options: RunOptions, client: ResultsClient | None,
             progress: ProgressCallback | None = None) -> BatchOutcome:
    """Run every cell of ``plan``, ``options.parallel`` at a time, store each run, then the batch.

    ``options`` carries what the cells share (budgets, sandbox, judge, timeouts, workspaces);
    its agent, model, specialist and iterations are the groups'. Raises only for bad input
    found before any run starts; after that every run is stored whatever happens to it.
    """
    _check_options(options, sorted({(g.agent, g.model) for g in plan.groups}, key=str))
    options = replace(options, batch_id=plan.batch_id)
    created_ms = int(time.time() * 1000)
    if options.workspaces_root is not None:
        try:
            leftovers.sweep(Path(options.workspaces_root))  # a killed earlier batch's workspaces
        except Exception:  # noqa: BLE001 - never a reason for the batch to fail
            pass
    kind = plan_sandbox(options)  # a kind, or auto: resolved per scenario (_prepare_group)
    options = replace(options, sandbox=kind)
    control = options.control or BatchControl()
    poster = _Poster(client) if client is not None else None
    total = sum(len(g.iterations) for g in plan.groups)
    # The worker merges every invocation's metadata for a shared batch id; this keeps two
    # identical invocations apart while a redelivered post stays one. The live progress
    # reports name the invocation with it too (worker/progress.py).
    invocation_id = secrets.token_hex(8)
    live = (ProgressReporter(client, plan.batch_id, invocation_id, cells=total, planned=plan.planned,
                             lock=poster.lock).start() if poster is not None else None)
    tools_checked: dict[str, tuple[EnvironmentChoice, ContainerImage | None, str | None]] = {}
    prepared: list[tuple[Group, BatchSetup, RunOptions]] = []
    work: list[tuple[int, Group, int]] = []

    def one(item: tuple[int, Group, int]) -> RunOutcome | None:
        slot, group, iteration = item
        if control.stopping:
            return None  # interrupted before it started: not stored, a later run of the batch does it
        _, setup, group_options = prepared[slot]
        if live is not None:
            live.cell_started()
        try:
            return execute_run(group.scenario, group.prompt, group_options, plan.batch_id, iteration, setup, poster,
                               progress)
        finally:
            if live is not None:
                live.cell_ended()

    try:
        for index, group in enumerate(g for g in plan.groups if g.iterations):
            if control.stopping:
                break
            setup, group_options = _prepare_group(group, options, kind, control, tools_checked)
            prepared.append((group, setup, group_options))
            work += [(len(prepared) - 1, group, i) for i in group.iterations]
        if options.parallel == 1 or len(work) <= 1:
            started = [one(item) for item in work]
        else:
            with ThreadPoolExecutor(max_workers=min(options.parallel, len(work)), thread_name_prefix="run") as pool:
                started = list(pool.map(one, work))
    except BaseException:
        if live is not None:
            live.finish("interrupted")
        raise
    runs = [r for r in started if r is not None]
    interrupted = control.stopping

    groups = [g for g, _, _ in prepared] or plan.groups
    setups = [s for _, s, _ in prepared]
    used = _distinct([s.sandbox for s in setups]) if setups else _sandbox_kind(options)
    meta: dict[str, Any] = {
        "suite": _distinct([g.scenario.suite for g in groups]),
        "scenario": _distinct([g.scenario.name for g in groups]),
        "tier": _distinct([g.prompt.tier for g in groups]),
        "agent": _distinct([g.agent for g in groups]),
        "model": _distinct([g.model for g in groups]),
        "specialist": _distinct([g.specialist_ref for g in groups]),
        "iterations": len(runs) if interrupted else total, "parallel": options.parallel,
        "configHash": _distinct([s.config_hash for s in setups]) if setups else None,
        "harnessVersion": HARNESS_VERSION, "sandbox": used,
        "judge": _distinct([s.judge.identity for s in setups]) if setups else None,
        "plannedCells": plan.planned,
        **({"planKey": plan.plan_key} if plan.plan_key else {}),
        "invocationId": invocation_id,
    }
    if plan.shard is not None:
        meta["shard"] = f"{plan.shard[0]}/{plan.shard[1]}"
    storage = {r.record.run_id: round(r.storage_ms, 1) for r in runs if r.storage_ms is not None}
    if storage:
        # How long each run's record took to store: its own record cannot say.
        meta["storageMs"] = dict(list(storage.items())[:STORAGE_TIMES_CAP])
    if interrupted:
        meta["interrupted"] = True
    batch = batch_record(plan.batch_id, [r.record for r in runs], created_ms, int(time.time() * 1000), meta)
    post_error = batch_post = None
    if client is not None:
        try:
            batch_post = client.post_batch(batch) or "stored"
            if batch_post == "spooled":
                post_error = getattr(client, "last_spool_reason", None)
        except NotAWorkerError as exc:
            batch_post, post_error = ("spooled" if exc.kept_in else None), str(exc)
        except Exception as exc:  # noqa: BLE001 - the runs are stored; the batch can be re-posted
            post_error = f"{type(exc).__name__}: {exc}"
    if live is not None:
        live.finish("interrupted" if interrupted else "finished")
    first = setups[0] if setups else None
    blocked = "; ".join(dict.fromkeys(s.blocked for s in setups if s.blocked)) or None
    warmups = [s.warmup for s in setups if s.warmup is not None]
    return BatchOutcome(batch_id=plan.batch_id, runs=runs, batch=batch,
                        warmup=next((w for w in warmups if not w.ok), warmups[0] if warmups else None),
                        post_error=post_error, batch_post=batch_post,
                        sandbox=", ".join(used) if isinstance(used, list) else used,
                        judge=first.judge if first else None, preflight_error=blocked, interrupted=interrupted,
                        not_started=total - len(runs))


def stored_runs(client: ResultsClient, batch_id: str) -> list[RunRecord]:
    """The runs a batch holds: stored in the store, and waiting in the spool for it (so that a
    resumed plan does not redo runs that are only waiting to be delivered)."""
    runs = client.list_runs(limit=1_000_000, batch_id=batch_id)
    spool = getattr(client, "spool", None)
    if spool is not None:
        seen = {r.run_id for r in runs}
        for entry in spool.pending(client.destination, include_unassigned=True):
            if entry.kind == "run" and entry.body.get("batchId") == batch_id and entry.key not in seen:
                try:
                    runs.append(RunRecord.from_wire(entry.body))
                except (KeyError, TypeError, ValueError):
                    continue
    return runs


def _where(client: ResultsClient) -> str:
    transport = getattr(client, "transport", None)
    return getattr(transport, "description", None) or type(client).__name__


def prepare_plan(plan: Plan, options: RunOptions, client: ResultsClient | None, *, resume: bool = False,
                 retry_errors: bool = False, force: bool = False, shard: tuple[int, int] | None = None,
                 existing_batch: bool | None = None) -> str:
    """Fill each group's config parts and fit the plan to what its batch holds
    (:func:`harness.scenarios.plan.reconcile`); return the plan's sandbox mode (:func:`plan_sandbox`: the
    kind the runs will use, or ``auto``, resolved per scenario).

    ``existing_batch`` says whether the batch id was given (so may hold runs); resume, retry and
    shards need the stored runs and raise :class:`PlanError` when the store cannot be read. A
    plain invocation into a given batch that cannot be read numbers from 0, with a note.
    """
    kind = plan_sandbox(options)
    fill_config(plan, options, kind)
    needs_store = resume or retry_errors or shard is not None
    if (resume or retry_errors) and client is None:
        raise PlanError("resuming or retrying a batch needs its results store")
    if client is None or not (needs_store or existing_batch):
        if shard is not None:
            from harness.scenarios.plan import keep_shard

            keep_shard(plan, *shard)
        return kind
    try:
        stored = stored_runs(client, plan.batch_id)
    except Exception as exc:  # noqa: BLE001 - said in one line; the store's own error names it
        if needs_store:
            raise PlanError(f"cannot read batch {plan.batch_id} from {_where(client)}: {exc}") from exc
        plan.notes.append(f"could not read batch {plan.batch_id} ({exc}); iterations are numbered from 0")
        stored = []
    if (resume or retry_errors) and not stored:
        from harness.scenarios.plan import BatchNotFound

        raise BatchNotFound(f"batch {plan.batch_id} has no runs in {_where(client)}"
                        " (nothing to resume or retry; check the batch id and --worker-url/--db)")
    reconcile(plan, stored, resume_batch=resume, retry=retry_errors, force=force, shard=shard)
    return kind


def run_batch(scenario: Scenario, prompt: TierPrompt, options: RunOptions, client: ResultsClient | None,
              progress: ProgressCallback | None = None) -> BatchOutcome:
    """Run ``options.iterations`` runs of one scenario with ``options.agent``/``model``/
    ``specialist``: a one-group plan (:func:`run_plan`). Iterations continue the numbering of
    runs the batch already holds for this cell."""
    if options.iterations < 1:
        raise ValueError("iterations must be at least 1")
    plan = Plan(batch_id=options.batch_id or new_batch_id(), iterations=options.iterations, planned=options.iterations,
                groups=[Group(scenario, prompt, options.agent, options.model, options.specialist,
                              list(range(options.iterations)))])
    options = replace(options, sandbox=prepare_plan(plan, options, client, existing_batch=options.batch_id is not None))
    return run_plan(plan, options, client, progress)
