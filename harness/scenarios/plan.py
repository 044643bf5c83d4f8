"""Cells and plans: the unit of work of ``bench``, usable from Python without the CLI.

A **cell** is one run to do: suite, scenario, tier (the prompt's label), agent, model,
specialist and iteration. Cells that differ only in their iteration form a **group**: they
share a scenario, a prompt, an agent configuration and a ``config_hash``. A **plan** is the
groups of one invocation with one batch id and the options they share; the runner
(:func:`harness.scenarios.runner.run_plan`) runs its cells, ``parallel`` at a time.

How a plan's iterations are numbered, against the runs a batch already has:

- a new invocation into an existing batch continues each group's numbering after its last
  stored iteration, so invocations that add iterations to one batch never collide;
- ``resume`` keeps the plan's iterations ``0..N-1`` and drops the cells that have a stored run
  (any status). It refuses, naming what changed, when a group's stored runs have another
  ``config_hash`` (unless ``force``);
- ``retry_errors`` redoes the cells whose stored run is an ``error`` of class ``infra`` or
  ``harness`` (the earlier attempt stays stored; the new run names it in ``retryOf``);
- ``shard=(I, N)`` keeps the cells whose stable hash falls in slice ``I`` of ``N``: the hash
  depends on the cell alone, so adding a scenario moves no other cell, and ``N`` machines with
  the same plan and batch id run every cell exactly once. Sharded plans number iterations
  ``0..N-1`` (as ``resume`` does), whatever the batch holds, so every shard agrees.

``resume`` and ``retry_errors`` are the scenario form of the one resume rule of
:mod:`harness.cells` (:func:`recorded` reads a stored run for it).

What makes two runs comparable, :func:`config_parts`, is recorded with every run: the scenario's
files, the prompt, the tool set, agent, model, specialist, sandbox kind, judge, budgets, base
URL, timeout and harness version. ``config_hash`` is the digest of those parts.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import __version__ as HARNESS_VERSION
from harness._util.globs import walk_files
from harness.cells import CellRecord, Recorded, decide
from harness.scenarios.lines import run_outcome
from harness.scenarios.loading import discover_suites, load_scenario, resolve_prompt
from harness.scenarios.model import Scenario, ScenarioError, TierPrompt
from harness.scenarios.workspace import ALWAYS_EXCLUDED

if TYPE_CHECKING:
    from harness.agents.base import Budgets
    from harness.results.records import RunRecord

BASE_TOOLS = ("read_file", "write_file", "list_directory", "run_command")
RETRYABLE_CLASSES = ("infra", "harness")


class PlanError(ValueError):
    """A plan that cannot be made or resumed as asked (one line, naming what is wrong)."""


class BatchNotFound(PlanError):
    """A batch to resume or retry that the results store does not hold: like every name the
    store does not know (bench batch, show, report, compare), exit status 1."""


# --------------------------------------------------------------------------- identity


def tool_names(scenario: Scenario) -> list[str]:
    """The tools an agent gets in this scenario."""
    tools = list(BASE_TOOLS)
    if scenario.oracle_answers is not None:
        tools.append("ask_user")
    if scenario.allow_fetch_url:
        tools.append("fetch_url")
    return tools


def _digest(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def scenario_digest(scenario: Scenario) -> str:
    """sha256 over every file of the scenario directory (fixture, scenario.yaml, solution,
    hidden tests, oracle answers), names and contents."""
    h = hashlib.sha256()
    for rel in sorted(walk_files(scenario.path, ALWAYS_EXCLUDED)):
        path = scenario.path / rel
        content = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
        h.update(f"{rel}\0{content}\n".encode())
    return h.hexdigest()


def budgets_text(budgets: Budgets | None) -> str:
    if budgets is None:
        return "default"
    return (f"turns={budgets.max_turns} out/call={budgets.max_output_tokens_per_call} "
            f"tokens={budgets.max_total_tokens} cost={budgets.max_cost_usd}")


def config_parts(scenario: Scenario, prompt: TierPrompt, agent: str, model: str | None, specialist: Any = None,
                 sandbox: str = "none", judge: str = "none", budgets: Budgets | None = None,
                 base_url: str | None = None, timeout_minutes: float | None = None,
                 cache: str = "off") -> dict[str, str]:
    """Everything that makes two runs comparable, each part as a short text or digest.
    ``cache`` is ``off`` (every model answer is new) or ``replay`` (answers may be replayed)."""
    return {
        "scenario": scenario_digest(scenario),
        "prompt": _digest(prompt.text),
        "tools": ",".join(tool_names(scenario)),
        "agent": agent,
        "model": model or "",
        "specialist": f"{specialist.name}@{specialist.version}" if specialist else "",
        "sandbox": sandbox,
        "judge": judge,
        "budgets": budgets_text(budgets),
        "baseUrl": base_url or "",
        "timeoutMinutes": str(timeout_minutes if timeout_minutes is not None else scenario.timeout_minutes),
        "cache": cache,
        "harness": HARNESS_VERSION,
    }


def hash_parts(parts: dict[str, str]) -> str:
    return _digest(json.dumps(parts, sort_keys=True, separators=(",", ":")))


PART_NAMES = {
    "scenario": "the scenario's files", "prompt": "the prompt", "tools": "the tool set", "agent": "the agent",
    "model": "the model", "specialist": "the specialist", "sandbox": "the sandbox kind", "judge": "the judge",
    "budgets": "the budgets", "baseUrl": "the base URL", "timeoutMinutes": "the timeout",
    "cache": "the cache mode (off or replay)", "harness": "the harness version",
}


def changed_parts(old: dict[str, str] | None, new: dict[str, str]) -> list[str]:
    """What differs between two runs' config parts, in words (``["the prompt", ...]``)."""
    if not old:
        return ["the configuration (the stored runs predate recorded config parts)"]
    return [PART_NAMES.get(k, k) for k in new if old.get(k) != new[k]]


