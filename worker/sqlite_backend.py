"""SQLite storage for one machine: ``worker dev`` and the harness's in-process transport.

The methods are ``async`` to satisfy :class:`worker.storage.Storage`, but sqlite3 calls are
quick and local, so they run inline. One connection is shared under a lock; WAL mode and a
busy timeout (30 s) let ``worker dev`` and an in-process harness share the same file.

Durability: ``synchronous = FULL``. In WAL mode that syncs the log at every commit, so a run
the store has confirmed survives a power loss, not only a crash of the process (``NORMAL``
would only promise the latter). It costs one fsync per stored run, far below a run's length.

A write that fails (a full disk, a read-only file) rolls back once and surfaces as a
:class:`~worker.storage.StorageError` carrying SQLite's own message, so callers can say what
happened; a rollback that fails too never hides the first error.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from typing import Any, Sequence

from worker.storage import (
    MAX_BOUND_PARAMS,
    ConstraintError,
    Row,
    Statement,
    StorageError,
    is_constraint_message,
)


class SQLiteStorage:
    """The storage interface over a SQLite file (or ``":memory:"``)."""

    def __init__(self, path: str, *, busy_timeout_ms: int = 30_000) -> None:
        self.path = path
        if path != ":memory:":
            parent = os.path.dirname(os.path.abspath(path))
            os.makedirs(parent, exist_ok=True)
        self._lock = threading.RLock()
        # isolation_level=None: we issue BEGIN/COMMIT ourselves, only inside batch().
        self._conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False,
                                     timeout=busy_timeout_ms / 1000)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        self._conn.execute("PRAGMA foreign_keys = ON")
        if path != ":memory:":
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = FULL")

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    async def all(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        with self._lock:
            return [dict(r) for r in self._execute(sql, params).fetchall()]

    async def first(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        with self._lock:
            row = self._execute(sql, params).fetchone()
            return dict(row) if row is not None else None

    async def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        with self._lock:
            return self._execute(sql, params).rowcount

    async def batch(self, statements: Sequence[Statement]) -> list[list[Row]]:
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise StorageError(str(exc)) from exc
            try:
                results = [[dict(r) for r in self._execute(s.sql, s.params).fetchall()]
                           for s in statements]
                self._conn.execute("COMMIT")
                return results
            except sqlite3.Error as exc:
                self._rollback()
                raise StorageError(str(exc)) from exc
            except BaseException:
                self._rollback()
                raise

    def _rollback(self) -> None:
        """Roll back once, if a transaction is still open (SQLite ends some itself, e.g. when
        the disk is full); a failing rollback must not replace the error being reported."""
        if self._conn.in_transaction:
            try:
                self._conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass

    def raw_connection(self) -> sqlite3.Connection:
        """The underlying connection, for the migration runner; hold :meth:`locked` while using it."""
        return self._conn

    def locked(self) -> threading.RLock:
        """The lock that serialises use of the connection."""
        return self._lock

    def _execute(self, sql: str, params: Sequence[Any]) -> sqlite3.Cursor:
        if len(params) > MAX_BOUND_PARAMS:
            raise StorageError(f"{len(params)} bound parameters; at most {MAX_BOUND_PARAMS}")
        try:
            return self._conn.execute(sql, tuple(params))
        except sqlite3.IntegrityError as exc:
            raise ConstraintError(str(exc)) from exc
        except sqlite3.Error as exc:
            if is_constraint_message(str(exc)):
                raise ConstraintError(str(exc)) from exc
            raise StorageError(str(exc)) from exc
