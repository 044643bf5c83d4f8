"""The results path knows where it writes: nothing is called stored unless the store said so,
nothing spooled lands in another store, and a bad spool file blocks nothing."""

from __future__ import annotations

import json
import threading

import pytest
from click.testing import CliRunner

from harness.cli.bench import main
from harness.results import Spool, open_client
from support.http_stubs import AnythingGoes, serve
from support.scenario_builders import make_scenario
from worker.config import WorkerConfig
from worker.devserver import make_server


@pytest.fixture
def env(tmp_path, monkeypatch):
    make_scenario(tmp_path / "suites")
    monkeypatch.chdir(tmp_path)
    for name in ("ZE_BENCHMARKS_WORKER_URL", "ZE_BENCHMARKS_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ZE_BENCHMARKS_SUITES_DIR", str(tmp_path / "suites"))
    monkeypatch.setenv("ZE_BENCHMARKS_DB", str(tmp_path / "bench.db"))
    monkeypatch.setenv("ZE_BENCHMARKS_SPOOL_DIR", str(tmp_path / "spool"))
    return tmp_path


def bench(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def anything_server():
    server = serve(AnythingGoes)
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def worker(tmp_path):
    srv, core = make_server("127.0.0.1", 0, str(tmp_path / "worker.db"), WorkerConfig(api_key="right-key"))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()
    core.close()


def test_a_url_answering_200_to_anything_is_not_taken_for_a_store(env, anything_server):
    result = bench("demo", "add-one", "--agent", "oracle", "--worker-url", anything_server, "--batch-id", "b1")
    assert result.exit_code == 1
    assert "Stored in batch" not in result.output
    assert f"{anything_server} is not a zebench results worker" in result.stderr
    pending = Spool(str(env / "spool")).pending()
    assert [e.kind for e in pending] == ["run", "batch"] and pending[0].destination == anything_server


def test_a_wrong_key_says_where_the_run_is_instead_of_stored(env, worker, monkeypatch):
    monkeypatch.setenv("ZE_BENCHMARKS_API_KEY", "wrong-key")
    result = bench("demo", "add-one", "--agent", "oracle", "--worker-url", worker, "--batch-id", "b2")
    assert result.exit_code == 1 and "Stored in batch" not in result.output
    assert "1 run(s) NOT stored: kept in" in result.stderr and "invalid API key" in result.stderr
    assert "bench sync" in result.stderr
    monkeypatch.setenv("ZE_BENCHMARKS_API_KEY", "right-key")
    synced = bench("sync", "--worker-url", worker)
    assert synced.exit_code == 0, synced.output
    shown = bench("batch", "b2", "--worker-url", worker, "--json")
    assert json.loads(shown.stdout)["totalRuns"] == 1


def test_stored_is_printed_only_when_the_store_confirmed_it(env):
    result = bench("demo", "add-one", "--agent", "oracle", "--batch-id", "b3")
    assert result.exit_code == 0 and "Stored in batch b3" in result.stdout


def test_runs_spooled_for_another_database_are_not_delivered_by_an_unrelated_command(env, monkeypatch):
    other = env / "other.db"
    spool = Spool(str(env / "spool"))
    with open_client(db_path=str(other), spool_dir=spool.directory) as c:
        from harness.results import RunRecord, new_run_id

        record = RunRecord(new_run_id(), "s", "x", "L1", "echo", batch_id="elsewhere")
        spool.add("run", record.to_wire(), "that database was full", c.destination)
    assert bench("history", "--json").exit_code == 0  # opens results in bench.db
    assert spool.count() == 1
    listed = bench("sync")
    assert f"wait for sqlite:{other}" in listed.stderr and f"bench sync --db {other}" in listed.stderr
    assert bench("sync", "--db", str(other)).exit_code == 0
    assert spool.count() == 0


@pytest.mark.parametrize("content", ["null", "{not json", "[1, 2]"])
def test_one_bad_spool_file_blocks_no_command(env, content):
    pending = env / "spool" / "pending"
    pending.mkdir(parents=True)
    (pending / "x.json").write_text(content)
    first = bench("history")
    assert first.exit_code == 0, first.output
    assert "x.json set aside" in first.stderr and "Traceback" not in first.output
    again = bench("history")
    assert "set aside" not in again.stderr  # reported once
    assert (env / "spool" / "rejected" / "x.json").read_text() == content
    assert bench("sync").exit_code == 0
    assert bench("demo", "add-one", "--agent", "oracle").exit_code == 0


def _limit_pages(client, extra_pages: int = 0) -> None:
    """Make the in-process database unable to grow: SQLite then reports a full disk."""
    conn = client.transport._worker.storage.raw_connection()
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages + extra_pages}")


def _create_store(path) -> None:
    from worker.local import LocalWorker

    LocalWorker(str(path), WorkerConfig()).close()


def test_a_full_database_is_a_named_error_and_the_run_goes_to_the_spool(env):
    from harness.results import RunRecord, new_run_id

    big = RunRecord(new_run_id(), "s", "x", "L1", "echo", batch_id="full",
                    transcript=[{"role": "tool", "content": "x" * 200_000}])
    _create_store(env / "full.db")  # a read never creates a store
    with open_client(db_path=str(env / "full.db"), spool_dir=str(env / "spool")) as c:
        c.stats()
        _limit_pages(c)
        assert c.post_run(big) == "spooled"
        assert "database or disk is full" in c.last_spool_reason
        c.transport._worker.storage.raw_connection().execute("PRAGMA max_page_count = 1073741823")
        assert c.sync().delivered == 1 and c.get_run(big.run_id) is not None


def test_a_read_only_database_is_a_named_error_and_the_run_goes_to_the_spool(env):
    from harness.results import RunRecord, new_run_id

    _create_store(env / "ro.db")
    with open_client(db_path=str(env / "ro.db"), spool_dir=str(env / "spool")) as c:
        c.stats()
        c.transport._worker.storage.raw_connection().execute("PRAGMA query_only = 1")
        assert c.post_run(RunRecord(new_run_id(), "s", "x", "L1", "echo")) == "spooled"
        assert "readonly database" in c.last_spool_reason


def test_a_database_refusing_writes_during_a_run_is_reported_and_nothing_is_lost(env, monkeypatch):
    from worker import local

    original = local.LocalWorker.__init__

    def cramped(self, db_path, config):
        original(self, db_path, config)
        self.storage.raw_connection().execute("PRAGMA query_only = 1")

    monkeypatch.setattr(local.LocalWorker, "__init__", cramped)
    result = bench("demo", "add-one", "--agent", "oracle", "--batch-id", "cramped")
    assert result.exit_code == 1 and "Stored in batch" not in result.output
    assert "NOT stored" in result.stderr and "readonly database" in result.stderr
    assert "Traceback" not in result.output
    assert Spool(str(env / "spool")).count() >= 1
