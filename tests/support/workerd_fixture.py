"""The worker under workerd with local D1 (wrangler 3.72.1), shared by every test module.

Registered in conftest.py as a plugin, so the session starts one ``wrangler dev`` however
many modules use ``workerd_api``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]
KEY = "test-key-123"
ORIGIN = "https://dash.example.org"
WRANGLER = REPO / ".wrangler" / "cli" / "node_modules" / ".bin" / "wrangler"


@dataclass
class Resp:
    status: int
    headers: dict[str, str]
    body: Any


class HttpApi:
    """Requests over HTTP to a running worker (workerd under wrangler)."""

    def __init__(self, base_url: str, name: str) -> None:
        self.client = httpx.Client(base_url=base_url, timeout=30)
        self.name, self.shared = name, True

    def call(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None,
             raw: bytes | None = None, auth: bool = True) -> Resp:
        h = dict(headers or {})
        if auth and method in ("POST", "GET"):
            h.setdefault("authorization", f"Bearer {KEY}")
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        resp = self.client.request(method, path, content=data, headers=h)
        try:
            parsed = resp.json() if resp.content else None
        except ValueError:
            parsed = resp.text
        return Resp(resp.status_code, {k.lower(): v for k, v in resp.headers.items()}, parsed)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def workerd_api(tmp_path_factory: pytest.TempPathFactory):
    """The real core under workerd with local D1, migrations applied by wrangler."""
    if shutil.which("npm") is None and not WRANGLER.exists():
        pytest.skip("npm is not installed: cannot run wrangler/workerd (scripts/install-wrangler.sh)")
    if not WRANGLER.exists():
        pytest.skip(f"wrangler 3.72.1 not installed at {WRANGLER}: run scripts/install-wrangler.sh")
    state = tmp_path_factory.mktemp("d1state")
    env = dict(os.environ, WRANGLER_SEND_METRICS="false", CI="1", NO_COLOR="1")
    migrate = subprocess.run(
        [str(WRANGLER), "d1", "migrations", "apply", "zebench-results", "--local",
         "--persist-to", str(state)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert migrate.returncode == 0, migrate.stdout + migrate.stderr
    port, inspector = _free_port(), _free_port()
    log = open(state / "wrangler-dev.log", "w")
    proc = subprocess.Popen(
        [str(WRANGLER), "dev", "--local", "--ip", "127.0.0.1", "--port", str(port),
         "--inspector-port", str(inspector), "--persist-to", str(state),
         "--var", f"API_SECRET_KEY:{KEY}", "--var", f"ALLOWED_ORIGINS:{ORIGIN}"],
        cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(url + "/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                log.flush()
                pytest.fail("wrangler dev did not become ready:\n"
                            + (state / "wrangler-dev.log").read_text()[-3000:])
            time.sleep(0.3)
        yield HttpApi(url, "workerd")
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=10)
        log.close()
