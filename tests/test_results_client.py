"""The results client: same contract in-process and over HTTP to ``worker dev``."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from harness.results import (
    BatchRecord,
    ResultsError,
    RunRecord,
    WorkerClient,
    new_batch_id,
    new_run_id,
    open_client,
)
from harness.results.http_transport import HttpTransport
from harness.results.inprocess import InProcessTransport
from support.results import make_run
from worker.config import WorkerConfig
from worker.devserver import make_server

KEY = "client-test-key"


@pytest.fixture
def dev_server(tmp_path: Path):
    srv, worker = make_server("127.0.0.1", 0, str(tmp_path / "served.db"), WorkerConfig(api_key=KEY))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()
    worker.close()


@pytest.fixture(params=["in-process", "http"])
def client(request, tmp_path: Path):
    spool = str(tmp_path / "spool")
    if request.param == "in-process":
        c = open_client(db_path=str(tmp_path / "bench.db"), spool_dir=spool)
    else:
        url = request.getfixturevalue("dev_server")
        c = open_client(worker_url=url, api_key=KEY, spool_dir=spool, retries=0)
    yield c
    c.close()


def test_posted_run_reads_back_as_the_same_record(client):
    run = make_run(batch_id=new_batch_id())
    assert client.post_run(run) == "stored"
    got = client.get_run(run.run_id)
    expected = RunRecord(**{**run.__dict__, "transcript": None})
    assert got == expected
    assert client.get_transcript(run.run_id) == run.transcript


def test_posting_the_same_run_again_is_a_duplicate_and_a_changed_run_is_refused(client):
    run = make_run()
    assert client.post_run(run) == "stored"
    assert client.post_run(run) == "duplicate"
    run.total_score = 0.1
    with pytest.raises(ResultsError, match="409"):
        client.post_run(run)
    # The refused body is kept, not dropped.
    assert client.spool.rejected_count() == 1


def test_invalid_run_is_refused_with_the_field_named(client):
    run = make_run()
    run.total_score = 3.0
    with pytest.raises(ResultsError, match="totalScore"):
        client.post_run(run)
    assert client.get_run(run.run_id) is None


def test_batch_reads_back_with_server_aggregates_breakdowns_and_runs(client):
    batch_id = new_batch_id()
    runs = [make_run(batch_id, scenario="a", total_score=1.0, is_successful=True),
            make_run(batch_id, scenario="b", total_score=0.0, is_successful=False)]
    for r in runs:
        client.post_run(r)
    client.post_batch(BatchRecord(batch_id, created_at=1, completed_at=2, metadata={"suite": "py-bugs"}))
    b = client.get_batch(batch_id)
    assert (b.total_runs, b.successful_runs, b.avg_score) == (2, 1, 0.5)
    assert (b.created_at, b.completed_at, b.metadata) == (1, 2, {"suite": "py-bugs"})
    assert {r.run_id for r in b.runs} == {r.run_id for r in runs}
    assert {row["key"] for row in b.breakdowns["scenario"]} == {"a", "b"}
    assert client.get_batch("batch_missing") is None
    assert [x.batch_id for x in client.list_batches()] == [batch_id]


def test_a_batch_post_asks_for_no_aggregates_in_the_answer(client, monkeypatch):
    sent = []
    real = client.transport.request

    def request(method, path, *, query=None, body=None):
        sent.append((method, path, query))
        return real(method, path, query=query, body=body)

    monkeypatch.setattr(client.transport, "request", request)
    batch_id = new_batch_id()
    assert client.post_batch(BatchRecord(batch_id, created_at=1, completed_at=2)) == "stored"
    assert ("POST", "/api/results/batch", {"summary": "0"}) in sent
    assert client.get_batch(batch_id).completed_at == 2  # stored all the same


def test_list_runs_follows_cursor_pages_and_accepts_python_filter_names(client):
    batch_id = new_batch_id()
    ids = set()
    for i in range(7):
        r = make_run(batch_id if i % 2 == 0 else None, specialist_enabled=i == 0)
        ids.add(r.run_id)
        client.post_run(r)
    assert {r.run_id for r in client.list_runs(limit=100)} == ids
    assert len(client.list_runs(limit=3)) == 3
    assert len(client.list_runs(batch_id=batch_id)) == 4
    assert len(client.list_runs(specialist_enabled=True)) == 1
    assert client.get_run("run_nope") is None


def test_list_runs_reads_more_than_one_server_page(tmp_path):
    with open_client(db_path=str(tmp_path / "b.db"), spool_dir=str(tmp_path / "s")) as c:
        for _ in range(510):
            c.post_run(RunRecord(new_run_id(), "s", "x", "L1", "echo"))
        assert len(c.list_runs(limit=1000)) == 510


def test_stats_include_totals_and_agents(client):
    client.post_run(make_run())
    stats = client.stats()
    assert stats["totalRuns"] == 1 and stats["agents"][0]["agent"] == "oracle"


def test_open_client_without_url_uses_the_projects_store_found_from_a_subdirectory(tmp_path, monkeypatch):
    (tmp_path / "results").mkdir()
    (tmp_path / "suites" / "deep").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "suites" / "deep")
    for var in ("ZE_BENCHMARKS_WORKER_URL", "ZE_BENCHMARKS_DB", "ZE_BENCHMARKS_SPOOL_DIR"):
        monkeypatch.delenv(var, raising=False)
    with open_client() as c:
        assert isinstance(c.transport, InProcessTransport)
        c.post_run(make_run())
    assert (tmp_path / "results" / "bench.db").exists()
    assert not (tmp_path / "suites" / "deep" / "results").exists()


def test_open_client_reads_worker_url_and_key_from_the_environment(tmp_path, monkeypatch, dev_server):
    monkeypatch.setenv("ZE_BENCHMARKS_WORKER_URL", dev_server)
    monkeypatch.setenv("ZE_BENCHMARKS_API_KEY", KEY)
    monkeypatch.setenv("ZE_BENCHMARKS_SPOOL_DIR", str(tmp_path / "spool"))
    with open_client() as c:
        assert isinstance(c.transport, HttpTransport)
        assert c.post_run(make_run()) == "stored"


def test_embedded_client_and_worker_dev_share_the_same_database(tmp_path):
    db = str(tmp_path / "shared.db")
    run = make_run()
    with open_client(db_path=db, spool_dir=str(tmp_path / "s")) as c:
        c.post_run(run)
    srv, worker = make_server("127.0.0.1", 0, db, WorkerConfig(api_key=KEY))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{srv.server_address[1]}"
        with open_client(worker_url=url, api_key=KEY, spool_dir=str(tmp_path / "s")) as c:
            assert c.get_run(run.run_id).total_score == 0.75
    finally:
        srv.shutdown()
        srv.server_close()
        worker.close()


def test_client_works_when_called_inside_a_running_event_loop(tmp_path):
    import asyncio

    async def inside() -> str:
        with open_client(db_path=str(tmp_path / "b.db"), spool_dir=str(tmp_path / "s")) as c:
            return c.post_run(make_run())

    assert asyncio.run(inside()) == "stored"


def test_concurrent_posts_from_threads_are_all_stored_once(tmp_path):
    with open_client(db_path=str(tmp_path / "b.db"), spool_dir=str(tmp_path / "s")) as c:
        runs = [make_run("batch_t") for _ in range(40)]
        outcomes: list[str] = []

        def post(chunk: list[RunRecord]) -> None:
            for r in chunk:
                outcomes.append(c.post_run(r))
                outcomes.append(c.post_run(r))  # an immediate retry

        threads = [threading.Thread(target=post, args=(runs[i::4],)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(outcomes).count("stored") == 40 and outcomes.count("duplicate") == 40
        assert c.get_batch("batch_t").total_runs == 40


def test_worker_client_is_a_results_client():
    from harness.results.client import ResultsClient

    assert issubclass(WorkerClient, ResultsClient)


def test_client_uses_the_dev_key_for_a_loopback_worker_dev_without_a_key(tmp_path, monkeypatch):
    from worker.devserver import resolve_config

    monkeypatch.delenv("ZE_BENCHMARKS_API_KEY", raising=False)
    config, _ = resolve_config("127.0.0.1", WorkerConfig(api_key=None))
    srv, worker = make_server("127.0.0.1", 0, str(tmp_path / "dev.db"), config)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{srv.server_address[1]}"
        with open_client(worker_url=url, spool_dir=str(tmp_path / "s"), retries=0) as c:
            assert c.post_run(make_run()) == "stored"
    finally:
        srv.shutdown()
        srv.server_close()
        worker.close()


def test_unusable_database_path_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(ResultsError, match="cannot open the results database"):
        open_client(db_path=str(blocker / "bench.db"), spool_dir=str(tmp_path / "s"))


def test_corrupt_database_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "bench.db"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(ResultsError, match=str(bad)):
        open_client(db_path=str(bad), spool_dir=str(tmp_path / "s"))
