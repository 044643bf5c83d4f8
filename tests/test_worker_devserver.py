"""``worker dev`` and ``worker migrate``: the HTTP server, its key rules and the migration runner."""

from __future__ import annotations

import http.client
import json
import sqlite3
import threading
from pathlib import Path

import pytest

from worker import cli
from worker.config import DEV_API_KEY, WorkerConfig
from worker.devserver import is_loopback, make_server, resolve_config
from worker.migrate import apply_migrations, applied_migrations, migration_files
from worker.sqlite_backend import SQLiteStorage


@pytest.fixture
def server(tmp_path: Path):
    srv, worker = make_server("127.0.0.1", 0, str(tmp_path / "bench.db"), WorkerConfig(api_key="k"))
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    worker.close()


def _post(conn: http.client.HTTPConnection, path: str, body: dict, key: str = "k") -> tuple[int, dict]:
    data = json.dumps(body).encode()
    conn.request("POST", path, body=data, headers={"Authorization": f"Bearer {key}",
                                                   "Content-Type": "application/json"})
    resp = conn.getresponse()
    return resp.status, json.loads(resp.read())


def test_dev_server_serves_many_requests_on_one_keep_alive_connection(server):
    conn = http.client.HTTPConnection(*server.server_address[:2], timeout=10)
    for i in range(20):
        status, body = _post(conn, "/api/results", {"runId": f"run_{i}", "suite": "s", "scenario": "x",
                                                   "tier": "L1", "agent": "echo", "batchId": "b"})
        assert status == 201 and body["runId"] == f"run_{i}"
    conn.request("GET", "/api/batches/b", headers={"Authorization": "Bearer k"})
    resp = conn.getresponse()
    assert resp.status == 200 and json.loads(resp.read())["totalRuns"] == 20
    conn.close()


def test_dev_server_answers_413_without_reading_an_oversized_body(tmp_path):
    srv, worker = make_server("127.0.0.1", 0, str(tmp_path / "b.db"),
                              WorkerConfig(api_key="k", max_body_bytes=100))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        conn = http.client.HTTPConnection(*srv.server_address[:2], timeout=10)
        conn.putrequest("POST", "/api/results")
        conn.putheader("Content-Length", "1000000")
        conn.putheader("Authorization", "Bearer k")
        conn.endheaders()
        resp = conn.getresponse()
        assert resp.status == 413 and json.loads(resp.read())["error"] == "body too large"
    finally:
        srv.shutdown()
        srv.server_close()
        worker.close()


@pytest.mark.parametrize("host, loop", [("127.0.0.1", True), ("::1", True), ("localhost", True),
                                        ("127.0.0.2", True), ("0.0.0.0", False), ("192.168.1.4", False),
                                        ("example.org", False)])
def test_loopback_detection(host, loop):
    assert is_loopback(host) is loop


def test_dev_key_is_used_only_on_loopback_without_a_configured_key():
    config, notice = resolve_config("127.0.0.1", WorkerConfig(api_key=None))
    assert config.api_key == DEV_API_KEY and notice and "loopback" in notice
    assert config.public_reads  # the development key is public: requiring it for reads would guard nothing
    with pytest.raises(ValueError, match="refusing to listen on 0.0.0.0"):
        resolve_config("0.0.0.0", WorkerConfig(api_key=None))
    config, notice = resolve_config("0.0.0.0", WorkerConfig(api_key="secret"))
    assert config.api_key == "secret" and notice is None


def test_worker_dev_cli_refuses_public_address_without_key(monkeypatch, capsys, tmp_path):
    monkeypatch.delenv("API_SECRET_KEY", raising=False)
    code = cli.main(["dev", "--host", "0.0.0.0", "--port", "0", "--db", str(tmp_path / "x.db")])
    assert code == 2
    assert "refusing to listen on 0.0.0.0 without API_SECRET_KEY" in capsys.readouterr().err


def test_migrations_apply_once_and_are_recorded_like_wrangler(tmp_path):
    db = str(tmp_path / "m.db")
    assert cli.main(["migrate", "--db", db]) == 0
    storage = SQLiteStorage(db)
    assert apply_migrations(storage) == []  # second run: nothing to do
    assert applied_migrations(storage) == migration_files()
    storage.close()
    conn = sqlite3.connect(db)
    columns = [r[1] for r in conn.execute("PRAGMA table_info(d1_migrations)")]
    assert columns == ["id", "name", "applied_at"]
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"runs", "batches", "evaluations", "telemetry", "transcripts"} <= tables


