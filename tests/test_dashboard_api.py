"""The routes the dashboard reads (worker/dashboard_api.py), on every storage backend.

On workerd the database is shared by the session, so these tests scope what they read to
their own batch ids where a route allows it, and otherwise check what they posted is there.
"""

from __future__ import annotations

import uuid

from support.worker import api, local, run_body, uid  # noqa: F401 - fixtures and helpers shared with the core's tests
from worker import dashboard_api


def _post(api, **over):  # noqa: F811
    body = run_body(**over)
    resp = api.call("POST", "/api/results", body=body)
    assert resp.status in (200, 201), resp.body
    return body


def test_overview_has_totals_a_daily_timeline_and_recent_batches(api):  # noqa: F811
    batch = uid("batch")
    _post(api, batchId=batch, isSuccessful=True, totalScore=1.0)
    _post(api, batchId=batch, isSuccessful=False, totalScore=0.0)
    resp = api.call("GET", "/api/overview?days=7")
    assert resp.status == 200
    body = resp.body
    assert body["totals"]["totalRuns"] >= 2 and body["days"] == 7
    assert body["timeline"] and {"day", "runs", "successfulRuns", "passRate", "avgScore"} <= set(body["timeline"][-1])
    assert sum(d["runs"] for d in body["timeline"]) >= 2
    assert batch in [b["batchId"] for b in body["recentBatches"]]
    assert api.call("GET", "/api/overview?days=0").status == 400
    assert api.call("GET", "/api/overview?bogus=1").status == 400


def test_batches_search_sort_and_total_count(api):  # noqa: F811
    tag = uuid.uuid4().hex[:8]
    ids = [f"search-{tag}-{i}" for i in range(3)]
    for i, batch in enumerate(ids):
        for j in range(i + 1):
            _post(api, batchId=batch, isSuccessful=j == 0, totalScore=1.0 if j == 0 else 0.0)
    resp = api.call("GET", f"/api/batches?q={tag}&sort=runs&order=desc&limit=2")
    assert resp.status == 200 and resp.headers["x-total-count"] == "3"
    assert [b["batchId"] for b in resp.body] == [ids[2], ids[1]]
    assert [b["totalRuns"] for b in resp.body] == [3, 2]
    page2 = api.call("GET", f"/api/batches?q={tag}&sort=runs&order=desc&limit=2&offset=2")
    assert [b["batchId"] for b in page2.body] == [ids[0]]
    by_rate = api.call("GET", f"/api/batches?q={tag}&sort=passRate&order=desc")
    assert [b["batchId"] for b in by_rate.body] == ids  # 1/1, 1/2, 1/3
    by_id = api.call("GET", f"/api/batches?q={tag}&sort=batchId&order=asc")
    assert [b["batchId"] for b in by_id.body] == ids
    # LIKE wildcards in the search are literal.
    assert api.call("GET", "/api/batches?q=%25_%25").headers["x-total-count"] == "0"
    assert api.call("GET", "/api/batches?sort=nope").status == 400
    assert api.call("GET", "/api/batches?order=up").status == 400


def test_batch_without_runs_keeps_aggregates_and_breakdowns(api):  # noqa: F811
    batch = uid("batch")
    _post(api, batchId=batch, agent="oracle", isSuccessful=True, totalScore=1.0)
    full = api.call("GET", f"/api/batches/{batch}").body
    slim = api.call("GET", f"/api/batches/{batch}?runs=0").body
    assert "runs" in full and "runs" not in slim
    assert slim["breakdowns"] == full["breakdowns"] and slim["totalRuns"] == 1
    assert api.call("GET", f"/api/batches/{batch}?x=1").status == 400


