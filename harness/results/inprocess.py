"""The in-process transport: the worker core itself, on a local SQLite file.

Requests go through the same routing, validation, authentication and SQL as over HTTP; only
the socket is missing. This is the embedded default when no worker URL is configured.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
from typing import Any
from urllib.parse import urlencode

from harness.results.client import ResultsError
from harness.results.transport import TransportResponse, decode_body
from worker.config import WorkerConfig
from worker.local import LocalWorker
from worker.messages import Request


def _cannot_create(path: str) -> str | None:
    """Why a store file could not be created at ``path`` (checked without creating anything)."""
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        return f"{parent} is not a directory"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"{parent} is not writable"
    return None


class InProcessTransport:
    """The worker core on ``db_path``, created and migrated on the first write.

    While the file does not exist, reads are answered by an empty in-memory store, so asking a
    directory with no results what it holds never leaves a database behind.
    """

    def __init__(self, db_path: str) -> None:
        self.db_path = db_path
        # A key private to this process: writes are authenticated exactly as over HTTP.
        self._key = secrets.token_urlsafe(24)
        self._on_disk = os.path.exists(db_path)
        if not self._on_disk:
            problem = _cannot_create(db_path)
            if problem:
                raise ResultsError(f"cannot open the results database {db_path}: {problem}")
        self._worker = self._open(db_path if self._on_disk else ":memory:")
        self.description = f"in-process worker on {os.path.relpath(db_path) if not os.path.isabs(db_path) else db_path}"
        self.destination = "sqlite:" + os.path.abspath(db_path)

    def _open(self, path: str) -> LocalWorker:
        try:
            return LocalWorker(path, WorkerConfig(api_key=self._key))
        except (sqlite3.Error, OSError) as exc:
            raise ResultsError(f"cannot open the results database {self.db_path}: {exc}") from exc

    @property
    def exists(self) -> bool:
        """Whether the store's file exists (a read-only session on a new path leaves none)."""
        return self._on_disk

    def request(self, method: str, path: str, *, query: dict[str, Any] | None = None,
                body: Any = None) -> TransportResponse:
        url = path + ("?" + urlencode(query) if query else "")
        headers = {"authorization": f"Bearer {self._key}"}
        raw = b""
        if body is not None:
            raw = json.dumps(body, ensure_ascii=False).encode("utf-8")
            headers["content-type"] = "application/json"
        if method != "GET" and not self._on_disk:
            self._worker.close()
            self._worker = self._open(self.db_path)
            self._on_disk = True
        response = self._worker.handle(Request.from_url(method, url, headers, raw))
        return TransportResponse(response.status, decode_body(response.body), dict(response.headers))

    def close(self) -> None:
        self._worker.close()
