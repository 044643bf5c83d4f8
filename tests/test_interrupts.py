"""Ctrl-C during a batch: the first winds it down, the second kills at once; finished runs are
stored, the batch is marked interrupted, nothing is left behind, and the exit status is 130.

`bench` runs as a real process with a real SIGINT; its agent is an OpenAI-compatible scripted
model (a small HTTP server in this test) that keeps asking for a long command.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.results import open_client
from support.http_stubs import BusyModel, serve
from support.processes import alive, gone
from support.scenario_builders import make_scenario

BENCH = [os.path.join(os.path.dirname(sys.executable), "bench")]


@pytest.fixture
def lab(tmp_path):
    make_scenario(tmp_path / "suites")
    server = serve(BusyModel)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZE_BENCHMARKS_")}
    env.update(ZE_BENCHMARKS_SUITES_DIR=str(tmp_path / "suites"), ZE_BENCHMARKS_DB=str(tmp_path / "bench.db"),
               ZE_BENCHMARKS_SPOOL_DIR=str(tmp_path / "spool"), ZE_BENCHMARKS_WORKSPACES_DIR=str(tmp_path / "ws"),
               ZE_BENCHMARKS_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    yield tmp_path, f"http://127.0.0.1:{server.server_address[1]}/v1", env
    server.shutdown()
    server.server_close()


def _start(lab, *extra: str) -> subprocess.Popen:
    tmp_path, url, env = lab
    command = [*BENCH, "demo", "add-one", "--agent", "openai", "--base-url", url, "--model", "slow",
               "--batch-id", "stopped", "-n", "3", *extra]
    return subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(predicate, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


@pytest.mark.integration
@pytest.mark.parametrize("parallel", ["1", "3"])
def test_the_first_ctrl_c_winds_the_batch_down_and_exits_130(lab, parallel):
    tmp_path, _, _ = lab
    proc = _start(lab, "-j", parallel)
    try:
        assert _wait_for(lambda: alive(BusyModel.marker), 60), "the agent never started its command"
        proc.send_signal(signal.SIGINT)
        started = time.monotonic()
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert time.monotonic() - started < 30
    assert "is marked interrupted" in err and "--resume stopped" in err and "Traceback" not in err
    assert gone(BusyModel.marker), "a command outlived the interrupt"
    assert not any((tmp_path / "ws").iterdir())  # no workspace left behind
    with open_client(db_path=str(tmp_path / "bench.db"), spool_dir=str(tmp_path / "spool")) as client:
        batch = client.get_batch("stopped")
    assert batch is not None and batch.metadata.get("interrupted") is True and batch.completed_at
    assert batch.runs and all(r.status == "error" and r.failure_class == "harness" and
                              r.metadata.get("error") == "interrupted" for r in batch.runs)
    assert len(batch.runs) == int(parallel)  # the ones that had started; the rest never ran


@pytest.mark.integration
def test_a_second_ctrl_c_kills_at_once(lab):
    tmp_path, _, _ = lab
    proc = _start(lab, "-j", "3")
    try:
        assert _wait_for(lambda: len(alive(BusyModel.marker)) >= 3, 60)
        proc.send_signal(signal.SIGINT)
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        started = time.monotonic()
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert time.monotonic() - started < 5  # no grace period, no waiting for agents
    assert "killing every running command now" in err and "Traceback" not in err
    assert gone(BusyModel.marker)
    assert not any((tmp_path / "ws").iterdir())