# --------------------------------------------------------------------------- cells and groups


@dataclass(frozen=True, order=True)
class Cell:
    """One run to do."""

    suite: str
    scenario: str
    tier: str  # the prompt's label, e.g. "L1-basic"
    agent: str
    model: str | None
    specialist: str | None  # "name@version"
    iteration: int

    @property
    def group_key(self) -> str:
        return "/".join((self.suite, self.scenario, self.tier, self.agent, self.model or "-", self.specialist or "-"))

    @property
    def key(self) -> str:
        return f"{self.group_key}#{self.iteration}"

    def shard(self, count: int) -> int:
        """The slice (0-based) of ``count`` this cell belongs to; stable across runs and machines."""
        return int(hashlib.sha256(self.key.encode()).hexdigest()[:16], 16) % count


@dataclass(frozen=True)
class AgentChoice:
    """One ``--agent`` value: an agent, optionally with its model (``openai:gpt-4.1-mini``)."""

    agent: str
    model: str | None = None

    @classmethod
    def parse(cls, text: str) -> "AgentChoice":
        if text.strip().startswith("cmd:"):  # your own command: the colon is part of the agent
            if not text.strip()[4:].strip():
                raise PlanError(f"--agent {text!r}: no command after cmd:")
            return cls(text.strip())
        agent, sep, model = text.strip().partition(":")
        if not agent:
            raise PlanError(f"--agent {text!r}: no agent name")
        if sep and not model:
            raise PlanError(f"--agent {text!r}: no model after {agent!r}:")
        return cls(agent, model or None)


