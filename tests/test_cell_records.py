"""The one recorded cell (harness.cells.CellRecord): what each engine's record reads as (a
dataset answer, a scenario run, a load test's request), and what the resume rule, the summary,
the progress display and a fleet's tests read from it."""

from __future__ import annotations

import asyncio
import json

import pytest

from harness.cells import CellRecord, Recorded
from harness.datasets.lines import dataset_cell
from harness.datasets.summary import summarize
from harness.fleet.cells import FleetCell, cell_tests
from harness.fleet.manifest import Profile, Repository
from harness.models.providers.registry import parse_target
from harness.results.records import EvaluationRecord, RunRecord, Telemetry
from harness.results_log import ResultsLog, read_results
from harness.scenarios.lines import scenario_cell, scenario_line
from harness.scenarios.plan import stored_cell
from harness.stress.record import sample_cell
from worker.analysis.summary import summarize as summarize_cells


def _answer(status="passed", **extra):
    line = {"test_id": "q1", "category": "math", "target": "openai:m", "provider": "openai", "model": "m",
            "repeat": 2, "status": status, "score": 1.0 if status == "passed" else 0.0, "duration_ms": 12.5,
            "ttft_ms": 3.0, "tokens_in": 7, "tokens_out": 5, "cost_usd": 0.001, "error": None,
            "error_kind": None, "run_id": "r1"}
    line.update(extra)
    return line


def _run(status="completed", ok=True, failure=None, telemetry=True, **kw):
    return RunRecord(run_id="run-1", suite="demo", scenario="add-one", tier="L1-basic", agent="echo",
                     model="m", status=status, failure_class=failure, is_successful=ok,
                     total_score=1.0 if ok else 0.0,
                     telemetry=Telemetry(tokens_in=10, tokens_out=4, cost_usd=0.02, duration_ms=1234.567)
                     if telemetry else None, **kw)


def test_a_cell_refuses_an_outcome_the_summary_does_not_know():
    with pytest.raises(ValueError, match="not 'completed'"):
        CellRecord.of("k", "k", "c", "completed", "completed", False)


# --------------------------------------------------------------------------- a dataset answer


@pytest.mark.parametrize("status, outcome", [("passed", "passed"), ("failed", "failed"),
                                             ("ungraded", "ungraded"), ("error", "error")])
def test_a_dataset_line_reads_as_a_cell_whose_outcome_is_its_status(status, outcome):
    cell = dataset_cell(_answer(status))
    assert (cell.key, cell.test, cell.category) == ("q1\x1fopenai:m\x1f2", "q1#2", "math")
    assert (cell.outcome, cell.status, cell.retryable) == (outcome, status, status == "error")
    assert (cell.duration_ms, cell.ttft_ms, cell.tokens_in, cell.tokens_out, cell.cost_usd) == (12.5, 3.0, 7, 5, 0.001)
    assert summarize_cells([cell]).count(outcome) == 1  # the summary reads the record as it is
    assert cell.recorded() == Recorded(cell.key, status, status == "error")


def test_a_dataset_timeout_is_an_error_of_its_run_that_timed_out():
    cell = dataset_cell(_answer("error", error_kind="timeout", tokens_in=None, category=None))
    assert cell.outcome == "error" and cell.timed_out and cell.tokens_in == 0 and cell.category == "uncategorized"
    assert not dataset_cell(_answer("error", error_kind="connect")).timed_out


def test_a_dataset_line_without_its_key_fields_is_a_key_error():
    line = _answer()
    del line["repeat"]
    with pytest.raises(KeyError):
        dataset_cell(line)


def test_the_dataset_summary_counts_the_cells_the_lines_read_as():
    lines = [_answer("passed"), _answer("failed", test_id="q2"), _answer("error", test_id="q3", error_kind="timeout"),
             _answer("ungraded", test_id="q4", category=None)]
    block = summarize(lines)["overall"]
    assert (block["passed"], block["failed"], block["errors"], block["ungraded"]) == (1, 1, 1, 1)
    assert block["error_kinds"] == {"timeout": 1} and block["cases"] == 4
    assert set(block["categories"]) == {"math", "uncategorized"}


# --------------------------------------------------------------------------- a scenario run


@pytest.mark.parametrize("status, ok, outcome", [("completed", True, "passed"), ("completed", False, "failed"),
                                                 ("budget_exceeded", False, "failed"), ("timeout", False, "timeout"),
                                                 ("error", False, "error")])
def test_a_scenario_run_reads_as_the_same_cell_from_its_suite_line(status, ok, outcome):
    line = scenario_line(_run(status, ok), iteration=3, tier_asked="L1", save_responses=False)
    assert {"response", "evaluations"}.isdisjoint(line)
    cell = scenario_cell(json.loads(json.dumps(line)))
    assert (cell.key, cell.test, cell.category) == (("add-one", "L1", 3), "add-one#L1#3", "demo")
    assert (cell.outcome, cell.status, cell.retryable) == (outcome, status, status == "error")
    assert (cell.duration_ms, cell.ttft_ms, cell.tokens_in, cell.tokens_out, cell.cost_usd) == (1234.57, None, 10, 4, 0.02)
    assert summarize_cells([cell]).count(outcome) == 1
    assert cell.timed_out == (status == "timeout")


