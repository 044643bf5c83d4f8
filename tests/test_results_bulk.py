"""POST /api/results/bulk and the clients that post through it.

The route runs on every storage backend (SQLite, the fake D1 binding, workerd with local D1)
through the fixtures of ``support.worker``; the client runs over the in-process transport,
wrapped where a test needs a worker that is down, older, failing or not a worker at all.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any, Callable, Sequence

import pytest

from harness.results import NotAWorkerError, ResultsError, RunRecord, open_client
from harness.results.transport import TransportResponse, TransportUnavailable
from harness.results.worker_client import BULK_PATH
from support.results import make_run
from support.worker import api, local, local_api, run_body, uid  # noqa: F401 - api, local: fixtures
from support.workerd_fixture import KEY
from worker import store as worker_store
from worker.config import MAX_BULK_RUNS
from worker.storage import Statement, StorageError


def bulk(api, runs: list[Any], **kw: Any):
    return api.call("POST", "/api/results/bulk", {"runs": runs}, **kw)


def statuses(resp) -> list[str]:
    return [r["status"] for r in resp.body["results"]]


# ------------------------------------------------------------------------- the route

def test_mixed_request_answers_each_run_in_order_and_stores_only_the_good_ones(api):
    batch_id = uid("batch")
    existing = run_body(batchId=batch_id, scenario="existing")
    taken = run_body(batchId=batch_id, scenario="taken")
    for body in (existing, taken):
        assert api.call("POST", "/api/results", body).status == 201
    first = run_body(batchId=batch_id, scenario="first", transcript=[{"role": "user", "content": "go"}],
                     evaluations=[{"evaluatorName": "validation", "score": 1.0, "maxScore": 1.0,
                                   "status": "ok", "details": "exit 0"},
                                  {"evaluatorName": "llm_judge", "score": 0.0, "maxScore": 1.0,
                                   "status": "skipped", "details": "no key"}])
    second = run_body(batchId=batch_id, scenario="second", totalScore=1.0, weightedScore=1.0, isSuccessful=True,
                      telemetry={"toolCalls": 9, "tokensIn": 11, "tokensOut": 12, "turns": 2,
                                 "latenciesMs": [5.0], "durationMs": 42.0})
    invalid_batch = uid("batch")
    invalid = run_body(batchId=invalid_batch, suite=None)
    conflicting = dict(taken, totalScore=0.9)

    r = bulk(api, [first, invalid, existing, second, conflicting])
    assert r.status == 200, r.body
    assert statuses(r) == ["stored", "rejected", "duplicate", "stored", "rejected"]
    assert (r.body["success"], r.body["stored"], r.body["duplicate"], r.body["rejected"]) == (False, 2, 1, 2)
    results = r.body["results"]
    assert [x["runId"] for x in results] == [b["runId"] for b in (first, invalid, existing, second, conflicting)]
    assert results[0] == {"runId": first["runId"], "batchId": batch_id, "status": "stored"}
    assert results[2] == {"runId": existing["runId"], "batchId": batch_id, "status": "duplicate"}
    assert results[1]["httpStatus"] == 400 and "runs[1].suite" in results[1]["error"] and "details" in results[1]
    assert results[4]["httpStatus"] == 409 and results[4]["error"] == "run already stored with different content"

    got = api.call("GET", f"/api/runs/{first['runId']}").body
    assert got["run"]["scenario"] == "first" and got["run"]["batchId"] == batch_id
    assert [(e["evaluatorName"], e["status"], e["details"]) for e in got["evaluations"]] == [
        ("validation", "ok", "exit 0"), ("llm_judge", "skipped", "no key")]
    assert got["telemetry"]["tokensIn"] == 100 and got["telemetry"]["latenciesMs"] == [100.0, 200.0]
    assert api.call("GET", f"/api/runs/{first['runId']}/transcript").body["transcript"] == first["transcript"]
    got = api.call("GET", f"/api/runs/{second['runId']}").body
    assert got["run"]["isSuccessful"] is True and got["run"]["totalScore"] == 1.0
    assert got["telemetry"]["toolCalls"] == 9 and got["telemetry"]["durationMs"] == 42.0
    assert [e["evaluatorName"] for e in got["evaluations"]] == ["validation"]

    # The invalid run left nothing, not even its batch; the conflicting one kept the stored content.
    assert api.call("GET", f"/api/runs/{invalid['runId']}").status == 404
    assert api.call("GET", f"/api/batches/{invalid_batch}").status == 404
    assert api.call("GET", f"/api/runs/{taken['runId']}").body["run"]["totalScore"] == 0.5
    batch = api.call("GET", f"/api/batches/{batch_id}").body
    assert batch["totalRuns"] == 4
    assert {x["runId"] for x in batch["runs"]} == {b["runId"] for b in (existing, taken, first, second)}


def test_new_runs_create_their_batch_and_runs_without_one_answer_a_null_batch_id(api):
    batch_id = uid("batch")
    runs = [run_body(batchId=batch_id, scenario=f"s{i}") for i in range(3)] + [run_body()]
    r = bulk(api, runs)
    assert r.status == 200 and r.body["success"] is True and r.body["stored"] == 4
    assert [x["batchId"] for x in r.body["results"]] == [batch_id] * 3 + [None]
    batch = api.call("GET", f"/api/batches/{batch_id}")
    assert batch.status == 200 and batch.body["totalRuns"] == 3
    assert api.call("GET", f"/api/runs/{runs[3]['runId']}").body["run"]["batchId"] is None


def test_a_run_repeated_within_one_request_is_stored_once(api):
    batch_id = uid("batch")
    run = run_body(batchId=batch_id)
    changed = dict(run, totalScore=0.9)
    r = bulk(api, [run, run, changed])
    assert r.status == 200
    assert statuses(r) == ["stored", "duplicate", "rejected"]
    assert r.body["results"][2]["httpStatus"] == 409
    assert [x["runId"] for x in r.body["results"]] == [run["runId"]] * 3
    batch = api.call("GET", f"/api/batches/{batch_id}").body
    assert batch["totalRuns"] == 1 and batch["runs"][0]["totalScore"] == 0.5
    assert len(api.call("GET", f"/api/runs/{run['runId']}/evaluations").body) == 1


def test_the_largest_request_is_stored_whole(api):
    batch_id = uid("batch")
    runs = [run_body(batchId=batch_id, scenario=f"s{i}") for i in range(MAX_BULK_RUNS)]
    r = bulk(api, runs)
    assert r.status == 200 and (r.body["stored"], r.body["rejected"]) == (MAX_BULK_RUNS, 0)
    assert api.call("GET", f"/api/batches/{batch_id}").body["totalRuns"] == MAX_BULK_RUNS


def test_more_runs_than_the_limit_is_413_and_stores_nothing(api):
    batch_id = uid("batch")
    runs = [run_body(batchId=batch_id) for _ in range(MAX_BULK_RUNS + 1)]
    r = bulk(api, runs)
    assert r.status == 413 and r.body["error"] == "too many runs" and "51" in r.body["details"]
    assert api.call("GET", f"/api/batches/{batch_id}").status == 404
    assert api.call("GET", f"/api/runs/{runs[0]['runId']}").status == 404


@pytest.mark.parametrize("body", [{}, {"runs": None}, {"runs": {"runId": "x"}}, {"runs": "x"}, {"run": []}])
def test_a_body_without_a_runs_list_is_400(api, body):
    r = api.call("POST", "/api/results/bulk", body)
    assert r.status == 400 and r.body["error"] == "missing field: runs"


def test_an_empty_list_stores_nothing_and_succeeds(api):
    r = bulk(api, [])
    assert r.status == 200
    assert r.body == {"success": True, "stored": 0, "duplicate": 0, "rejected": 0, "results": []}


def test_items_that_are_not_runs_are_rejected_one_by_one(api):
    good = run_body()
    r = bulk(api, [7, good, {"runId": uid()}])
    assert statuses(r) == ["rejected", "stored", "rejected"]
    assert r.body["results"][0]["runId"] is None and "runs[0]" in r.body["results"][0]["error"]
    assert "runs[2].suite" in r.body["results"][2]["error"]
    assert api.call("GET", f"/api/runs/{good['runId']}").status == 200


def test_bulk_writes_need_the_key_as_single_writes_do(api):
    runs = [run_body(), run_body()]
    r = bulk(api, runs, auth=False)
    assert r.status == 401 and r.body["error"] == "missing credentials"
    assert r.headers.get("www-authenticate") == "Bearer"
    r = bulk(api, runs, headers={"authorization": "Bearer nope"})
    assert r.status == 403
    for body in runs:
        assert api.call("GET", f"/api/runs/{body['runId']}").status == 404


def test_bulk_answers_match_the_openapi_schema(api):
    jsonschema = pytest.importorskip("jsonschema")
    doc = api.call("GET", "/openapi.json").body
    op = doc["paths"]["/api/results/bulk"]["post"]

    def check(status: int, body: Any) -> None:
        schema = op["responses"][str(status)]["content"]["application/json"]["schema"]
        jsonschema.validate(body, {**schema, "components": doc["components"]})

    run = run_body(batchId=uid("batch"))
    request = {"runs": [run, run_body(suite=None)]}
    jsonschema.validate({"runs": [run]}, {**op["requestBody"]["content"]["application/json"]["schema"],
                                          "components": doc["components"]})
    check(200, api.call("POST", "/api/results/bulk", request).body)
    check(200, api.call("POST", "/api/results/bulk", {"runs": [run, dict(run, tier="L9")]}).body)
    check(400, api.call("POST", "/api/results/bulk", {}).body)
    check(413, bulk(api, [run] * (MAX_BULK_RUNS + 1)).body)


# ------------------------------------------------------------------- atomic writes

class FailingBatch:
    """The backend, with a ``batch`` that fails: before writing anything, or after running
    every statement (the real backend rolls the whole batch back)."""

    def __init__(self, inner: Any, when: str) -> None:
        self.inner, self.when, self.batches = inner, when, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def batch(self, statements: Sequence[Statement]) -> Any:
        self.batches += 1
        if self.when == "before":
            raise StorageError("disk I/O error")
        return await self.inner.batch([*statements, Statement("SELECT * FROM no_such_table")])


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_failed_bulk_write_stores_none_of_the_runs(local, when):
    api = local()
    stored = run_body()
    assert api.call("POST", "/api/results", stored).status == 201
    api.app.storage = FailingBatch(api.app.storage, when)
    batch_id = uid("batch")
    runs = [run_body(batchId=batch_id, scenario=f"s{i}", transcript=[{"role": "user", "content": "x"}])
            for i in range(5)]
    r = bulk(api, [*runs, stored])
    assert r.status == 500 and r.body["error"] == "storage error"
    assert api.app.storage.batches == 1  # one write for the whole request
    for body in runs:
        assert api.call("GET", f"/api/runs/{body['runId']}").status == 404
    assert api.call("GET", f"/api/batches/{batch_id}").status == 404
    assert api.call("GET", "/api/stats").body["totalRuns"] == 1


class RacingWriter:
    """The backend, where another request stores ``run`` just before this request's write."""

    def __init__(self, inner: Any, run: dict[str, Any]) -> None:
        self.inner, self.run, self.raced = inner, run, False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def batch(self, statements: Sequence[Statement]) -> Any:
        if not self.raced:
            self.raced = True
            from worker.schema import RUN_FIELDS, validate_object

            await worker_store.store_run(self.inner, validate_object(RUN_FIELDS, self.run), 1)
        return await self.inner.batch(statements)


