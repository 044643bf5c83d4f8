"""One retry policy for every model call: exponential backoff with jitter, honouring Retry-After.

The SDKs' own retries are switched off so that this is the only policy; it retries rate
limits (429), request timeouts (408), conflicts the APIs mark as transient (409), server
errors (5xx, including Anthropic's 529 "overloaded"), client-side timeouts and connection
errors. Other errors fail at once. :meth:`RetryPolicy.call` waits with ``time.sleep``;
:meth:`RetryPolicy.acall`, for coroutines on an asyncio loop, with ``asyncio.sleep``.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Awaitable, Callable, Mapping, TypeVar

T = TypeVar("T")

RETRYABLE_STATUS = frozenset({408, 409, 429})


def is_retryable_status(status: int | None) -> bool:
    """True for statuses worth another attempt: 408, 409, 429 and every 5xx."""
    return status is not None and (status in RETRYABLE_STATUS or 500 <= status <= 599)


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait according to ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    ms = lowered.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        import email.utils

        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


#: What made an attempt fail in a way worth retrying: no answer in time, no connection (or
#: one that broke), or an HTTP status (see :func:`is_retryable_status`).
RETRY_REASONS = ("timeout", "connection", "status")


class RetryableError(Exception):
    """Raised by an attempt that may succeed if tried again (after ``retry_after`` seconds, if known).

    ``reason`` is one of :data:`RETRY_REASONS` (None when the raiser did not say); ``status``
    the HTTP status when the reason is ``status``; ``network``, for a transport failure, its
    class (``connect``, ``dns``, ``timeout``, ``connection``: :mod:`harness.models.providers.failures`).
    """

    def __init__(self, message: str, *, retry_after: float | None = None, status: int | None = None,
                 reason: str | None = None, network: str | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.status = status
        self.reason = reason if reason is not None else ("status" if status is not None else None)
        self.network = network


@dataclass
class RetryPolicy:
    """Bounded exponential backoff with full jitter; ``sleep`` is injectable so tests don't wait."""

    max_attempts: int = 6
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0
    max_retry_after_s: float = 300.0  # a server asking for longer than this is not waited for
    sleep: Callable[[float], None] = time.sleep
    rng: random.Random = field(default_factory=random.Random)
    # The wait of :meth:`acall` (a coroutine function); None: ``asyncio.sleep``.
    async_sleep: Callable[[float], Awaitable[None]] | None = None

    def delay_for(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before attempt ``attempt + 1`` (``attempt`` counts from 1)."""
        if retry_after is not None:
            # The server's word wins; a little jitter keeps parallel clients from stampeding.
            return min(retry_after, self.max_retry_after_s) + self.rng.uniform(0, 0.1 * max(retry_after, 0.1))
        ceiling = min(self.max_delay_s, self.base_delay_s * (2 ** (attempt - 1)))
        return self.rng.uniform(ceiling / 2, ceiling)

    def call(self, attempt_fn: Callable[[], T], *, deadline: float | None = None) -> T:
        """Run ``attempt_fn`` until it succeeds, raises a non-retryable error, or attempts run out.

        ``deadline`` (a ``time.monotonic()`` value) stops retrying when the next wait would
        pass it. The last :class:`RetryableError` is re-raised when giving up.
        """
        attempt = 0
        while True:
            attempt += 1
            try:
                return attempt_fn()
            except RetryableError as exc:
                delay = self._wait_before_next(attempt, exc, deadline)
                if delay is None:
                    raise
                self.sleep(delay)

    async def acall(self, attempt_fn: Callable[[], Awaitable[T]], *, deadline: float | None = None,
                    max_attempts: int | None = None, sleep: Callable[[float], Awaitable[None]] | None = None,
                    stop: Callable[[], bool] | None = None) -> T:
        """:meth:`call` for a coroutine function: the same attempts, waits and deadline, waiting
        with ``async_sleep`` (default ``asyncio.sleep``) so the event loop goes on meanwhile.

        For a caller that schedules many calls (the request engine): ``max_attempts`` overrides
        the policy's, ``sleep`` replaces the wait (one that a stop can cut short), and ``stop``,
        asked after a failed attempt and again after the wait, gives up at once when true (the
        last :class:`RetryableError` is re-raised)."""
        import asyncio  # here: a process that never awaits a call does not import it

        wait = sleep or self.async_sleep or asyncio.sleep
        attempt = 0
        while True:
            attempt += 1
            try:
                return await attempt_fn()
            except RetryableError as exc:
                if stop is not None and stop():
                    raise
                delay = self._wait_before_next(attempt, exc, deadline, max_attempts)
                if delay is None:
                    raise
                await wait(delay)
                if stop is not None and stop():
                    raise

    def _wait_before_next(self, attempt: int, exc: RetryableError, deadline: float | None,
                          max_attempts: int | None = None) -> float | None:
        """Seconds to wait after failed attempt ``attempt``, or None to give up now: attempts
        used up, a Retry-After longer than :attr:`max_retry_after_s`, or a wait past ``deadline``."""
        if attempt >= (self.max_attempts if max_attempts is None else max_attempts):
            return None
        if exc.retry_after is not None and exc.retry_after > self.max_retry_after_s:
            return None
        delay = self.delay_for(attempt, exc.retry_after)
        if deadline is not None and time.monotonic() + delay > deadline:
            return None
        return delay