@dataclass
class Group:
    """Cells that differ only in their iteration."""

    scenario: Scenario
    prompt: TierPrompt
    agent: str
    model: str | None
    specialist: Any = None  # harness.specialists.Specialist
    iterations: list[int] = field(default_factory=list)
    parts: dict[str, str] = field(default_factory=dict)
    retry_of: dict[int, str] = field(default_factory=dict)  # iteration -> run id of the attempt it redoes

    @property
    def specialist_ref(self) -> str | None:
        return f"{self.specialist.name}@{self.specialist.version}" if self.specialist else None

    def cell(self, iteration: int) -> Cell:
        return Cell(self.scenario.suite, self.scenario.name, self.prompt.label, self.agent, self.model,
                    self.specialist_ref, iteration)

    @property
    def key(self) -> str:
        return self.cell(0).group_key

    @property
    def cells(self) -> list[Cell]:
        return [self.cell(i) for i in self.iterations]

    @property
    def config_hash(self) -> str:
        return hash_parts(self.parts)


@dataclass
class Plan:
    """The groups of one invocation, one batch id, and what was asked."""

    batch_id: str
    groups: list[Group]
    iterations: int  # per group, as asked
    shard: tuple[int, int] | None = None
    planned: int = 0  # cells of the whole plan, before sharding, resuming or retrying
    #: Which cells the whole plan holds (a digest of their keys): invocations sharing a batch
    #: with different plans (one agent each, say) are told apart from shards of one plan.
    plan_key: str | None = None
    notes: list[str] = field(default_factory=list)  # what resume/retry/shard decided, for the console

    @property
    def cells(self) -> list[Cell]:
        return [c for g in self.groups for c in g.cells]


# --------------------------------------------------------------------------- building


def select_scenarios(suites_dir: str | Path | None, suites: Sequence[str] | None,
                     names: Sequence[str] = ()) -> list[Scenario]:
    """The scenarios asked for: ``names`` in one suite, every scenario of ``suites``, or of every
    suite when ``suites`` is None. Raises :class:`ScenarioError` for an unknown or broken one."""
    known = {s.name: s for s in discover_suites(suites_dir)}
    chosen = list(known) if suites is None else list(suites)
    if names and len(chosen) != 1:
        raise PlanError("scenario names need exactly one suite")
    scenarios = []
    for suite in chosen:
        if suite not in known:
            raise ScenarioError(f"unknown suite {suite!r}; available: {', '.join(sorted(known)) or 'none'}")
        for name in (names or known[suite].scenarios):
            scenarios.append(load_scenario(suite, name, suites_dir))
    if not scenarios:
        raise PlanError("no scenario to run: the suites selected have none")
    return scenarios


def build_plan(scenarios: Sequence[Scenario], tiers: Sequence[str], agents: Sequence[AgentChoice],
               iterations: int, batch_id: str, *, specialist: Any = None, models: Sequence[str] = ()) -> Plan:
    """Every combination of scenario × tier × agent (× model), with iterations ``0..N-1``.

    A tier a scenario does not have is an error naming the scenario and the tiers it has.
    ``models`` multiply the agents given without a model. ``specialist`` (a loaded template)
    applies to every group, adapted to each scenario's task.
    """
    if iterations < 1:
        raise PlanError("--iterations must be at least 1")
    choices: list[AgentChoice] = []
    for choice in agents:
        if choice.model is None and models:
            choices += [AgentChoice(choice.agent, m) for m in models]
        elif choice not in choices:
            choices.append(choice)
    groups = []
    for scenario in scenarios:
        for tier in tiers:
            prompt = resolve_prompt(scenario, tier)
            spec = specialist.for_scenario(scenario) if specialist is not None else None
            for choice in choices:
                groups.append(Group(scenario, prompt, choice.agent, choice.model, spec, list(range(iterations))))
    plan = Plan(batch_id=batch_id, groups=groups, iterations=iterations, planned=len(groups) * iterations)
    plan.plan_key = plan_digest(plan)
    return plan


def plan_digest(plan: Plan) -> str:
    """A short digest of the keys of every cell of ``plan`` (order does not matter)."""
    import hashlib

    keys = sorted(cell.key for cell in plan.cells)
    return hashlib.sha256("\n".join(keys).encode("utf-8")).hexdigest()[:16]


def describe_cell_metadata(group: Group, iteration: int) -> dict[str, Any]:
    """What a stored run carries so later invocations can match it to its cell."""
    cell = group.cell(iteration)
    return {"cellGroup": cell.group_key, "cellKey": cell.key, "configParts": dict(group.parts)}