@pytest.mark.parametrize("same_content", [True, False])
def test_a_run_stored_by_another_writer_meanwhile_does_not_fail_the_others(local, same_content):
    api = local()
    batch_id = uid("batch")
    runs = [run_body(batchId=batch_id, scenario=f"s{i}") for i in range(4)]
    other = runs[2] if same_content else dict(runs[2], totalScore=0.1)
    api.app.storage = RacingWriter(api.app.storage, other)
    r = bulk(api, runs)
    assert r.status == 200
    assert statuses(r) == ["stored", "stored", "duplicate" if same_content else "rejected", "stored"]
    assert api.call("GET", f"/api/batches/{batch_id}").body["totalRuns"] == 4
    assert api.call("GET", f"/api/runs/{runs[2]['runId']}").body["run"]["totalScore"] == other["totalScore"]


@pytest.mark.parametrize("kind", ["sqlite", "fake_d1"])
def test_a_run_the_database_refuses_leaves_no_run_of_its_request(tmp_path, kind):
    api = local_api(kind, tmp_path)
    bad = uid()
    trigger = (f"CREATE TRIGGER refuse_one BEFORE INSERT ON telemetry WHEN NEW.run_id = '{bad}' "
               "BEGIN SELECT RAISE(ABORT, 'refused by the database'); END")
    storage = api.app.storage
    (storage.raw_connection() if kind == "sqlite" else storage._db.conn).execute(trigger)
    runs = [run_body(), run_body(), run_body(runId=bad)]
    r = bulk(api, runs)
    assert r.status == 500 and r.body["error"] == "storage error"
    assert [api.call("GET", f"/api/runs/{b['runId']}").status for b in runs] == [404, 404, 404]


