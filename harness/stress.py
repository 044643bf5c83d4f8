"""Load tests of a model endpoint (``bench stress``): send requests on one asyncio event loop
following a profile, record one sample per request, and summarise the steps.

A profile is a list of steps (:class:`StepPlan`). A step keeps ``concurrency`` requests in
flight (closed loop) or, for ``rate-limit``, sends ``rate`` requests per second with at most
``concurrency`` in flight (open loop); it lasts ``seconds`` or until it has sent ``requests``.
A step that is ``drained`` waits for its requests to finish before the next one starts; the
timed profiles (``sustained``, ``spike``, ``failure-recovery``) are not drained, so the load
is continuous and requests belong to the step in which they were sent.

Every request is made once (``Provider.achat(..., retry=False)``) and gives one sample in the
format of :mod:`worker.analysis.stress` (failures classed ``timeout``, ``429``, ``5xx``,
``connection``, ``other`` by :func:`error_class`, from the provider layer's one classification
:func:`harness.providers.failures.error_class`); each step is summarised by ``summarize_step``
when its last request has finished, and the test by ``summarize_run`` plus what the profile
asks for (rate-limit onset, the phases of a spike, the failure window). The result is a :class:`StressRecord` for
``ResultsClient.post_stress``.

Stops: :class:`StressControl` (``interrupt``: send nothing more and wait for the requests in
flight; ``abort``: cancel them too) gives status ``interrupted``; a cost cap (``max_cost``)
stops sending before the spend, measured plus what the requests in flight will cost, would pass
it (``budget_exceeded``); credentials refused, or before any request was answered a request
refused (an unknown model) or no connection (nothing listens, the host name does not resolve),
end the test as ``failed`` at once (nothing more is sent); a test that ran to its end without a
single answer is ``failed`` too ("nothing answered: ..." and its most frequent failure).
The profiles and every figure are described in docs/analysis.md, "Stress tests".
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as _dt
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from harness.providers import ChatRequest, Message, Provider, ProviderError, get_provider
from harness.providers.failures import UNREACHABLE
from harness.providers.failures import error_class as failure_class
from harness.results.records import StressRecord, new_stress_id
from worker.analysis import stress as analysis

log = logging.getLogger(__name__)

PROFILES = ("ramp", "sustained", "spike", "large-input", "rate-limit", "failure-recovery")

#: Profiles whose steps are time windows of one continuous load (``--step-requests`` does not apply).
TIMED_PROFILES = ("sustained", "spike", "failure-recovery")

PROFILE_HELP = {
    "ramp": "concurrency 1, 2, 4 ... --max-concurrency: knee, breaking point",
    "sustained": "--concurrency for --duration, in time windows: drift, errors",
    "spike": "baseline, a jump to --max-concurrency, back to baseline",
    "large-input": "prompts 4x larger each step at --concurrency",
    "rate-limit": "requests/s doubling each step until the first 429",
    "failure-recovery": "baseline, a --max-concurrency window, baseline: recovery",
}

DEFAULT_STEP_SECONDS = 10.0
DEFAULT_DURATION_S = 60.0

#: The most steps a stored test may have (the results store's limit, MAX_STRESS_STEPS of
#: worker/schema.py): a longer test is refused before it starts rather than after.
MAX_STEPS = 1000


class StressError(ValueError):
    """Options that cannot make a test (bad input, found before any request is sent)."""


@dataclass
class StressOptions:
    """What to test and how. ``concurrency`` is the fixed load of ``sustained`` and
    ``large-input`` and the baseline of ``spike`` and ``failure-recovery``; ``max_concurrency``
    the top of ``ramp``, the peak of ``spike`` and ``failure-recovery`` and the cap on requests
    in flight of ``rate-limit``."""

    provider: str
    model: str
    profile: str = "ramp"
    base_url: str | None = None
    concurrency: int = 4
    max_concurrency: int = 128
    step_seconds: float | None = None  # default DEFAULT_STEP_SECONDS
    step_requests: int | None = None
    duration_s: float | None = None  # timed profiles; default DEFAULT_DURATION_S
    prompt_tokens: int = 64
    max_prompt_tokens: int = 32768
    max_tokens: int = 64
    start_rate: float = 1.0
    max_rate: float = 256.0
    timeout_s: float = 60.0
    slo_ms: float | None = None
    max_cost: float | None = None
    stream: bool = True
    max_error_rate: float = analysis.DEFAULT_MAX_ERROR_RATE

    @property
    def step_s(self) -> float:
        return self.step_seconds if self.step_seconds is not None else DEFAULT_STEP_SECONDS

    @property
    def total_s(self) -> float:
        return self.duration_s if self.duration_s is not None else DEFAULT_DURATION_S


@dataclass
class StepPlan:
    index: int
    label: str
    phase: str
    concurrency: int  # requests in flight (closed loop), or the cap on them (open loop)
    prompt_tokens: int
    seconds: float | None = None
    requests: int | None = None
    rate: float | None = None  # requests per second: open loop
    drained: bool = True


def parse_target(text: str) -> tuple[str, str]:
    """``PROVIDER:MODEL`` -> (provider, model), the provider one of the registry's prefixes
    (:mod:`harness.providers.registry`); StressError when either part is missing or the
    provider is unknown."""
    from harness.providers.registry import ALIASES, REGISTRY, known_prefixes

    provider, sep, model = text.partition(":")
    provider = ALIASES.get(provider.lower(), provider.lower())
    if not sep or not provider or not model:
        raise StressError(f"{text!r}: expected PROVIDER:MODEL, e.g. anthropic:claude-haiku-4-5 "
                          f"(providers: {known_prefixes()})")
    if provider not in REGISTRY:
        raise StressError(f"unknown provider {provider!r} in {text!r}; known: {known_prefixes()}")
    return provider, model


def check_options(opts: StressOptions) -> None:
    """Raise :class:`StressError` naming the first option that cannot make a test."""
    if opts.profile not in PROFILES:
        raise StressError(f"unknown profile {opts.profile!r}; profiles: {', '.join(PROFILES)}")
    positive = {
        "--concurrency": opts.concurrency, "--max-concurrency": opts.max_concurrency,
        "--step-seconds": opts.step_seconds, "--step-requests": opts.step_requests,
        "--duration": opts.duration_s, "--prompt-tokens": opts.prompt_tokens,
        "--max-prompt-tokens": opts.max_prompt_tokens, "--max-tokens": opts.max_tokens,
        "--start-rate": opts.start_rate, "--max-rate": opts.max_rate, "--timeout": opts.timeout_s,
        "--slo-ms": opts.slo_ms, "--max-cost": opts.max_cost,
    }
    for name, value in positive.items():
        if value is not None and not value > 0:
            raise StressError(f"{name} must be greater than 0 (got {value})")
    if opts.step_seconds is not None and opts.step_requests is not None:
        raise StressError("--step-seconds and --step-requests contradict each other; give one")
    if opts.step_requests is not None and opts.profile in TIMED_PROFILES:
        raise StressError(f"--step-requests does not apply to {opts.profile}: its steps are time windows "
                          f"(--duration, --step-seconds)")
    if opts.duration_s is not None and opts.profile not in TIMED_PROFILES:
        raise StressError(f"--duration applies to {', '.join(TIMED_PROFILES)}; {opts.profile} runs one step "
                          f"per level (--step-seconds or --step-requests)")
    if opts.profile in ("spike", "failure-recovery") and opts.concurrency > opts.max_concurrency:
        raise StressError(f"--concurrency {opts.concurrency} is above --max-concurrency {opts.max_concurrency}")
    if opts.profile == "large-input" and opts.max_prompt_tokens < opts.prompt_tokens:
        raise StressError("--max-prompt-tokens is below --prompt-tokens")
    if opts.profile == "rate-limit" and opts.max_rate < opts.start_rate:
        raise StressError("--max-rate is below --start-rate")
    if opts.profile in TIMED_PROFILES and opts.step_s > opts.total_s:
        raise StressError(f"--step-seconds {opts.step_s:g} is longer than --duration {opts.total_s:g}")
    if not 0 <= opts.max_error_rate < 1:
        raise StressError("the error-rate threshold must be in [0, 1)")


def _ladder(start: float, top: float, factor: float) -> list[float]:
    """start, start*factor, ... while below ``top``, then ``top`` itself."""
    values = []
    value = start
    while value < top and len(values) < 64:
        values.append(value)
        value *= factor
    values.append(top)
    return values


def _num(value: float) -> str:
    """``value`` with at most two decimals and no trailing zeros: 0.25, 0.5, 20."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _windows(seconds: float, window: float) -> list[float]:
    """``seconds`` cut into equal windows of about ``window`` seconds (at least one)."""
    n = max(1, round(seconds / window))
    return [seconds / n] * n