# --------------------------------------------------------------------------- against stored runs


def _stored_by_group(runs: Iterable[RunRecord]) -> dict[str, list[RunRecord]]:
    out: dict[str, list[RunRecord]] = {}
    for run in runs:
        key = (run.metadata or {}).get("cellGroup")
        if isinstance(key, str):
            out.setdefault(key, []).append(run)
    return out


def _iteration(run: RunRecord) -> int | None:
    value = (run.metadata or {}).get("iteration")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def continue_numbering(plan: Plan, stored: Iterable[RunRecord]) -> None:
    """New iterations follow each group's last stored one (an invocation adding to a batch)."""
    by_group = _stored_by_group(stored)
    moved = 0
    for group in plan.groups:
        seen = [i for i in (_iteration(r) for r in by_group.get(group.key, [])) if i is not None]
        if seen:
            start = max(seen) + 1
            group.iterations = list(range(start, start + plan.iterations))
            moved += 1
    if moved:
        plan.notes.append(f"batch {plan.batch_id} already has runs of {moved} of the {len(plan.groups)} cell groups; "
                          "their new iterations follow the stored ones")


def check_unchanged(plan: Plan, stored: Iterable[RunRecord], force: bool = False) -> None:
    """Refuse (PlanError) to add to a group whose stored runs were made with another
    configuration, naming what changed, unless ``force``."""
    by_group = _stored_by_group(stored)
    forced = []
    for group in plan.groups:
        for run in by_group.get(group.key, []):
            if run.config_hash and run.config_hash != group.config_hash:
                what = changed_parts((run.metadata or {}).get("configParts"), group.parts)
                if force:
                    forced.append(f"{group.key} ({', '.join(what)})")
                    break
                raise PlanError(f"batch {plan.batch_id}: {group.key}: {', '.join(what)} changed since run "
                                f"{run.run_id}; the results would not be comparable (use --force to run anyway)")
    if forced:
        plan.notes.append(f"--force: adding to {len(forced)} cell group(s) whose configuration changed: "
                          + "; ".join(forced[:3]) + (" ..." if len(forced) > 3 else ""))


def stored_cell(run: RunRecord) -> CellRecord | None:
    """The cell a stored run records (:class:`harness.cells.CellRecord`): keyed and named like
    :attr:`Cell.key`, in the category of its suite, its outcome by
    :func:`~harness.scenarios.lines.run_outcome`; retryable when it is an
    ``error`` of a class in ``RETRYABLE_CLASSES``. None for a run that names no cell (no
    ``cellGroup`` or ``iteration``)."""
    group = (run.metadata or {}).get("cellGroup")
    iteration = _iteration(run)
    if not isinstance(group, str) or iteration is None:
        return None
    key = f"{group}#{iteration}"
    status = run.status
    outcome = run_outcome(bool(run.is_successful), status)
    telemetry = run.telemetry
    return CellRecord.of(key, key, run.suite or "", outcome, status,
                         status == "error" and run.failure_class in RETRYABLE_CLASSES, run.total_score,
                         telemetry.duration_ms if telemetry else None, None,
                         telemetry.tokens_in if telemetry else 0, telemetry.tokens_out if telemetry else 0,
                         telemetry.cost_usd if telemetry else None, run.failure_class if status == "error" else None,
                         run.run_id)


def recorded(run: RunRecord) -> Recorded | None:
    """What a stored run says of its cell for the resume rule (:mod:`harness.cells`): its
    :func:`stored_cell`'s record, or None for a run that names no cell."""
    cell = stored_cell(run)
    return None if cell is None else cell.recorded()