def test_every_run_filter_has_an_index(tmp_path):
    from worker.store import RUN_FILTERS

    storage = SQLiteStorage(str(tmp_path / "i.db"))
    apply_migrations(storage)
    conn = storage.raw_connection()
    for column in RUN_FILTERS.values():
        plan = " ".join(r[3] for r in conn.execute(
            f"EXPLAIN QUERY PLAN SELECT * FROM runs WHERE {column} = ? "
            "ORDER BY created_at DESC, run_id DESC LIMIT 10", ("x",)))
        assert "USING INDEX" in plan and "TEMP B-TREE" not in plan, (column, plan)
    storage.close()


def test_worker_core_imports_only_the_standard_library():
    import ast
    import sys

    root = Path(__file__).resolve().parents[1] / "worker"
    allowed_prefixes = ("worker", "js", "pyodide", "workers")
    for path in root.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                assert top in sys.stdlib_module_names or top in allowed_prefixes, (path.name, name)


def test_dev_server_answers_expect_100_continue_before_reading_the_body(server):
    import socket

    body = json.dumps({"runId": "run_expect", "suite": "s", "scenario": "x", "tier": "L1",
                       "agent": "echo", "metadata": {"pad": "p" * 2000}}).encode()
    with socket.create_connection(server.server_address[:2], timeout=10) as sock:
        sock.sendall(b"POST /api/results HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n"
                     b"Expect: 100-continue\r\n"
                     + f"Content-Length: {len(body)}\r\n\r\n".encode())
        assert sock.recv(100).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
        sock.sendall(body)
        reply = b""
        while b"run_expect" not in reply:
            chunk = sock.recv(4096)
            assert chunk, reply
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 201 Created")


def test_dev_server_rejects_malformed_and_chunked_requests(server):
    import socket

    def exchange(raw: bytes) -> bytes:
        with socket.create_connection(server.server_address[:2], timeout=10) as sock:
            sock.sendall(raw)
            out = b""
            while True:
                chunk = sock.recv(4096)
                if not chunk:
                    return out
                out += chunk

    assert exchange(b"NONSENSE\r\n\r\n").startswith(b"HTTP/1.1 400 ")
    chunked = exchange(b"POST /api/results HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
    assert chunked.startswith(b"HTTP/1.1 411 ")
    closed = exchange(b"GET /health HTTP/1.1\r\nConnection: close\r\n\r\n")
    assert closed.startswith(b"HTTP/1.1 200 OK") and b'"status":"ok"' in closed


def _limited_server(tmp_path, **limits):
    srv, worker = make_server("127.0.0.1", 0, str(tmp_path / "limits.db"), WorkerConfig(api_key="k"), **limits)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, worker


def _health_ok(srv) -> bool:
    conn = http.client.HTTPConnection(*srv.server_address[:2], timeout=5)
    conn.request("GET", "/health")
    ok = conn.getresponse().status == 200
    conn.close()
    return ok


def test_a_half_sent_body_gets_408_and_never_holds_the_server(tmp_path):
    import socket
    import time

    srv, worker = _limited_server(tmp_path, body_timeout_s=1.0)
    try:
        stalled = socket.create_connection(srv.server_address[:2], timeout=10)
        stalled.sendall(b"POST /api/results HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n"
                        b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"runId\":")
        assert _health_ok(srv)  # others are served while that body stalls
        started = time.monotonic()
        answer = stalled.recv(4096)
        assert time.monotonic() - started < 5
        assert answer.startswith(b"HTTP/1.1 408") and b"request timeout" in answer
        assert stalled.recv(4096) == b""  # and the connection is closed
        stalled.close()
    finally:
        srv.shutdown()
        srv.server_close()
        worker.close()


def test_headers_that_never_finish_are_dropped(tmp_path):
    import socket

    srv, worker = _limited_server(tmp_path, header_timeout_s=0.5)
    try:
        slow = socket.create_connection(srv.server_address[:2], timeout=10)
        slow.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")  # no blank line, ever
        assert slow.recv(4096) == b""
        slow.close()
    finally:
        srv.shutdown()
        srv.server_close()
        worker.close()


def test_connections_beyond_the_limit_get_503_and_the_rest_are_served(tmp_path):
    import socket

    srv, worker = _limited_server(tmp_path, max_connections=3)
    held = []
    try:
        for _ in range(3):
            held.append(socket.create_connection(srv.server_address[:2], timeout=10))
        extra = socket.create_connection(srv.server_address[:2], timeout=10)
        extra.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = extra.recv(4096)
        assert answer.startswith(b"HTTP/1.1 503") and b"too many connections" in answer
        extra.close()
        held[0].sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert held[0].recv(4096).startswith(b"HTTP/1.1 200")
    finally:
        for s in held:
            s.close()
        srv.shutdown()
        srv.server_close()
        worker.close()
