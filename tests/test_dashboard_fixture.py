"""The dashboard fixture itself: what the harness stored in the seeded store, read through the
API of the ``worker dev`` serving it, and that the page fixture's problem log catches a failed
request, a console error and an uncaught error."""

from __future__ import annotations

import httpx
import pytest

from support.dashboard_fixture import DATASET_CASES, FLEET_CASES, MOCK_MODEL, ProblemLog


def get(dashboard, path: str, **params):
    answer = httpx.get(dashboard.url + path, params=params, timeout=30)
    assert answer.status_code == 200, (path, answer.status_code, answer.text[:500])
    return answer.json()


def test_the_two_scenario_batches_hold_the_runs_of_each_agent(dashboard):
    batches = {b["batchId"]: b for b in get(dashboard, "/api/batches", limit=100)}
    a, b = batches[dashboard.batch_a], batches[dashboard.batch_b]
    assert (a["totalRuns"], a["successfulRuns"]) == (2, 1)  # oracle passes, echo does nothing
    assert b["totalRuns"] == 3 and b["successfulRuns"] >= 1
    assert sorted(r["agent"] for r in dashboard.runs[dashboard.batch_a]) == ["echo", "oracle"]
    assert sorted(r["agent"] for r in dashboard.runs[dashboard.batch_b]) == ["echo", "openai", "oracle"]
    oracle = get(dashboard, f"/api/runs/{dashboard.run_id(dashboard.batch_a, 'oracle')}")
    assert oracle["run"]["isSuccessful"] is True and oracle["run"]["scenario"] == "pagination-off-by-one"
    assert oracle["evaluations"]  # validation ran
    assert get(dashboard, f"/api/runs/{dashboard.run_id(dashboard.batch_a, 'echo')}")["run"]["isSuccessful"] is False
    openai = next(r for r in dashboard.runs[dashboard.batch_b] if r["agent"] == "openai")
    assert openai["model"] == MOCK_MODEL
    transcript = get(dashboard, f"/api/runs/{openai['runId']}/transcript")
    assert transcript  # the model's turn against the mock was recorded


def test_the_dataset_batch_holds_every_case_of_both_models_twice(dashboard):
    runs = get(dashboard, "/api/runs", batchId=dashboard.dataset_batch, limit=100)
    assert len(runs) == len(DATASET_CASES) * 2 * 2
    assert {r["model"] for r in runs} == {"m1", "m2"}
    assert {r["suite"] for r in runs} == {dashboard.dataset_name}
    assert {r["scenario"] for r in runs} == {c["id"] for c in DATASET_CASES}
    by_case = {}
    for r in runs:
        by_case.setdefault(r["scenario"], set()).add(r["isSuccessful"])
    assert by_case["add"] == {True} and by_case["color"] == {False}  # the mock's scripted answers


def test_the_fleet_batch_is_the_fleet_run(dashboard):
    batch = get(dashboard, f"/api/batches/{dashboard.fleet_id}")
    metadata = batch.get("metadata") or batch.get("batch", {}).get("metadata")
    assert metadata["kind"] == "fleet" and metadata["fleetId"] == dashboard.fleet_name
    assert sorted(metadata["repositories"]) == ["alpha", "beta"]
    runs = get(dashboard, "/api/runs", batchId=dashboard.fleet_id, limit=100)
    assert len(runs) == 2 * 2 * len(FLEET_CASES)  # repositories x providers x cases
    assert sum(r["isSuccessful"] for r in runs) == 2 * 2 * 2  # q1 and q2 are answered right


def test_the_stress_test_is_stored_with_its_steps(dashboard):
    listed = get(dashboard, "/api/stress")
    assert dashboard.stress_id in [s["id"] for s in listed]
    record = get(dashboard, f"/api/stress/{dashboard.stress_id}")
    assert record["status"] == "completed" and record["model"] == MOCK_MODEL
    assert [s["concurrency"] for s in record["steps"]] == [1, 2, 4]
    assert all(s["ok"] > 0 for s in record["steps"])


@pytest.mark.browser
def test_the_problem_log_records_what_a_page_got_wrong(chromium, dashboard):
    context = chromium.new_context(base_url=dashboard.url)
    try:
        page = context.new_page()
        log = ProblemLog()
        log.attach(page)
        page.goto("/health")
        assert log.unexpected() == []
        page.evaluate("() => fetch('/api/runs/no-such-run').then(r => r.status)")
        page.evaluate("() => console.error('broken on purpose')")
        page.evaluate("() => { setTimeout(() => { throw new Error('thrown on purpose'); }, 0); }")
        page.wait_for_timeout(200)
        found = "\n".join(log.unexpected())
        assert "HTTP 404: GET " in found and "/api/runs/no-such-run" in found
        assert "console error: broken on purpose" in found
        assert "page error: " in found and "thrown on purpose" in found
        log.allow(r"no-such-run|on purpose")
        assert log.unexpected() == []
    finally:
        context.close()
