"""``bench view``: serves the store with worker dev when nothing does, reuses a running worker,
and refuses a port held by something else."""

from __future__ import annotations

import http.server
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from harness.cli.bench import main
from harness.cli.view_cmd import page_path, probe
from support.processes import interruptible
from worker.config import WorkerConfig
from worker.devserver import make_server

BENCH = Path(sys.executable).parent / "bench"


def test_page_path_for_runs_batches_and_paths():
    assert page_path(None) == "/"
    assert page_path("run_123_abc") == "/runs/run_123_abc"
    assert page_path("ci nightly/1") == "/batches/ci%20nightly%2F1"
    assert page_path("/compare?a=B1&b=B2") == "/compare?a=B1&b=B2"


def test_view_serves_the_store_until_interrupted(tmp_path):
    from worker.config import WorkerConfig
    from worker.local import LocalWorker

    db = tmp_path / "bench.db"
    LocalWorker(str(db), WorkerConfig()).close()  # an empty store: view never creates one
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("ZE_BENCHMARKS_WORKER_URL", None)
    proc = subprocess.Popen([str(BENCH), "view", "run_1_x", "--db", str(db), "--port", "0", "--no-open"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=interruptible)
    try:
        url = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and url is None:
            line = proc.stdout.readline()
            if line.startswith("dashboard: "):
                url = line.split(" ", 1)[1].strip()
            elif not line and proc.poll() is not None:
                break
        assert url and url.endswith("/runs/run_1_x"), proc.stderr.read() if proc.poll() is not None else url
        page = httpx.get(url, timeout=10)
        assert page.status_code == 200 and "<main" in page.text
        base = url.rsplit("/runs/", 1)[0]
        assert probe(base) == "worker"
        assert httpx.get(base + "/api/stats", timeout=10).json()["totalRuns"] == 0
        assert db.exists()
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err


def test_view_reuses_a_running_worker(tmp_path, monkeypatch):
    monkeypatch.delenv("ZE_BENCHMARKS_WORKER_URL", raising=False)
    server, worker = make_server("127.0.0.1", 0, str(tmp_path / "b.db"), WorkerConfig(public_reads=True))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        result = CliRunner().invoke(main, ["view", "--port", str(port), "--no-open", "/leaderboard"])
        assert result.exit_code == 0, result.output
        assert f"dashboard: http://127.0.0.1:{port}/leaderboard" in result.output
        result = CliRunner().invoke(main, ["view", "--worker-url", f"http://127.0.0.1:{port}", "--no-open"])
        assert result.exit_code == 0 and f"dashboard: http://127.0.0.1:{port}/" in result.output
    finally:
        server.shutdown()
        server.server_close()
        worker.close()


class _NotAWorker(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - the stdlib's name
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"hello")

    def log_message(self, *args):
        pass


@pytest.fixture
def other_server():
    server = http.server.HTTPServer(("127.0.0.1", 0), _NotAWorker)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def test_view_refuses_a_port_held_by_something_else(other_server, monkeypatch):
    monkeypatch.delenv("ZE_BENCHMARKS_WORKER_URL", raising=False)
    result = CliRunner().invoke(main, ["view", "--port", str(other_server), "--no-open"])
    assert result.exit_code == 1 and "not a results worker" in result.output
    result = CliRunner().invoke(main, ["view", "--worker-url", f"http://127.0.0.1:{other_server}", "--no-open"])
    assert result.exit_code == 1 and "no results worker answers" in result.output