def _fit_to_stored(plan: Plan, stored: Iterable[RunRecord], *, retry: bool, missing: bool) -> None:
    """Keep the cells :func:`harness.cells.decide` runs against the latest stored run of each
    cell (ordered by ``(started_at, run_id)``), and write the notes of ``resume`` (when
    ``missing``) and ``retry_errors`` (when ``retry``). With ``retry``, a group's stored
    iterations outside the plan are candidates too: an errored run of an earlier invocation is
    redone wherever its iteration falls."""
    latest_run: dict[str, RunRecord] = {}  # the latest run of each cell, and what it records
    latest_record: dict[str, Recorded] = {}
    stored_iterations: dict[str, set[int]] = {}
    for run in sorted(stored, key=lambda r: (r.started_at or "", r.run_id)):
        record = recorded(run)
        if record is not None:
            latest_run[str(record.key)] = run
            latest_record[str(record.key)] = record
            stored_iterations.setdefault((run.metadata or {})["cellGroup"], set()).add(_iteration(run))
    keys = [group.key for group in plan.groups]
    slots = []
    for n, group in enumerate(plan.groups):
        its = sorted(set(group.iterations) | stored_iterations.get(keys[n], set())) if retry else group.iterations
        slots += [(n, i) for i in its]
    planned = sum(len(group.iterations) for group in plan.groups)
    decision = decide(slots, lambda slot: f"{keys[slot[0]]}#{slot[1]}",
                      latest_record, retry=retry, missing=missing)
    kept: dict[int, list[int]] = {}
    for n, i in decision.run:
        kept.setdefault(n, []).append(i)
    classes: dict[str, int] = {}
    for n, i in decision.retried:
        run = latest_run[f"{keys[n]}#{i}"]
        plan.groups[n].retry_of[i] = run.run_id
        classes[run.failure_class or ""] = classes.get(run.failure_class or "", 0) + 1
    for n, group in enumerate(plan.groups):
        group.iterations = kept.get(n, [])
    if missing:
        plan.notes.append(f"batch {plan.batch_id} has runs for {planned - decision.missing} of the plan's "
                          f"{planned} cells; {decision.missing} left to run")
    if retry:
        found = ", ".join(f"{n} {c}" for c, n in sorted(classes.items())) or "none"
        plan.notes.append(f"batch {plan.batch_id}: runs stored as error to retry: {found}")


def resume(plan: Plan, stored: Iterable[RunRecord]) -> None:
    """Keep only the plan's cells that have no stored run."""
    _fit_to_stored(plan, stored, retry=False, missing=True)


def retry_errors(plan: Plan, stored: Iterable[RunRecord], *, add: bool = False) -> None:
    """Redo the cells whose latest stored run is an ``error`` of class infra or harness.
    With ``add`` (``--resume`` together with ``--retry-errors``), the cells with no stored run
    run as well, as :func:`resume` keeps them (and its note comes first)."""
    _fit_to_stored(plan, stored, retry=True, missing=add)


def keep_shard(plan: Plan, index: int, count: int) -> None:
    """Keep the cells of slice ``index`` (1-based) of ``count``."""
    if count < 1 or not 1 <= index <= count:
        raise PlanError(f"--shard {index}/{count}: expected I/N with 1 <= I <= N")
    plan.shard = (index, count)
    for group in plan.groups:
        group.iterations = [i for i in group.iterations if group.cell(i).shard(count) == index - 1]


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/4"`` -> ``(2, 4)``; PlanError for anything else."""
    left, sep, right = text.partition("/")
    if not sep or not left.strip().isdigit() or not right.strip().isdigit():
        raise PlanError(f"--shard {text!r}: expected I/N, e.g. 1/4")
    index, count = int(left), int(right)
    if count < 1 or not 1 <= index <= count:
        raise PlanError(f"--shard {text!r}: expected I/N with 1 <= I <= N")
    return index, count