# --------------------------------------------------------------------------- the client

class Wrapped:
    """A transport that sends through ``inner`` unless ``answer(method, path, body)`` returns a
    response (or raises); it records every request as ``(method, path, runs in the body)``."""

    def __init__(self, inner: Any, answer: Callable[..., TransportResponse | None] | None = None) -> None:
        self.inner, self.answer = inner, answer
        self.description, self.destination = inner.description, inner.destination
        self.sent: list[tuple[str, str, int]] = []

    def request(self, method: str, path: str, *, query: dict[str, Any] | None = None,
                body: Any = None) -> TransportResponse:
        runs = len(body["runs"]) if isinstance(body, dict) and isinstance(body.get("runs"), list) else 1
        self.sent.append((method, path, runs))
        if self.answer is not None:
            resp = self.answer(method, path, body)
            if resp is not None:
                return resp
        return self.inner.request(method, path, query=query, body=body)

    def posts(self, path: str) -> list[int]:
        return [n for m, p, n in self.sent if m == "POST" and p == path]

    def close(self) -> None:
        self.inner.close()


@pytest.fixture
def client(tmp_path: Path):
    c = open_client(db_path=str(tmp_path / "bench.db"), spool_dir=str(tmp_path / "spool"))
    c.transport = Wrapped(c.transport)
    yield c
    c.close()