def plan_steps(opts: StressOptions) -> list[StepPlan]:
    """The steps of ``opts.profile`` (rate-limit: every planned rate; the test stops at the
    first step that got a 429)."""
    check_options(opts)
    steps: list[StepPlan] = []

    def add(label: str, phase: str, concurrency: int, *, prompt: int | None = None, seconds: float | None = None,
            requests: int | None = None, rate: float | None = None, drained: bool = True) -> None:
        if seconds is None and requests is None:
            if opts.step_requests is not None:
                requests = max(opts.step_requests, concurrency if rate is None else 1)
            else:
                seconds = opts.step_s
        steps.append(StepPlan(len(steps), label, phase, concurrency,
                              opts.prompt_tokens if prompt is None else prompt,
                              seconds=seconds, requests=requests, rate=rate, drained=drained))

    profile = opts.profile
    if profile == "ramp":
        for c in _ladder(1, opts.max_concurrency, 2):
            add(f"c={int(c)}", "ramp", int(c))
    elif profile == "large-input":
        for tokens in _ladder(opts.prompt_tokens, opts.max_prompt_tokens, 4):
            add(f"{int(tokens)} tokens", "large-input", opts.concurrency, prompt=int(tokens))
    elif profile == "rate-limit":
        for rate in _ladder(opts.start_rate, opts.max_rate, 2):
            add(f"{rate:g} rps", "rate-limit", opts.max_concurrency, rate=rate)
    else:
        if profile == "sustained":
            phases = [("sustained", opts.concurrency, opts.total_s)]
        elif profile == "spike":
            third = opts.total_s / 3
            phases = [("baseline", opts.concurrency, third), ("spike", opts.max_concurrency, third),
                      ("after", opts.concurrency, third)]
        else:  # failure-recovery
            quarter = opts.total_s / 4
            phases = [("baseline", opts.concurrency, quarter), ("stress", opts.max_concurrency, quarter),
                      ("after", opts.concurrency, 2 * quarter)]
        elapsed = 0.0
        for phase, concurrency, seconds in phases:
            for window in _windows(seconds, opts.step_s):
                label = f"{phase} {_num(elapsed)}-{_num(elapsed + window)}s"
                add(label, phase, concurrency, seconds=window, drained=False)
                elapsed += window
        steps[-1].drained = True
    if len(steps) > MAX_STEPS:
        raise StressError(f"{len(steps)} steps planned; a stored test has at most {MAX_STEPS}: "
                          f"use a longer --step-seconds or a shorter --duration")
    return steps


