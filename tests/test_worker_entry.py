"""The Python Workers entry module, with stand-ins for the runtime's ``js``, ``pyodide.ffi`` and
``workers`` modules: both entry styles hand requests and ``env.DB`` to the core.

The real runtime is exercised by the workerd integration test (``on_fetch`` style, the only
one wrangler 3.72.1 offers offline); this covers the ``WorkerEntrypoint`` style too.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
import types
from typing import Any

import pytest

from support.worker import FakeD1


class FakeJsResponse:
    def __init__(self, body: Any, init: dict[str, Any]) -> None:
        self.body, self.status, self.headers = body, init["status"], init["headers"]

    @classmethod
    def new(cls, body: Any, init: dict[str, Any]) -> "FakeJsResponse":
        return cls(body, init)


class FakeArrayBuffer:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def to_bytes(self) -> bytes:
        return self.data


class FakeHeaders:
    def __init__(self, headers: dict[str, str]) -> None:
        self._h = {k.lower(): v for k, v in headers.items()}

    def get(self, name: str) -> str | None:
        return self._h.get(name.lower())


class FakeRequest:
    def __init__(self, method: str, url: str, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.method, self.url, self._body = method, url, body
        self.headers = FakeHeaders(headers or {})

    async def arrayBuffer(self) -> FakeArrayBuffer:  # noqa: N802 - the JS name
        return FakeArrayBuffer(self._body)


class FakeEnv:
    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)


@pytest.fixture
def entry(monkeypatch):
    class WorkerEntrypoint:
        def __init__(self, ctx: Any, env: Any) -> None:
            self.ctx, self.env = ctx, env

    js = types.ModuleType("js")
    js.Response = FakeJsResponse
    js.Object = types.SimpleNamespace(fromEntries=dict)
    ffi = types.ModuleType("pyodide.ffi")
    ffi.to_js = lambda value, dict_converter=None: value
    pyodide = types.ModuleType("pyodide")
    pyodide.ffi = ffi
    workers = types.ModuleType("workers")
    workers.WorkerEntrypoint = WorkerEntrypoint
    for name, module in (("js", js), ("pyodide", pyodide), ("pyodide.ffi", ffi), ("workers", workers)):
        monkeypatch.setitem(sys.modules, name, module)
    sys.modules.pop("worker.entry", None)
    sys.modules.pop("worker.d1_backend", None)
    module = importlib.import_module("worker.entry")
    yield module
    sys.modules.pop("worker.entry", None)
    sys.modules.pop("worker.d1_backend", None)


def _run_body() -> bytes:
    return json.dumps({"runId": "run_entry_1", "suite": "s", "scenario": "x", "tier": "L1",
                       "agent": "echo", "batchId": "b1", "totalScore": 1.0}).encode()


def test_workerentrypoint_style_stores_and_reads_through_d1(entry):
    env = FakeEnv(DB=FakeD1(), API_SECRET_KEY="k", ALLOWED_ORIGINS="https://a.example")
    worker = entry.Default(None, env)
    post = FakeRequest("POST", "https://w.example/api/results", _run_body(),
                       {"Authorization": "Bearer k", "Content-Type": "application/json"})
    created = asyncio.run(worker.fetch(post))
    assert created.status == 201 and json.loads(created.body)["runId"] == "run_entry_1"
    got = asyncio.run(worker.fetch(FakeRequest("GET", "https://w.example/api/batches/b1",
                                               headers={"Origin": "https://a.example", "Authorization": "Bearer k"})))
    assert got.status == 200 and json.loads(got.body)["totalRuns"] == 1
    assert got.headers["access-control-allow-origin"] == "https://a.example"


def test_reads_need_the_key_unless_public_reads_is_set(entry):
    keyed = entry.Default(None, FakeEnv(DB=FakeD1(), API_SECRET_KEY="k"))
    created = asyncio.run(keyed.fetch(FakeRequest("POST", "https://w.example/api/results", _run_body(),
                                                  {"Authorization": "Bearer k"})))
    assert created.status == 201
    anonymous = asyncio.run(keyed.fetch(FakeRequest("GET", "https://w.example/api/runs/run_entry_1/transcript")))
    assert anonymous.status == 401
    wrong = asyncio.run(keyed.fetch(FakeRequest("GET", "https://w.example/api/runs",
                                                headers={"Authorization": "Bearer nope"})))
    assert wrong.status == 403
    assert asyncio.run(keyed.fetch(FakeRequest("GET", "https://w.example/health"))).status == 200
    public = entry.Default(None, FakeEnv(DB=FakeD1(), API_SECRET_KEY="k", ZE_BENCHMARKS_PUBLIC_READS="1"))
    assert asyncio.run(public.fetch(FakeRequest("GET", "https://w.example/api/runs"))).status == 200


def test_on_fetch_style_refuses_writes_without_a_configured_key(entry):
    env = FakeEnv(DB=FakeD1())
    post = FakeRequest("POST", "https://w.example/api/results", _run_body(),
                       {"Authorization": "Bearer anything"})
    refused = asyncio.run(entry.on_fetch(post, env))
    assert refused.status == 403 and json.loads(refused.body)["error"] == "writes are disabled"
    health = asyncio.run(entry.on_fetch(FakeRequest("GET", "https://w.example/health"), env))
    assert health.status == 200


def test_no_content_response_has_no_body(entry):
    env = FakeEnv(DB=FakeD1(), API_SECRET_KEY="k", ALLOWED_ORIGINS="*")
    pre = asyncio.run(entry.on_fetch(FakeRequest("OPTIONS", "https://w.example/api/results",
                                                 headers={"Origin": "https://b.example"}), env))
    assert pre.status == 204 and pre.body is None