def test_transcript_pages_cut_long_contents_and_give_whole_entries(api):  # noqa: F811
    long = "x" * 5000
    transcript = [{"role": "user", "content": "fix it"}]
    for i in range(120):
        transcript.append({"role": "assistant", "content": f"step {i}",
                           "tool_calls": [{"id": f"c{i}", "name": "write_file",
                                           "arguments": {"path": "a.py", "content": long}}]})
        transcript.append({"role": "tool", "tool_call_id": f"c{i}", "name": "write_file", "content": long,
                           "is_error": i == 3})
    run = _post(api, transcript=transcript)
    page = api.call("GET", f"/api/runs/{run['runId']}/transcript?offset=0&limit=50").body
    assert page["total"] == 241 and page["offset"] == 0 and len(page["entries"]) == 50
    first_call = page["entries"][1]
    assert first_call["toolCalls"][0]["name"] == "write_file" and first_call["cut"]
    tool = page["entries"][2]
    assert tool["role"] == "tool" and tool["cut"] and tool["contentChars"] == 5000
    assert len(tool["content"]) == dashboard_api.PREVIEW_CHARS
    assert page["entries"][8]["isError"]
    last = api.call("GET", f"/api/runs/{run['runId']}/transcript?offset=200&limit=200").body
    assert [e["index"] for e in last["entries"]] == list(range(200, 241))
    whole = api.call("GET", f"/api/runs/{run['runId']}/transcript?entry=2").body
    assert whole["entry"]["content"] == long
    assert api.call("GET", f"/api/runs/{run['runId']}/transcript?limit=1000").status == 400
    # Without paging parameters the route answers as it always did.
    assert len(api.call("GET", f"/api/runs/{run['runId']}/transcript").body["transcript"]) == 241
    empty = _post(api)
    assert api.call("GET", f"/api/runs/{empty['runId']}/transcript?offset=0").body["total"] == 0


def test_diff_is_stored_apart_and_read_back_whole(api):  # noqa: F811
    patch = "".join(f"--- a/f{i}.py\n+++ b/f{i}.py\n@@ -1 +1 @@\n-old {'y' * 900}\n+new\n" for i in range(150))
    run = _post(api, diff=patch, metadata={"diff": {"summary": "0 added, 150 modified, 0 deleted",
                                                    "changedFiles": ["f0.py"], "truncated": False}})
    body = api.call("GET", f"/api/runs/{run['runId']}/diff").body
    assert body["patch"] == patch and body["summary"].startswith("0 added") and body["changedFiles"] == ["f0.py"]
    plain = _post(api)
    assert api.call("GET", f"/api/runs/{plain['runId']}/diff").body["patch"] is None
    # A run without a diff hashes as before diffs existed: a repost is the same run.
    again = api.call("POST", "/api/results", body=plain)
    assert again.status == 200 and again.body["duplicate"]


def test_compare_runs_finds_where_tool_calls_diverge(api):  # noqa: F811
    def calls(*names):
        return [{"role": "assistant", "content": "",
                 "tool_calls": [{"id": str(i), "name": n, "arguments": {"path": f"{n}.py"}}]}
                for i, n in enumerate(names)]

    a = _post(api, transcript=calls("read_file", "run_command", "write_file"))
    b = _post(api, transcript=calls("read_file", "write_file"))
    body = api.call("GET", f"/api/compare/runs?a={a['runId']}&b={b['runId']}").body
    assert body["divergesAt"] == 1 and body["sameScenario"]
    assert [c["name"] for c in body["a"]["calls"]] == ["read_file", "run_command", "write_file"]
    same = api.call("GET", f"/api/compare/runs?a={a['runId']}&b={a['runId']}").body
    assert same["divergesAt"] is None
    assert api.call("GET", "/api/compare/runs?a=x").status == 400
    assert api.call("GET", f"/api/compare/runs?a={a['runId']}&b=run_missing").status == 404


def test_divergence_rules():
    x = [{"name": "a", "arguments": {"p": 1, "q": 2}}, {"name": "b", "arguments": '{"q": 2, "p": 1}'}]
    y = [{"name": "a", "arguments": '{"q": 2, "p": 1}'}, {"name": "b", "arguments": {"p": 1, "q": 2}}]
    assert dashboard_api.divergence(x, y) is None  # the same arguments, however they were spelt
    assert dashboard_api.divergence(x, y[:1]) == 1
    assert dashboard_api.divergence([], []) is None
    assert dashboard_api.divergence(x, [{"name": "a", "arguments": {"p": 2}}]) == 0


