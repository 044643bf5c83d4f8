"""Retries, the spool and ``bench sync``: nothing lost, nothing stored twice."""

from __future__ import annotations

import json
import os
import socket
import threading
from pathlib import Path

import httpx
import pytest
import respx
from click.testing import CliRunner

from harness.results import RunRecord, BatchRecord, Spool, new_run_id, open_client
from harness.results.http_transport import HttpTransport
from harness.results.transport import TransportUnavailable
from harness.results.worker_client import WorkerClient
from worker.config import WorkerConfig
from worker.devserver import make_server

KEY = "spool-key"
URL = "http://worker.test"


def run(**over) -> RunRecord:
    r = RunRecord(new_run_id(), "s", "x", "L1", "echo", batch_id="batch_spool", total_score=1.0)
    for k, v in over.items():
        setattr(r, k, v)
    return r


def mock_health(url: str = URL) -> None:
    """A respx route answering /health as a zebench results worker does."""
    respx.get(f"{url}/health").mock(return_value=httpx.Response(
        200, json={"status": "ok", "timestamp": "t", "service": "zebench-results", "apiVersion": 1}))


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``worker dev`` in a thread, restartable on the same port."""

    def __init__(self, db: str, port: int = 0) -> None:
        self.srv, self.worker = make_server("127.0.0.1", port, db, WorkerConfig(api_key=KEY))
        self.port = self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.srv.shutdown()
        self.srv.server_close()
        self.worker.close()


# ------------------------------------------------------------------------- HTTP retries

@respx.mock
def test_http_transport_retries_5xx_with_backoff_then_succeeds():
    route = respx.post(f"{URL}/api/results").mock(side_effect=[
        httpx.Response(503, json={"error": "busy"}),
        httpx.Response(500, json={"error": "oops"}),
        httpx.Response(201, json={"success": True, "runId": "r", "duplicate": False}),
    ])
    sleeps: list[float] = []
    t = HttpTransport(URL, KEY, retries=3, backoff_s=0.5, sleep=sleeps.append)
    resp = t.request("POST", "/api/results", body={"runId": "r"})
    assert resp.status == 201 and route.call_count == 3
    assert len(sleeps) == 2 and 0.25 <= sleeps[0] <= 0.5 and 0.5 <= sleeps[1] <= 1.0
    assert route.calls[0].request.headers["authorization"] == f"Bearer {KEY}"


@respx.mock
def test_http_transport_honours_retry_after_on_429():
    respx.get(f"{URL}/api/stats").mock(side_effect=[
        httpx.Response(429, headers={"Retry-After": "7"}),
        httpx.Response(200, json={"totalRuns": 0}),
    ])
    sleeps: list[float] = []
    t = HttpTransport(URL, None, retries=2, sleep=sleeps.append)
    assert t.request("GET", "/api/stats").body == {"totalRuns": 0}
    assert sleeps == [7.0]


@respx.mock
def test_http_transport_gives_up_after_retries_on_connection_errors():
    route = respx.post(f"{URL}/api/results").mock(side_effect=httpx.ConnectError("refused"))
    t = HttpTransport(URL, KEY, retries=2, sleep=lambda s: None)
    with pytest.raises(TransportUnavailable, match="3 attempts"):
        t.request("POST", "/api/results", body={})
    assert route.call_count == 3


@respx.mock
def test_http_transport_does_not_retry_client_errors():
    route = respx.post(f"{URL}/api/results").mock(return_value=httpx.Response(400, json={"error": "bad"}))
    t = HttpTransport(URL, KEY, retries=3, sleep=lambda s: pytest.fail("slept"))
    assert t.request("POST", "/api/results", body={}).status == 400 and route.call_count == 1


# -------------------------------------------------------------------------------- spool

def test_unreachable_worker_spools_runs_and_batches_durably(tmp_path):
    url = f"http://127.0.0.1:{_closed_port()}"
    with open_client(worker_url=url, api_key=KEY, spool_dir=str(tmp_path / "spool"), retries=0) as c:
        r = run()
        assert c.post_run(r) == "spooled"
        c.post_batch(BatchRecord("batch_spool", completed_at=5))
    files = sorted(os.listdir(tmp_path / "spool" / "pending"))
    assert len(files) == 2 and files[0].endswith(f"run-{r.run_id}.json") and "-batch-" in files[1]
    record = json.loads((tmp_path / "spool" / "pending" / files[0]).read_text())
    assert record["kind"] == "run" and record["body"]["runId"] == r.run_id and record["reason"]


def test_spooled_runs_are_delivered_when_the_next_client_opens(tmp_path):
    port = _closed_port()
    spool = str(tmp_path / "spool")
    url = f"http://127.0.0.1:{port}"
    runs = [run() for _ in range(5)]
    with open_client(worker_url=url, api_key=KEY, spool_dir=spool, retries=0) as c:
        assert [c.post_run(r) for r in runs] == ["spooled"] * 5
        c.post_batch(BatchRecord("batch_spool", completed_at=99))
    server = Server(str(tmp_path / "w.db"), port)
    try:
        with open_client(worker_url=url, api_key=KEY, spool_dir=spool, retries=0) as c:
            assert Spool(spool).count() == 0
            b = c.get_batch("batch_spool")
            assert b.total_runs == 5 and b.completed_at == 99
            assert {x.run_id for x in b.runs} == {r.run_id for r in runs}
    finally:
        server.stop()


def test_a_spooled_run_already_stored_is_not_stored_twice(tmp_path):
    server = Server(str(tmp_path / "w.db"))
    url = f"http://127.0.0.1:{server.port}"
    try:
        spool = Spool(str(tmp_path / "spool"))
        r = run()
        with open_client(worker_url=url, api_key=KEY, spool_dir=spool.directory, retries=0) as c:
            assert c.post_run(r) == "stored"
            # As if the process died after the worker stored the run but before the spool
            # file was removed: the same body is pending again.
            spool.add("run", r.to_wire(), "crash before delete", c.destination)
            report = c.sync()
            assert (report.delivered, report.duplicates, report.remaining) == (0, 1, 0)
            assert c.get_batch("batch_spool").total_runs == 1
    finally:
        server.stop()


def test_wrong_key_keeps_runs_spooled_until_the_key_is_fixed(tmp_path):
    server = Server(str(tmp_path / "w.db"))
    url = f"http://127.0.0.1:{server.port}"
    spool = str(tmp_path / "spool")
    try:
        with open_client(worker_url=url, api_key="wrong", spool_dir=spool, retries=0) as c:
            assert c.post_run(run()) == "spooled"
            assert c.sync().remaining == 1
        with open_client(worker_url=url, api_key=KEY, spool_dir=spool, retries=0) as c:
            assert Spool(spool).count() == 0 and c.stats()["totalRuns"] == 1
    finally:
        server.stop()


def test_spooled_run_refused_for_good_moves_to_rejected_and_delivery_continues(tmp_path):
    spool = Spool(str(tmp_path / "spool"))
    dest = "sqlite:" + os.path.abspath(tmp_path / "b.db")
    bad = run().to_wire()
    bad["totalScore"] = 5
    spool.add("run", bad, "test", dest)
    good = run()
    spool.add("run", good.to_wire(), "test", dest)
    with open_client(db_path=str(tmp_path / "b.db"), spool_dir=spool.directory, sync_spool=False) as c:
        report = c.sync()
        assert (report.delivered, report.rejected, report.remaining) == (1, 1, 0)
        assert c.get_run(good.run_id) is not None
    kept = json.loads(next((tmp_path / "spool" / "rejected").iterdir()).read_text())
    assert kept["body"]["runId"] == bad["runId"] and "totalScore" in kept["error"]


@respx.mock
def test_a_request_the_worker_keeps_failing_does_not_block_the_others(tmp_path):
    spool = Spool(str(tmp_path / "spool"))
    stuck, ok1, ok2 = run(), run(), run()
    for r in (stuck, ok1, ok2):
        spool.add("run", r.to_wire(), "test", URL)

    def answer(request: httpx.Request) -> httpx.Response:
        run_id = json.loads(request.content)["runId"]
        if run_id == stuck.run_id:
            return httpx.Response(500, json={"error": "storage error", "details": "too big"})
        return httpx.Response(201, json={"success": True, "runId": run_id, "duplicate": False})

    mock_health()
    respx.post(f"{URL}/api/results").mock(side_effect=answer)
    client = WorkerClient(HttpTransport(URL, KEY, retries=0), spool)
    report = client.sync()
    assert (report.delivered, report.failed, report.remaining) == (2, 1, 1)
    assert "500" in report.error
    assert [e.key for e in spool.pending()] == [stuck.run_id]


@respx.mock
def test_a_url_that_is_not_a_worker_is_an_error_naming_it_and_the_run_is_kept(tmp_path):
    from harness.results import NotAWorkerError

    respx.get(f"{URL}/health").mock(return_value=httpx.Response(404, text="no such page"))
    client = WorkerClient(HttpTransport(URL, KEY, retries=0), Spool(str(tmp_path / "spool")))
    with pytest.raises(NotAWorkerError, match="http://worker.test is not a zebench results worker") as err:
        client.post_run(run())
    assert err.value.kept_in and client.spool.count(URL) == 1 and client.spool.rejected_count() == 0


@respx.mock
def test_a_server_answering_200_to_anything_is_never_taken_for_storage(tmp_path):
    from harness.results import NotAWorkerError

    respx.route(host="worker.test").mock(return_value=httpx.Response(200, json={"ok": True}))
    client = WorkerClient(HttpTransport(URL, KEY, retries=0), Spool(str(tmp_path / "spool")))
    with pytest.raises(NotAWorkerError):
        client.post_run(run())
    assert client.spool.count(URL) == 1


@respx.mock
def test_a_post_the_answer_does_not_confirm_is_not_counted_as_stored(tmp_path):
    from harness.results import NotAWorkerError

    mock_health()
    respx.post(f"{URL}/api/results").mock(return_value=httpx.Response(201, json={"success": True}))
    client = WorkerClient(HttpTransport(URL, KEY, retries=0), Spool(str(tmp_path / "spool")))
    with pytest.raises(NotAWorkerError, match="without confirming it"):
        client.post_run(run())
    assert client.spool.count(URL) == 1


def test_runs_spooled_for_one_store_are_never_delivered_to_another(tmp_path):
    spool_dir = str(tmp_path / "spool")
    other = Spool(spool_dir)
    other_run = run()
    other.add("run", other_run.to_wire(), "the other store was full", "sqlite:" + str(tmp_path / "other.db"))
    with open_client(db_path=str(tmp_path / "main.db"), spool_dir=spool_dir) as c:
        assert c.get_run(other_run.run_id) is None and c.sync().remaining == 0
    assert Spool(spool_dir).count() == 1
    with open_client(db_path=str(tmp_path / "other.db"), spool_dir=spool_dir) as c:
        assert c.get_run(other_run.run_id) is not None
    assert Spool(spool_dir).count() == 0


@pytest.mark.parametrize("content", ["null", "[]", "42", '{"kind": "run"}', '{"kind": "x", "body": {}}', "{half"])
def test_a_malformed_spool_file_is_set_aside_once_and_blocks_nothing(tmp_path, content):
    spool = Spool(str(tmp_path / "spool"))
    dest = "sqlite:" + os.path.abspath(tmp_path / "b.db")
    good = run()
    os.makedirs(spool.pending_dir)
    Path(spool.pending_dir, "0000-bad.json").write_text(content)
    spool.add("run", good.to_wire(), "test", dest)
    with open_client(db_path=str(tmp_path / "b.db"), spool_dir=spool.directory, sync_spool=False) as c:
        report = c.sync()
        assert report.delivered == 1 and c.get_run(good.run_id) is not None
    assert Path(spool.rejected_dir, "0000-bad.json").exists()
    assert len(c.spool.notices) == 1 and "0000-bad.json" in c.spool.notices[0]
    assert spool.pending() == [] and spool.notices == []


@respx.mock
def test_delivery_stops_after_three_failures_in_a_row(tmp_path):
    spool = Spool(str(tmp_path / "spool"))
    for _ in range(5):
        spool.add("run", run().to_wire(), "test", URL)
    mock_health()
    route = respx.post(f"{URL}/api/results").mock(return_value=httpx.Response(403, json={"error": "invalid API key"}))
    report = WorkerClient(HttpTransport(URL, "wrong", retries=0), spool).sync()
    assert route.call_count == 3 and report.failed == 3 and report.remaining == 5
    assert "403" in report.error


def test_unreadable_spool_file_is_set_aside_not_deleted(tmp_path):
    spool = Spool(str(tmp_path / "spool"))
    os.makedirs(spool.pending_dir)
    Path(spool.pending_dir, "0001-broken.json").write_text("{half a rec")
    assert spool.pending() == []
    assert Path(spool.rejected_dir, "0001-broken.json").read_text() == "{half a rec"


def test_delivery_stops_at_the_first_unreachable_attempt_keeping_order(tmp_path):
    spool = Spool(str(tmp_path / "spool"))
    for i in range(3):
        spool.add("run", run().to_wire(), "test")
    sent: list[str] = []

    def send(entry):
        sent.append(entry.key)
        return "stored" if len(sent) == 1 else "unavailable"

    report = spool.deliver(send)
    assert len(sent) == 2 and report.delivered == 1 and report.remaining == 2
    assert report.error == "worker unavailable"


def test_second_deliverer_skips_while_the_spool_is_locked(tmp_path):
    spool = Spool(str(tmp_path / "spool"))
    spool.add("run", run().to_wire(), "test")
    inner: list = []

    def send(entry):
        inner.append(spool.deliver(lambda e: "stored", wait_for_lock=False))
        return "stored"

    outer = spool.deliver(send)
    assert outer.delivered == 1 and inner[0].skipped_locked and inner[0].delivered == 0


# ---------------------------------------------------------------------------- bench sync

def test_bench_sync_delivers_spooled_runs_and_reports_json(tmp_path, monkeypatch):
    from harness.cli.sync_cmd import sync

    spool = Spool(str(tmp_path / "spool"))
    runs = [run() for _ in range(3)]
    for r in runs:
        spool.add("run", r.to_wire(), "test")
    monkeypatch.delenv("ZE_BENCHMARKS_WORKER_URL", raising=False)
    db = str(tmp_path / "b.db")
    result = CliRunner().invoke(sync, ["--db", db, "--spool-dir", spool.directory, "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["delivered"] == 3 and out["remaining"] == 0
    with open_client(db_path=db, spool_dir=spool.directory) as c:
        assert {x.run_id for x in c.list_runs()} == {r.run_id for r in runs}


def test_bench_sync_exits_1_while_the_worker_is_unreachable(tmp_path):
    from harness.cli.sync_cmd import sync

    spool = Spool(str(tmp_path / "spool"))
    spool.add("run", run().to_wire(), "test")
    url = f"http://127.0.0.1:{_closed_port()}"
    result = CliRunner().invoke(sync, ["--worker-url", url, "--spool-dir", spool.directory])
    assert result.exit_code == 1
    assert f"cannot reach {url}" in result.output and spool.count() == 1


def test_bench_sync_is_attached_to_the_bench_group():
    from harness.cli.bench import main

    assert "sync" in main.commands


def test_client_without_spool_raises_instead_of_losing_a_run(tmp_path):
    t = HttpTransport(f"http://127.0.0.1:{_closed_port()}", KEY, retries=0)
    from harness.results import ResultsError

    with pytest.raises(ResultsError):
        WorkerClient(t, spool=None).post_run(run())
