"""Transports of the results client: one request in, one JSON response out.

Two implementations share the HTTP contract of the worker: :class:`InProcessTransport` runs
the worker core on a local SQLite file, :class:`HttpTransport` talks to a worker by URL.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol


class TransportUnavailable(ConnectionError):
    """The worker could not take the request (after retries); the request may be spooled.

    ``status`` is the last HTTP status when the worker answered (429/5xx), None when it
    could not be reached at all.
    """

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class TransportResponse:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def error_text(self) -> str:
        """``error: details`` from a ``{error, details}`` body, or the raw status."""
        if isinstance(self.body, dict) and "error" in self.body:
            details = self.body.get("details")
            return f"{self.body['error']}: {details}" if details else str(self.body["error"])
        return f"HTTP {self.status}"


class Transport(Protocol):
    #: Where requests go, for messages ("in-process results/bench.db", "http://...").
    description: str
    #: Where requests go, as spooled requests record it ("http://...", "sqlite:/abs/path").
    destination: str

    def request(self, method: str, path: str, *, query: dict[str, Any] | None = None,
                body: Any = None) -> TransportResponse:
        """Send one request; raise :class:`TransportUnavailable` when the worker is unreachable."""

    def close(self) -> None: ...


def decode_body(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")
