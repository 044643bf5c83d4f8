"""The HTTP transport: httpx with timeouts, and retries with exponential backoff and jitter.

Connection failures, timeouts, 429 and 5xx are retried (honouring ``Retry-After``); when
they persist the caller gets :class:`TransportUnavailable` and spools the request.
"""

from __future__ import annotations

import random
import time
from typing import Any, Callable
from urllib.parse import urlsplit

import httpx

from harness.results.transport import TransportResponse, TransportUnavailable, decode_body

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


def is_loopback_url(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    return host in ("localhost", "::1") or host.startswith("127.")


class HttpTransport:
    """Requests to a worker at ``base_url``; writes carry ``Authorization: Bearer api_key``."""

    def __init__(self, base_url: str, api_key: str | None, *, timeout_s: float = 30.0,
                 connect_timeout_s: float = 5.0, retries: int = 3, backoff_s: float = 0.5,
                 max_backoff_s: float = 8.0, sleep: Callable[[float], None] = time.sleep,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.description = self.base_url
        self.destination = self.base_url
        self.retries = retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self._sleep = sleep
        headers = {"user-agent": "zebench-results-client"}
        if api_key:
            headers["authorization"] = f"Bearer {api_key}"
        self._client = httpx.Client(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx.Timeout(timeout_s, connect=connect_timeout_s),
            transport=transport,
        )

    def request(self, method: str, path: str, *, query: dict[str, Any] | None = None,
                body: Any = None) -> TransportResponse:
        last_error = ""
        last_status: int | None = None
        for attempt in range(self.retries + 1):
            try:
                resp = self._client.request(method, path, params=query or None, json=body)
            except httpx.TransportError as exc:  # connect/read errors and timeouts
                last_error = f"{type(exc).__name__}: {exc}"
                last_status = None
                retry_after = None
            else:
                if resp.status_code not in RETRY_STATUSES:
                    return TransportResponse(resp.status_code, decode_body(resp.content),
                                             {k.lower(): v for k, v in resp.headers.items()})
                last_error = f"HTTP {resp.status_code} {decode_body(resp.content)}"[:300]
                last_status = resp.status_code
                retry_after = _retry_after(resp.headers.get("retry-after"))
            if attempt < self.retries:
                self._sleep(self._delay(attempt, retry_after))
        raise TransportUnavailable(f"{self.base_url}{path}: {last_error} "
                                   f"(after {self.retries + 1} attempts)", status=last_status)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, 60.0)
        base = min(self.max_backoff_s, self.backoff_s * (2 ** attempt))
        # Full jitter spreads out clients that failed together.
        return random.uniform(base / 2, base)

    def close(self) -> None:
        self._client.close()


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date; fall back to our own backoff