# -- the prompt ------------------------------------------------------------------------------------

_FILLER = "The quick brown fox jumps over the lazy dog near the quiet river bank. "
_FILLER_TOKENS = 15  # about, for common tokenizers


def build_prompt(prompt_tokens: int, seq: int, max_tokens: int) -> str:
    """A prompt of about ``prompt_tokens`` tokens. It starts with the request's number, so no two
    prompts share a prefix a provider could cache, and asks for an answer that fills about
    ``max_tokens`` tokens (the numbers from 1 up)."""
    head = f"Request {seq}. "
    ask = f"Write the numbers from 1 to {max(1, max_tokens // 2)} separated by spaces, nothing else."
    filler_tokens = max(0, prompt_tokens - 30)
    filler = _FILLER * math.ceil(filler_tokens / _FILLER_TOKENS) if filler_tokens else ""
    return f"{head}{filler}{ask}"


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


#: How a class of :func:`harness.providers.failures.error_class` is counted in a test's figures,
#: whose classes are :data:`worker.analysis.stress.ERROR_CLASSES`: a request that reached no
#: server (``connect``, ``dns``) is a ``connection`` failure there, a refusal (``auth``, ``4xx``)
#: is ``other``; the others keep their name. The failure messages keep the finer class.
FIGURE_CLASS = {"connect": "connection", "dns": "connection", "auth": "other", "4xx": "other"}


