"""Running a stress test: requests on one asyncio event loop following the plan, one sample per
request, the steps summarised as they end, and the stops.

Every request is made once (``Provider.achat(..., retry=False)``) and gives one sample in the
format of :mod:`worker.analysis.stress` (failures classed ``timeout``, ``429``, ``5xx``,
``connection``, ``other`` by :func:`error_class`, from the provider layer's one classification
:func:`harness.models.providers.failures.error_class`); each step is summarised by ``summarize_step``
when its last request has finished, and the test by :func:`harness.stress.record.summarize`.
The result is a :class:`StressResult` holding the record for ``ResultsClient.post_stress``.

Stops: :class:`StressControl` (``interrupt``: send nothing more and wait for the requests in
flight; ``abort``: cancel them too) gives status ``interrupted``; a cost cap (``max_cost``)
stops sending before the spend, measured plus what the requests in flight will cost, would pass
it (``budget_exceeded``); credentials refused, or before any request was answered a request
refused (an unknown model) or no connection (nothing listens, the host name does not resolve),
end the test as ``failed`` at once (nothing more is sent); a test that ran to its end without a
single answer is ``failed`` too ("nothing answered: ..." and its most frequent failure).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness._util.clock import now_iso
from harness.events import Event, OnEvent, ignore
from harness.models.providers import ChatRequest, Message, Provider, ProviderError, get_provider
from harness.models.providers.failures import UNREACHABLE
from harness.models.providers.failures import error_class as failure_class
from harness.results.records import StressRecord
from harness.stress.plan import StepPlan, StressError, StressOptions, build_prompt, plan_steps
from harness.stress.record import build_record, record_config, sample_cell
from worker.analysis import stress as analysis

log = logging.getLogger(__name__)


# -- control -----------------------------------------------------------------------------------


class StressControl:
    """Stops a running test, from a signal handler or another thread. ``interrupt`` (the first
    Ctrl-C): no new request is sent and the requests in flight are waited for; ``abort`` (the
    second): they are cancelled too. Same interface as :class:`harness.control.BatchControl`, so
    :func:`harness.control.handle_sigint` drives it."""

    def __init__(self) -> None:
        self.stop_requested = False
        self.aborted = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: Callable[[], None] | None = None

    @property
    def stopping(self) -> bool:
        return self.stop_requested

    def _attach(self, loop: asyncio.AbstractEventLoop, wake: Callable[[], None]) -> None:
        self._loop, self._wake = loop, wake

    def _notify(self) -> None:
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None and not loop.is_closed():
            loop.call_soon_threadsafe(wake)

    def interrupt(self) -> None:
        self.stop_requested = True
        self._notify()

    def abort(self) -> None:
        self.stop_requested = True
        self.aborted = True
        self._notify()


# -- the test --------------------------------------------------------------------------------------


@dataclass
class StressResult:
    record: StressRecord
    samples: list[dict[str, Any]]
    stop_reason: str | None = None


@dataclass
class _StepState:
    plan: StepPlan
    started: float = 0.0  # monotonic
    closed_at: float | None = None  # no more requests sent (monotonic)
    last_end: float | None = None
    sent: int = 0
    in_flight: int = 0
    peak_in_flight: int = 0  # requests in flight (of every step) when this step sent one, at most
    spent: float = 0.0  # the measured cost of its answers with a price
    priced: int = 0  # how many those are
    samples: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] | None = None


#: How a class of :func:`harness.models.providers.failures.error_class` is counted in a test's figures,
#: whose classes are :data:`worker.analysis.stress.ERROR_CLASSES`: a request that reached no
#: server (``connect``, ``dns``) is a ``connection`` failure there, a refusal (``auth``, ``4xx``)
#: is ``other``; the others keep their name. The failure messages keep the finer class.
FIGURE_CLASS = {"connect": "connection", "dns": "connection", "auth": "other", "4xx": "other"}


def error_class(exc: BaseException) -> str:
    """The failure class of :data:`worker.analysis.stress.ERROR_CLASSES` for an exception of
    a request: 429, 5xx, timeout (also 408), connection (no connection, or one that broke),
    other. It is :func:`harness.models.providers.failures.error_class` folded by :data:`FIGURE_CLASS`."""
    cls = failure_class(exc)
    return FIGURE_CLASS.get(cls, cls)


class StressTest:
    """One load test. Build with :func:`prepare` (which checks everything that can be checked
    before a request is sent), then ``await test.run()`` or :func:`run_stress`.

    ``on_event`` is told (:class:`harness.events.Event`), on the event loop's thread: ``plan``
    (``total`` steps; ``result``: the steps as dicts), ``start`` of a step (``cell``: its
    :class:`StepPlan` as a dict), ``sample`` (each request's sample), ``done`` of a step (its
    figures, once its last request has finished) and ``end`` (status, stop reason). An error in
    it is logged and never stops the test.
    """

    def __init__(self, opts: StressOptions, provider: Provider, plan: list[StepPlan], *,
                 requested_provider: str | None = None,
                 on_event: OnEvent | None = None,
                 control: StressControl | None = None) -> None:
        self.opts = opts
        self.provider = provider
        self.plan = plan
        self.requested_provider = requested_provider or provider.name
        self.on_event = on_event or ignore
        self.control = control or StressControl()
        self.samples: list[dict[str, Any]] = []
        self.steps: list[_StepState] = []
        self.stop_reason: str | None = None
        self.status = "completed"
        self.error_messages: dict[tuple[str, str], int] = {}
        self._seq = 0
        self._spent = 0.0
        self._priced_ok = 0
        self._answered = 0
        self._tasks: set[asyncio.Task] = set()
        from harness.models.pricing import price_for

        self._price = price_for(self.provider.name, self.opts.model)

    def _emit(self, event: Event) -> None:
        try:
            self.on_event(event)
        except Exception:  # noqa: BLE001 - a display's bug never costs the measurements
            log.exception("stress test: the %s event handler failed", event.kind)

    # -- cost ------------------------------------------------------------------------------------
    def _request_cost(self, state: _StepState) -> float | None:
        """What one more request of this step should cost: the mean of its answers' measured
        costs, or before it has one, the price table's for its prompt counted generously (a token
        per 3 characters) and ``max_tokens`` of answer (prompts grow from step to step in
        ``large-input``, so an earlier step's cost would not do)."""
        if state.priced:
            return state.spent / state.priced
        if self._price is None:
            return None
        from harness.models.providers import Usage

        characters = len(build_prompt(state.plan.prompt_tokens, self._seq + 1, self.opts.max_tokens))
        tokens = max(state.plan.prompt_tokens, characters // 3 + 1)
        return self._price.cost(Usage(input_tokens=tokens, output_tokens=self.opts.max_tokens))

    def _over_budget(self, state: _StepState) -> bool:
        """True when one more request could take the spend over ``max_cost``: the measured
        spend, plus the requests in flight and this one at :meth:`_request_cost` each."""
        if self.opts.max_cost is None:
            return False
        per_request = self._request_cost(state)
        if per_request is None:
            return False
        return self._spent + (self._in_flight() + 1) * per_request > self.opts.max_cost

    # -- requests --------------------------------------------------------------------------------
    def _request(self, step: StepPlan) -> ChatRequest:
        self._seq += 1
        return ChatRequest(
            messages=[Message(role="user", content=build_prompt(step.prompt_tokens, self._seq, self.opts.max_tokens))],
            model=self.opts.model,
            max_tokens=self.opts.max_tokens,
            timeout_s=self.opts.timeout_s,
            prompt_cache=False,
        )

    async def _one(self, state: _StepState, request: ChatRequest) -> None:
        sent = time.monotonic()
        sample: dict[str, Any] = {
            "step": state.plan.index, "start": round(sent - self._t0, 4), "end": None, "ok": False, "error": None,
            "latencyMs": None, "ttftMs": None, "inputTokens": 0, "outputTokens": 0, "costUsd": None,
            "status": None, "retryAfterS": None,
        }
        try:
            async with asyncio.timeout(self.opts.timeout_s):
                response = await self.provider.achat(request, stream=self.opts.stream, retry=False)
        except asyncio.CancelledError:
            state.in_flight -= 1
            raise
        except Exception as exc:  # noqa: BLE001 - every failure is a sample
            cls = failure_class(exc)
            sample["error"] = FIGURE_CLASS.get(cls, cls)
            message = str(exc) or type(exc).__name__
            if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
                message = f"no answer within {self.opts.timeout_s:g} s"
            if isinstance(exc, ProviderError):
                sample["status"] = exc.status
                sample["retryAfterS"] = exc.retry_after
                self._check_fatal(exc, cls, message)
            key = (cls, message[:300])
            self.error_messages[key] = self.error_messages.get(key, 0) + 1
        else:
            sample.update(ok=True, ttftMs=None if response.ttft_ms is None else round(response.ttft_ms, 2),
                          inputTokens=response.usage.input_tokens + response.usage.cache_read_tokens
                          + response.usage.cache_write_tokens,
                          outputTokens=response.usage.output_tokens, costUsd=response.cost_usd)
            self._answered += 1
            if response.cost_usd is not None:
                self._spent += response.cost_usd
                self._priced_ok += 1
                state.spent += response.cost_usd
                state.priced += 1
        end = time.monotonic()
        sample["end"] = round(end - self._t0, 4)
        sample["latencyMs"] = round((end - sent) * 1000.0, 2)
        state.in_flight -= 1
        state.last_end = end
        state.samples.append(sample)
        self.samples.append(sample)
        self._emit(Event("sample", key=state.plan.label,
                         result=sample_cell(sample, state.plan.label, len(state.samples) - 1)))
        self._maybe_finish(state)
        self._wake()

    def _check_fatal(self, exc: ProviderError, cls: str, message: str) -> None:
        """Credentials refused, or, before any request was answered, a request refused (an
        unknown model, a wrong path) or no connection (nothing listens there, the host name
        does not resolve, or the connection broke): the test cannot measure the endpoint; it
        stops as ``failed`` at the first such failure, sending nothing more."""
        unreachable = cls in UNREACHABLE or (cls == "connection" and exc.status is None)
        if exc.kind == "auth" or (self._answered == 0 and (exc.kind == "refused" or unreachable)):
            if self.status != "failed":
                self.status = "failed"
                self.stop_reason = (f"nothing answered: {message}" if self._answered == 0
                                    else f"stopped: {message}")
                self.control.stop_requested = True

    def _nothing_answered(self) -> None:
        """A test that ran to its end without a single answer measured nothing of the model:
        ``failed``, with the most frequent failure as the reason."""
        if self.status != "completed" or self._answered or not self.samples:
            return
        (cls, message), count = max(self.error_messages.items(), key=lambda kv: kv[1])
        self.status = "failed"
        others = len(self.samples) - count
        self.stop_reason = (f"nothing answered: {message} ({cls}, {count} of {len(self.samples)} request(s)"
                            + (f"; {others} failed otherwise" if others else "") + ")"
                            + (f"; {self.stop_reason}" if self.stop_reason else ""))

    # -- progress (read by a display, from any thread) ------------------------------------------
    @property
    def in_flight(self) -> int:
        """Requests sent and not yet finished."""
        return self._in_flight()

    @property
    def current(self) -> dict[str, Any] | None:
        """The step sending now: its plan, when it started (``time.monotonic()``) and how many
        requests it has sent; None before the first step."""
        if not self.steps:
            return None
        state = self.steps[-1]
        return {"plan": state.plan, "started": state.started, "sent": state.sent}

    # -- steps -----------------------------------------------------------------------------------
    def _wake(self) -> None:
        self._changed.set()

    def _in_flight(self) -> int:
        return sum(s.in_flight for s in self.steps)

    def _stopping(self) -> bool:
        return self.control.stop_requested

    def _launch(self, state: _StepState) -> None:
        state.sent += 1
        state.in_flight += 1
        state.peak_in_flight = max(state.peak_in_flight, self._in_flight())
        task = asyncio.create_task(self._one(state, self._request(state.plan)))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _window_over(self, state: _StepState) -> bool:
        plan = state.plan
        if plan.requests is not None:
            return state.sent >= plan.requests
        return time.monotonic() >= state.started + (plan.seconds or 0.0)

    async def _wait_change(self, until: float | None) -> None:
        """Until a request finishes, a stop is asked for, or ``until`` (monotonic) passes."""
        self._changed.clear()
        timeout = None if until is None else max(0.0, until - time.monotonic())
        try:
            await asyncio.wait_for(self._changed.wait(), timeout)
        except (TimeoutError, asyncio.TimeoutError):
            pass

    def _budget_stop(self, state: _StepState) -> bool:
        if self._over_budget(state):
            self.status = "budget_exceeded" if self.status == "completed" else self.status
            self.stop_reason = self.stop_reason or (
                f"stopped before the spend could pass --max-cost ${self.opts.max_cost:g} "
                f"(spent ${self._spent:.4f} on {self._priced_ok} answer(s))")
            self.control.stop_requested = True
            return True
        return False

    async def _dispatch(self, state: _StepState) -> None:
        plan = state.plan
        end = None if plan.seconds is None else state.started + plan.seconds
        k = 0
        while not self._stopping() and not self._window_over(state):
            if plan.rate is not None:
                due = state.started + k / plan.rate
                if end is not None and due >= end:
                    break
                if time.monotonic() < due:
                    await self._wait_change(due)
                    continue
            if self._in_flight() >= plan.concurrency:
                await self._wait_change(end)
                continue
            if self._budget_stop(state):
                break
            self._launch(state)
            k += 1
        state.closed_at = time.monotonic()

    def _maybe_finish(self, state: _StepState) -> None:
        """Summarise a step once no more of its requests will be sent and none is in flight."""
        if state.summary is not None or state.closed_at is None or state.in_flight:
            return
        plan = state.plan
        if plan.rate is not None:
            # Open loop: the step lasts as long as it sent (its planned window, or its requests
            # at its rate), however long the answers took.
            stop = max(state.closed_at, state.started + state.sent / plan.rate)
        elif plan.drained and state.last_end is not None:
            stop = max(state.closed_at, state.last_end)  # until its last answer
        else:
            stop = state.closed_at  # continuous load: its window
        # An open-loop step has no set concurrency: the most requests it had in flight is its own.
        concurrency = plan.concurrency if plan.rate is None else state.peak_in_flight
        summary = analysis.summarize_step(
            state.samples, index=plan.index, label=plan.label, phase=plan.phase,
            concurrency=concurrency, prompt_tokens=plan.prompt_tokens, duration_s=stop - state.started)
        summary["peakInFlight"] = state.peak_in_flight
        if plan.rate is not None:
            summary["targetRps"] = plan.rate
            summary["maxInFlight"] = plan.concurrency
        if plan.requests is None and plan.seconds is not None and stop - state.started < plan.seconds * 0.999:
            summary["partial"] = True
        elif plan.requests is not None and state.sent < plan.requests:
            summary["partial"] = True
        state.summary = summary
        self._emit(Event("done", key=plan.label, result=summary))

    async def run(self) -> StressResult:
        """Run the plan on the running event loop; always returns what was measured."""
        loop = asyncio.get_running_loop()
        self._changed = asyncio.Event()
        self.control._attach(loop, self._wake)
        started_at = now_iso("seconds")
        await self.provider.aprepare()
        self._t0 = time.monotonic()
        self._emit(Event("plan", total=len(self.plan), done=0, result=[dataclasses.asdict(p) for p in self.plan]))
        try:
            for plan in self.plan:
                if self._stopping():
                    break
                state = _StepState(plan=plan, started=time.monotonic())
                self.steps.append(state)
                self._emit(Event("start", key=plan.label, cell=dataclasses.asdict(plan)))
                await self._dispatch(state)
                self._maybe_finish(state)
                if plan.drained or self._stopping():
                    await self._drain()
                if plan.rate is not None and state.summary and state.summary["errors"]["429"]:
                    self.stop_reason = f"rate limited from {plan.rate:g} requests/s on"
                    break
            await self._drain()
        finally:
            for task in list(self._tasks):
                task.cancel()
            if self._tasks:
                await asyncio.gather(*self._tasks, return_exceptions=True)
            for state in self.steps:  # steps cut short by an abort
                state.in_flight = 0
                if state.closed_at is None:
                    state.closed_at = time.monotonic()
                self._maybe_finish(state)
            try:
                await self.provider.aclose()
            except Exception:  # noqa: BLE001 - closing connections never hides the measurements
                pass
        if not self.control.stop_requested:
            self._nothing_answered()
        if self.control.stop_requested and self.status == "completed":
            self.status = "interrupted"
            self.stop_reason = "stopped on request" + (", requests in flight cancelled" if self.control.aborted else "")
        record = self._record(started_at)
        self._emit(Event("end", result={"status": self.status, "stopReason": self.stop_reason}))
        return StressResult(record=record, samples=list(self.samples), stop_reason=self.stop_reason)

    async def _drain(self) -> None:
        while self._in_flight():
            if self.control.aborted:
                return
            await self._wait_change(None)

    # -- the record ------------------------------------------------------------------------------
    def _record(self, started_at: str) -> StressRecord:
        return build_record(self.opts, provider=self.provider.name, status=self.status, stop_reason=self.stop_reason,
                            step_summaries=[s.summary for s in self.steps], samples=self.samples,
                            error_messages=self.error_messages, started_at=started_at, config=self.config())

    def config(self) -> dict[str, Any]:
        """The test's settings as its record keeps them (:func:`harness.stress.record.record_config`)."""
        return record_config(self.opts, planned_steps=len(self.plan), provider=self.provider.name,
                             requested_provider=self.requested_provider)


def prepare(opts: StressOptions, *, on_event: OnEvent | None = None,
            control: StressControl | None = None, api_key: str | None = None,
            provider: Provider | None = None) -> StressTest:
    """Check everything that can be checked before a request is sent and build the test:
    the options (:class:`StressError`), the credentials (``MissingCredentialsError`` naming the
    environment variable), and that ``max_cost`` can be enforced (a price for the model)."""
    from harness.models.pricing import price_for, unpriced_reason

    plan = plan_steps(opts)
    if provider is None:
        peak = max(step.concurrency for step in plan)
        if api_key is not None:
            provider = get_provider(opts.provider, base_url=opts.base_url, api_key=api_key,
                                    max_connections=max(peak, 1))
        else:
            # The request engine's provider: the registry's base URLs and keys, one pool sized
            # for the peak; each request is one Engine.attempt-style call (no retry, no limit).
            from harness.models.engine import Engine, EngineOptions
            from harness.models.providers.registry import parse_target as registry_target

            try:
                target = registry_target(f"{opts.provider}:{opts.model}", base_url=opts.base_url)
            except ValueError as exc:
                raise StressError(str(exc)) from None
            provider = Engine(EngineOptions(concurrency=max(peak, 1))).provider(target)
    if opts.stream and not provider.supports_streaming:
        raise StressError(f"{provider.name} does not stream; run with --no-stream")
    if opts.max_cost is not None and price_for(provider.name, opts.model) is None:
        raise StressError(f"--max-cost cannot be enforced: {unpriced_reason(provider.name, opts.model)}; "
                          "see `bench prices`, or run without --max-cost")
    return StressTest(opts, provider, plan, requested_provider=opts.provider, on_event=on_event, control=control)


def run_stress(opts: StressOptions, **kwargs: Any) -> StressResult:
    """:func:`prepare` and run on a new event loop (``asyncio.run``)."""
    test = prepare(opts, **kwargs)
    return asyncio.run(test.run())
