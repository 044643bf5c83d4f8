"""The one resume rule (harness.cells): which planned cells run against the latest record of
each, on its own and as each engine (scenario plans, dataset runs, a fleet's cells and suite
cells) reads its stored form into a Recorded."""

from __future__ import annotations

import asyncio
import json

import pytest

from harness.cells import Recorded, decide, latest
from harness.datasets.planning import prepare
from harness.datasets.lines import cell_key, dataset_cell
from harness.results_log import RESULTS_FILE, ResultsLog, read_results
from harness.scenarios.lines import scenario_cell
from harness.datasets.run import execute
from harness.fleet.cells import FleetCell
from harness.fleet.execute import CellResult, FleetExecution, recorded_entry
from harness.fleet.manifest import Profile, Repository
from harness.fleet.run_files import CELLS_FILE, read_cells_log
from harness.models.providers.registry import parse_target
from harness.results.records import RunRecord
from harness.scenarios import plan as scenario_plan
from harness.scenarios.plan import AgentChoice, Cell, build_plan, reconcile, select_scenarios
from support.scenario_builders import make_scenario
from support.datasets import (  # noqa: F401 - env (autouse) and mock_server are fixtures
    ANSWERS,
    env,
    lines_of,
    mock_server,
    options,
    resume_options,
    targets_of,
    write_dataset,
)

# --------------------------------------------------------------------------- the rule alone

CELLS = ["a", "b", "c", "d"]
STORED = {"a": Recorded("a", "completed", False), "b": Recorded("b", "error", True),
          "c": Recorded("c", "error", False)}  # d has no record


def _decide(**kw):
    return decide(CELLS, lambda c: c, STORED, **kw)


def test_without_retry_only_the_missing_cells_run_and_every_recorded_one_is_done():
    d = _decide(retry=False)
    assert d.run == ["d"] and d.retried == [] and (d.done, d.missing) == (3, 1)


def test_with_retry_the_retryable_cells_run_too_in_their_planned_order():
    d = _decide(retry=True)
    assert d.run == ["b", "d"] and d.retried == ["b"] and (d.done, d.missing) == (2, 1)


def test_retry_alone_runs_the_retryable_cells_and_leaves_the_missing_ones():
    d = _decide(retry=True, missing=False)
    assert d.run == ["b"] and d.retried == ["b"] and (d.done, d.missing) == (2, 1)


def test_neither_retry_nor_missing_runs_nothing():
    assert _decide(retry=False, missing=False).run == []


def test_only_the_latest_attempt_of_a_cell_counts_when_attempts_interleave():
    attempts = [Recorded("x", "error", True), Recorded("y", "completed", False),
                Recorded("x", "completed", False), Recorded("y", "error", True)]
    kept = latest(attempts)
    assert kept == {"x": attempts[2], "y": attempts[3]}
    assert decide(["x", "y"], lambda c: c, kept, retry=True).run == ["y"]


def test_records_of_cells_not_planned_are_ignored_and_keys_may_be_tuples():
    stored = latest([Recorded(("s", "L1", 0), "error", True), Recorded(("s", "L1", 9), "error", True)])
    d = decide([0, 1], lambda i: ("s", "L1", i), stored, retry=True)
    assert d.run == [0, 1] and d.retried == [0] and (d.done, d.missing) == (0, 1)


# --------------------------------------------------------------------------- scenario plans


def _run(cell: Cell, status="completed", failure_class=None, started="1", run_id=None) -> RunRecord:
    meta = {"cellGroup": cell.group_key, "cellKey": cell.key, "iteration": cell.iteration}
    return RunRecord(run_id=run_id or f"run-{cell.key}-{started}", suite=cell.suite, scenario=cell.scenario,
                     tier="L1", agent=cell.agent, status=status, failure_class=failure_class, config_hash=None,
                     started_at=started, metadata=meta)