def answering(client, answer: Callable[..., TransportResponse | None]) -> Wrapped:
    client.transport.answer = answer
    return client.transport


def test_post_runs_stores_in_requests_of_fifty_and_a_repost_is_all_duplicates(client):
    runs = [make_run("batch_bulk_client") for _ in range(120)]
    assert client.post_runs(runs) == ["stored"] * 120
    assert client.transport.posts(BULK_PATH) == [50, 50, 20]
    assert client.transport.posts("/api/results") == []
    assert client.get_batch("batch_bulk_client").total_runs == 120
    got = client.get_run(runs[77].run_id)
    assert got == RunRecord(**{**runs[77].__dict__, "transcript": None})
    assert client.get_transcript(runs[77].run_id) == runs[77].transcript

    assert client.post_runs(runs) == ["duplicate"] * 120
    assert client.transport.posts(BULK_PATH) == [50, 50, 20] * 2
    assert client.get_batch("batch_bulk_client").total_runs == 120
    assert client.spool.count() == 0 and client.spool.rejected_count() == 0


def test_a_refused_run_comes_back_as_its_error_and_is_kept_in_rejected(client):
    stored = make_run()
    assert client.post_runs([stored, make_run()]) == ["stored", "stored"]
    conflicting = make_run(run_id=stored.run_id, total_score=0.1)
    invalid = make_run(total_score=3.0)
    fresh = [make_run(), make_run()]
    outcomes = client.post_runs([fresh[0], conflicting, invalid, fresh[1]])
    assert outcomes[0] == outcomes[3] == "stored"
    assert isinstance(outcomes[1], ResultsError) and "409" in str(outcomes[1]) and stored.run_id in str(outcomes[1])
    assert isinstance(outcomes[2], ResultsError) and "runs[2].totalScore" in str(outcomes[2])
    assert "rejected" in str(outcomes[1])  # names where the body is kept
    assert client.spool.rejected_count() == 2 and client.spool.count() == 0
    kept = [json.loads(Path(client.spool.rejected_dir, n).read_text())
            for n in sorted(os.listdir(client.spool.rejected_dir))]
    assert sorted(k["body"]["runId"] for k in kept) == sorted([stored.run_id, invalid.run_id])
    assert all(k["kind"] == "run" and k["error"] for k in kept)
    assert client.get_run(stored.run_id).total_score == 0.75
    assert client.get_run(invalid.run_id) is None
    assert all(client.get_run(r.run_id) is not None for r in fresh)