def test_datasets_give_pass_rates_with_intervals_and_latency_percentiles(api):  # noqa: F811
    batch = uid("batch")
    dataset = f"ds-{uuid.uuid4().hex[:6]}"
    for i in range(10):
        tel = {**run_body()["telemetry"], "durationMs": float(100 * (i + 1)), "costUsd": 0.01}
        _post(api, batchId=batch, suite=dataset, scenario=f"case-{i}", tier="dataset", agent="openai",
              model="gpt-x", isSuccessful=i < 7, totalScore=1.0 if i < 7 else 0.0,
              status="error" if i == 9 else "completed", failureClass="infra" if i == 9 else None, telemetry=tel)
    body = api.call("GET", f"/api/datasets?batchId={batch}").body
    (group,) = body["groups"]
    assert group["dataset"] == dataset and group["provider"] == "openai" and group["model"] == "gpt-x"
    assert (group["runs"], group["passed"], group["failed"], group["errors"]) == (10, 7, 2, 1)
    assert group["passRateLow"] < 0.7 < group["passRateHigh"]
    assert group["latencyMs"]["p50"] == 550.0 and group["latencyMs"]["min"] == 100.0
    assert abs(group["latencyMs"]["p95"] - 955.0) < 1e-9 and abs(group["costUsd"] - 0.1) < 1e-9
    assert dataset in body["datasets"]


def test_fleets_list_and_matrix(api):  # noqa: F811
    fleet_batch = uid("fleet")
    meta = {"kind": "fleet", "fleetId": "nightly", "description": "two repos", "state": "completed",
            "repositories": ["r1", "r2"], "providers": ["openai:m1", "anthropic:m2"], "profiles": ["quick"]}
    assert api.call("POST", "/api/results/batch", body={"batchId": fleet_batch, "metadata": meta}).status in (200, 201)
    for repo in ("r1", "r2"):
        for agent, model in (("openai", "m1"), ("anthropic", "m2")):
            for ok in (True, False):
                _post(api, batchId=fleet_batch, suite="faq", scenario=f"q-{ok}", tier="dataset", agent=agent,
                      model=model, isSuccessful=ok and repo == "r1",
                      metadata={"fleet": {"repoId": repo, "profile": "quick", "runId": fleet_batch}})
    listed = api.call("GET", "/api/fleets").body
    mine = [f for f in listed if f["batchId"] == fleet_batch]
    assert mine and mine[0]["fleetId"] == "nightly" and mine[0]["totalRuns"] == 8
    body = api.call("GET", f"/api/fleets/{fleet_batch}").body
    assert body["repositories"] == ["r1", "r2"] and body["providers"] == ["openai:m1", "anthropic:m2"]
    cell = next(c for c in body["cells"] if c["repoId"] == "r1" and c["provider"] == "openai:m1")
    assert (cell["runs"], cell["passed"], cell["passRate"]) == (2, 1, 0.5)
    assert next(c for c in body["cells"] if c["repoId"] == "r2")["passRate"] == 0.0
    assert api.call("GET", "/api/fleets/no-such-fleet").status == 404


def test_overview_regressions_compare_the_latest_batch_with_the_agents_previous_one(local):  # noqa: F811
    api = local()
    assert api.call("GET", "/api/overview/regressions").body["baseline"] is None
    for batch, score in (("nightly-1", 1.0), ("nightly-2", 0.0)):
        for i in range(4):
            _post(api, batchId=batch, agent="oracle", scenario="slugify", totalScore=score, weightedScore=score,
                  isSuccessful=score == 1.0, configHash="cfg-1")
    body = api.call("GET", "/api/overview/regressions").body
    assert (body["baseline"], body["candidate"], body["agent"]) == ("nightly-1", "nightly-2", "oracle")
    assert [r["scenario"] for r in body["scenarios"]] == ["py-bugs/slugify"]
    assert body["scenarios"][0]["status"] == "regressed" and body["counts"]["regressed"] == 1