def _plan(tmp_path, iterations=3):
    make_scenario(tmp_path / "suites", suite="demo", name="add-one")
    plan = build_plan(select_scenarios(tmp_path / "suites", ["demo"]), ["L1"], [AgentChoice("echo")],
                      iterations, "b")
    plan.groups[0].parts = {"scenario": "x"}
    return plan


def test_a_stored_run_is_recorded_by_its_cell_key_and_retryable_only_for_infra_or_harness_errors():
    cell = Cell("demo", "add-one", "L1-basic", "echo", None, None, 2)
    assert scenario_plan.recorded(_run(cell)) == Recorded(cell.key, "completed", False)
    assert scenario_plan.recorded(_run(cell, "error", "infra")).retryable
    assert scenario_plan.recorded(_run(cell, "error", "harness")).retryable
    assert not scenario_plan.recorded(_run(cell, "error", "agent")).retryable
    assert not scenario_plan.recorded(_run(cell, "failed")).retryable
    nameless = RunRecord(run_id="r", suite="demo", scenario="add-one", tier="L1", agent="echo", status="error",
                         failure_class="infra", metadata={"cellGroup": cell.group_key})
    assert scenario_plan.recorded(nameless) is None  # no iteration: it names no cell


def test_a_plan_takes_the_latest_run_by_start_time_not_by_the_order_the_store_lists_them(tmp_path):
    plan = _plan(tmp_path)
    group = plan.groups[0]
    # Listed newest first: iteration 0 failed for the infrastructure, then succeeded; iteration 1
    # the other way round.
    stored = [_run(group.cell(0), started="2"), _run(group.cell(1), "error", "infra", started="2"),
              _run(group.cell(0), "error", "infra", started="1"), _run(group.cell(1), started="1")]
    reconcile(plan, stored, retry=True)
    assert group.iterations == [1] and group.retry_of == {1: stored[1].run_id}
    assert plan.notes == ["batch b: runs stored as error to retry: 1 infra"]


def test_retry_alone_redoes_an_error_stored_at_an_iteration_beyond_the_plan(tmp_path):
    plan = _plan(tmp_path, iterations=2)
    group = plan.groups[0]
    stored = [_run(group.cell(0)), _run(group.cell(4), "error", "harness")]
    reconcile(plan, stored, retry=True)
    assert group.iterations == [4] and group.retry_of == {4: stored[1].run_id}


def test_resume_with_retry_writes_both_notes_with_the_counts_of_the_plan(tmp_path):
    plan = _plan(tmp_path, iterations=4)
    group = plan.groups[0]
    stored = [_run(group.cell(0)), _run(group.cell(1), "error", "infra"), _run(group.cell(2), "error", "agent")]
    reconcile(plan, stored, resume_batch=True, retry=True)
    assert group.iterations == [1, 3]
    assert plan.notes == ["batch b has runs for 3 of the plan's 4 cells; 1 left to run",
                          "batch b: runs stored as error to retry: 1 infra"]


# --------------------------------------------------------------------------- dataset runs


def test_a_results_line_is_recorded_by_its_cell_key_and_retryable_when_it_is_an_error(tmp_path, mock_server):
    mock = mock_server(answers=ANSWERS, fail_first=2)
    out = tmp_path / "out"
    first = prepare(options(write_dataset(tmp_path / "d.json"), out, targets_of(mock), concurrency=1,
                            max_attempts=1))
    asyncio.run(asyncio.wait_for(execute(first), 60))
    lines = lines_of(out)
    assert {line["status"] for line in lines} >= {"error", "failed"}
    for line in lines:
        assert dataset_cell(line).recorded() == Recorded(cell_key(line), line["status"], line["status"] == "error")
    assert {p.key for p in first.cells} == {cell_key(line) for line in lines}  # the planned cells' keys


