"""The worker core's behaviour, run against every storage backend.

The same tests run on SQLite, on a fake D1 binding (async, batch-only transactions, the
100-parameter limit, REAL returned as int, None refused like JS ``undefined``) and, as an
integration test, on the real workerd runtime with local D1 under wrangler 3.72.1.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from worker.app import ROUTES, WorkerApp
from worker.config import WorkerConfig
from worker.d1_backend import D1Storage
from worker.migrate import MIGRATIONS_DIR, migration_files
from worker.sqlite_backend import SQLiteStorage
from worker.migrate import apply_migrations

from support.worker import CoreApi, FakeD1, FakeD1Error, api, local, run_body, uid  # noqa: F401 - api, local: fixtures
from support.workerd_fixture import KEY, ORIGIN


# ------------------------------------------------------------------------------- the tests

def test_health_reports_ok_with_timestamp(api):
    r = api.call("GET", "/health")
    assert r.status == 200
    assert r.body["status"] == "ok" and r.body["timestamp"].endswith("Z")


def test_posted_run_reads_back_in_camel_case_with_all_fields(api):
    body = run_body(failureClass="agent", status="failed", configHash="abc123",
                    specialistEnabled=True, specialistName="@s/x", specialistVersion="1.0.0",
                    totalScore=1.0, startedAt="2026-01-01T00:00:00Z")
    r = api.call("POST", "/api/results", body)
    assert r.status == 201, r.body
    assert r.body == {"success": True, "runId": body["runId"], "batchId": None, "duplicate": False}

    got = api.call("GET", f"/api/runs/{body['runId']}")
    assert got.status == 200
    run, evals, tel = got.body["run"], got.body["evaluations"], got.body["telemetry"]
    assert run["runId"] == run["id"] == body["runId"]
    assert run["status"] == "failed" and run["failureClass"] == "agent"
    assert run["configHash"] == "abc123" and run["specialistName"] == "@s/x"
    assert run["specialistEnabled"] is True and run["isSuccessful"] is False
    # REAL 1.0 may come back from D1 as int 1; the wire keeps it a float.
    assert run["totalScore"] == 1.0 and isinstance(run["totalScore"], float)
    assert run["metadata"] == {"k": "v"} and run["startedAt"] == "2026-01-01T00:00:00Z"
    assert [(e["evaluatorName"], e["status"], e["details"]) for e in evals] == [("validation", "ok", "exit 0")]
    assert isinstance(evals[0]["score"], float)
    assert tel["cacheReadTokens"] == 5 and tel["cacheWriteTokens"] == 6
    assert tel["judgeTokensIn"] == 7 and tel["judgeTokensOut"] == 8 and tel["judgeCostUsd"] == 0.25
    assert tel["turns"] == 4 and tel["latenciesMs"] == [100.0, 200.0]
    assert tel["costUsd"] == 2.0 and isinstance(tel["costUsd"], float)

    assert api.call("GET", f"/api/runs/{body['runId']}/evaluations").body == evals
    assert api.call("GET", f"/api/runs/{body['runId']}/telemetry").body == tel


def test_same_run_posted_twice_is_stored_once_and_different_content_conflicts(api):
    body = run_body(batchId=uid("batch"))
    assert api.call("POST", "/api/results", body).status == 201
    again = api.call("POST", "/api/results", body)
    assert again.status == 200 and again.body["duplicate"] is True
    changed = dict(body, totalScore=0.9)
    conflict = api.call("POST", "/api/results", changed)
    assert conflict.status == 409 and conflict.body["error"]
    runs = api.call("GET", "/api/runs", headers=None, body=None).body
    batch = api.call("GET", f"/api/batches/{body['batchId']}").body
    assert batch["totalRuns"] == 1
    assert batch["runs"][0]["totalScore"] == 0.5
    assert api.call("GET", f"/api/runs/{body['runId']}/evaluations").body.__len__() == 1
    assert isinstance(runs, list)


def test_run_with_unknown_batch_creates_it_and_aggregates_come_from_stored_runs(api):
    batch_id = uid("batch")
    posts = [
        run_body(batchId=batch_id, scenario="a", agent="echo", model="m1", tier="L1", totalScore=1.0, isSuccessful=True),
        run_body(batchId=batch_id, scenario="a", agent="oracle", model="m2", tier="L2", totalScore=0.5, isSuccessful=False),
        run_body(batchId=batch_id, scenario="b", agent="oracle", model="m2", tier="L1", totalScore=0.0, isSuccessful=True),
    ]
    for p in posts:
        assert api.call("POST", "/api/results", p).status == 201
    # A client's own totals are not trusted.
    up = api.call("POST", "/api/results/batch", {"batchId": batch_id, "totalRuns": 99,
                                                 "successfulRuns": 99, "avgScore": 0.99,
                                                 "completedAt": 1234, "metadata": {"note": "x"}})
    assert up.status == 200 and up.body["batch"]["totalRuns"] == 3
    b = api.call("GET", f"/api/batches/{batch_id}").body
    assert (b["totalRuns"], b["successfulRuns"]) == (3, 2)
    assert b["avgScore"] == pytest.approx(0.5)
    assert b["completedAt"] == 1234 and b["metadata"] == {"note": "x"}
    assert sorted(r["runId"] for r in b["runs"]) == sorted(p["runId"] for p in posts)
    by = {dim: {row["key"]: row for row in rows} for dim, rows in b["breakdowns"].items()}
    assert by["scenario"]["a"]["runs"] == 2 and by["scenario"]["a"]["avgScore"] == pytest.approx(0.75)
    assert by["scenario"]["b"]["successfulRuns"] == 1
    assert by["agent"]["oracle"]["runs"] == 2 and by["agent"]["oracle"]["maxScore"] == 0.5
    assert by["model"]["m1"]["avgScore"] == 1.0
    assert by["tier"]["L1"]["runs"] == 2 and by["tier"]["L2"]["minScore"] == 0.5
    listed = {x["batchId"]: x for x in api.call("GET", "/api/batches", body=None).body}
    if batch_id in listed:  # on a shared database the page may hold newer batches only
        assert listed[batch_id]["totalRuns"] == 3


def test_batch_post_creates_then_updates_without_losing_fields(api):
    batch_id = uid("batch")
    created = api.call("POST", "/api/results/batch", {"batchId": batch_id, "createdAt": 1000,
                                                      "metadata": {"suite": "s"}})
    assert created.status == 201 and created.body["batch"]["createdAt"] == 1000
    updated = api.call("POST", "/api/results/batch", {"batchId": batch_id, "completedAt": 2000})
    assert updated.status == 200
    b = api.call("GET", f"/api/batches/{batch_id}").body
    assert (b["createdAt"], b["completedAt"], b["metadata"]) == (1000, 2000, {"suite": "s"})
    assert b["totalRuns"] == 0 and b["avgScore"] is None and b["runs"] == []


def test_a_batch_post_may_leave_the_aggregates_out_of_its_answer(api):
    batch_id = uid("batch")
    quiet = api.call("POST", "/api/results/batch?summary=0", {"batchId": batch_id, "createdAt": 1000})
    assert quiet.status == 201 and quiet.body == {"success": True, "batchId": batch_id}
    full = api.call("POST", "/api/results/batch?summary=1", {"batchId": batch_id, "completedAt": 2000})
    assert full.status == 200 and (full.body["batch"]["createdAt"], full.body["batch"]["completedAt"]) == (1000, 2000)
    for query in ("summary=2", "summary=no", "sumary=0"):
        assert api.call("POST", f"/api/results/batch?{query}", {"batchId": batch_id}).status == 400, query


def test_batch_metadata_from_many_writers_is_merged_and_nothing_is_lost(api):
    batch_id = uid("batch")
    agents = [f"agent{i}" for i in range(12)]
    bodies = [{"batchId": batch_id, "createdAt": 5000 - i, "completedAt": 6000 + i,
               "metadata": {"suite": "s", "agent": a, "iterations": 2, "invocationId": f"inv{i}"}}
              for i, a in enumerate(agents)]

    def post(body):
        r = api.call("POST", "/api/results/batch", body)
        assert r.status in (200, 201), r.body

    if api.name == "fake_d1":  # the fake's sqlite connection belongs to one thread
        for body in bodies:
            post(body)
    else:
        threads = [threading.Thread(target=post, args=(b,)) for b in bodies]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    post(bodies[0])  # a redelivered post adds nothing
    b = api.call("GET", f"/api/batches/{batch_id}").body
    assert sorted(b["metadata"]["agent"]) == sorted(agents) and b["metadata"]["suite"] == "s"
    assert b["metadata"]["iterations"] == 24 and b["metadata"]["invocations"] == 12
    assert (b["createdAt"], b["completedAt"]) == (5000 - 11, 6000 + 11)
    listed = api.call("GET", "/api/batches?limit=500").body
    assert next(x for x in listed if x["batchId"] == batch_id)["metadata"]["iterations"] == 24


def test_merge_batch_metadata_rules():
    from worker.store import merge_batch_metadata

    merged = merge_batch_metadata([
        {"suite": "s", "agent": "echo", "iterations": 1, "sandbox": "bwrap", "invocationId": "a"},
        {"suite": "s", "agent": ["oracle", "echo"], "iterations": 3, "sandbox": "bwrap", "invocationId": "b"},
    ])
    assert merged == {"suite": "s", "agent": ["echo", "oracle"], "iterations": 4, "sandbox": "bwrap",
                      "invocations": 2}
    assert merge_batch_metadata([{"suite": "s"}]) == {"suite": "s"}


def test_run_filters_select_matching_runs(api):
    tag = uid("suite")
    spec = run_body(suite=tag, agent="anthropic", model="claude-x", tier="L2", status="timeout",
                    specialistEnabled=True, specialistName="sp", configHash="h1", batchId=uid("batch"))
    plain = run_body(suite=tag, scenario="other", agent="echo", model="m9", tier="L0",
                     configHash="h2")
    for p in (spec, plain):
        assert api.call("POST", "/api/results", p).status == 201

    def ids(**q: str) -> set[str]:
        from urllib.parse import urlencode
        r = api.call("GET", "/api/runs?" + urlencode({"suite": tag, **q}))
        assert r.status == 200, r.body
        return {x["runId"] for x in r.body}

    assert ids() == {spec["runId"], plain["runId"]}
    assert ids(scenario="other") == {plain["runId"]}
    assert ids(agent="anthropic") == ids(model="claude-x") == ids(tier="L2") == {spec["runId"]}
    assert ids(status="timeout") == ids(batchId=spec["batchId"]) == {spec["runId"]}
    assert ids(specialist="sp") == ids(specialistEnabled="true") == ids(configHash="h1") == {spec["runId"]}
    assert ids(specialistEnabled="false") == {plain["runId"]}


def test_specialist_filter_by_bare_name_matches_every_scope(api):
    tag = uid("suite")
    names = ["@acme/fixer", "@other/fixer", "fixer", "@acme/fixer-2", "fixerx", "@acme/other", "@fixer"]
    for name in names:
        body = run_body(suite=tag, specialistEnabled=True, specialistName=name)
        assert api.call("POST", "/api/results", body).status == 201

    def names_of(value: str) -> set[str]:
        from urllib.parse import urlencode
        r = api.call("GET", "/api/runs?" + urlencode({"suite": tag, "specialist": value}))
        assert r.status == 200, r.body
        return {x["specialistName"] for x in r.body}

    assert names_of("fixer") == {"@acme/fixer", "@other/fixer", "fixer"}
    assert names_of("@acme/fixer") == {"@acme/fixer"}  # a scoped name matches exactly
    assert names_of("fixer-2") == {"@acme/fixer-2"}
    assert names_of("fix") == names_of("%") == names_of("_ixer") == names_of("@acme") == set()


def test_cursor_pagination_returns_every_run_once_newest_first(api):
    tag = uid("suite")
    posted = [run_body(suite=tag)["runId"] for _ in range(5)]
    for rid in posted:
        assert api.call("POST", "/api/results", run_body(suite=tag, runId=rid)).status == 201
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        q = f"/api/runs?suite={tag}&limit=2" + (f"&cursor={cursor}" if cursor else "")
        r = api.call("GET", q)
        assert r.status == 200 and len(r.body) <= 2
        seen += [x["runId"] for x in r.body]
        pages += 1
        cursor = r.headers.get("x-next-cursor")
        if not cursor:
            break
    assert sorted(seen) == sorted(posted) and len(seen) == 5 and pages == 3
    created = [x["createdAt"] for x in api.call("GET", f"/api/runs?suite={tag}").body]
    assert created == sorted(created, reverse=True)


def test_limit_is_capped_at_500(local):
    api = local()
    for _ in range(501):
        assert api.call("POST", "/api/results", run_body(evaluations=[], telemetry=None)).status == 201
    r = api.call("GET", "/api/runs?limit=10000")
    assert r.status == 200 and len(r.body) == 500 and r.headers.get("x-next-cursor")
    rest = api.call("GET", f"/api/runs?limit=500&cursor={r.headers['x-next-cursor']}")
    assert len(rest.body) == 1 and "x-next-cursor" not in rest.headers


def test_many_evaluations_are_split_within_the_parameter_limit_and_keep_order(api):
    evals = [{"evaluatorName": f"e{i:02d}", "score": i / 50, "details": {"i": i}} for i in range(45)]
    body = run_body(evaluations=evals)
    assert api.call("POST", "/api/results", body).status == 201
    got = api.call("GET", f"/api/runs/{body['runId']}/evaluations").body
    assert [e["evaluatorName"] for e in got] == [e["evaluatorName"] for e in evals]
    assert got[7]["details"] == {"i": 7} and got[7]["maxScore"] == 1.0


def test_large_evaluation_details_are_stored_whole(api):
    # The runner caps details at 16,000 characters; control characters take 6 bytes as JSON.
    details = ("log line \x1b[31mred\x1b[0m é\n" * 700)[:16_000]
    body = run_body(evaluations=[{"evaluatorName": f"v{i}", "score": 1.0, "details": details}
                                 for i in range(13)])
    assert api.call("POST", "/api/results", body).status == 201
    got = api.call("GET", f"/api/runs/{body['runId']}/evaluations").body
    assert len(got) == 13 and all(e["details"] == details for e in got)


def test_json_depth_check_ignores_brackets_inside_strings(api):
    body = run_body(metadata={"note": "[[[[{{{{" * 20 + '\\"]]'})
    assert api.call("POST", "/api/results", body).status == 201


def test_transcript_is_stored_apart_in_chunks_and_capped(api):
    small = run_body(transcript=[{"role": "user", "content": "fix it"},
                                 {"role": "assistant", "content": None, "tool_calls": [{"name": "read_file"}]}])
    assert api.call("POST", "/api/results", small).status == 201
    t = api.call("GET", f"/api/runs/{small['runId']}/transcript").body
    assert t["transcript"] == small["transcript"] and t["truncated"] is False
    assert "transcript" not in api.call("GET", f"/api/runs/{small['runId']}").body["run"]

    # ~300 KB: several D1-sized chunks, returned whole.
    medium_msgs = [{"role": "tool", "content": "é" * 1500 + str(i)} for i in range(100)]
    medium = run_body(transcript=medium_msgs)
    assert api.call("POST", "/api/results", medium).status == 201
    t = api.call("GET", f"/api/runs/{medium['runId']}/transcript").body
    assert t["transcript"] == medium_msgs and t["truncated"] is False

    # ~3 MB: over the cap, so head and tail are kept with a marker in between.
    big_msgs = [{"role": "tool", "content": f"{i}:" + "x" * 30_000} for i in range(100)]
    big = run_body(transcript=big_msgs)
    assert api.call("POST", "/api/results", big).status == 201
    t = api.call("GET", f"/api/runs/{big['runId']}/transcript").body
    assert t["truncated"] is True
    assert t["transcript"][0] == big_msgs[0] and t["transcript"][-1] == big_msgs[-1]
    assert any(m.get("truncated") for m in t["transcript"])
    assert len(json.dumps(t["transcript"])) < 2_200_000

    none = run_body()
    api.call("POST", "/api/results", none)
    assert api.call("GET", f"/api/runs/{none['runId']}/transcript").body["transcript"] is None


def test_failed_write_leaves_no_part_of_the_run(local):
    api = local()
    storage = api.app.storage
    trigger = ("CREATE TRIGGER fail_transcripts BEFORE INSERT ON transcripts "
               "BEGIN SELECT RAISE(ABORT, 'disk says no'); END")
    if isinstance(storage, SQLiteStorage):
        storage.raw_connection().execute(trigger)
    else:
        storage._db.conn.execute(trigger)
    body = run_body(batchId=uid("batch"), transcript=[{"role": "user", "content": "x"}])
    r = api.call("POST", "/api/results", body)
    assert r.status == 500 and r.body["error"] == "storage error"
    assert api.call("GET", f"/api/runs/{body['runId']}").status == 404
    assert api.call("GET", f"/api/batches/{body['batchId']}").status == 404
    assert api.call("GET", "/api/stats").body["totalRuns"] == 0


def test_stats_and_agent_stats_are_computed_from_runs(local):
    api = local()
    for agent, score, ok in (("echo", 0.0, False), ("oracle", 1.0, True), ("oracle", 0.5, False)):
        api.call("POST", "/api/results", run_body(agent=agent, totalScore=score, isSuccessful=ok,
                                                  weightedScore=score, batchId="b1"))
    s = api.call("GET", "/api/stats").body
    assert s == {"totalRuns": 3, "successfulRuns": 1, "avgScore": 0.5, "avgWeightedScore": 0.5,
                 "totalBatches": 1}
    agents = api.call("GET", "/api/stats/agents").body
    assert agents == [
        {"agent": "echo", "runs": 1, "successfulRuns": 0, "avgScore": 0.0, "minScore": 0.0, "maxScore": 0.0},
        {"agent": "oracle", "runs": 2, "successfulRuns": 1, "avgScore": 0.75, "minScore": 0.5, "maxScore": 1.0},
    ]


def test_a_retried_attempt_stays_listed_but_leaves_the_aggregates(api):
    batch_id = uid("batch")
    first = run_body(batchId=batch_id, status="error", failureClass="infra", totalScore=None, weightedScore=None,
                     isSuccessful=False, metadata={"iteration": 0})
    other = run_body(batchId=batch_id, agent="oracle", totalScore=0.5, isSuccessful=False, metadata={"iteration": 0})
    retry = run_body(batchId=batch_id, totalScore=1.0, isSuccessful=True,
                     metadata={"iteration": 0, "retryOf": first["runId"]})
    for body in (first, other, retry):
        assert api.call("POST", "/api/results", body).status == 201
    b = api.call("GET", f"/api/batches/{batch_id}").body
    assert (b["totalRuns"], b["successfulRuns"], b["avgScore"]) == (2, 1, pytest.approx(0.75))
    assert {r["runId"] for r in b["runs"]} == {first["runId"], other["runId"], retry["runId"]}
    by_agent = {row["key"]: row for row in b["breakdowns"]["agent"]}
    assert by_agent["echo"]["runs"] == 1 and by_agent["echo"]["successfulRuns"] == 1
    assert {r["runId"]: r["status"] for r in b["runs"]}[first["runId"]] == "error"


def test_stats_leave_out_retried_attempts(local):
    api = local()
    first = run_body(status="error", failureClass="harness", totalScore=None, weightedScore=None, batchId="b1")
    api.call("POST", "/api/results", first)
    api.call("POST", "/api/results", run_body(totalScore=1.0, weightedScore=1.0, isSuccessful=True, batchId="b1",
                                              metadata={"retryOf": first["runId"]}))
    assert api.call("GET", "/api/stats").body["totalRuns"] == 1
    assert [a["runs"] for a in api.call("GET", "/api/stats/agents").body] == [1]
    assert len(api.call("GET", "/api/runs", body=None).body) == 2


def test_the_retries_migration_fills_retry_of_for_runs_stored_before_it(tmp_path):
    early = tmp_path / "early"
    early.mkdir()
    files = migration_files()
    for name in files[:files.index("0003_retries.sql")]:
        (early / name).write_text((Path(MIGRATIONS_DIR) / name).read_text())
    db = str(tmp_path / "bench.db")
    apply_migrations(SQLiteStorage(db), str(early))
    with sqlite3.connect(db) as conn:  # rows as the code before the migration wrote them
        conn.execute("INSERT INTO batches (batch_id, created_at, metadata) VALUES ('b1', 1, '{}')")
        for run_id, status, meta in (("r1", "error", "{}"), ("r2", "completed", '{"retryOf": "r1"}'),
                                     ("r3", "completed", '{"retryOf": 7}')):
            conn.execute("INSERT INTO runs (run_id, batch_id, suite, scenario, tier, agent, status, metadata, "
                         "content_hash, created_at) VALUES (?, 'b1', 's', 'x', 'L1', 'echo', ?, ?, 'h', 1)",
                         (run_id, status, meta))
    storage = SQLiteStorage(db)
    assert apply_migrations(storage) == files[files.index("0003_retries.sql"):]
    api = CoreApi(WorkerApp(storage, WorkerConfig(api_key=KEY)), "sqlite")
    assert api.call("GET", "/api/batches/b1").body["totalRuns"] == 2  # r1 was redone by r2
    with sqlite3.connect(db) as conn:
        assert dict(conn.execute("SELECT run_id, retry_of FROM runs").fetchall()) == {"r1": None, "r2": "r1", "r3": None}


# ------------------------------------------------------------------------ auth and CORS

def test_write_without_authorization_header_is_401(api):
    r = api.call("POST", "/api/results", run_body(), auth=False)
    assert r.status == 401 and r.body["error"] == "missing credentials"
    assert r.headers.get("www-authenticate") == "Bearer"


def test_write_with_wrong_key_is_403_and_stores_nothing(api):
    body = run_body()
    r = api.call("POST", "/api/results", body, headers={"authorization": "Bearer nope"})
    assert r.status == 403 and r.body["error"] == "invalid API key"
    assert api.call("GET", f"/api/runs/{body['runId']}").status == 404


def test_malformed_authorization_header_is_401(api):
    r = api.call("POST", "/api/results", run_body(), headers={"authorization": f"Basic {KEY}"})
    assert r.status == 401


def test_worker_without_configured_key_refuses_every_write(local):
    api = local(WorkerConfig(api_key=None))
    for key in ("", "anything", KEY):
        r = api.call("POST", "/api/results", run_body(), headers={"authorization": f"Bearer {key}"})
        assert r.status == 403 and r.body["error"] == "writes are disabled"
    assert api.call("GET", "/api/stats").body["totalRuns"] == 0
    assert api.call("GET", "/health").status == 200


def test_cors_headers_only_for_allowed_origins(api):
    ok = api.call("GET", "/health", headers={"origin": ORIGIN})
    assert ok.headers.get("access-control-allow-origin") == ORIGIN
    assert "x-next-cursor" in ok.headers.get("access-control-expose-headers", "").lower()
    bad = api.call("GET", "/health", headers={"origin": "https://evil.example"})
    assert "access-control-allow-origin" not in bad.headers
    pre = api.call("OPTIONS", "/api/results", headers={"origin": ORIGIN,
                                                        "access-control-request-method": "POST"})
    assert pre.status == 204 and "POST" in pre.headers["access-control-allow-methods"]
    assert "authorization" in pre.headers["access-control-allow-headers"].lower()
    denied = api.call("OPTIONS", "/api/results", headers={"origin": "https://evil.example"})
    assert denied.status == 403


def test_wildcard_origin_allows_any_origin(local):
    api = local(WorkerConfig(api_key=KEY, allowed_origins=("*",)))
    r = api.call("GET", "/api/stats", headers={"origin": "https://any.example"})
    assert r.headers["access-control-allow-origin"] == "https://any.example"


# ------------------------------------------------------------------------- bad requests

def test_body_over_the_size_cap_is_413(api):
    big = b'{"runId":"' + b"x" * (8 * 1024 * 1024 + 10) + b'"}'
    r = api.call("POST", "/api/results", raw=big)
    assert r.status == 413


def test_declared_length_over_cap_is_413_before_parsing(local):
    api = local(WorkerConfig(api_key=KEY, max_body_bytes=1000))
    r = api.call("POST", "/api/results", raw=b"{}", headers={"content-length": "5000"})
    assert r.status == 413 and r.body["error"] == "body too large"


@pytest.mark.parametrize("raw, error", [
    (b"{not json", "invalid JSON"),
    (b"", "empty body"),
    (b"\xff\xfe", "body is not UTF-8"),
    (b"[1, 2]", "body must be a JSON object"),
    (b'{"runId": NaN}', "invalid JSON"),
    (b'{"a":' * 40 + b"1" + b"}" * 40, "JSON nested too deeply"),
])
def test_malformed_bodies_are_400_with_a_reason(api, raw, error):
    r = api.call("POST", "/api/results", raw=raw)
    assert r.status == 400 and r.body["error"] == error and "details" in r.body



def _depth_by_tokens(text: str, limit: int) -> bool:
    """The depth check as a plain token walk (strings skipped whole): what json_too_deep means."""
    depth = 0
    for match in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', text):
        ch = match.group()
        if ch in "[{":
            depth += 1
            if depth > limit:
                return True
        elif ch in "]}":
            depth -= 1
    return False


def test_the_depth_check_agrees_with_a_token_walk_on_random_texts():
    """Brackets, quotes, escapes and letters in random order (unbalanced, unterminated strings,
    brackets inside strings): the check answers as the plain walk does, at the limit and past it."""
    import random

    from worker.schema import json_too_deep

    rng = random.Random(7)
    alphabet = ['[', ']', '{', '}', '"', '\\', 'a', ':', ',', '[', '{', '\n']
    seen = set()
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        limit = rng.randint(1, 6)
        expected = _depth_by_tokens(text, limit)
        assert json_too_deep(text, limit) == expected, (text, limit)
        seen.add(expected)
    assert seen == {True, False}
    deep = '{"a":' * 33 + '"x"' + "}" * 33
    assert json_too_deep(deep) and not json_too_deep('{"a":' * 32 + '"x"' + "}" * 32)
    assert not json_too_deep('{"a": "' + "[" * 100 + '"}')  # brackets inside a string do not count

@pytest.mark.parametrize("change, field", [
    ({"suite": None}, "suite"),
    ({"totalScore": "high"}, "totalScore"),
    ({"totalScore": 1.5}, "totalScore"),
    ({"status": "exploded"}, "status"),
    ({"failureClass": "cosmic"}, "failureClass"),
    ({"isSuccessful": "yes"}, "isSuccessful"),
    ({"runId": " padded"}, "runId"),
    ({"runId": "line\nbreak"}, "runId"),
    ({"runId": "x" * 129}, "runId"),
    ({"evaluations": [{"score": 1}]}, "evaluations[0].evaluatorName"),
    ({"telemetry": {"tokensIn": -1}}, "telemetry.tokensIn"),
    ({"telemetry": {"latenciesMs": ["fast"]}}, "telemetry.latenciesMs[0]"),
    ({"metadata": [1]}, "metadata"),
    ({"agent": "a" * 201}, "agent"),
])
def test_invalid_run_fields_are_400_naming_the_field(api, change, field):
    body = run_body(**change)
    r = api.call("POST", "/api/results", body)
    assert r.status == 400 and field in r.body["error"], r.body
    from urllib.parse import quote

    assert api.call("GET", f"/api/runs/{quote(str(body['runId']), safe='')}").status == 404


def test_user_chosen_ids_with_spaces_and_slashes_work_in_paths(api):
    from urllib.parse import quote

    batch_id = f"baseline run/{uid('v')} é"
    body = run_body(batchId=batch_id, runId=f"run one/{uid()}")
    assert api.call("POST", "/api/results", body).status == 201
    assert api.call("GET", f"/api/runs/{quote(body['runId'], safe='')}").body["run"]["batchId"] == batch_id
    assert api.call("GET", f"/api/batches/{quote(batch_id, safe='')}").body["totalRuns"] == 1


def test_unknown_route_is_404_and_wrong_method_is_405(api):
    r = api.call("GET", "/api/nothing")
    assert r.status == 404 and r.body["error"] == "not found"
    assert api.call("GET", f"/api/runs/{uid()}").status == 404
    assert api.call("GET", f"/api/batches/{uid('batch')}").status == 404
    m = api.call("DELETE", "/api/runs")
    assert m.status == 405 and "GET" in m.headers["allow"]
    assert api.call("GET", "/api/results").status == 405
    assert api.call("PUT", "/api/results/batch", auth=False).status == 405


def test_bad_query_parameters_are_400(api):
    assert api.call("GET", "/api/runs?colour=blue").status == 400
    assert api.call("GET", "/api/runs?limit=zero").status == 400
    assert api.call("GET", "/api/runs?limit=0").status == 400
    assert api.call("GET", "/api/runs?cursor=!!notacursor").status == 400
    assert api.call("GET", "/api/runs?specialistEnabled=maybe").status == 400
    assert api.call("GET", "/api/batches?suite=x").status == 400


# -------------------------------------------------------------------------- D1 contract

def test_fake_d1_refuses_what_d1_refuses():
    db = FakeD1()

    async def go() -> None:
        with pytest.raises(FakeD1Error, match="too many SQL variables"):
            await db.prepare("SELECT " + ", ".join("?" * 101)).bind(*range(101)).all()
        with pytest.raises(FakeD1Error, match="not authorized"):
            await db.prepare("BEGIN TRANSACTION").run()
        with pytest.raises(FakeD1Error, match="undefined"):
            db.prepare("SELECT ?").bind(None)
        row = await db.prepare("SELECT 2.0 AS x").first()
        assert row == {"x": 2} and isinstance(row["x"], int)

    asyncio.run(go())


def test_d1_backend_writes_null_without_binding_none():
    storage = D1Storage(FakeD1())

    async def go() -> Any:
        await storage.run("INSERT INTO batches (batch_id, created_at, completed_at, metadata) "
                          "VALUES (?, ?, ?, ?)", ("b", 1, None, "{}"))
        return await storage.first("SELECT completed_at FROM batches WHERE batch_id = ?", ("b",))

    assert asyncio.run(go()) == {"completed_at": None}


def test_every_statement_the_core_sends_stays_within_d1_limits(tmp_path):
    fake = FakeD1()
    api = CoreApi(WorkerApp(D1Storage(fake), WorkerConfig(api_key=KEY)), "fake_d1")
    body = run_body(batchId="b", evaluations=[{"evaluatorName": f"e{i}", "score": 0.1} for i in range(120)],
                    transcript=[{"role": "tool", "content": "y" * 20_000} for _ in range(40)])
    assert api.call("POST", "/api/results", body).status == 201
    for path in ("/api/runs?batchId=b", "/api/batches", "/api/batches/b", "/api/stats",
                 "/api/stats/agents", f"/api/runs/{body['runId']}/transcript"):
        assert api.call("GET", path).status == 200
    assert max(len(p) for _, p in fake.executed) <= 100
    assert max(len(s.encode()) for s, _ in fake.executed) < 100_000
    assert not any(re.match(r"\s*BEGIN", s, re.I) for s, _ in fake.executed)


# ------------------------------------------------------------------------------- OpenAPI

def test_openapi_lists_exactly_the_routes_that_exist(api):
    doc = api.call("GET", "/openapi.json").body
    documented = {(path, method.upper()) for path, ops in doc["paths"].items() for method in ops}
    served = {(pattern, method) for pattern, method, _ in ROUTES}
    assert documented == served


def test_responses_match_the_openapi_schemas(api):
    jsonschema = pytest.importorskip("jsonschema")
    doc = api.call("GET", "/openapi.json").body

    def check(path: str, method: str, status: int, body: Any) -> None:
        op = doc["paths"][path][method.lower()]
        schema = op["responses"][str(status)]["content"]["application/json"]["schema"]
        jsonschema.validate(body, {**schema, "components": doc["components"]})

    batch_id = uid("batch")
    run = run_body(batchId=batch_id, transcript=[{"role": "user", "content": "hi"}])
    posted = api.call("POST", "/api/results", run)
    check("/api/results", "POST", 201, posted.body)
    check("/api/results", "POST", 200, api.call("POST", "/api/results", run).body)
    check("/api/results", "POST", 409, api.call("POST", "/api/results", dict(run, tier="L9")).body)
    check("/api/results", "POST", 400, api.call("POST", "/api/results", {"x": 1}).body)
    check("/api/results/batch", "POST", 200,
          api.call("POST", "/api/results/batch", {"batchId": batch_id, "completedAt": 5}).body)
    rid = run["runId"]
    for path, concrete in (
        ("/health", "/health"), ("/api/runs", "/api/runs"),
        ("/api/runs/{runId}", f"/api/runs/{rid}"),
        ("/api/runs/{runId}/evaluations", f"/api/runs/{rid}/evaluations"),
        ("/api/runs/{runId}/telemetry", f"/api/runs/{rid}/telemetry"),
        ("/api/runs/{runId}/transcript", f"/api/runs/{rid}/transcript"),
        ("/api/batches", "/api/batches"), ("/api/batches/{batchId}", f"/api/batches/{batch_id}"),
        ("/api/stats", "/api/stats"), ("/api/stats/agents", "/api/stats/agents"),
    ):
        r = api.call("GET", concrete)
        assert r.status == 200, (concrete, r.body)
        check(path, "GET", 200, r.body)
    check("/api/runs/{runId}", "GET", 404, api.call("GET", f"/api/runs/{uid()}").body)


def test_run_post_schema_agrees_with_validation(api):
    jsonschema = pytest.importorskip("jsonschema")
    doc = api.call("GET", "/openapi.json").body
    schema = {"$ref": "#/components/schemas/RunPost", "components": doc["components"]}
    good = run_body()
    jsonschema.validate(good, schema)
    assert api.call("POST", "/api/results", good).status == 201
    for bad in (run_body(totalScore=2), run_body(status="nope"), {"runId": uid()}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)
        assert api.call("POST", "/api/results", bad).status == 400


@pytest.mark.integration
def test_harness_client_round_trip_on_workerd(workerd_api, tmp_path):
    from harness.results import BatchRecord, EvaluationRecord, RunRecord, Telemetry, open_client

    batch_id = uid("batch")
    run = RunRecord(uid(), "py-bugs", "slugify", "L1", "oracle", batch_id=batch_id, model="m",
                    total_score=1.0, is_successful=True, config_hash="c",
                    evaluations=[EvaluationRecord("validation", 1.0, details="ok")],
                    telemetry=Telemetry(tokens_in=3, latencies_ms=[1.0]),
                    transcript=[{"role": "user", "content": "go"}])
    url = str(workerd_api.client.base_url).rstrip("/")
    with open_client(worker_url=url, api_key=KEY, spool_dir=str(tmp_path / "spool")) as client:
        assert client.post_run(run) == "stored"
        assert client.post_run(run) == "duplicate"
        client.post_batch(BatchRecord(batch_id, completed_at=7))
        assert client.get_run(run.run_id) == RunRecord(**{**run.__dict__, "transcript": None})
        assert client.get_transcript(run.run_id) == run.transcript
        batch = client.get_batch(batch_id)
        assert (batch.total_runs, batch.completed_at, batch.avg_score) == (1, 7, 1.0)
        assert [r.run_id for r in client.list_runs(batch_id=batch_id)] == [run.run_id]
