"""The async request engine: many model calls in flight on one asyncio event loop.

:class:`Engine` sends :class:`Job` s (a target, a request, a repeat index) through the provider
layer's async clients (:meth:`harness.models.providers.Provider.achat`, one attempt at a time) and
hands each job's :class:`Outcome` to a callback as soon as it is known. What it takes care of:

- **Concurrency.** At most ``concurrency`` requests are in flight in all; each provider (the
  prefix of a target: ``openai``, ``groq``...) also has its own limit, by default the global
  one. Each target has its own workers, which wait for their provider's limit before taking a
  global slot, so a provider that is held back never blocks the others.
- **AIMD on 429.** A provider's limit halves (never below 1) when it answers 429, and grows
  back by one after as many successes as the limit (additive increase, multiplicative
  decrease). A ``Retry-After`` pauses that provider's new requests until it has passed.
- **Retries.** Transient failures (429, 408, 409, 5xx, timeouts, broken connections) are tried
  again up to ``max_attempts`` in all, waiting as :class:`~harness.models.providers.RetryPolicy` says
  (the server's Retry-After wins); other failures (a refused request, a bad key) fail at once.
- **Stopping.** :meth:`Engine.stop` starts nothing new; requests in flight finish and are
  reported. :meth:`Engine.abort` cancels them too.

The dataset runner (:mod:`harness.datasets.run`) and fleets use it for prompt datasets;
``bench stress`` builds its providers through the same registry and sends one measured
attempt per request (``Provider.achat(..., retry=False)``), with no retry or limit of the
engine's own, since it measures exactly those.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from harness.models.providers import ChatRequest, ChatResponse, Provider, ProviderError, RetryPolicy
from harness.models.providers.retry import RetryableError
from harness.models.providers.registry import Target, build_provider


class AIMDLimit:
    """A dynamic limit on requests in flight for one provider (additive increase,
    multiplicative decrease), with a pause for Retry-After."""

    def __init__(self, ceiling: int, start: int | None = None) -> None:
        self.ceiling = max(1, int(ceiling))
        self.limit = float(min(self.ceiling, start or self.ceiling))
        self.in_flight = 0
        self.paused_until = 0.0
        self.halvings = 0
        self._successes = 0
        self._waiters: collections.deque[asyncio.Future] = collections.deque()
        self._wake_handle: asyncio.TimerHandle | None = None

    @property
    def current(self) -> int:
        return max(1, int(self.limit))

    def _free(self) -> bool:
        return self.in_flight < self.current and time.monotonic() >= self.paused_until

    async def acquire(self) -> None:
        if not self._waiters and self._free():
            self.in_flight += 1
            return
        future = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        self._schedule_wake()
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.in_flight -= 1  # granted just as we were cancelled: give it back
                self._wake()
            raise

    def release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def succeeded(self) -> None:
        """A request answered: after ``limit`` successes in a row the limit grows by one."""
        if self.limit < self.ceiling:
            self._successes += 1
            if self._successes >= self.current:
                self._successes = 0
                self.limit = min(self.ceiling, self.limit + 1)
                self._wake()

    def rate_limited(self, retry_after: float | None) -> None:
        """A 429: halve the limit and, with a Retry-After, pause new requests until it passes."""
        self.limit = max(1.0, self.limit / 2)
        self._successes = 0
        self.halvings += 1
        if retry_after is not None and retry_after > 0:
            self.paused_until = max(self.paused_until, time.monotonic() + retry_after)

    def _wake(self) -> None:
        while self._waiters and self._free():
            future = self._waiters.popleft()
            if not future.done():
                self.in_flight += 1
                future.set_result(None)
        self._schedule_wake()

    def _schedule_wake(self) -> None:
        """While paused with waiters, wake them when the pause ends."""
        if not self._waiters or self._wake_handle is not None:
            return
        delay = self.paused_until - time.monotonic()
        if delay <= 0:
            return

        def fire() -> None:
            self._wake_handle = None
            self._wake()

        self._wake_handle = asyncio.get_running_loop().call_later(delay, fire)


@dataclass
class Job:
    """One request to make: ``payload`` travels back with the outcome untouched."""

    target: Target
    request: ChatRequest
    repeat_index: int = 0
    payload: Any = None


@dataclass
class Outcome:
    """How a job ended: a ``response``, or an ``error`` after ``attempts`` attempts."""

    job: Job
    response: ChatResponse | None = None
    error: ProviderError | None = None
    attempts: int = 0
    rate_limited: int = 0  # how many attempts were answered 429
    elapsed_ms: float = 0.0  # from the first attempt to the end, waits included

    @property
    def ok(self) -> bool:
        return self.response is not None


class _Pacer:
    """Hands out start times at least ``interval_s`` apart, in the order they are asked for."""

    def __init__(self, interval_s: float) -> None:
        self.interval_s = interval_s
        self._next = 0.0

    async def turn(self) -> None:
        now = time.monotonic()
        start = max(now, self._next)
        self._next = start + self.interval_s
        if start > now:
            await asyncio.sleep(start - now)


@dataclass
class EngineOptions:
    concurrency: int = 8
    provider_limits: dict[str, int] = field(default_factory=dict)  # prefix -> limit
    max_attempts: int = 4
    timeout_s: float = 120.0
    stream: bool = False
    use_cache: bool = False  # replay answers stored for the same request and repeat index
    record: bool = False  # store live answers in the response cache


class _NotStarted(Exception):
    """An attempt whose turn came after :meth:`Engine.stop`: not sent."""


class Engine:
    """Send jobs concurrently; see the module docstring. Use ``async with Engine(...)``."""

    def __init__(self, options: EngineOptions | None = None, *, retry: RetryPolicy | None = None,
                 provider_factory: Callable[[Target, int], Provider] | None = None) -> None:
        self.options = options or EngineOptions()
        if self.options.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.retry = retry or RetryPolicy(max_attempts=self.options.max_attempts, max_delay_s=30.0)
        self._factory = provider_factory
        self._providers: dict[Target, Provider] = {}
        self.limits: dict[str, AIMDLimit] = {}
        self._global: asyncio.Semaphore | None = None
        self._stopping = False
        self._stopped: asyncio.Event | None = None  # set by stop(): ends a wait before a retry
        self._tasks: set[asyncio.Task] = set()

    # -- providers and limits ---------------------------------------------------------------
    def provider(self, target: Target) -> Provider:
        """The provider of ``target`` (built once; its pool holds enough connections)."""
        provider = self._providers.get(target)
        if provider is None:
            size = self.limit_for(target.prefix)
            provider = (self._factory(target, size) if self._factory is not None
                        else build_provider(target, max_connections=size))
            self._providers[target] = provider
        return provider

    def limit_for(self, prefix: str) -> int:
        return max(1, min(self.options.concurrency, self.options.provider_limits.get(prefix, self.options.concurrency)))

    def limit(self, prefix: str) -> AIMDLimit:
        limit = self.limits.get(prefix)
        if limit is None:
            limit = self.limits[prefix] = AIMDLimit(self.limit_for(prefix))
        return limit

    # -- one request --------------------------------------------------------------------------
    async def request(self, job: Job) -> Outcome:
        """``job`` with its provider's limit and the retry policy; never raises ProviderError.
        Each attempt waits for the provider's limit and a global slot; the waits between
        attempts are the policy's (:meth:`RetryPolicy.acall`, cut short by :meth:`stop`).
        After :meth:`stop`, no attempt is started: a job whose turn comes then has ``attempts``
        0 (never sent), and a retry ends with the last attempt's error."""
        provider = self.provider(job.target)
        limit = self.limit(job.target.prefix)
        outcome = Outcome(job)
        started = time.monotonic()
        opts = self.options

        async def attempt() -> ChatResponse:
            await limit.acquire()
            try:
                if self._global is not None:
                    await self._global.acquire()
                try:
                    if self._stopping:
                        raise _NotStarted
                    outcome.attempts += 1
                    response = await provider.achat(job.request, stream=opts.stream, retry=False,
                                                    repeat_index=job.repeat_index, use_cache=opts.use_cache,
                                                    record=opts.record)
                finally:
                    if self._global is not None:
                        self._global.release()
            except ProviderError as exc:
                limit.release()
                if exc.status == 429:
                    outcome.rate_limited += 1
                    limit.rate_limited(exc.retry_after)
                outcome.error = exc
                if exc.kind == "unavailable":
                    raise RetryableError(str(exc), retry_after=exc.retry_after, status=exc.status,
                                         reason=exc.reason, network=exc.network) from exc
                raise
            except BaseException:
                limit.release()
                raise
            limit.release()
            limit.succeeded()
            outcome.error = None
            return response

        try:
            outcome.response = await self.retry.acall(attempt, max_attempts=opts.max_attempts, sleep=self._wait,
                                                      stop=lambda: self._stopping)
        except (ProviderError, RetryableError, _NotStarted):
            pass  # outcome.error is the last attempt's (None when none was started)
        outcome.elapsed_ms = (time.monotonic() - started) * 1000.0
        return outcome

    async def _wait(self, seconds: float) -> None:
        """Sleep ``seconds``, or until :meth:`stop` is called."""
        if self._stopped is None:
            await asyncio.sleep(seconds)
            return
        try:
            await asyncio.wait_for(self._stopped.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    # -- many jobs ------------------------------------------------------------------------------
    async def run(self, jobs: Iterable[Job], on_outcome: Callable[[Outcome], Awaitable[None] | None], *,
                  concurrency: int | None = None, pace_s: float = 0.0) -> None:
        """Send every job (each target's jobs in the order given) and call ``on_outcome`` with
        each outcome as it comes. Returns when all are done, or after :meth:`stop` when those in
        flight are; :meth:`abort` cancels those too.

        ``concurrency`` caps this call's requests in flight below the engine's limits, and
        ``pace_s`` spaces the starts of this call's requests at least that far apart (a fleet
        profile's ``concurrency`` and ``request_delay_ms``). Several calls may run at once on
        one engine: they share its global and per-provider limits and its clients."""
        if self._global is None:
            self._global = asyncio.Semaphore(self.options.concurrency)
        if self._stopped is None:
            self._stopped = asyncio.Event()
        if self._stopping:
            self._stopped.set()
        if concurrency is not None and concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        queues: dict[Target, collections.deque[Job]] = {}
        for job in jobs:
            queues.setdefault(job.target, collections.deque()).append(job)
        for target in queues:
            self.provider(target)  # built (and its key checked) before anything is sent
            await self.provider(target).aprepare()
        pacer = _Pacer(pace_s) if pace_s > 0 else None
        gate = asyncio.Semaphore(concurrency) if concurrency is not None and len(queues) > 1 else None

        async def worker(queue: collections.deque[Job]) -> None:
            while queue and not self._stopping:
                job = queue.popleft()
                if pacer is not None:
                    await pacer.turn()
                    if self._stopping:
                        return
                if gate is None:
                    outcome = await self.request(job)
                else:
                    async with gate:
                        outcome = await self.request(job)
                if outcome.attempts == 0:
                    return  # stopped before it was sent: not a result
                result = on_outcome(outcome)
                if result is not None:
                    await result

        workers = []
        for target, queue in queues.items():
            count = min(len(queue), self.limit_for(target.prefix), concurrency or len(queue))
            workers += [asyncio.ensure_future(worker(queue)) for _ in range(count)]
        self._tasks.update(workers)
        try:
            await asyncio.gather(*workers)
        finally:
            for task in workers:
                task.cancel()
            self._tasks.difference_update(workers)

    def stop(self) -> None:
        """Start nothing new; requests in flight finish (and are reported)."""
        self._stopping = True
        if self._stopped is not None:
            self._stopped.set()

    @property
    def stopping(self) -> bool:
        return self._stopping

    def abort(self) -> None:
        """Stop now: cancel the requests in flight too."""
        self.stop()
        for task in list(self._tasks):
            task.cancel()

    async def aclose(self) -> None:
        for provider in self._providers.values():
            try:
                await provider.aclose()
            except Exception:  # noqa: BLE001 - closing must not hide the run's outcome
                pass
        self._providers.clear()

    async def __aenter__(self) -> "Engine":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
