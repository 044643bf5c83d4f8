"""The worker core on a local SQLite file, callable synchronously from any thread.

Used by ``worker dev`` (one call per request thread) and by the harness's in-process
transport. The SQLite backend never suspends, so a request's coroutine is driven to the end
inline, without an event loop; that keeps the in-process path cheap and usable from code
that already runs inside an event loop.
"""

from __future__ import annotations

from typing import Any, Coroutine, TypeVar

from worker.app import WorkerApp
from worker.config import WorkerConfig
from worker.messages import Request, Response
from worker.migrate import apply_migrations
from worker.sqlite_backend import SQLiteStorage

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never suspends (SQLite-backed core calls) and return its value."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    coro.close()
    raise RuntimeError("a storage call suspended; run_sync only drives the SQLite backend")


class LocalWorker:
    """A migrated SQLite database and the worker core over it."""

    def __init__(self, db_path: str, config: WorkerConfig) -> None:
        self.db_path = db_path
        self.storage = SQLiteStorage(db_path)
        apply_migrations(self.storage)
        self.app = WorkerApp(self.storage, config)

    def handle(self, request: Request) -> Response:
        """Answer one request (thread-safe: the storage serialises access)."""
        return run_sync(self.app.handle(request))

    def close(self) -> None:
        self.storage.close()
