"""Killing ``worker dev`` in the middle of a batch loses no run.

A real ``worker dev`` process is killed with SIGKILL while a client posts a batch; the runs
it could not deliver are spooled, and after the server restarts ``bench sync`` delivers
them. Every run ends up stored exactly once.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from harness.results import BatchRecord, RunRecord, Spool, new_run_id, open_client

KEY = "recovery-key"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(db: Path, port: int, log: Path) -> subprocess.Popen:
    env = dict(os.environ, API_SECRET_KEY=KEY)
    proc = subprocess.Popen(
        [sys.executable, "-m", "worker.cli", "dev", "--port", str(port), "--db", str(db)],
        env=env, stdout=open(log, "a"), stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.05)
        if proc.poll() is not None:
            break
    _kill(proc)
    pytest.fail("worker dev did not start:\n" + log.read_text())


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=10)


@pytest.mark.integration
def test_killing_worker_dev_mid_batch_loses_no_run(tmp_path):
    from harness.cli.sync_cmd import sync

    db, spool_dir, log = tmp_path / "bench.db", str(tmp_path / "spool"), tmp_path / "dev.log"
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    batch_id = "batch_kill_test"
    runs = [RunRecord(new_run_id(), "s", f"sc{i % 3}", "L1", "echo", batch_id=batch_id,
                      total_score=(i % 4) / 4, transcript=[{"role": "user", "content": "x" * 2000}])
            for i in range(60)]
    outcomes: list[str] = []
    proc = _start(db, port, log)
    killed = threading.Event()
    try:
        with open_client(worker_url=url, api_key=KEY, spool_dir=spool_dir, retries=1,
                         timeout_s=5) as client:
            client.transport.backoff_s = 0.01
            for i, r in enumerate(runs):
                if i == 25:
                    # SIGKILL: no clean shutdown, like a crash or a killed container.
                    _kill(proc)
                    killed.set()
                outcomes.append(client.post_run(r))
            client.post_batch(BatchRecord(batch_id, completed_at=int(time.time() * 1000)))
        assert killed.is_set()
        assert outcomes[:25] == ["stored"] * 25
        assert outcomes[25:] == ["spooled"] * 35
        assert Spool(spool_dir).count() == 36  # 35 runs and the batch update

        proc = _start(db, port, log)
        # Without the key the worker answers 403: the spool stays, with the reason shown.
        refused = CliRunner().invoke(sync, ["--worker-url", url, "--spool-dir", spool_dir,
                                            "--api-key", "wrong"])
        assert refused.exit_code == 1 and "403" in refused.output
        result = CliRunner().invoke(sync, ["--worker-url", url, "--spool-dir", spool_dir,
                                           "--api-key", KEY])
        assert result.exit_code == 0, result.output
        assert "delivered 36" in result.output
        # A second sync finds nothing left; sending again would not duplicate anything anyway.
        again = CliRunner().invoke(sync, ["--worker-url", url, "--spool-dir", spool_dir,
                                          "--api-key", KEY])
        assert again.exit_code == 0 and "delivered 0" in again.output

        with open_client(worker_url=url, api_key=KEY, spool_dir=spool_dir) as client:
            batch = client.get_batch(batch_id)
            stored = [r.run_id for r in batch.runs]
            assert batch.total_runs == 60 and batch.completed_at is not None
            assert sorted(stored) == sorted(r.run_id for r in runs)
            assert len(set(stored)) == len(stored)
            assert client.get_transcript(runs[-1].run_id) == runs[-1].transcript
    finally:
        _kill(proc)