def test_an_older_worker_without_the_bulk_route_gets_the_runs_one_by_one(client):
    transport = answering(client, lambda method, path, body: TransportResponse(
        404, {"error": "not found", "details": f"no route {path}"}) if path == BULK_PATH else None)
    runs = [make_run("batch_old_worker") for _ in range(7)]
    assert client.post_runs(runs) == ["stored"] * 7
    assert transport.posts(BULK_PATH) == [7]
    assert transport.posts("/api/results") == [1] * 7
    more = [make_run("batch_old_worker") for _ in range(3)]
    assert client.post_runs([*runs[:2], *more]) == ["duplicate", "duplicate", "stored", "stored", "stored"]
    assert transport.posts(BULK_PATH) == [7]  # not asked again
    assert client.get_batch("batch_old_worker").total_runs == 10
    assert client.spool.count() == 0 and client.spool.rejected_count() == 0


def test_a_worker_answering_405_on_the_bulk_route_is_also_an_older_worker(client):
    transport = answering(client, lambda method, path, body: TransportResponse(
        405, {"error": "method not allowed"}, {"allow": "GET"}) if path == BULK_PATH else None)
    assert client.post_runs([make_run(), make_run()]) == ["stored", "stored"]
    assert transport.posts("/api/results") == [1, 1]


def test_unreachable_worker_spools_every_run_then_sync_delivers_them(client):
    down = True

    def answer(method, path, body):
        if down:
            raise TransportUnavailable("connection refused")
        return None

    transport = answering(client, answer)
    runs = [make_run("batch_spooled") for _ in range(60)]
    assert client.post_runs(runs) == ["spooled"] * 60
    pending = client.spool.pending(client.destination)
    assert len(pending) == 60 and {e.kind for e in pending} == {"run"}
    assert [e.key for e in pending] == [r.run_id for r in runs]
    assert all("connection refused" in e.reason for e in pending)

    down = False
    report = client.sync()
    assert (report.delivered, report.duplicates, report.remaining) == (60, 0, 0)
    assert client.spool.count() == 0
    assert client.get_batch("batch_spooled").total_runs == 60
    assert transport.posts("/api/results") == [1] * 60


def test_a_failing_worker_gets_the_runs_spooled_not_refused(client):
    answering(client, lambda method, path, body: TransportResponse(
        503, {"error": "storage error", "details": "disk full"}) if path.startswith("/api/results") else None)
    runs = [make_run() for _ in range(3)]
    assert client.post_runs(runs) == ["spooled"] * 3
    assert client.spool.count(client.destination) == 3 and client.spool.rejected_count() == 0
    assert "503" in client.last_spool_reason
    # One run was tried on its own after the bulk request failed; the others were not sent.
    assert client.transport.posts(BULK_PATH) == [3] and client.transport.posts("/api/results") == [1]


def test_runs_a_worker_cannot_store_in_bulk_are_stored_one_by_one(client):
    # A worker whose database refuses a write that large (a limit on statements per request)
    answering(client, lambda method, path, body: TransportResponse(
        500, {"error": "storage error", "details": "too many queries"}) if path == BULK_PATH else None)
    runs = [make_run() for _ in range(3)]
    assert client.post_runs(runs) == ["stored"] * 3
    assert client.spool.count(client.destination) == 0
    assert client.transport.posts("/api/results") == [1, 1, 1]


