"""What a stress test will do, decided before any request is sent: the profiles, the options
(:class:`StressOptions`, checked by :func:`check_options`), the target (:func:`parse_target`),
the steps of a profile (:func:`plan_steps`) and the prompt of each request (:func:`build_prompt`).

A profile is a list of steps (:class:`StepPlan`). A step keeps ``concurrency`` requests in
flight (closed loop) or, for ``rate-limit``, sends ``rate`` requests per second with at most
``concurrency`` in flight (open loop); it lasts ``seconds`` or until it has sent ``requests``.
A step that is ``drained`` waits for its requests to finish before the next one starts; the
timed profiles (``sustained``, ``spike``, ``failure-recovery``) are not drained, so the load
is continuous and requests belong to the step in which they were sent. Options that cannot make
a test raise :class:`StressError` naming the option; a plan of more steps than the results
store keeps (:data:`MAX_STEPS`) is refused too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from worker.analysis import stress as analysis

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
    (:mod:`harness.models.providers.registry`); StressError when either part is missing or the
    provider is unknown."""
    from harness.models.providers.registry import ALIASES, REGISTRY, known_prefixes

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
