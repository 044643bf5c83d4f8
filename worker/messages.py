"""Transport-neutral HTTP request and response values used by the worker core.

The core never touches a socket: ``worker dev``, the Python Workers entry module and the
harness's in-process transport all turn their own request objects into :class:`Request` and
write back a :class:`Response`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit


@dataclass
class Request:
    """One HTTP request. Header names are stored lower-case."""

    method: str
    path: str
    query: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    # The peer's address when known (dev server); None under Workers and in-process.
    client_host: str | None = None

    @classmethod
    def from_url(cls, method: str, url: str, headers: dict[str, str] | None = None,
                 body: bytes = b"", client_host: str | None = None) -> "Request":
        """Build from a full URL or a path with a query string."""
        parts = urlsplit(url)
        # A repeated query key keeps its last value, like most frameworks.
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        return cls(
            method=method.upper(),
            path=parts.path or "/",
            query=query,
            headers={k.lower(): v for k, v in (headers or {}).items()},
            body=body,
            client_host=client_host,
        )

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


@dataclass
class Response:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


def json_response(status: int, payload: Any, headers: dict[str, str] | None = None) -> Response:
    """A compact UTF-8 JSON response."""
    body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    h = {"content-type": "application/json; charset=utf-8"}
    if headers:
        h.update(headers)
    return Response(status=status, body=body, headers=h)


class HttpError(Exception):
    """Raised anywhere in the core; becomes ``{error, details}`` with ``status``."""

    def __init__(self, status: int, error: str, details: Any = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(error)
        self.status = status
        self.error = error
        self.details = details
        self.headers = headers or {}

    def to_response(self) -> Response:
        return json_response(self.status, {"error": self.error, "details": self.details}, self.headers)