def test_a_bulk_answer_without_one_result_per_run_is_not_a_worker_and_the_runs_are_spooled(client):
    def answer(method, path, body):
        if path != BULK_PATH:
            return None
        return TransportResponse(200, {"success": True, "stored": 1, "duplicate": 0, "rejected": 0,
                                       "results": [{"runId": body["runs"][0]["runId"], "status": "stored"}]})

    answering(client, answer)
    runs = [make_run() for _ in range(4)]
    with pytest.raises(NotAWorkerError, match="without one result per run"):
        client.post_runs(runs)
    pending = client.spool.pending(client.destination)
    assert sorted(e.key for e in pending) == sorted(r.run_id for r in runs)
    assert {e.kind for e in pending} == {"run"} and client.spool.rejected_count() == 0


def test_a_result_that_does_not_name_its_run_keeps_every_unconfirmed_run(client):
    def answer(method, path, body):
        if path != BULK_PATH:
            return None
        resp = client.transport.inner.request(method, path, body=body)
        resp.body["results"][2]["runId"] = "run_someone_else"
        return resp

    answering(client, answer)
    runs = [make_run() for _ in range(60)]
    with pytest.raises(NotAWorkerError, match="without confirming"):
        client.post_runs(runs)
    # Runs 0 and 1 were confirmed; the rest of the first request and the whole second one
    # (never sent) are kept.
    assert client.transport.posts(BULK_PATH) == [50]
    assert sorted(e.key for e in client.spool.pending(client.destination)) == sorted(r.run_id for r in runs[2:])


def test_not_a_worker_while_posting_one_by_one_keeps_every_run(client):
    def answer(method, path, body):
        if path == BULK_PATH:
            return TransportResponse(404, {"error": "not found"})
        if method == "POST" and path == "/api/results":
            return TransportResponse(201, {"success": True})  # stores nothing, names nothing
        return None

    answering(client, answer)
    runs = [make_run() for _ in range(5)]
    with pytest.raises(NotAWorkerError):
        client.post_runs(runs)
    assert sorted(e.key for e in client.spool.pending(client.destination)) == sorted(r.run_id for r in runs)


def test_the_default_post_runs_posts_one_by_one_and_returns_refusals():
    from harness.testing.results import MemoryResults

    class Refusing(MemoryResults):
        def post_run(self, run):
            if run.total_score is not None and run.total_score > 1:
                raise ResultsError(f"refused run {run.run_id}")
            return super().post_run(run)

    class NotAWorker(MemoryResults):
        def post_run(self, run):
            raise NotAWorkerError("that is a web server")

    client = Refusing()
    runs = [make_run(), make_run(total_score=3.0), make_run()]
    outcomes = client.post_runs(runs)
    assert outcomes[0] == outcomes[2] == "stored" and isinstance(outcomes[1], ResultsError)
    assert set(client.runs) == {runs[0].run_id, runs[2].run_id}
    with pytest.raises(NotAWorkerError):
        NotAWorker().post_runs(runs)


@pytest.mark.integration
def test_client_post_runs_over_http_on_workerd(workerd_api, tmp_path):
    batch_id = uid("batch")
    runs = [make_run(batch_id) for _ in range(60)]
    url = str(workerd_api.client.base_url).rstrip("/")
    with open_client(worker_url=url, api_key=KEY, spool_dir=str(tmp_path / "spool")) as client:
        assert client.post_runs(runs) == ["stored"] * 60
        assert client.post_runs(runs[:3]) == ["duplicate"] * 3
        assert client.get_batch(batch_id).total_runs == 60
        assert client.get_run(runs[59].run_id) == RunRecord(**{**runs[59].__dict__, "transcript": None})
        assert client.spool.count() == 0


# ------------------------------------------------------------- storing a dataset run

class OnlyPostRun:
    """A results client from before ``post_runs``: ``post_run`` and ``post_batch`` only."""

    def __init__(self, inner: Any, refuse: str | None = None) -> None:
        self.inner, self.refuse, self.posted = inner, refuse, 0

    def post_run(self, run: RunRecord):
        self.posted += 1
        if run.scenario == self.refuse:
            raise ResultsError(f"refused run {run.run_id}")
        return self.inner.post_run(run)

    def post_batch(self, batch):
        return self.inner.post_batch(batch)


