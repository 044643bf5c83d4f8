"""The worker core in-process, for the tests of its routes: a fake D1 binding, requests straight
into a :class:`~worker.app.WorkerApp` on SQLite or the fake D1, the ``api`` fixture (every
backend, workerd included) and the ``local`` one (the two in-process backends, configurable),
and the body of a run as clients post it.

A test module uses the fixtures by importing them (``from support.worker import api``).
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import pytest

from worker.app import WorkerApp
from worker.config import WorkerConfig
from worker.d1_backend import D1Storage
from worker.messages import Request
from worker.migrate import MIGRATIONS_DIR, apply_migrations, migration_files, split_statements
from worker.sqlite_backend import SQLiteStorage
from support.workerd_fixture import KEY, ORIGIN, Resp


# ------------------------------------------------------------------------------- fake D1

class FakeD1Error(Exception):
    """What the binding raises: a message starting with D1_ERROR / D1_TYPE_ERROR."""


class FakeD1:
    """Behaves like the D1 binding as far as the core can tell.

    Every call is a coroutine that really suspends; transactions exist only as ``batch``;
    BEGIN/COMMIT/SAVEPOINT are refused; more than 100 bound parameters fail; None cannot be
    bound (Pyodide turns it into ``undefined``); whole REAL values come back as ints.
    """

    MAX_PARAMS = 100
    MAX_SQL_BYTES = 100_000

    def __init__(self) -> None:
        self.conn = sqlite3.connect(":memory:", isolation_level=None)
        self.conn.row_factory = sqlite3.Row
        self.executed: list[tuple[str, tuple[Any, ...]]] = []
        self.conn.execute("CREATE TABLE d1_migrations(id INTEGER PRIMARY KEY AUTOINCREMENT, "
                          "name TEXT UNIQUE, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL)")
        for name in migration_files():
            for sql in split_statements((Path(MIGRATIONS_DIR) / name).read_text()):
                self.conn.execute(sql)
            self.conn.execute("INSERT INTO d1_migrations (name) VALUES (?)", (name,))

    def prepare(self, sql: str) -> "FakeStatement":
        return FakeStatement(self, sql, ())

    async def batch(self, statements: list["FakeStatement"]) -> list[dict[str, Any]]:
        await asyncio.sleep(0)
        self.conn.execute("SAVEPOINT fake_batch")
        try:
            results = [s._execute() for s in statements]
        except BaseException:
            self.conn.execute("ROLLBACK TO fake_batch")
            self.conn.execute("RELEASE fake_batch")
            raise
        self.conn.execute("RELEASE fake_batch")
        return results

    def _execute(self, sql: str, params: tuple[Any, ...]) -> tuple[list[dict[str, Any]], int]:
        if re.match(r"\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|END)\b", sql, re.I):
            raise FakeD1Error("D1_ERROR: not authorized: use batch() for transactions")
        if len(sql.encode()) > self.MAX_SQL_BYTES:
            raise FakeD1Error("D1_ERROR: statement too long: SQLITE_TOOBIG")
        if len(params) > self.MAX_PARAMS:
            raise FakeD1Error("D1_ERROR: too many SQL variables")
        self.executed.append((sql, params))
        try:
            cur = self.conn.execute(sql, params)
            rows = [{k: _as_js_number(r[k]) for k in r.keys()} for r in cur.fetchall()]
        except sqlite3.Error as exc:
            raise FakeD1Error(f"D1_ERROR: {exc}") from None
        return rows, cur.rowcount


def _as_js_number(value: Any) -> Any:
    # D1 hands numbers to JavaScript: REAL 2.0 arrives as 2.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


class FakeStatement:
    def __init__(self, db: FakeD1, sql: str, params: tuple[Any, ...]) -> None:
        self.db, self.sql, self.params = db, sql, params

    def bind(self, *params: Any) -> "FakeStatement":
        for p in params:
            if p is None:
                raise FakeD1Error("D1_TYPE_ERROR: Type 'undefined' not supported for value 'undefined'")
        return FakeStatement(self.db, self.sql, params)

    def _execute(self) -> dict[str, Any]:
        rows, changes = self.db._execute(self.sql, self.params)
        return {"results": rows, "success": True, "meta": {"changes": changes}}

    async def all(self) -> dict[str, Any]:
        await asyncio.sleep(0)
        return self._execute()

    async def first(self) -> dict[str, Any] | None:
        await asyncio.sleep(0)
        rows = self._execute()["results"]
        return rows[0] if rows else None

    async def run(self) -> dict[str, Any]:
        await asyncio.sleep(0)
        return self._execute()


# ------------------------------------------------------------------------------ API access

class CoreApi:
    """Requests straight into a WorkerApp (SQLite or fake D1)."""

    def __init__(self, app: WorkerApp, name: str) -> None:
        self.app, self.name, self.shared = app, name, False

    def call(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None,
             raw: bytes | None = None, auth: bool = True) -> Resp:
        h = dict(headers or {})
        if auth and method in ("POST", "GET"):
            h.setdefault("authorization", f"Bearer {KEY}")
        data = raw if raw is not None else (b"" if body is None else json.dumps(body).encode())
        if data and "content-length" not in {k.lower() for k in h}:
            h["content-length"] = str(len(data))
        resp = asyncio.run(self.app.handle(Request.from_url(method, path, h, data)))
        return Resp(resp.status, {k.lower(): v for k, v in resp.headers.items()},
                    json.loads(resp.body) if resp.body else None)


def local_api(kind: str, tmp_path: Path, config: WorkerConfig | None = None) -> CoreApi:
    config = config or WorkerConfig(api_key=KEY, allowed_origins=(ORIGIN,))
    if kind == "sqlite":
        storage = SQLiteStorage(str(tmp_path / "bench.db"))
        apply_migrations(storage)
        return CoreApi(WorkerApp(storage, config), kind)
    return CoreApi(WorkerApp(D1Storage(FakeD1()), config), kind)


@pytest.fixture(params=["sqlite", "fake_d1", pytest.param("workerd", marks=pytest.mark.integration)])
def api(request: pytest.FixtureRequest, tmp_path: Path):
    """Every backend; on workerd the database is shared by the session (ids are unique)."""
    if request.param == "workerd":
        return request.getfixturevalue("workerd_api")
    return local_api(request.param, tmp_path)


@pytest.fixture(params=["sqlite", "fake_d1"])
def local(request: pytest.FixtureRequest, tmp_path: Path):
    """Backends whose configuration a test can choose."""
    return lambda config=None: local_api(request.param, tmp_path, config)


def uid(prefix: str = "run") -> str:
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


def run_body(**over: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "runId": uid(), "suite": "py-bugs", "scenario": "slugify", "tier": "L1", "agent": "echo",
        "model": "m1", "status": "completed", "totalScore": 0.5, "weightedScore": 0.5,
        "isSuccessful": False, "metadata": {"k": "v"},
        "evaluations": [{"evaluatorName": "validation", "score": 1.0, "maxScore": 1.0,
                         "status": "ok", "details": "exit 0"}],
        "telemetry": {"toolCalls": 3, "tokensIn": 100, "tokensOut": 20, "cacheReadTokens": 5,
                      "cacheWriteTokens": 6, "costUsd": 2.0, "judgeTokensIn": 7,
                      "judgeTokensOut": 8, "judgeCostUsd": 0.25, "turns": 4, "durationMs": 1500.0,
                      "latenciesMs": [100.0, 200.0], "workspaceDir": "/tmp/ws"},
    }
    body.update(over)
    return body
