"""The first hour of a new user: each numbered finding of the first-hour review has a test here
named for it (item 1, the judge policy, is tested in test_llm_judge.py and test_fleet_run.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli.bench import main
from support.scenario_builders import make_scenario


def bench(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


# -- item 2: one results store wherever you stand ------------------------------------------------

@pytest.fixture
def project(tmp_path, monkeypatch):
    """A zebench project (suites/ and results/) and a directory outside any project."""
    root = tmp_path / "proj"
    make_scenario(root / "suites")
    (root / "results").mkdir()
    (tmp_path / "elsewhere").mkdir()
    for name in ("ZE_BENCHMARKS_WORKER_URL", "ZE_BENCHMARKS_DB", "ZE_BENCHMARKS_SPOOL_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ZE_BENCHMARKS_SUITES_DIR", str(root / "suites"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    return root


def test_item2_the_store_is_found_from_any_directory_below_the_project(project, monkeypatch):
    monkeypatch.chdir(project)
    assert bench("demo", "add-one", "--agent", "oracle", "--batch-id", "b1").exit_code == 0
    assert (project / "results" / "bench.db").is_file()
    deep = project / "suites" / "demo" / "scenarios"
    monkeypatch.chdir(deep)
    listed = bench("batches", "--json")
    assert listed.exit_code == 0 and [b["batchId"] for b in json.loads(listed.output)] == ["b1"]
    shown = bench("batch", "b1", "--json")
    assert shown.exit_code == 0, shown.output
    assert not (deep / "results").exists()
    assert str(project / "results" / "bench.db") in "".join(bench("batches", "--help").output.split())


def test_item2_outside_a_project_the_per_user_store_is_used_and_a_read_creates_nothing(project, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path / "elsewhere")
    listed = bench("batches")
    user_db = tmp_path / "xdg" / "zebench" / "bench.db"
    assert listed.exit_code == 0 and "No batches stored yet in sqlite:" + str(user_db) in " ".join(listed.output.split())
    missing = bench("report", "demo-1")
    assert missing.exit_code != 0 and "demo-1" in missing.output
    assert not (tmp_path / "elsewhere" / "results").exists()
    view = bench("view", "--port", "0", "--no-open")
    assert view.exit_code == 1 and "no results store at" in view.output
    assert not (tmp_path / "xdg").exists(), "a read must not create the store"
    # A run from there stores in the per-user store, which later reads find from anywhere else.
    assert bench("demo", "add-one", "--agent", "oracle", "--batch-id", "u1").exit_code == 0
    assert user_db.is_file()
    monkeypatch.chdir(tmp_path)
    assert [b["batchId"] for b in json.loads(bench("batches", "--json").output)] == ["u1"]


def test_item2_doctor_and_help_name_the_store_in_use(project, tmp_path, monkeypatch):
    monkeypatch.chdir(project / "suites")
    doctor = bench("doctor", "--json")
    store = next(c for c in json.loads(doctor.output)["checks"] if c["name"] == "results store")
    assert store["status"] == "ok" and str(project / "results" / "bench.db") in store["detail"]
    assert "not created yet" in store["detail"]
    monkeypatch.chdir(tmp_path / "elsewhere")
    helptext = " ".join(bench("history", "--help").output.split())
    assert "per-user store" in helptext
    monkeypatch.setenv("ZE_BENCHMARKS_DB", str(tmp_path / "named.db"))
    assert "from $ZE_BENCHMARKS_DB" in " ".join(bench("history", "--help").output.split())


def test_item2_the_zebench_checkout_is_a_project_without_a_results_directory(tmp_path, monkeypatch):
    from harness.results.location import default_store

    monkeypatch.delenv("ZE_BENCHMARKS_DB", raising=False)
    checkout = tmp_path / "checkout"
    (checkout / "docs").mkdir(parents=True)
    (checkout / "pyproject.toml").write_text('[project]\nname = "zebench"\n')
    found = default_store(checkout / "docs")
    assert found.source == "project" and found.path == str(checkout / "results" / "bench.db")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "pyproject.toml").write_text('[project]\nname = "not-zebench"\n')
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_store(tmp_path / "other").source == "user"


def test_item2_worker_dev_serves_the_same_default_store(project, monkeypatch):
    from worker.cli import _default_db

    monkeypatch.chdir(project / "suites" / "demo")
    assert _default_db() == str(project / "results" / "bench.db")


# -- item 3: dataset requests and scenario runs kept apart ---------------------------------------

@pytest.fixture
def mixed_store(tmp_path, monkeypatch):
    """Two agents on the same scenario cells (a rankable pair) and a larger batch of dataset
    requests, in one store."""
    from harness.results import open_client
    from harness.results.records import RunRecord, batch_record, new_run_id

    db = tmp_path / "mixed.db"
    monkeypatch.setenv("ZE_BENCHMARKS_DB", str(db))
    monkeypatch.delenv("ZE_BENCHMARKS_WORKER_URL", raising=False)

    def run(batch, agent, scenario, tier, ok, model="m", suite="py-bugs", it=0):
        return RunRecord(run_id=new_run_id(), suite=suite, scenario=scenario, tier=tier, agent=agent, batch_id=batch,
                         model=model, status="completed", total_score=1.0 if ok else 0.0,
                         weighted_score=1.0 if ok else 0.0, is_successful=ok, config_hash=f"{agent}-{tier}",
                         started_at="2026-11-01T00:00:00Z", metadata={"iteration": it})

    scenario_runs = [run("scen-1", agent, s, "L1", agent == "oracle", it=i)
                     for agent in ("oracle", "echo") for s in ("a", "b", "c") for i in range(2)]
    dataset_runs = [run("data-1", "openai-compatible", f"case-{i}", "dataset", i % 10 == 0, model="m1", suite="qa")
                    for i in range(30)]
    with open_client(db_path=str(db), spool_dir=str(tmp_path / "spool")) as client:
        for r in scenario_runs + dataset_runs:
            assert client.post_run(r) == "stored"
        client.post_batch(batch_record("scen-1", scenario_runs, 1, 2, {"suite": "py-bugs", "agent": ["oracle", "echo"]}))
        client.post_batch(batch_record("data-1", dataset_runs, 3, 4, {
            "kind": "dataset", "dataset": {"ref": "qa@1", "name": "qa"}, "targets": ["openai-compatible:m1"]}))
    return db


def test_item3_the_leaderboard_ranks_scenario_runs_by_default(mixed_store):
    board = bench("leaderboard", "--json")
    assert board.exit_code == 0, board.output
    data = json.loads(board.output)
    assert data["runs"] == 12 and [e["entry"] for e in data["entries"]][:1] == ["oracle"]
    assert not any("nothing comparable" in n for n in data["notes"])
    datasets = json.loads(bench("leaderboard", "--kind", "dataset", "--json").output)
    assert datasets["runs"] == 30


def test_item3_batches_say_their_kind_and_what_they_ran(mixed_store):
    listed = {b["batchId"]: b for b in json.loads(bench("batches", "--json").output)}
    assert listed["scen-1"]["kind"] == "scenario" and listed["data-1"]["kind"] == "dataset"
    only = [b["batchId"] for b in json.loads(bench("batches", "--kind", "dataset", "--json").output)]
    assert only == ["data-1"]
    table = " ".join(bench("batches").output.split())
    assert "qa@1" in table and "openai-compatible:m1" in table


def test_item3_the_overview_counts_one_kind_at_a_time(mixed_store):
    from worker.config import WorkerConfig
    from worker.local import LocalWorker
    from worker.messages import Request

    worker = LocalWorker(str(mixed_store), WorkerConfig(api_key="k"))
    try:
        def get(path):
            response = worker.handle(Request.from_url("GET", path, {"authorization": "Bearer k"}, b""))
            assert response.status == 200, response.body
            return json.loads(response.body)

        scenario = get("/api/overview")
        assert scenario["kind"] == "scenario" and scenario["totals"]["totalRuns"] == 12
        assert scenario["totals"]["successfulRuns"] == 6 and scenario["totals"]["totalBatches"] == 1
        assert [b["batchId"] for b in scenario["recentBatches"]] == ["scen-1"]
        assert scenario["runsByKind"] == {"scenario": 12, "dataset": 30}
        dataset = get("/api/overview?kind=dataset")
        assert dataset["totals"]["totalRuns"] == 30 and [b["batchId"] for b in dataset["recentBatches"]] == ["data-1"]
        assert get("/api/overview?kind=all")["totals"]["totalRuns"] == 42
        assert get("/api/stats?kind=scenario")["totalRuns"] == 12
        assert [b["batchId"] for b in get("/api/batches?kind=scenario")] == ["scen-1"]
        bad = worker.handle(Request.from_url("GET", "/api/overview?kind=both", {"authorization": "Bearer k"}, b""))
        assert bad.status == 400
    finally:
        worker.close()


# -- item 4: labels that mislead ------------------------------------------------------------------

def _scores(successes: int, n: int) -> list[dict]:
    return [{"runId": f"r{successes}-{n}-{i}-{id(object())}", "suite": "s", "scenario": "x", "tier": "L1",
             "agent": "a", "model": "m", "status": "completed", "configHash": "c",
             "totalScore": 1.0 if i < successes else 0.0, "isSuccessful": i < successes} for i in range(n)]


def test_item4_five_of_five_to_two_of_five_is_inconclusive_with_the_runs_to_decide_not_flaky():
    from worker.analysis.regressions import regressions

    result = regressions(_scores(5, 5), _scores(2, 5))
    row = result["scenarios"][0]
    assert row["status"] == "inconclusive", row
    assert row["runsNeeded"] and row["runsNeeded"] > 5 and "runs a side" in row["note"]
    # Mixed outcomes with no difference beyond the noise stay flaky.
    assert regressions(_scores(3, 5), _scores(3, 5))["scenarios"][0]["status"] == "flaky"


def test_item4_an_entry_with_no_success_never_outranks_one_with_successes_in_the_composite():
    from worker.analysis.leaderboard import leaderboard

    runs = []
    for agent, ok, seconds, cost in (("echo", 0, 0.5, 0.0), ("slow", 1, 600.0, 3.0)):
        for s in ("a", "b", "c"):
            for it in range(3):
                success = agent == "slow" and it == 0
                runs.append({"runId": f"{agent}{s}{it}", "suite": "s", "scenario": s, "tier": "L1", "agent": agent,
                             "model": None, "status": "completed", "configHash": agent,
                             "totalScore": 0.95 if success else 0.6, "isSuccessful": success,
                             "telemetry": {"durationMs": seconds * 1000, "costUsd": cost}, "iteration": it})
    rows = {r["entry"]: r for r in leaderboard(runs, by=("agent",))["entries"]}
    assert rows["echo"]["successes"] == 0 and rows["slow"]["successes"] == 3
    assert rows["echo"]["compositeParts"]["speed"] == 0.0
    assert rows["echo"]["composite"] <= rows["slow"]["composite"]


def test_item4_a_batch_of_one_agent_per_invocation_is_not_three_of_one_planned(tmp_path, monkeypatch):
    make_scenario(tmp_path / "suites")
    monkeypatch.setenv("ZE_BENCHMARKS_SUITES_DIR", str(tmp_path / "suites"))
    monkeypatch.setenv("ZE_BENCHMARKS_DB", str(tmp_path / "bench.db"))
    monkeypatch.chdir(tmp_path)
    for agent in ("oracle", "echo"):
        assert bench("demo", "add-one", "--agent", agent, "--batch-id", "demo-1").exit_code in (0, 1)
    shown = " ".join(bench("batch", "demo-1").output.split())
    assert "of 1 planned" not in shown and "2 cells stored by invocations with different plans" in shown


# -- item 6: true messages and one status per kind of "not found" -------------------------------

@pytest.mark.parametrize("argv", [
    ["batch", "nosuch"], ["show", "nosuch"], ["report", "nosuch"], ["compare", "nosuch", "nosuch2"],
    ["regressions", "--baseline", "nosuch", "--candidate", "nosuch2"], ["profile", "nosuch"],
    ["export", "--batch-id", "nosuch", "-o", "out.csv"], ["demo", "add-one", "--agent", "oracle", "--resume", "nosuch"],
])
def test_item6_a_batch_or_run_the_store_does_not_hold_exits_1_everywhere(tmp_path, monkeypatch, argv):
    make_scenario(tmp_path / "suites")
    monkeypatch.setenv("ZE_BENCHMARKS_SUITES_DIR", str(tmp_path / "suites"))
    monkeypatch.setenv("ZE_BENCHMARKS_DB", str(tmp_path / "bench.db"))
    monkeypatch.chdir(tmp_path)
    assert bench("demo", "add-one", "--agent", "echo", "--batch-id", "there").exit_code in (0, 1)
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 1, (argv, result.output)
    assert "nosuch" in result.output and "Traceback" not in result.output


def test_item6_compare_one_batch_compares_its_two_agents_and_says_what_five_scenarios_cannot_show(mixed_store):
    result = bench("compare", "scen-1", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [s["label"] for s in data["sides"]] == ["scen-1,agent=oracle", "scen-1,agent=echo"] or \
        {s["label"] for s in data["sides"]} == {"scen-1,agent=oracle", "scen-1,agent=echo"}
    success = next(m for m in data["metrics"] if m["metric"] == "success")
    # Three scenarios, every one 2/2 against 0/2: p is 0.25 at best, so say how many are needed.
    assert any("at least 6 scenarios" in n for n in success["notes"]), success
    text = " ".join(bench("compare", "scen-1").output.split())
    assert "at least 6 scenarios" in text


def test_item6_compare_one_batch_of_one_agent_says_what_to_give(mixed_store):
    result = CliRunner().invoke(main, ["compare", "data-1"])
    assert result.exit_code == 2 and "one agent and one model" in result.output


def test_item6_a_refused_comparison_prints_the_reason_not_the_figures(monkeypatch):
    from harness.cli import analysis_cmd

    refused = {"sides": [{"label": "A", "runs": 2, "counted": 2, "excluded": {}, "agents": ["a"], "models": [],
                          "specialists": []} for _ in range(2)],
               "cells": {"paired": 2}, "metrics": [{"label": "score", "meanA": 1, "meanB": 0, "difference": 1,
                                                    "ci": None, "p": 0.5, "verdict": "A better"}],
               "refused": ["pairs differ in the judge"], "notes": [], "verdict": "not comparable"}
    monkeypatch.setattr(analysis_cmd, "_ask", lambda *a, **k: refused)
    result = CliRunner().invoke(main, ["compare", "x", "y"])
    assert result.exit_code == 1
    assert "Refused: pairs differ in the judge" in result.output and "A vs B on paired cells" not in result.output


def test_item6_max_cost_at_a_base_url_names_the_server_not_a_missing_price(tmp_path, monkeypatch):
    make_scenario(tmp_path / "suites")
    monkeypatch.setenv("ZE_BENCHMARKS_SUITES_DIR", str(tmp_path / "suites"))
    monkeypatch.setenv("ZE_BENCHMARKS_DB", str(tmp_path / "bench.db"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    result = CliRunner().invoke(main, ["demo", "add-one", "--agent", "openai", "--model", "gpt-4o-mini",
                                       "--base-url", "http://127.0.0.1:9/v1", "--max-cost", "0.5"])
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert "served at --base-url" in text and "openai's own API" in text
    assert "has no price for 'gpt-4o-mini'" not in text