def test_storing_a_dataset_run_with_a_client_without_post_runs_stores_every_record(tmp_path, monkeypatch):
    from harness.datasets.planning import prepare
    from harness.datasets.run import execute
    from harness.datasets.storing import store
    from harness.testing.mock_model import MockConfig, ThreadedMock
    from support.datasets import ANSWERS, options, targets_of, write_dataset
    from support.providers import KEY_VARS

    for name in [*KEY_VARS, "ZE_BENCHMARKS_JUDGE_MODEL"]:
        monkeypatch.delenv(name, raising=False)
    mock = ThreadedMock(MockConfig(delay_ms=1, answers=ANSWERS))
    try:
        opts = options(write_dataset(tmp_path / "d.json"), tmp_path / "out", targets_of(mock),
                       repeat=11, concurrency=16, batch_id="batch_only_post_run")
        result = asyncio.run(asyncio.wait_for(execute(prepare(opts)), 60))
    finally:
        mock.close()
    assert len(result.cells) == 55  # more than one chunk of STORE_CHUNK
    with open_client(db_path=str(tmp_path / "store.db"), spool_dir=str(tmp_path / "spool")) as inner:
        client = OnlyPostRun(inner, refuse="color")
        assert not hasattr(client, "post_runs")
        records = store(result, client)
        assert client.posted == len(records) == 55
        assert result.stored == 44 and len(result.store_errors) == 11
        assert all("ResultsError" in e for e in result.store_errors)
        runs = inner.list_runs(limit=100, batch_id="batch_only_post_run")
        assert len(runs) == 44 and "color" not in {r.scenario for r in runs}
        assert inner.get_batch("batch_only_post_run") is not None


# --------------------------------------------------------------------------- the worker's bulk size


def test_a_worker_can_take_fewer_runs_at_once_and_says_so_in_health(local):
    from worker.config import WorkerConfig

    api = local(WorkerConfig(api_key=KEY, max_bulk_runs=5))
    health = api.call("GET", "/health").body
    assert health["maxBulkRuns"] == 5
    assert bulk(api, [run_body() for _ in range(5)]).status == 200
    r = bulk(api, [run_body() for _ in range(6)])
    assert r.status == 413 and "at most 5" in r.body["details"]
    assert local().call("GET", "/health").body["maxBulkRuns"] == MAX_BULK_RUNS


@pytest.mark.parametrize("value, expected", [(None, MAX_BULK_RUNS), ("5", 5), (" 50 ", 50), ("1", 1)])
def test_max_bulk_runs_is_read_from_the_environment(value, expected):
    from worker.config import WorkerConfig

    env = {} if value is None else {"MAX_BULK_RUNS": value}
    assert WorkerConfig.from_env(env).max_bulk_runs == expected


@pytest.mark.parametrize("value", ["0", "51", "-3", "five", "2.5"])
def test_a_bad_max_bulk_runs_is_refused_naming_it(value):
    from worker.config import WorkerConfig

    with pytest.raises(ValueError, match="MAX_BULK_RUNS must be a whole number from 1 to 50"):
        WorkerConfig.from_env({"MAX_BULK_RUNS": value})


@pytest.mark.parametrize("advertised, sizes", [(7, [7, 7, 6]), (None, [20]), (500, [20]), (True, [20])])
def test_the_client_sends_as_many_runs_at_once_as_the_worker_takes(client, advertised, sizes):
    def answer(method, path, body):
        if path != "/health":
            return None
        health = {"status": "ok", "timestamp": "t", "service": "zebench-results", "apiVersion": 1}
        if advertised is not None:
            health["maxBulkRuns"] = advertised
        return TransportResponse(200, health)

    answering(client, answer)
    runs = [make_run() for _ in range(20)]
    assert client.post_runs(runs) == ["stored"] * 20
    assert client.transport.posts(BULK_PATH) == sizes