def test_a_dataset_resume_goes_by_the_last_line_of_each_cell(tmp_path, mock_server):
    mock = mock_server(answers=ANSWERS, fail_first=1)
    out = tmp_path / "out"
    first = prepare(options(write_dataset(tmp_path / "d.json"), out, targets_of(mock), concurrency=1,
                            max_attempts=1))
    asyncio.run(asyncio.wait_for(execute(first), 60))
    lines = lines_of(out)
    errored = next(line for line in lines if line["status"] == "error")
    passed = next(line for line in lines if line["status"] == "passed")
    log = ResultsLog(out / RESULTS_FILE, read_results(out / RESULTS_FILE)[1])
    log.append(dataset_cell({**errored, "status": "passed", "error": None}))  # a later attempt succeeded
    log.append(dataset_cell({**passed, "status": "error"}))  # a later attempt failed
    log.close()
    run = prepare(resume_options(out, retry_errors=True))
    assert [p.key for p in run.cells] == [cell_key(passed)]
    assert run.notes == [f"resuming {out}: 4 cell(s) already there, 1 to run (1 errored, retried)"]
    plain = prepare(resume_options(out))
    assert plain.cells == [] and plain.notes == [f"resuming {out}: 5 cell(s) already there, 0 to run"]


# --------------------------------------------------------------------------- fleets


def _fleet_cell(kind="dataset") -> FleetCell:
    return FleetCell(Repository("a", None, None, "generic", ("p",)), parse_target("openai:m1"),
                     Profile("p", kind))


@pytest.mark.parametrize("state, retryable", [("completed", False), ("failed", True), ("interrupted", True)])
def test_a_cells_log_entry_is_recorded_by_the_cell_key_and_anything_but_completed_is_retried(tmp_path, state,
                                                                                            retryable):
    cell = _fleet_cell()
    entry = FleetExecution._entry(CellResult(cell, state, None if state == "completed" else "why"))
    (tmp_path / CELLS_FILE).write_text(json.dumps(entry, sort_keys=True) + "\n", encoding="utf-8")
    read = read_cells_log(tmp_path)[cell.key]
    assert recorded_entry(read) == Recorded(cell.key, state, retryable)
    decision = decide([cell], lambda c: c.key, {cell.key: recorded_entry(read)}, retry=True)
    assert decision.run == ([cell] if retryable else []) and decision.done == (0 if retryable else 1)


def test_a_suite_line_is_recorded_by_scenario_tier_asked_and_iteration(tmp_path):
    log = ResultsLog(tmp_path / "results.jsonl", None)
    base = {"suite": "demo", "tier": "L1-basic", "tier_asked": "L1", "agent": "echo", "model": None}
    log.append(scenario_cell({**base, "scenario": "add-one", "iteration": 0, "run_id": "r0", "status": "error"}))
    log.append(scenario_cell({**base, "scenario": "add-one", "iteration": 1, "run_id": "r1", "status": "failed"}))
    log.append(scenario_cell({**base, "scenario": "add-one", "iteration": 0, "run_id": "r2", "status": "completed"}))
    log.append(scenario_cell({**base, "scenario": "add-one", "iteration": 2, "run_id": "r3", "status": "error"}))
    log.close()
    stored = latest(scenario_cell(line).recorded() for line in read_results(tmp_path / "results.jsonl")[0])
    assert stored[("add-one", "L1", 0)] == Recorded(("add-one", "L1", 0), "completed", False)
    assert stored[("add-one", "L1", 2)].retryable and not stored[("add-one", "L1", 1)].retryable
    decision = decide(range(4), lambda i: ("add-one", "L1", i), stored, retry=True)
    assert decision.run == [2, 3] and decision.retried == [2]


def test_the_rule_imports_nothing_of_the_harness():
    """Every engine imports it, the scenario plan included (rule 8 of docs/architecture.md)."""
    import ast
    from pathlib import Path

    import harness.cells

    tree = ast.parse(Path(harness.cells.__file__).read_text(encoding="utf-8"))
    names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert names and not [n for n in names if n == "harness" or n.startswith("harness.")]
