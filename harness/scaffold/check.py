"""``bench check``: prove a scenario sound. :func:`check_scenario` runs a scenario through the
runner (:func:`harness.scenarios.runner.run_plan`, without a results store: nothing is stored) and turns
the runs into verdicts as soon as the runs each rests on are done:

- ``scenario loads``: the scenario loads and has a prompt for the tier (else no run at all);
- ``oracle passes``: the reference solution succeeds (the scenario can be solved as written);
- ``repeats``: a second oracle run has the same outcome (status, score, every evaluation);
- ``echo fails``: doing nothing does not succeed (the scenario tells work from no work);
- ``hidden tests fail on the fixture``: in that echo run, which grades the untouched fixture,
  not every hidden test passes (they test the change asked for);
- ``careless fix fails``, with a patch: the fixture with the patch applied
  (:class:`~harness.scaffold.careless.PatchAgent`) does not succeed.

The judge is off for every run: a check calls no model and costs nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness.agents import register_agent
from harness.scaffold.careless import PATCH_AGENT, PatchAgent
from harness.scaffold.names import Target
from harness.scenarios.loading import available_tiers, load_scenario, resolve_prompt
from harness.scenarios.model import Scenario, ScenarioError

# The verdicts' check names, in the order a scenario's rows are reported.
LOADS = "scenario loads"
ORACLE_PASSES = "oracle passes"
REPEATS = "repeats"
ECHO_FAILS = "echo fails"
HIDDEN_FAIL = "hidden tests fail on the fixture"
CARELESS_FAILS = "careless fix fails"
CHECKS = (LOADS, ORACLE_PASSES, REPEATS, ECHO_FAILS, HIDDEN_FAIL, CARELESS_FAILS)


@dataclass
class Verdict:
    """One check of one scenario: ``pass``, ``fail`` or ``skip`` (does not apply), and why."""

    scenario: str  # suite/name
    check: str
    status: str
    detail: str = ""
    seconds: float | None = None  # the runs it rests on, when it rests on runs

    @property
    def failed(self) -> bool:
        return self.status == "fail"

    def to_json(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "check": self.check, "status": self.status, "detail": self.detail,
                "seconds": None if self.seconds is None else round(self.seconds, 2)}


@dataclass
class CheckOptions:
    """How :func:`check_scenario` runs its runs."""

    sandbox: str | None = None  # bwrap | none; None: resolved as `bench` does (auto)
    workspaces_root: Path | None = None
    tier: str | None = None  # the prompt the runs get (default L1, else the first tier)
    careless: str | None = None  # the text of a patch, applied as a careless fix
    careless_name: str = "the careless patch"
    parallel: int = 1
    skip_warmup: bool = False
    control: Any = None  # harness.control.BatchControl, for Ctrl-C
    oracle_runs: int = 2  # oracle runs whose outcomes must all be the same (``repeats``); at least 2


VerdictCallback = Callable[[Verdict], None]


def _first_line(text: str | None, limit: int = 160) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


def outcome_text(record: Any) -> str:
    """``completed, score 1.00`` / ``failed/validation, score 0.25``."""
    status = record.status + (f"/{record.failure_class}" if record.failure_class else "")
    return status if record.total_score is None else f"{status}, score {record.total_score:.2f}"


def _why(record: Any) -> str:
    """What went wrong in a run, in a few words: its error, else its evaluations short of full marks."""
    meta = record.metadata or {}
    for key in ("error", "agentError"):
        if meta.get(key):
            return _first_line(str(meta[key]))
    short = []
    for e in record.evaluations:
        if e.status == "ok" and e.score < 1.0:
            short.append(f"{e.evaluator_name} {e.score:.2f} ({_first_line(e.details, 80)})")
        elif e.status == "error":
            short.append(f"{e.evaluator_name} error ({_first_line(e.details, 80)})")
    return "; ".join(short)


def _with_why(record: Any) -> str:
    why = _why(record)
    return outcome_text(record) + (f": {why}" if why else "")


def _not_graded(record: Any) -> bool:
    """A run that says nothing about the scenario: the machine or the harness failed."""
    return record.status == "error" and record.failure_class in ("infra", "harness")


def _signature(record: Any) -> tuple[Any, ...]:
    return (record.status, record.failure_class, None if record.total_score is None else round(record.total_score, 6),
            tuple(sorted((e.evaluator_name, e.status, round(e.score, 6)) for e in record.evaluations)))


def _seconds(*records: Any) -> float:
    return sum((r.telemetry.duration_ms or 0.0) if r.telemetry is not None else 0.0 for r in records) / 1000.0


def judge_oracle(key: str, record: Any) -> Verdict:
    if record.is_successful:
        return Verdict(key, ORACLE_PASSES, "pass", outcome_text(record), _seconds(record))
    return Verdict(key, ORACLE_PASSES, "fail", f"the reference solution does not pass: {_with_why(record)}",
                   _seconds(record))


def judge_repeat(key: str, first: Any, second: Any) -> Verdict:
    if _signature(first) == _signature(second):
        return Verdict(key, REPEATS, "pass", f"the same outcome twice: {outcome_text(second)}", _seconds(first, second))
    before = {e.evaluator_name: e for e in first.evaluations}
    differ = [f"{e.evaluator_name} {before[e.evaluator_name].score:.2f} then {e.score:.2f}"
              for e in second.evaluations
              if e.evaluator_name in before and (before[e.evaluator_name].score, before[e.evaluator_name].status)
              != (e.score, e.status)]
    what = "; ".join(differ) or f"{_with_why(first)} then {_with_why(second)}"
    return Verdict(key, REPEATS, "fail", f"two oracle runs differ ({what}): the scenario is flaky",
                   _seconds(first, second))


def judge_echo(key: str, record: Any) -> Verdict:
    if _not_graded(record):
        return Verdict(key, ECHO_FAILS, "fail", f"the untouched fixture could not be graded: {_with_why(record)}",
                       _seconds(record))
    if record.is_successful:
        return Verdict(key, ECHO_FAILS, "fail", f"doing nothing passes ({outcome_text(record)}): the scenario cannot "
                       "tell work from no work", _seconds(record))
    return Verdict(key, ECHO_FAILS, "pass", _with_why(record), _seconds(record))


def judge_hidden(key: str, record: Any) -> Verdict:
    """From the echo run, which grades the untouched fixture."""
    if _not_graded(record):
        return Verdict(key, HIDDEN_FAIL, "fail", f"the untouched fixture could not be graded: {_with_why(record)}",
                       _seconds(record))
    hidden = next((e for e in record.evaluations if e.evaluator_name == "hidden_tests"), None)
    if hidden is None:
        return Verdict(key, HIDDEN_FAIL, "skip", "the scenario has no hidden-tests/")
    if hidden.status != "ok":
        return Verdict(key, HIDDEN_FAIL, "fail", f"hidden tests {hidden.status}: {_first_line(hidden.details)}",
                       _seconds(record))
    evidence = (record.metadata or {}).get("tampered") or []
    if record.failure_class == "tampered" or evidence:
        # Nothing changed the fixture, so the canary evidence is about the hidden tests themselves.
        first = _first_line(str(evidence[0]), 200) if evidence else "canary evidence"
        return Verdict(key, HIDDEN_FAIL, "fail", f"the untouched fixture is classed as tampered ({first}): the hidden "
                       "tests' report on it lacks tests (does a hidden test file fail to load?), so an honest "
                       "incomplete fix would be classed as tampering too", _seconds(record))
    if hidden.score >= 1.0:
        return Verdict(key, HIDDEN_FAIL, "fail", f"on the untouched fixture: {_first_line(hidden.details)}; the hidden "
                       "tests do not test the change asked for", _seconds(record))
    return Verdict(key, HIDDEN_FAIL, "pass", f"on the untouched fixture: {_first_line(hidden.details)}",
                   _seconds(record))


def judge_careless(key: str, record: Any) -> Verdict:
    meta = record.metadata or {}
    if meta.get("agentStatus") not in (None, "completed"):
        return Verdict(key, CARELESS_FAILS, "fail", _first_line(meta.get("agentError") or _why(record), 300),
                       _seconds(record))
    if _not_graded(record):
        return Verdict(key, CARELESS_FAILS, "fail", f"the patched fixture could not be graded: {_with_why(record)}",
                       _seconds(record))
    if record.is_successful:
        return Verdict(key, CARELESS_FAILS, "fail", f"the careless fix passes ({outcome_text(record)}): add a hidden "
                       "test it fails, or raise success_threshold", _seconds(record))
    return Verdict(key, CARELESS_FAILS, "pass", _with_why(record), _seconds(record))


class _Collector:
    """Turns finished runs into verdicts as soon as the runs a verdict rests on are done."""

    def __init__(self, key: str, on_verdict: VerdictCallback | None, oracle_runs: int = 2) -> None:
        self.key = key
        self.oracle_runs = max(2, oracle_runs)
        self.on_verdict = on_verdict
        self.records: dict[tuple[str, int], Any] = {}
        self.verdicts: dict[str, Verdict] = {}
        self.lock = threading.Lock()

    def add(self, verdict: Verdict) -> None:
        self.verdicts[verdict.check] = verdict
        if self.on_verdict is not None:
            self.on_verdict(verdict)

    def run_done(self, event: Any) -> None:
        if event.kind != "done" or event.result is None:
            return
        with self.lock:
            record = event.result
            self.records[(record.agent, event.iteration)] = record
            got = self.records
            ready: list[Verdict] = []
            if record.agent == "oracle" and ORACLE_PASSES not in self.verdicts and ("oracle", 0) in got:
                ready.append(judge_oracle(self.key, got[("oracle", 0)]))
            if REPEATS not in self.verdicts and all(("oracle", i) in got for i in range(self.oracle_runs)):
                # Each further run against the first: the first that differs, else the last.
                repeats = [judge_repeat(self.key, got[("oracle", 0)], got[("oracle", i)])
                           for i in range(1, self.oracle_runs)]
                verdict = next((v for v in repeats if v.failed), repeats[-1])
                if not verdict.failed and self.oracle_runs > 2:
                    verdict = replace(verdict, detail=verdict.detail.replace(
                        "the same outcome twice", f"the same outcome {self.oracle_runs} times", 1))
                ready.append(verdict)
            if ("echo", 0) in got and ECHO_FAILS not in self.verdicts:
                ready += [judge_echo(self.key, got[("echo", 0)]), judge_hidden(self.key, got[("echo", 0)])]
            if (PATCH_AGENT, 0) in got and CARELESS_FAILS not in self.verdicts:
                ready.append(judge_careless(self.key, got[(PATCH_AGENT, 0)]))
            for verdict in ready:
                self.add(verdict)


def _prompt_for(scenario: Scenario, tier: str | None) -> Any:
    if tier is not None:
        return resolve_prompt(scenario, tier)
    tiers = available_tiers(scenario)
    if not tiers:
        raise ScenarioError(f"{scenario.key}: no prompt: add {scenario.suite_path / 'prompts' / scenario.name}"
                            "/L1-basic.md (and L0, L2)")
    try:
        return resolve_prompt(scenario, "L1")
    except ScenarioError:
        return resolve_prompt(scenario, tiers[0])


def check_scenario(target: Target, options: CheckOptions | None = None,
                   on_verdict: VerdictCallback | None = None) -> list[Verdict]:
    """Every check of one scenario (see the module docstring), each reported to ``on_verdict``
    as soon as it is decided; the verdicts in :data:`CHECKS` order. Nothing is stored.

    A scenario that does not load (or has no prompt for the tier) gets one failed
    ``scenario loads`` verdict and no runs. Raises only for bad options (ValueError).
    """
    from harness.grading.evaluators.llm_judge import JudgeChoice
    from harness.scenarios.plan import Group, Plan
    from harness.scenarios.runner import RunOptions, new_batch_id, run_plan

    options = options or CheckOptions()
    collector = _Collector(target.key, on_verdict, options.oracle_runs)
    try:
        scenario = load_scenario(target.suite, target.name, target.suites_dir)
        prompt = _prompt_for(scenario, options.tier)
    except ScenarioError as exc:
        collector.add(Verdict(target.key, LOADS, "fail", str(exc)))
        return list(collector.verdicts.values())
    tiers = available_tiers(scenario)
    loaded = f"{len(tiers)} tier(s): {', '.join(tiers)}; runs get {prompt.label}"
    if scenario.warnings:
        loaded += f"; {len(scenario.warnings)} warning(s): {scenario.warnings[0]}"
    collector.add(Verdict(target.key, LOADS, "pass", loaded))

    run_options = RunOptions(parallel=options.parallel, workspaces_root=options.workspaces_root,
                             sandbox=options.sandbox, judge=JudgeChoice("none"), skip_warmup=options.skip_warmup,
                             control=options.control)
    oracle_runs = max(2, options.oracle_runs)
    groups = [Group(scenario, prompt, "oracle", None, None, list(range(oracle_runs))),
              Group(scenario, prompt, "echo", None, None, [0])]
    plan = Plan(batch_id=new_batch_id(), groups=groups, iterations=oracle_runs, planned=oracle_runs + 1)
    run_plan(plan, run_options, None, progress=collector.run_done)
    stopped = options.control is not None and options.control.stopping
    if options.careless is not None and not stopped:
        register_agent(PATCH_AGENT, PatchAgent)
        patched = Plan(batch_id=plan.batch_id, groups=[Group(scenario, prompt, PATCH_AGENT, None, None, [0])],
                       iterations=1, planned=1)
        careless_options = RunOptions(parallel=1, workspaces_root=options.workspaces_root, sandbox=options.sandbox,
                                      judge=JudgeChoice("none"), skip_warmup=options.skip_warmup,
                                      control=options.control,
                                      agent_options={"patch": options.careless, "patch_name": options.careless_name})
        run_plan(patched, careless_options, None, progress=collector.run_done)
    return [collector.verdicts[c] for c in CHECKS if c in collector.verdicts]