def error_class(exc: BaseException) -> str:
    """The failure class of :data:`worker.analysis.stress.ERROR_CLASSES` for an exception of
    a request: 429, 5xx, timeout (also 408), connection (no connection, or one that broke),
    other. It is :func:`harness.providers.failures.error_class` folded by :data:`FIGURE_CLASS`."""
    cls = failure_class(exc)
    return FIGURE_CLASS.get(cls, cls)


def _redacted_url(url: str | None) -> str | None:
    """``url`` without user information, query or fragment (they may hold credentials)."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _now_iso() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class StressTest:
    """One load test. Build with :func:`prepare` (which checks everything that can be checked
    before a request is sent), then ``await test.run()`` or :func:`run_stress`.

    ``on_event(kind, data)`` is told, on the event loop's thread: ``start`` (the plan),
    ``step_start`` (a :class:`StepPlan` as a dict), ``sample`` (each request's sample), ``step``
    (a step's figures, once its last request has finished) and ``done`` (status, stop reason).
    An error in it is logged and never stops the test.
    """

    def __init__(self, opts: StressOptions, provider: Provider, plan: list[StepPlan], *,
                 requested_provider: str | None = None,
                 on_event: Callable[[str, dict[str, Any]], None] | None = None,
                 control: StressControl | None = None) -> None:
        self.opts = opts
        self.provider = provider
        self.plan = plan
        self.requested_provider = requested_provider or provider.name
        self.on_event = on_event or (lambda kind, data: None)
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
        from harness.pricing import price_for

        self._price = price_for(self.provider.name, self.opts.model)

    def _emit(self, kind: str, data: dict[str, Any]) -> None:
        try:
            self.on_event(kind, data)
        except Exception:  # noqa: BLE001 - a display's bug never costs the measurements
            log.exception("stress test: the %s event handler failed", kind)

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
        from harness.providers import Usage

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
        self._emit("sample", sample)
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
        self._emit("step", summary)

    async def run(self) -> StressResult:
        """Run the plan on the running event loop; always returns what was measured."""
        loop = asyncio.get_running_loop()
        self._changed = asyncio.Event()
        self.control._attach(loop, self._wake)
        started_at = _now_iso()
        await self.provider.aprepare()
        self._t0 = time.monotonic()
        self._emit("start", {"plan": [dataclasses.asdict(p) for p in self.plan]})
        try:
            for plan in self.plan:
                if self._stopping():
                    break
                state = _StepState(plan=plan, started=time.monotonic())
                self.steps.append(state)
                self._emit("step_start", dataclasses.asdict(plan))
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
        self._emit("done", {"status": self.status, "stopReason": self.stop_reason})
        return StressResult(record=record, samples=list(self.samples), stop_reason=self.stop_reason)

    async def _drain(self) -> None:
        while self._in_flight():
            if self.control.aborted:
                return
            await self._wait_change(None)

    # -- the record ------------------------------------------------------------------------------
    def _record(self, started_at: str) -> StressRecord:
        steps = [s.summary for s in self.steps
                 if s.summary is not None and (s.summary["requests"] or not s.summary.get("partial"))]
        summary = summarize(self.opts.profile, steps, self.samples, slo_ms=self.opts.slo_ms,
                            max_error_rate=self.opts.max_error_rate)
        summary["stopReason"] = self.stop_reason
        summary["errorMessages"] = [
            {"class": cls, "message": message, "count": count}
            for (cls, message), count in sorted(self.error_messages.items(), key=lambda kv: -kv[1])[:5]
        ]
        return StressRecord(
            stress_id=new_stress_id(),
            provider=self.provider.name,
            model=self.opts.model,
            profile=self.opts.profile,
            status=self.status,  # type: ignore[arg-type]
            started_at=started_at,
            completed_at=_now_iso(),
            config=self.config(),
            summary=summary,
            steps=steps,
        )

    def config(self) -> dict[str, Any]:
        o = self.opts
        config: dict[str, Any] = {
            "baseUrl": _redacted_url(o.base_url),
            "concurrency": o.concurrency,
            "maxConcurrency": o.max_concurrency,
            "stepSeconds": None if o.step_requests is not None else o.step_s,
            "stepRequests": o.step_requests,
            "durationS": o.total_s if o.profile in TIMED_PROFILES else None,
            "promptTokens": o.prompt_tokens,
            "maxTokens": o.max_tokens,
            "timeoutS": o.timeout_s,
            "stream": o.stream,
            "sloMs": o.slo_ms,
            "maxCost": o.max_cost,
            "plannedSteps": len(self.plan),
        }
        if o.profile == "large-input":
            config["maxPromptTokens"] = o.max_prompt_tokens
        if o.profile == "rate-limit":
            config.update(startRate=o.start_rate, maxRate=o.max_rate)
        if self.requested_provider != self.provider.name:
            config["requestedProvider"] = self.requested_provider
        return config


def summarize(profile: str, steps: list[dict[str, Any]], samples: list[dict[str, Any]], *,
              slo_ms: float | None = None,
              max_error_rate: float = analysis.DEFAULT_MAX_ERROR_RATE) -> dict[str, Any]:
    """``summarize_run`` plus the figures of ``profile``: the rate-limit onset (``rate-limit``),
    the baseline/spike/after phases (``spike``), the failure window (``failure-recovery``)."""
    summary = analysis.summarize_run(steps, samples, varies_concurrency=profile == "ramp", slo_ms=slo_ms,
                                     max_error_rate=max_error_rate)
    summary["profile"] = profile
    if profile == "rate-limit":
        onset = analysis.rate_limit_onset(steps)
        if onset is not None:
            by_index = {s["index"]: s for s in steps}
            onset["targetRps"] = by_index[onset["stepIndex"]].get("targetRps")
            previous = [s for s in steps if s["index"] < onset["stepIndex"]]
            onset["lastCleanTargetRps"] = previous[-1].get("targetRps") if previous else None
        summary["rateLimit"] = onset
    if profile in ("spike", "failure-recovery"):
        phases: dict[str, list[int]] = {}
        for step in steps:
            phases.setdefault(step["phase"], []).append(step["index"])
        summary["phases"] = {name: analysis.phase_figures(samples, indices) for name, indices in phases.items()}
    if profile in ("failure-recovery", "sustained"):
        before, during, after = analysis.failure_window(steps, max_error_rate)
        summary["failureWindow"] = None if not during else {
            "before": analysis.phase_figures(samples, before),
            "during": analysis.phase_figures(samples, during),
            "after": analysis.phase_figures(samples, after),
        }
    return summary


def prepare(opts: StressOptions, *, on_event: Callable[[str, dict[str, Any]], None] | None = None,
            control: StressControl | None = None, api_key: str | None = None,
            provider: Provider | None = None) -> StressTest:
    """Check everything that can be checked before a request is sent and build the test:
    the options (:class:`StressError`), the credentials (``MissingCredentialsError`` naming the
    environment variable), and that ``max_cost`` can be enforced (a price for the model)."""
    from harness.pricing import price_for, unpriced_reason

    plan = plan_steps(opts)
    if provider is None:
        peak = max(step.concurrency for step in plan)
        if api_key is not None:
            provider = get_provider(opts.provider, base_url=opts.base_url, api_key=api_key,
                                    max_connections=max(peak, 1))
        else:
            # The request engine's provider: the registry's base URLs and keys, one pool sized
            # for the peak; each request is one Engine.attempt-style call (no retry, no limit).
            from harness.engine import Engine, EngineOptions
            from harness.providers.registry import parse_target as registry_target

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


async def arun_stress(opts: StressOptions, **kwargs: Any) -> StressResult:
    """:func:`prepare` and run on the running event loop."""
    return await prepare(opts, **kwargs).run()


def run_stress(opts: StressOptions, **kwargs: Any) -> StressResult:
    """:func:`prepare` and run on a new event loop (``asyncio.run``)."""
    test = prepare(opts, **kwargs)
    return asyncio.run(test.run())