def test_a_suite_line_keeps_the_answer_and_the_evaluations_when_responses_are_saved():
    run = _run(transcript=[{"role": "assistant", "content": "first"}, {"role": "user", "content": "more"},
                           {"role": "assistant", "content": "last"}, {"role": "assistant", "content": [{"x": 1}]}],
               evaluations=[EvaluationRecord("tests", 1.0, details="3 passed")])
    line = scenario_line(run, iteration=0, tier_asked="L1", save_responses=True)
    assert line["response"] == "last"
    assert line["evaluations"] == [{"name": "tests", "score": 1.0, "status": "ok", "details": "3 passed"}]
    cell = scenario_cell(scenario_line(_run(telemetry=False), iteration=0, tier_asked="L1", save_responses=False))
    assert (cell.duration_ms, cell.tokens_in, cell.cost_usd) == (None, 0, None)


@pytest.mark.parametrize("status, failure, retryable", [("error", "infra", True), ("error", "agent", False),
                                                        ("failed", "agent", False)])
def test_a_stored_run_reads_as_a_cell_keyed_by_its_plan_cell(status, failure, retryable):
    run = _run(status, False, failure, metadata={"cellGroup": "demo/add-one/L1/echo/m/-", "iteration": 1})
    cell = stored_cell(run)
    assert cell is not None and cell.key == cell.test == "demo/add-one/L1/echo/m/-#1"
    assert (cell.outcome, cell.retryable) == ("error" if status == "error" else "failed", retryable)
    assert cell.error_kind == (failure if status == "error" else None)
    assert stored_cell(_run()) is None  # a run that names no cell


# --------------------------------------------------------------------------- one recorder, a fleet's tests


def test_the_results_log_writes_a_cells_line_as_compact_json(tmp_path):
    log = ResultsLog(tmp_path / "results.jsonl", None)
    line = _answer(response="café")
    log.append(dataset_cell(line))
    log.close()
    assert (tmp_path / "results.jsonl").read_text(encoding="utf-8") == json.dumps(
        line, ensure_ascii=False, separators=(",", ":")) + "\n"
    assert read_results(tmp_path / "results.jsonl")[0] == [line]


def test_a_fleet_counts_both_kinds_of_cells_by_one_rule(tmp_path):
    repo = Repository("a", None, None, "generic", ("p",))
    target = parse_target("openai:m")
    dataset = FleetCell(repo, target, Profile("p", "dataset"),
                        planned=[(f"q{i}#0", "math") for i in range(5)])
    lines = [_answer("passed", test_id="q0", repeat=0), _answer("ungraded", test_id="q1", repeat=0),
             _answer("error", test_id="q2", repeat=0, error_kind="timeout"),
             _answer("error", test_id="q3", repeat=0, error_kind="auth")]
    tests = cell_tests(dataset, tmp_path, lines)
    assert [t["outcome"] for t in tests] == ["succeeded", "skipped", "timeout", "failed", "skipped"]
    assert [t["error"] for t in tests] == [False, False, True, True, False]
    suite = FleetCell(repo, target, Profile("s", "suite"), planned=[(f"add-one#L1#{i}", "demo") for i in range(4)])
    runs = [_run(), _run("completed", False), _run("timeout", False), _run("error", False)]
    lines = [scenario_line(r, iteration=i, tier_asked="L1", save_responses=False) for i, r in enumerate(runs)]
    tests = cell_tests(suite, tmp_path, lines)
    assert [t["outcome"] for t in tests] == ["succeeded", "failed", "timeout", "failed"]
    assert [t["error"] for t in tests] == [False, False, False, True]
    assert tests[0]["tokens"] == 14 and tests[0]["duration_ms"] == 1234.57 and tests[0]["category"] == "demo"


# --------------------------------------------------------------------------- a load test's requests


@pytest.mark.parametrize("ok, error, outcome", [(True, None, "passed"), (False, "timeout", "timeout"),
                                                (False, "rate_limit", "error"), (False, "connection", "error")])
def test_a_load_test_request_reads_as_a_cell_whose_duration_is_its_latency(ok, error, outcome):
    sample = {"step": 0, "ok": ok, "error": error, "latencyMs": 41.5, "ttftMs": 9.0 if ok else None,
              "inputTokens": 12 if ok else 0, "outputTokens": 3 if ok else 0, "costUsd": None}
    cell = sample_cell(sample, "c=4", 7)
    assert (cell.key, cell.test, cell.category) == (("c=4", 7), "c=4#7", "c=4")
    assert (cell.outcome, cell.status, cell.error_kind, cell.retryable) == (outcome, "ok" if ok else error, error,
                                                                            False)
    assert (cell.duration_ms, cell.tokens_in, cell.line) == (41.5, 12 if ok else 0, sample)


def test_a_load_test_reports_each_request_as_a_cell_in_its_step():
    from harness.stress import StressOptions, prepare
    from support.stub_model import make_stub

    server, url, _ = make_stub(service_s=0.0)
    try:
        test = prepare(StressOptions(provider="openai", model="stub", base_url=url, profile="ramp",
                                     max_concurrency=2, step_requests=3, stream=False))
        seen: list[CellRecord] = []
        test.on_event = lambda event: seen.append(event.result) if event.kind == "sample" else None
        asyncio.run(test.run())
    finally:
        server.shutdown()
    assert sorted(c.test for c in seen) == ["c=1#0", "c=1#1", "c=1#2", "c=2#0", "c=2#1", "c=2#2"]
    assert all(c.outcome == "passed" and c.duration_ms == c.line["latencyMs"] > 0 for c in seen)
    assert [c.line for c in seen] == test.samples  # the cells are the samples the load figures read
