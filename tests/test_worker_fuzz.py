"""Property-based fuzzing of the worker with schemathesis, from its own /openapi.json: every
route, generated and mutated requests, with and without the key. Nothing may answer 5xx, and
every answer (status, headers, content type, body) must match the published schema.

schemathesis runs as its command-line tool (its pytest plugin does not follow the pytest in
use), a bounded number of examples per operation, with a fixed seed so a failure repeats.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import sys
import threading

import pytest

from support.workerd_fixture import KEY as WORKERD_KEY
from worker.config import WorkerConfig
from worker.devserver import make_server

SCHEMATHESIS = os.path.join(os.path.dirname(sys.executable), "schemathesis")
CHECKS = ",".join(("not_a_server_error", "status_code_conformance", "content_type_conformance",
                   "response_headers_conformance", "response_schema_conformance"))


def _fuzz(base_url: str, key: str | None, examples: int, seed: int,
          phases: str | None = None) -> subprocess.CompletedProcess:
    """Run schemathesis from a temporary directory, so its example cache stays out of the checkout."""
    if not os.path.exists(SCHEMATHESIS):
        pytest.fail(f"schemathesis is not installed in {os.path.dirname(sys.executable)} (scripts/setup.sh installs it)")
    command = [SCHEMATHESIS, "run", f"{base_url}/openapi.json", "--checks", CHECKS, "--max-examples", str(examples),
               "--seed", str(seed), "--no-color", "--request-timeout", "30"]
    if key:
        command += ["-H", f"Authorization: Bearer {key}"]
    if phases:
        command += ["--phases", phases]
    with tempfile.TemporaryDirectory(prefix="zebench-fuzz-") as scratch:
        return subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=scratch)


@pytest.fixture
def dev_url(tmp_path):
    srv, worker = make_server("127.0.0.1", 0, str(tmp_path / "fuzz.db"), WorkerConfig(api_key="fuzz-key"))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()
    worker.close()


@pytest.mark.integration
@pytest.mark.parametrize("key", ["fuzz-key", None], ids=["with-key", "without-key"])
def test_worker_dev_answers_every_generated_request_within_its_schema(dev_url, key):
    result = _fuzz(dev_url, key, examples=25, seed=7)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "passed" in result.stdout


@pytest.mark.integration
def test_the_worker_under_workerd_answers_every_generated_request_within_its_schema(workerd_api):
    # Not the coverage phase: it also sends made-up HTTP methods (QUERY), which wrangler's local
    # proxy answers 501 itself, before the worker's code sees them.
    result = _fuzz(str(workerd_api.client.base_url).rstrip("/"), WORKERD_KEY, examples=10, seed=11,
                   phases="fuzzing,stateful")
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