def reconcile(plan: Plan, stored: Iterable[RunRecord], *, resume_batch: bool = False, retry: bool = False,
              force: bool = False, shard: tuple[int, int] | None = None) -> None:
    """Fit a plan (its config parts filled) to the runs its batch already holds.

    - always: refuse a group whose stored runs have another ``config_hash`` (unless ``force``);
    - ``resume_batch``, or a ``shard``: keep iterations ``0..N-1`` without a stored run;
    - ``retry``: redo infra/harness errors (with ``resume_batch`` or a shard, as well as the
      missing cells; alone, only them);
    - otherwise: new iterations after the batch's last ones.
    """
    stored = list(stored)
    check_unchanged(plan, stored, force)
    fixed = resume_batch or shard is not None
    if retry:
        retry_errors(plan, stored, add=fixed)
    elif fixed:
        resume(plan, stored)
    if not fixed and not retry:
        continue_numbering(plan, stored)
    if shard is not None:
        keep_shard(plan, *shard)


def latest_attempts(runs: Iterable[RunRecord]) -> list[RunRecord]:
    """The runs without the attempts a later run redid (``retryOf``): one run per cell attempt
    that counts, for aggregates over a batch that was retried."""
    runs = list(runs)
    redone = {(r.metadata or {}).get("retryOf") for r in runs}
    return [r for r in runs if r.run_id not in redone]


# --------------------------------------------------------------------------- a stored batch


@dataclass
class Completeness:
    """How much of its plan a stored batch holds (``bench batch``)."""

    planned: int | None  # cells of the plan; None when invocations planned differently
    cells: int  # distinct cells with at least one stored run
    plans: int = 1  # distinct plans of the invocations that wrote the batch
    shard_count: int | None = None
    shards_seen: list[int] = field(default_factory=list)
    interrupted: bool = False

    @property
    def missing_shards(self) -> list[int]:
        return [i for i in range(1, (self.shard_count or 0) + 1) if i not in self.shards_seen]

    @property
    def complete(self) -> bool | None:
        """False when cells or shards are known to be missing; None when it cannot be told."""
        if self.missing_shards or (self.planned is not None and self.cells < self.planned):
            return False
        if self.planned is None:
            return False if self.interrupted else None
        return True

    def describe(self) -> str:
        text = f"{self.cells} of {self.planned} planned cells stored" if self.planned is not None else (
            f"{self.cells} cells stored" + (" by invocations with different plans" if self.plans > 1 else ""))
        if self.shard_count:
            seen = ", ".join(f"{i}/{self.shard_count}" for i in sorted(self.shards_seen)) or "none"
            text += f"; shards reported: {seen}"
            if self.missing_shards:
                text += f"; not reported: {', '.join(f'{i}/{self.shard_count}' for i in self.missing_shards)}"
        if self.interrupted and not self.complete:
            text += "; an invocation was interrupted"
        if self.complete is False:
            text += " (incomplete: run the missing shards, or the same command with --resume)"
        return text


def completeness(metadata: dict[str, Any] | None, runs: Iterable[RunRecord]) -> Completeness | None:
    """What a batch's merged metadata and runs say about its plan; None for batches stored
    without a plan (before plans recorded ``plannedCells``)."""
    meta = metadata or {}
    planned = meta.get("plannedCells")
    if planned is None:
        return None
    keys = {(r.metadata or {}).get("cellKey") for r in runs}
    keys.discard(None)
    shards = meta.get("shard")
    shard_values = shards if isinstance(shards, list) else [shards] if shards else []
    seen, count = [], None
    for value in shard_values:
        try:
            index, n = parse_shard(str(value))
        except PlanError:
            continue
        count = max(count or 0, n)
        if index not in seen:
            seen.append(index)
    interrupted = meta.get("interrupted")
    plan_keys = meta.get("planKey")
    plans = len(set(plan_keys)) if isinstance(plan_keys, list) else 1
    planned_ok = isinstance(planned, int) and not isinstance(planned, bool)
    if planned_ok and plans == 1 and len(keys) > planned:
        plans = 2  # more cells than the plan holds: invocations recorded before plans had keys
    if not planned_ok or plans > 1:
        # Invocations with different plans (e.g. one agent each) share the batch: no one plan to hold it to.
        planned = None
    return Completeness(
        planned=planned, plans=plans,
        cells=len(keys), shard_count=count, shards_seen=seen,
        interrupted=interrupted is True or (isinstance(interrupted, list) and True in interrupted))
